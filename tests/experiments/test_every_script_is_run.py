"""Every script of experiments/ is run by a test (issue 32, item 7): a smoke test here, test_NAME.py, or one of the
tests elsewhere that run it (listed below)."""

from .scripts import EXPERIMENTS, FOLDERS, ROOT, scripts

ELSEWHERE = {  # script -> the test that runs it with tiny settings
    "abuse_floods": "tests/experiments/test_abuse_web.py",  # the crowds of abuse_web.py's crowd phases
    "ablations": "tests/rl/test_ablations_script.py",
    "belief_calibration": "tests/rl/test_belief.py",  # main() of the script, in process
    "results_pages": "tests/docs/test_site.py",
}


def test_every_script_has_a_smoke_test():
    here = ROOT / "tests" / "experiments"
    untested = []
    for name, script in sorted(scripts().items()):
        test = ROOT / ELSEWHERE[name] if name in ELSEWHERE else here / f"test_{name}.py"
        if not (test.is_file() and name in test.read_text()):
            untested.append(f"{script.relative_to(ROOT)} (no {test.relative_to(ROOT)} naming it)")
    assert not untested, "scripts without a smoke test: " + ", ".join(untested)


def test_every_script_is_listed_in_the_readme_and_no_other():
    """experiments/README.md lists each script once, under its folder, with its command line and what it writes
    (issue 54, item 4)."""
    import re

    readme = (EXPERIMENTS / "README.md").read_text()
    listed = re.findall(r"^\| `\.venv/bin/python experiments/(\w+)/(\w+)\.py\b[^`]*` \|", readme, re.M)
    assert len(listed) == len(set(listed)), "a script listed twice"
    assert set(listed) == {(p.parent.name, p.stem) for p in scripts().values()}


def test_scripts_sit_in_the_folders_by_purpose_and_import_no_other_script():
    """experiments/ holds only its folders, README.md and common.py (the shared helpers); a script imports the
    library and common.py, never another script (issue 54, item 4)."""
    import ast

    top = {p.name for p in EXPERIMENTS.iterdir() if p.name != "__pycache__"}
    assert top == {*FOLDERS, "README.md", "common.py"}, top
    names = set(scripts())
    assert len(names) == sum(1 for _ in EXPERIMENTS.glob("*/*.py")), "two scripts of the same name"
    imports = {}
    for name, path in scripts().items():
        tree = ast.parse(path.read_text())
        modules = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        modules |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        if modules & names:
            imports[name] = sorted(modules & names)
    assert not imports, f"scripts importing other scripts: {imports}"
