"""Card ids, names and the two-word bitmask layout, written once for every deck.

A hand (or any set of cards) is two ``uint64`` words, so the 63-card Mineo deck and the 78-card decks share
one representation and one trick kernel:

| word | bits            | holds                                                                 |
|------|-----------------|-----------------------------------------------------------------------|
| 0    | 0 .. 20         | trumps, **bit index = trump strength** (bit 0 = the lowest trump)      |
| 0    | 32 (``EX_BIT``) | the Fool: Mineo Fuggitivo, Piedmontese Matto, French Excuse            |
| 1    | 16*s .. 16*s+15 | suit ``s`` (0..3), **bit index - 16*s = strength in the suit**         |

Because bits are ordered by strength, "highest trump in the trick" and "can he beat it" are bit comparisons,
and reversed suits (Piedmontese Denari/Coppe) or the Angel above the World are only a different table.

Dense card ids (used in actions, observations and records) number the deck's cards ``0 .. n_cards-1``:
first the trumps from lowest to highest strength, then EX, then the suits in the deck's suit order, each from
lowest to highest strength. For ``mineo``:

| dense id | cards                                  |
|----------|----------------------------------------|
| 0 .. 20  | T0 (Miseria), T1, ..., T20 (Giove)     |
| 21       | EX (Fuggitivo)                         |
| 22 .. 31 | Coppe  5 6 7 8 9 10 J N Q K            |
| 32 .. 42 | Denari 4 5 6 7 8 9 10 J N Q K          |
| 43 .. 52 | Spade  5 .. K                          |
| 53 .. 62 | Bastoni 5 .. K                         |

For the 78-card decks (``piedmont*``: suits C D S B, ``french*``: suits S H D C) the dense ids are 0..20 the
trumps by strength (Piedmontese: T1..T19, T21, T20; French: T1..T21), 21 EX, then 14 cards per suit from
lowest to highest (Piedmontese Coppe and Denari: 10 9 .. 2 1 J N Q K; otherwise 1 2 .. 10 J N Q K).

Card names follow docs/rules.md: ``T0``..``T21``, ``EX``, rank + suit (``KC``, ``10D``, ``NS``).
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

EX_BIT = 32
_SUIT_FIELD = 16
TRUMP = 4  # value of Deck.suit for trumps
FOOL = 5  # value of Deck.suit for EX


@dataclass(frozen=True)
class Deck:
    """One deck: names and bit positions of its cards (all arrays indexed by dense card id).

    Attributes
    ----------
    names : tuple[str, ...]         dense id -> card name
    suit_letters : str              suit letter of suit index 0..3
    word, bit : int8[C]             the card's word (0/1) and bit in that word
    suit : int8[C]                  0..3 suit index, 4 trump, 5 EX
    strength : int8[C]              rank within its suit / among trumps (0 = lowest)
    pos_to_card : int16[128]        word*64+bit -> dense id, -1 where no card
    suit_system : str               the suits' pattern, a key of SUIT_NAMES: "italian" or "french"
                                    (the page draws each pattern's symbols)
    labels : tuple[str, ...]        dense id -> the card in words ("King of Hearts", "Trump 1 (Pagat)")
    """

    names: tuple
    suit_letters: str
    word: np.ndarray
    bit: np.ndarray
    suit: np.ndarray
    strength: np.ndarray
    pos_to_card: np.ndarray
    suit_system: str
    labels: tuple[str, ...]

    @property
    def n_cards(self) -> int:
        return len(self.names)

    def card_id(self, name: str) -> int:
        """Dense id of a card name; ValueError naming the card if it is not in this deck."""
        try:
            return self._index[name.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown card {name!r} for this deck") from None

    @cached_property
    def _index(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.names)}

    def mask_of(self, names: Iterable[str | int]) -> np.ndarray:
        """Two-word mask (uint64[2]) of an iterable of card names or dense ids."""
        m = np.zeros(2, dtype=np.uint64)
        for c in names:
            c = self.card_id(c) if isinstance(c, str) else int(c)
            m[self.word[c]] |= np.uint64(1) << np.uint64(self.bit[c])
        return m

    def cards_of(self, mask: Sequence[int] | np.ndarray) -> list[int]:
        """Dense ids (ascending) of the cards in a two-word mask."""
        out = []
        for w in range(2):
            x = int(mask[w])
            while x:
                b = (x & -x).bit_length() - 1
                out.append(int(self.pos_to_card[w * 64 + b]))
                x &= x - 1
        return sorted(out)

    def sort_key(self, c: int) -> tuple[int, int]:
        """Display order: trumps high to low, EX, then suits, high to low."""
        s = int(self.suit[c])
        return (0 if s == TRUMP else 1 if s == FOOL else 2 + s, -int(self.strength[c]))


# The suits' names by pattern and letter (a deck's suit_system); the page draws each pattern's own symbols.
SUIT_NAMES: dict[str, dict[str, str]] = {
    "italian": {"C": "Coppe (cups)", "D": "Denari (coins)", "S": "Spade (swords)", "B": "Bastoni (batons)"},
    "french": {"S": "Spades", "H": "Hearts", "D": "Diamonds", "C": "Clubs"},
}
FACE_WORDS = {"J": "Jack", "N": "Knight", "Q": "Queen", "K": "King"}
_RANK_WORDS = {"1": "Ace", **FACE_WORDS}  # where the 1 is the Ace (not in Slovenian tarok: there it is a pip)


def build_deck(trumps_low_to_high: Sequence[str], suits: Sequence[tuple[str, Sequence[str]]], *, suit_system: str,
               fool: bool = True, rank_words: Mapping[str, str] = _RANK_WORDS,
               trump_names: Mapping[str, str] | None = None, fool_name: str = "the Fool") -> Deck:
    """Build a Deck from trump names (lowest first) and ``[(letter, ranks lowest first), ...]``; ``fool``: the
    deck has EX (dense id after the trumps), else the suits follow the trumps directly. The cards' labels: a
    rank in words where ``rank_words`` names it, the suit's name in ``SUIT_NAMES[suit_system]``, a trump's own
    name from ``trump_names`` (card name -> name), EX's ``fool_name``."""
    names_of_suits = SUIT_NAMES[suit_system]
    trump_names = trump_names or {}

    def trump_label(t: str) -> str:
        return f"Trump {t[1:]}" + (f" ({trump_names[t]})" if t in trump_names else "")

    # one row per card, in dense-id order: (name, word, bit, suit, strength, label)
    cards = [(t, 0, k, TRUMP, k, trump_label(t)) for k, t in enumerate(trumps_low_to_high)]
    cards += [("EX", 0, EX_BIT, FOOL, 0, fool_name)] if fool else []
    cards += [(r + letter, 1, _SUIT_FIELD * s + k, s, k, f"{rank_words.get(r, r)} of {names_of_suits[letter]}")
              for s, (letter, ranks) in enumerate(suits) for k, r in enumerate(ranks)]
    names, word, bit, suit, strength, labels = (list(column) for column in zip(*cards, strict=True))
    pos = np.full(128, -1, dtype=np.int16)
    for c, (w, b) in enumerate(zip(word, bit, strict=True)):
        pos[w * 64 + b] = c
    return Deck(
        names=tuple(names),
        suit_letters="".join(letter for letter, _ in suits),
        word=np.array(word, dtype=np.int8),
        bit=np.array(bit, dtype=np.int8),
        suit=np.array(suit, dtype=np.int8),
        strength=np.array(strength, dtype=np.int8),
        pos_to_card=pos,
        suit_system=suit_system,
        labels=tuple(labels),
    )


_PIPS_5 = ["5", "6", "7", "8", "9", "10"]
_FACES_IT = ["J", "N", "Q", "K"]

MINEO_DECK = build_deck(
    [f"T{k}" for k in range(21)],
    [
        ("C", _PIPS_5 + _FACES_IT),
        ("D", ["4"] + _PIPS_5 + _FACES_IT),
        ("S", _PIPS_5 + _FACES_IT),
        ("B", _PIPS_5 + _FACES_IT),
    ],
    suit_system="italian",
    trump_names={"T0": "Miseria", "T20": "Giove"},
    fool_name="Fuggitivo (the Fool)",
)

_PIPS_1 = [str(k) for k in range(1, 11)]
_FACES = ["J", "N", "Q", "K"]
_REVERSED = [str(k) for k in range(10, 0, -1)]  # Piedmontese Denari and Coppe: 1 beats 2 beats ... 10

# Piedmontese tarocchi: the Angel (T20) above the World (T21); reversed pips in Coppe and Denari.
PIEDMONT_DECK = build_deck(
    [f"T{k}" for k in range(1, 20)] + ["T21", "T20"],
    [("C", _REVERSED + _FACES), ("D", _REVERSED + _FACES), ("S", _PIPS_1 + _FACES), ("B", _PIPS_1 + _FACES)],
    suit_system="italian",
    trump_names={"T20": "the Angel", "T21": "the World"},
    fool_name="Matto (the Fool)",
)

# French Tarot: suits pique, coeur, carreau, trefle; K > Q > N (Cavalier) > J (Valet) > 10 > ... > 1.
FRENCH_DECK = build_deck(
    [f"T{k}" for k in range(1, 22)],
    [("S", _PIPS_1 + _FACES), ("H", _PIPS_1 + _FACES), ("D", _PIPS_1 + _FACES), ("C", _PIPS_1 + _FACES)],
    suit_system="french",
    trump_names={"T1": "the Petit"},
    fool_name="Excuse",
)
