"""``make demo`` / ``tarocchi-rl demo``: on every variant, the shipped bot (``bot:VARIANT``, ``models/``) against
the heuristic and the heuristic against random bots, in the duplicate arena, with the results table of each (mean
payoff per deal with 95% CI, win rate, rating, declarer stats). Nothing is trained: the bots are package data."""

from .agents.specs import make_agent
from .arena import format_results, run_arena
from .shipped import MODELS_DIR
from .variants import VARIANTS


def run_demo(deals: int = 1000, seed: int = 0) -> str:
    parts = []
    for variant in VARIANTS:
        if (MODELS_DIR / variant / "manifest.json").is_file():
            r = run_arena(variant, [f"bot:{variant}", "heuristic"], deals=deals, seed=seed, progress=False,
                          make_agent=make_agent)
            parts.append(format_results(r))
        else:
            parts.append(f"{variant}: no shipped bot yet (models/{variant})")
        r = run_arena(variant, ["heuristic", "random"], deals=deals, seed=seed, progress=False)
        parts.append(format_results(r))
    return "\n\n".join(parts)
