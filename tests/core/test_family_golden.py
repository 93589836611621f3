"""What the family code decides, pinned on fixed deals: the heuristic's actions, the observations' sections, the
determinizer's samples and the payoffs of every variant, compared exactly with a recording of the code before
the family contract moved those branches into the family modules (``family_golden.json`` beside this file).

Actions, card sets and payoffs are integers: compared exactly. Observations are compared by which entries are
set (a digest of the nonzero indices), never by float value.

Re-record (only when a rule or the heuristic is meant to change): ``python -m tests.core.test_family_golden``.
"""

import hashlib
import json
import os

import numpy as np
import pytest

from tarocchi_rl import BatchEnv
from tarocchi_rl.policies.heuristic import HeuristicAgent
from tarocchi_rl.search.determinize import determinize
from tests.support.engine import JIT_DISABLED

GOLDEN = os.path.join(os.path.dirname(__file__), "family_golden.json")
# every variant at its defaults, then the options that switch family branches on
CONFIGS = [
    ("mineo", {}), ("mineo", {"early_solo": False}), ("piedmont3", {}),
    ("piedmont3", {"honour_5": "angelo", "excuse_exchange": False}), ("piedmont4", {}),
    ("piedmont4", {"accuso": True}), ("french3", {}), ("french4", {}),
    ("french4", {"excuse_last_trick": "trick_winner"}),
]
BATCH, SEED = 24, 7  # games per configuration, the deals' seed
SAMPLE_EVERY, SAMPLES = 9, 3  # determinize game k % B at every 9th step k, 3 samples each


def _key(variant: str, options: dict) -> str:
    return variant + "".join(f"-{k}={v}" for k, v in sorted(options.items()))


def record(variant: str, options: dict) -> dict:
    """Play ``BATCH`` games (heuristic and random actions mixed by a fixed RNG) and digest what the family code
    decided on the way: {actions (the heuristic's action in game 0 at each step it is live, readable),
    actions_sha (every game's), obs_sha, samples_sha, payoffs_sha, steps}."""
    env = BatchEnv(variant, BATCH, seed=SEED, **options)
    agent = HeuristicAgent()
    rng = np.random.default_rng(SEED)
    acts_h, obs_h, samples_h = hashlib.sha256(), hashlib.sha256(), hashlib.sha256()
    shown: list[int] = []
    step = 0
    while not env.all_done():
        live = np.nonzero(~env.done())[0]
        heur = agent.act(None, None, env, live)
        acts_h.update(heur.astype(np.int64).tobytes())
        if live[0] == 0:
            shown.append(int(heur[0]))
        obs = env.observe()
        obs_h.update(np.flatnonzero(obs).astype(np.int64).tobytes())
        if step % SAMPLE_EVERY == 0:
            g = int(live[step % live.size])
            seat = int(env.current_player()[g])
            dst = determinize(env.state, g, seat, env.tables, n=SAMPLES, seed=step, parallel=False)
            for arr in (dst.meta, dst.cards, dst.deck):
                samples_h.update(np.ascontiguousarray(arr).tobytes())
        acts = env.random_actions()
        use = rng.random(live.size) < 0.5
        acts[live[use]] = heur[use]
        acts[env.done()] = 0
        env.step(acts)
        step += 1
    payoffs = np.ascontiguousarray(env.returns(), np.int64)
    return {"actions": shown, "actions_sha": acts_h.hexdigest(), "obs_sha": obs_h.hexdigest(),
            "samples_sha": samples_h.hexdigest(), "payoffs_sha": hashlib.sha256(payoffs.tobytes()).hexdigest(),
            "steps": step}


@pytest.mark.skipif(JIT_DISABLED, reason="24 games per configuration need the JIT")
@pytest.mark.parametrize("variant,options", CONFIGS, ids=[_key(v, o) for v, o in CONFIGS])
def test_family_decisions_unchanged(variant, options):
    with open(GOLDEN) as f:
        want = json.load(f)[_key(variant, options)]
    got = record(variant, options)
    assert got["actions"] == want["actions"]
    assert got["steps"] == want["steps"]
    for what in ("actions_sha", "obs_sha", "samples_sha", "payoffs_sha"):
        assert got[what] == want[what], f"{_key(variant, options)}: {what} differs from the recording"


if __name__ == "__main__":
    with open(GOLDEN, "w") as f:
        lines = [f" {json.dumps(_key(v, o))}: {json.dumps(record(v, o))}" for v, o in CONFIGS]
        f.write("{\n" + ",\n".join(lines) + "\n}\n")
