"""Rule tables: a variant compiled into arrays that the kernels read (one NamedTuple type for all variants).

Variants differ by these tables and by small per-phase kernels, never by ``if variant == ...`` in the
shared trick kernel.

``card`` : int16[C, 4], per dense card id: columns CARD_SUIT (0..3 suit, 4 trump, 5 EX), CARD_WORD
(0 trumps and EX, 1 suits), CARD_BIT (bit in that word = strength order), CARD_VALUE (card-point value of a
special card, 0 for a scartina).
``pos_to_card`` : int16[128], word*64+bit -> dense card id (-1: no card).
``masks`` : uint64[N_MASKS, 2], named two-word card sets; rows MK_SUIT+s are the suits, the other MK_* rows
are named below (rows a variant does not use stay zero).
``params`` : int64[N_PARAMS], named integers (P_* entries).
``obs`` : int64[N_SECTIONS], the observation layout: offset of each section (-1: absent in this variant);
see :mod:`tarocchi_rl.engine.observation`.
"""

from typing import NamedTuple

import numpy as np

from ..cards import EX_BIT, Deck

CARD_SUIT, CARD_WORD, CARD_BIT, CARD_VALUE = range(4)


class RuleTables(NamedTuple):
    """Arrays describing one variant with its options (see the module docstring)."""

    card: np.ndarray
    pos_to_card: np.ndarray
    masks: np.ndarray
    params: np.ndarray
    obs: np.ndarray


# masks rows
MK_SUIT = 0  # rows 0..3: the four suits
MK_TRUMPS = 4  # all trumps (not EX)
MK_EX = 5  # the Fool
MK_KINGS = 6
MK_DISCARD_FORBIDDEN = 7  # never discardable
MK_DISCARD_FALLBACK = 8  # discardable when too few allowed cards remain
MK_PIGLIATA = 9  # Mineo: T16..T19, T1
MK_ARIE = 10  # Mineo: T16..T19
MK_GIOVE = 11  # Mineo: T20
MK_SCOMMESSA = 12  # Mineo: T20, T1, EX (the cards the Scommessa must win)
MK_SCOMMESSA_NEED = 13  # Mineo: T20, EX (must be held to say scommessa)
MK_OUDLERS = 14  # French: T1, T21, EX
MK_PETIT = 15  # French: T1 (petit au bout); Piedmontese: T1 (accuso honours with MK_ACCUSO_HONOURS)
MK_VALUE = 16  # rows 16..23: the cards of each distinct card value, value in params[P_VALUE + k]
MK_ACCUSO_HONOURS = 24  # Piedmontese accuso: T1, T20, T21
N_MASKS = 28

# params entries
P_PLAYERS = 0
P_CARDS = 1
P_HAND = 2  # cards per hand after the deal
P_STOCK = 3  # monte / talon / chien size
P_TRICKS = 4
P_DISCARDS = 5  # cards the declarer discards
P_MUST_OVERTRUMP = 6  # 1: a trump must beat the best trump in the trick when able (French)
P_EX_LEAD_ANY = 7  # 1: EX may be led at any time (Piedmontese, French); 0: only when it is the last card
P_EARLY_SOLO = 8  # Mineo option early_solo
P_FIRST_ROUND = 9  # cards per player in the first round of the deal (Mineo early solo)
P_N_VALUES = 10  # number of distinct card values (MK_VALUE rows in use)
P_FAMILY = 11  # rule family: FAMILY_MINEO, FAMILY_PIEDMONT, FAMILY_FRENCH (selects the per-phase kernels)
P_COUNT = 12  # COUNT_TRIPLETS (Italian thirds: 3v-2 a special, 1 a scartina) or COUNT_DIRECT (French half points)
P_EX_LAST = 13  # who gets EX played to the last trick: one of the EX_LAST_* rules below
P_EXCHANGE = 14  # 1: the Excuse exchange (one scartina's value from the owner's side to the winner's side)
P_DEALER = 15  # seat of the dealer
P_VALUE = 16  # params[16..23]: the value of the cards of masks row MK_VALUE + k
P_ACCUSO = 24  # Piedmontese option accuso (0/1)
P_ACCUSO_POINTS = 25  # Piedmontese option accuso_points
P_POIGNEE_1 = 26  # French: trumps needed for a simple / double / triple poignee (26, 27, 28)
P_N_SPECIAL = 29  # number of non-card actions (pass, bids, commitments)
P_TEAMS = 30  # 1: fixed partnerships 0+2 vs 1+3 (piedmont4)
P_BID_WORDS = 31  # words a seat can say in the auction (observation width per seat)
P_N_CONTRACTS = 32  # contracts (observation one-hot width)
P_TOTAL_POINTS = 33  # card points in the deck (thirds or half points) for normalisation
N_PARAMS = 40

FAMILY_MINEO, FAMILY_PIEDMONT, FAMILY_FRENCH = 0, 1, 2
COUNT_TRIPLETS, COUNT_DIRECT = 0, 1
# P_EX_LAST values (the Excuse / Fuggitivo / Matto played to the last trick):
# EX_LAST_IF_LED     to the trick's winner only if EX led that trick (Mineo), else its owner's side keeps it
# EX_LAST_ALWAYS     to the trick's winner (Piedmontese; French option excuse_last_trick = "trick_winner")
# EX_LAST_OTHER_SIDE to the camp opposite its owner, outside a chelem (French, "other_side", the FFT text)
EX_LAST_IF_LED, EX_LAST_ALWAYS, EX_LAST_OTHER_SIDE = 0, 1, 2


def make_tables(deck: Deck, card_value, masks: dict, params: dict, obs) -> RuleTables:
    """Compile a deck, card values, named masks {MK_*: [names]}, params {P_*: int} and an observation
    layout (int64[N_SECTIONS] offsets) into RuleTables."""
    mk = np.zeros((N_MASKS, 2), dtype=np.uint64)
    for row, names in masks.items():
        mk[row] = deck.mask_of(names)
    for c in range(deck.n_cards):
        s = int(deck.suit[c])
        if s < 4:
            mk[MK_SUIT + s, 1] |= np.uint64(1) << np.uint64(deck.bit[c])
    pr = np.zeros(N_PARAMS, dtype=np.int64)
    for k, v in params.items():
        pr[k] = int(v)
    values = sorted({int(v) for v in card_value})
    assert len(values) <= 8
    pr[P_N_VALUES] = len(values)
    for k, v in enumerate(values):
        pr[P_VALUE + k] = v
        mk[MK_VALUE + k] = deck.mask_of([c for c in range(deck.n_cards) if int(card_value[c]) == v])
    assert not (mk[MK_TRUMPS, 0] & (np.uint64(1) << np.uint64(EX_BIT)))
    card = np.stack([deck.suit, deck.word, deck.bit, np.asarray(card_value)], axis=1).astype(np.int16)
    return RuleTables(
        card=card, pos_to_card=deck.pos_to_card.copy(), masks=mk, params=pr, obs=np.asarray(obs, np.int64)
    )
