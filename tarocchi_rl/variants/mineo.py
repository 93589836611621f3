"""Tarocchi Siciliani di Mineo (RULES.md §1): tables, actions, phase kernels and settlement.

Phases (``st.phase``)

| code | phase      | who acts                         | legal actions                              |
|------|------------|----------------------------------|--------------------------------------------|
| 0    | EARLY      | seats 0..3 after 5 cards each    | pass, solo (first solo: doubled soloist)   |
| 1    | AUCTION    | seats 0..3, one turn each        | pass, solo, call (call only before a call) |
| 2    | DISCARD    | declarer, 3 times                | discard:<card> (restrictions of §1)        |
| 3    | SCOMMESSA  | declarer                         | pass, scommessa (holding T20 and EX)       |
| 4    | RIVANTO    | declarer+1, +2, +3               | pass, rivanto (opponents only)             |
| 5    | PLAY       | 15 tricks, declarer leads        | play:<card>                                |
| 6    | DONE       | -                                | -                                          |

Actions (``C = 63`` cards, dense ids of :mod:`tarocchi_rl.cards`)

| action id    | meaning              | string                         |
|--------------|----------------------|--------------------------------|
| 0 .. 62      | play card c          | ``play:KC``                    |
| 63 .. 125    | discard card c - 63  | ``discard:5D``                 |
| 126          | pass                 | ``bid:pass`` (bidding), ``pass`` |
| 127          | solo (vado solo)     | ``bid:solo``                   |
| 128          | call (chiamo)        | ``bid:call``                   |
| 129          | scommessa            | ``scommessa``                  |
| 130          | rivanto              | ``rivanto``                    |

Contracts (``st.contract``): 0 none, 1 call, 2 solo, 3 forced solo (the called trump was in the monte).
Commitments (``meta[COMMIT + k]``): k=0 scommessa said (0/1), k=1 seat that said rivanto (-1: none).
Bonuses (``meta[BONUS + 8*side + k]``, jochi per side, side 0 = declarer's): slots ``J_*`` below.
The deal (``st.deck``): seat p holds ``deck[15p : 15p+15]``, the first 5 being the early-round cards; the
monte is ``deck[60:63]``.
"""

from functools import cache

import numpy as np
from numba import njit, prange

from ..bits import U0, bit, bounded, kth_bit, lowest_bit, popcount, splitmix_next
from ..cards import EX_BIT, FOOL, MINEO_DECK
from ..core.state import (
    BEST_BIT,
    BEST_SEAT,
    BEST_TRUMP,
    BID,
    BONUS,
    CALLED,
    COMMIT,
    CONTRACT,
    CUR,
    DECLARER,
    DISCARDED,
    DISCARDS_LEFT,
    EARLY_BID,
    EX_LED_LAST,
    EX_PLAYER,
    EX_TRICK_WINNER,
    HAND,
    LAST_WINNER,
    LED_SUIT,
    MULT,
    N_META,
    PARTNER,
    PAYOFF,
    PHASE,
    PLAYED,
    POINTS,
    SHOWN,
    SIDE,
    STOCK,
    STOCK_SHOWN,
    TRICK,
    TRICK_COUNT,
    TRICK_LEADER,
    TRICK_NUM,
    TRICKS_WON,
    TURN,
    WON,
)
from ..core.tables import (
    CARD_BIT,
    CARD_SUIT,
    CARD_WORD,
    MK_ARIE,
    MK_DISCARD_FALLBACK,
    MK_DISCARD_FORBIDDEN,
    MK_EX,
    MK_GIOVE,
    MK_KINGS,
    MK_PIGLIATA,
    MK_SCOMMESSA,
    MK_SCOMMESSA_NEED,
    MK_TRUMPS,
    MK_VALUE,
    P_CARDS,
    P_DISCARDS,
    P_EARLY_SOLO,
    P_EX_LEAD_ANY,
    P_FIRST_ROUND,
    P_HAND,
    P_MUST_OVERTRUMP,
    P_N_VALUES,
    P_PLAYERS,
    P_STOCK,
    P_TRICKS,
    P_VALUE,
    make_tables,
)
from ..core.trick import add_to_trick, card_mask, clear_trick, legal_cards, play_legal, trick_update

NAME = "mineo"
DECK = MINEO_DECK
N_PLAYERS = 4
N_CARDS = 63
HAND_SIZE = 15
HAND_SIZES = (15, 15, 15, 15)  # the deal order of st.deck: these hands by seat, then the stock
STOCK_SIZE = 3
N_TRICKS = 15
DEFAULT_OPTIONS = {"early_solo": True}

# phases
EARLY, AUCTION, DISCARD, SCOMMESSA, RIVANTO, PLAY, DONE = range(7)
PHASE_NAMES = ("early", "auction", "discard", "scommessa", "rivanto", "play", "done")
# contracts
NONE, CALL, SOLO, FORCED_SOLO = range(4)
CONTRACT_NAMES = ("none", "call", "solo", "forced solo")
# actions
A_PLAY = 0
A_DISCARD = N_CARDS
A_PASS = 2 * N_CARDS
A_SOLO = A_PASS + 1
A_CALL = A_PASS + 2
A_SCOMMESSA = A_PASS + 3
A_RIVANTO = A_PASS + 4
N_ACTIONS = A_PASS + 5
# words stored in meta[EARLY_BID + s] / meta[BID + s]
BID_PASS, BID_SOLO, BID_CALL = 0, 1, 2
SPECIAL_ACTION_NAMES = ("pass", "solo", "call", "scommessa", "rivanto")
# flags returned by legal_sets: bit k <=> action A_PASS + k
F_PASS, F_SOLO, F_CALL, F_SCOMMESSA, F_RIVANTO = 1, 2, 4, 8, 16
# bonus slots (jochi)
J_RIMATURA, J_VANTO, J_RIVANTO, J_ARIE, J_PIGLIATA, J_RE, J_SCOMMESSA = range(7)
BONUS_NAMES = ("rimatura", "vanto", "rivanto", "arie", "pigliata", "re", "scommessa")
RIMATURA_THIRDS = 164
LAST_TRICK_THIRDS = 15
TOTAL_THIRDS = 327

_EXB = np.uint64(1) << np.uint64(EX_BIT)


def card_values():
    """Card-point value of each dense card: specials as RULES.md §1, 0 for scartine."""
    v = np.zeros(N_CARDS, np.int8)
    for c, name in enumerate(DECK.names):
        if name in ("T1", "T20", "EX"):
            v[c] = 10
        elif name in ("T16", "T17", "T18", "T19"):
            v[c] = 5
        elif not name.startswith("T"):
            v[c] = {"K": 5, "Q": 4, "N": 3, "J": 2}.get(name[0], 0)
    return v


@cache
def make_rule_tables(early_solo=True):
    """RuleTables for Mineo with its option ``early_solo`` (bool). Cached: treat the arrays as read-only."""
    trumps = [f"T{k}" for k in range(21)]
    kings = ["KC", "KD", "KS", "KB"]
    return make_tables(
        DECK,
        card_values(),
        masks={
            MK_TRUMPS: trumps,
            MK_EX: ["EX"],
            MK_KINGS: kings,
            MK_DISCARD_FORBIDDEN: trumps + kings + ["EX"],
            MK_DISCARD_FALLBACK: [f"T{k}" for k in range(2, 16)],
            MK_PIGLIATA: ["T16", "T17", "T18", "T19", "T1"],
            MK_ARIE: ["T16", "T17", "T18", "T19"],
            MK_GIOVE: ["T20"],
            MK_SCOMMESSA: ["T20", "T1", "EX"],
            MK_SCOMMESSA_NEED: ["T20", "EX"],
        },
        params={
            P_PLAYERS: N_PLAYERS,
            P_CARDS: N_CARDS,
            P_HAND: HAND_SIZE,
            P_STOCK: 3,
            P_TRICKS: N_TRICKS,
            P_DISCARDS: 3,
            P_MUST_OVERTRUMP: 0,
            P_EX_LEAD_ANY: 0,
            P_EARLY_SOLO: 1 if early_solo else 0,
            P_FIRST_ROUND: 5,
        },
    )


# ----------------------------------------------------------------------------------------------------------
# deal


@njit(cache=True, inline="always")
def _give(st, i, seat, card, tb):
    """Put dense ``card`` into ``seat``'s hand."""
    st.cards[i, HAND + seat, tb.card[card, CARD_WORD]] |= bit(tb.card[card, CARD_BIT])


@njit(cache=True)
def reset_row(st, i, tb):
    """Start game ``i`` on the deal already in ``st.deck[i]``: clear everything, hand out the cards."""
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
    m[POINTS] = 0
    m[POINTS + 1] = 0
    m[COMMIT] = 0
    m[CONTRACT] = NONE
    m[MULT] = 1
    m[STOCK_SHOWN] = 0
    m[DISCARDS_LEFT] = 0
    m[TURN] = 0
    m[TRICK_NUM] = 0
    m[EX_LED_LAST] = 0
    clear_trick(st, i, 0)
    first = tb.params[P_FIRST_ROUND] if tb.params[P_EARLY_SOLO] != 0 else HAND_SIZE
    for s in range(4):
        for k in range(first):
            _give(st, i, s, st.deck[i, HAND_SIZE * s + k], tb)
    for k in range(3):
        c = st.deck[i, 4 * HAND_SIZE + k]
        st.cards[i, STOCK, tb.card[c, CARD_WORD]] |= bit(tb.card[c, CARD_BIT])
    m[PHASE] = EARLY if tb.params[P_EARLY_SOLO] != 0 else AUCTION
    m[CUR] = 0


@njit(cache=True)
def shuffle_row(st, i):
    """Fisher-Yates shuffle of the 63 dense ids into ``st.deck[i]`` with the game's own RNG."""
    d = st.deck[i]
    for k in range(N_CARDS):
        d[k] = k
    r = st.rng[i]
    for k in range(N_CARDS - 1, 0, -1):
        r, z = splitmix_next(r)
        j = bounded(z, k + 1)
        t = d[k]
        d[k] = d[j]
        d[j] = t
    st.rng[i] = r


@njit(cache=True)
def _deal_rest(st, i, tb):
    """After the early round: hand out the remaining 10 cards of each seat."""
    for s in range(4):
        for k in range(tb.params[P_FIRST_ROUND], HAND_SIZE):
            _give(st, i, s, st.deck[i, HAND_SIZE * s + k], tb)


# ----------------------------------------------------------------------------------------------------------
# legality


@njit(cache=True, inline="always")
def legal_sets(st, i, tb):
    """Legal actions of game ``i`` as sets: (play0, play1, discard0, discard1, flags).

    play*/discard* are two-word card sets (uint64); flags is an int with bit k set when action
    ``A_PASS + k`` is legal. Nothing is legal once the game is done.
    """
    m = st.meta[i]
    ph = m[PHASE]
    p = m[CUR]
    if ph == PLAY:
        l0, l1 = play_legal(st, i, tb)
        return l0, l1, U0, U0, 0
    if ph == EARLY:
        return U0, U0, U0, U0, F_PASS | F_SOLO
    if ph == AUCTION:
        for s in range(4):
            if m[BID + s] == BID_CALL:
                return U0, U0, U0, U0, F_PASS | F_SOLO
        return U0, U0, U0, U0, F_PASS | F_SOLO | F_CALL
    if ph == DISCARD:
        h0 = st.cards[i, HAND + p, 0]
        h1 = st.cards[i, HAND + p, 1]
        a0 = h0 & ~tb.masks[MK_DISCARD_FORBIDDEN, 0]
        a1 = h1 & ~tb.masks[MK_DISCARD_FORBIDDEN, 1]
        if popcount(a0) + popcount(a1) < m[DISCARDS_LEFT]:
            a0 |= h0 & tb.masks[MK_DISCARD_FALLBACK, 0]
            a1 |= h1 & tb.masks[MK_DISCARD_FALLBACK, 1]
        return U0, U0, a0, a1, 0
    if ph == SCOMMESSA:
        need = tb.masks[MK_SCOMMESSA_NEED, 0]
        if (st.cards[i, HAND + p, 0] & need) == need:
            return U0, U0, U0, U0, F_PASS | F_SCOMMESSA
        return U0, U0, U0, U0, F_PASS
    if ph == RIVANTO:
        if m[SIDE + p] == 1:
            return U0, U0, U0, U0, F_PASS | F_RIVANTO
        return U0, U0, U0, U0, F_PASS
    return U0, U0, U0, U0, 0


@njit(cache=True)
def _set_to_actions(x, word, base, tb, out_row):
    while x != U0:
        b = lowest_bit(x)
        out_row[base + tb.pos_to_card[word * 64 + b]] = True
        x &= x - np.uint64(1)


@njit(cache=True)
def legal_mask_row(st, i, tb, out_row):
    """Write game ``i``'s legal actions into ``out_row`` (bool[N_ACTIONS], cleared first)."""
    out_row[:] = False
    p0, p1, d0, d1, flags = legal_sets(st, i, tb)
    _set_to_actions(p0, 0, A_PLAY, tb, out_row)
    _set_to_actions(p1, 1, A_PLAY, tb, out_row)
    _set_to_actions(d0, 0, A_DISCARD, tb, out_row)
    _set_to_actions(d1, 1, A_DISCARD, tb, out_row)
    for k in range(5):
        if flags & (1 << k):
            out_row[A_PASS + k] = True


@njit(cache=True)
def is_legal(st, i, a, tb):
    """Whether action id ``a`` is legal in game ``i``."""
    if a < 0 or a >= N_ACTIONS:
        return False
    p0, p1, d0, d1, flags = legal_sets(st, i, tb)
    if a >= A_PASS:
        return (flags & (1 << (a - A_PASS))) != 0
    c = a - A_DISCARD if a >= A_DISCARD else a
    w0, w1 = card_mask(c, tb)
    if a >= A_DISCARD:
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
    if k < n0:
        return _pick(p0, 0, k, A_PLAY, tb)
    k -= n0
    if k < n1:
        return _pick(p1, 1, k, A_PLAY, tb)
    k -= n1
    if k < n2:
        return _pick(d0, 0, k, A_DISCARD, tb)
    k -= n2
    if k < n3:
        return _pick(d1, 1, k, A_DISCARD, tb)
    k -= n3
    return A_PASS + kth_bit(np.uint64(flags), k)


@njit(cache=True)
def random_action_row(st, i, tb):
    """random_action, not inlined: numba's parfor hoisting must not see the RNG update."""
    return random_action(st, i, tb)


@njit(cache=True, inline="always")
def random_card(st, i, tb):
    """A uniformly random legal card (dense id) for the seat to play in game ``i`` (PLAY phase only)."""
    l0, l1 = play_legal(st, i, tb)
    n0 = popcount(l0)
    n = n0 + popcount(l1)
    r, z = splitmix_next(st.rng[i])
    st.rng[i] = r
    k = bounded(z, n)
    if k < n0:
        return tb.pos_to_card[kth_bit(l0, k)]
    return tb.pos_to_card[64 + kth_bit(l1, k - n0)]


# ----------------------------------------------------------------------------------------------------------
# transitions


@njit(cache=True)
def _take_monte(st, i, declarer, contract, mult, tb):
    """The declarer is fixed: show the monte, add it to his hand, set sides, go to the discard."""
    m = st.meta[i]
    m[DECLARER] = declarer
    m[CONTRACT] = contract
    m[MULT] = mult
    for s in range(4):
        m[SIDE + s] = 0 if (s == declarer or s == m[PARTNER]) else 1
    m[STOCK_SHOWN] = 1
    st.cards[i, HAND + declarer, 0] |= st.cards[i, STOCK, 0]
    st.cards[i, HAND + declarer, 1] |= st.cards[i, STOCK, 1]
    m[DISCARDS_LEFT] = tb.params[P_DISCARDS]
    m[PHASE] = DISCARD
    m[CUR] = declarer


@njit(cache=True)
def _end_auction(st, i, tb):
    """After the fourth bid: resolve a call (partner or forced solo), or end a deal where all passed."""
    m = st.meta[i]
    caller = -1
    for s in range(4):
        if m[BID + s] == BID_CALL:
            caller = s
    if caller < 0:
        m[PHASE] = DONE  # all passed: void deal, payoffs 0
        return
    held = st.cards[i, HAND + caller, 0] & tb.masks[MK_TRUMPS, 0]
    b = 20  # the highest trump the caller does not hold (he cannot hold all 21 in 15 cards)
    while (held & bit(b)) != U0:
        b -= 1
    m[CALLED] = tb.pos_to_card[b]
    if (st.cards[i, STOCK, 0] & bit(b)) != U0:
        _take_monte(st, i, caller, FORCED_SOLO, 1, tb)
        return
    for s in range(4):
        if (st.cards[i, HAND + s, 0] & bit(b)) != U0:
            m[PARTNER] = s
    _take_monte(st, i, caller, CALL, 1, tb)


@njit(cache=True)
def _start_play(st, i):
    st.meta[i, PHASE] = PLAY
    clear_trick(st, i, st.meta[i, DECLARER])


@njit(cache=True)
def _resolve_trick(st, i, tb):
    """The trick is complete: the winner takes the cards (EX aside), Pigliate are noted, next trick starts."""
    m = st.meta[i]
    winner = m[BEST_SEAT]
    wside = m[SIDE + winner]
    last = m[TRICK_NUM] == N_TRICKS - 1
    for s in range(4):
        c = m[TRICK + s]
        w = tb.card[c, CARD_WORD]
        mk = bit(tb.card[c, CARD_BIT])
        if tb.card[c, CARD_SUIT] == FOOL:
            m[EX_TRICK_WINNER] = winner
            if last and m[TRICK_LEADER] == s:
                m[EX_LED_LAST] = 1
                st.cards[i, WON + winner, 0] |= mk
            continue
        st.cards[i, WON + winner, w] |= mk
        if w == 0 and (tb.masks[MK_PIGLIATA, 0] & mk) != U0 and m[SIDE + s] != wside:
            m[BONUS + 8 * wside + J_PIGLIATA] += 1
    m[TRICKS_WON + winner] += 1
    m[TRICK_NUM] += 1
    if last:
        m[LAST_WINNER] = winner
        _settle(st, i, tb)
    else:
        clear_trick(st, i, winner)


@njit(cache=True)
def step_row(st, i, a, tb):
    """Apply legal action id ``a`` to game ``i`` (legality is the caller's check)."""
    m = st.meta[i]
    ph = m[PHASE]
    p = m[CUR]
    if ph == PLAY:
        if add_to_trick(st, i, a - A_PLAY, tb):
            _resolve_trick(st, i, tb)
    elif ph == EARLY:
        if a == A_SOLO:
            m[EARLY_BID + p] = BID_SOLO
            _deal_rest(st, i, tb)
            _take_monte(st, i, p, SOLO, 2, tb)
        else:
            m[EARLY_BID + p] = BID_PASS
            if p == 3:
                _deal_rest(st, i, tb)
                m[PHASE] = AUCTION
                m[CUR] = 0
            else:
                m[CUR] = p + 1
    elif ph == AUCTION:
        m[BID + p] = a - A_PASS
        if a == A_SOLO:
            _take_monte(st, i, p, SOLO, 1, tb)
        elif p == 3:
            _end_auction(st, i, tb)
        else:
            m[CUR] = p + 1
    elif ph == DISCARD:
        c = a - A_DISCARD
        w = tb.card[c, CARD_WORD]
        mk = bit(tb.card[c, CARD_BIT])
        st.cards[i, HAND + p, w] &= ~mk
        st.cards[i, DISCARDED, w] |= mk
        if w == 0:
            st.cards[i, SHOWN, 0] |= mk  # a discarded trump is shown to all
        m[DISCARDS_LEFT] -= 1
        if m[DISCARDS_LEFT] == 0:
            m[PHASE] = SCOMMESSA
    elif ph == SCOMMESSA:
        m[COMMIT] = 1 if a == A_SCOMMESSA else 0
        m[PHASE] = RIVANTO
        m[TURN] = 1
        m[CUR] = (m[DECLARER] + 1) % 4
    elif ph == RIVANTO:
        if a == A_RIVANTO:
            m[COMMIT + 1] = p
            _start_play(st, i)
        else:
            m[TURN] += 1
            if m[TURN] == 4:
                _start_play(st, i)
            else:
                m[CUR] = (m[DECLARER] + m[TURN]) % 4


# ----------------------------------------------------------------------------------------------------------
# settlement


@njit(cache=True)
def _card_thirds(s0, s1, tb):
    """Card points in thirds of a two-word card set: 3*sum(special values) - 2*specials + scartine."""
    t = 0
    for k in range(tb.params[P_N_VALUES]):
        n = popcount(s0 & tb.masks[MK_VALUE + k, 0]) + popcount(s1 & tb.masks[MK_VALUE + k, 1])
        v = tb.params[P_VALUE + k]
        t += n * (3 * v - 2) if v > 0 else n
    return t


@njit(cache=True)
def side_cards(st, i, side):
    """The two-word set of cards a side holds at the end: won tricks, the discard, and EX as RULES.md §1."""
    m = st.meta[i]
    s0 = U0
    s1 = U0
    for s in range(4):
        if m[SIDE + s] == side:
            s0 |= st.cards[i, WON + s, 0]
            s1 |= st.cards[i, WON + s, 1]
    if side == 0:
        s0 |= st.cards[i, DISCARDED, 0]
        s1 |= st.cards[i, DISCARDED, 1]
    ep = m[EX_PLAYER]
    if ep >= 0 and m[EX_LED_LAST] == 0:
        owner = m[SIDE + ep]
        owner_won = owner == 0  # the declarer's discard counts as a trick
        for s in range(4):
            if m[SIDE + s] == owner and m[TRICKS_WON + s] > 0:
                owner_won = True
        dest = owner if owner_won else m[SIDE + m[EX_TRICK_WINNER]]
        if dest == side:
            s0 |= _EXB
    return s0, s1


@njit(cache=True)
def _settle(st, i, tb):
    """Count card points (thirds) and jochi, then set the payoffs (RULES.md §1 settlement)."""
    m = st.meta[i]
    m[PHASE] = DONE
    last_side = m[SIDE + m[LAST_WINNER]]
    for side in range(2):
        s0, s1 = side_cards(st, i, side)
        thirds = _card_thirds(s0, s1, tb)
        if side == last_side:
            thirds += LAST_TRICK_THIRDS
        m[POINTS + side] = thirds
        bonus = BONUS + 8 * side
        if thirds >= RIMATURA_THIRDS:
            m[bonus + J_RIMATURA] = 1
        arie = tb.masks[MK_ARIE, 0]
        if (s0 & arie) == arie:
            giove = tb.masks[MK_GIOVE, 0]
            m[bonus + J_ARIE] = 2 if (s0 & giove) == giove else 1
        kings = tb.masks[MK_KINGS, 1]
        if (s1 & kings) == kings:
            m[bonus + J_RE] = 1
        if side == 0 and m[COMMIT] == 1:
            need = tb.masks[MK_SCOMMESSA, 0]
            m[BONUS + (0 if (s0 & need) == need else 8) + J_SCOMMESSA] = 1
    if m[COMMIT + 1] >= 0:
        m[BONUS + 8 * last_side + J_RIVANTO] = 2
    else:
        m[BONUS + 8 * last_side + J_VANTO] = 1
    d = 0
    for k in range(8):
        d += m[BONUS + k] - m[BONUS + 8 + k]
    d *= m[MULT]
    solo = m[PARTNER] < 0
    for s in range(4):
        if m[SIDE + s] == 0:
            m[PAYOFF + s] = 3 * d if solo else d
        else:
            m[PAYOFF + s] = -d


# ----------------------------------------------------------------------------------------------------------
# batch drivers: a prange loop over games calling one *_row function each. The row functions must not be
# inlined into a prange body: Numba's parfor pass then hoists state reads out of the loop (seen: the RNG
# state read once for a whole deal, and wrong trick results).


@njit(cache=True, parallel=True)
def reset_batch(st, tb, shuffle):
    """Reset every game; with ``shuffle`` a new deal is drawn from each game's RNG first."""
    for i in prange(st.meta.shape[0]):
        if shuffle:
            shuffle_row(st, i)
        reset_row(st, i, tb)


@njit(cache=True, parallel=True)
def legal_mask_batch(st, tb, out):
    """out: bool[B, N_ACTIONS] legal actions of every game (all False for games that are done)."""
    for i in prange(st.meta.shape[0]):
        legal_mask_row(st, i, tb, out[i])


@njit(cache=True)
def first_illegal(st, actions, tb):
    """Index of the first game (not done) whose action is illegal, or -1."""
    for i in range(st.meta.shape[0]):
        if st.meta[i, PHASE] != DONE and not is_legal(st, i, actions[i], tb):
            return i
    return -1


@njit(cache=True, parallel=True)
def step_batch(st, actions, tb, auto_reset, done_out, payoff_out):
    """Apply ``actions`` (int64[B]) to every game not done.

    done_out : bool[B]       set True for games that ended with this step
    payoff_out : int32[B, 4] their payoffs (0 elsewhere)
    With ``auto_reset`` a game that ends is immediately re-dealt from its RNG.
    """
    for i in prange(st.meta.shape[0]):
        done_out[i] = False
        for s in range(4):
            payoff_out[i, s] = 0
        if st.meta[i, PHASE] == DONE:
            continue
        step_row(st, i, actions[i], tb)
        if st.meta[i, PHASE] == DONE:
            done_out[i] = True
            for s in range(4):
                payoff_out[i, s] = st.meta[i, PAYOFF + s]
            if auto_reset:
                shuffle_row(st, i)
                reset_row(st, i, tb)


@njit(cache=True, parallel=True)
def random_actions_batch(st, tb, out):
    """out: int64[B] a uniformly random legal action per game (-1 for games done), from each game's RNG."""
    for i in prange(st.meta.shape[0]):
        out[i] = random_action_row(st, i, tb)


@njit(cache=True)
def random_playout_row(st, i, tb):
    """Random legal card play in game ``i`` from the current position to the end of the deal.

    The fused hot loop of rollouts: the trick lives in registers and only goes back to the state when it is
    complete. Draws from the game's RNG; returns the number of cards played.
    """
    m = st.meta[i]
    plays = 0
    while m[PHASE] == PLAY:
        p = m[CUR]
        k = m[TRICK_COUNT]
        led, bs, bt, bb = m[LED_SUIT], m[BEST_SEAT], m[BEST_TRUMP], m[BEST_BIT]
        r = st.rng[i]
        while k < N_PLAYERS:
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
            m[TRICK + p] = c
            led, bs, bt, bb = trick_update(c, p, led, bs, bt, bb, tb)
            k += 1
            plays += 1
            p = (p + 1) % N_PLAYERS
        st.rng[i] = r
        m[TRICK_COUNT], m[LED_SUIT], m[BEST_SEAT], m[BEST_TRUMP], m[BEST_BIT] = k, led, bs, bt, bb
        m[CUR] = (p + N_PLAYERS - 1) % N_PLAYERS  # as add_to_trick leaves it: the trick's last player
        _resolve_trick(st, i, tb)
    return plays


@njit(cache=True)
def rollout_row(st, i, tb, deals, payoff_sum, counts):
    """Game ``i`` plays ``deals`` complete random deals; sums payoffs and counts [deals, card plays]."""
    for _ in range(deals):
        shuffle_row(st, i)
        reset_row(st, i, tb)
        while st.meta[i, PHASE] != PLAY and st.meta[i, PHASE] != DONE:
            step_row(st, i, random_action(st, i, tb), tb)
        plays = random_playout_row(st, i, tb)
        for s in range(4):
            payoff_sum[i, s] += st.meta[i, PAYOFF + s]
        counts[i, 0] += 1
        counts[i, 1] += plays


@njit(cache=True, parallel=True)
def rollout_random_batch(st, tb, deals_per_game, payoff_sum, counts):
    """The fused random-play kernel: each game plays ``deals_per_game`` complete random deals.

    payoff_sum : int64[B, 4]   payoffs summed over the deals played by each game
    counts : int64[B, 2]       [deals, card plays] per game
    """
    for i in prange(st.meta.shape[0]):
        rollout_row(st, i, tb, deals_per_game, payoff_sum, counts)


# ----------------------------------------------------------------------------------------------------------
# action strings (RULES.md card notation)

_BIDDING = (EARLY, AUCTION)


def action_to_string(a: int, phase: int) -> str:
    """The string of action id ``a`` (``phase`` chooses ``bid:pass`` or ``pass``)."""
    a = int(a)
    if 0 <= a < A_DISCARD:
        return "play:" + DECK.names[a]
    if A_DISCARD <= a < A_PASS:
        return "discard:" + DECK.names[a - A_DISCARD]
    if a == A_PASS:
        return "bid:pass" if phase in _BIDDING else "pass"
    if a in (A_SOLO, A_CALL):
        return "bid:" + SPECIAL_ACTION_NAMES[a - A_PASS]
    if A_PASS < a < N_ACTIONS:
        return SPECIAL_ACTION_NAMES[a - A_PASS]
    raise ValueError(f"action id {a} is out of range 0..{N_ACTIONS - 1}")


def string_to_action(text: str) -> int:
    """Action id of a string such as ``play:KC``, ``discard:5D``, ``bid:call``, ``pass``, ``rivanto``."""
    t = text.strip()
    kind, _, arg = t.partition(":")
    kind = kind.lower()
    if arg:
        if kind == "play":
            return A_PLAY + DECK.card_id(arg)
        if kind == "discard":
            return A_DISCARD + DECK.card_id(arg)
        if kind == "bid" and arg.lower() in ("pass", "solo", "call"):
            return A_PASS + SPECIAL_ACTION_NAMES.index(arg.lower())
    elif kind in SPECIAL_ACTION_NAMES:
        return A_PASS + SPECIAL_ACTION_NAMES.index(kind)
    raise ValueError(
        f"unknown action {text!r}: expected play:<card>, discard:<card>, bid:pass|solo|call, pass, scommessa "
        "or rivanto"
    )


# ----------------------------------------------------------------------------------------------------------
# outcome (for replay, play and the arena)


def _thirds_text(t: int) -> str:
    whole, rest = divmod(int(t), 3)
    return f"{whole}" if rest == 0 else f"{whole} {rest}/3"


def outcome(st, i: int) -> dict:
    """Summary of finished game ``i``: payoffs, contract, card points per side (thirds) and itemised jochi."""
    m = st.meta[i]
    if m[PHASE] != DONE:
        raise ValueError("the deal is not finished")
    payoffs = [int(x) for x in m[PAYOFF : PAYOFF + 4]]
    if m[DECLARER] < 0:
        return {"payoffs": payoffs, "contract": "none (all passed)"}
    sides = [[s for s in range(4) if m[SIDE + s] == k] for k in range(2)]
    jochi = [
        {name: int(m[BONUS + 8 * k + j]) for j, name in enumerate(BONUS_NAMES) if m[BONUS + 8 * k + j]}
        for k in range(2)
    ]
    return {
        "payoffs": payoffs,
        "contract": CONTRACT_NAMES[m[CONTRACT]],
        "declarer": int(m[DECLARER]),
        "partner": int(m[PARTNER]) if m[PARTNER] >= 0 else None,
        "called": DECK.names[m[CALLED]] if m[CALLED] >= 0 else None,
        "doubled": bool(m[MULT] == 2),
        "sides": sides,
        "card_points_thirds": [int(m[POINTS]), int(m[POINTS + 1])],
        "card_points": [_thirds_text(m[POINTS]), _thirds_text(m[POINTS + 1])],
        "jochi": jochi,
        "jochi_total": [sum(j.values()) for j in jochi],
    }


def thirds_of(names) -> int:
    """Card points, in thirds, of a list of card names (the triplet count of RULES.md §1, no last trick)."""
    mask = DECK.mask_of(names)
    if len(set(names)) != len(names):
        raise ValueError("thirds_of: duplicated card")
    return int(_card_thirds(mask[0], mask[1], make_rule_tables()))
