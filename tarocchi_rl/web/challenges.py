"""Duplicate challenges at the server (definitions: :mod:`.challenge_defs`): a person plays the deals of a challenge
one by one at its seat, and after each deal is told their payoff beside the challenged bot's on the same cards.

**The bot's results.** The challenged bot plays every deal of a challenge offline, once, from the person's seat with
the same opponents, by the arena's machinery (:func:`tarocchi_rl.arena.play_games`, one deal at a time: a batch of
one, as at a table). That runs in one background thread: at the server's startup for every challenge (when it warms
up), else when a person first starts a deal of the challenge. With a database the results are read from it first
and written to it once computed (``challenge_results``, by the challenge's key): a restarted server does not play
them again.

**The same deal.** A person's table of deal k has the challenge's deck, the person at the challenge's seat and the
opponents' bots built from the same specs with the same seeds (:meth:`Challenge.deal_seed`) as offline. The
opponents play deterministically (the heuristic, greedy networks: checked when a file is loaded), so "the same"
means: had the person played, at each of their decisions, the move the bot played there, every opponent would have
answered as it did offline, and the person would have scored exactly the bot's payoff (a test plays the bot's moves
at the table and checks this). The person's forced moves (one legal move) are played for them, as for the bot.

**The messages.** ``GET /v1/challenges`` lists them; over ``/ws``, ``{"type": "challenge", "name", "deal",
"player"?}`` starts deal ``deal`` (0-based) of a challenge (replacing the connection's deal, as ``start`` does);
``player`` is the player token the server gave the page (:mod:`~tarocchi_rl.web.players`: 8-40 letters, digits,
``-``, ``_`` are accepted; anything but a token of this server's counts as none, and a new one is given within the
address's budget), under which the game is stored, so that ``games stats`` counts people, not connections. Every
``state`` of the table carries ``challenge: {name, deal, deals, seat, bot, counted, player?, why?}`` (``counted``
false: practice, ``why`` says why; ``player``: the token, for the page to keep); ``over`` adds ``you`` (the person's
payoff), ``bot_payoff``, ``difference`` (you - bot) and ``bot_record`` (the deal as the bot played it). A
challenge's first deal for a person is no practice table: the client does not know the deal before it is dealt (the
built-ins' deals are public in the repository's frozen sets, though: a challenge proves nothing against a person who
looks them up); a deal started again, on the same connection or under the same token, is practice.
"""

import asyncio
import logging
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from ..arena import play_games
from ..play import bot_seeds, make_bot
from ..views import core_game
from .challenge_defs import Challenge, builtin_challenges, load_challenges
from .players import Admission, PlayerTokens
from .store import ChallengeResult, StoreError, utc_now
from .table import SeatBot, Table
from .writer import StoreWriter

__all__ = ["BotDeal", "ChallengeTable", "Challenges", "PLAYER", "play_offline"]

PLAYER = re.compile(r"[A-Za-z0-9_-]{8,40}")  # a message's player (a token of players.py, or an older page's id)
log = logging.getLogger("tarocchi_rl.web")


@dataclass(frozen=True)
class BotDeal:
    """The challenged bot on one deal: its seat's payoff and the record of the deal as it played it."""

    payoff: int
    record: dict[str, Any]


class ChallengeTable(Table):
    """A table dealt a challenge's deal: the challenge, the deal's index, the person's stored id, how the deal counts
    (:class:`~tarocchi_rl.web.players.Admission`), the connection it was started on and whether it was shown yet."""

    challenge: Challenge
    challenge_key: str
    challenge_deal: int
    person_id: str
    admission: Admission
    conn: Any = None
    shown: bool = False


def _agents(ch: Challenge, seeds: list[int], bot_seed: int) -> tuple[list[Any], np.ndarray]:
    """The agents of an offline deal (0: the challenged bot at the person's seat, then one per opponent seat) and
    int[1, N] the agent of each seat."""
    agents: list[Any] = [make_bot(ch.bot.spec, bot_seed, f"challenge {ch.name}: bot")]
    seat_agents = np.zeros((1, len(ch.opponents)), np.int64)
    for k, b in enumerate(ch.opponents):
        if b is not None:
            seat_agents[0, k] = len(agents)
            agents.append(make_bot(b.spec, seeds[k], b.name))
    return agents, seat_agents


def play_offline(ch: Challenge, deals: list[int] | None = None) -> dict[int, BotDeal]:
    """The challenged bot's result on each deal (default: all), played as the arena plays (a batch of one deal)."""
    out: dict[int, BotDeal] = {}
    for k in range(ch.deals) if deals is None else deals:
        seed = ch.deal_seed(k)
        agents, seat_agents = _agents(ch, bot_seeds(seed, len(ch.opponents)), seed)
        try:
            payoffs, _, records = play_games(ch.variant, ch.decks[k : k + 1], seat_agents, agents, ch.options,
                                             record=True)
        finally:
            for a in agents:
                close = getattr(a, "close", None)
                if callable(close):
                    close()
        assert records is not None
        out[k] = BotDeal(int(payoffs[0, ch.seat]), records[0])
    return out


@cache
def _builtins() -> tuple[Challenge, ...]:
    return tuple(builtin_challenges())


class Challenges:
    """The server's challenges by name, their bot results (computed in one background thread, read from and written
    to the database), the opponents shared by the tables (built once, under a lock each)."""

    def __init__(self, file: str | None = None, builtin: bool = True) -> None:
        base = list(_builtins()) if builtin else []
        more = load_challenges(file, [c.name for c in base]) if file else []
        self.by_name = {c.name: c for c in base + more}
        self.writer: StoreWriter | None = None
        self._results: dict[str, Future[dict[int, BotDeal]]] = {}
        self._opponents: dict[tuple[str, str], tuple[Any, threading.Lock]] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self.players = PlayerTokens()  # who plays (players.py): its key from the database when there is one

    def info(self) -> list[dict[str, Any]]:
        return [c.info() for c in self.by_name.values()]

    def attach(self, writer: StoreWriter | None) -> None:
        """The games' database (the app's startup): results are read from it and written to it, and the player
        tokens are signed with its key (the same for every process serving it, and after a restart)."""
        self.writer = writer
        if writer is not None:
            try:
                self.players.key = writer.store.secret()
            except StoreError as e:
                log.error("the player tokens' key could not be read (%s): this process signs its own", e)

    def prepare_all(self) -> None:
        """Compute (or read) every challenge's bot results in the background."""
        for ch in self.by_name.values():
            self.results(ch)

    def results(self, ch: Challenge) -> "Future[dict[int, BotDeal]]":
        """The future of a challenge's bot results (started on the first call)."""
        with self._lock:
            fut = self._results.get(ch.key)
            if fut is None:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(1, thread_name_prefix="tarocchi-challenges")
                fut = self._results[ch.key] = self._pool.submit(self._compute, ch)
            return fut

    def _compute(self, ch: Challenge) -> dict[int, BotDeal]:
        have: dict[int, BotDeal] = {}
        writer = self.writer
        if writer is not None:
            try:
                have = {k: BotDeal(p, r) for k, (p, r) in writer.store.challenge_results(ch.key).items()
                        if 0 <= k < ch.deals}
            except StoreError as e:
                log.error("challenge %s: its stored bot results could not be read (%s): played again", ch.name, e)
        missing = [k for k in range(ch.deals) if k not in have]
        if missing:
            log.info("challenge %s: the bot %s plays %d deals offline", ch.name, ch.bot.name, len(missing))
            played = play_offline(ch, missing)
            if writer is not None:
                for k, d in played.items():
                    writer.put(ChallengeResult(ch.key, k, ch.name, ch.variant, ch.bot.name, ch.seat, d.payoff,
                                               d.record, utc_now()))
            have.update(played)
        return have

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    # -- the tables --------------------------------------------------------------------------------------------
    def _opponent(self, ch: Challenge, seat: int, seed: int) -> SeatBot:
        """The opponent of a seat: built once per (spec, variant) and shared under its lock (it is deterministic:
        its seed does not change its moves)."""
        b = ch.opponents[seat]
        assert b is not None
        with self._lock:
            shared = self._opponents.get((b.spec, ch.variant))
            if shared is None:
                shared = self._opponents[(b.spec, ch.variant)] = (make_bot(b.spec, seed, b.name), threading.Lock())
        return SeatBot(b.name, shared[0], shared[1])

    def table(self, msg: dict[str, Any], client: str = "", conn: Any = None) -> ChallengeTable:
        """The table of a ``challenge`` message (ValueError naming what is wrong) from ``client`` (its address) on
        connection ``conn`` (a key for what it started: :meth:`PlayerTokens.admit`); its bot results are started."""
        name = msg.get("name")
        ch = self.by_name.get(name) if isinstance(name, str) else None
        if ch is None:
            known = ", ".join(list(self.by_name)[:20]) or "none"
            raise ValueError(f"name: no challenge {str(name)[:40]!r} (this server offers: {known})")
        deal = msg.get("deal")
        if not isinstance(deal, int) or isinstance(deal, bool) or not 0 <= deal < ch.deals:
            raise ValueError(f"deal: challenge {ch.name} has deals 0..{ch.deals - 1}, got {str(deal)[:40]!r}")
        player = msg.get("player")
        if player is not None and not (isinstance(player, str) and PLAYER.fullmatch(player)):
            raise ValueError("player: 8-40 letters, digits, - and _ (the player token the server gave), or left out")
        seed = ch.deal_seed(deal)
        seeds = bot_seeds(seed, len(ch.opponents))
        seats = [None if b is None else self._opponent(ch, k, seeds[k]) for k, b in enumerate(ch.opponents)]
        game = core_game(ch.variant, ch.options)
        table = ChallengeTable(game, ch.decks[deal].tolist(), seats, seed)
        table.challenge, table.challenge_key, table.challenge_deal = ch, ch.key, deal
        table.admission = self.players.admit(player, client, conn, (ch.key, deal))
        table.person_id, table.practice, table.conn = table.admission.person, not table.admission.counted, conn
        self.results(ch)
        return table

    async def annotate(self, table: Table, out: dict[str, Any]) -> dict[str, Any]:
        """A challenge table's answer with its ``challenge`` object (module docstring); at ``over`` it waits for
        the bot's result on the deal."""
        if not isinstance(table, ChallengeTable) or out.get("type") not in ("state", "over"):
            return out
        ch, k, admission = table.challenge, table.challenge_deal, table.admission
        if not table.shown:  # the deal is shown: started, for the connection and the token
            table.shown = True
            self.players.started(admission, table.conn, (table.challenge_key, k))
        info: dict[str, Any] = {"name": ch.name, "deal": k, "deals": ch.deals, "seat": ch.seat, "bot": ch.bot.name,
                                "counted": admission.counted}
        if admission.token is not None:
            info["player"] = admission.token
        if admission.why is not None:
            info["why"] = admission.why
        if out["type"] == "over":
            try:
                bot = (await asyncio.wrap_future(self.results(ch)))[k]
            except Exception:
                log.exception("challenge %s: the bot's results could not be computed", ch.name)
                info["error"] = "the bot's result on this deal could not be computed"
            else:
                you = int(out["record"]["result"]["payoffs"][ch.seat])
                info.update(you=you, bot_payoff=bot.payoff, difference=you - bot.payoff, bot_record=bot.record)
        out["challenge"] = info
        return out
