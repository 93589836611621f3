"""Random positions rebuilt from one seat's view (the bot protocol's rebuild), checked against the real game.

    python experiments/checks/check_seat_views.py [--cases mineo,mineo+early_solo=false,piedmont3,piedmont4+accuso=true,
                                            french3,french4] [--games 20] [--rate 0.3] [--seed 1]

For each case (``variant`` or ``variant+key=value/key=value``), ``--games`` random games are played with uniformly
random legal moves; at a fraction ``--rate`` of the decisions the seat to act's view is rebuilt from scratch
(:func:`tarocchi_rl.search.seat_view.rebuild`) and compared with the real game: the same view, the same observation
for that seat, the same legal actions. Prints, per case, the positions checked, the failures and the mean rebuild
time. A failure is either an error (a legal history called impossible) or a mismatch.
"""

import argparse
import time

import numpy as np

from tarocchi_rl.game import make
from tarocchi_rl.search.seat_view import ViewError, rebuild
from tarocchi_rl.views import Views, seat_request


def parse_case(text: str) -> tuple[str, dict]:
    name, _, opts = text.partition("+")
    options: dict = {}
    for kv in (x for x in opts.split("/") if x):
        k, _, v = kv.partition("=")
        options[k] = {"true": True, "false": False}.get(v, int(v) if v.isdigit() else v)
    return name, options


def check(case: str, games: int, rate: float, seed: int) -> tuple[int, int, float]:
    name, options = parse_case(case)
    g = make(name, **options)
    rng = np.random.default_rng(seed)
    checked = fails = 0
    spent = 0.0
    for _ in range(games):
        v = Views(g, g.spec.dealable_deck(rng).tolist())
        while not v.is_terminal():
            legal = v.legal_actions()
            v.apply(legal[rng.integers(len(legal))])
            if v.is_terminal() or rng.random() >= rate:
                continue
            p = v.current_player()
            req = seat_request(v, p)
            t = time.perf_counter()
            try:
                r = rebuild(g, p, req["hand"], req["history"])
            except ViewError as e:
                fails += 1
                print(f"{case}: FAIL {e}")
                continue
            spent += time.perf_counter() - t
            checked += 1
            same = (r.view(p) == v.view(p) and r.legal_actions() == v.legal_actions()
                    and np.array_equal(r.state.observation(p), v.state.observation(p)))
            if not same:
                fails += 1
                print(f"{case}: MISMATCH at {len(req['history'])} steps, seat {p}")
    return checked, fails, 1000 * spent / max(checked, 1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", default="mineo,mineo+early_solo=false,piedmont3,piedmont4+accuso=true,french3,french4")
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--rate", type=float, default=0.3)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    total = total_fails = 0
    for case in a.cases.split(","):
        n, f, ms = check(case, a.games, a.rate, a.seed)
        total, total_fails = total + n, total_fails + f
        print(f"{case}: {n} positions, {f} failures, mean rebuild {ms:.2f} ms")
    print(f"all: {total} positions, {total_fails} failures")


if __name__ == "__main__":
    main()
