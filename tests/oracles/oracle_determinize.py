"""Oracle of determinization: the replay-based sampler, kept under tests/ to cross-check the exact one.

The library determinizes with the exact, uniform sampler over the core's batch state
(:mod:`tarocchi_rl.search.determinize`: the public inferences are the core's exclusion sets, kept by the
kernels; OpenSpiel's ``resample_from_infostate`` uses it too). This module is written apart from it: it derives
what a player knows by replaying the history and reading the trick rules, poignées, accusi and discards
itself, and it accepts a deal only if replaying the history on it shows the player exactly what he saw. The
tests use it both ways: every deal the exact sampler draws must be accepted here (``Proposal.accept``), and
the constraints of both must agree (``Proposal.allowed`` / ``piles``). It is slow and only approximately
uniform (below); it is not used by the library.

``sample_deal(state, player, rng)`` returns a new :class:`~tarocchi_rl.game.State` whose deal is random but
indistinguishable, for ``player``, from the true one: the same action history has been replayed on it, every
action was legal, and after every step ``player`` saw exactly what he saw in the real game. (The one part of
the history that changes: another seat's face-down discards, which name cards ``player`` never saw; they
discard the cards of the resampled face-down discard instead.)

What a player sees (:class:`Tracker`): his own cards as dealt (Mineo with ``early_solo``: the five early-round
cards, then the other ten), every action with its seat (the declarer's face-down discards appear as
``discard:?`` to the others; a discarded trump is shown), the cards revealed to all (monte / chien, tarok's
talon in the order dealt, the called trump, poignée and accuso cards) and the cards that join his own hand (the
monte he takes). His *view* is that sequence of tokens, one entry per step; ``Tracker.info_string(p)`` joins it
into a string, the
same as the OpenSpiel adapter's information-state string (``tarocchi_rl.views``, written apart:
the tests compare them). Two positions are indistinguishable for p exactly when their views are equal.

The sampler: propose, replay, accept.

1. **Proposal.** Replay the true game once and collect, from public information and p's own cards only:
   the cards whose location p knows (his hand, played cards, shown discards, his own discard, the stock he
   took); the *unknown* cards; the *piles* they fill, with sizes known to all (each other seat's current
   hand, the declarer's face-down discard, an unseen stock); and per-card constraints:

   - voids: a seat that did not follow suit holds none of that suit; one that neither followed nor trumped
     holds no trump; French "must overtrump": one that played a trump below the best trump in the trick
     holds no trump above it (EX, playable at any time, tells nothing);
   - shown cards pinned to their owner (poignée, accuso; Mineo: T20 and EX after a scommessa, every trump
     above the called one to the caller, who does not hold the called trump, nor does a seat that said
     rivanto); a poignée shows the lowest trumps (so no unshown lower trump), a poignée with EX or an accuso
     of >= 10 trumps shows all his trumps; a shown monte / chien is in the declarer's hand or discard (tarok:
     the talon set he took; the talon's rest lies face up, known, as are the cards given out of the stock in
     the card play: klop's gifts);
   - the face-down discard holds only cards that may be discarded face down (no trump, King, EX, ...);
   - counts: a trump discarded face up proves the declarer then held fewer discardable cards than discards
     left (an upper bound on those cards in his hand); an accuso of the honours alone, fewer than 10 trumps.
     An upper bound "at most K of category S in pile P" is made a per-card constraint by splitting P into
     a pile of K places open to every card and one of |P| - K places closed to S.

   The unknown cards are then placed one at a time, most constrained first, each in an allowed pile drawn
   with probability proportional to its free places (a plain random deal when nothing is constrained);
   before committing a choice, Hall's condition (for every set of piles, the cards that may only go there
   fit) is checked, so the proposal never dead-ends.

2. **Deal.** Each seat's dealt hand is rebuilt as current hand + cards he played (+ the declarer's discard
   - the stock he took). p's own hand and every stock p has seen keep their true deal order; the other
   hands are shuffled (Mineo: their early-round five are any five of their fifteen; Piedmontese: which three
   of the dealer's cards were the stock is random unless he is p). The face-down discards of the history
   are rewritten to discard the proposed face-down cards, in random order. During the Mineo early round p
   knows only his first five cards: everything else is re-dealt at random.

3. **Accept.** Replay the history on the new deal; accept only if every action is legal and p's view after
   every step equals the true one (this also enforces what the proposal does not model, e.g. "no petit sec
   was dealt" in French). Otherwise propose again; after ``max_tries`` failures, RuntimeError.

The proposal is only approximately uniform over the consistent deals (sequential placement, and the
capacity split favours fewer capped cards); acceptance makes every sample exactly consistent, and every
consistent deal has positive probability: the constraints are necessary conditions computed from what p
knows only, so every deal p cannot tell from the true one satisfies them (the true one included: tested),
and sequential placement can produce every assignment that satisfies them. In random play nearly every
proposal is accepted (about 0.6 ms a sample).

Implementation note: replays step one game with the core's row kernels
(``engine.is_legal`` / ``step_row`` / ``legal_mask_row``) on the BatchState of a single-game
:class:`~tarocchi_rl.game.State` (``state._env``), avoiding the thread-pool launch of the batched drivers;
the State stays a valid core State (its ``history`` is kept).
"""

from collections import OrderedDict

import numpy as np

from tarocchi_rl import engine
from tarocchi_rl.cards import FOOL, TRUMP
from tarocchi_rl.core.phases import DISCARD, DONE, PLAY
from tarocchi_rl.core.state import (
    BEST_BIT,
    BEST_TRUMP,
    CALLED,
    CONTRACT,
    CUR,
    DECLARER,
    DISCARDED,
    DISCARDS_LEFT,
    HAND,
    LED_SUIT,
    PAYOFF,
    PHASE,
    PLAYED,
    SHOWN,
    SHOWN_BY,
    STOCK,
    STOCK_SHOWN,
    TRICK_COUNT,
    TRICK_NUM,
)
from tarocchi_rl.core.tables import (
    MK_DISCARD_FORBIDDEN,
    P_FAMILY,
    P_FIRST_ROUND,
    P_HAND,
    P_MUST_OVERTRUMP,
)
from tarocchi_rl.game import Game, State, make
from tarocchi_rl.variants import mineo, piedmont, tarok
from tarocchi_rl.variants.french import POIGNEE
from tarocchi_rl.variants.mineo import EARLY, MK_SCOMMESSA_NEED
from tarocchi_rl.variants.phases import PHASE_NAMES
from tarocchi_rl.variants.piedmont import ACCUSO

FAMILY_MINEO, FAMILY_PIEDMONT, FAMILY_TAROK = mineo.FAMILY_ID, piedmont.FAMILY_ID, tarok.FAMILY_ID

__all__ = ["Proposal", "Tracker", "sample_deal", "sample_tracker"]


# ----------------------------------------------------------------------------------------------------------
# per-game constants (dense-id bit masks as Python ints)


class _Info:
    """Constants of one core Game: deck, masks over dense card ids (bit c = card c), a template State."""

    def __init__(self, game: Game):
        spec = game.spec
        deck = game.deck
        tb = spec.tables(game.options)
        self.deck = deck
        self.tables = tb
        self.names = deck.names
        self.n_cards = C = deck.n_cards
        self.n_players = spec.n_players
        self.n_actions = spec.n_actions
        self.hand_sizes = tuple(spec.hand_sizes)
        self.stock_size = spec.stock_size
        self.rules = spec.rules
        self.family = int(tb.params[P_FAMILY])
        self.must_overtrump = bool(tb.params[P_MUST_OVERTRUMP])
        self.first_round = int(tb.params[P_FIRST_ROUND])
        self.early = self.first_round < int(tb.params[P_HAND])  # a first round of the deal (Mineo early_solo)
        self.pos = [int(x) for x in deck.pos_to_card]
        self.word = [int(x) for x in deck.word]
        self.strength = [int(x) for x in deck.strength]
        self.suit = [int(x) for x in deck.suit]
        self.all = (1 << C) - 1
        self.suit_ids = [sum(1 << c for c in range(C) if self.suit[c] == s) for s in range(4)]
        self.trump_ids = sum(1 << c for c in range(C) if self.suit[c] == TRUMP)
        self.ex_id = next((c for c in range(C) if self.suit[c] == FOOL), -1)  # -1: none (tarok)
        forbidden = self.to_ids(int(tb.masks[MK_DISCARD_FORBIDDEN, 0]), int(tb.masks[MK_DISCARD_FORBIDDEN, 1]))
        self.discardable = self.all & ~forbidden  # may be discarded face down
        need = tb.masks[MK_SCOMMESSA_NEED]
        self.scommessa_need = self.to_ids(int(need[0]), int(need[1]))
        trumps = [c for c in range(C) if self.suit[c] == TRUMP]
        self.trumps_above = {self.strength[t]: sum(1 << u for u in trumps if self.strength[u] > self.strength[t])
                             for t in trumps}
        self.trumps_below = {self.strength[t]: sum(1 << u for u in trumps if self.strength[u] < self.strength[t])
                             for t in trumps}
        self.trump_of_strength = {self.strength[t]: t for t in trumps}
        self.template = game.new_state(0)
        # slots of the deal (st.deck positions) per seat, then the stock
        self.blocks, k = [], 0
        for size in self.hand_sizes:
            self.blocks.append(range(k, k + size))
            k += size
        self.stock_block = range(k, k + self.stock_size)

    def to_ids(self, w0: int, w1: int) -> int:
        """Two-word core card set -> dense-id bit mask."""
        out = 0
        pos = self.pos
        for base, x in ((0, w0), (64, w1)):
            while x:
                low = x & -x
                out |= 1 << pos[base + low.bit_length() - 1]
                x ^= low
        return out

    def cards_text(self, ids: int) -> str:
        """Card names of a dense-id mask, in dense-id order, comma separated."""
        names = self.names
        out = []
        while ids:
            low = ids & -ids
            out.append(names[low.bit_length() - 1])
            ids ^= low
        return ",".join(out)


_INFOS: dict = {}
_GAMES: dict = {}


def _key(variant: str, options: dict) -> tuple:
    return variant, tuple(sorted((options or {}).items()))


def _info(game: Game) -> _Info:
    key = _key(game.variant, game.options)
    info = _INFOS.get(key)
    if info is None:
        info = _INFOS[key] = _Info(game)
    return info


def game_of(variant: str, options: dict) -> Game:
    """A shared core Game per (variant, options) (the adapters keep one each)."""
    key = _key(variant, options)
    g = _GAMES.get(key)
    if g is None:
        g = _GAMES[key] = make(variant, **dict(options or {}))
    return g


def _ids_list(ids: int) -> list:
    out = []
    while ids:
        low = ids & -ids
        out.append(low.bit_length() - 1)
        ids ^= low
    return out


def _popcount(x: int) -> int:
    return bin(x).count("1")


# ----------------------------------------------------------------------------------------------------------
# Tracker: a core State being played, with each seat's view


class Tracker:
    """A single game on the core, stepped with legality checks, recording what every seat has seen.

    ``state`` is the core State (its ``history`` holds the actions); ``log`` has one entry per step (the
    deal first): a string seen identically by every seat, or a tuple of one string per seat. ``actors``
    lists the seat of each action; ``trick_of`` the trick (0-based) in which each card was played (-1: not
    played); ``initial_hands`` each seat's first hand as a dense-id mask (Mineo early round: five cards).
    """

    def __init__(self, game: Game, deck_ids):
        info = _info(game)
        s = info.template.clone()
        st = s._env.state
        n = info.n_cards
        st.deck[0, :n] = np.asarray(deck_ids, dtype=np.int16)
        st.deck[0, n:] = -1
        engine.reset_row(st, 0, s._env.tables)
        s.history = []
        s.game = game
        self.game = game
        self.info = info
        self.state = s
        self.actors = []
        self.trick_of = np.full(n, -1, np.int8)
        rows = st.cards[0].tolist()
        hands = tuple(info.to_ids(*rows[HAND + q]) for q in range(info.n_players))
        self.initial_hands = hands
        void = ";void" if int(st.meta[0, PHASE]) == DONE else ""
        self.log = [tuple(f"hand:{info.cards_text(h)}{void}" for h in hands)]

    # -- queries ------------------------------------------------------------------------------------------
    def deck_ids(self) -> list:
        """The deal as dense ids in deal order (hands by seat, then the stock)."""
        return [int(c) for c in self.state._env.state.deck[0, : self.info.n_cards]]

    def phase(self) -> int:
        return int(self.state._env.state.meta[0, PHASE])

    def current_player(self) -> int:
        m = self.state._env.state.meta[0]
        return -1 if int(m[PHASE]) == DONE else int(m[CUR])

    def is_terminal(self) -> bool:
        return int(self.state._env.state.meta[0, PHASE]) == DONE

    def legal_actions(self) -> list:
        if self.is_terminal():
            return []
        out = np.empty(self.info.n_actions, bool)
        engine.legal_mask_row(self.state._env.state, 0, self.state._env.tables, out)
        return np.flatnonzero(out).tolist()

    def returns(self) -> list:
        if not self.is_terminal():
            return [0] * self.info.n_players
        m = self.state._env.state.meta[0]
        return [int(x) for x in m[PAYOFF : PAYOFF + self.info.n_players]]

    def view(self, player: int) -> list:
        """The entries of ``player``'s view, one per step."""
        return [e if isinstance(e, str) else e[player] for e in self.log]

    def info_string(self, player: int) -> str:
        """``p<seat>`` and the seat's view: equal exactly for positions the seat cannot tell apart."""
        return f"p{player} " + " ".join(self.view(player))

    def action_to_string(self, action: int) -> str:
        return self.info.rules.action_to_string(int(action), self.phase())

    def illegal_message(self, action) -> str:
        info = self.info
        m = self.state._env.state.meta[0]
        phase = int(m[PHASE])
        legal = ", ".join(f"{info.rules.action_to_string(x, phase)} ({x})" for x in self.legal_actions())
        try:
            name = info.rules.action_to_string(int(action), phase)
        except (ValueError, TypeError, IndexError):
            name = "out of range"
        return (f"illegal action {action} ({name}) for seat {int(m[CUR])} in phase {PHASE_NAMES[phase]} of "
                f"{self.game.variant}; legal: {legal}")

    def stock_text(self, ids: int) -> str:
        """Cards of the stock shown (a dense-id mask): in the order dealt where the family says it matters (tarok's
        talon sets: STOCK_IN_ORDER), else by dense id."""
        info = self.info
        if not info.rules.STOCK_IN_ORDER:
            return info.cards_text(ids)
        deal = self.deck_ids()
        return ",".join(info.names[deal[k]] for k in info.stock_block if ids >> deal[k] & 1)

    # -- acting -------------------------------------------------------------------------------------------
    def apply(self, action) -> None:
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
        phase = int(m[PHASE])
        seat = int(m[CUR])
        info = self.info
        self.actors.append(seat)
        s.history.append(a)
        if phase == PLAY:  # a card play: public; in tarok's klop the trick's winner also takes a talon card, face up
            self.trick_of[a] = m[TRICK_NUM]
            shown0 = info.to_ids(*(int(x) for x in st.cards[0, SHOWN]))
            engine.step_row(st, 0, a, tb)
            given = info.to_ids(*(int(x) for x in st.cards[0, SHOWN])) & ~shown0
            self.log.append(f"{seat}:play:{info.names[a]}" + (f";stock:{info.cards_text(given)}" if given else ""))
            return
        text = info.rules.action_to_string(a, phase)
        n = info.n_players
        before = st.cards[0].tolist()
        shown0, called0 = int(m[STOCK_SHOWN]), int(m[CALLED])
        engine.step_row(st, 0, a, tb)
        after = st.cards[0].tolist()
        public = []
        if int(m[STOCK_SHOWN]) == 1 and shown0 != 1:
            public.append("stock:" + self.stock_text(info.to_ids(*after[STOCK])))
        if int(m[CALLED]) != called0 and int(m[CALLED]) >= 0:
            public.append("called:" + info.names[int(m[CALLED])])
        for t in range(n):
            if after[SHOWN_BY + t] != before[SHOWN_BY + t]:
                public.append(f"show{t}:" + info.cards_text(info.to_ids(*after[SHOWN_BY + t])))
        c = info.n_cards
        hidden_discard = c <= a < 2 * c and info.word[a - c] != 0  # a face-down discard (not a trump)
        entries = []
        for q in range(n):
            parts = [f"{seat}:discard:?" if hidden_discard and q != seat else f"{seat}:{text}"] + public
            b, x = before[HAND + q], after[HAND + q]
            new0, new1 = x[0] & ~b[0], x[1] & ~b[1]
            if new0 or new1:
                parts.append("+" + info.cards_text(info.to_ids(new0, new1)))
            entries.append(";".join(parts))
        self.log.append(entries[0] if all(e == entries[0] for e in entries) else tuple(entries))

    def __deepcopy__(self, memo):
        new = Tracker.__new__(Tracker)
        new.game = self.game
        new.info = self.info
        new.state = self.state.clone()
        new.actors = list(self.actors)
        new.trick_of = self.trick_of.copy()
        new.initial_hands = self.initial_hands
        new.log = list(self.log)
        return new

    def __reduce__(self):
        g = self.game
        return (_rebuild_tracker, (g.variant, dict(g.options), bytes(bytearray(self.deck_ids())),
                                   tuple(self.state.history)))


def _rebuild_tracker(variant, options, deck, history) -> Tracker:
    t = Tracker(game_of(variant, options), list(deck))
    for a in history:
        t.apply(a)
    return t


def tracker_of(state: State) -> Tracker:
    """A Tracker replaying a core State (same deal, same history)."""
    game = state.game
    n = game.deck.n_cards
    t = Tracker(game, [int(c) for c in state._env.state.deck[0, :n]])
    for a in state.history:
        t.apply(a)
    return t


# ----------------------------------------------------------------------------------------------------------
# the proposal


_HALL: dict = {}


def _hall_matrices(n_piles: int):
    """SUB[S, sig] = sig is a subset of S; CAP[S, q] = q in S (for Hall's condition over pile sets)."""
    if n_piles not in _HALL:
        k = 1 << n_piles
        sets = np.arange(k)
        sub = ((sets[None, :] & ~sets[:, None]) == 0).astype(np.int64)
        cap = ((sets[:, None] >> np.arange(n_piles)[None, :]) & 1).astype(np.int64)
        _HALL[n_piles] = (sub, cap)
    return _HALL[n_piles]


class Proposal:
    """What ``player`` knows at the current position of a game, as a proposal of deals (module docstring).

    Built from the deal and the history (the true game is replayed once). Attributes: ``unknown`` (dense-id
    mask of the cards whose location the player does not know), ``piles`` (``(kind, seat, size)`` with kind
    ``hand`` / ``discard`` / ``stock``), ``allowed`` (card -> bit mask of the piles it may be in), ``caps``
    (``(pile, category mask, max count)``), ``target`` (the player's true view).
    """

    def __init__(self, game: Game, deck_ids, history, player: int):
        info = _info(game)
        n, p = info.n_players, int(player)
        if not 0 <= p < n:
            raise ValueError(f"player must be a seat 0..{n - 1}, got {player}")
        self.info, self.game, self.player = info, game, p
        self.deck_ids = [int(c) for c in deck_ids]
        self.history = [int(a) for a in history]
        tr = Tracker(game, self.deck_ids)
        excl = [0] * n  # cards each seat cannot hold now
        pins = {}  # card -> seat holding it (if not played)
        caps = {}  # seat -> (category mask, most cards of it in his hand at that time)
        discards = []  # (discards left, shown face up) for each discard by another seat
        self.hidden_steps = []  # history indices of the face-down discards p did not see
        rivanto = []
        taken = 0  # cards that left the stock row for the actor's hand (tarok: the talon set taken)
        given = 0  # cards that left the stock row in the card play, face up (tarok: klop's gifts, the talon's rest
        # to the called King): known to all
        for k, a in enumerate(self.history):
            st = tr.state._env.state
            m = st.meta[0]
            phase, seat = int(m[PHASE]), int(m[CUR])
            stock_before = info.to_ids(*(int(x) for x in st.cards[0, STOCK]))
            if seat != p:
                if phase == PLAY:
                    excl[seat] |= self._play_exclusions(a, int(m[TRICK_COUNT]), int(m[LED_SUIT]),
                                                        int(m[BEST_TRUMP]), int(m[BEST_BIT]))
                elif phase == DISCARD:
                    face_up = info.word[a - info.n_cards] == 0
                    discards.append((int(m[DISCARDS_LEFT]), face_up))
                    if not face_up:
                        self.hidden_steps.append(k)
                elif info.family == FAMILY_MINEO and a == mineo.A_SCOMMESSA:
                    for c in _ids_list(info.scommessa_need):
                        pins[c] = seat  # he held T20 and EX
                elif info.family == FAMILY_MINEO and a == mineo.A_RIVANTO:
                    rivanto.append(seat)
            tr.apply(a)
            left = stock_before & ~info.to_ids(*(int(x) for x in tr.state._env.state.cards[0, STOCK]))
            if phase == PLAY:
                given |= left
            else:
                taken |= left
            if seat != p and phase in (POIGNEE, ACCUSO):
                row = tr.state._env.state.cards[0, SHOWN_BY + seat]
                shown = info.to_ids(int(row[0]), int(row[1]))
                if shown:
                    self._shown(seat, shown, phase, excl, pins, caps)
        self.tracker = tr
        self.target = tr.view(p)
        st = tr.state._env.state
        m = st.meta[0]
        rows = [(int(x), int(y)) for x, y in st.cards[0].tolist()]
        hand = [info.to_ids(*rows[HAND + s]) for s in range(n)]
        played = [info.to_ids(*rows[PLAYED + s]) for s in range(n)]
        played_all = 0
        for x in played:
            played_all |= x
        discarded = info.to_ids(*rows[DISCARDED])
        shown_all = info.to_ids(*rows[SHOWN])
        stock = info.to_ids(*rows[STOCK])
        declarer = int(m[DECLARER])
        self.phase = int(m[PHASE])
        self.early = info.early and self.phase == EARLY
        self.hand, self.played, self.stock, self.declarer = hand, played, stock, declarer
        self.discarder = declarer if discarded else -1
        # Mineo: the called trump (every higher trump is the caller's; he and a rivanto seat lack it)
        called = int(m[CALLED])
        if info.family == FAMILY_MINEO and called >= 0 and declarer != p:
            for c in _ids_list(info.trumps_above[info.strength[called]]):
                pins.setdefault(c, declarer)
        if info.family == FAMILY_MINEO and called >= 0 and int(m[CONTRACT]) == mineo.CALL:
            for s in rivanto + [declarer]:  # (in a forced solo the caller took it with the monte)
                excl[s] |= 1 << called
        # a trump discarded face up: the declarer had fewer discardable cards than discards left
        if discards and self.discarder != p:
            bound = None
            for j, (left, face_up) in enumerate(discards):
                if face_up:
                    later_hidden = sum(1 for _, up in discards[j + 1 :] if not up)
                    k = left - 1 - later_hidden
                    bound = k if bound is None else min(bound, k)
            if bound is not None:
                caps.setdefault(self.discarder, (info.discardable, bound))
        # where the stock is
        if info.family == FAMILY_PIEDMONT:
            stock_case = "dealer"  # taken unseen by the dealer at the start
        elif int(m[STOCK_SHOWN]) == 1:
            stock_case = "shown"
        else:
            stock_case = "hidden"
        self.stock_case = stock_case
        known = hand[p] | played_all | shown_all | given  # shown: French discarded trumps, tarok's klop gifts
        if info.family == FAMILY_TAROK and stock_case == "shown":  # the talon lies face up, nobody's, but for the
            known |= stock  # set the declarer took: his, in his hand or his discard (as a taken monte / chien)
            self.stock = stock = taken
        self.given = given
        if self.discarder == p:
            known |= discarded
        self.unknown = info.all & ~known
        piles = [("hand", s, _popcount(hand[s])) for s in range(n) if s != p]
        if self.discarder >= 0 and self.discarder != p:
            piles.append(("discard", self.discarder, _popcount(discarded & ~shown_all)))
        if stock_case == "hidden":
            piles.append(("stock", -1, info.stock_size - _popcount(given)))
        if not self.early and sum(size for _, _, size in piles) != _popcount(self.unknown):
            raise RuntimeError("internal error: pile sizes do not match the unknown cards")
        self.known_discard = discarded & shown_all if self.discarder != p else discarded
        self.excl, self.pins = excl, pins
        self.piles = piles
        seat_pile = {s: q for q, (kind, s, _) in enumerate(piles) if kind == "hand"}
        disc_pile = next((q for q, (kind, _, _) in enumerate(piles) if kind == "discard"), None)
        full = (1 << len(piles)) - 1
        allowed = {}
        for c in _ids_list(self.unknown):
            a = full
            for q, (kind, s, _) in enumerate(piles):
                if (kind == "hand" and excl[s] >> c & 1) or (kind == "discard" and not info.discardable >> c & 1):
                    a &= ~(1 << q)
            if c in pins and pins[c] in seat_pile:
                a &= 1 << seat_pile[pins[c]]
            if stock_case == "shown" and stock >> c & 1:
                keep = (1 << seat_pile[declarer]) if declarer in seat_pile else 0
                if disc_pile is not None:
                    keep |= 1 << disc_pile
                a &= keep
            allowed[c] = a
        self.allowed = allowed
        # caps were counted on the hand of that time: remove the category cards played since
        self.caps = [(seat_pile[s], cat, max(k - _popcount(played[s] & cat), 0))
                     for s, (cat, k) in caps.items() if s in seat_pile]
        self.seat_pile = seat_pile
        self.disc_pile = disc_pile

    # -- constraint rules ---------------------------------------------------------------------------------
    def _play_exclusions(self, c: int, n_played: int, led: int, best_trump: int, best_bit: int) -> int:
        """Cards a seat cannot hold, given that it just played card c to the trick described (mirrors
        ``core.trick.legal_cards``: follow suit, else trump, overtrumping when the rules say so)."""
        info = self.info
        suit = info.suit[c]
        if suit == FOOL or n_played == 0 or led < 0:
            return 0
        out = 0
        if led < 4:
            if suit == led:
                return 0
            out |= info.suit_ids[led]
        if suit != TRUMP:
            return out | info.trump_ids
        if info.must_overtrump and best_trump and info.strength[c] < best_bit:
            out |= info.trumps_above[best_bit]
        return out

    def _shown(self, seat, shown, phase, excl, pins, caps):
        """Cards shown by ``seat`` (French poignée, Piedmontese accuso): pinned, and what they prove."""
        info = self.info
        for c in _ids_list(shown):
            pins[c] = seat
        trumps = shown & info.trump_ids
        if phase == POIGNEE:
            if shown >> info.ex_id & 1:  # EX is shown only when his trumps fall short: they are all shown
                excl[seat] |= info.trump_ids & ~shown
            elif trumps:  # the lowest trumps he holds
                top = max(info.strength[c] for c in _ids_list(trumps))
                excl[seat] |= info.trumps_below[top] & ~shown
        elif info.family == FAMILY_PIEDMONT:
            if _popcount(trumps) >= 10:  # an accuso of ten trumps shows all of them
                excl[seat] |= info.trump_ids & ~shown
            else:  # the honours alone: fewer than ten trumps
                caps.setdefault(seat, (info.trump_ids, 9))

    # -- checks -------------------------------------------------------------------------------------------
    def violations(self, state: State) -> list:
        """Constraints of this proposal that the deal of ``state`` (a game with the same history, e.g. the
        true one) violates: [] means the proposal can generate that deal."""
        info = self.info
        if self.early:
            p = self.player
            first = [int(c) for c in state._env.state.deck[0, info.blocks[p][0] : info.blocks[p][0] + 5]]
            mine = self.deck_ids[info.blocks[p][0] : info.blocks[p][0] + 5]
            return [] if first == mine else ["early-round cards differ"]
        st = state._env.state
        rows = [(int(x), int(y)) for x, y in st.cards[0].tolist()]
        where = {}
        for q, (kind, s, size) in enumerate(self.piles):
            if kind == "hand":
                ids = info.to_ids(*rows[HAND + s])
            elif kind == "discard":
                ids = info.to_ids(*rows[DISCARDED]) & ~info.to_ids(*rows[SHOWN])
            else:
                ids = info.to_ids(*rows[STOCK])
            ids &= self.unknown
            if _popcount(ids) != size:
                return [f"pile {kind} {s} holds {_popcount(ids)} unknown cards, expected {size}"]
            for c in _ids_list(ids):
                where[c] = q
        out = []
        for c, a in self.allowed.items():
            if c not in where:
                out.append(f"{info.names[c]} is in no pile")
            elif not a >> where[c] & 1:
                kind, s, _ = self.piles[where[c]]
                out.append(f"{info.names[c]} is in pile {kind} {s}, not allowed")
        for q, cat, k in self.caps:
            n_in = sum(1 for c, w in where.items() if w == q and cat >> c & 1)
            if n_in > k:
                out.append(f"pile {self.piles[q]} holds {n_in} > {k} cards of a capped category")
        return out

    # -- sampling -----------------------------------------------------------------------------------------
    def propose(self, rng):
        """A deal (dense ids in deal order) and its history drawn from the proposal (not yet checked by
        replay): the history is the true one but for the face-down discards p did not see, which discard
        the cards of the proposed face-down discard, in random order."""
        info = self.info
        p = self.player
        ids = list(self.deck_ids)
        if self.early:  # Mineo early round: only p's first five cards are known to him
            keep = set(info.blocks[p][: info.first_round])
            rest = [ids[k] for k in range(info.n_cards) if k not in keep]
            rng.shuffle(rest)
            it = iter(rest)
            return [ids[k] if k in keep else next(it) for k in range(info.n_cards)], self.history
        contents = self._assign(rng)
        n = info.n_players
        cur = [self.hand[s] for s in range(n)]
        for q, (kind, s, _) in enumerate(self.piles):
            if kind == "hand":
                cur[s] = contents[q]
        discard = self.known_discard
        history = self.history
        if self.disc_pile is not None:
            hidden = _ids_list(contents[self.disc_pile])
            discard |= contents[self.disc_pile]
            rng.shuffle(hidden)
            history = list(history)
            for k, c in zip(self.hidden_steps, hidden, strict=True):
                history[k] = info.n_cards + c
        dealt = [cur[s] | self.played[s] for s in range(n)]
        if self.discarder >= 0:
            dealt[self.discarder] |= discard
        stock_ids = None  # None: keep the true stock block
        if self.stock_case == "shown":
            dealt[self.declarer] &= ~self.stock
        elif self.stock_case == "hidden":
            stock_ids = _ids_list(contents[len(self.piles) - 1])
        elif self.declarer != p:  # Piedmontese dealer: which of his cards were the stock is unknown
            mine = _ids_list(dealt[self.declarer])
            pick = rng.choice(len(mine), info.stock_size, replace=False)
            stock_ids = [mine[k] for k in pick]
            for c in stock_ids:
                dealt[self.declarer] &= ~(1 << c)
        out = list(ids)
        for s in range(n):
            if s == p:
                continue
            cards = _ids_list(dealt[s])
            if len(cards) != info.hand_sizes[s]:
                raise RuntimeError(f"internal error: seat {s} would be dealt {len(cards)} cards")
            rng.shuffle(cards)
            for k, c in zip(info.blocks[s], cards, strict=True):
                out[k] = c
        if stock_ids is not None:
            rng.shuffle(stock_ids)
            slots = [k for k in info.stock_block if not self.given >> ids[k] & 1]  # a card given out keeps its place
            for k, c in zip(slots, stock_ids, strict=True):
                out[k] = c
        return out, history

    def _assign(self, rng) -> list:
        """Place the unknown cards in the piles (sequential, Hall-checked): one dense-id mask per pile."""
        piles = self.piles
        sizes = [size for _, _, size in piles]
        allowed = dict(self.allowed)
        base = list(range(len(piles)))  # pile each (virtual) pile merges into
        for q, cat, k in self.caps:  # split: k places open to all, size-k closed to the category
            k = min(k, sizes[q])
            v = len(sizes)
            sizes.append(k)
            sizes[q] -= k
            base.append(q)
            for c, a in allowed.items():
                if a >> q & 1:
                    a |= 1 << v
                    if cat >> c & 1:
                        a &= ~(1 << q)
                    allowed[c] = a
        n_piles = len(sizes)
        full = (1 << n_piles) - 1
        cards = list(allowed)
        keys = rng.random(len(cards))
        order = sorted(range(len(cards)), key=lambda k: (_popcount(allowed[cards[k]]), keys[k]))
        rem = np.array(sizes, np.int64)
        cnt = np.zeros(1 << n_piles, np.int64)
        for c in cards:
            cnt[allowed[c]] += 1
        sub, capm = _hall_matrices(n_piles)
        contents = [0] * n_piles
        free = []
        for k in order:
            c = cards[k]
            sig = allowed[c]
            if sig == full:
                free.append(c)
                continue
            cnt[sig] -= 1
            cands = [q for q in range(n_piles) if sig >> q & 1 and rem[q] > 0]
            while True:
                if not cands:
                    raise RuntimeError(f"internal error: no pile can take {self.info.names[c]}")
                if len(cands) == 1:
                    q = cands[0]
                    rem[q] -= 1
                    break
                w = rem[cands].astype(float)
                q = cands[int(np.searchsorted(np.cumsum(w), rng.random() * w.sum(), side="right"))]
                rem[q] -= 1
                if (sub @ cnt <= capm @ rem).all():
                    break
                rem[q] += 1
                cands.remove(q)
            contents[q] |= 1 << c
        rng.shuffle(free)
        k = 0
        for q in range(n_piles):
            for c in free[k : k + int(rem[q])]:
                contents[q] |= 1 << c
            k += int(rem[q])
        merged = [0] * len(piles)
        for q in range(n_piles):
            merged[base[q]] |= contents[q]
        return merged

    def accept(self, deck_ids, history):
        """Replay ``history`` on a deal: (the Tracker, "") if every action is legal and the player's view
        is the true one at every step, else (None, the reason)."""
        p = self.player
        tr = Tracker(self.game, deck_ids)
        target = self.target
        if tr.view(p)[0] != target[0]:
            return None, "the deal looks different to the player"
        st = tr.state._env.state
        tb = tr.state._env.tables
        for k, a in enumerate(history):
            if int(st.meta[0, PHASE]) == DONE or not engine.is_legal(st, 0, a, tb):
                return None, f"action {k} ({a}) is illegal on the proposed deal"
            tr.apply(a)
            e = tr.log[-1]
            if (e if isinstance(e, str) else e[p]) != target[k + 1]:
                return None, f"step {k} looks different to the player"
        return tr, ""

    def sample(self, rng, max_tries: int = 10_000) -> Tracker:
        """A Tracker on a consistent random deal (see the module docstring); RuntimeError after
        ``max_tries`` rejected proposals."""
        reason = ""
        for _ in range(max_tries):
            tr, reason = self.accept(*self.propose(rng))
            if tr is not None:
                return tr
        raise RuntimeError(
            f"no deal consistent with what seat {self.player} has seen was found in {max_tries} proposals "
            f"({self.game.variant}, after {len(self.history)} actions); last rejection: {reason}"
        )


_CACHE: "OrderedDict[tuple, Proposal]" = OrderedDict()
_CACHE_SIZE = 16


def proposal_for(game: Game, deck_ids, history, player: int) -> Proposal:
    """The Proposal of a position (cached: ISMCTS resamples the same position many times)."""
    key = (id(game), tuple(int(c) for c in deck_ids), tuple(int(a) for a in history), int(player))
    prop = _CACHE.get(key)
    if prop is None or prop.game is not game:
        prop = Proposal(game, deck_ids, history, player)
        _CACHE[key] = prop
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return prop


def _rng(rng):
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def sample_tracker(tracker: Tracker, player: int, rng=None, max_tries: int = 10_000) -> Tracker:
    """Like :func:`sample_deal`, for a Tracker: a new Tracker (all seats' views) on a consistent deal."""
    prop = proposal_for(tracker.game, tracker.deck_ids(), tracker.state.history, player)
    return prop.sample(_rng(rng), max_tries)


def sample_deal(state: State, player: int, rng=None, max_tries: int = 10_000) -> State:
    """A new State on a random deal consistent with everything ``player`` has seen in ``state``, with the
    same action history replayed (module docstring). ``rng``: a numpy Generator or a seed."""
    n = state.game.deck.n_cards
    deck = [int(c) for c in state._env.state.deck[0, :n]]
    prop = proposal_for(state.game, deck, state.history, player)
    return prop.sample(_rng(rng), max_tries).state
