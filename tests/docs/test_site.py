"""The documentation site stays true: the README fits its front-door size, the results pages are what the committed
JSON gives, and the site's hooks send repository links where the site can follow them. (The site itself is built
with ``mkdocs build --strict`` by ``make test``.)"""

import ast
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
    pages = load(ROOT / "experiments" / "docs" / "results_pages.py", "results_pages")
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


def match_file(folder: pathlib.Path, name: str, date: str, rows: list[dict], variant: str = "piedmont3") -> None:
    import json

    (folder / name).write_text(json.dumps({"variant": variant, "command": "x", "date": date, "rows": rows}))


def search_table(other: str, mean: float, lo: float, hi: float) -> dict:
    """A search table's result holding bot:piedmont3 against ``other``, head to head."""
    pair = ["bot:piedmont3", other]
    return {"deals": 500, "agents": pair, "table": [],
            "head_to_head": [{"agents": pair, "mean_difference_per_deal": mean, "ci95": [lo, hi]}]}


def test_a_headline_figure_comes_from_the_latest_head_to_head_match(tmp_path, monkeypatch):
    """The latest match of the pair (by date, then the file's name) that records A's score minus B's; a file with
    A's score alone (written before the scripts recorded the difference) is another quantity and is left out."""
    pages = load(ROOT / "experiments" / "docs" / "results_pages.py", "results_pages")
    (tmp_path / "search").mkdir()
    row = {"a": "bot:piedmont3", "b": pages.PLAIN_SEARCH, "deals": 500, "mean_a_vs_b": 1.5, "ci95": [0.5, 2.5]}
    h2h = row | {"a_minus_b": 3.0, "a_minus_b_ci95": [2.0, 4.0]}
    for name, date, mean in (("a.json", "2026-12-05", 9.0), ("b.json", "2026-12-05", 3.0),
                             ("c.json", "2026-12-04", 7.0)):
        match_file(tmp_path / "search", name, date, [h2h | {"a_minus_b": mean}])
    match_file(tmp_path / "search", "d.json", "2026-12-06", [row])  # the latest, but the first agent's score only
    monkeypatch.setattr(pages, "RESULTS", tmp_path)
    monkeypatch.setattr(pages, "MODELS", bot_exported(tmp_path, "2026-12-05"))
    got = pages.match_figure("piedmont3", "bot:piedmont3", pages.PLAIN_SEARCH)
    assert got == pages.HeadToHead(3.0, 2.0, 4.0, 500, "search/b.json", previous_bot=False)
    assert pages.headline_cell(got) == "**+3.00 [+2.00, +4.00]** (500 deals, `search/b.json`)"
    assert pages.match_figure("piedmont3", pages.PLAIN_SEARCH, "bot:piedmont3") is None  # the order counts
    assert pages.match_figure("french3", "bot:piedmont3", pages.PLAIN_SEARCH) is None
    assert pages.headline_cell(None) == pages.NOT_RECORDED


def test_a_figure_of_todays_bot_wins_over_the_previous_bots(tmp_path, monkeypatch):
    """A search table played before today's bot yields to a match played with it; with nothing newer the table's
    figure stays, and its cell says "the previous bot"."""
    pages = load(ROOT / "experiments" / "docs" / "results_pages.py", "results_pages")
    (tmp_path / "search").mkdir()
    monkeypatch.setattr(pages, "RESULTS", tmp_path)
    monkeypatch.setattr(pages, "MODELS", bot_exported(tmp_path, "2026-12-04"))
    old_board = {"variant": "piedmont3", "date": "2026-12-03",
                 "tables": {"search": search_table(pages.PLAIN_SEARCH, 1.0, 0.5, 1.5)}}
    table = pages.table_figure(old_board, "search", "bot:piedmont3", pages.PLAIN_SEARCH)
    assert table == pages.HeadToHead(1.0, 0.5, 1.5, 500, None, previous_bot=True)
    assert pages.headline_cell(table) == "**+1.00 [+0.50, +1.50]** (500 deals, the previous bot)"
    # the reverse pair reads the same figure, negated
    assert pages.table_figure(old_board, "search", pages.PLAIN_SEARCH, "bot:piedmont3").mean == -1.0
    assert pages.first_of_todays(table, None) is table
    row = {"a": "bot:piedmont3", "b": pages.PLAIN_SEARCH, "deals": 500, "mean_a_vs_b": -0.1, "ci95": [-0.3, 0.1],
           "a_minus_b": -0.2, "a_minus_b_ci95": [-0.5, 0.1]}
    match_file(tmp_path / "search", "m.json", "2026-12-04", [row])
    match = pages.match_figure("piedmont3", "bot:piedmont3", pages.PLAIN_SEARCH)
    assert pages.first_of_todays(table, match) is match
    assert pages.headline_cell(match) == "-0.20 [-0.50, +0.10] (500 deals, `search/m.json`)"  # CI not above 0
    new_board = old_board | {"date": "2026-12-04"}  # a table of today's bot comes first
    assert pages.first_of_todays(pages.table_figure(new_board, "search", "bot:piedmont3", pages.PLAIN_SEARCH),
                                 match).where is None


def test_a_table_played_before_the_shipped_bot_says_so(tmp_path, monkeypatch):
    """A leaderboard file dated before models/V was exported holds the replaced bot's rows: its section says "the
    previous bot"; a table of the export's day or later does not."""
    pages = load(ROOT / "experiments" / "docs" / "results_pages.py", "results_pages")
    monkeypatch.setattr(pages, "MODELS", bot_exported(tmp_path, "2026-12-04"))
    assert pages.played_before_the_bot({"variant": "piedmont3", "date": "2026-12-03"})
    assert not pages.played_before_the_bot({"variant": "piedmont3", "date": "2026-12-04"})
    assert "dated 2026-12-03, before today's `bot:piedmont3` was exported (2026-12-04)" in " ".join(
        pages.stale_lines({"variant": "piedmont3", "date": "2026-12-03"}))
    assert pages.stale_lines({"variant": "piedmont3", "date": "2026-12-05"}) == []


def headline_cells() -> list[tuple[str, str]]:
    """Every cell of the committed headline: (variant, the cell's text)."""
    pages = load(ROOT / "experiments" / "docs" / "results_pages.py", "results_pages")
    rows = pages.headline_rows()[2:]
    return [(r.split("|")[1].strip(" `"), c.strip()) for r in rows for c in r.split("|")[2:-1]]


def test_every_headline_cell_is_head_to_head_of_todays_bots():
    """Every variant the engine plays has a headline row whose three cells are head to head, from tables or matches
    played with today's shipped bots (a match played before a bot's export names "the previous bot")."""
    pages = load(ROOT / "experiments" / "docs" / "results_pages.py", "results_pages")
    from tarocchi_rl.variants import VARIANTS

    for v in VARIANTS:
        figures = pages.headline_figures(v)
        assert len(figures) == 3 and all(f is not None for f in figures), (v, figures)
        assert not [f for f in figures if f.previous_bot], (v, figures)


def test_headline_cells_have_the_same_decimals_and_bold_where_the_ci_is_above_zero():
    cell = re.compile(r"^(\*\*)?([+-]\d+\.(\d+)) \[([+-]\d+\.(\d+)), ([+-]\d+\.(\d+))\](\*\*)? \(")
    pages = load(ROOT / "experiments" / "docs" / "results_pages.py", "results_pages")
    from tarocchi_rl.variants import VARIANTS

    cells = headline_cells()
    assert len(cells) == 3 * len(VARIANTS)
    for variant, text in cells:
        m = cell.match(text)
        assert m, (variant, text)
        assert {len(m.group(k)) for k in (3, 5, 7)} == {pages.HEADLINE_DIGITS}, (variant, text)
        assert bool(m.group(1)) == bool(m.group(8)) == (float(m.group(4)) > 0), (variant, text)


def test_no_results_page_puts_an_image_in_a_table():
    """Markdown: a line after a table's last row joins the table, so an image line never follows a table line."""
    pages = load(ROOT / "experiments" / "docs" / "results_pages.py", "results_pages")
    built, _ = pages.build()
    for name, text in built.items():
        lines = text.splitlines()
        glued = [b for a, b in zip(lines, lines[1:], strict=False) if a.startswith("|") and b.startswith("![")]
        assert not glued, (name, glued)


def test_results_check_names_a_stale_page(tmp_path, monkeypatch):
    pages = load(ROOT / "experiments" / "docs" / "results_pages.py", "results_pages")
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


def imported_test_modules(text: str, package: list[str]) -> list[str]:
    """The test modules (``test_*``) a file of ``package`` (its dotted parts) imports, read from its syntax tree:
    ``import tests.a.test_b``, ``from tests.a.test_b import x``, ``from tests.a import test_b as alias``, ``from
    .test_b import x``, ``from . import test_b`` (wherever the import is: inside a function too)."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if any(p.startswith("test_") for p in a.name.split("."))]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = [*base, *(node.module or "").split(".")] if node.module else base
            if any(p.startswith("test_") for p in module):
                found.append(".".join(module))
            found += [".".join([*module, a.name]) for a in node.names if a.name.startswith("test_")]
    return found


def test_test_modules_import_no_other_test_module():
    """Shared test helpers live in tests/support (or tests/oracles); a test module importing another couples their
    collection. Read from each file's syntax tree, so an alias or a relative import cannot hide one."""
    offenders = {str(f.relative_to(ROOT)): m for f in (ROOT / "tests").rglob("*.py")
                 if (m := imported_test_modules(f.read_text(), list(f.relative_to(ROOT).parent.parts)))}
    assert not offenders, f"files under tests/ importing test modules: {offenders}"


def test_the_import_guard_sees_through_aliases_and_relative_imports():
    cases = {"from tests.core import test_differential_78 as d78": ["tests.core.test_differential_78"],
             "import tests.core.test_x as t": ["tests.core.test_x"],
             "from .test_site import ROOT": ["tests.docs.test_site"],
             "from . import test_site": ["tests.docs.test_site"],
             "def f():\n    from tests.web.test_challenges import play": ["tests.web.test_challenges"],
             "from tests.support.challenges import play": []}
    for text, expected in cases.items():  # as a file of tests/docs
        assert imported_test_modules(text + "\n", ["tests", "docs"]) == expected, text


def test_the_strong_bots_rows_show_a_finished_match_and_one_in_progress_from_its_blocks(tmp_path, monkeypatch):
    import json

    pages = load(ROOT / "experiments" / "docs" / "results_pages.py", "results_pages")
    (tmp_path / "strong").mkdir()
    monkeypatch.setattr(pages, "RESULTS", tmp_path)
    (tmp_path / "strong" / "mineo.json").write_text(json.dumps(
        {"variant": "mineo", "a": "strong:mineo,time=0.05", "b": "ismcts:iterations=1000", "deals": 500,
         "a_minus_b": 0.5, "a_minus_b_ci95": [0.1, 0.9], "ms_per_decision_a": 41.25, "ms_per_decision_b": 9.0}))
    agents = ["strong:french3,time=0.05", "ismcts:iterations=1000"]
    blocks = [{"key": {"first_deal": first, "agents": agents}, "scores": [[10.0, 0.0], [4.0, 2.0]]}
              for first in (100, 0)]
    (tmp_path / "strong" / "french3_blocks.jsonl").write_text("".join(json.dumps(b) + "\n" for b in blocks))
    rows = {r.split(" | ")[0].lstrip("| "): r for r in pages.strong_rows()[2:]}
    assert rows["mineo"] == ("| mineo | `strong:mineo,time=0.05` | `ismcts:iterations=1000` | 500 | "
                             "**+0.500 [+0.100, +0.900]** | 41.2, 9.0 |")
    assert "| 4 of 500 (in progress) | +2.00 [" in rows["french3"]  # (6 - 2 + 6 - 2) / 4 deals
    assert rows["tarok3"].endswith("| not played yet | - | - |")
