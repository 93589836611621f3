"""The card part of every family's action vocabulary, and its strings.

| action id        | meaning                  | string              |
|------------------|--------------------------|---------------------|
| 0 .. C-1         | play card c (dense id)   | ``play:<card>``     |
| C .. 2C-1        | discard card c - C       | ``discard:<card>``  |
| 2C ..            | the family's specials    | the family's names  |

C = the deck's cards. Each family module names its specials and their strings; these helpers read and write the
card actions for all of them.
"""

from ..cards import Deck


def card_action_to_string(deck: Deck, a: int) -> str | None:
    """``play:<card>`` / ``discard:<card>`` for a card action id, None for a special one (a >= 2C)."""
    c = deck.n_cards
    if 0 <= a < c:
        return "play:" + deck.names[a]
    if c <= a < 2 * c:
        return "discard:" + deck.names[a - c]
    return None


def card_string_to_action(deck: Deck, text: str) -> int | None:
    """The action id of ``play:<card>`` / ``discard:<card>`` (either case; a ValueError naming an unknown card),
    None for any other string."""
    kind, _, arg = text.strip().partition(":")
    kind = kind.lower()
    if arg and kind == "play":
        return deck.card_id(arg)
    if arg and kind == "discard":
        return deck.n_cards + deck.card_id(arg)
    return None
