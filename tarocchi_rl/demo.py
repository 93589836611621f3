"""``make demo`` / ``tarocchi-rl demo``: bots play many Mineo deals on the batched core; a results table.

For now the bots are uniformly random legal players (the baselines of the arena come with the agents).
"""

import time

import numpy as np

from .batch import BatchEnv
from .core.state import BONUS, CONTRACT, DECLARER, MULT, PAYOFF, POINTS
from .variants import mineo


def run_demo(deals: int = 1000, seed: int = 0) -> str:
    warm = BatchEnv("mineo", 2, seed=seed)  # compile, or load the kernels from Numba's cache
    while not warm.all_done():
        warm.step(warm.random_actions())
    env = BatchEnv("mineo", deals, seed=seed)
    t0 = time.perf_counter()
    decisions = 0
    while not env.all_done():
        decisions += int((~env.done()).sum())
        env.step(env.random_actions())
    dt = time.perf_counter() - t0
    m = env.state.meta
    pay = m[:, PAYOFF : PAYOFF + 4]
    assert (pay.sum(axis=1) == 0).all()
    lines = [
        f"Mineo: {deals} deals played by 4 random bots on the batched core "
        f"({decisions:,} decisions in {dt * 1000:.1f} ms)",
        "",
        f"{'seat':>6} {'mean payoff':>12} {'declarer %':>11}",
    ]
    for s in range(4):
        lines.append(f"{s:>6} {pay[:, s].mean():>12.3f} {100 * (m[:, DECLARER] == s).mean():>10.1f}%")
    lines += ["", f"{'contract':>12} {'deals':>6} {'declarer side wins':>19} {'mean thirds':>12}"]
    for code, name in enumerate(mineo.CONTRACT_NAMES):
        sel = m[:, CONTRACT] == code
        if code == mineo.SOLO:
            for label, dsel in (("solo", sel & (m[:, MULT] == 1)), ("early solo", sel & (m[:, MULT] == 2))):
                lines.append(_contract_row(label, dsel, m))
            continue
        lines.append(_contract_row(name if code else "all passed", sel, m))
    lines += ["", "jochi won (share of played deals):  " + "  ".join(
        f"{name} {100 * (m[:, BONUS + j] + m[:, BONUS + 8 + j] > 0).mean():.0f}%"
        for j, name in enumerate(mineo.BONUS_NAMES)
    )]
    return "\n".join(lines)


def _contract_row(label, sel, m) -> str:
    n = int(sel.sum())
    if n == 0:
        return f"{label:>12} {0:>6}"
    if label == "all passed":
        return f"{label:>12} {n:>6}"
    decl = m[sel, DECLARER]
    won = np.take_along_axis(m[sel, PAYOFF : PAYOFF + 4], decl[:, None], 1)
    return (
        f"{label:>12} {n:>6} {100 * (won[:, 0] > 0).mean():>18.1f}% "
        f"{m[sel, POINTS].mean():>12.1f}"
    )
