"""Rebuild a game from what one seat has seen: the position a bot that cannot peek plays from.

A seat's *view* is what :class:`tarocchi_rl.views.Views` records for it: its cards as dealt, then one entry per
step, ``<seat>:<action>`` (another seat's face-down discard as ``<seat>:discard:?``) followed by what the step
revealed (``;stock:..``, ``;called:..``, ``;show<seat>:..``, ``;+..``). ``rebuild(game, seat, hand, history)``
returns :class:`~tarocchi_rl.views.Views` of a legal game (every step checked by the core) that shows ``seat``
exactly that view; its hidden cards are one assignment consistent with the view. Nothing else is read, so two
real games that look the same to the seat rebuild to the same position, drawn the same way (fixed seeds).

How:

1. *The deal.* Every card whose place the view tells is put there: the seat's hand; the cards another seat
   played, discarded face up or showed, in that seat's block (a card shown in the stock stays in the stock);
   the stock when it was shown; the cards that later joined the seat's own hand (Mineo's second round: its
   block; else: the stock). The other cards fill the other places in a fixed shuffled order.
2. *Replay.* Each entry's action is applied with the core's legality check and the entry the step produces is
   compared with the view's. A step of another seat may fail on this deal (he did not follow suit but holds
   the suit here): the hidden cards are then redrawn by the exact determinizer
   (:mod:`tarocchi_rl.search.determinize`: uniform over what the seat knew before the step), with the step's
   own implications added as constraints (the played card is the actor's; the exclusions the core draws from
   the step) and the cards each other seat plays later kept in his hand; a bounded number of draws.
3. *Budget.* ``rebuild(..., budget=Budget(deadline))`` (a caller that must not wait, such as the web server's event
   loop) stops with :class:`OverBudget` (not a ViewError: the view may be fine) when the deadline passes, checked
   before each step and each batch of redraws; the caller then rebuilds elsewhere without one.
4. *Errors.* A malformed entry, an unknown card, a turn out of order, an action illegal for the seat itself, or
   a step that no draw explains raise :class:`ViewError` naming ``history[k]`` (or ``hand``).
"""

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import engine
from ..core.phases import PLAY
from ..core.state import CALLED, DISCARDED, EXCLUDED, HAND, PHASE, STOCK
from ..core.tables import CARD_BIT, CARD_WORD, P_FIRST_ROUND, P_HAND, P_PLAYERS, P_STOCK
from ..game import Game
from ..views import REVEAL_KINDS, Views, split_entry
from .determinize import determinize

_DRAWS = 64  # determinizations tried per failing step (in batches of _DRAW_BATCH)
_DRAW_BATCH = 16


class ViewError(ValueError):
    """A view that no legal game explains (malformed, inconsistent or impossible); the message names where."""


class OverBudget(Exception):  # noqa: N818 (not an error of the view: the rebuild needs more than it was allowed)
    """The rebuild would take more than its :class:`Budget`: the caller rebuilds elsewhere, without one."""


@dataclass(frozen=True)
class Budget:
    """A bound on one rebuild: ``deadline`` (``time.monotonic()`` seconds), checked before each step and each
    batch of the determinizer's redraws."""

    deadline: float

    def check(self) -> None:
        if time.monotonic() > self.deadline:
            raise OverBudget


@dataclass
class Entry:
    """One step of a view: ``actor`` did ``action`` (a string; ``discard:?`` when hidden); what it revealed."""

    where: str
    actor: int
    action: str
    reveals: list[str] = field(default_factory=list)
    cards: dict[str, list[int]] = field(default_factory=dict)  # reveal key (stock, show1, +) -> dense ids
    text: str = ""  # as Views writes it (canonical)


def _cards(game: Game, text: str | list[str], where: str) -> list[int]:
    """Dense card ids of card names (a list, or a comma-separated text); a ViewError for an unknown or repeated
    card."""
    out: list[int] = []
    for name in (t.strip() for t in (text.split(",") if isinstance(text, str) else text)):
        if not name:
            continue
        try:
            out.append(game.deck.card_id(name))
        except ValueError:
            raise ViewError(f"{where}: unknown card {name!r} for {game.variant}") from None
    if len(set(out)) != len(out):
        raise ViewError(f"{where}: a card is named twice")
    return out


def _text(game: Game, ids: list[int]) -> str:
    return ",".join(game.deck.names[c] for c in sorted(ids))


def _parse_entry(game: Game, raw: Any, where: str) -> Entry:
    """``"<seat>:<action>[;stock:..][;called:..][;show<s>:..][;+..]"`` -> Entry (card lists in any order)."""
    if not isinstance(raw, str):
        raise ViewError(f"{where}: an entry must be a string such as '1:play:KC', got {raw!r}")
    try:
        actor, action, parts = split_entry(raw)
    except ValueError as e:
        raise ViewError(f"{where}: {e}") from None
    if not 0 <= actor < game.num_players:
        raise ViewError(f"{where}: seat {actor} out of range 0..{game.num_players - 1}")
    kind, _, arg = action.partition(":")
    if action.lower() != "discard:?":
        try:
            a = game.string_to_action(action)
        except ValueError as e:
            raise ViewError(f"{where}: {e}") from None
        if not 0 <= a < game.num_actions:
            raise ViewError(f"{where}: unknown action {action!r}")
    if kind.lower() in ("play", "discard") and arg != "?":
        action = f"{kind.lower()}:{game.deck.names[game.deck.card_id(arg)]}"  # the card's own spelling
    else:
        action = action.lower()
    entry = Entry(where, actor, action)
    for key, names in parts:
        if key.startswith("show") and not 0 <= int(key[4:]) < game.num_players:
            raise ViewError(f"{where}: {key}: seat out of range")
        ids = _cards(game, names, where)
        if key in entry.cards:
            raise ViewError(f"{where}: {key} given twice")
        entry.cards[key] = ids
        entry.reveals.append(key)
    entry.text = canonical(game, entry)
    return entry


def canonical(game: Game, e: Entry) -> str:
    """The entry as Views writes it (parts in Views' order, cards in dense-id order)."""
    order = {k: i for i, k in enumerate(REVEAL_KINDS)}
    keys = sorted(e.cards, key=lambda k: (order["show" if k.startswith("show") else k], k))
    parts = [f"{e.actor}:{e.action}"]
    for k in keys:
        parts.append(("+" if k == "+" else f"{k}:") + _text(game, e.cards[k]))
    return ";".join(parts)


def _canonical_views_entry(game: Game, text: str) -> str:
    return canonical(game, _parse_entry(game, text, "views"))


# ---------------------------------------------------------------------------------------------------------
# the deal


def _initial_deal(game: Game, seat: int, own: list[int], entries: list[Entry], seed: int) -> list[int]:
    """Dense ids in deal order (blocks of P_HAND by seat, then the stock) with every known card placed."""
    tb = game.spec.tables(game.options)
    n, h, k = int(tb.params[P_PLAYERS]), int(tb.params[P_HAND]), int(tb.params[P_STOCK])
    first = int(tb.params[P_FIRST_ROUND])  # cards per seat dealt before the first decision
    if len(own) > h:  # a Piedmontese dealer sees his hand and the stock he took as one: any split will do
        own, taken = own[:h], own[h:]
    else:
        taken = []
    place: dict[int, tuple[str, int]] = {c: ("hand", seat) for c in own}
    place.update({c: ("stock", -1) for c in taken})

    def pin(c: int, where: tuple[str, int], e: Entry) -> None:
        if c in place and place[c] != where:
            if place[c] == ("hand", seat):
                raise ViewError(f"{e.where}: {game.deck.names[c]} was dealt to you (seat {seat})")
            return  # a card of the stock later held: the stock is where it was dealt
        place.setdefault(c, where)

    for e in entries:  # the stock first: a card shown in it stays in it
        for c in e.cards.get("stock", []):
            if c in own and len(own) == h:
                raise ViewError(f"{e.where}: {game.deck.names[c]} is shown in the stock but was dealt to you")
            pin(c, ("stock", -1), e)
    joined = [c for e in entries for c in e.cards.get("+", [])]
    for c in joined:  # Mineo's second round fills the seat's block; otherwise the stock was taken
        pin(c, ("hand", seat) if len(own) < h else ("stock", -1), entries[0])
    for e in entries:
        if e.actor != seat and e.action != "discard:?":
            kind, _, name = e.action.partition(":")
            if kind in ("play", "discard"):
                c = game.deck.card_id(name)
                if place.get(c) == ("hand", seat):
                    raise ViewError(f"{e.where}: seat {e.actor} cannot {kind} {name}: it is your card")
                pin(c, ("hand", e.actor), e)
        for key, ids in e.cards.items():
            if key.startswith("show") and int(key[4:]) != seat:
                for c in ids:
                    pin(c, ("hand", int(key[4:])), e)
    forbid: dict[int, int] = {}  # card -> the seat whose block must not hold it
    caller = -1
    deck = game.deck
    for e in entries:  # Mineo's call: the caller holds every trump above the called one, not the called one
        if e.action == "bid:call":
            caller = e.actor
        for c in e.cards.get("called", []):
            if caller < 0 or caller == seat:
                continue
            forbid[c] = caller
            for t in range(deck.n_cards):
                if deck.suit[t] == deck.suit[c] and deck.strength[t] > deck.strength[c]:
                    pin(t, ("hand", caller), e)
    blocks: list[list[int]] = [[] for _ in range(n)]
    stock: list[int] = []
    blocks[seat] = list(own) + [c for c in joined if place.get(c) == ("hand", seat) and c not in own]
    overflow: list[int] = []
    for c, (kind, s) in place.items():
        if kind == "stock":
            stock.append(c)
        elif s != seat:
            (blocks[s] if len(blocks[s]) < h else overflow).append(c)
    stock += overflow  # a dealer who took the stock played more than his hand: the rest came from it
    if len(stock) > k or any(len(b) > h for b in blocks):
        raise ViewError("history: more cards are placed in a hand or the stock than it holds")
    rest = [c for c in np.random.default_rng(seed).permutation(game.deck.n_cards).tolist() if c not in place]
    for s in range(n):
        need = h - len(blocks[s])
        fill = [c for c in rest if forbid.get(c) != s][:need]
        blocks[s] += fill
        rest = [c for c in rest if c not in set(fill)]
    stock += rest[: k - len(stock)]
    if first < h:  # the seat's own first-round cards must open its block
        b = blocks[seat]
        blocks[seat] = list(own) + [c for c in b if c not in own]
    return [c for b in blocks for c in b] + stock


# ---------------------------------------------------------------------------------------------------------
# replay


def _bit(tb: Any, c: int) -> tuple[int, np.uint64]:
    return int(tb.card[c, CARD_WORD]), np.uint64(1) << np.uint64(int(tb.card[c, CARD_BIT]))


def _holds(cards: np.ndarray, row: int, tb: Any, c: int) -> bool:
    w, b = _bit(tb, c)
    return bool(cards[row, w] & b)


def _find(cards: np.ndarray, tb: Any, c: int, rows: list[int]) -> int:
    for r in rows:
        if _holds(cards, r, tb, c):
            return r
    return -1


def _move(cards: np.ndarray, tb: Any, c: int, src: int, dst: int) -> None:
    w, b = _bit(tb, c)
    cards[src, w] &= ~b
    cards[dst, w] |= b


class _Rebuilder:
    def __init__(self, game: Game, seat: int, entries: list[Entry], v: Views, seed: int,
                 budget: Budget | None = None) -> None:
        self.game, self.seat, self.entries, self.v, self.seed = game, seat, entries, v, seed
        self.budget = budget
        self.tb = v.state._env.tables
        self.n = game.num_players
        self.deck = game.deck

    def later_plays(self, k: int, end: int | None = None) -> dict[int, int]:
        """card -> seat for the cards other seats play in steps k..end-1 (they hold them now)."""
        out: dict[int, int] = {}
        for e in self.entries[k:end]:
            if e.actor != self.seat and e.action.startswith("play:"):
                out[self.deck.card_id(e.action[5:])] = e.actor
        return out

    def choose(self, e: Entry) -> int:
        """The action id of entry e on the current game (a face-down discard: the lowest legal hidden one)."""
        if e.action != "discard:?":
            return self.game.string_to_action(e.action)
        nc = self.deck.n_cards
        for a in self.v.legal_actions():
            if nc <= a < 2 * nc and _bit(self.tb, a - nc)[0] == 1:  # a trump or EX (word 0) would be shown
                return a
        return -1

    def try_step(self, k: int) -> bool:
        """Apply entry k on the current game; True if legal and the seat sees exactly the entry (an illegal
        action changes nothing)."""
        e = self.entries[k]
        v = self.v
        if v.current_player() != e.actor:
            return False
        a = self.choose(e)
        if a < 0 or not engine.is_legal(v.state._env.state, 0, a, self.tb):
            return False
        v.apply(a)
        last = v.log[-1]  # this step's entry (a string seen alike by all, or one per seat)
        seen = last if isinstance(last, str) else last[self.seat]
        return seen == e.text or _canonical_views_entry(self.game, seen) == e.text

    def swap(self, k: int, tries: int = 4) -> bool:
        """The cheap repair of a card play by another seat whose card is elsewhere on the current deal: trade it
        for one of his cards that may go where it was (the exclusions), then the step. (Not for Mineo's called
        trump, whose holder decides hidden sides.)"""
        e = self.entries[k]
        if e.actor == self.seat or not e.action.startswith("play:"):
            return False
        tb, q = self.tb, e.actor
        st = self.v.state._env.state
        cards = st.cards[0]
        c = self.deck.card_id(e.action[5:])
        called = int(st.meta[0, CALLED])
        if c == called or _holds(cards, HAND + q, tb, c) or _holds(cards, EXCLUDED + q, tb, c):
            return False
        others = [HAND + r for r in range(self.n) if r not in (q, self.seat)]
        r = _find(cards, tb, c, others + [DISCARDED, STOCK])
        if r < 0:
            return False
        later = self.later_plays(k + 1)
        barred = set(self.deck.cards_of(cards[EXCLUDED + r - HAND])) if r in others else set()
        done = 0
        for d in self.deck.cards_of(cards[HAND + q]):
            if done >= tries:
                break
            if d == called or later.get(d) == q or d in barred:
                continue
            if r == DISCARDED and self.deck.word[d] == 0:
                continue  # a trump discarded would have been shown
            done += 1
            _move(cards, tb, c, r, HAND + q)
            _move(cards, tb, d, HAND + q, r)
            if self.try_step(k):  # an illegal card play changes nothing
                return True
            _move(cards, tb, d, r, HAND + q)
            _move(cards, tb, c, HAND + q, r)
        return False

    def redraw(self, k: int) -> bool:
        """Redraw the hidden cards before step k until the step passes (module docstring, 2.): first keeping
        the cards each seat plays later in his hand, then with only this step's own constraints."""
        return self._redraw(k, self.later_plays(k)) or self._redraw(k, self.later_plays(k, k + 1))

    def _redraw(self, k: int, pins: dict[int, int]) -> bool:
        e = self.entries[k]
        v = self.v
        st, tb = v.state._env.state, self.tb
        src = _copy(st)
        phase = int(st.meta[0, PHASE])
        if phase == PLAY and e.action.startswith("play:") and e.actor != self.seat:
            c = self.deck.card_id(e.action[5:])
            # the exclusions the core draws from this play (public facts about the actor's other cards)
            t = _copy(st)
            r = _find(t.cards[0], tb, c, [HAND + q for q in range(self.n) if q != e.actor] + [DISCARDED, STOCK])
            if r >= 0:
                _move(t.cards[0], tb, c, r, HAND + e.actor)
            engine.step_row(t, 0, self.game.string_to_action(e.action), tb)
            w, b = _bit(tb, c)
            for q in range(self.n):
                src.cards[0, EXCLUDED + q] |= t.cards[0, EXCLUDED + q]
            src.cards[0, EXCLUDED + e.actor, w] &= st.cards[0, EXCLUDED + e.actor, w] | ~b
        for e2 in self.entries[k:k + 1]:
            for key, ids in e2.cards.items():
                if key.startswith("show") and int(key[4:]) != self.seat:
                    for c in ids:
                        pins.setdefault(c, int(key[4:]))
        for c, q in pins.items():
            if q == self.seat:
                continue
            w, b = _bit(tb, c)
            for r in range(self.n):
                if r != q and r != self.seat:
                    src.cards[0, EXCLUDED + r, w] |= b
        in_order = self.stock_in_order()  # the stock's cards shown from now on stay in it, in the order shown
        for c in in_order:
            w, b = _bit(tb, c)
            if not _holds(st.cards[0], STOCK, tb, c):
                continue  # shown and taken, or given out: public (the rebuilt deal holds the others in its stock)
            for r in range(self.n):
                if r != self.seat:
                    src.cards[0, EXCLUDED + r, w] |= b
        saved = v.__deepcopy__({})
        for attempt in range(_DRAWS // _DRAW_BATCH):
            if self.budget is not None:
                self.budget.check()
            try:
                dst = determinize(src, 0, self.seat, tb, n=_DRAW_BATCH, seed=self.seed + 7919 * k + attempt,
                                 parallel=False)
            except RuntimeError:
                return False
            for j in range(_DRAW_BATCH):
                if not self._pin(dst, j, pins) or not self._order_stock(dst, j, in_order):
                    continue
                dst.cards[j, EXCLUDED:EXCLUDED + 4] = st.cards[0, EXCLUDED:EXCLUDED + 4]
                cand = saved.__deepcopy__({})
                row = cand.state._env.state
                row.meta[0] = dst.meta[j]
                row.cards[0] = dst.cards[j]
                row.deck[0] = dst.deck[j]
                self.v = cand
                if self.try_step(k):
                    return True
        self.v = saved
        return False

    def stock_in_order(self) -> list[int]:
        """The stock's cards in the order the whole view shows them, where that order is the deal's (the family's
        STOCK_IN_ORDER: tarok's talon laid out, klop's cards given to the first tricks); else none."""
        if not self.game.spec.rules.STOCK_IN_ORDER:
            return []
        shown: list[int] = []
        for e in self.entries:
            shown += [c for c in e.cards.get("stock", []) if c not in shown]
        return shown

    def _order_stock(self, dst: Any, j: int, in_order: list[int]) -> bool:
        """Lay sample j's stock places out as the view shows them (``in_order`` first, then its other cards in
        the order they lie); False if a card shown later is not in its stock (the draw cannot explain the view)."""
        if not in_order:
            return True
        tb = self.tb
        n, h, k = int(tb.params[P_PLAYERS]), int(tb.params[P_HAND]), int(tb.params[P_STOCK])
        region = [int(c) for c in dst.deck[j, n * h : n * h + k]]
        if sorted(region) != sorted(set(region)) or not set(in_order) <= set(region):
            return False
        dst.deck[j, n * h : n * h + k] = in_order + [c for c in region if c not in in_order]
        return True

    def _pin(self, dst: Any, j: int, pins: dict[int, int]) -> bool:
        """Move each pinned card out of the hidden stock / discard into its seat's hand (swapping a card that
        may go there); False if impossible."""
        tb = self.tb
        cards = dst.cards[j]
        pinned = set(pins)
        for c, q in pins.items():
            if q == self.seat or _holds(cards, HAND + q, tb, c):
                continue
            r = _find(cards, tb, c, [HAND + s for s in range(self.n)] + [DISCARDED, STOCK])
            if r < 0 or r < HAND + self.n or _holds(cards, EXCLUDED + q, tb, c):
                return False  # not dealt, in another hand, or known not to be his: this draw cannot be fixed
            swap = -1
            for d in range(self.deck.n_cards):
                if d in pinned or not _holds(cards, HAND + q, tb, d):
                    continue
                if r == DISCARDED and _bit(tb, d)[0] == 0:
                    continue  # a trump discarded would have been shown
                swap = d
                break
            if swap < 0:
                return False
            _move(cards, tb, c, r, HAND + q)
            _move(cards, tb, swap, HAND + q, r)
        return True


def _copy(st: Any) -> Any:
    from ..core.state import copy_state

    return copy_state(st)


class ViewCache:
    """The last rebuilt game, so that a request that extends the previous one's history (the usual case: one
    request per decision of a deal) replays only the new entries."""

    def __init__(self) -> None:
        self.key: tuple[Any, ...] | None = None
        self.history: list[Any] = []
        self.entries: list[Entry] = []  # the history parsed
        self.views: Views | None = None


def rebuild(game: Game, seat: int, hand: list[str], history: list[str], seed: int = 0,
            cache: ViewCache | None = None, budget: Budget | None = None) -> Views:
    """Views of a legal game that shows ``seat`` the view (``hand`` as dealt, then ``history``); ViewError if
    none is found; :class:`OverBudget` when ``budget`` runs out first (the cache is then left to start afresh).
    Deterministic for the same arguments (and the same cache contents). With a ``cache``, the Views returned is
    the cache's own: read it, do not step it."""
    n = game.num_players
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
        raise ViewError(f"seat must be 0..{n - 1}, got {seat!r}")
    if not isinstance(hand, list):
        raise ViewError("hand must be a list of card names")
    own = _cards(game, ",".join(str(x) for x in hand), "hand")
    if len(own) != len(hand):
        raise ViewError("hand: a card is named twice")
    if not isinstance(history, list):
        raise ViewError("history must be a list of entries such as '1:play:KC'")
    key = (game.variant, tuple(sorted(game.options.items())), seat, tuple(own), seed)
    start = 0
    if cache is not None and cache.key == key and cache.views is not None \
            and history[: len(cache.history)] == cache.history:
        start = len(cache.history)
    parsed = cache.entries[:start] if start and cache is not None else []
    entries = parsed + [_parse_entry(game, raw, f"history[{k}]") for k, raw in enumerate(history) if k >= start]
    if start:  # continue the cached game in place (the cache is invalid until this rebuild succeeds)
        assert cache is not None and cache.views is not None
        v = cache.views
        cache.key = None
    else:
        drawn: Views | None = None
        for k in range(100):  # a fill that ends the deal at once (French: a petit sec) is drawn again, and one
            deal = _initial_deal(game, seat, own, entries, seed + k)  # the rules would not deal (tarok: a hand
            if game.spec.refused_hand(np.asarray([deal])) is not None:  # without a tarok)
                continue
            drawn = Views(game, deal)
            if not drawn.is_terminal():
                break
        if drawn is None:
            raise ViewError(f"hand: no deal of {game.variant} in 100 draws gives seat {seat} this hand and history")
        v = drawn
        expect_hand = _cards(game, v.view(seat)[0].split(";")[0][5:], "hand")
        if sorted(expect_hand) != sorted(own):
            raise ViewError(f"hand: seat {seat} is dealt {len(expect_hand)} cards in {game.variant}, "
                            f"got {len(own)}")
    rb = _Rebuilder(game, seat, entries, v, seed, budget)
    try:
        _replay(rb, entries, start, history, budget)
    except ViewError:
        if not start:
            raise
        # the new entries tell something the cached deal did not place (the seat's second-round cards, a
        # shown stock): rebuild from the deal
        return rebuild(game, seat, hand, history, seed, None if cache is None else _reset(cache), budget)
    if cache is not None:
        cache.key, cache.history, cache.views = key, list(history), rb.v
        cache.entries = entries
    return rb.v


def _reset(cache: ViewCache) -> ViewCache:
    cache.key, cache.history, cache.views, cache.entries = None, [], None, []
    return cache


def _replay(rb: _Rebuilder, entries: list[Entry], start: int, history: list[Any],
            budget: Budget | None = None) -> None:
    """Steps start.. of the view on rb's game (module docstring, 2.); ViewError naming the failing entry,
    OverBudget when ``budget`` runs out (3.)."""
    game, seat = rb.game, rb.seat
    for k in range(start, len(entries)):
        if budget is not None:
            budget.check()
        e = entries[k]
        if rb.v.is_terminal():
            raise ViewError(f"{e.where}: the deal is already over")
        cur = rb.v.current_player()
        if cur != e.actor:
            raise ViewError(f"{e.where}: seat {e.actor} acts, but it is seat {cur}'s turn")
        if e.actor == seat and e.action == "discard:?":
            raise ViewError(f"{e.where}: your own discard must name its card")
        quiet = e.action.startswith("play:")  # a card play reveals nothing: if illegal, nothing changed
        saved = rb.v if quiet else rb.v.__deepcopy__({})
        if rb.try_step(k):
            continue
        rb.v = saved
        if start and e.cards:  # a reveal the cached deal did not place: rebuild from the deal (rebuild)
            raise ViewError(f"{e.where}: not explained by the cached deal")
        if e.actor == seat:
            a = game.string_to_action(e.action)
            if a not in set(saved.legal_actions()):
                raise ViewError(f"{e.where}: " + saved.illegal_message(a))
        if not rb.swap(k) and not rb.redraw(k):
            raise ViewError(f"{e.where}: {history[k]!r} is impossible: no deal consistent with the view "
                            f"before it allows it")
