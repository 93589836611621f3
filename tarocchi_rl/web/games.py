"""``tarocchi-rl games``: the games a web server stored (:mod:`~tarocchi_rl.web.store`), exported and summed up.

``export`` writes the finished games as ``tarocchi-record/1`` JSON lines, oldest first (what ``tarocchi-rl
replay`` checks and ``eval --deals-file`` deals from), each with a ``stored`` object: the game's id, its UTC
times and its seats (``{"kind": "person" | "bot", "name"}``; a person by anonymous id). ``stats`` gives, per
variant, each bot against people and each person (anonymous id) against bots: deals, mean payoff per deal with
its 95% bootstrap CI (:func:`tarocchi_rl.arena.bootstrap_ci`) and the win rate (the deals where the bot scored
more than the people at its table, ties half: for a person, more than the bots). Practice tables (the client
chose the seed, so it could know every hand) are left out unless asked for (``export --practice``); stats never
count them.

``stats`` also gives the duplicate challenges (:mod:`~tarocchi_rl.web.challenges`), per variant and challenged bot:
the deals people played (a person is a player token, :mod:`~tarocchi_rl.web.players`; a person's first start of
each deal of a challenge counts when it finished and is no practice: a deal started again, knowing the cards, does
not count, nor does a first start left unfinished), the people, the mean of (person - bot) per deal on the same cards
from the same seat with its 95% bootstrap CI, and the shares of deals the person scored more than the bot, and as
much. Every figure of one ``stats`` (and every game of one ``export``) is read from one snapshot of the database
(:meth:`~tarocchi_rl.web.store.Store.reading`): a game finishing meanwhile is in all of them or in none. The bot's
**rating against people** is the arena's (:func:`tarocchi_rl.arena.bradley_terry`, Elo scale) with people as one
opponent at 0: 400 log10 of the odds of the bot's deal wins (ties half, the arena's half pseudo-win each way), with
a 95% bootstrap CI over the deals.
"""

import datetime as dt
import json
import os
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..arena import bootstrap_ci, bradley_terry
from ..variants import VARIANTS
from .store import Store, open_store

__all__ = ["BOOTSTRAP_SEED", "challenge_rows", "counted_challenge_games", "export_games", "format_stats", "games_stats",
           "parse_since"]

BOOTSTRAP_SEED = 0  # the CIs of stats are reproducible
_RATING_BOOTSTRAP = 1000  # resamples of the deals behind a bot rating's CI


def parse_since(text: str | None) -> dt.datetime | None:
    """``--since YYYY-MM-DD`` -> midnight UTC of that day (None: no bound); ValueError naming the flag."""
    if text is None:
        return None
    try:
        day = dt.date.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"--since: expected a date YYYY-MM-DD, got {text[:40]!r}") from None
    return dt.datetime(day.year, day.month, day.day)


def _check_variant(variant: str | None) -> None:
    if variant is not None and variant not in VARIANTS:
        raise ValueError(f"--variant: unknown {variant!r} (known: {', '.join(VARIANTS)})")


def _iso(t: dt.datetime | None) -> str | None:
    return None if t is None else t.isoformat(timespec="seconds") + "Z"


def export_games(url: str, out: str, variant: str | None = None, since: str | None = None,
                 practice: bool = False) -> int:
    """Write the finished games of the database at ``url`` to ``out`` (JSON lines; written whole or not at all:
    a file beside it is renamed into place at the end); how many. Bad input is a ValueError (a StoreError for the
    database) naming it."""
    _check_variant(variant)
    start = parse_since(since)
    if os.path.isdir(out):
        raise ValueError(f"--out {out}: is a directory")
    store = open_store(url, create=False)
    part = f"{out}.part"
    n = 0
    try:
        try:
            f = open(part, "w", encoding="utf-8")
        except OSError as e:
            raise ValueError(f"--out {out}: cannot write: {e.strerror or e}") from None
        with f, store.reading() as r:  # one snapshot: every game whole, as it was when the export began
            names = r.challenge_names()
            for g in r.finished_games(variant, start, practice):
                record = dict(g["record"])
                record["stored"] = {"id": g["id"], "created": _iso(g["created"]), "finished": _iso(g["finished"]),
                                    "seats": [{"kind": s["kind"], "name": s["name"]} for s in g["seats"]]}
                if g.get("challenge") is not None:  # a challenge's deal: its key and index
                    record["stored"]["challenge"] = {"name": names.get(g["challenge"]), "key": g["challenge"],
                                                    "deal": g["challenge_deal"]}
                f.write(json.dumps(record, separators=(",", ":")) + "\n")
                n += 1
        os.replace(part, out)
    finally:
        store.close()
        if os.path.exists(part):
            os.remove(part)
    return n


def _payoffs(game: dict[str, Any]) -> list[int]:
    """The payoff of each seat: the seats' column, else the record's result."""
    seats = game["seats"]
    if seats and all(s["payoff"] is not None for s in seats):
        return [int(s["payoff"]) for s in seats]
    return [int(p) for p in ((game["record"] or {}).get("result") or {}).get("payoffs") or []]


def _tally(games: Iterable[dict[str, Any]]) -> tuple[dict[tuple[str, str], list[tuple[float, float]]],
                                                    dict[tuple[str, str], list[tuple[float, float]]]]:
    """(per (variant, bot), per (variant, person)): one (payoff, score against the other side) per deal, the
    score 1 won, 0.5 level, 0 lost; a bot in several seats of a deal counts once, its seats' mean."""
    bots: dict[tuple[str, str], list[tuple[float, float]]] = {}
    people: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for g in games:
        payoffs = _payoffs(g)
        seats = g["seats"]
        if len(payoffs) != len(seats):
            continue
        person = [payoffs[s["seat"]] for s in seats if s["kind"] == "person"]
        bot_seats: dict[str, list[int]] = {}
        for s in seats:
            if s["kind"] == "bot":
                bot_seats.setdefault(s["name"], []).append(payoffs[s["seat"]])
        if not person or not bot_seats:
            continue
        people_mean = float(np.mean(person))
        bots_mean = float(np.mean([p for ps in bot_seats.values() for p in ps]))
        for name, ps in bot_seats.items():
            mine = float(np.mean(ps))
            bots.setdefault((g["variant"], name), []).append((mine, _score(mine, people_mean)))
        for s in seats:
            if s["kind"] == "person":
                mine = float(payoffs[s["seat"]])
                people.setdefault((g["variant"], s["name"]), []).append((mine, _score(mine, bots_mean)))
    return bots, people


def _score(mine: float, theirs: float) -> float:
    return 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0


def _rows(tally: dict[tuple[str, str], list[tuple[float, float]]], who: str) -> list[dict[str, Any]]:
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    rows = []
    for (variant, name), deals in sorted(tally.items()):
        x = np.array(deals, float)
        lo, hi = bootstrap_ci(x[:, 0], rng)
        rows.append({"variant": variant, who: name, "deals": len(deals), "mean_payoff_per_deal": float(x[:, 0].mean()),
                     "ci95": [lo, hi], "win_rate": float(x[:, 1].mean())})
    return rows


def bot_rating(diff: np.ndarray) -> float:
    """The bot's Elo-scale rating against people (0), from ``diff`` (float[n]: person - bot per deal): the arena's
    Bradley-Terry on the deals each side won (ties half)."""
    bot_won = float((diff < 0).sum() + 0.5 * (diff == 0).sum())
    strength = bradley_terry(np.array([[0.0, bot_won], [len(diff) - bot_won, 0.0]]))
    return float(400 * np.log10(strength[0] / strength[1]))


def counted_challenge_games(games: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The challenge games that count (oldest first in, oldest first out): of each person's starts of a deal, the
    first (whatever its status: a deal started, then abandoned, was shown), when it finished and is no practice."""
    first: dict[tuple[str, str, int], dict[str, Any]] = {}
    for g in games:
        first.setdefault((g["person"], g["challenge"], g["deal"]), g)
    return [g for g in first.values() if g.get("status", "finished") == "finished" and not g.get("practice")
            and g["payoff"] is not None]


def challenge_rows(games: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (variant, challenged bot): deals, people, challenges, mean (person - bot) per deal with its 95% CI, the
    shares of deals won and tied by the person, the bot's rating against people (:func:`bot_rating`) with its 95%
    bootstrap CI; ``games``: :meth:`Store.challenge_games` (oldest first, every status), of which a person's first
    start of each deal counts, if it finished and is no practice (:func:`counted_challenge_games`)."""
    by_bot: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for g in counted_challenge_games(games):
        by_bot.setdefault((g["variant"], g["bot"]), []).append(g)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    rows = []
    for (variant, bot), played in sorted(by_bot.items()):
        diff = np.array([g["payoff"] - g["bot_payoff"] for g in played], float)
        lo, hi = bootstrap_ci(diff, rng)
        resampled = [bot_rating(diff[rng.integers(0, len(diff), len(diff))]) for _ in range(_RATING_BOOTSTRAP)]
        rows.append({"variant": variant, "bot": bot, "deals": len(played),
                     "people": len({g["person"] for g in played}),
                     "challenges": sorted({g["name"] for g in played}),
                     "mean_person_minus_bot": float(diff.mean()), "ci95": [lo, hi],
                     "person_beat_bot": float((diff > 0).mean()), "tied": float((diff == 0).mean()),
                     "bot_rating": bot_rating(diff),
                     "bot_rating_ci95": [float(np.quantile(resampled, 0.025)), float(np.quantile(resampled, 0.975))]})
    return rows


def games_stats(url: str) -> dict[str, Any]:
    """The stats of the database at ``url`` (module docstring): the games per status, ``bots`` and ``people``
    (one row per variant and name), ``challenges`` (one row per variant and challenged bot)."""
    store: Store = open_store(url, create=False)
    try:
        with store.reading() as r:  # one snapshot: the counts, the tallies and the challenges agree
            counts = r.counts()
            bots, people = _tally(r.finished_games(practice=False))
            challenges = challenge_rows(r.challenge_games())
    finally:
        store.close()
    return {"games": counts, "bots": _rows(bots, "bot"), "people": _rows(people, "person"),
            "challenges": challenges}


def format_stats(stats: dict[str, Any]) -> str:
    """The stats as text: the games, then a table of the bots against people and one of the people."""
    c = stats["games"]
    lines = [f"games: {c['finished']} finished, {c['abandoned']} abandoned, {c['in_progress']} in progress "
             f"({c['practice']} practice tables, left out below)"]
    for title, who in (("bots against people", "bot"), ("people (anonymous ids) against bots", "person")):
        rows = stats["bots" if who == "bot" else "people"]
        lines.append(f"{title}:" if rows else f"{title}: none")
        if not rows:
            continue
        width = max(len(who), *(len(r[who]) for r in rows))
        lines.append(f"  {'variant':<10} {who:<{width}} {'deals':>6} {'mean/deal':>10} {'95% CI':>19} {'win rate':>9}")
        for r in rows:
            lo, hi = r["ci95"]
            lines.append(f"  {r['variant']:<10} {r[who]:<{width}} {r['deals']:>6} {r['mean_payoff_per_deal']:>+10.3f} "
                         f"{f'[{lo:+.3f}, {hi:+.3f}]':>19} {100 * r['win_rate']:>8.1f}%")
    lines += _format_challenges(stats.get("challenges", []))
    return "\n".join(lines)


def _format_challenges(rows: list[dict[str, Any]]) -> list[str]:
    """The challenges' table: per challenged bot, people against it on the same deals."""
    if not rows:
        return ["challenges (people against the challenged bot on the same deals): none"]
    width = max(3, *(len(r["bot"]) for r in rows))
    lines = ["challenges (people against the challenged bot on the same deals, person - bot):",
             f"  {'variant':<10} {'bot':<{width}} {'deals':>6} {'people':>6} {'mean/deal':>10} {'95% CI':>19} "
             f"{'person won':>10} {'tied':>6} {'bot rating [95% CI]':>22}"]
    for r in rows:
        lo, hi = r["ci95"]
        lines.append(f"  {r['variant']:<10} {r['bot']:<{width}} {r['deals']:>6} {r['people']:>6} "
                     f"{r['mean_person_minus_bot']:>+10.3f} {f'[{lo:+.3f}, {hi:+.3f}]':>19} "
                     f"{100 * r['person_beat_bot']:>9.1f}% {100 * r['tied']:>5.1f}% {_rating(r):>22}")
    return lines


def _rating(row: dict[str, Any]) -> str:
    lo, hi = row["bot_rating_ci95"]
    return f"{row['bot_rating']:+.0f} [{lo:+.0f}, {hi:+.0f}]"
