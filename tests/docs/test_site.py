"""The documentation site stays true: the README fits its front-door size, the results pages are what the committed
JSON gives, and the site's hooks send repository links where the site can follow them. (The site itself is built
with ``mkdocs build --strict`` by ``make test``.)"""

import importlib.util
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_readme_is_a_front_door():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 250
    needed_parts = ("## The two commands", "make test", "make demo", "## Install", "## A quick tour",
                    "## Documentation")
    for needed in needed_parts:
        assert any(needed in line for line in lines), needed


def test_site_has_the_topic_pages():
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    flat = []

    def walk(items):
        for item in items:
            if isinstance(item, dict):
                for v in item.values():
                    walk(v) if isinstance(v, list) else flat.append(v)
            else:
                flat.append(item)

    walk(nav)
    written = [p for p in flat if (ROOT / "docs" / p).is_file()]
    assert len(written) >= 10, written
    assert "api/index.md" in flat and "changelog.md" in flat


def test_results_pages_are_current_with_the_json():
    pytest.importorskip("matplotlib")
    pages = load(ROOT / "experiments" / "results_pages.py", "results_pages")
    built, plots = pages.build()
    assert set(built) == {"index.md", "leaderboards.md", "search.md", "exploitability.md", "training.md", "speed.md"}
    assert plots and all(svg.lstrip().startswith(b"<?xml") for svg in plots.values())
    assert pages.stale(built) == [], "run: make results"


def bot_exported(tmp_path, day: str) -> pathlib.Path:
    """A models directory whose piedmont3 bot was exported on ``day``."""
    import json

    (tmp_path / "models" / "piedmont3").mkdir(parents=True)
    (tmp_path / "models" / "piedmont3" / "manifest.json").write_text(json.dumps(
        {"provenance": {"exported_at": f"{day}T09:38:28+00:00"}}))
    return tmp_path / "models"


def test_the_headline_falls_back_to_the_latest_search_match(tmp_path, monkeypatch):
    import json

    pages = load(ROOT / "experiments" / "results_pages.py", "results_pages")
    (tmp_path / "search").mkdir()
    row = {"a": "bot:piedmont3", "b": pages.PLAIN_SEARCH, "deals": 500, "mean_a_vs_b": 1.5, "ci95": [0.5, 2.5]}
    # the latest by date, whatever the names' order; the name breaks a tie
    for name, date, mean in (("a.json", "2026-12-05", 9.0), ("b.json", "2026-12-05", 1.5),
                             ("c.json", "2026-12-04", 7.0)):
        (tmp_path / "search" / name).write_text(json.dumps(
            {"variant": "piedmont3", "command": "x", "date": date, "rows": [row | {"mean_a_vs_b": mean}]}))
    monkeypatch.setattr(pages, "RESULTS", tmp_path)
    monkeypatch.setattr(pages, "MODELS", bot_exported(tmp_path, "2026-12-05"))
    assert pages.match_cell("piedmont3", "bot:piedmont3", pages.PLAIN_SEARCH) == (
        f"+1.500 [+0.500, +2.500] (500 deals, `search/b.json`, {pages.FIRST_SCORE_ONLY})")
    assert pages.match_cell("piedmont3", pages.PLAIN_SEARCH, "bot:piedmont3") is None  # the order counts
    assert pages.match_cell("french3", "bot:piedmont3", pages.PLAIN_SEARCH) is None
    # a search table played with the previous bot yields to a match played with today's
    search = {"deals": 500, "agents": ["bot:piedmont3", pages.PLAIN_SEARCH], "table": [],
              "head_to_head": [{"agents": ["bot:piedmont3", pages.PLAIN_SEARCH], "mean_difference_per_deal": 1.0,
                                "ci95": [0.5, 1.5]}]}
    assert pages.search_cell("piedmont3", search, "bot:piedmont3", pages.PLAIN_SEARCH, previous_bot=True) == (
        f"+1.500 [+0.500, +2.500] (500 deals, `search/b.json`, {pages.FIRST_SCORE_ONLY})")
    assert pages.search_cell("piedmont3", search, "bot:piedmont3", pages.PLAIN_SEARCH) == (
        "+1.000 [+0.500, +1.500] (500 deals)")
    # a match that records its head to head (the scripts since 2026-12-06) gives it, as the tables do
    recorded = row | {"a_minus_b": 3.0, "a_minus_b_ci95": [2.0, 4.0]}
    (tmp_path / "search" / "d.json").write_text(json.dumps(
        {"variant": "piedmont3", "command": "x", "date": "2026-12-06", "rows": [recorded]}))
    assert pages.match_cell("piedmont3", "bot:piedmont3", pages.PLAIN_SEARCH) == (
        "+3.000 [+2.000, +4.000] (500 deals, `search/d.json`)")


def test_a_match_played_before_the_shipped_bot_says_so(tmp_path, monkeypatch):
    """A match file dated before models/V was exported is the replaced bot's: its headline cell says so, and a
    search table of the previous bot keeps its cell rather than yield to it."""
    import json

    pages = load(ROOT / "experiments" / "results_pages.py", "results_pages")
    (tmp_path / "search").mkdir()
    row = {"a": "bot:piedmont3", "b": pages.PLAIN_SEARCH, "deals": 500, "mean_a_vs_b": 1.5, "ci95": [0.5, 2.5]}
    (tmp_path / "search" / "m.json").write_text(json.dumps(
        {"variant": "piedmont3", "command": "x", "date": "2026-12-03", "rows": [row]}))
    monkeypatch.setattr(pages, "RESULTS", tmp_path)
    monkeypatch.setattr(pages, "MODELS", bot_exported(tmp_path, "2026-12-04"))
    assert pages.match_cell("piedmont3", "bot:piedmont3", pages.PLAIN_SEARCH) == (
        f"+1.500 [+0.500, +2.500] (500 deals, `search/m.json`, the previous bot, {pages.FIRST_SCORE_ONLY})")
    search = {"deals": 500, "agents": ["bot:piedmont3", pages.PLAIN_SEARCH], "table": [],
              "head_to_head": [{"agents": ["bot:piedmont3", pages.PLAIN_SEARCH], "mean_difference_per_deal": 1.0,
                                "ci95": [0.5, 1.5]}]}
    assert pages.search_cell("piedmont3", search, "bot:piedmont3", pages.PLAIN_SEARCH, previous_bot=True) == (
        "+1.000 [+0.500, +1.500] (500 deals, the previous bot)")


def test_a_table_played_before_the_shipped_bot_says_so(tmp_path, monkeypatch):
    """A leaderboard file dated before models/V was exported holds the replaced bot's rows: its section and the
    headline's cells say "the previous bot"; a table of the export's day or later does not."""
    import json

    pages = load(ROOT / "experiments" / "results_pages.py", "results_pages")
    (tmp_path / "piedmont3").mkdir()
    (tmp_path / "piedmont3" / "manifest.json").write_text(json.dumps(
        {"provenance": {"exported_at": "2026-12-04T09:38:28+00:00"}}))
    monkeypatch.setattr(pages, "MODELS", tmp_path)
    (tmp_path / "search").mkdir()  # no match between the two
    monkeypatch.setattr(pages, "RESULTS", tmp_path)
    assert pages.played_before_the_bot({"variant": "piedmont3", "date": "2026-12-03"})
    assert not pages.played_before_the_bot({"variant": "piedmont3", "date": "2026-12-04"})
    assert "dated 2026-12-03, before today's `bot:piedmont3` was exported (2026-12-04)" in " ".join(
        pages.stale_lines({"variant": "piedmont3", "date": "2026-12-03"}))
    assert pages.stale_lines({"variant": "piedmont3", "date": "2026-12-05"}) == []
    search = {"deals": 500, "agents": ["bot:piedmont3", pages.PLAIN_SEARCH], "table": [],
              "head_to_head": [{"agents": ["bot:piedmont3", pages.PLAIN_SEARCH], "mean_difference_per_deal": 1.0,
                                "ci95": [0.5, 1.5]}]}
    cell = pages.search_cell("piedmont3", search, "bot:piedmont3", pages.PLAIN_SEARCH, previous_bot=True)
    assert cell == "+1.000 [+0.500, +1.500] (500 deals, the previous bot)"


def test_results_check_names_a_stale_page(tmp_path, monkeypatch):
    pages = load(ROOT / "experiments" / "results_pages.py", "results_pages")
    built, _ = pages.build()
    monkeypatch.setattr(pages, "PAGES", tmp_path)
    (tmp_path / "index.md").write_text(built["index.md"].replace("+", "-", 1))
    bad = pages.stale(built)
    assert str(tmp_path / "index.md") in bad and str(tmp_path / "search.md") in bad


@pytest.mark.parametrize("origin, page, link, want", [
    ("README.md", "index.md", "[rules](docs/rules.md#2-mineo)", "[rules](rules.md#2-mineo)"),
    ("README.md", "index.md", "![a table](docs/screenshots/t.png)", "![a table](screenshots/t.png)"),
    ("README.md", "index.md", "[Changelog](CHANGELOG.md)", "[Changelog](changelog.md)"),
    ("docs/core.md", "core.md", "[`cards.py`](../tarocchi_rl/cards.py)", "[`cards.py`](api/tarocchi_rl.cards.md)"),
    ("docs/training.md", "training.md", "[t](../tarocchi_rl/rl/trainer.py)", "[t](api/tarocchi_rl.rl.trainer.md)"),
    ("docs/export.md", "export.md", "[bot](../agents/compose_bot.py)", "[bot](api/tarocchi_rl.agents.compose_bot.md)"),
    ("notebooks/README.md", "notebooks/index.md", "[one](01_games.ipynb)", "[one](01_games.md)"),
    ("docs/evaluation.md", "evaluation.md", "[`models/`](../models/README.md)", "`models/`"),
    ("docs/evaluation.md", "evaluation.md", "[deals](../benchmarks/README.md)", "deals (`benchmarks/README.md`)"),
    ("docs/web.md", "web.md", "[spec](bot-protocol.md)", "[spec](bot-protocol.md)"),
    ("docs/web.md", "web.md", "[x](https://example.org/a)", "[x](https://example.org/a)"),
])
def test_links_to_the_repository_are_rewritten_for_the_site(origin, page, link, want):
    hooks = load(ROOT / "docs" / "hooks.py", "docs_hooks")
    assert hooks.rewrite_links(f"see {link}.", origin, page) == f"see {want}."


def test_api_reference_covers_every_module():
    hooks = load(ROOT / "docs" / "hooks.py", "docs_hooks")
    names = hooks.modules()
    for must in ("tarocchi_rl", "tarocchi_rl.core.state", "tarocchi_rl.agents.specs", "tarocchi_rl.envs.gym",
                 "tarocchi_rl.web.app"):
        assert must in names
    assert len(names) == len(set(names)) and all(".." not in n for n in names)


def test_test_modules_import_no_other_test_module():
    """Shared test helpers live in tests/support; a test module importing another couples their collection."""
    sibling = re.compile(r"^\s*(from\s+(\.+|tests\.)(\w+\.)*test_\w*\s+import|import\s+tests(\.\w+)*\.test_)", re.M)
    offenders = [str(f.relative_to(ROOT)) for f in (ROOT / "tests").rglob("*.py") if sibling.search(f.read_text())]
    assert not offenders, f"test modules importing test modules: {offenders}"
