"""What each seat has seen of one game: its view, the information-state strings of the OpenSpiel adapter and of
the bot protocol (docs/bot-protocol.md).

:class:`Views` steps one core game (a single-game :class:`tarocchi_rl.game.State`, with the row kernels
``engine.is_legal`` / ``step_row`` / ``legal_mask_row``: no thread-pool launch per step) and records, one entry
per step, what every seat has seen, read from the core's rows before and after the step:

- the deal: ``hand:<his cards as dealt>`` (Mineo with ``early_solo``: the five early-round cards), with
  ``;void`` when the deal ended at once (a French petit sec);
- each action with its seat, ``<seat>:<action>``; another seat's face-down discard (a discarded card that
  did not join the cards shown to all) as ``<seat>:discard:?``;
- after a step other than a card play, what it revealed to all: ``stock:<cards>`` (the monte / chien shown;
  tarok's talon in the order dealt: ``STOCK_IN_ORDER``; after a card play, the stock's card its trick's winner
  takes face up: tarok's klop),
  ``called:<trump>``, ``show<seat>:<cards>`` (the cards a seat shows), and ``+<cards>``, the cards that joined
  his own hand.

An entry is a string (seen alike by every seat) or a tuple of one string per seat. ``info_string(p)`` joins
seat p's entries: equal exactly for the positions p cannot tell apart. The views infer nothing: what a
player can deduce from them (voids, poignée and discard facts) is the core's (its exclusion sets, used by the
exact sampler :mod:`tarocchi_rl.search.determinize`); the replay oracle ``tests/oracles/oracle_determinize.py``
checks the sampler against these views.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from tarocchi_rl import engine
from tarocchi_rl.core.phases import DONE, PLAY
from tarocchi_rl.core.state import CALLED, CUR, HAND, PAYOFF, PHASE, SHOWN, SHOWN_BY, STOCK, STOCK_SHOWN, TRICK_NUM
from tarocchi_rl.game import Game, make
from tarocchi_rl.variants.phases import PHASE_NAMES

__all__ = ["REVEAL_KINDS", "Views", "core_game", "split_entry"]

_Entry = str | tuple[str, ...]  # one step of the log: seen alike by every seat, or one string per seat
REVEAL_KINDS = ("stock", "called", "show", "+")  # the parts of an entry after its action, in the order written


def split_entry(text: str) -> tuple[int, str, list[tuple[str, list[str]]]]:
    """One view entry, ``"<seat>:<action>[;stock:..][;called:..][;show<s>:..][;+..]"`` (module docstring), split:
    (seat, action, [(part, card names)]), the part one of ``stock``, ``called``, ``show<s>``, ``+``, the names as
    written (blanks dropped). The form only: whether the seat, the action and the cards exist in a game is the
    reader's to check. A ValueError saying what is wrong otherwise."""
    head, *rest = text.strip().split(";")
    seat, colon, action = head.partition(":")
    if not colon or not seat.strip().isdigit() or not action.strip():
        raise ValueError(f"{text!r} does not start with <seat>:<action>")
    parts: list[tuple[str, list[str]]] = []
    for part in (p.strip() for p in rest):
        if part.startswith("+"):
            key, body = "+", part[1:]
        else:
            key, colon, body = part.partition(":")
            if not (colon and (key in ("stock", "called") or (key[:4] == "show" and key[4:].isdigit()))):
                raise ValueError(f"unknown part {part!r} (known: stock:, called:, show<seat>:, +)")
        parts.append((key, [n for n in (t.strip() for t in body.split(",")) if n]))
    return int(seat), action.strip(), parts


class _Layout:
    """Per core Game: card names, bit position -> dense id, sizes, a template State to clone."""

    def __init__(self, game: Game) -> None:
        self.names = game.deck.names
        self.n_cards = game.deck.n_cards
        self.n_players = game.num_players
        self.n_actions = game.num_actions
        self.rules = game.spec.rules
        self.stock_slots = slice(self.n_cards - game.spec.stock_size, self.n_cards)  # the stock's places in the deal
        self.pos: list[int] = [int(x) for x in game.deck.pos_to_card]
        self.template = game.new_state(0)

    def ids(self, w0: int, w1: int) -> int:
        """Two-word core card set -> mask over dense ids (bit c = card c)."""
        out = 0
        for base, x in ((0, w0), (64, w1)):
            while x:
                low = x & -x
                out |= 1 << self.pos[base + low.bit_length() - 1]
                x ^= low
        return out

    def text(self, ids: int) -> str:
        """Card names of a dense-id mask, in dense-id order, comma separated."""
        out: list[str] = []
        while ids:
            low = ids & -ids
            out.append(self.names[low.bit_length() - 1])
            ids ^= low
        return ",".join(out)

    def stock_text(self, ids: int, deck: Sequence[int]) -> str:
        """The stock's cards of a dense-id mask as shown: in the order dealt (``deck``: the deal's dense ids)
        where the family's ``STOCK_IN_ORDER`` says that order matters (tarok's talon sets), else by dense id."""
        if not self.rules.STOCK_IN_ORDER:
            return self.text(ids)
        return ",".join(self.names[c] for c in deck[self.stock_slots] if ids >> c & 1)


_GAMES: dict[tuple[str, tuple[tuple[str, Any], ...]], Game] = {}
_LAYOUTS: dict[int, _Layout] = {}


def core_game(variant: str, options: Mapping[str, Any] | None) -> Game:
    """One shared core Game per (variant, options)."""
    key = (variant, tuple(sorted((options or {}).items())))
    if key not in _GAMES:
        _GAMES[key] = make(variant, **dict(options or {}))
    return _GAMES[key]


def _layout(game: Game) -> _Layout:
    lay = _LAYOUTS.get(id(game))
    if lay is None or lay.template.game is not game:
        lay = _LAYOUTS[id(game)] = _Layout(game)
    return lay


class Views:
    """One game on the core, stepped with legality checks, and what each seat has seen (module docstring).

    ``state``: the core State (``history`` holds the actions); ``log``: one entry per step, the deal first;
    ``actors``: the seat of each action; ``face_down``: the indices (in ``history``) of the face-down discards;
    ``trick_of``: the trick (0-based) in which each card was played (-1: not played); ``initial_hands``: each
    seat's first hand as a dense-id mask (Mineo early round: five cards).
    """

    def __init__(self, game: Game, deck_ids: Sequence[int]) -> None:
        """The game dealt ``deck_ids`` (dense ids in deal order); a ValueError when the rules would deal it again
        (tarok: a hand without a tarok): a given deal is never silently replaced."""
        refused = game.spec.refused_hand(np.asarray([deck_ids]))
        if refused is not None:
            raise ValueError(f"deal: the hand of seat {refused[1]} {refused[2]}, which {game.variant} does not deal")
        lay = _layout(game)
        s = lay.template.clone()
        st = s._env.state
        n = lay.n_cards
        st.deck[0, :n] = np.asarray(deck_ids, dtype=np.int16)
        st.deck[0, n:] = -1
        engine.reset_row(st, 0, s._env.tables)
        s.history = []
        s.game = game
        self.game, self.lay, self.state = game, lay, s
        self.actors: list[int] = []
        self.face_down: list[int] = []
        self.trick_of: NDArray[np.int8] = np.full(n, -1, np.int8)
        rows = st.cards[0].tolist()
        self.initial_hands = tuple(lay.ids(*rows[HAND + q]) for q in range(lay.n_players))
        void = ";void" if int(st.meta[0, PHASE]) == DONE else ""
        self.log: list[_Entry] = [tuple(f"hand:{lay.text(h)}{void}" for h in self.initial_hands)]

    # -- queries ------------------------------------------------------------------------------------------
    def deck_ids(self) -> list[int]:
        """The deal as dense ids in deal order (hands by seat, then the stock)."""
        return self.state._env.state.deck[0, : self.lay.n_cards].tolist()

    def is_terminal(self) -> bool:
        return int(self.state._env.state.meta[0, PHASE]) == DONE

    def current_player(self) -> int:
        m = self.state._env.state.meta[0]
        return -1 if int(m[PHASE]) == DONE else int(m[CUR])

    def legal_actions(self) -> list[int]:
        if self.is_terminal():
            return []
        out = np.empty(self.lay.n_actions, bool)
        engine.legal_mask_row(self.state._env.state, 0, self.state._env.tables, out)
        return np.flatnonzero(out).tolist()

    def returns(self) -> list[int]:
        if not self.is_terminal():
            return [0] * self.lay.n_players
        return self.state._env.state.meta[0, PAYOFF : PAYOFF + self.lay.n_players].tolist()

    def view(self, player: int) -> list[str]:
        """The entries of ``player``'s view, one per step."""
        return [e if isinstance(e, str) else e[player] for e in self.log]

    def info_string(self, player: int) -> str:
        """``p<seat>`` and the seat's view: equal exactly for positions the seat cannot tell apart."""
        return f"p{player} " + " ".join(self.view(player))

    def action_to_string(self, action: int) -> str:
        return self.lay.rules.action_to_string(int(action), int(self.state._env.state.meta[0, PHASE]))

    def illegal_message(self, action: int) -> str:
        """The toolkit's one wording (:func:`tarocchi_rl.batch.illegal_action_message`), for the seat to act."""
        return self.state.illegal_action_message(action, f"seat {self.current_player()}")

    # -- acting -------------------------------------------------------------------------------------------
    def apply(self, action: int | np.integer[Any]) -> None:
        """Apply action id ``action``; an illegal one is a ValueError naming it and the legal ones."""
        s = self.state
        st, tb = s._env.state, s._env.tables
        m = st.meta[0]
        if int(m[PHASE]) == DONE:
            raise ValueError(f"the deal is over; action {action!r} cannot be applied")
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"an action must be an int id, got {action!r}")
        a = int(action)
        if not engine.is_legal(st, 0, a, tb):
            raise ValueError(self.illegal_message(a))
        phase, seat = int(m[PHASE]), int(m[CUR])
        lay = self.lay
        self.actors.append(seat)
        s.history.append(a)
        if phase == PLAY:  # a card play shows the card, and what its trick shows of the stock (tarok's klop)
            self.trick_of[a] = m[TRICK_NUM]
            shown = st.cards[0, SHOWN].tolist()
            engine.step_row(st, 0, a, tb)
            new = [x & ~b for x, b in zip(st.cards[0, SHOWN].tolist(), shown, strict=True)]
            gift = f";stock:{lay.text(lay.ids(*new))}" if new[0] or new[1] else ""  # (one card)
            self.log.append(f"{seat}:play:{lay.names[a]}{gift}")
            return
        text = lay.rules.action_to_string(a, phase)
        n = lay.n_players
        before = st.cards[0].tolist()
        shown0, called0 = int(m[STOCK_SHOWN]), int(m[CALLED])
        engine.step_row(st, 0, a, tb)
        after = st.cards[0].tolist()
        public: list[str] = []
        if int(m[STOCK_SHOWN]) == 1 and shown0 != 1:
            public.append("stock:" + lay.stock_text(lay.ids(*after[STOCK]), self.deck_ids()))
        if int(m[CALLED]) != called0 and int(m[CALLED]) >= 0:
            public.append("called:" + lay.names[int(m[CALLED])])
        for t in range(n):
            if after[SHOWN_BY + t] != before[SHOWN_BY + t]:
                public.append(f"show{t}:" + lay.text(lay.ids(*after[SHOWN_BY + t])))
        hidden = lay.n_cards <= a < 2 * lay.n_cards and after[SHOWN] == before[SHOWN]  # a discard not shown
        if hidden:
            self.face_down.append(len(s.history) - 1)
        entries: list[str] = []
        for q in range(n):
            parts = [f"{seat}:discard:?" if hidden and q != seat else f"{seat}:{text}"] + public
            b, x = before[HAND + q], after[HAND + q]
            new0, new1 = x[0] & ~b[0], x[1] & ~b[1]
            if new0 or new1:
                parts.append("+" + lay.text(lay.ids(new0, new1)))
            entries.append(";".join(parts))
        self.log.append(entries[0] if all(e == entries[0] for e in entries) else tuple(entries))

    def __deepcopy__(self, memo: dict[int, Any]) -> "Views":
        new = Views.__new__(Views)
        new.__dict__.update(self.__dict__)
        new.state = self.state.clone()
        new.actors = list(self.actors)
        new.face_down = list(self.face_down)
        new.trick_of = self.trick_of.copy()
        new.log = list(self.log)
        return new

    def __reduce__(self) -> tuple[Callable[..., "Views"], tuple[str, dict[str, Any], bytes, tuple[int, ...]]]:
        g = self.game
        return _replayed, (g.variant, dict(g.options), bytes(bytearray(self.deck_ids())), tuple(self.state.history))


def _replayed(variant: str, options: Mapping[str, Any], deck: bytes, history: Sequence[int]) -> Views:
    """Views of a game replayed from its deal and actions (unpickling)."""
    v = Views(core_game(variant, options), list(deck))
    for a in history:
        v.apply(a)
    return v


def seat_request(views: Views, seat: int) -> dict[str, Any]:
    """What ``seat`` knows, as the fields of a ``tarocchi-bot/1`` act request (docs/bot-protocol.md): variant,
    options, seat, hand (its cards as dealt), history (its view of every step) and decision (the phase)."""
    view = views.view(seat)
    hand = view[0].split(";")[0][len("hand:"):]
    g = views.game
    return {
        "variant": g.variant,
        "options": dict(g.options),
        "seat": int(seat),
        "hand": [c for c in hand.split(",") if c],
        "history": view[1:],
        "decision": PHASE_NAMES[int(views.state._env.state.meta[0, PHASE])],
    }
