"""``experiments/studies/learning_curve.py``: a run's ``eval.jsonl`` plotted and tabled (the lines are the trainer's:
``Trainer._evaluate``)."""

import json

from .scripts import ok, run_script


def evaluation(update: int, mean: float, final: bool = False) -> dict:
    """One line of eval.jsonl as the trainer writes it."""
    return {"update": update, "samples": 1000 * update, "decisions": 3000 * update, "minutes": 0.5 * update,
            "deals": 400 if final else 100, "final": final,
            "vs": {opp: {"mean": mean + d, "ci95": [mean + d - 1, mean + d + 1], "win_rate": 0.5}
                   for opp, d in (("heuristic", 0.0), ("random", 3.0))}}


def test_the_curve_is_plotted_and_tabled(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    rows = [evaluation(0, -2.0), evaluation(50, -0.5), evaluation(100, 0.25), evaluation(100, 0.5, final=True)]
    (run / "eval.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = ok(run_script("learning_curve", str(run), "--markdown"))
    png = run / "learning_curve.png"
    assert f"wrote {png}" in done.stdout and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = [line for line in done.stdout.splitlines() if line.startswith("|")]
    assert table[0] == "| update | minutes | learner decisions | vs heuristic [95% CI] | vs random [95% CI] |"
    assert len(table) == 2 + len(rows)
    assert table[-1] == "| 100 (final, 400 deals) | 50.0 | 0.1 M | +0.50 [-0.50, +1.50] | +3.50 [+2.50, +4.50] |"


def test_a_directory_without_evaluations_is_one_line(tmp_path):
    done = run_script("learning_curve", str(tmp_path))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    path = tmp_path / "eval.jsonl"
    assert done.stderr.strip() == f"error: {path} not found (is {tmp_path} a training run directory?)"
