"""The determinizer tests' explicit predicate (what an observer knows, checked sample by sample) and their positions."""

import itertools
import math

import numpy as np

from tarocchi_rl import engine
from tarocchi_rl.bits import seed_states
from tarocchi_rl.core.phases import DISCARD, DONE, PLAY
from tarocchi_rl.core.state import (
    BID_WORD,
    BONUS,
    CALLED,
    CONTRACT,
    CUR,
    DECLARER,
    DISCARDED,
    DISCARDS_LEFT,
    EXCLUDED,
    HAND,
    N_META,
    PARTNER,
    PAYOFF,
    PHASE,
    PLAYED,
    SHOWN,
    SHOWN_BY,
    SIDE,
    STOCK,
    STOCK_SHOWN,
    TRICK_NUM,
    WON,
    alloc_state,
    copy_state,
)
from tarocchi_rl.core.tables import (
    MK_DISCARD_FORBIDDEN,
    MK_TRUMPS,
    P_CARDS,
    P_FAMILY,
    P_FIRST_ROUND,
    P_HAND,
    P_PLAYERS,
    P_STOCK,
)
from tarocchi_rl.engine.observation import observe_row
from tarocchi_rl.variants import french, get_variant, mineo, piedmont
from tarocchi_rl.variants.french import MK_PETIT
from tarocchi_rl.variants.mineo import EARLY, MK_PIGLIATA
from tarocchi_rl.variants.piedmont import ACCUSO_DECL

FAMILY_MINEO, FAMILY_PIEDMONT, FAMILY_FRENCH = mineo.FAMILY_ID, piedmont.FAMILY_ID, french.FAMILY_ID

CONFIGS = [
    ("mineo", {}),
    ("mineo", {"early_solo": False}),
    ("piedmont3", {}),
    ("piedmont4", {"accuso": True}),
    ("french3", {}),
    ("french4", {}),
]
EXB = 1 << 32


def tables(variant, options):
    spec = get_variant(variant)
    return spec, spec.tables(spec.resolve_options(options))


def S(st, i, row):
    """A card set of game i as one Python int (word 1 shifted by 64)."""
    return int(st.cards[i, row, 0]) | (int(st.cards[i, row, 1]) << 64)


def pc(x):
    return bin(x).count("1")


def card_bit(tb, c):
    return 1 << (64 * int(tb.card[c, 1]) + int(tb.card[c, 2]))


def mask_of_ids(tb, ids):
    out = 0
    for c in ids:
        out |= card_bit(tb, int(c))
    return out


def ids_of(tb, x):
    out = []
    while x:
        b = (x & -x).bit_length() - 1
        out.append(int(tb.pos_to_card[b]))
        x &= x - 1
    return sorted(out)


class Info:
    """Masks of a variant (Python ints)."""

    def __init__(self, tb):
        self.tb = tb
        self.fam = int(tb.params[P_FAMILY])
        self.n = int(tb.params[P_PLAYERS])
        self.h = int(tb.params[P_HAND])
        self.c = int(tb.params[P_CARDS])
        self.all = mask_of_ids(tb, range(self.c))
        self.trumps = int(tb.masks[MK_TRUMPS, 0])
        forbidden = int(tb.masks[MK_DISCARD_FORBIDDEN, 0]) | (int(tb.masks[MK_DISCARD_FORBIDDEN, 1]) << 64)
        self.discardable = self.all & ~forbidden
        self.petit = int(tb.masks[MK_PETIT, 0])


# ----------------------------------------------------------------------------------------------------------
# the explicit predicate: what the observer knows, written from the rules and the state's public rows


def hidden_piles(st, i, p, info):
    """[(kind, seat, cards)] the observer cannot see into: the other hands (less the cards they showed), the
    declarer's face-down discard when p did not make it, an unseen stock, Mineo early round: the cards still
    to be dealt (p's own too)."""
    m = st.meta[i]
    piles = []
    for s in range(info.n):
        if s != p:
            x = S(st, i, HAND + s) & ~S(st, i, SHOWN_BY + s)
            if x:
                piles.append(("hand", s, x))
    d = int(m[DECLARER])
    if d >= 0 and d != p:
        x = S(st, i, DISCARDED) & ~S(st, i, SHOWN)
        if x:
            piles.append(("discard", d, x))
    if info.fam != FAMILY_PIEDMONT and m[STOCK_SHOWN] != 1 and S(st, i, STOCK):
        piles.append(("stock", -1, S(st, i, STOCK)))
    if info.fam == FAMILY_MINEO and m[PHASE] == EARLY:
        first = int(info.tb.params[P_FIRST_ROUND])
        for s in range(info.n):
            piles.append(("future", s, mask_of_ids(info.tb, st.deck[i, info.h * s + first : info.h * s + info.h])))
    return piles


def partner_hidden(st, i, p, info):
    m = st.meta[i]
    if info.fam != FAMILY_MINEO or m[CONTRACT] != mineo.CALL:
        return False
    c = card_bit(info.tb, int(m[CALLED]))
    return not (S(st, i, HAND + p) & c) and not any(S(st, i, PLAYED + s) & c for s in range(4))


def annulled(st, i, info):
    """A French deal annulled at once (a petit sec): nothing to determinize."""
    return info.fam == FAMILY_FRENCH and st.meta[i, PHASE] == DONE and st.meta[i, BID_WORD] == -1


def placement_violations(st, i, p, info, contents):
    """Constraints that the hidden piles' ``contents`` (ints, same order as hidden_piles of the true row) break;
    [] when the assignment is consistent with what seat p knows (the true one must be)."""
    m = st.meta[i]
    piles = hidden_piles(st, i, p, info)
    out = []
    u = 0
    for (kind, s, x), y in zip(piles, contents, strict=True):
        u |= x
        if pc(y) != pc(x):
            out.append(f"{kind} {s}: {pc(y)} cards, expected {pc(x)}")
        if kind == "hand" and y & S(st, i, EXCLUDED + s):
            out.append(f"seat {s} holds excluded {ids_of(info.tb, y & S(st, i, EXCLUDED + s))}")
        if kind == "discard" and y & ~info.discardable:
            out.append("a forbidden card in the face-down discard")
    union = 0
    for y in contents:
        if union & y:
            out.append("a card in two piles")
        union |= y
    if union != u:
        out.append("the piles do not hold the unknown cards")
    hand = {s: S(st, i, HAND + s) for s in range(info.n)}
    for (kind, s, _), y in zip(piles, contents, strict=True):
        if kind == "hand":
            hand[s] = (hand[s] & ~u) | y
    disc = S(st, i, DISCARDED)
    stock = S(st, i, STOCK)
    for (kind, _, _), y in zip(piles, contents, strict=True):
        if kind == "discard":
            disc = (disc & ~u) | y
        elif kind == "stock":
            stock = y
    d = int(m[DECLARER])
    if m[PHASE] == DISCARD and d != p and S(st, i, SHOWN) & info.trumps:  # he discarded a trump
        if pc(hand[d] & info.discardable) > m[DISCARDS_LEFT]:
            out.append("declarer holds too many discardable cards")
    if info.fam == FAMILY_PIEDMONT:
        for s in range(info.n):
            shown = S(st, i, SHOWN_BY + s) & info.trumps
            if s != p and m[ACCUSO_DECL + s] >= 1 and pc(shown) < 10:
                if pc(hand[s] & info.trumps) + pc(S(st, i, PLAYED + s) & info.trumps) > 9:
                    out.append(f"seat {s} accused the honours alone with ten trumps")
    if info.fam == FAMILY_FRENCH and not annulled(st, i, info):
        for s in range(info.n):
            dealt = hand[s] | S(st, i, PLAYED + s)
            if s == d and m[STOCK_SHOWN] == 1:
                dealt = (dealt | disc) & ~stock
            if dealt & info.trumps == info.petit and not dealt & EXB:
                out.append(f"seat {s} was dealt a petit sec")
    for s in range(info.n):
        if S(st, i, SHOWN_BY + s) & ~S(st, i, PLAYED + s) & ~hand[s]:
            out.append(f"seat {s} lost a card he showed")
        if s != d and S(st, i, STOCK) & (hand[s] | S(st, i, PLAYED + s)) and m[STOCK_SHOWN] == 1:
            out.append(f"seat {s} has a card of the shown stock")
    return out


def contents_of(dst, j, piles, info):
    """The hidden piles' contents in game j of a sample (same piles as the true row's)."""
    out = []
    for kind, s, _ in piles:
        if kind == "hand":
            out.append(S(dst, j, HAND + s) & ~S(dst, j, SHOWN_BY + s))
        elif kind == "discard":
            out.append(S(dst, j, DISCARDED) & ~S(dst, j, SHOWN))
        elif kind == "stock":
            out.append(S(dst, j, STOCK))
        else:
            first = int(info.tb.params[P_FIRST_ROUND])
            out.append(mask_of_ids(info.tb, dst.deck[j, info.h * s + first : info.h * s + info.h]))
    return out


def pigliata_counts(st, i, sides, info):
    pig = int(info.tb.masks[MK_PIGLIATA, 0])
    out = [0, 0]
    for c in ids_of(info.tb, pig):
        b = card_bit(info.tb, c)
        for w in range(4):
            if S(st, i, WON + w) & b:
                s = next(s for s in range(4) if S(st, i, PLAYED + s) & b)
                if sides[s] != sides[w]:
                    out[sides[w]] += 1
    return out


def sample_problems(src, i, p, info, dst, j):
    """Everything wrong with sample j of game i for seat p ([] when it is a valid determinization)."""
    tb = info.tb
    m, ms = src.meta[i], dst.meta[j]
    out = []
    piles = hidden_piles(src, i, p, info)
    out += placement_violations(src, i, p, info, contents_of(dst, j, piles, info))
    hidden_meta = set()
    if partner_hidden(src, i, p, info):
        hidden_meta = {PARTNER, BONUS + mineo.J_PIGLIATA, BONUS + 8 + mineo.J_PIGLIATA} | {SIDE + s for s in range(4)}
        c = card_bit(tb, int(m[CALLED]))
        holder = [s for s in range(4) if S(dst, j, HAND + s) & c]
        if holder != [ms[PARTNER]]:
            out.append("PARTNER is not the called trump's holder")
        sides = [0 if s in (ms[DECLARER], ms[PARTNER]) else 1 for s in range(4)]
        if list(ms[SIDE : SIDE + 4]) != sides:
            out.append("sides do not follow the partner")
        got = [int(ms[BONUS + mineo.J_PIGLIATA]), int(ms[BONUS + 8 + mineo.J_PIGLIATA])]
        if got != pigliata_counts(dst, j, sides, info):
            out.append("pigliata bonuses do not follow the sides")
    for k in range(N_META):
        if k not in hidden_meta and m[k] != ms[k]:
            out.append(f"meta column {k} changed")
    same = [PLAYED + s for s in range(info.n)] + [WON + s for s in range(info.n)] + [SHOWN, HAND + p]
    same += [SHOWN_BY + s for s in range(info.n)] + [EXCLUDED + s for s in range(info.n)]
    if not any(kind == "discard" for kind, _, _ in piles):
        same.append(DISCARDED)
    if not any(kind == "stock" for kind, _, _ in piles) and not (info.fam == FAMILY_PIEDMONT and m[DECLARER] != p):
        same.append(STOCK)
    for row in same:
        if S(src, i, row) != S(dst, j, row):
            out.append(f"card row {row} changed")
    # cards conserved: every card in exactly one place
    parts = [S(dst, j, HAND + s) for s in range(info.n)] + [S(dst, j, PLAYED + s) for s in range(info.n)]
    parts.append(S(dst, j, DISCARDED))
    early = info.fam == FAMILY_MINEO and ms[PHASE] == EARLY
    first = int(tb.params[P_FIRST_ROUND])
    if early:
        parts += [mask_of_ids(tb, dst.deck[j, info.h * s + first : info.h * s + info.h]) for s in range(info.n)]
    if info.fam != FAMILY_PIEDMONT and ms[STOCK_SHOWN] != 1:
        parts.append(S(dst, j, STOCK))
    union = 0
    for x in parts:
        if union & x:
            out.append("a card is in two places")
        union |= x
    if union != info.all:
        out.append("cards lost")
    # the deal matches the cards
    deck = [int(c) for c in dst.deck[j, : info.c]]
    if sorted(deck) != list(range(info.c)):
        out.append("the deal is not a permutation")
    taken = info.fam == FAMILY_PIEDMONT or ms[STOCK_SHOWN] == 1
    for s in range(info.n):
        block = mask_of_ids(tb, deck[info.h * s : info.h * s + info.h])
        if early:
            want = S(dst, j, HAND + s) | mask_of_ids(tb, deck[info.h * s + first : info.h * s + info.h])
        else:
            want = S(dst, j, HAND + s) | S(dst, j, PLAYED + s)
            if s == ms[DECLARER] and taken:
                want = (want | S(dst, j, DISCARDED)) & ~S(dst, j, STOCK)
        if block != want:
            out.append(f"deal block of seat {s} does not match")
    if mask_of_ids(tb, deck[info.n * info.h :]) != S(dst, j, STOCK):
        out.append("deal stock does not match")
    if info.fam == FAMILY_PIEDMONT:
        d = int(ms[DECLARER])
        if pc(S(dst, j, STOCK)) != int(tb.params[P_STOCK]) or S(dst, j, STOCK) & ~(
            S(dst, j, HAND + d) | S(dst, j, PLAYED + d) | S(dst, j, DISCARDED)
        ):
            out.append("the Piedmontese stock is not the dealer's")
    own = slice(info.h * p, info.h * p + (first if early else info.h))  # his first five in the early round
    if list(src.deck[i, own]) != list(dst.deck[j, own]):
        out.append("the observer's deal changed")
    # what the observer sees
    dim = int(get_variant_of(info).obs_dim)
    a, b = np.empty(dim, np.float32), np.empty(dim, np.float32)
    observe_row(src, i, p, tb, a)
    observe_row(dst, j, p, tb, b)
    if not np.array_equal(a, b):
        out.append("the observation differs")
    if m[PHASE] != DONE and m[CUR] == p:
        na = int(get_variant_of(info).n_actions)
        la, lb = np.empty(na, bool), np.empty(na, bool)
        engine.legal_mask_row(src, i, tb, la)
        engine.legal_mask_row(dst, j, tb, lb)
        if not np.array_equal(la, lb):
            out.append("the legal actions differ")
    return out


SPEC_OF = {}  # id of a tables object made here -> its variant spec (sample_problems reads it)


def get_variant_of(info):
    return SPEC_OF[id(info.tb)]


def exclusions_truthful(st, i, info):
    """Every seat's public exclusions hold in the true state."""
    return [s for s in range(info.n) if S(st, i, HAND + s) & S(st, i, EXCLUDED + s)]


# ----------------------------------------------------------------------------------------------------------
# positions


def random_positions(variant, options, n_games, seed):
    """Game rows stopped at a random point of random play (the start and the end included)."""
    spec, tb = tables(variant, options)
    SPEC_OF[id(tb)] = spec
    st = alloc_state(n_games)
    st.rng[:] = seed_states(seed, n_games)
    engine.reset_batch(st, tb, True)
    rng = np.random.default_rng(seed)
    stop = rng.integers(0, 100, n_games)
    stop[: n_games // 10] = 0
    out = copy_state(st)
    actions = np.empty(n_games, np.int64)
    done = np.zeros(n_games, bool)
    pay = np.zeros((n_games, 4), np.int32)
    for step in range(1, 200):
        engine.random_actions_batch(st, tb, actions)
        engine.step_batch(st, actions, tb, False, done, pay)
        keep = (stop == step) | ((stop > step) & (st.meta[:, PHASE] == DONE))
        for a, b in zip(out, st, strict=True):
            a[keep] = b[keep]
        stop[keep] = -1
        if (st.meta[:, PHASE] == DONE).all():
            break
    return out, tb, Info(tb)


def play_out(dst, tb):
    """Random legal play of every game to the end; returns the payoffs int32[B, 4]."""
    b = dst.meta.shape[0]
    actions = np.empty(b, np.int64)
    done = np.zeros(b, bool)
    pay = np.zeros((b, 4), np.int32)
    for _ in range(300):
        if (dst.meta[:, PHASE] == DONE).all():
            break
        engine.random_actions_batch(dst, tb, actions)
        engine.step_batch(dst, actions, tb, False, done, pay)
    assert (dst.meta[:, PHASE] == DONE).all()
    return dst.meta[:, PAYOFF : PAYOFF + 4]


# ----------------------------------------------------------------------------------------------------------
# small positions and uniformity


def enumerate_consistent(src, i, p, info, limit=20000):
    """Every consistent assignment of the hidden piles (brute force), or None when there are too many."""
    piles = hidden_piles(src, i, p, info)
    sizes = [pc(x) for _, _, x in piles]
    cards = []
    u = 0
    for _, _, x in piles:
        u |= x
    while u:
        b = u & -u
        cards.append(b)
        u ^= b
    total = math.factorial(len(cards))
    for k in sizes:
        total //= math.factorial(k)
    if total > limit:
        return None
    out = []

    def rec(q, left, acc):
        if q == len(piles) - 1:
            cont = acc + [sum(left)]
            if placement_violations(src, i, p, info, cont) == []:
                out.append(tuple(cont))
            return
        for combo in itertools.combinations(range(len(left)), sizes[q]):
            pick = set(combo)
            rec(q + 1, [c for k, c in enumerate(left) if k not in pick], acc + [sum(left[k] for k in combo)])

    rec(0, cards, [])
    return out, total


def chi_square_p(counts, expected):
    stat = float(((counts - expected) ** 2 / expected).sum())
    k = len(counts) - 1
    try:
        from scipy.stats import chi2

        return float(chi2.sf(stat, k))
    except ImportError:  # Wilson-Hilferty
        z = ((stat / k) ** (1 / 3) - (1 - 2 / (9 * k))) / math.sqrt(2 / (9 * k))
        return 0.5 * math.erfc(z / math.sqrt(2))


def partner_hidden_positions(n_games, seed, trick=12):
    """Mineo games of random play in which the called trump's holder keeps it while he can, stopped at
    ``trick`` (the partnership mostly still hidden)."""
    spec, tb = tables("mineo", {})
    SPEC_OF[id(tb)] = spec
    st = alloc_state(n_games)
    st.rng[:] = seed_states(seed, n_games)
    engine.reset_batch(st, tb, True)
    rng = np.random.default_rng(seed)
    legal = np.empty(spec.n_actions, bool)
    for i in range(n_games):
        while st.meta[i, PHASE] != DONE and not (st.meta[i, PHASE] == PLAY and st.meta[i, TRICK_NUM] == trick):
            engine.legal_mask_row(st, i, tb, legal)
            la = np.flatnonzero(legal)
            c = int(st.meta[i, CALLED])
            if st.meta[i, PHASE] == PLAY and c >= 0 and len(la) > 1:
                la = la[la != c]
            engine.step_row(st, i, int(la[rng.integers(len(la))]), tb)
    return st, tb, Info(tb)


def find_small_positions(variant, options, want, seed, min_count=30, max_count=800, partner=False):
    """Late play positions whose consistent assignments are few but not too few, cut down by a revealed void
    (``partner``: Mineo, the called trump's holder still unknown to the observer)."""
    if partner:
        src, tb, info = partner_hidden_positions(400, seed)
    else:
        src, tb, info = random_positions(variant, options, 400, seed)
    found = []
    for i in range(400):
        if src.meta[i, PHASE] != PLAY:
            continue
        for p in range(info.n):
            if partner and not partner_hidden(src, i, p, info):
                continue
            piles = hidden_piles(src, i, p, info)
            u = sum(x for _, _, x in piles)
            if not any(kind == "hand" and u & S(src, i, EXCLUDED + s) for kind, s, _ in piles):
                continue
            got = enumerate_consistent(src, i, p, info, limit=8000)
            if got is None:
                continue
            consistent, total = got
            if min_count <= len(consistent) <= max_count and len(consistent) < total:
                found.append((src, tb, info, i, p, consistent))
                break
        if len(found) >= want:
            break
    return found

