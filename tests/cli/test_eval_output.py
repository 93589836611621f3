"""``tarocchi-rl eval`` gives every pair head to head (the first agent's score minus the second's, mean per deal, with
its 95% CI: the figure the README's headline quotes) beside each agent's mean, in the text and in ``--json`` (whose
stdout is that JSON alone)."""

import json
import re

import pytest

from tarocchi_rl.cli import main

ARGS = ["eval", "--variant", "piedmont3", "--deals", "12", "--seed", "5", "--no-progress"]
FIGURE = r"([+-]\d+\.\d+) \[([+-]\d+\.\d+), ([+-]\d+\.\d+)\]"


def run(capsys, *more: str) -> str:
    assert main([*ARGS, *more]) == 0
    return capsys.readouterr().out


def test_json_holds_the_head_to_head_of_each_pair_and_nothing_else_is_on_stdout(capsys):
    r = json.loads(run(capsys, "--agents", "heuristic,random", "--json"))  # the whole of stdout parses
    (pair,) = r["head_to_head"]
    assert pair["agents"] == ["heuristic", "random"]
    means = {t["agent"]: t["mean_payoff_per_deal"] for t in r["table"]}
    # two agents: the head to head is the difference of their means (each mean: the agent's score in the pairing)
    assert pair["mean_difference_per_deal"] == pytest.approx(means["heuristic"] - means["random"])
    lo, hi = pair["ci95"]
    assert lo <= pair["mean_difference_per_deal"] <= hi and lo < hi


def test_text_gives_the_head_to_head_with_its_ci_beside_the_means(capsys):
    text = run(capsys, "--agents", "heuristic,random")
    r = json.loads(run(capsys, "--agents", "heuristic,random", "--json"))  # the same seed: the same games
    line = next(x for x in text.splitlines() if x.strip().startswith("heuristic - random:"))
    mean, lo, hi = map(float, re.search(FIGURE, line).groups())
    pair = r["head_to_head"][0]
    assert mean == pytest.approx(pair["mean_difference_per_deal"], abs=5e-4)
    assert (lo, hi) == pytest.approx(pair["ci95"], abs=5e-4)
    assert "first agent's score minus the second's" in text
    for t in r["table"]:  # the per-agent means are still there
        assert re.search(rf"{t['agent']}\s+{t['mean_payoff_per_deal']:.3f}", text)


def test_text_gives_every_pair_of_three_agents(capsys):
    text = run(capsys, "--agents", "heuristic,random,random")
    pairs = [x.strip().split(":")[0] for x in text.splitlines() if re.search(rf": {FIGURE}$", x)]
    assert pairs == ["heuristic - random", "heuristic - random", "random - random"]
