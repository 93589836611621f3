"""The browser tests' server, browser and page (Playwright driving the system Chromium, /usr/bin/chromium), and
the helpers that play a deal on the page: shared by the modules of ``tests/browser``, which import the fixtures
(``server``, ``browser``, ``web``, ``games_db``) through ``tests/browser/conftest.py``.

The server is the real one: ``tarocchi-rl serve --port 0`` in a subprocess (loopback), stopped at the end.
``TAROCCHI_SCREENSHOTS=1`` also writes the README's screenshots to ``docs/screenshots/``; a plain run writes
nothing into the repository. Each test module skips itself with :data:`MISSING` when /usr/bin/chromium or the
playwright package is missing (``make test`` installs both).
"""

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tarocchi_rl.records import replay
from tarocchi_rl.variants import get_variant

CHROMIUM = "/usr/bin/chromium"
try:
    from playwright import sync_api
except ImportError:  # the modules of tests/browser skip themselves (MISSING)
    sync_api = None
#: why the browser tests cannot run here, or None: each module of tests/browser skips itself with it
MISSING = (f"{CHROMIUM} is missing (make test installs the Debian package chromium)" if not os.path.exists(CHROMIUM)
           else "playwright is missing (pip install -e .[dev])" if sync_api is None else None)

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots" if os.environ.get("TAROCCHI_SCREENSHOTS") == "1" else None
VIEWPORT = {"width": 1200, "height": 800}
TIMEOUT_MS = 20_000  # one wait for the page (a bot move, a replay): generous for a loaded 2-core machine
# Seeds that give a real deal (a contract, card play; not an all-pass annulled one) when the human (seat 0) always
# clicks the first enabled move of the page and the other seats are heuristic bots. Found by trying.
CLICK_SEEDS = {"mineo": 5, "piedmont3": 2, "piedmont4": 2, "french3": 8, "french4": 10, "tarok3": 1, "tarok4": 1}
KEYBOARD_VARIANT, KEYBOARD_SEED = "french3", 8  # key 1 (the first legal move) each time: a prise, petit au bout
if sync_api is not None:
    expect = sync_api.expect
    expect.set_options(timeout=TIMEOUT_MS)
STATUS = "[data-testid=status]"
ENABLED = "#game [data-action]:not([disabled])"


# -- the server and the browser -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def games_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The SQLite file the server of the module stores its games in."""
    return tmp_path_factory.mktemp("games") / "games.db"


@pytest.fixture(scope="module")
def server(games_db: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """``tarocchi-rl serve`` on a free loopback port, its games stored in a temporary database, with the test
    module's ``SERVE_ARGS`` (a list of more options, if it has one); its URL. Its output is kept for the failure
    message."""
    db = games_db
    extra = [str(a) for a in getattr(request.module, "SERVE_ARGS", ())]
    script = Path(sys.executable).with_name("tarocchi-rl")
    cmd = [str(script)] if script.exists() else [sys.executable, "-c",
                                                  "import sys; from tarocchi_rl.cli import main; sys.exit(main())"]
    proc = subprocess.Popen([*cmd, "serve", "--host", "127.0.0.1", "--port", "0", "--db", f"sqlite:///{db}", *extra],
                            stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: list[str] = []
    ready = threading.Event()
    url: list[str] = []

    def drain() -> None:  # read everything (a full pipe would block the server); note the port once
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            m = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", line)
            if m and not url:
                url.append(m.group(1))
                ready.set()
        ready.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        ready.wait(120)
        if not url:
            pytest.fail("tarocchi-rl serve did not start:\n" + "".join(lines))
        yield url[0]
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(5)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


class Page:
    """A fresh browser context and page on the server, recording console errors and page errors."""

    def __init__(self, browser: Any, url: str, context: Any = None) -> None:
        self.context = context or browser.new_context(viewport=VIEWPORT, accept_downloads=True)
        self.context.set_default_timeout(TIMEOUT_MS)
        self.page = self.context.new_page()
        self.url = url
        self.errors: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(f"console: {m.text} {m.location}"))
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.goto(url)
        self.page.wait_for_selector("body[data-ready=true]", state="attached")

    def check_clean(self) -> None:
        assert self.errors == [], self.errors

    def status(self) -> dict[str, str]:
        return self.page.locator(STATUS).evaluate("e => ({...e.dataset})")

    def testid(self, name: str) -> Any:
        return self.page.get_by_test_id(name)


@pytest.fixture
def web(browser: Any, server: str) -> Iterator[Page]:
    pg = Page(browser, server)
    try:
        yield pg
        pg.check_clean()  # (d): no console error, no page error during the test
    finally:
        pg.context.close()


def shot(pg: Page, name: str, down_to: str | None = None, element: str | None = None,
         top: str | None = None) -> None:
    """The README's screenshot ``docs/screenshots/<name>.png`` (only with TAROCCHI_SCREENSHOTS=1): the page from
    the top (or from the top of ``top``) down to the bottom of ``down_to`` (as wide as the viewport: 1200 px, a
    phone's 375), or one ``element``."""
    if SHOTS is None:
        return
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = str(SHOTS / f"{name}.png")
    if element:
        pg.page.locator(element).screenshot(path=path, animations="disabled")
    else:
        assert down_to
        bottom = pg.page.locator(down_to).evaluate("e => e.getBoundingClientRect().bottom + window.scrollY")
        y = 0 if top is None else max(0, int(pg.page.locator(top).evaluate(
            "e => e.getBoundingClientRect().top + window.scrollY")) - 8)
        clip = {"x": 0, "y": y, "width": pg.page.viewport_size["width"], "height": int(bottom) + 12 - y}
        pg.page.screenshot(path=path, full_page=True, clip=clip, animations="disabled")
    from PIL import Image  # (matplotlib's dependency) 256 colours: a third of the size, for the repository

    with Image.open(path) as im:
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    small.save(path, optimize=True)


# -- playing ------------------------------------------------------------------------------------------------------
WAIT_TURN = """([prev, seed]) => {
  const err = document.querySelector("[data-testid=error]").textContent;
  if (err) return {error: err};
  const s = document.querySelector("[data-testid=status]").dataset;
  if (s.busy !== "false" || s.seed !== seed || s.steps === prev) return false;
  return s.yourTurn === "true" || s.over === "true" ? {...s} : false;
}"""


def wait_turn(pg: Page, seed: int, prev_steps: str | None) -> dict[str, str]:
    """Wait until the page answered the last message: the human's turn or the end of the deal."""
    st = pg.page.wait_for_function(WAIT_TURN, arg=[prev_steps, str(seed)]).json_value()
    assert "error" not in st, st
    return st


def open_setup(pg: Page, friends: bool = False) -> None:
    """Unfold the setup panel (the page folds it while a deal is on) and, with ``friends``, its friends' tables."""
    panels = [("setup-panel", "setup-toggle")] + ([("friends-panel", "friends-toggle")] if friends else [])
    for panel, toggle in panels:
        if not pg.testid(panel).evaluate("e => e.open"):
            pg.testid(toggle).click()
        expect(pg.testid(panel)).to_have_attribute("open", "")


def set_up(pg: Page, variant: str, seed: int, bot: str = "heuristic") -> None:
    """Fill the setup form by clicking and typing: the variant, the human at seat 0, bots, the seed."""
    open_setup(pg)
    pg.testid("variant").select_option(variant)
    pg.testid("human-seat").select_option("0")
    for k in range(1, get_variant(variant).n_players):
        pg.testid(f"seat-bot-{k}").select_option(bot)
    pg.testid("seed").fill(str(seed))


def play_by_clicking(pg: Page, seed: int, on_turn: Callable[[dict[str, str]], None] | None = None) -> list[str]:
    """Click Deal, then the first enabled move each time it is the human's turn; the phases the human acted in."""
    pg.testid("start").click()
    st = wait_turn(pg, seed, None)
    phases = []
    for _ in range(300):
        if st["over"] == "true":
            return phases
        assert st["yourTurn"] == "true" and st["busy"] == "false"
        enabled = pg.page.locator(ENABLED)
        assert enabled.count() == int(st["legal"]) >= 1, st  # every legal move is enabled, nothing else is
        phases.append(st["phase"])
        if on_turn:
            on_turn(st)
        enabled.first.click()
        st = wait_turn(pg, seed, st["steps"])
    pytest.fail("the deal did not end")


def result_of(pg: Page) -> dict[str, Any]:
    """What the result section shows: payoffs, contract, declarer, annulled, the bonuses listed."""
    box = pg.testid("result")
    box.wait_for(state="visible")
    bonuses = pg.page.locator("[data-testid=bonuses] li[data-bonus]").evaluate_all(
        "ls => ls.map(l => [l.dataset.bonus, Number(l.dataset.side), Number(l.dataset.points)])")
    rows = pg.page.locator("[data-testid=payoffs] tbody tr").evaluate_all("rs => rs.map(r => Number(r.dataset.payoff))")
    payoffs = json.loads(box.get_attribute("data-payoffs"))
    assert rows == payoffs
    return {"payoffs": payoffs, "contract": box.get_attribute("data-contract"),
            "declarer": box.get_attribute("data-declarer"), "annulled": box.get_attribute("data-annulled"),
            "bonuses": [tuple(b) for b in bonuses]}


def download(pg: Page, tmp_path: Path, trigger: Callable[[], None]) -> tuple[Path, dict[str, Any]]:
    with pg.page.expect_download() as info:
        trigger()
    dl = info.value
    path = tmp_path / dl.suggested_filename
    dl.save_as(path)
    return path, json.loads(path.read_text())


def check_against_replay(shown: dict[str, Any], record: dict[str, Any]) -> None:
    """The page's payoffs and bonuses are what the engine scores when it replays the downloaded record."""
    state = replay(record)
    out = state.outcome()
    assert shown["payoffs"] == state.returns() == record["result"]["payoffs"]
    assert shown["bonuses"] == [(b["name"], int(b["side"]), float(b["points"])) for b in out["bonuses"]]
    assert shown["contract"] == (out["contract"] or "")
    assert shown["declarer"] == ("" if out["declarer"] is None else str(out["declarer"]))


BIDDING = {"early", "auction", "bid"}  # the auction phases (tarocchi_rl.core.phases)
SHARED_STATUS = """() => {
  const err = document.querySelector("[data-testid=error]").textContent;
  const s = document.querySelector("[data-testid=status]").dataset;
  return err ? {error: err} : {...s};
}"""


def shared_status(pg: Page) -> dict[str, str]:
    st = pg.page.evaluate(SHARED_STATUS)
    assert "error" not in st, st
    return st


def people_strip(pg: Page) -> dict[int, str]:
    """Seat -> what the page's people strip says of it (you, present, waiting, away, replaced, bot)."""
    got = pg.testid("people").locator("li").evaluate_all("ls => ls.map(l => [l.dataset.seat, l.dataset.state])")
    return {int(k): state for k, state in got}


def take_turn(pg: Page, st: dict[str, str]) -> None:
    """Click a legal move (in the auction one that is not a pass, so that the deal gets a contract and card play),
    then wait for the answer."""
    enabled = pg.page.locator(ENABLED)
    assert enabled.count() == int(st["legal"]) >= 1, st
    actions = enabled.evaluate_all("bs => bs.map(b => b.dataset.action)")
    pick = 0
    if st["phase"] in BIDDING:
        pick = next((k for k, a in enumerate(actions) if "pass" not in a), 0)
    enabled.nth(pick).click()
    pg.page.wait_for_function("""(prev) => {
      const s = document.querySelector("[data-testid=status]").dataset;
      return document.querySelector("[data-testid=error]").textContent || (s.busy === "false" && s.steps !== prev);
    }""", arg=st["steps"])
