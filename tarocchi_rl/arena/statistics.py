"""The arena's statistics: bootstrap confidence intervals, Bradley-Terry ratings, the tally of a run's blocks and the
auction and declarer counts of a block of games."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..core.state import CONTRACT, DECLARER, PAYOFF
from ..variants import VariantSpec


def bootstrap_ci(x: ArrayLike, rng: np.random.Generator, n_boot: int = 2000,
                 alpha: float = 0.05) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of x (float[n]): resampled deal counts drawn multinomially."""
    x = np.asarray(x, float)
    counts = rng.multinomial(len(x), np.full(len(x), 1.0 / len(x)), size=n_boot)
    means = counts @ x / len(x)
    return float(np.quantile(means, alpha / 2)), float(np.quantile(means, 1 - alpha / 2))


def bradley_terry(wins: NDArray[np.float64], iters: int = 200, prior: float = 0.5) -> NDArray[np.float64]:
    """Strengths from a pairwise win matrix (wins[i, j]: deals i beat j; ties as halves), MM algorithm.

    ``prior`` pseudo-wins each way between every pair that met keep a clean sweep finite.
    """
    k = len(wins)
    met = (wins + wins.T) > 0
    wins = wins + prior * met * (1 - np.eye(k))
    p = np.ones(k)
    games = wins + wins.T
    for _ in range(iters):
        for i in range(k):
            denom = sum(games[i, j] / (p[i] + p[j]) for j in range(k) if j != i and games[i, j] > 0)
            num = wins[i].sum()
            p[i] = max(num, 1e-9) / denom if denom > 0 else p[i]
        p /= np.exp(np.mean(np.log(p)))
    return p


Block = tuple[NDArray[np.float64], list[dict[str, Any]], list[dict[str, int]], int, float]
"""A block's result: (scores float[2, k]: A's and B's score per deal, declarer stats [A, B], bid stats [A, B],
games, seconds)."""


@dataclass
class Tally:
    """The blocks of every pair added up, for K agents on n deals."""

    score: NDArray[np.float64]  # float[K, n]: an agent's score per deal, summed over its pairings
    count: NDArray[np.float64]  # float[K]: the agent's pairings
    wins: NDArray[np.float64]  # float[K, K]: deals on which i beat j, ties counting half
    decl: list[dict[str, dict[str, int]]]  # per agent: declarer statistics per contract
    bids: list[dict[str, int]]  # per agent: auction words said
    pair_diff: dict[tuple[int, int], NDArray[np.float64]] = field(default_factory=dict)  # float[n]: A minus B
    games: int = 0
    seconds: float = 0.0  # playing the games (dealing, agents, core steps), recorded blocks included
    reused: int = 0  # blocks read from a blocks file

    @classmethod
    def empty(cls, n_agents: int, n_deals: int) -> "Tally":
        """Nothing counted yet."""
        return cls(np.zeros((n_agents, n_deals)), np.zeros(n_agents), np.zeros((n_agents, n_agents)),
                   [{} for _ in range(n_agents)], [{} for _ in range(n_agents)])

    def add_block(self, a: int, b: int, block: Block, recorded: bool) -> None:
        """Count a block's statistics, games and time for agents a and b (its scores go to :meth:`add_pair`)."""
        _, block_decl, block_bids, games, seconds = block
        for who, col in ((a, 0), (b, 1)):
            _merge_counts(self.decl[who], block_decl[col])
            _merge_counts(self.bids[who], block_bids[col])
        self.games += games
        self.seconds += seconds
        self.reused += recorded

    def add_pair(self, a: int, b: int, pair_score: NDArray[np.float64]) -> None:
        """Count the scores (float[2, n]: A's and B's per deal) of the pair (a, b), all its blocks played."""
        self.score[a] += pair_score[0]
        self.score[b] += pair_score[1]
        self.count[a] += 1
        self.count[b] += 1
        diff = self.pair_diff[a, b] = pair_score[0] - pair_score[1]
        self.wins[a, b] += (diff > 0).sum() + 0.5 * (diff == 0).sum()
        self.wins[b, a] += (diff < 0).sum() + 0.5 * (diff == 0).sum()


def agent_table(labels: Sequence[str], seed: int, tally: Tally) -> list[dict[str, Any]]:
    """One row per agent: mean score per deal (averaged over its pairings) with its bootstrap CI, win rate,
    Bradley-Terry rating (Elo scale, first agent 0), declarer and bid statistics."""
    rng = np.random.default_rng(seed)
    score = tally.score / tally.count[:, None]
    strength = bradley_terry(tally.wins)
    elo = 400 * np.log10(strength / strength[0])
    table = []
    for k, label in enumerate(labels):
        lo_ci, hi_ci = bootstrap_ci(score[k], rng)
        played = tally.wins[k].sum() + tally.wins[:, k].sum()
        table.append({
            "agent": label, "mean_payoff_per_deal": float(score[k].mean()), "ci95": [lo_ci, hi_ci],
            "win_rate": float(tally.wins[k].sum() / played) if played else None, "rating": float(elo[k]),
            "declarer": tally.decl[k], "bids": tally.bids[k],
        })
    return table


def head_to_head(labels: Sequence[str], seed: int, tally: Tally) -> list[dict[str, Any]]:
    """Per pair: A's score minus B's, mean per deal with its bootstrap CI."""
    pair_rng = np.random.default_rng([seed, 2])  # apart from the agents' CIs (which stay those of earlier runs)
    rows = []
    for (a, b), diff in tally.pair_diff.items():
        lo_ci, hi_ci = bootstrap_ci(diff, pair_rng)
        rows.append({"agents": [labels[a], labels[b]], "mean_difference_per_deal": float(diff.mean()),
                     "ci95": [lo_ci, hi_ci]})
    return rows


def head_to_head_of(result: dict[str, Any], a: str, b: str) -> tuple[float, float, float] | None:
    """Agent a's score minus agent b's in an arena result (its ``head_to_head``, either order): (mean per deal,
    CI low, CI high); None when the result has no such pair."""
    for p in result.get("head_to_head") or []:
        d, (lo, hi) = p["mean_difference_per_deal"], p["ci95"]
        if p["agents"] == [a, b]:
            return d, lo, hi
        if p["agents"] == [b, a]:
            return -d, -hi, -lo
    return None


def _merge_counts(into: dict[str, Any], more: dict[str, Any]) -> None:
    """Add the counts of ``more`` to ``into`` (nested dicts of counts: bid words, contract statistics)."""
    for key, v in more.items():
        if isinstance(v, dict):
            _merge_counts(into.setdefault(key, {}), v)
        else:
            into[key] = into.get(key, 0) + v


def bid_stats(stats: dict[str, int], meta: NDArray[np.int32], seat_agents: NDArray[np.integer[Any]], who: int,
               spec: VariantSpec) -> None:
    """How often the agent's seats said each word of each bidding round (the family's BID_ROUNDS: Mineo early
    round and auction, French bids), the last round first."""
    words = spec.rules.BID_WORDS
    n = spec.n_players
    mine = seat_agents == who
    for col, _, prefix in reversed(spec.rules.BID_ROUNDS):
        said = meta[:, col : col + n]
        for w, name in enumerate(words):
            k = int(((said == w) & mine).sum())
            if k:
                stats[prefix + name] = stats.get(prefix + name, 0) + k


def declarer_stats(stats: dict[str, dict[str, int]], meta: NDArray[np.int32],
                    seat_agents: NDArray[np.integer[Any]], who: int, spec: VariantSpec) -> None:
    """Per contract: how often the agent's seat declared, and how often the declarer's side won."""
    names = spec.rules.CONTRACT_NAMES
    if names is None:
        return
    decl = meta[:, DECLARER]
    has = decl >= 0
    rows = np.nonzero(has)[0]
    mine = seat_agents[rows, decl[rows]] == who
    for i in rows[mine]:
        c = names[meta[i, CONTRACT]]
        won = meta[i, PAYOFF + decl[i]] > 0
        e = stats.setdefault(c, {"declared": 0, "made": 0})
        e["declared"] += 1
        e["made"] += int(won)
