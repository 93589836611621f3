"""The same game timed on both sides, in one run on one thread (issue 34, item 4):
``python experiments/bench/bench_openspiel_tarok.py [--variant tarok4] [--seconds 5] [--repeats 3] [--out FILE]``
(recorded: ``benchmarks/results/speed/openspiel/``, beside, not among, ``bench_core``'s files).

Every loop plays complete random deals of Slovenian tarok (uniformly random legal decisions, the deal's chance
outcome sampled) and is timed for ``--seconds``, ``--repeats`` times; medians are reported, in deals/s.

- ours: the batched core's fused random rollout, as ``tarocchi-rl bench`` times it (``tarocchi_rl.bench``),
  Numba on one thread;
- OpenSpiel from Python, as its users drive it: ``pyspiel.load_game("tarok(players=P)")``,
  ``new_initial_state()``, chance outcomes sampled from ``chance_outcomes()``, a random action from
  ``legal_actions()``, ``apply_action`` until ``is_terminal()``;
- OpenSpiel's C++ loop where pyspiel exposes one: ``pyspiel.random_sim_test(game, n, serialize=False,
  verbose=False, mask_test=False)``, OpenSpiel's own random simulation test. It is not a bare loop: it also
  checks each state (legal actions, observations, returns), so it is a lower bound of OpenSpiel's C++ speed.
  pyspiel's ``RandomRolloutEvaluator`` binds only its constructor (no ``evaluate``), so it cannot be timed
  alone from Python; OpenSpiel is not built from source here.

``ratio_python`` = ours / OpenSpiel from Python (the target is 30x or more); ``ratio_cpp`` = ours /
random_sim_test. Random tarok deals are short (most random bids are high contracts that end early: about
5 card plays a deal in tarok4), on both sides alike. Needs pyspiel (OpenSpiel's Python package).
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import statistics
import sys
import time
from typing import Any

import numba

from tarocchi_rl.bench import bench_rollout
from tarocchi_rl.provenance import machine_stamp
from tarocchi_rl.variants import get_variant


def openspiel_python(game: Any, seconds: float, seed: int) -> dict[str, float]:
    """Random deals driven from Python for ``seconds``: deals/s and the decisions per deal."""
    rng = random.Random(seed)
    deals = decisions = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(actions, probs)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
        deals += 1
    dt = time.perf_counter() - t0
    return {"deals_per_s": deals / dt, "decisions_per_deal": decisions / max(deals, 1)}


def openspiel_cpp(game: Any, seconds: float, pyspiel: Any) -> dict[str, float]:
    """``random_sim_test`` in calls of a calibrated size for about ``seconds``: deals/s."""
    n = 16
    while True:  # calibrate: one call about a tenth of the run
        t = time.perf_counter()
        pyspiel.random_sim_test(game, n, False, False, False)
        if time.perf_counter() - t >= seconds / 10:
            break
        n *= 2
    deals = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        pyspiel.random_sim_test(game, n, False, False, False)
        deals += n
    return {"deals_per_s": deals / (time.perf_counter() - t0)}


def run(variant: str, seconds: float, repeats: int, batch: int) -> dict[str, Any]:
    """The three loops, ``repeats`` rounds of ``seconds`` each (interleaved), medians and every run."""
    import pyspiel

    numba.set_num_threads(1)
    players = get_variant(variant).n_players
    game = pyspiel.load_game(f"tarok(players={players})")
    ours, py, cpp = [], [], []
    for k in range(repeats):
        ours.append(bench_rollout(variant, batch, seconds, seed=k))
        py.append(openspiel_python(game, seconds, seed=k))
        cpp.append(openspiel_cpp(game, seconds, pyspiel))
    med = {name: statistics.median(r["deals_per_s"] for r in runs) for name, runs in
           (("ours", ours), ("python", py), ("cpp", cpp))}
    return {
        "variant": variant, "openspiel_game": f"tarok(players={players})", "threads": 1, "batch": batch,
        "seconds_per_run": seconds, "repeats": repeats,
        "ours_deals_per_s": med["ours"],
        "openspiel_python_deals_per_s": med["python"],
        "openspiel_cpp_random_sim_test_deals_per_s": med["cpp"],
        "ratio_python": med["ours"] / med["python"],
        "ratio_cpp": med["ours"] / med["cpp"],
        "openspiel_decisions_per_deal": statistics.median(r["decisions_per_deal"] for r in py),
        "runs": {"ours": ours, "openspiel_python": py, "openspiel_cpp_random_sim_test": cpp},
    }


def format_report(r: dict[str, Any]) -> str:
    return "\n".join([
        f"{r['variant']} vs OpenSpiel {r['openspiel_game']}, one thread, median of {r['repeats']} runs of "
        f"{r['seconds_per_run']:g} s",
        f"  ours (fused random rollout, batch {r['batch']}) : {r['ours_deals_per_s']:>12,.0f} deals/s",
        f"  OpenSpiel from Python                : {r['openspiel_python_deals_per_s']:>12,.0f} deals/s "
        f"({r['openspiel_decisions_per_deal']:.1f} decisions a deal)",
        f"  OpenSpiel C++ random_sim_test        : {r['openspiel_cpp_random_sim_test_deals_per_s']:>12,.0f} deals/s "
        "(with its checks)",
        f"  ratio: {r['ratio_python']:,.1f}x OpenSpiel from Python (target >= 30x), "
        f"{r['ratio_cpp']:,.1f}x its C++ random_sim_test",
    ])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", default="tarok4", choices=["tarok3", "tarok4"])
    p.add_argument("--seconds", type=float, default=5.0, help="length of each timed run")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--batch", type=int, default=4096, help="our rollout's batch")
    p.add_argument("--note", default="", help="recorded as is (e.g. what else the machine was running)")
    p.add_argument("--out", default=None, help="JSON file to write (default: print only)")
    a = p.parse_args(argv)
    if a.seconds <= 0 or a.repeats < 1 or a.batch < 1:
        p.error("--seconds must be > 0, --repeats and --batch >= 1")
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        print("bench_openspiel_tarok: pyspiel (OpenSpiel's Python package) is not installed", file=sys.stderr)
        return 2
    r = run(a.variant, a.seconds, a.repeats, a.batch)
    r["machine"] = machine_stamp()
    r["when"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    r["note"] = a.note
    print(format_report(r))
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(r, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
