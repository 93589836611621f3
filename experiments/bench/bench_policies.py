"""Arena decisions per second of an exported policy (``onnx:DIR``, onnxruntime) against the same checkpoint played
by torch (``ppo:PATH``), side by side in one run, on one thread each.

    python experiments/bench/bench_policies.py [--checkpoint PATH] [--variant mineo] [--deals 200] [--rounds 5]

Without ``--checkpoint`` a freshly initialised network of the default shape (256x256, relu) is saved in the
checkpoint format and exported (the rate does not depend on the weights). The bot directory is made by
:func:`tarocchi_rl.rl.export.export_policy` (``--eval-deals 0``). Numba, torch and onnxruntime all run on one
thread. One run = the duplicate arena's games (:func:`tarocchi_rl.arena.play_games`, the arena's batches of
~4096 games) on ``--deals`` deals with the policy in every seat (two instances of the same agent, as a pair of
the arena), timed by the wall clock and by the process's CPU time (on a shared machine the wall clock also counts
other processes' time); a decision is one row an agent answers. The two agents alternate run by run (the order
swapped every round, so that drifts of the machine fall on both); the median of ``--rounds`` runs is reported.
Targets: onnx >= 20,000 decisions/s and onnx >= ppo / 1.5.
"""

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
import torch

from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.arena import play_games, random_decks, seatings
from tarocchi_rl.rl.export import export_policy
from tarocchi_rl.variants import get_variant

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: common.py
from common import fresh_checkpoint  # noqa: E402

TARGET_RATE = 20_000
TARGET_RATIO = 1.5


class Counting:
    """An agent that counts the decisions (rows) it answers."""

    def __init__(self, agent):
        self.agent = agent
        self.decisions = 0
        self.name = getattr(agent, "name", "agent")
        self.needs_obs = getattr(agent, "needs_obs", True)
        self.needs_mask = getattr(agent, "needs_mask", True)

    def act(self, obs, mask, env, idx):
        self.decisions += len(idx)
        return self.agent.act(obs, mask, env, idx)


def one_run(variant: str, decks: np.ndarray, agents: list) -> dict:
    """Every duplicate seating of every deal with the two agents; decisions, wall and CPU seconds."""
    maps = seatings(get_variant(variant).n_players)
    per_pair = len(maps)
    chunk = max(1, 4096 // per_pair)  # as run_arena
    counted = [Counting(a) for a in agents]
    wall, cpu = time.perf_counter(), time.process_time()
    for lo in range(0, len(decks), chunk):
        d = decks[lo : lo + chunk]
        play_games(variant, np.repeat(d, per_pair, axis=0), np.tile(maps, (len(d), 1)), counted)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    n = sum(c.decisions for c in counted)
    return {"decisions": n, "wall_s": wall, "cpu_s": cpu, "per_s_wall": n / wall, "per_s_cpu": n / cpu}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoint", default=None, help="a checkpoint or run directory (default: a fresh 256x256 net)")
    ap.add_argument("--variant", default="mineo", help="with a fresh network: its variant")
    ap.add_argument("--deals", type=int, default=200, help="duplicate deals per run")
    ap.add_argument("--rounds", type=int, default=5, help="runs per agent (median reported); at least 5")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    numba.set_num_threads(1)
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        ck = Path(args.checkpoint) if args.checkpoint else fresh_checkpoint(Path(tmp) / "final.pt", args.variant)
        m = export_policy(ck, Path(tmp) / "bot", eval_deals=0, golden=64, seed=args.seed)
        variant = m["variant"]
        specs = {"onnx": f"onnx:{tmp}/bot,threads=1", "ppo": f"ppo:{ck}"}
        agents = {k: [make_agent(s, seed=1), make_agent(s, seed=2)] for k, s in specs.items()}
        decks = random_decks(variant, args.deals, args.seed, **m["options"])
        for k in specs:  # warm-up: compiled kernels loaded, onnxruntime and torch first calls
            one_run(variant, decks[:4], agents[k])
        runs: dict[str, list[dict]] = {k: [] for k in specs}
        for r in range(args.rounds):
            for k in (("onnx", "ppo") if r % 2 == 0 else ("ppo", "onnx")):
                runs[k].append(one_run(variant, decks, agents[k]))
                if not args.json:
                    x = runs[k][-1]
                    print(f"round {r + 1} {k:>4}: {x['per_s_wall']:>9,.0f} decisions/s wall, "
                          f"{x['per_s_cpu']:>9,.0f} cpu ({x['decisions']:,} decisions)", file=sys.stderr)
    med = {k: {c: statistics.median(x[c] for x in v) for c in ("per_s_wall", "per_s_cpu")} for k, v in runs.items()}
    decisions = {k: v[0]["decisions"] for k, v in runs.items()}
    ok_rate = med["onnx"]["per_s_wall"] >= TARGET_RATE
    ok_ratio = med["onnx"]["per_s_wall"] >= med["ppo"]["per_s_wall"] / TARGET_RATIO
    result = {
        "variant": variant, "network": m["network"]["hidden"], "deals": args.deals, "rounds": args.rounds,
        "decisions_per_run": decisions, "median": med,
        "ratio_onnx_over_ppo_wall": med["onnx"]["per_s_wall"] / med["ppo"]["per_s_wall"],
        "ratio_onnx_over_ppo_cpu": med["onnx"]["per_s_cpu"] / med["ppo"]["per_s_cpu"],
        "targets": {"onnx_at_least": TARGET_RATE, "onnx_at_least_ppo_over": TARGET_RATIO,
                    "met": bool(ok_rate and ok_ratio)},
        "threads": {"numba": numba.get_num_threads(), "torch": torch.get_num_threads(), "onnxruntime": 1},
        "versions": {"torch": torch.__version__, "numba": numba.__version__},
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{variant}, network {'x'.join(map(str, result['network']))}, {args.deals} duplicate deals per run, "
              f"median of {args.rounds} runs, 1 thread:")
        for k in ("onnx", "ppo"):
            print(f"  {k:>4}: {med[k]['per_s_wall']:>9,.0f} decisions/s (wall)  {med[k]['per_s_cpu']:>9,.0f} (cpu)")
        print(f"  onnx / ppo: {result['ratio_onnx_over_ppo_wall']:.2f} (wall), {result['ratio_onnx_over_ppo_cpu']:.2f} "
              f"(cpu); targets (onnx >= {TARGET_RATE:,}/s and >= ppo / {TARGET_RATIO}): "
              f"{'met' if result['targets']['met'] else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
