"""The duplicate arena: agents play the same deals with the seats rotated, so deal luck cancels.

Format. For each pair of agents (A, B) and each deal, the deal is played with every seating of
:func:`seatings`: A alone in seat s against N-1 copies of B, for every s, and B alone against copies of A
(2N games); with 4 players also every 2+2 split (6 more games: the pairwise rotations, which include team
against team in ``piedmont4``). Agents never see other hands; duplicates differ only by who sits where.

Scores. In each game an agent's payoff is the mean payoff of the seats it holds. Its score on a deal is the
mean over that deal's games (payoffs in the game's own units: Mineo jochi, Piedmontese thirds, French
marks). Reported per agent: the mean score per deal with a 95% bootstrap confidence interval over deals,
the win rate (share of deals with a positive score, ties count half), declarer statistics per contract (how
often the agent's seats said each auction word, took each contract, and how often the declarer's side won),
and a rating table
(Bradley-Terry on the pairwise deal wins, shown as Elo-scale points, 400 * log10 odds, first agent = 0). Per
pair (``head_to_head``): A's score minus B's, mean per deal with its 95% bootstrap CI (an agent's mean above is
averaged over all its pairings, so it can rank an agent below one it beats head to head).

Deals come from a seed or from a frozen deals file (``tarocchi-rl deals``, JSON lines; see README) so runs
are comparable. ``out_dir`` gets ``results.json``, ``games.jsonl`` (every game as ``tarocchi-record/1``,
replayable with ``tarocchi-rl replay``) and ``ratings.png``.
"""

from .deals import (
                    MAX_DEAL_LINE,
                    MAX_DEALS,
                    MAX_DEALS_FILE_BYTES,
                    MAX_DEALS_FILE_LINES,
                    random_decks,
                    read_deals_file,
                    seatings,
                    write_deals_file,
)
from .games import check_plays, play_games
from .report import check_out_dir, format_results, head_to_head_lines
from .runner import MAX_WORKERS, run_arena
from .statistics import bootstrap_ci, bradley_terry, head_to_head_of

__all__ = [
    "MAX_DEALS", "MAX_DEALS_FILE_BYTES", "MAX_DEALS_FILE_LINES", "MAX_DEAL_LINE", "MAX_WORKERS", "bootstrap_ci",
    "bradley_terry", "check_out_dir", "check_plays", "format_results", "head_to_head_lines", "head_to_head_of",
    "play_games", "random_decks", "read_deals_file", "run_arena", "seatings", "write_deals_file",
]
