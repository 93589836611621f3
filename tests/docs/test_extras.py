"""The pages a newcomer follows install what their commands need: every command of the README's install and tour
and of getting started runs with only the packages of the extras the page installs (every other optional package
hidden from the import system), and a command whose extra is missing says which in one line.

The commands run as the page writes them, made small where the page's run would take minutes (fewer deals, a
training budget of seconds: :func:`small`), in a scratch directory; the slow test plays them all."""

import json
import os
import re
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: page -> (the heading its commands start under, the heading they end before)
PAGES = {"README.md": ("## Install", "## Headline figures"),
         "docs/getting-started.md": ("## Install", "## The notebooks")}
INSTALL = re.compile(r"pip install -e \"\.\[([a-z,]+)\]\"")
#: the runner: the import system's path finder no longer finds the modules that lie under the paths named in argv[1]
#: (a JSON list), as if they were not installed (a package vendored elsewhere, as Ray's psutil, stays); then it
#: runs argv[2:] as a command (argv[2]: the name of an installed program, tarocchi-rl or tensorboard)
HIDE = """
import importlib.machinery, importlib.metadata, json, sys
hidden = tuple(json.loads(sys.argv[1]))
class Hide:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        where = [spec.origin or ""] + list(spec.submodule_search_locations or []) if spec else []
        return None if any((w + "/").startswith(hidden) for w in where) else spec
    @classmethod
    def invalidate_caches(cls):
        importlib.machinery.PathFinder.invalidate_caches()
    @classmethod
    def find_distributions(cls, *args, **kwargs):
        return importlib.machinery.PathFinder.find_distributions(*args, **kwargs)
sys.meta_path[:] = [Hide if f is importlib.machinery.PathFinder else f for f in sys.meta_path]
sys.argv = sys.argv[2:]
(script,) = importlib.metadata.entry_points(group="console_scripts", name=sys.argv[0])
sys.exit(script.load()())
"""
TIMEOUT_S = 900  # one command (a training of a few seconds starts Ray) on a busy 2-core machine


def section(page: str) -> str:
    start, end = PAGES[page]
    text = (ROOT / page).read_text()
    return text[text.index(start):text.index(end)]


def page_extras(page: str) -> set[str]:
    """The extras the page installs (every ``pip install -e ".[...]"`` of it names the same)."""
    named = {frozenset(m.split(",")) for m in INSTALL.findall(section(page))}
    assert len(named) == 1, f"{page}: install lines name {sorted(map(sorted, named))}"
    return set(next(iter(named)))


def commands(page: str) -> list[list[str]]:
    """The commands of the page's shell blocks that use the project (its install and build lines left out)."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", section(page), flags=re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words and not (words[0] in ("make", "python3") or words[0].endswith("pip")):
                out.append([Path(words[0]).name, *words[1:]])
    return out


def _requires(dist: str, extras: set[str]) -> list[tuple[str, set[str]]]:
    """The distributions ``dist`` (installed) requires with ``extras``: (name, the extras asked of it)."""
    from packaging.requirements import Requirement

    out = []
    for text in metadata.requires(dist) or []:
        r = Requirement(text)
        env = [{"extra": e} for e in extras] or [{"extra": ""}]
        if r.marker is None or any(r.marker.evaluate(e) for e in env):
            out.append((r.name, set(r.extras)))
    return out


def closure(extras: set[str]) -> set[str]:
    """Every distribution an install of this checkout with ``extras`` brings (canonical names): pyproject.toml's
    dependencies and those of the extras, then what they require as installed here."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = pytest.importorskip("tomllib").loads((ROOT / "pyproject.toml").read_text())["project"]
    seen: dict[str, set[str]] = {}
    todo = [(Requirement(t), "") for t in project["dependencies"]]
    pending, done = set(extras), set()
    while pending:  # an extra may name others of this package (dev = tarocchi-rl[envs,train,...])
        extra = pending.pop()
        done.add(extra)
        todo += [(Requirement(t), extra) for t in project["optional-dependencies"][extra]]
        pending |= {e for r, _ in todo if canonicalize_name(r.name) == project["name"] for e in r.extras} - done
    todo = [(r.name, set(r.extras)) for r, extra in todo if canonicalize_name(r.name) != project["name"]
            and (r.marker is None or r.marker.evaluate({"extra": extra}))]
    while todo:
        name, wanted = todo.pop()
        key = canonicalize_name(name)
        if key in seen and wanted <= seen[key]:
            continue
        seen[key] = seen.get(key, set()) | wanted
        try:
            todo += _requires(name, seen[key])
        except metadata.PackageNotFoundError:  # not installed here (an optional dependency of a dependency)
            continue
    return set(seen)


def hidden_modules(extras: set[str]) -> list[str]:
    """Where the top-level modules lie that only distributions outside ``extras`` provide (of those ``dev``
    installs): their folders (ending in /), or their files for single-file modules."""
    import importlib.util

    from packaging.utils import canonicalize_name

    kept = closure(extras)
    outside = closure({"dev"}) - kept
    out = []
    for module, dists in metadata.packages_distributions().items():
        names = {canonicalize_name(d) for d in dists}
        if names & outside and not names & kept and module.isidentifier():
            spec = importlib.util.find_spec(module)
            if spec is not None:
                folders = [f"{f}/" for f in spec.submodule_search_locations or []]  # not a prefix of a sibling
                out += folders or ([spec.origin] if spec.origin else [])
    return sorted(out)


def run(argv: list[str], hidden: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", HIDE, json.dumps(hidden), *argv], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=TIMEOUT_S)


def option(argv: list[str], name: str, value: str) -> list[str]:
    """``argv`` with ``name value`` (replaced where it was there)."""
    if name in argv:
        k = argv.index(name)
        return [*argv[:k], name, value, *argv[k + 2:]]
    return [*argv, name, value]


TINY_TRAINING = ["total_samples=3000", "max_minutes=0.5", "num_envs=16", "rollout_steps=16", "imitation.decisions=500",
                 "eval.every=1000", "eval.deals=4", "eval.final_deals=4", "ppo.minibatch_size=128",
                 "checkpoint_every=1"]


def small(argv: list[str], deals_dir: Path) -> tuple[list[str], str]:
    """The page's command made small (the same subcommand, agents and files; fewer deals, seconds of training),
    and what its stdin holds (a human answering the first legal move each time)."""
    if argv[0] == "tensorboard":
        return [argv[0], "--version_tb"], ""
    sub = argv[1] if len(argv) > 1 else ""
    if sub == "eval":
        argv = [a for a in argv if a != "--deals-file" and not a.endswith(".jsonl.gz")]
        return option(argv, "--deals", "2"), ""
    if sub == "leaderboard":
        return option(option(argv, "--deals-dir", str(deals_dir)), "--out", "board"), ""
    if sub == "train":
        return [*argv, *(x for s in TINY_TRAINING for x in ("--set", s)), "--no-progress"], ""
    if sub == "exploit":
        sets = [x for s in TINY_TRAINING if not s.startswith("max_minutes") for x in ("--set", s)]
        return [*option(option(argv, "--minutes", "0.05"), "--deals", "2"), *sets, "--no-progress"], ""
    if sub == "export":
        return [*argv, "--eval-deals", "2", "--golden", "8"], ""
    if sub == "play":
        return argv, "0\n" * 400  # a human at seat 0, answering the first legal move each time
    return argv, ""  # replay, bot (its stdin closed: it ends), --help


def test_the_pages_install_the_same_extras_and_pyproject_has_them():
    declared = set(metadata.metadata("tarocchi-rl").get_all("Provides-Extra") or [])
    named = {page: page_extras(page) for page in PAGES}
    assert len({frozenset(e) for e in named.values()}) == 1, named
    for extras in named.values():
        assert extras <= declared, (extras, declared)
    assert "web" in named["docs/getting-started.md"]  # where to go next: the web server


def test_an_extra_that_is_missing_is_named_in_one_line(tmp_path):
    """With the page's extras less ``web``, ``serve`` says which extra it needs; less ``train`` (and ``bot``),
    ``train`` and a shipped bot say so too: one line, exit 2, no traceback."""
    extras = page_extras("docs/getting-started.md")
    cases = [({"web"}, ["tarocchi-rl", "serve", "--port", "0"], "web"),
             ({"train", "bot"}, ["tarocchi-rl", "train", "--variant", "mineo", "--out", "run"], "train"),
             ({"train", "bot"}, ["tarocchi-rl", "eval", "--agents", "bot:mineo,heuristic", "--deals", "1"], "bot"),
             ({"train", "bot"}, ["tarocchi-rl", "demo", "--deals", "1"], "bot")]
    for less, argv, extra in cases:
        r = run(argv, hidden_modules(extras - less), tmp_path)
        assert r.returncode == 2, (argv, r.stderr[-2000:])
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and f"tarocchi-rl[{extra}]" in lines[0], lines


def test_the_built_in_agents_need_no_extra(tmp_path):
    """With no extra at all (getting started's first row): the arena with the heuristic, random and the search."""
    argv = ["tarocchi-rl", "eval", "--variant", "french3", "--agents", "heuristic,random,ismcts:iterations=5,"
            "rollout=random", "--deals", "1"]
    r = run(argv, hidden_modules(set()), tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "heuristic - random:" in r.stdout


@pytest.mark.slow
@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_command_of_the_page_runs_with_the_extras_it_installs(page, tmp_path):
    hidden = hidden_modules(page_extras(page))
    assert {"pytest", "playwright", "mkdocs"} <= {Path(h).name for h in hidden}  # dev's and docs' out of reach
    deals_dir = tmp_path / "deals"
    deals_dir.mkdir()
    for variant in ("mineo", "piedmont3", "piedmont4", "french3", "french4", "tarok3", "tarok4"):
        r = run(["tarocchi-rl", "deals", "--variant", variant, "--n", "4", "--seed", "1", "--out",
                 str(deals_dir / f"{variant}.jsonl.gz")], hidden, tmp_path)
        assert r.returncode == 0, r.stderr[-2000:]
    ran = []
    for argv in commands(page):
        if argv[:2] == ["tarocchi-rl", "serve"]:
            check_serve(argv, hidden, tmp_path)
        else:
            cmd, stdin = small(argv, deals_dir)
            r = run(cmd, hidden, tmp_path, stdin)
            assert r.returncode == 0, (cmd, r.stderr[-3000:])
        ran.append(argv[:2])
    assert ran, page


def check_serve(argv: list[str], hidden: list[str], cwd: Path) -> None:
    """``serve`` starts (its first health answer) with the page's extras, then stops on SIGTERM."""
    import threading
    import urllib.request

    proc = subprocess.Popen([sys.executable, "-c", HIDE, json.dumps(hidden), *argv, "--port", "0"], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=os.environ | {"PYTHONUNBUFFERED": "1"})
    lines: list[str] = []
    listening = threading.Event()

    def drain() -> None:  # everything it prints (a full pipe would block it); the URL once it listens
        for line in proc.stdout:
            lines.append(line)
            if re.search(r"running on http://127\.0\.0\.1:\d+", line, flags=re.I):
                listening.set()
        listening.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        listening.wait(TIMEOUT_S)
        url = next((m.group(1) for x in lines for m in [re.search(r"(http://127\.0\.0\.1:\d+)", x)] if m), None)
        assert url, "serve ended before it listened:\n" + "".join(lines)[-3000:]
        with urllib.request.urlopen(url + "/v1/health", timeout=TIMEOUT_S) as answer:
            assert json.loads(answer.read())
    finally:
        proc.terminate()
        proc.wait(TIMEOUT_S)
        reader.join(TIMEOUT_S)
