"""The arena's outputs: the output directory checked before any game, results.json, games.jsonl and ratings.png
written there, the progress bar, and the results as text."""

import json
import os
import sys
from typing import Any

import numpy as np


def check_out_dir(out_dir: str | os.PathLike[str]) -> None:
    """``out_dir`` can take the arena's outputs: an existing directory, or a new one whose nearest existing
    ancestor is a writable directory (a ValueError naming the path otherwise). Creates nothing."""
    where = os.fspath(out_dir)
    if os.path.exists(out_dir):
        if not os.path.isdir(out_dir):
            raise ValueError(f"output directory {where}: exists and is not a directory")
        if not os.access(out_dir, os.W_OK):
            raise ValueError(f"output directory {where}: the directory is not writable")
        return
    parent = os.path.dirname(os.path.abspath(out_dir))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise ValueError(f"output directory {where}: {parent} is not a directory")
    if not os.access(parent, os.W_OK):
        raise ValueError(f"output directory {where}: cannot create it in {parent} (not writable)")


def write_outputs(out_dir: str | os.PathLike[str], results: dict[str, Any], records: list[dict[str, Any]]) -> None:
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "results.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(out_dir, "games.jsonl"), "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = results["table"]
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.5))
    names = [r["agent"] for r in t]
    means = [r["mean_payoff_per_deal"] for r in t]
    err = np.array([[m - r["ci95"][0], r["ci95"][1] - m] for m, r in zip(means, t, strict=True)]).T
    ax[0].bar(names, means, yerr=err, capsize=6, color="#4c72b0")
    ax[0].axhline(0, color="black", lw=0.8)
    ax[0].set_title(f"{results['variant']}: mean payoff per deal (95% CI)")
    ax[1].bar(names, [r["rating"] for r in t], color="#dd8452")
    ax[1].set_title("rating (Bradley-Terry, Elo scale)")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "ratings.png"), dpi=100)
    plt.close(fig)


class Progress:
    def __init__(self, total: int, enabled: bool) -> None:
        self.bar: Any = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="game", file=sys.stderr, leave=False)
        self.last = 0

    def update(self, done: int) -> None:
        if self.bar is not None and done > self.last:
            self.bar.update(done - self.last)
            self.last = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def format_results(r: dict[str, Any]) -> str:
    """An arena result as text (``tarocchi-rl eval``): each agent's mean per deal, win rate and rating, its bids and
    contracts, then every pair head to head (:func:`head_to_head_lines`)."""
    lines = [
        f"{r['variant']}: {r['deals']} duplicate deals x {r['games_per_deal_per_pair']} seatings per pair "
        f"({r['games']} games in {r['seconds']:.2f} s: {r['deals_per_s']:,.0f} duplicate deals/s, "
        f"{r['games_per_s']:,.0f} games/s)",
        f"{'agent':>12} {'mean payoff/deal':>17} {'95% CI':>22} {'win rate':>9} {'rating':>7}",
    ]
    for t in r["table"]:
        lo, hi = t["ci95"]
        wr = f"{100 * t['win_rate']:.1f}%" if t["win_rate"] is not None else "-"
        lines.append(f"{t['agent']:>12} {t['mean_payoff_per_deal']:>17.3f} {f'[{lo:.3f}, {hi:.3f}]':>22} "
                     f"{wr:>9} {t['rating']:>7.0f}")
    for t in r["table"]:
        if t.get("bids"):
            lines.append(f"  {t['agent']} bids: " + ", ".join(f"{w} {c}" for w, c in t["bids"].items()))
        if t["declarer"]:
            parts = [f"{c}: {v['declared']} ({100 * v['made'] / v['declared']:.0f}% won)"
                     for c, v in sorted(t["declarer"].items())]
            lines.append(f"  {t['agent']} as declarer: " + ", ".join(parts))
    return "\n".join(lines + head_to_head_lines(r))


def head_to_head_lines(r: dict[str, Any]) -> list[str]:
    """Every pair of an arena result head to head (the first agent's score minus the second's, mean per deal, with
    its 95% CI: the figure the README and the leaderboard quote), as lines of text; none for a result without it."""
    pairs = r.get("head_to_head") or []
    lines = ["head to head: the first agent's score minus the second's, mean per deal [95% CI]"] if pairs else []
    for p in pairs:
        (a, b), (lo, hi) = p["agents"], p["ci95"]
        lines.append(f"  {a} - {b}: {p['mean_difference_per_deal']:+.3f} [{lo:+.3f}, {hi:+.3f}]")
    return lines
