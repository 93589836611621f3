"""The engine: one set of row kernels and batch drivers for every variant.

A variant is data (:class:`~tarocchi_rl.core.tables.RuleTables`) plus a few per-phase kernels in its family
module (the family contract, :mod:`tarocchi_rl.variants.contract`); the functions here deal, list legal
actions, apply actions, resolve tricks and settle by dispatching on the phase and, through the generated family
dispatch (:mod:`tarocchi_rl.variants.dispatch`), on ``params[P_FAMILY]``; no family is named here. The trick
itself is the shared kernel of :mod:`tarocchi_rl.core.trick`.

Action ids (C = cards in the deck): ``0..C-1`` play card c, ``C..2C-1`` discard card c - C, then the
variant's special actions from ``2C`` (pass first; names per variant). Legal actions are computed as sets
(``legal_sets``): two two-word card sets (play, discard) and ``flags`` (bit k <=> special action k).

Batch drivers are a prange loop calling one non-inlined ``*_row`` function per game. A row function must not
be inlined into a prange body: Numba's parfor pass then hoists state reads out of the loop (seen here: the
RNG state read once for a whole deal, and lost card moves). Each driver a game API calls has a serial twin
(``*_serial``, a plain loop) for small batches; :mod:`tarocchi_rl.engine.loops` picks one.
"""

import numpy as np
from numba import njit, prange

from ..bits import U0, bit, bounded, kth_bit, lowest_bit, popcount, splitmix_next
from ..cards import FOOL
from ..core.deal import give, shuffle_deck
from ..core.parallel import game_index
from ..core.phases import DISCARD, DONE, PLAY
from ..core.state import (
    BEST_BIT,
    BEST_SEAT,
    BEST_TRUMP,
    BONUS,
    CUR,
    DISCARDED,
    DISCARDS_LEFT,
    EX_LAST,
    EX_PLAYER,
    EX_TRICK_WINNER,
    HAND,
    LAST_WINNER,
    LED_SUIT,
    N_META,
    PAYOFF,
    PHASE,
    PLAYED,
    POINTS,
    SHOWN,
    SIDE,
    STOCK,
    TRICK,
    TRICK_COUNT,
    TRICK_LEADER,
    TRICK_NUM,
    TRICKS_WON,
    WON,
)
from ..core.tables import (
    CARD_BIT,
    CARD_SUIT,
    CARD_WORD,
    EX_LAST_IF_LED,
    MK_CAPTURE_BONUS,
    MK_DISCARD_FALLBACK,
    MK_DISCARD_FORBIDDEN,
    MK_EX,
    MK_SUIT,
    MK_TRICK_HOOK,
    MK_TRUMPS,
    P_CAPTURE_BONUS,
    P_CARDS,
    P_DISCARD_FALLBACK_EMPTY,
    P_EX_LAST,
    P_FIRST_CARD_PHASE,
    P_HAND,
    P_N_SPECIAL,
    P_PLAYERS,
    P_STOCK,
    P_TRICK_HOOK_EVERY,
    P_TRICKS,
    has_play_rules,
)
from ..core.trick import (
    add_excluded,
    add_to_trick,
    card_mask,
    clear_trick,
    excuse_last_trick_to,
    legal_cards,
    play_exclusions,
    play_legal,
    trick_update,
)
from ..variants import dispatch as family

# ----------------------------------------------------------------------------------------------------------
# dealing


@njit(cache=True)
def shuffle_row(st, i, tb):
    """Fisher-Yates shuffle of the deck's dense ids into ``st.deck[i]`` with the game's own RNG
    (:func:`tarocchi_rl.core.deal.shuffle_deck`)."""
    shuffle_deck(st, i, tb)


@njit(cache=True)
def reset_row(st, i, tb):
    """Start game ``i`` on the deal in ``st.deck[i]`` (hands by seat, then the stock): clear the state,
    hand out the cards and enter the variant's first phase."""
    m = st.meta[i]
    for k in range(N_META):
        m[k] = -1
    for k in range(st.cards.shape[1]):
        st.cards[i, k, 0] = U0
        st.cards[i, k, 1] = U0
    for s in range(4):
        m[SIDE + s] = 1
        m[TRICKS_WON + s] = 0
        m[PAYOFF + s] = 0
    for k in range(16):
        m[BONUS + k] = 0
    for k in range(4):
        m[POINTS + k] = 0
    m[TRICK_NUM] = 0
    m[EX_LAST] = 0
    m[DISCARDS_LEFT] = 0
    clear_trick(st, i, np.int64(0))  # (np.int64: a literal argument would compile a specialisation of its own)
    n = tb.params[P_PLAYERS]
    h = tb.params[P_HAND]
    for k in range(tb.params[P_STOCK]):
        give(st, i, STOCK, st.deck[i, n * h + k], tb)
    family.start_row(st, i, tb)


# ----------------------------------------------------------------------------------------------------------
# legality


@njit(cache=True, inline="always")
def legal_sets(st, i, tb):
    """Legal actions of game ``i`` as sets: (play0, play1, discard0, discard1, flags).

    play*/discard* are two-word card sets (uint64); bit k of ``flags`` (int) means special action k.
    Nothing is legal once the game is done. In trick play the family's ``play_rules`` narrows the shared rules'
    cards where the family has them (has_play_rules); in the discard, MK_DISCARD_FALLBACK cards join the allowed
    ones when fewer of those than the discards left remain (when none remains: params[P_DISCARD_FALLBACK_EMPTY]).
    """
    m = st.meta[i]
    ph = m[PHASE]
    if ph == PLAY:
        l0, l1 = play_legal(st, i, tb)
        if has_play_rules(tb):  # a constant of the tables' type: the other families compile no trace of it
            l0, l1 = family.play_rules(st, i, l0, l1, tb)
        return l0, l1, U0, U0, 0
    if ph == DISCARD:
        p = m[CUR]
        h0 = st.cards[i, HAND + p, 0]
        h1 = st.cards[i, HAND + p, 1]
        a0 = h0 & ~tb.masks[MK_DISCARD_FORBIDDEN, 0]
        a1 = h1 & ~tb.masks[MK_DISCARD_FORBIDDEN, 1]
        need = 1 if tb.params[P_DISCARD_FALLBACK_EMPTY] != 0 else m[DISCARDS_LEFT]
        if popcount(a0) + popcount(a1) < need:
            a0 |= h0 & tb.masks[MK_DISCARD_FALLBACK, 0]
            a1 |= h1 & tb.masks[MK_DISCARD_FALLBACK, 1]
        return U0, U0, a0, a1, 0
    if ph == DONE:
        return U0, U0, U0, U0, 0
    return U0, U0, U0, U0, family.legal_flags(st, i, tb)


@njit(cache=True)
def _set_to_actions(x, word, base, tb, out_row):
    while x != U0:
        out_row[base + tb.pos_to_card[word * 64 + lowest_bit(x)]] = True
        x &= x - np.uint64(1)


@njit(cache=True)
def legal_mask_row(st, i, tb, out_row):
    """Write game ``i``'s legal actions into ``out_row`` (bool[n_actions], cleared first)."""
    out_row[:] = False
    p0, p1, d0, d1, flags = legal_sets(st, i, tb)
    c = tb.params[P_CARDS]
    w0, w1, play = np.int64(0), np.int64(1), np.int64(0)  # (not literals: each would compile a specialisation)
    _set_to_actions(p0, w0, play, tb, out_row)
    _set_to_actions(p1, w1, play, tb, out_row)
    _set_to_actions(d0, w0, c, tb, out_row)
    _set_to_actions(d1, w1, c, tb, out_row)
    for k in range(tb.params[P_N_SPECIAL]):
        if flags & (1 << k):
            out_row[2 * c + k] = True


@njit(cache=True)
def is_legal(st, i, a, tb):
    """Whether action id ``a`` is legal in game ``i``."""
    c = tb.params[P_CARDS]
    if a < 0 or a >= 2 * c + tb.params[P_N_SPECIAL]:
        return False
    p0, p1, d0, d1, flags = legal_sets(st, i, tb)
    if a >= 2 * c:
        return (flags & (1 << (a - 2 * c))) != 0
    w0, w1 = card_mask(a - c if a >= c else a, tb)
    if a >= c:
        return ((w0 & d0) | (w1 & d1)) != U0
    return ((w0 & p0) | (w1 & p1)) != U0


@njit(cache=True, inline="always")
def _pick(x, word, k, base, tb):
    return base + tb.pos_to_card[word * 64 + kth_bit(x, k)]


@njit(cache=True, inline="always")
def random_action(st, i, tb):
    """A uniformly random legal action of game ``i``, drawn from the game's own RNG (-1 when done)."""
    p0, p1, d0, d1, flags = legal_sets(st, i, tb)
    n0 = popcount(p0)
    n1 = popcount(p1)
    n2 = popcount(d0)
    n3 = popcount(d1)
    nf = popcount(np.uint64(flags))
    n = n0 + n1 + n2 + n3 + nf
    if n == 0:
        return -1
    r, z = splitmix_next(st.rng[i])
    st.rng[i] = r
    k = bounded(z, n)
    c = tb.params[P_CARDS]
    if k < n0:
        return _pick(p0, 0, k, 0, tb)
    k -= n0
    if k < n1:
        return _pick(p1, 1, k, 0, tb)
    k -= n1
    if k < n2:
        return _pick(d0, 0, k, c, tb)
    k -= n2
    if k < n3:
        return _pick(d1, 1, k, c, tb)
    k -= n3
    return 2 * c + kth_bit(np.uint64(flags), k)


@njit(cache=True)
def random_action_row(st, i, tb):
    """random_action, not inlined (for prange drivers)."""
    return random_action(st, i, tb)


# ----------------------------------------------------------------------------------------------------------
# transitions


@njit(cache=True, inline="always")
def discardable(tb):
    """The cards that are not forbidden in the discard: the two-word set (uint64, uint64)."""
    f0 = tb.masks[MK_DISCARD_FORBIDDEN, 0]
    f1 = tb.masks[MK_DISCARD_FORBIDDEN, 1]
    s1 = tb.masks[MK_SUIT, 1] | tb.masks[MK_SUIT + 1, 1] | tb.masks[MK_SUIT + 2, 1] | tb.masks[MK_SUIT + 3, 1]
    return (tb.masks[MK_TRUMPS, 0] | tb.masks[MK_EX, 0]) & ~f0, s1 & ~f1


@njit(cache=True)
def _discard(st, i, c, tb):
    m = st.meta[i]
    p = m[CUR]
    w = tb.card[c, CARD_WORD]
    mk = bit(tb.card[c, CARD_BIT])
    st.cards[i, HAND + p, w] &= ~mk
    st.cards[i, DISCARDED, w] |= mk
    if w == 0:
        st.cards[i, SHOWN, 0] |= mk  # a discarded trump is shown to all
    m[DISCARDS_LEFT] -= 1
    if m[DISCARDS_LEFT] == 0:
        if (st.cards[i, SHOWN, 0] & tb.masks[MK_TRUMPS, 0]) != U0:
            d0, d1 = discardable(tb)  # a trump went: he had fewer discardable cards than discards left
            add_excluded(st, i, p, d0, d1)
        family.after_discard(st, i, tb)


@njit(cache=True)
def _add_family_exclusions(st, i, card, tb):
    """Record the cards the seat to act cannot hold by the family's own play rules, its card ``card`` played
    (before the card joins the trick; for a family with play_rules)."""
    e0, e1 = family.play_exclusions(st, i, card, tb)
    if (e0 | e1) != U0:
        add_excluded(st, i, st.meta[i, CUR], e0, e1)


@njit(cache=True)
def _shared_exclusions_hold(st, i, card, tb):
    """Whether playing ``card`` shows what the shared trick rules would say of the hand (for a family with
    play_rules): not when the family's rules allow a card the shared rules do not (tarok's Pagat on the Mond and
    the Skis), which tells nothing. A card that neither allows (a rebuilt view trying a sample's step) keeps
    them: the play is known to be legal, so the hand it was made from holds no card that would forbid it."""
    l0, l1 = play_legal(st, i, tb)
    c0, c1 = card_mask(card, tb)
    if ((c0 & l0) | (c1 & l1)) != U0:
        return True
    f0, f1 = family.play_rules(st, i, l0, l1, tb)
    return ((c0 & f0) | (c1 & f1)) == U0


@njit(cache=True)
def step_row(st, i, a, tb):
    """Apply legal action id ``a`` to game ``i`` (legality is the caller's check)."""
    m = st.meta[i]
    ph = m[PHASE]
    c = tb.params[P_CARDS]
    if ph == PLAY:
        tells = True
        if has_play_rules(tb):
            _add_family_exclusions(st, i, a, tb)
            tells = _shared_exclusions_hold(st, i, a, tb)
        if add_to_trick(st, i, a, tb, tells):
            resolve_trick(st, i, tb)
        elif m[TRICK_NUM] == 0 and tb.params[P_FIRST_CARD_PHASE] >= 0:
            m[PHASE] = tb.params[P_FIRST_CARD_PHASE]  # the next seat's first card: his declaration first
        return
    if ph == DISCARD:
        _discard(st, i, a - c, tb)
        return
    family.step_special(st, i, a - 2 * c, tb)


@njit(cache=True)
def _trick_rules(st, i, winner, last, tb):
    """The family's trick_won, behind a call: its inlined dispatch's reference counts stay out of resolve_trick,
    which runs every trick (the hook, a few tricks per deal)."""
    return family.trick_won(st, i, winner, last, tb)


@njit(cache=True)
def resolve_trick(st, i, tb):
    """The trick is complete: the winner takes the cards (EX by the variant's rule, P_EX_LAST in the last trick:
    core.trick.excuse_last_trick_to; capture bonuses: MK_CAPTURE_BONUS), next trick or settle. The family's
    trick rules (its ``trick_won``: who takes the last trick, bonuses) run for the last trick (first: it may give
    the trick to another seat) and for a trick holding a trump of masks[MK_TRICK_HOOK] (after the cards are
    taken) only, never where that mask is empty: a call through the family dispatch costs more than a trick.
    Where params[P_TRICK_HOOK_EVERY] is 1 they run for every trick, before its cards are taken, and may give any
    trick to another seat and end the deal before its last trick (by setting the phase to DONE)."""
    m = st.meta[i]
    n = tb.params[P_PLAYERS]
    last = m[TRICK_NUM] == tb.params[P_TRICKS] - 1
    winner = np.int64(m[BEST_SEAT])  # (int64 as trick_won returns it: one signature of the hook)
    watch = tb.masks[MK_TRICK_HOOK, 0]  # empty: the family has no trick rules of its own
    every = tb.params[P_TRICK_HOOK_EVERY] != 0
    if every or (last and watch != U0):
        winner = _trick_rules(st, i, winner, last, tb)
    hooked = False
    wside = m[SIDE + winner]
    capture = tb.masks[MK_CAPTURE_BONUS, 0]
    for s in range(n):
        c = m[TRICK + s]
        w = tb.card[c, CARD_WORD]
        mk = bit(tb.card[c, CARD_BIT])
        if w == 0 and (watch & mk) != U0:
            hooked = True
        if tb.card[c, CARD_SUIT] == FOOL:
            m[EX_TRICK_WINNER] = winner
            if last and (tb.params[P_EX_LAST] != EX_LAST_IF_LED or m[TRICK_LEADER] == s):
                m[EX_LAST] = 1
                st.cards[i, WON + excuse_last_trick_to(st, i, s, winner, tb), 0] |= mk
            continue
        st.cards[i, WON + winner, w] |= mk
        if w == 0 and (capture & mk) != U0 and m[SIDE + s] != wside:
            m[BONUS + 8 * wside + tb.params[P_CAPTURE_BONUS]] += 1
    if hooked and not last and not every:
        _trick_rules(st, i, winner, last, tb)  # (before the last trick, trick_won keeps the winner)
    m[TRICKS_WON + winner] += 1
    m[TRICK_NUM] += 1
    if last or m[PHASE] == DONE:  # (DONE before the last trick: the family's trick rules ended the deal)
        m[LAST_WINNER] = winner
        settle_row(st, i, tb)
    else:
        clear_trick(st, i, winner)


@njit(cache=True)
def settle_row(st, i, tb):
    """Count the deal and set the payoffs (the family's settlement)."""
    st.meta[i, PHASE] = DONE
    family.settle(st, i, tb)


# ----------------------------------------------------------------------------------------------------------
# the fused random rollout


@njit(cache=True)
def _stepped_playout_row(st, i, tb):
    """random_playout_row where the family narrows the legal cards (has_play_rules): one card at a time,
    as random_action draws it; behind a call so that the register loop below keeps its code."""
    plays = 0
    while st.meta[i, PHASE] == PLAY:
        step_row(st, i, random_action(st, i, tb), tb)
        plays += 1
    return plays


@njit(cache=True)
def random_playout_row(st, i, tb):
    """Random legal card play in game ``i`` from the current position while the phase is PLAY.

    The hot loop of rollouts: the trick lives in registers and goes back to the state when complete (or, in
    the first trick, when the next seat has a declaration to decide first: the phase becomes the tables'
    P_FIRST_CARD_PHASE and this returns). Draws from the game's RNG exactly as ``random_action`` would;
    returns the cards played.
    """
    m = st.meta[i]
    n = tb.params[P_PLAYERS]
    plays = 0
    if has_play_rules(tb):
        return _stepped_playout_row(st, i, tb)
    while m[PHASE] == PLAY:
        first_card_phase = tb.params[P_FIRST_CARD_PHASE] if m[TRICK_NUM] == 0 else -1
        p = m[CUR]
        k = m[TRICK_COUNT]
        led, bs, bt, bb = m[LED_SUIT], m[BEST_SEAT], m[BEST_TRUMP], m[BEST_BIT]
        r = st.rng[i]
        while k < n:
            h0 = st.cards[i, HAND + p, 0]
            h1 = st.cards[i, HAND + p, 1]
            l0, l1 = legal_cards(h0, h1, k, led, bt, bb, tb)
            n0 = popcount(l0)
            r, z = splitmix_next(r)
            j = bounded(z, n0 + popcount(l1))
            if j < n0:
                b = kth_bit(l0, j)
                mk = bit(b)
                c = tb.pos_to_card[b]
                st.cards[i, HAND + p, 0] = h0 & ~mk
                st.cards[i, PLAYED + p, 0] |= mk
                if tb.card[c, CARD_SUIT] == FOOL:
                    m[EX_PLAYER] = p
            else:
                b = kth_bit(l1, j - n0)
                mk = bit(b)
                c = tb.pos_to_card[64 + b]
                st.cards[i, HAND + p, 1] = h1 & ~mk
                st.cards[i, PLAYED + p, 1] |= mk
            if k > 0:
                e0, e1 = play_exclusions(c, k, led, bt, bb, tb)
                if (e0 | e1) != U0:
                    add_excluded(st, i, p, e0, e1)
            m[TRICK + p] = c
            led, bs, bt, bb = trick_update(c, p, led, bs, bt, bb, tb)
            k += 1
            plays += 1
            p = p + 1 if p + 1 < n else 0
            if first_card_phase >= 0 and k < n:  # trick 1: the next seat's declaration before his card
                st.rng[i] = r
                m[TRICK_COUNT], m[LED_SUIT], m[BEST_SEAT], m[BEST_TRUMP], m[BEST_BIT] = k, led, bs, bt, bb
                m[CUR] = p
                m[PHASE] = first_card_phase
                return plays
        st.rng[i] = r
        m[TRICK_COUNT], m[LED_SUIT], m[BEST_SEAT], m[BEST_TRUMP], m[BEST_BIT] = k, led, bs, bt, bb
        m[CUR] = (p + n - 1) % n  # as add_to_trick leaves it: the trick's last player
        resolve_trick(st, i, tb)
    return plays


@njit(cache=True)
def rollout_row(st, i, tb, deals, payoff_sum, counts):
    """Game ``i`` plays ``deals`` complete random deals; sums payoffs and counts [deals, card plays]."""
    c = tb.params[P_CARDS]
    for _ in range(deals):
        shuffle_row(st, i, tb)
        reset_row(st, i, tb)
        plays = 0
        while st.meta[i, PHASE] != DONE:
            if st.meta[i, PHASE] == PLAY:
                plays += random_playout_row(st, i, tb)
            else:
                a = random_action(st, i, tb)
                if a < c:
                    plays += 1
                step_row(st, i, a, tb)
        for s in range(tb.params[P_PLAYERS]):
            payoff_sum[i, s] += st.meta[i, PAYOFF + s]
        counts[i, 0] += 1
        counts[i, 1] += plays


# ----------------------------------------------------------------------------------------------------------
# batch drivers


@njit(cache=True)
def new_deal_row(st, i, tb):
    shuffle_row(st, i, tb)
    reset_row(st, i, tb)


@njit(cache=True, parallel=True)
def reset_batch(st, tb, shuffle):
    """Reset every game; with ``shuffle`` a new deal is drawn from each game's RNG first."""
    for i_ in prange(st.meta.shape[0]):
        i = game_index(i_)
        if shuffle:
            new_deal_row(st, i, tb)
        else:
            reset_row(st, i, tb)


@njit(cache=True)
def reset_serial(st, tb, shuffle):
    """reset_batch on the calling thread."""
    for i in range(st.meta.shape[0]):
        if shuffle:
            new_deal_row(st, i, tb)
        else:
            reset_row(st, i, tb)


@njit(cache=True, parallel=True)
def legal_mask_batch(st, tb, out):
    """out: bool[B, n_actions] legal actions of every game (all False for games that are done)."""
    for i_ in prange(st.meta.shape[0]):
        i = game_index(i_)
        legal_mask_row(st, i, tb, out[i])


@njit(cache=True)
def legal_mask_serial(st, tb, out):
    """legal_mask_batch on the calling thread."""
    for i in range(st.meta.shape[0]):
        legal_mask_row(st, i, tb, out[i])


@njit(cache=True)
def first_illegal(st, actions, tb):
    """Index of the first game (not done) whose action is illegal, or -1."""
    for i in range(st.meta.shape[0]):
        if st.meta[i, PHASE] != DONE and not is_legal(st, i, actions[i], tb):
            return i
    return -1


@njit(cache=True)
def step_one(st, i, a, tb, auto_reset, done_out, payoff_out):
    """step_row for game ``i`` with the done / payoff bookkeeping of step_batch (and its auto-reset)."""
    done_out[i] = False
    for s in range(4):
        payoff_out[i, s] = 0
    if st.meta[i, PHASE] == DONE:
        return
    step_row(st, i, a, tb)
    if st.meta[i, PHASE] == DONE:
        done_out[i] = True
        for s in range(4):
            payoff_out[i, s] = st.meta[i, PAYOFF + s]
        if auto_reset:
            new_deal_row(st, i, tb)
            while auto_reset and st.meta[i, PHASE] == DONE:  # a deal annulled at once (French petit sec)
                new_deal_row(st, i, tb)


@njit(cache=True, parallel=True)
def step_batch(st, actions, tb, auto_reset, done_out, payoff_out):
    """Apply ``actions`` (int64[B]) to every game not done.

    done_out : bool[B]       set True for games that ended with this step
    payoff_out : int32[B, 4] their payoffs (0 elsewhere)
    With ``auto_reset`` a game that ends is immediately re-dealt from its RNG.
    """
    for i_ in prange(st.meta.shape[0]):
        i = game_index(i_)
        step_one(st, i, actions[i], tb, auto_reset, done_out, payoff_out)


@njit(cache=True)
def step_serial(st, actions, tb, auto_reset, done_out, payoff_out):
    """step_batch on the calling thread."""
    for i in range(st.meta.shape[0]):
        step_one(st, i, actions[i], tb, auto_reset, done_out, payoff_out)


@njit(cache=True, parallel=True)
def random_actions_batch(st, tb, out):
    """out: int64[B] a uniformly random legal action per game (-1 for games done), from each game's RNG."""
    for i_ in prange(st.meta.shape[0]):
        i = game_index(i_)
        out[i] = random_action_row(st, i, tb)


@njit(cache=True)
def random_actions_serial(st, tb, out):
    """random_actions_batch on the calling thread."""
    for i in range(st.meta.shape[0]):
        out[i] = random_action_row(st, i, tb)


@njit(cache=True, parallel=True)
def rollout_random_batch(st, tb, deals_per_game, payoff_sum, counts):
    """The fused random-play kernel: each game plays ``deals_per_game`` complete random deals.

    payoff_sum : int64[B, 4]   payoffs summed over the deals played by each game
    counts : int64[B, 2]       [deals, card plays] per game
    """
    for i_ in prange(st.meta.shape[0]):
        i = game_index(i_)
        rollout_row(st, i, tb, deals_per_game, payoff_sum, counts)
