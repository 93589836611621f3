"""``tarocchi-rl leaderboard``: every agent of a variant on the frozen deal sets, one table per variant.

The deal sets are committed (``benchmarks/deals/VARIANT.jsonl.gz``: 2,000 deals each, written by
``tarocchi-rl deals --seed 20261201``), so a table recomputed later, or by someone else, plays the very same
deals. Two arenas per variant (the duplicate arena of :mod:`tarocchi_rl.arena`: all pairs, seats rotated):

| table    | agents                                        | deals                                  |
|----------|-----------------------------------------------|----------------------------------------|
| fast     | the agents without search                     | all 2,000 of the set                   |
| search   | every agent, search agents included           | the first 500 of the same set          |

Each row: mean payoff per deal (averaged over the agent's pairings) with its 95% bootstrap CI, win rate over
the pairings' deals, the Bradley-Terry rating on the Elo scale (0 = the first agent) from all pairs, and the
declarer's success per contract. The default agents (:func:`default_agents`) are random, heuristic, ISMCTS
with random and with heuristic rollouts, and, when the variant has a shipped bot (``bot:VARIANT``; with
``--models DIR`` the one in ``DIR/VARIANT``), the exported policy, the policy composed with the heuristic by kind
of decision, and the search guided by it (``ismcts:net``: its policy the prior at every node, evaluated on a
node's second visit, and heuristic rollouts at the leaves: the settings that beat both the network and plain
ISMCTS in the README's search table).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from .arena import MAX_DEALS, read_deals_file, run_arena
from .arena.blocks import BLOCK_DEALS
from .shipped import MODELS_DIR

_SEARCH_DEALS = 500  # deals of the table that includes the search agents (the first ones of the set)
DEALS_SEED = 20261201  # the seed the committed sets were written with


def default_agents(variant: str, models_dir: str | Path | None = None) -> list[str]:
    """The agent specs of a variant's leaderboard (module docstring). The bot is ``models_dir/VARIANT`` (a
    ValueError when it holds none), by default the shipped bot (``bot:VARIANT``), left out if none is shipped."""
    agents = ["random", "heuristic", "ismcts:iterations=300,rollout=random", "ismcts:iterations=300,rollout=heuristic"]
    if models_dir is not None:
        where = Path(models_dir) / variant
        if not (where / "manifest.json").is_file():
            raise ValueError(f"--models {models_dir}: no bot for {variant} (no {where / 'manifest.json'})")
        bot = f"onnx:{where}"
    elif (MODELS_DIR / variant / "manifest.json").is_file():
        bot = f"bot:{variant}"
    else:
        return agents
    return agents + [bot, f"compose:bid=heuristic,rest={bot}", f"compose:bid={bot},rest=heuristic",
                     f"ismcts:iterations=300,net={bot},mix=1,lazy=1,rollout=heuristic"]


def is_search(spec: str) -> bool:
    """A search agent (slow: it plays only the search table)."""
    return "ismcts:" in spec


def run_leaderboard(variant: str, deals_file: str | Path, agents: Sequence[str], make_agent: Callable[..., Any],
                    search_deals: int = _SEARCH_DEALS, progress: bool = False, blocks_dir: str | Path | None = None,
                    fingerprint: Callable[[str], str] | None = None, workers: int = 1) -> dict[str, Any]:
    """Both arenas of one variant (module docstring); returns {"variant", "deals_file", "tables": {name: arena
    result}}. A set with fewer deals than ``search_deals`` plays all of them in the search table.
    ``blocks_dir``: resumable (:mod:`tarocchi_rl.arena.blocks`): the finished blocks of both tables are kept in
    ``BLOCKS_DIR/VARIANT.jsonl`` (``fingerprint``: the agents' digests) and a rerun plays only the missing ones;
    the search table then plays blocks of ``BLOCK_DEALS`` deals, the missing ones in ``workers`` processes."""
    if not 1 <= search_deals <= MAX_DEALS:
        raise ValueError(f"--search-deals must be >= 1 and <= {MAX_DEALS}, got {search_deals}")
    decks = read_deals_file(deals_file, variant)
    fast = [a for a in agents if not is_search(a)]
    resumable: dict[str, Any] = {"workers": workers}  # run_arena says when --workers lacks --blocks-dir
    if blocks_dir is not None:
        try:
            Path(blocks_dir).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ValueError(f"--blocks-dir {blocks_dir}: cannot create it ({e.strerror or e})") from None
        resumable |= {"blocks_file": Path(blocks_dir) / f"{variant}.jsonl", "fingerprint": fingerprint}
    tables: dict[str, Any] = {}
    if len(fast) >= 2:
        tables["fast"] = run_arena(variant, fast, decks=decks, progress=progress, make_agent=make_agent,
                                   **resumable)
    if any(is_search(a) for a in agents):
        tables["search"] = run_arena(variant, list(agents), decks=decks[:search_deals], progress=progress,
                                     make_agent=make_agent,
                                     batch_deals=BLOCK_DEALS if blocks_dir is not None else None,
                                     **resumable)
    return {"variant": variant, "deals_file": str(deals_file), "tables": tables}


def format_markdown(board: dict[str, Any], command: str, date: str | None = None) -> str:
    """The variant's tables as Markdown, with the command that made them and the date."""
    date = date or datetime.date.today().isoformat()
    out = [f"### {board['variant']}", "", f"`{command}` ({date}; deals: `{board['deals_file']}`)", ""]
    for name, r in board["tables"].items():
        resumed = f" (blocks recorded earlier: {r['blocks_reused']})" if r.get("blocks_reused") else ""
        out += [f"**{name}**: {r['deals']} duplicate deals, {r['games_per_deal_per_pair']} seatings per pair, "
                f"{r['games']:,} games in {r['seconds']:.0f} s{resumed}", "",
                "| agent | mean / deal [95% CI] | win rate | Elo | declarer: contract (declared, won) |",
                "|---|---|---|---|---|"]
        for t in r["table"]:
            lo, hi = t["ci95"]
            wr = f"{100 * t['win_rate']:.1f}%" if t["win_rate"] is not None else "-"
            decl = ", ".join(f"{c} ({v['declared']}, {100 * v['made'] / v['declared']:.0f}%)"
                             for c, v in sorted(t["declarer"].items())) or "-"
            out.append(f"| `{t['agent']}` | {t['mean_payoff_per_deal']:+.3f} [{lo:+.3f}, {hi:+.3f}] | {wr} | "
                       f"{t['rating']:.0f} | {decl} |")
        out.append("")
        out += head_to_head_markdown(r)
    return "\n".join(out)


def head_to_head_markdown(r: dict[str, Any]) -> list[str]:
    """An arena result's ``head_to_head`` as a matrix: the row agent's score minus the column agent's, mean per
    deal, with * where the 95% CI excludes 0 (columns numbered in the row order). Empty for results from before
    the field."""
    pairs = r.get("head_to_head")
    if not pairs:
        return []
    names = [t["agent"] for t in r["table"]]
    cell: dict[tuple[int, int], str] = {}
    for (a, b), p in zip(combinations(range(len(names)), 2), pairs, strict=True):  # the arena's pair order
        d, (lo, hi) = p["mean_difference_per_deal"], p["ci95"]
        star = "*" if lo > 0 or hi < 0 else ""
        cell[a, b], cell[b, a] = f"{d:+.3f}{star}", f"{-d:+.3f}{star}"
    out = ["Head to head: the row's score minus the column's, mean per deal (* : 95% CI excludes 0).", "",
           "| | " + " | ".join(f"{k + 1}" for k in range(len(names))) + " |",
           "|---|" + "---|" * len(names)]
    for i, a in enumerate(names):
        out.append(f"| {i + 1}. `{a}` | " + " | ".join(cell.get((i, j), "") for j in range(len(names))) + " |")
    return [*out, ""]


def write_results(board: dict[str, Any], out_dir: str | Path, command: str) -> Path:
    """``OUT/VARIANT.md`` (the tables) and ``OUT/VARIANT.json`` (the arena results, with the command and the
    date); returns the .md path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    date = datetime.date.today().isoformat()
    stamped = {"variant": board["variant"], "command": command, "date": date,
               **{k: v for k, v in board.items() if k != "variant"}}  # the results pages read command and date
    (out / f"{board['variant']}.json").write_text(json.dumps(stamped, indent=1) + "\n")
    md = out / f"{board['variant']}.md"
    md.write_text(format_markdown(board, command, date) + "\n")
    return md
