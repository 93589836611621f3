"""``make demo`` / ``tarocchi-rl demo``: the heuristic bot against random bots in the duplicate arena, on every
variant, with the results table of each (mean payoff per deal with 95% CI, win rate, rating, declarer stats)."""

from .arena import format_results, run_arena
from .variants import VARIANTS


def run_demo(deals: int = 1000, seed: int = 0) -> str:
    parts = []
    for variant in VARIANTS:
        r = run_arena(variant, ["heuristic", "random"], deals=deals, seed=seed, progress=False)
        parts.append(format_results(r))
    return "\n\n".join(parts)
