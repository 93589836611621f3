"""ISMCTS speed, side by side, 1 thread: ours on the compiled core against OpenSpiel's ISMCTS.

    .venv/bin/python experiments/bench/bench_ismcts.py [--positions 20] [--iterations 1000] [--repeats 3] [--json]

Measured (iterations per second, medians over ``--repeats`` runs, each over the same positions):

* ``ours``: :func:`tarocchi_rl.search.ismcts.search_row` (determinization + selection + expansion + random
  rollout + back-propagation, all compiled), one search per position, Numba threads = 1.
* ``openspiel_python``: OpenSpiel's ``open_spiel.python.algorithms.ismcts.ISMCTSBot`` with a random-rollout
  evaluator on our OpenSpiel game ``python_tarocchi_mineo`` at the same positions (fewer iterations: it is slow),
  resampling through our ``resample_from_infostate``.
* ``openspiel_cpp_hearts``: OpenSpiel's C++ ``pyspiel.ISMCTSBot`` on its own C++ ``hearts`` (a compiled engine on a
  game of the same size, 52 cards and 4 players), random rollouts, mid-game positions.

OpenSpiel's C++ ``pyspiel.ISMCTSBot`` cannot search a Python-implemented game in open_spiel 2.0.2 (its
``step`` crashes calling back into Python, and ``ResampleFromInfostate`` is not forwarded to Python games;
OpenSpiel's own ``python_kuhn_poker`` fails the same way: see tests/envs/test_openspiel.py), so on ``mineo`` the
OpenSpiel baseline is its Python ISMCTS, the same algorithm.

Positions: mineo deals played with random legal actions up to trick 5 (mid-game: about 40 of 63 cards left).
"""

import argparse
import json
import statistics
import time

import numpy as np


def mineo_positions(n, seed=0, trick=5):
    """n OpenSpiel states of python_tarocchi_mineo at the start of ``trick`` (random play from random deals)."""
    import pyspiel

    import tarocchi_rl.envs.openspiel  # noqa: F401  (registers the games)
    from tarocchi_rl.core.phases import PLAY
    from tarocchi_rl.core.state import PHASE, TRICK_COUNT, TRICK_NUM

    game = pyspiel.load_game("python_tarocchi_mineo")
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        s = game.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                acts, probs = zip(*s.chance_outcomes(), strict=True)
                s.apply_action(int(rng.choice(acts, p=probs)))
                continue
            if s._views is None:  # still dealing
                s.apply_action(int(rng.choice(s.legal_actions())))
                continue
            env = core_env(s)
            m = env.state.meta[0]
            if m[PHASE] == PLAY and m[TRICK_NUM] >= trick and m[TRICK_COUNT] == 0:  # a trick's lead
                out.append(s)
                break
            s.apply_action(int(rng.choice(s.legal_actions())))
    return game, out


def core_env(s):
    """The BatchEnv (a batch of one) behind an OpenSpiel state of our game."""
    return s._views.state._env


def bench_ours(states, iterations):
    import numba

    from tarocchi_rl.core.state import alloc_state
    from tarocchi_rl.search.ismcts import ROLLOUT_RANDOM, search_row
    from tarocchi_rl.variants import get_variant

    numba.set_num_threads(1)
    scratch = alloc_state(1)
    env0 = core_env(states[0])
    prior = np.zeros(env0.num_actions, np.float32)
    visits = np.zeros(env0.num_actions)
    scale = get_variant(env0.variant).payoff_scale
    scratch.rng[0] = 12345
    search_row(env0.state, 0, env0.tables, scratch, 0, 50, 0.7, scale, ROLLOUT_RANDOM, prior, 2.0, visits)  # compile
    t = time.perf_counter()
    for k, s in enumerate(states):
        scratch.rng[0] = 1 + k
        env = core_env(s)
        search_row(env.state, 0, env.tables, scratch, 0, iterations, 0.7, scale, ROLLOUT_RANDOM, prior, 2.0, visits)
    return len(states) * iterations / (time.perf_counter() - t)


def bench_openspiel_python(game, states, iterations):
    from open_spiel.python.algorithms import ismcts, mcts

    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)), uct_c=0.7,
                           max_simulations=iterations, random_state=np.random.RandomState(0))
    t = time.perf_counter()
    for s in states:
        bot.step(s.clone())
    return len(states) * iterations / (time.perf_counter() - t)


def hearts_positions(n, seed=0, actions=32):
    """n hearts states after the card pass (12 actions) and 20 card plays: mid-game, as the mineo positions."""
    import pyspiel

    game = pyspiel.load_game("hearts")
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        s = game.new_initial_state()
        taken = 0
        while not s.is_terminal():
            if s.is_chance_node():
                acts, probs = zip(*s.chance_outcomes(), strict=True)
                s.apply_action(int(rng.choice(acts, p=probs)))
                continue
            if taken >= actions and len(s.legal_actions()) > 1:
                out.append(s)
                break
            s.apply_action(int(rng.choice(s.legal_actions())))
            taken += 1
    return game, out


def bench_openspiel_cpp_hearts(iterations, n_positions):
    import pyspiel

    game, states = hearts_positions(n_positions)
    bot = pyspiel.ISMCTSBot(0, pyspiel.RandomRolloutEvaluator(1, 0), 0.7, iterations)
    t = time.perf_counter()
    for s in states:
        bot.step(s)
    return len(states) * iterations / (time.perf_counter() - t)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--positions", type=int, default=20)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--python-iterations", type=int, default=100, help="OpenSpiel Python ISMCTS (slow)")
    ap.add_argument("--python-positions", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    game, states = mineo_positions(args.positions)
    runs = {"ours": [], "openspiel_python": [], "openspiel_cpp_hearts": []}
    for _ in range(args.repeats):
        runs["ours"].append(bench_ours(states, args.iterations))
        runs["openspiel_python"].append(
            bench_openspiel_python(game, states[: args.python_positions], args.python_iterations))
        runs["openspiel_cpp_hearts"].append(bench_openspiel_cpp_hearts(args.iterations, args.positions))
    med = {k: statistics.median(v) for k, v in runs.items()}
    result = {
        "iterations_per_s_median": med, "runs": runs, "positions": args.positions, "iterations": args.iterations,
        "speedup_vs_openspiel_python": med["ours"] / med["openspiel_python"],
        "speedup_vs_openspiel_cpp_hearts": med["ours"] / med["openspiel_cpp_hearts"],
    }
    if args.json:
        print(json.dumps(result))
        return
    for k, v in runs.items():
        print(f"{k:>22}: median {med[k]:>12,.0f} it/s   runs {', '.join(f'{x:,.0f}' for x in v)}")
    print(f"ours / OpenSpiel Python ISMCTS (mineo): {result['speedup_vs_openspiel_python']:.0f}x")
    print(f"ours (mineo) / OpenSpiel C++ ISMCTS (hearts): {result['speedup_vs_openspiel_cpp_hearts']:.1f}x")


if __name__ == "__main__":
    main()
