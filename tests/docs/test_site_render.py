"""The documentation site as a reader sees it: built by MkDocs as ``make test`` builds it (``--strict``), served by a
static server on 127.0.0.1 and opened in Chromium (Playwright) on a desktop viewport. Every image of every page is
displayed at a useful size and outside tables: a plot written right under a table with no blank line in between
renders as a thumbnail inside the table's last row, which is what the results pages used to do."""

import functools
import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import MISSING, TIMEOUT_MS, browser  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.skipif(MISSING is not None, reason=MISSING or "")]

ROOT = Path(__file__).resolve().parents[2]
DESKTOP = {"width": 1280, "height": 900}
USEFUL_PX = 400  # an image is shown at least this wide (the results' plots are about 670 px), or at its own width
BUILD_TIMEOUT_S = 1800  # the whole site, API reference and notebooks included, on a busy 2-core machine
IMAGES = """() => Array.from(document.images).map(img => ({
    src: img.getAttribute("src"), loaded: img.complete && img.naturalWidth > 0, natural: img.naturalWidth,
    shown: img.getBoundingClientRect().width, in_table: img.closest("table") !== null,
    hidden: getComputedStyle(img).display === "none" || getComputedStyle(img).visibility === "hidden"}))"""


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    assert r.returncode == 0, r.stderr[-4000:]
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(30)


def pages_with_images(site: Path) -> list[str]:
    """The built pages (paths under the site) whose HTML holds an image."""
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if "<img" in p.read_text())


def images_of(chromium: Any, url: str) -> list[dict[str, Any]]:
    """Every image of the page at ``url``, once loaded, as the browser lays it out on a desktop."""
    context = chromium.new_context(viewport=DESKTOP)
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS * 3)
        page.goto(url, wait_until="load")
        page.wait_for_function("Array.from(document.images).every(img => img.complete)")
        return page.evaluate(IMAGES)
    finally:
        context.close()


def badly_shown(img: dict[str, Any]) -> str | None:
    """Why an image is not shown as a reader should see it, or None."""
    if not img["loaded"]:
        return "does not load"
    if img["hidden"]:
        return "is hidden"
    if img["in_table"]:
        return "is inside a table"
    if img["shown"] < min(USEFUL_PX, img["natural"]) - 1:
        return f"is shown {img['shown']:.0f} px wide (its own width {img['natural']} px)"
    return None


def test_every_image_of_the_site_is_shown_full_size_outside_tables(site, served, browser):  # noqa: F811
    pages = pages_with_images(site)
    results = [p for p in pages if p.startswith("results/")]
    assert {"results/leaderboards/index.html", "results/search/index.html"} <= set(results), pages
    bad, seen = [], 0
    for page in pages:
        for img in images_of(browser, served + page):
            seen += 1
            why = badly_shown(img)
            if why:
                bad.append(f"{page}: {img['src']} {why}")
    assert seen >= len(pages) and not bad, "\n".join(bad)


def test_a_plot_right_under_a_table_would_be_caught(tmp_path, browser):  # noqa: F811
    """The check itself: the Markdown that made thumbnails (an image line right after a table's last row) gives an
    image that :func:`badly_shown` names, and the same with a blank line in between passes."""
    import markdown

    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="672" height="300">'
           '<rect width="672" height="300" fill="#4c72b0"/></svg>')
    (tmp_path / "plot.svg").write_text(svg)
    table = "| a | b |\n|---|---|\n| 1 | 2 |\n"
    shown = {}
    for name, text in (("glued", table + "![plot](plot.svg)\n"), ("apart", table + "\n![plot](plot.svg)\n")):
        (tmp_path / f"{name}.html").write_text(markdown.markdown(text, extensions=["tables"]))
        shown[name] = images_of(browser, (tmp_path / f"{name}.html").as_uri())
    assert badly_shown(shown["glued"][0]) == "is inside a table"
    assert badly_shown(shown["apart"][0]) is None
