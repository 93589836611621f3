"""A table of the browser game: one deal, one or more person seats, bots in the others, and the snapshot of what
a seat may see. Pure Python on :class:`tarocchi_rl.views.Views` (the game stepped with legality checks, and what
each seat has seen): no web framework here, so that all of it is tested directly.

The bots are driven as the arena and ``tarocchi-rl play`` drive them (:func:`tarocchi_rl.play.bot_action`: the
observation and legal mask of their own seat). A decision of the human with one legal move plays itself. A
person's seat may be taken over by a bot (:meth:`Table.replace`: its moves are then ``by`` ``replacement``) and
given back (:meth:`Table.reclaim`); :attr:`Table.persons` are the seats dealt to people, whoever plays them now.

What a seat may see (:meth:`Table.snapshot`) is read from the public rows of the core (the auction, contract,
declarer, the called trump, the cards shown to all, the trick on the table, the tricks and card points won) and
from the seat's own view (:meth:`Views.view`: its hand, the cards that joined it, the monte / chien when shown,
its own discard); the sides (the partnership of a Mineo call) are shown once the seat knows them (the family's
``sides_known``). ``viewer=None`` is the open view of a finished record
(every hand, the stock, every discard): the replay.

What a table never gives away before the deal ends: its seed (from it every hand and the bots' random streams
follow; it comes with the result, :meth:`Table.result`), another seat's hidden card, a bot's legal moves. A
deal from a seed the client chose is a practice table (``practice``: the client may know every hand), marked in
its result and its record (``"practice": true``) so that nothing counts it as an evaluation.

Forced moves of people: at a table of one person, that person's forced moves (one legal action) play themselves
at once (nobody else is there to learn anything from them). At a table of several people
(:attr:`Table.hold_forced`, :mod:`~tarocchi_rl.web.shared`) :meth:`Table.advance` stops before a person's forced
move: the server plays it later (:meth:`Table.play_forced`), paced as that person's chosen moves, so that the
others can tell it from a chosen one neither by its fields (:meth:`Table.move` shows it to every other seat as
``by`` ``human``; its own seat may know, and its snapshot says ``forced``) nor by when it comes.

Timing: a slow bot (a search, an external program: ``SeatBot.clock`` set) answers a forced move (one legal
action) at once, which would tell the table that it had a single legal card. So the table paces it: a forced
move of such a bot is delivered no sooner than the median of that bot's recent searched decisions at this
server (:class:`DecisionClock`, shared by every table that seats the bot): the table adds the difference to
the delay it owes (:meth:`Table.take_pace`) and the server waits that long, asynchronously, before it
answers. The fast bots (random, heuristic, networks: about a millisecond either way) are not paced.
"""

import statistics
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..bits import check_seed, parse_seed
from ..core.phases import DISCARD, PLAY
from ..core.points import card_points
from ..core.state import (
    CALLED,
    CONTRACT,
    CUR,
    DECLARER,
    DISCARDED,
    DISCARDS_LEFT,
    HAND,
    LAST_WINNER,
    PARTNER,
    PHASE,
    SHOWN,
    SHOWN_BY,
    SIDE,
    STOCK_SHOWN,
    TRICK_LEADER,
    TRICK_NUM,
    TRICKS_WON,
    WON,
)
from ..game import Game
from ..play import bot_action, taken_cards
from ..records import describe_outcome
from ..variants import FAMILIES, VARIANTS, get_variant
from ..variants.phases import BIDDING_PHASES, DECLARATION_PHASES, PHASE_NAMES, TRICK_PHASES
from ..views import Views, core_game, split_entry
from .score_sheet import score_sheet

__all__ = ["DecisionClock", "INT_OPTION_RANGE", "STRING_CHOICES", "SeatBot", "Table", "check_options",
           "client_seed", "replay_steps", "variants_info"]

# The values a client may give a string option (the rules check them too: a test keeps both in step).
STRING_CHOICES: dict[str, tuple[str, ...]] = {k: tuple(v) for f in FAMILIES for k, v in f.STRING_OPTION_CHOICES.items()}
INT_OPTION_RANGE = (0, 99)  # integer options from a client (accuso_points): each value is a cached game
MAX_ACTION_TEXT = 64
_MAX_SEED_TEXT = 20  # digits of a seed sent as a string (seeds are below 2**63)
PACE_SAMPLES = 31  # a slow bot's typical decision time: the median of its last PACE_SAMPLES searched decisions
FIRST_PACE = 0.2  # seconds a forced move waits before the bot has searched once (the built-in search's budget)
MAX_PACE = 30.0  # seconds: the longest wait of a forced move (a table's thread is never held longer)


def check_options(variant: Any, options: Any) -> dict[str, Any]:
    """A client's variant and options, resolved (defaults filled in); ValueError naming what is wrong. Integer
    options must lie in :data:`INT_OPTION_RANGE`."""
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise ValueError(f"variant: unknown {variant!r} (known: {', '.join(VARIANTS)})")
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise ValueError("options: expected an object of option -> value")
    spec = get_variant(variant)
    lo, hi = INT_OPTION_RANGE
    for k, v in options.items():
        typ = spec.options.get(k, (None, None))[0]
        if typ is int and isinstance(v, int) and not isinstance(v, bool) and not lo <= v <= hi:
            raise ValueError(f"options: {k} must be an integer {lo}..{hi}, got {v}")
    try:
        return spec.resolve_options(options)
    except ValueError as e:
        raise ValueError(f"options: {e}") from None


def client_seed(value: Any) -> int:
    """A client's seed: an integer in [0, 2**63 - 1], or the same as a string of digits (a page keeps seeds as
    strings: JavaScript numbers round above 2**53); ValueError otherwise."""
    if isinstance(value, str):
        if not (value.isascii() and value.isdigit() and len(value) <= _MAX_SEED_TEXT):
            raise ValueError(f"seed must be an integer in [0, 2**63 - 1] (or its digits as a string), "
                             f"got {value[:_MAX_SEED_TEXT + 5]!r}")
        return parse_seed("seed", value)
    return check_seed("seed", value)


def _type_name(t: type) -> str:
    return {bool: "boolean", int: "integer", str: "string"}.get(t, t.__name__)


def variants_info() -> list[dict[str, Any]]:
    """Every variant: long name, players, options (type, default, choices), its cards (names, their labels in
    words, the suits' pattern), the action table (id -> string; ``bidding`` gives the string in a bidding phase
    where it differs, e.g. ``bid:pass``)."""
    out = []
    for name in VARIANTS:
        spec = get_variant(name)
        rules = spec.rules
        options = []
        for k, (typ, default) in spec.options.items():
            o: dict[str, Any] = {"name": k, "type": _type_name(typ), "default": default}
            if k in STRING_CHOICES:
                o["choices"] = list(STRING_CHOICES[k])
            if typ is int:
                o["minimum"], o["maximum"] = INT_OPTION_RANGE
            options.append(o)
        actions = [rules.action_to_string(a, -1) for a in range(spec.n_actions)]
        bidding = {}
        for a in range(spec.n_actions):
            for ph in BIDDING_PHASES:
                text = rules.action_to_string(a, ph)
                if text != actions[a]:
                    bidding[str(a)] = text
        out.append({
            "name": name,
            "long_name": spec.long_name,
            "players": spec.n_players,
            "hand_sizes": list(spec.hand_sizes),
            "stock_size": spec.stock_size,
            "declarer_role": spec.declarer_role,
            "bonus_unit": rules.BONUS_UNIT,
            "end_count": rules.END_COUNT_TEXT,  # what the running tally of tricks leaves to the end
            "card_point_units": rules.CARD_POINT_UNITS,
            "suits": spec.deck.suit_letters,
            "suit_system": spec.deck.suit_system,
            "cards": list(spec.deck.names),
            "card_labels": list(spec.deck.labels),
            "options": options,
            "actions": actions,
            "bidding_actions": bidding,
        })
    return out


class DecisionClock:
    """How long one slow bot's searched decisions take at this server: the median of the last
    :data:`PACE_SAMPLES` (:data:`FIRST_PACE` before the first). Thread-safe: a slow bot's moves are played in its
    queue's thread (:mod:`tarocchi_rl.web.limits`), read by the event loop that paces forced moves."""

    def __init__(self, first: float = FIRST_PACE) -> None:
        self.first = first
        self.samples: deque[float] = deque(maxlen=PACE_SAMPLES)
        self.lock = threading.Lock()

    def note(self, seconds: float) -> None:
        with self.lock:
            self.samples.append(seconds)

    def typical(self) -> float:
        """Seconds a searched decision takes, at most :data:`MAX_PACE`."""
        with self.lock:
            seconds = statistics.median(self.samples) if self.samples else self.first
        return min(seconds, MAX_PACE)


@dataclass
class SeatBot:
    """The bot of a seat: ``name`` (the server's display name for it: never a spec or a path), the agent, and
    for an agent shared between tables the lock held while it thinks (its random generator is then reseeded
    from the table's seed and the move number, so that a seeded deal plays the same). ``fast``: cheap enough to
    run on the event loop. ``clock``: set for a slow bot, whose forced moves are paced (module docstring)."""

    name: str
    agent: Any
    lock: "threading.Lock | None" = None
    fast: bool = True
    clock: DecisionClock | None = None


def _parse_entry(text: str) -> dict[str, Any]:
    """One view entry (``2:bid:pass;stock:5S,T3;+5S``, :func:`tarocchi_rl.views.split_entry`) -> seat, action and
    what the step showed."""
    seat, action, parts = split_entry(text)
    out: dict[str, Any] = {"seat": seat, "action": action}
    for key, cards in parts:
        if key == "stock":
            out["stock"] = cards
        elif key == "called":
            out["called"] = cards[0] if cards else ""
        elif key == "+":
            out["received"] = cards
        else:  # show<seat>
            out.setdefault("shown", []).append({"seat": int(key[len("show"):]), "cards": cards})
    return out


class Table:
    """One deal on :class:`Views`: ``seats[k]`` is a :class:`SeatBot` or None (a person; at least one for a
    game, none for a replay; ``human`` is the first). ``advance`` plays the bots and the people's forced moves;
    ``act`` a person's move; ``snapshot`` what a seat may see; ``take_moves`` the moves since the last call, as
    the human saw them; :meth:`moves_from` as any seat saw them.
    ``seed`` stays on the server until :meth:`result`; ``practice``: the client chose it (module docstring).
    ``step_ms[k]``: milliseconds between step k and the one before it (the deal for the first), as stored."""

    def __init__(self, game: Game, deck_ids: Sequence[int], seats: Sequence[SeatBot | None], seed: int = 0,
                 replay: bool = False, practice: bool = False) -> None:
        if len(seats) != game.num_players:
            raise ValueError(f"seats: {game.variant} has {game.num_players} seats, got {len(seats)}")
        humans = [k for k, s in enumerate(seats) if s is None]
        if not replay and not humans:
            raise ValueError("seats: at least one must be a person's")
        self.game = game
        self.views = Views(game, deck_ids)
        self.seats = list(seats)
        self.human: int | None = None if replay else humans[0]
        self.persons: tuple[int, ...] = () if replay else tuple(humans)  # the seats dealt to people
        self.seed = int(seed)
        self.practice = practice
        self.pace_owed = 0.0  # seconds of pacing owed to the client (take_pace)
        self.hold_forced = False  # several people: a person's forced move waits for play_forced (module docstring)
        self.names = game.deck.names
        self.steps: list[dict[str, Any]] = []  # per action: seat, phase, action (its true string), by, ...
        self.step_ms: list[int] = []  # per action: milliseconds since the one before it (the first: since the deal)
        self._last_step = time.monotonic()
        self.tricks: list[dict[str, Any]] = []  # completed tricks: number, leader, cards [{seat, card}], winner
        self.current: list[dict[str, str | int]] = []  # the trick on the table
        self.sent = 0  # steps already reported by take_moves
        self.auction: list[dict[str, Any]] = []  # the bidding phases' steps (public)
        self.declarations: list[dict[str, Any]] = []  # scommessa, rivanto, chelem, poignee, accuso (public)
        self.stock = self.views.state.deal()["stock"]
        self._parsed: dict[int | None, list[dict[str, Any]]] = {}

    @classmethod
    def deal(cls, variant: str, options: Mapping[str, Any] | None, seats: Sequence[SeatBot | None],
             seed: int, practice: bool = False) -> "Table":
        """A new deal from ``seed``: the deal ``tarocchi-rl play --seed SEED`` deals with the same options."""
        game = core_game(variant, check_options(variant, dict(options or {})))
        env = game.new_state(seed)._env
        return cls(game, env.state.deck[0, : game.deck.n_cards].tolist(), seats, seed, practice=practice)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "Table":
        """The open table of a record already checked by :func:`tarocchi_rl.records.replay`, every action
        applied (the steps are then in ``steps``)."""
        game = core_game(record["variant"], check_options(record["variant"], record.get("options") or {}))
        deal = record["deal"]
        ids = [game.deck.card_id(c) for hand in deal["hands"] for c in hand] + [game.deck.card_id(c)
                                                                               for c in deal["stock"]]
        return cls(game, ids, [None] * game.num_players, replay=True)

    # -- playing --------------------------------------------------------------------------------------------
    @property
    def meta(self) -> Any:
        return self.views.state._env.state.meta[0]

    def is_over(self) -> bool:
        return self.views.is_terminal()

    def needs_threads(self) -> bool:
        """Whether a bot of this table is slow (search, a loaded network): run :meth:`advance` off the loop."""
        return any(s is not None and not s.fast for s in self.seats)

    def advance(self) -> None:
        """Play the bots' moves and the human's forced ones, up to the human's next real decision or the end (with
        :attr:`hold_forced`: up to any person's decision, forced or not)."""
        v = self.views
        while not v.is_terminal():
            p = v.current_player()
            bot = self.seats[p]
            if bot is None:
                legal = v.legal_actions()
                if len(legal) != 1 or self.human is None or self.hold_forced:
                    return
                self.apply(legal[0], "forced")
                continue
            if p in self.persons:
                self.apply(self._bot_move(bot, p), "replacement", bot.name)
            else:
                self.apply(self._bot_move(bot, p), "bot")

    def held_forced(self) -> int | None:
        """The seat whose forced move waits for :meth:`play_forced` (:attr:`hold_forced`); None: no such move."""
        v = self.views
        if not self.hold_forced or v.is_terminal():
            return None
        p = v.current_player()
        return p if self.seats[p] is None and p in self.persons and len(v.legal_actions()) == 1 else None

    def play_forced(self) -> bool:
        """Play the forced move that :meth:`advance` held (``by`` ``forced``); False when there is none (the
        person played it, or the table moved on)."""
        if self.held_forced() is None:
            return False
        self.apply(self.views.legal_actions()[0], "forced")
        return True

    def replace(self, seat: int, bot: SeatBot) -> None:
        """A bot plays a person's seat from now on (the person left); :meth:`advance` then plays it."""
        if seat not in self.persons:
            raise ValueError(f"seat {seat} is not a person's")
        self.seats[seat] = bot

    def reclaim(self, seat: int) -> None:
        """The person plays their seat again (its replacement bot, if any, stands up)."""
        if seat not in self.persons:
            raise ValueError(f"seat {seat} is not a person's")
        self.seats[seat] = None

    def replaced_by(self, seat: int) -> str | None:
        """The bot playing a person's seat now (None: the person, or not a person's seat)."""
        bot = self.seats[seat]
        return bot.name if bot is not None and seat in self.persons else None

    def _bot_move(self, bot: SeatBot, seat: int) -> int:
        """The bot's move; a slow bot's forced move waits its typical decision time (module docstring)."""
        if bot.clock is None:
            return self._ask_bot(bot, seat)
        forced = len(self.views.legal_actions()) == 1
        start = time.perf_counter()
        a = self._ask_bot(bot, seat)
        took = time.perf_counter() - start
        if forced:
            self.pace_owed += max(0.0, bot.clock.typical() - took)
        else:
            bot.clock.note(took)
        return a

    def take_pace(self) -> float:
        """Seconds the answer to the client must still wait for the forced moves played since the last call
        (module docstring); the server awaits them off every thread, so a paced table holds no worker."""
        owed, self.pace_owed = self.pace_owed, 0.0
        return min(owed, MAX_PACE)

    def _ask_bot(self, bot: SeatBot, seat: int) -> int:
        who = f"seat {seat} ({bot.name})"
        if bot.lock is None:
            return bot_action(bot.agent, self.views.state, who)
        with bot.lock:
            if isinstance(getattr(bot.agent, "rng", None), np.random.Generator):
                bot.agent.rng = np.random.default_rng([self.seed, len(self.steps)])
            return bot_action(bot.agent, self.views.state, who)

    def action_id(self, action: Any) -> int:
        """An action string (``play:KC``, ``bid:pass``) or id -> its id; ValueError when it is neither."""
        n = self.game.num_actions
        if isinstance(action, str):
            if len(action) > MAX_ACTION_TEXT:
                raise ValueError(f"action: longer than {MAX_ACTION_TEXT} characters")
            try:
                return int(self.views.state.string_to_action(action))
            except ValueError as e:
                raise ValueError(f"action: {e}") from None
        if isinstance(action, int) and not isinstance(action, bool):
            if not 0 <= action < n:
                raise ValueError(f"action: id {action} out of range 0..{n - 1}")
            return action
        raise ValueError("action: expected an action string such as 'play:KC' (or its id)")

    def act(self, action: Any, seat: int | None = None) -> None:
        """A person's move (``seat``; default :attr:`human`); an unknown or illegal one is a ValueError and changes
        nothing."""
        v = self.views
        seat = self.human if seat is None else seat
        if v.is_terminal():
            raise ValueError("the deal is over: send start for a new deal")
        if seat is None or v.current_player() != seat or self.seats[seat] is not None:
            raise ValueError(f"it is seat {v.current_player()}'s turn, not yours")
        a = self.action_id(action)
        if a not in v.legal_actions():
            raise ValueError(v.illegal_message(a))
        self.apply(a, "human")

    def apply(self, a: int, by: str, bot: str | None = None) -> None:
        """Apply a legal action id and note the step (and the trick it completes); ``bot``: the name of the bot
        that played a person's seat (``by`` ``replacement``)."""
        v = self.views
        m = self.meta
        phase, seat, trick = int(m[PHASE]), int(m[CUR]), int(m[TRICK_NUM])
        text = v.action_to_string(a)
        v.apply(a)
        step: dict[str, Any] = {"seat": seat, "phase": PHASE_NAMES[phase], "action": text, "by": by}
        if bot is not None:
            step["bot"] = bot
        if phase == PLAY:
            card = text.partition(":")[2]
            step["card"], step["trick"] = card, trick
            self.current.append({"seat": seat, "card": card})
            if int(m[TRICK_NUM]) > trick:
                winner = int(m[LAST_WINNER]) if v.is_terminal() else int(m[TRICK_LEADER])
                self.tricks.append({"number": trick, "leader": self.current[0]["seat"], "cards": self.current,
                                    "winner": winner})
                self.current = []
                step["won_by"] = winner
        self.steps.append(step)
        now = time.monotonic()
        self.step_ms.append(round(1000 * (now - self._last_step)))
        self._last_step = now
        if phase in BIDDING_PHASES:
            self.auction.append({"seat": seat, "phase": step["phase"], "action": text})
        elif phase in DECLARATION_PHASES:
            self.declarations.append({"seat": seat, "phase": step["phase"], "action": text})

    # -- what a seat sees -----------------------------------------------------------------------------------
    def _entry(self, k: int, viewer: int | None) -> str:
        """Step k's view entry for ``viewer`` (None: the actor's own, which shows his discard)."""
        e = self.views.log[k + 1]
        if isinstance(e, str):
            return e
        return e[self.steps[k]["seat"] if viewer is None else viewer]

    def move(self, k: int, viewer: int | None) -> dict[str, Any]:
        """Step k as ``viewer`` saw it: seat, phase, action (``discard:?`` when face down), by (``bot`` with the
        bot's name for a person's seat played by a bot), for a card the trick and its winner when it completed
        one, and what the step showed (stock, called, shown, received: the cards that joined the viewer's hand).
        Another seat's forced move is shown as a chosen one (``by`` ``human``): only its own seat may know."""
        step = self.steps[k]
        seen = self._seen(viewer)[k]
        out = {"index": k, **step, **seen}
        if viewer is None:
            out["action"] = step["action"]
        if self.human is None:
            out.pop("by", None)
        elif out["by"] == "forced" and viewer != step["seat"]:
            out["by"] = "human"
        return out

    def _seen(self, seat: int | None) -> list[dict[str, Any]]:
        """Every step's view entry for ``seat``, parsed (kept: a snapshot reads them all)."""
        seen = self._parsed.setdefault(seat, [])
        seen += [_parse_entry(self._entry(k, seat)) for k in range(len(seen), len(self.steps))]
        return seen

    def take_moves(self) -> list[dict[str, Any]]:
        """The moves since the last call, as the human saw them."""
        out = self.moves_from(self.sent, self.human)
        self.sent = len(self.steps)
        return out

    def moves_from(self, first: int, viewer: int | None) -> list[dict[str, Any]]:
        """Moves ``first``, ``first + 1``, ... as ``viewer`` saw them."""
        return [self.move(k, viewer) for k in range(first, len(self.steps))]

    def _cards(self, w: Any) -> list[str]:
        d = self.game.deck
        return [d.names[c] for c in sorted(d.cards_of(w), key=d.sort_key)]

    def player(self, q: int) -> str | None:
        """Who sits at seat q: ``human`` (a person's seat, whoever plays it now) or the bot's name (None in a
        replay)."""
        bot = self.seats[q]
        if q in self.persons:
            return "human"
        if bot is None:
            return None if self.human is None else "human"
        return bot.name

    def snapshot(self, seat: int | None) -> dict[str, Any]:
        """What ``seat`` may see now (None: the open view of a replay: every hand, the stock, every discard)."""
        v = self.views
        s = v.state
        st, tb = s._env.state, s._env.tables
        m = st.meta[0]
        g = self.game
        spec = g.spec
        rules = spec.rules
        n = g.num_players
        done = v.is_terminal()
        phase = int(m[PHASE])
        to_act = v.current_player()
        declarer = int(m[DECLARER]) if int(m[DECLARER]) >= 0 else None
        contract_names = rules.CONTRACT_NAMES
        contract = contract_names[int(m[CONTRACT])] if contract_names and (declarer is not None or done) else None
        sides_known = declarer is not None and phase not in BIDDING_PHASES and (
            seat is None or done or bool(rules.sides_known(st, 0, seat, tb)))
        sides = None
        if sides_known:
            side_of = [int(x) for x in m[SIDE : SIDE + n]]
            sides = [[q for q in range(n) if side_of[q] == k] for k in range(max(side_of) + 1)]
        partner = int(m[PARTNER]) if sides_known and int(m[PARTNER]) >= 0 else None  # (a Mineo call's partner)

        seen = self._seen(seat)
        stock_shown = next((e["stock"] for e, step in zip(seen, self.steps, strict=True) if "stock" in e
                            and step["phase"] != "play"), None)  # (klop's talon cards, given in the play, are not)
        deal_stock = self.stock
        received = [c for e in seen for c in e.get("received", [])] if seat is not None else []
        units = rules.CARD_POINT_UNITS
        won = [int(card_points(st.cards[0, WON + q, 0], st.cards[0, WON + q, 1], tb)) for q in range(n)]
        snap: dict[str, Any] = {
            "variant": g.variant,
            "long_name": spec.long_name,
            "options": dict(g.options),
            "players": n,
            "seat": seat,
            "seats": [{"seat": q, "player": self.player(q), **({"replaced_by": self.replaced_by(q)}
                                                             if self.replaced_by(q) else {})} for q in range(n)],
            "phase": PHASE_NAMES[phase],
            "to_act": to_act,
            "your_turn": seat is not None and to_act == seat,
            "over": done,
            "steps": len(self.steps),
            "declarer_role": spec.declarer_role,
            "declarer": declarer,
            "contract": contract,
            "called": self.names[int(m[CALLED])] if int(m[CALLED]) >= 0 else None,
            "partner": partner,
            "sides": sides,
            "auction": list(self.auction),
            "declarations": list(self.declarations),
            "stock_shown": int(m[STOCK_SHOWN]) == 1,
            "stock": deal_stock if seat is None else stock_shown,
            "taken": [c for c in received if c in deal_stock] if seat is not None and seat == declarer else [],
            "discard": [st_["action"].partition(":")[2] for st_ in self.steps
                        if st_["phase"] == "discard" and (seat is None or st_["seat"] == seat)],
            "discards_left": int(m[DISCARDS_LEFT]) if phase == DISCARD else 0,
            "shown": self._cards(st.cards[0, SHOWN]),
            "shown_by": [{"seat": q, "cards": self._cards(st.cards[0, SHOWN_BY + q])} for q in range(n)
                         if st.cards[0, SHOWN_BY + q].any()],
            "trick": ({"number": int(m[TRICK_NUM]), "leader": int(self.current[0]["seat"]) if self.current
                       else int(m[TRICK_LEADER]), "cards": list(self.current)}
                      if phase in TRICK_PHASES else None),
            "last_trick": self.tricks[-1] if self.tricks else None,
            "tricks_played": len(self.tricks),
            "hand_counts": [len(g.deck.cards_of(st.cards[0, HAND + q])) for q in range(n)],  # public: face down
            "tricks_won": [int(x) for x in m[TRICKS_WON : TRICKS_WON + n]],
            "card_points": [x / units for x in won],
            "card_point_units": won,
            "side_points": [sum(won[q] for q in side) / units for side in sides] if sides else None,
        }
        if seat is None:
            snap["hands"] = [self._cards(st.cards[0, HAND + q]) for q in range(n)]
            snap["discard"] = self._cards(st.cards[0, DISCARDED]) if done else snap["discard"]
        else:
            snap["hand"] = self._cards(st.cards[0, HAND + seat])
        self._decisions(snap, seat)
        return snap

    def _decisions(self, snap: dict[str, Any], seat: int | None) -> None:
        """A snapshot's ``legal`` moves (on the seat's turn), or ``forced``: the seat's forced move that the table
        holds (its own seat knows it; the page shows it, not to click)."""
        v = self.views
        if seat is not None and seat == self.held_forced():
            snap["your_turn"] = False
            snap["forced"] = v.action_to_string(v.legal_actions()[0])
        snap["legal"] = [self._legal_entry(a) for a in v.legal_actions()] if snap["your_turn"] else []

    def _legal_entry(self, a: int) -> dict[str, Any]:
        """A legal move of the seat to act: its id and string, and for a move that takes cards of the stock lying
        face up (tarok's ``talon:1``) those cards (``cards``, :func:`tarocchi_rl.play.taken_cards`)."""
        entry: dict[str, Any] = {"id": a, "action": self.views.action_to_string(a)}
        taken = taken_cards(self.views.state, a)
        if taken:
            entry["cards"] = taken
        return entry

    # -- the end --------------------------------------------------------------------------------------------
    def result(self) -> dict[str, Any]:
        """The finished deal: outcome (payoffs, sides, card points, itemised bonuses), its lines, the score sheet
        in words (:func:`~tarocchi_rl.web.score_sheet.score_sheet`), the record (``"practice": true`` in it for a
        practice table), the seed (a string: it may exceed 2**53) and whether it was a practice table."""
        s = self.views.state
        out = s.outcome()
        record = s.to_record()
        if self.practice:
            record["practice"] = True
        return {"outcome": out, "summary": describe_outcome(out, self.game.variant), "sheet": score_sheet(s),
                "record": record,
                "annulled": not self.steps, "seed": str(self.seed), "practice": self.practice}


def replay_steps(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The open snapshots of a record checked by :func:`tarocchi_rl.records.replay`: the deal, then one per
    action with the move."""
    t = Table.from_record(record)
    out: list[dict[str, Any]] = [{"index": 0, "move": None, "table": t.snapshot(None)}]
    for k, text in enumerate(record["actions"]):
        t.apply(t.action_id(text), "record")
        out.append({"index": k + 1, "move": t.move(k, None), "table": t.snapshot(None)})
    return out
