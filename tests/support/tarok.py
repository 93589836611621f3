"""Slovenian tarok deals for tests, with card names: a deck in deal order from a few fixed cards, and one deal played
side by side on the engine (``tarocchi_rl.make("tarok3" | "tarok4")``) and the independent oracle
(tests/oracles/oracle_tarok.py), both spoken to with the same action strings."""

from __future__ import annotations

import tarocchi_rl
from tests.oracles.oracle_tarok import HAND_SIZE, TarokOracle, full_deck


def make_deck(players: int, fixed: dict[int, list[str]], talon: list[str] | None = None) -> list[str]:
    """A deck in deal order: each seat's fixed cards first, the rest dealt round-robin in full_deck() order
    (taroks first, so that every hand gets one); the talon is ``talon`` or the last cards left."""
    size = HAND_SIZE[players]
    hands = [list(fixed.get(s, [])) for s in range(players)]
    used = {c for h in hands for c in h} | set(talon or [])
    rest = [c for c in full_deck() if c not in used]
    if talon is None:
        talon = rest[-6:]
        rest = rest[:-6]
    seat = 0
    for card in rest:
        while len(hands[seat]) == size:
            seat = (seat + 1) % players
        hands[seat].append(card)
        seat = (seat + 1) % players
    deck = [c for h in hands for c in h] + list(talon)
    assert len(deck) == 54 and set(deck) == set(full_deck()), "make_deck: bad fixed cards"
    return deck


class Both:
    """One deal on the engine and on the oracle, kept in step: ``apply`` applies each action to both, and every
    query asserts that the two agree before it answers."""

    def __init__(self, players: int, deck: list[str]) -> None:
        h = HAND_SIZE[players]
        self.players = players
        game = tarocchi_rl.make(f"tarok{players}")
        self.engine = game.state_from_deal([deck[h * s : h * (s + 1)] for s in range(players)], deck[h * players :])
        self.oracle = TarokOracle(players, deck)

    def apply(self, *actions: str) -> Both:
        for text in " ".join(actions).split():
            self.engine.apply(text)
            self.oracle.apply(text)
        return self

    def phase(self) -> str:
        """The phase, by the engine's name, once the oracle's agrees (its bidding, king_calling, talon_choice)."""
        want = {"bidding": "bid", "king_calling": "king_call"}.get(self.oracle.phase, self.oracle.phase)
        assert self.engine.phase == want, (self.engine.phase, self.oracle.phase)
        return self.engine.phase

    def legal(self) -> set[str]:
        self.phase()
        got = {self.engine.action_to_string(a) for a in self.engine.legal_actions()}
        assert got == self.oracle.legal_actions(), (got, self.oracle.legal_actions())
        return got

    def player(self) -> int:
        assert self.engine.current_player() == self.oracle.current_player()
        return self.engine.current_player()

    def done(self) -> bool:
        assert self.engine.is_terminal() == self.oracle.is_terminal()
        return self.engine.is_terminal()

    def returns(self) -> list[int]:
        assert self.engine.returns() == self.oracle.returns()
        return self.engine.returns()

    def finish(self) -> list[int]:
        """Play the deal out with the lowest legal action (sorted strings) on both; the agreed returns."""
        while not self.done():
            self.player()
            self.apply(min(self.legal()))
        return self.returns()
