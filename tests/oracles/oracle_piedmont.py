"""Independent reference implementation ("oracle") of the Piedmontese tarocchi rules (piedmont3 / piedmont4).

Written from scratch from the project's rules specification (RULES.md, now docs/rules.md),
section "2. `piedmont3` and `piedmont4`", plus the sections
"Conventions for all games" and "Card notation", for differential testing of the fast engine. It deliberately
shares no code with the engine: it is slow and plain (lists and sets of card-name strings), meant to be
obviously correct.

Card names: trumps "T1".."T21", "EX" (the Matto), suit cards rank + suit with ranks K Q N J 10 9 ... 1 and
suits C D S B, e.g. "KC", "1D", "10S", "NB".

Action strings: "discard:<card>", "play:<card>", "accuso", "pass".

Phases, in order:
  discard  the dealer (seat N-1), who has taken the stock, discards 3 (piedmont3) or 2 (piedmont4) cards,
           one action each. The discards count as the dealer's won cards.
  accuso   (piedmont4 with accuso=True only) seats 0, 1, 2, 3 in turn: "pass" always, plus "accuso" when
           holding >= 10 trumps (EX not counted) or all of T1, T20, T21.
  play     25 (piedmont3) or 19 (piedmont4) tricks; seat 0 leads the first, each trick's winner the next.

points_thirds(): piedmont3 thirds per player (sum 231); piedmont4 thirds per side [seats 0+2, seats 1+3]
(sum 243 plus the accuso bonuses). Both include the Excuse exchange. returns() and points_thirds() raise
RuntimeError before the deal is over.
"""

from __future__ import annotations

SUITS = ("C", "D", "S", "B")
RANKS = ("K", "Q", "N", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2", "1")  # as listed, not by strength
REVERSED_SUITS = ("D", "C")  # Denari and Coppe: pips rank 1 > 2 > ... > 10
TRUMPS = tuple(f"T{i}" for i in range(1, 22))  # T1 (Bagatto) .. T21 (Mondo)
MATTO = "EX"
KINGS = ("KC", "KD", "KS", "KB")
VARIANTS = ("piedmont3", "piedmont4")
HONOUR_5_OPTIONS = ("mondo", "angelo")


def full_deck() -> list[str]:
    """The 78 cards: suit cards (C, D, S, B, each K Q N J 10 .. 1), then T1..T21, then EX."""
    deck = [rank + suit for suit in SUITS for rank in RANKS]
    deck.extend(TRUMPS)
    deck.append(MATTO)
    return deck


ALL_CARDS = frozenset(full_deck())


def is_trump(card: str) -> bool:
    return card in TRUMPS


def card_suit(card: str) -> str | None:
    """The suit letter of a suit card; None for trumps and EX."""
    if is_trump(card) or card == MATTO:
        return None
    return card[-1]


def trump_strength(card: str) -> int:
    """Higher is stronger: T1 = 1 ... T19 = 19, T21 (Mondo) = 21, T20 (Angelo) = 22 (Angel beats World)."""
    number = int(card[1:])
    if number == 20:
        return 22
    return number


def suit_strength(card: str) -> int:
    """Higher is stronger within a suit. Courts: K 14, Q 13, N 12, J 11.

    Spade and Bastoni pips: 10 = 10 ... 1 = 1. Denari and Coppe pips reversed: 1 = 10, 2 = 9 ... 10 = 1.
    """
    rank = card[:-1]
    suit = card[-1]
    courts = {"K": 14, "Q": 13, "N": 12, "J": 11}
    if rank in courts:
        return courts[rank]
    pip = int(rank)
    if suit in REVERSED_SUITS:
        return 11 - pip
    return pip


def special_values(variant: str = "piedmont3", honour_5: str = "mondo") -> dict[str, int]:
    """Card values of the special cards; every card not listed is a scartina."""
    values = {"T1": 5, MATTO: 4}
    if variant == "piedmont4":
        values["T20"] = 5
        values["T21"] = 5
    elif honour_5 == "mondo":
        values["T21"] = 5
    else:
        values["T20"] = 5
    for suit in SUITS:
        values["K" + suit] = 5
        values["Q" + suit] = 4
        values["N" + suit] = 3
        values["J" + suit] = 2
    return values


def thirds_of(cards: list[str], values: dict[str, int]) -> int:
    """3*sum(values of specials) - 2*(number of specials) + (number of scartine)."""
    total = 0
    for card in cards:
        if card in values:
            total += 3 * values[card] - 2
        else:
            total += 1
    return total


def setting_card(cards: list[str]) -> str | None:
    """The card that sets the suit of a trick: the first card that is not EX (None if there is none yet)."""
    for card in cards:
        if card != MATTO:
            return card
    return None


def trick_winner_index(cards: list[str]) -> int:
    """Index (in playing order) of the card that wins a complete trick.

    The highest trump wins if any trump was played; else the highest card of the suit set by the first card
    (or by the second card when EX was led). EX never wins.
    """
    trump_indices = [i for i, c in enumerate(cards) if is_trump(c)]
    if trump_indices:
        return max(trump_indices, key=lambda i: trump_strength(cards[i]))
    suit = card_suit(setting_card(cards))
    same_suit = [i for i, c in enumerate(cards) if c != MATTO and card_suit(c) == suit]
    return max(same_suit, key=lambda i: suit_strength(cards[i]))


class PiedmontOracle:
    def __init__(
        self,
        hands: list[list[str]],
        stock: list[str],
        variant: str = "piedmont3",
        excuse_exchange: bool = True,
        honour_5: str = "mondo",
        accuso: bool = False,
        accuso_points: int = 5,
    ):
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}")
        if honour_5 not in HONOUR_5_OPTIONS:
            raise ValueError(f"honour_5 must be 'mondo' or 'angelo', not {honour_5!r}")
        if variant == "piedmont3":
            n_players, hand_size, stock_size, n_discards = 3, 25, 3, 3
        else:
            n_players, hand_size, stock_size, n_discards = 4, 19, 2, 2
        if len(hands) != n_players or any(len(h) != hand_size for h in hands) or len(stock) != stock_size:
            raise ValueError(
                f"{variant} needs {n_players} hands of {hand_size} cards and a stock of {stock_size} cards"
            )
        every = [c for h in hands for c in h] + list(stock)
        if len(every) != 78 or len(set(every)) != 78 or set(every) != ALL_CARDS:
            raise ValueError("the deal must be the 78 distinct tarocchi cards")

        self.variant = variant
        self.n = n_players
        self.dealer = n_players - 1
        self.n_discards = n_discards
        self.n_tricks = hand_size
        self.excuse_exchange = excuse_exchange
        self.honour_5 = honour_5
        self.accuso_enabled = accuso and variant == "piedmont4"  # the option exists only in piedmont4
        self.accuso_points = accuso_points
        self.values = special_values(variant, honour_5)
        if variant == "piedmont4":
            self.protected = {"T1", "T20", "T21", MATTO} | set(KINGS)
        elif honour_5 == "mondo":
            self.protected = {"T1", "T21", MATTO} | set(KINGS)
        else:
            self.protected = {"T1", "T20", MATTO} | set(KINGS)

        self.initial_hands = [list(h) for h in hands]
        self.stock = list(stock)
        self.hands = [list(h) for h in hands]
        self.hands[self.dealer].extend(self.stock)  # the dealer takes the stock
        self.discards: list[str] = []
        # accuso_conditions[seat]: number of conditions declared (0 = passed or never asked)
        self.accuso_conditions = [0] * self.n
        self.accuso_said = [False] * self.n
        # Completed tricks: dicts with "leader", "plays" (list of (seat, card)), "winner".
        self.tricks: list[dict] = []
        self.current_plays: list[tuple[int, str]] = []
        self.leader: int | None = None
        self.history: list[tuple[int, str]] = []
        # Won cards per seat, and the Excuse exchange per seat in thirds.
        self.won: list[list[str]] = [[] for _ in range(self.n)]
        self.exchange = [0] * self.n

        self.phase = "discard"
        self.turn = self.dealer

    # ------------------------------------------------------------------ queries

    def is_terminal(self) -> bool:
        return self.phase == "done"

    def current_player(self) -> int:
        if self.phase == "done":
            return -1
        return self.turn

    def side_of(self, seat: int) -> int:
        """piedmont3: the seat itself (each for himself); piedmont4: 0 for seats 0+2, 1 for seats 1+3."""
        if self.variant == "piedmont3":
            return seat
        return seat % 2

    def legal_actions(self) -> set[str]:
        if self.phase == "done":
            return set()
        if self.phase == "discard":
            return {"discard:" + c for c in self._legal_discards()}
        if self.phase == "accuso":
            if self._accuso_conditions_held(self.turn) > 0:
                return {"pass", "accuso"}
            return {"pass"}
        if self.phase == "play":
            return {"play:" + c for c in self._legal_plays(self.turn)}
        raise AssertionError(self.phase)

    def _legal_discards(self) -> list[str]:
        hand = self.hands[self.dealer]
        still_to_make = self.n_discards - len(self.discards)
        allowed = [c for c in hand if not is_trump(c) and c not in self.protected]
        if len(allowed) < still_to_make:
            allowed = allowed + [c for c in hand if is_trump(c) and c not in self.protected]
        return allowed

    def _accuso_conditions_held(self, seat: int) -> int:
        hand = self.hands[seat]
        held = 0
        if len([c for c in hand if is_trump(c)]) >= 10:
            held += 1
        if "T1" in hand and "T20" in hand and "T21" in hand:
            held += 1
        return held

    def _legal_plays(self, seat: int) -> list[str]:
        hand = self.hands[seat]
        played = [c for _, c in self.current_plays]
        setter = setting_card(played)
        if setter is None:
            # Leading (EX may be led at any time), or playing right after a led EX: anything.
            return list(hand)
        trumps_in_hand = [c for c in hand if is_trump(c)]
        if is_trump(setter):
            legal = trumps_in_hand if trumps_in_hand else list(hand)
        else:
            suit = card_suit(setter)
            same_suit = [c for c in hand if card_suit(c) == suit]
            if same_suit:
                legal = same_suit
            elif trumps_in_hand:
                legal = trumps_in_hand
            else:
                legal = list(hand)
        if MATTO in hand and MATTO not in legal:
            legal = legal + [MATTO]  # EX may always be played instead of a legal card
        return legal

    # ------------------------------------------------------------------ transitions

    def apply(self, action: str) -> None:
        if self.phase == "done":
            raise ValueError("the deal is over")
        if action not in self.legal_actions():
            raise ValueError(f"illegal action {action!r} for seat {self.turn} in phase {self.phase}")
        seat = self.turn
        self.history.append((seat, action))

        if self.phase == "discard":
            card = action.split(":", 1)[1]
            self.hands[seat].remove(card)
            self.discards.append(card)
            self.won[seat].append(card)  # the discards count for the dealer
            if len(self.discards) == self.n_discards:
                if self.accuso_enabled:
                    self.phase = "accuso"
                    self.turn = 0
                else:
                    self._start_play()
            return

        if self.phase == "accuso":
            if action == "accuso":
                self.accuso_said[seat] = True
                self.accuso_conditions[seat] = self._accuso_conditions_held(seat)
            if seat == self.n - 1:
                self._start_play()
            else:
                self.turn = seat + 1
            return

        if self.phase == "play":
            card = action.split(":", 1)[1]
            self.hands[seat].remove(card)
            self.current_plays.append((seat, card))
            if len(self.current_plays) < self.n:
                self.turn = (seat + 1) % self.n
                return
            self._finish_trick()
            return

        raise AssertionError(self.phase)

    def _start_play(self) -> None:
        self.phase = "play"
        self.leader = 0
        self.turn = 0

    def _finish_trick(self) -> None:
        plays = self.current_plays
        cards = [c for _, c in plays]
        winner = plays[trick_winner_index(cards)][0]
        last = len(self.tricks) == self.n_tricks - 1
        for seat, card in plays:
            if card != MATTO:
                self.won[winner].append(card)
            elif last:
                self.won[winner].append(card)  # EX played or led to the last trick goes to the winner
            else:
                self.won[seat].append(card)  # the owner keeps it
                if self.excuse_exchange and self.side_of(seat) != self.side_of(winner):
                    self.exchange[seat] -= 1
                    self.exchange[winner] += 1
        self.tricks.append({"leader": self.leader, "plays": plays, "winner": winner})
        self.current_plays = []
        if last:
            self.phase = "done"
            self.turn = -1
        else:
            self.leader = winner
            self.turn = winner

    # ------------------------------------------------------------------ scoring

    def _require_terminal(self) -> None:
        if self.phase != "done":
            raise RuntimeError("the deal is not over")

    def seat_card_thirds(self) -> list[int]:
        """Thirds per seat from won cards plus the Excuse exchange (no accuso bonus)."""
        self._require_terminal()
        return [thirds_of(self.won[s], self.values) + self.exchange[s] for s in range(self.n)]

    def accuso_bonus_thirds(self) -> list[int]:
        """piedmont4: accuso bonus thirds per side [seats 0+2, seats 1+3]."""
        bonus = [0, 0]
        if self.variant == "piedmont4":
            for seat in range(4):
                bonus[self.side_of(seat)] += 3 * self.accuso_points * self.accuso_conditions[seat]
        return bonus

    def points_thirds(self) -> list[int]:
        per_seat = self.seat_card_thirds()
        if self.variant == "piedmont3":
            assert sum(per_seat) == 231
            return per_seat
        sides = [per_seat[0] + per_seat[2], per_seat[1] + per_seat[3]]
        assert sum(sides) == 243
        bonus = self.accuso_bonus_thirds()
        return [sides[0] + bonus[0], sides[1] + bonus[1]]

    def returns(self) -> list[int]:
        thirds = self.points_thirds()
        if self.variant == "piedmont3":
            payoffs = [t - 77 for t in thirds]
        else:
            diff = thirds[0] - thirds[1]
            payoffs = [diff, -diff, diff, -diff]
        assert sum(payoffs) == 0
        return payoffs

    def won_cards(self) -> list[list[str]]:
        """Won cards per seat at the end: tricks won, the dealer's discards, EX with its owner (or last-trick
        winner)."""
        self._require_terminal()
        return [list(w) for w in self.won]
