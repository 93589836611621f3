"""Calibrate tarok's heuristic bid thresholds (variants/tarok.py HEURISTIC_BIDS_3 / _4) by forced bids.

For each positive contract (three .. solo one) the same deals are played with the forehand (seat 0, the only seat
that may bid three) forced to declare it, every other seat passing; the rest of the deal (king call, talon set,
discards, tricks) is the heuristic at every seat. Prints the forced declarer's mean return by hand strength
(``tarok.hand_strength``, buckets of 2, those with at least 30 deals); a threshold is the strength from which that
mean is above 0.

    python experiments/studies/calibrate_tarok_bids.py --variant tarok4 --deals 20000
"""

import argparse

import numpy as np

from tarocchi_rl import BatchEnv
from tarocchi_rl.core.state import HAND
from tarocchi_rl.policies.heuristic import HeuristicAgent
from tarocchi_rl.variants import tarok


def forced_returns(variant: str, deals: int, seed: int) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """(strength of seat 0's hand: int64[deals], {contract code: seat 0's returns float64[deals]})."""
    env = BatchEnv(variant, deals, seed=seed)
    decks = env.state.deck[:, : tarok.N_CARDS].copy()
    st, tb = env.state, env.tables
    strength = np.array([tarok.hand_strength(st.cards[i, HAND, 0], st.cards[i, HAND, 1], tb) for i in range(deals)])
    agent = HeuristicAgent()
    contracts = [tarok.THREE, tarok.TWO, tarok.ONE]
    if env.num_players == 4:
        contracts += [tarok.SOLO_THREE, tarok.SOLO_TWO, tarok.SOLO_ONE]
    out = {}
    for c in contracts:
        env.set_deals(decks)
        while not env.all_done():
            live = np.nonzero(~env.done())[0]
            acts = np.zeros(deals, np.int64)
            acts[live] = agent.act(None, None, env, live)
            bidding = env.legal_mask()[:, tarok.A_SPECIAL : tarok.A_SPECIAL + tarok.K_CALL].any(axis=1)  # a bid
            cur = env.current_player()
            acts[bidding & (cur == 0)] = tarok.A_SPECIAL + c
            acts[bidding & (cur != 0)] = tarok.A_SPECIAL + tarok.K_PASS
            env.step(acts)
        out[c] = env.returns()[:, 0].astype(np.float64)
    return strength, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", choices=sorted(tarok.SHAPES), default="tarok4")
    ap.add_argument("--deals", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    strength, returns = forced_returns(args.variant, args.deals, args.seed)
    print(f"{args.variant}: the forced declarer's mean return by hand strength (deals in brackets)")
    for c, r in returns.items():
        cells = []
        for lo in range(0, int(strength.max()) + 1, 2):
            k = (strength >= lo) & (strength < lo + 2)
            if k.sum() >= 30:
                cells.append(f"{lo}-{lo + 1}: {r[k].mean():+.0f} ({k.sum()})")
        print(f"  {tarok.CONTRACT_NAMES[c]:<10} " + ", ".join(cells))
    print("  strength quantiles 10/50/90 %:", np.percentile(strength, [10, 50, 90]).tolist())


if __name__ == "__main__":
    main()
