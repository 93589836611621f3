"""Where do the search's samplers put the cards a seat cannot see? The uniform determinizer, the one weighted by a
belief model, and the oracle bounds, measured on the same positions (issue 31: what learned inference knows).

    .venv/bin/python experiments/studies/belief_sampler.py --variant french4 --belief bot:french4 --deals 100 \\
        [--players heuristic] [--every 3] [--draws 64] [--oracle 0.35,0.5,0.7] [--seed 0] [--json out.json]

Deals are dealt from ``--seed`` and played by ``--players`` (an agent spec, every seat: ``heuristic``, or e.g.
``ismcts:time=0.002,rollout=heuristic`` for the positions of ``learned_inference.py``). At every ``--every``-th
decision of each game, the deciding seat's position is determinized ``--draws`` times by each sampler
(:func:`tarocchi_rl.search.inference.determinize_weighted`, the exact method, as the search draws them):

- ``uniform``: the uniform law over the deals the seat cannot tell from the true one (plain ISMCTS's);
- ``learned``: weighted by the belief model ``--belief`` (``belief=`` of the ismcts agent: a bot directory,
  ``bot:VARIANT`` or a checkpoint with a belief head);
- ``oracle:P``: weighted by a cheat that reads the true deal (P on each unseen card's true location, the rest
  spread evenly): not a player, the samplers that ``learned_inference.py --oracle P`` plays.

Reported per sampler: **placed**, the share of the seat's unseen cards a draw puts at their true location (mean
over draws, cards and positions, with its standard error over positions), and its gain over ``uniform`` on the
same positions; for ``learned`` also the model's own marginals (**model top-1**: the share of unseen cards whose
most probable location is the true one, and the mean negative log-likelihood of the true location). Prints (and
with ``--json`` writes) one JSON object.
"""

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from tarocchi_rl import engine
from tarocchi_rl.agents.ismcts import load_belief
from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.batch import BatchEnv
from tarocchi_rl.policies.belief import belief_shape, belief_targets, locations_of
from tarocchi_rl.search.inference import DEFAULT_BELIEF_SAMPLES, determinize_weighted, uniform_beliefs
from tarocchi_rl.variants import VARIANTS, get_variant

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: common.py
from common import bounded_int, today_utc  # noqa: E402

MAX_DEALS = 10_000
MAX_DRAWS = 1024
UNIFORM, LEARNED = "uniform", "learned"


def oracle_probs(targets: NDArray[np.int64], n_loc: int, peak: float) -> NDArray[np.float32]:
    """float32[C, L]: ``peak`` on each unseen card's true location (``targets`` int64[C], -1 for a seen card), the
    rest of its mass spread over the other locations."""
    probs = np.full((len(targets), n_loc), (1 - peak) / (n_loc - 1), np.float32)
    unseen = np.nonzero(targets >= 0)[0]
    probs[unseen, targets[unseen]] = peak
    return probs


def placed_share(env: BatchEnv, game: int, seat: int, probs: NDArray[np.float32], targets: NDArray[np.int64],
                 draws: int, seed: int) -> float:
    """The share of the unseen cards (``targets`` >= 0) that ``draws`` exact weighted determinizations of ``game``
    for ``seat`` put at their true location (mean over draws and cards)."""
    dst = determinize_weighted(env.state, game, seat, env.tables, probs, DEFAULT_BELIEF_SAMPLES, draws, seed=seed,
                               method="exact")
    hidden = engine.observe_privileged(dst, env.tables, np.full(draws, seat, np.int64))
    spec = env.spec
    where = locations_of(hidden, spec.n_players, spec.deck.n_cards)  # [draws, C]
    unseen = targets >= 0
    return float((where[:, unseen] == targets[unseen][None]).mean())


def measure(variant: str, belief: str, players: str, deals: int, every: int, draws: int,
            peaks: list[float], seed: int) -> dict[str, Any]:
    """Play the deals; per sampler the placed share of each measured position (module docstring)."""
    spec = get_variant(variant)
    _, n_loc = belief_shape(spec)
    model = load_belief(belief)
    if model is None:
        raise ValueError("--belief uniform has nothing to measure: name a belief model")
    names = [UNIFORM, LEARNED, *(f"oracle:{p:g}" for p in peaks)]
    placed: dict[str, list[float]] = {n: [] for n in names}
    marg_top1, marg_nll, n_cards = 0.0, 0.0, 0
    uniform = uniform_beliefs(1, spec.n_players, spec.deck.n_cards)[0]
    env = BatchEnv(variant, deals, seed=seed)
    actor = make_agent(players, seed=seed)
    rows = np.arange(deals)
    step = 0
    while not env.all_done():
        cur = env.current_player().astype(np.int64)
        live = np.nonzero(cur >= 0)[0]
        obs, mask = env.observe(), env.legal_mask()
        if step % every == 0:
            hidden = engine.observe_privileged(env.state, env.tables, cur)
            targets = belief_targets(obs[live], hidden[live], spec)
            learned = model.beliefs(obs[live])
            for j, g in enumerate(live):
                t = targets[j]
                unseen = np.nonzero(t >= 0)[0]
                if len(unseen) == 0:
                    continue
                p_true = learned[j][unseen, t[unseen]]
                marg_top1 += float((learned[j][unseen].argmax(axis=1) == t[unseen]).sum())
                marg_nll += float(-np.log(np.maximum(p_true, 1e-12)).sum())
                n_cards += len(unseen)
                laws = {UNIFORM: uniform, LEARNED: learned[j],
                        **{f"oracle:{p:g}": oracle_probs(t, n_loc, p) for p in peaks}}
                draw_seed = seed * 1_000_003 + step * 4099 + int(g)  # the same stream for every sampler
                for name, probs in laws.items():
                    placed[name].append(placed_share(env, int(g), int(cur[g]), probs, t, draws, draw_seed))
        actions = np.full(deals, -1, np.int64)
        actions[live] = actor.act(obs[live], mask[live], env, rows[live])
        env.step(actions)
        step += 1
    base = np.array(placed[UNIFORM])
    samplers = {}
    for name in names:
        x = np.array(placed[name])
        gain = x - base
        samplers[name] = {"placed": float(x.mean()), "placed_se": float(x.std(ddof=1) / np.sqrt(len(x))),
                          "gain_over_uniform": float(gain.mean()),
                          "gain_se": float(gain.std(ddof=1) / np.sqrt(len(x)))}
    return {"positions": len(base), "unseen_cards": n_cards, "samplers": samplers,
            "model_marginals": {"top1": marg_top1 / max(n_cards, 1), "nll": marg_nll / max(n_cards, 1)}}


def _peaks(text: str) -> list[float]:
    try:
        peaks = [float(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--oracle: comma-separated numbers in (0, 1), got {text!r}") from None
    if any(not 0 < p < 1 for p in peaks):
        raise argparse.ArgumentTypeError(f"--oracle: every peak must be in (0, 1), got {text!r}")
    return peaks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", required=True, choices=sorted(VARIANTS))
    ap.add_argument("--belief", required=True, help="the belief model: a bot dir, bot:VARIANT, a checkpoint")
    ap.add_argument("--players", default="heuristic", help="the agent spec playing every seat")
    ap.add_argument("--deals", type=bounded_int("--deals", 1, MAX_DEALS), default=100)
    ap.add_argument("--every", type=bounded_int("--every", 1, 1000), default=3, help="measure every k-th decision")
    ap.add_argument("--draws", type=bounded_int("--draws", 1, MAX_DRAWS), default=64, help="draws per sampler")
    ap.add_argument("--oracle", type=_peaks, default=[0.35, 0.5, 0.7], help="oracle peaks, comma-separated")
    ap.add_argument("--seed", type=bounded_int("--seed", 0, 2**31), default=0)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.json is not None and not args.json.parent.is_dir():
        raise SystemExit(f"belief_sampler: {args.json}: the directory {args.json.parent} does not exist")
    t0 = time.perf_counter()
    try:
        measured = measure(args.variant, args.belief, args.players, args.deals, args.every, args.draws,
                           args.oracle, args.seed)
    except ValueError as e:
        raise SystemExit(f"belief_sampler: {' '.join(str(e).split())[:300]}") from None
    result = {"variant": args.variant, "belief": args.belief, "players": args.players, "deals": args.deals,
              "every": args.every, "draws": args.draws, "seed": args.seed, "date": today_utc(),
              **measured, "seconds": round(time.perf_counter() - t0, 1), "command": " ".join(sys.argv)}
    print(json.dumps(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
