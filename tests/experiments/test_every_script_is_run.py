"""Every script of experiments/ is run by a test (issue 32, item 7): a smoke test here, test_NAME.py, or one of the
tests elsewhere that run it (listed below)."""

from .scripts import EXPERIMENTS, ROOT

ELSEWHERE = {  # script -> the test that runs it with tiny settings
    "abuse_floods": "tests/experiments/test_abuse_web.py",  # abuse_web.py's crowd phases
    "ablations": "tests/rl/test_ablations_script.py",
    "belief_calibration": "tests/rl/test_belief.py",  # main() of the script, in process
    "results_pages": "tests/docs/test_site.py",
}


def test_every_script_has_a_smoke_test():
    here = ROOT / "tests" / "experiments"
    untested = []
    for script in sorted(EXPERIMENTS.glob("*.py")):
        name = script.stem
        test = ROOT / ELSEWHERE[name] if name in ELSEWHERE else here / f"test_{name}.py"
        if not (test.is_file() and name in test.read_text()):
            untested.append(f"{script.relative_to(ROOT)} (no {test.relative_to(ROOT)} naming it)")
    assert not untested, "scripts without a smoke test: " + ", ".join(untested)


def test_every_script_is_listed_in_the_readme_and_no_other():
    """experiments/README.md lists each script once, with what it measures and writes (issue 54, item 4)."""
    import re

    listed = re.findall(r"^\| `(\w+)\.py` \|", (EXPERIMENTS / "README.md").read_text(), re.M)
    assert len(listed) == len(set(listed)), "a script listed twice"
    assert set(listed) == {p.stem for p in EXPERIMENTS.glob("*.py")}
