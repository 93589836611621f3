"""Independent reference implementation ("oracle") of the rules of Mineo (Tarocchi Siciliani a 4).

Written from scratch from the project's rules specification (RULES.md, now docs/rules.md),
section "1. `mineo`", plus the sections "Conventions for
all games" and "Card notation", for differential testing of the fast engine. It deliberately shares no code
with the engine: it is slow and plain (lists and sets of card-name strings), meant to be obviously correct.

Card names: trumps "T0".."T20" (T0 is the Miseria), "EX" (the Fuggitivo), suit cards rank + suit with ranks
K Q N J 10 9 8 7 6 5 (Denari also 4) and suits C D S B, e.g. "KC", "10D", "4D".

Action strings: "pass", "solo", "call", "scommessa", "rivanto", "discard:<card>", "play:<card>".

Phases, in order:
  early     (only if early_solo) seats 0..3: pass / solo; the first solo ends it (doubled solo).
  auction   seats 0..3: pass / solo / call (call only while nobody has called); the first solo ends it.
            All four pass: the deal is void and terminal with payoffs [0, 0, 0, 0].
  discard   the declarer (who has taken the monte, 18 cards) discards 3, one action each.
  scommessa the declarer: pass / scommessa (only holding T20 and EX).
  rivanto   seats declarer+1, +2, +3: pass, or rivanto for an opponent of the declarer; first rivanto ends it.
  play      15 tricks, the declarer leads the first.

jochi() returns, for each side, a dict with ALL eight keys always present (zero where not earned):
  "rimatura", "vanto", "rivanto", "arie", "arie_giove", "pigliata", "re", "scommessa".
  "arie" is 1 for T16..T19 without T20; "arie_giove" is 2 for T16..T20 (the two never both nonzero).
  "vanto" is 1 to the side winning the last trick when no rivanto was said; "rivanto" is 2 to the side that
  gets the rivanto jochi when one was said. "pigliata" is the count of pigliate (1 jocu each).
For a void deal (all passed) side_thirds() returns (0, 0) and jochi() returns all-zero dicts.
returns(), side_thirds() and jochi() raise RuntimeError before the deal is terminal.
"""

from __future__ import annotations

SUITS = ("C", "D", "S", "B")
SUIT_RANKS = ("K", "Q", "N", "J", "10", "9", "8", "7", "6", "5")  # high to low
DENARI_RANKS = SUIT_RANKS + ("4",)  # Denari has the 4 as its lowest card
TRUMPS = tuple(f"T{i}" for i in range(21))  # T0 (Miseria) .. T20 (Giove)
FUGGITIVO = "EX"
KINGS = ("KC", "KD", "KS", "KB")
ARIE = ("T16", "T17", "T18", "T19")
PIGLIATA_CARDS = ("T16", "T17", "T18", "T19", "T1")
DISCARDABLE_TRUMPS = tuple(f"T{i}" for i in range(2, 16))  # T2..T15, only when short of allowed cards

SPECIAL_VALUES = {"T16": 5, "T17": 5, "T18": 5, "T19": 5, "T20": 10, "T1": 10, "EX": 10}
for _suit in SUITS:
    SPECIAL_VALUES["J" + _suit] = 2
    SPECIAL_VALUES["N" + _suit] = 3
    SPECIAL_VALUES["Q" + _suit] = 4
    SPECIAL_VALUES["K" + _suit] = 5

LAST_TRICK_BONUS_THIRDS = 15
RIMATURA_THRESHOLD_THIRDS = 164
JOCHI_KEYS = ("rimatura", "vanto", "rivanto", "arie", "arie_giove", "pigliata", "re", "scommessa")


def full_deck() -> list[str]:
    """The 63 Mineo cards: suit cards (C, D, S, B, high to low), then T0..T20, then EX."""
    deck = []
    for suit in SUITS:
        ranks = DENARI_RANKS if suit == "D" else SUIT_RANKS
        for rank in ranks:
            deck.append(rank + suit)
    deck.extend(TRUMPS)
    deck.append(FUGGITIVO)
    return deck


ALL_CARDS = frozenset(full_deck())


def is_trump(card: str) -> bool:
    return card in TRUMPS


def trump_number(card: str) -> int:
    return int(card[1:])


def card_suit(card: str) -> str | None:
    """The suit letter of a suit card; None for trumps and EX."""
    if is_trump(card) or card == FUGGITIVO:
        return None
    return card[-1]


def suit_strength(card: str) -> int:
    """Higher is stronger, within a suit: K = 10 ... 5 = 1, 4 = 0."""
    rank = card[:-1]
    return len(DENARI_RANKS) - 1 - DENARI_RANKS.index(rank)


def thirds_of(cards: list[str]) -> int:
    """3*sum(values of specials) - 2*(number of specials) + (number of scartine). No last-trick bonus."""
    total = 0
    for card in cards:
        if card in SPECIAL_VALUES:
            total += 3 * SPECIAL_VALUES[card] - 2
        else:
            total += 1
    return total


def trick_winner_index(cards: list[str]) -> int:
    """Index (0..3, in playing order) of the card that wins a complete trick of 4 cards.

    The card that sets the suit is the first card, unless the first card is EX (only possible when EX is led
    to the last trick), in which case it is the second card. The highest trump wins if any trump was played;
    else the highest card of the suit set. EX never wins.
    """
    trump_indices = [i for i, c in enumerate(cards) if is_trump(c)]
    if trump_indices:
        return max(trump_indices, key=lambda i: trump_number(cards[i]))
    setter = cards[1] if cards[0] == FUGGITIVO else cards[0]
    suit = card_suit(setter)
    same_suit = [i for i, c in enumerate(cards) if c != FUGGITIVO and card_suit(c) == suit]
    return max(same_suit, key=lambda i: suit_strength(cards[i]))


class MineoOracle:
    def __init__(self, hands: list[list[str]], monte: list[str], early_solo: bool = True):
        if len(hands) != 4 or any(len(h) != 15 for h in hands) or len(monte) != 3:
            raise ValueError("need 4 hands of 15 cards and a monte of 3 cards")
        every = [c for h in hands for c in h] + list(monte)
        if len(set(every)) != 63 or set(every) != ALL_CARDS:
            raise ValueError("the deal must be the 63 distinct Mineo cards")

        self.initial_hands = [list(h) for h in hands]
        self.hands = [list(h) for h in hands]  # full 15-card hands (the early round only uses the first 5)
        self.monte = list(monte)
        self.early_solo = early_solo

        self.declarer: int | None = None
        self.partner: int | None = None
        self.caller: int | None = None
        self.called_trump: str | None = None
        self.solo = False
        self.forced_solo = False
        self.doubled = False
        self.void = False
        self.discards: list[str] = []
        self.scommessa_said = False
        self.rivanto_said = False
        self.rivanto_seat: int | None = None
        # Completed tricks: dicts with "leader", "plays" (list of (seat, card) in playing order), "winner".
        self.tricks: list[dict] = []
        self.current_plays: list[tuple[int, str]] = []
        self.leader: int | None = None
        self.history: list[tuple[int, str]] = []

        if early_solo:
            self.phase = "early"
        else:
            self.phase = "auction"
        self.turn = 0
        self.rivanto_order: list[int] = []
        self._final: dict | None = None

    # ------------------------------------------------------------------ queries

    def is_terminal(self) -> bool:
        return self.phase == "done"

    def current_player(self) -> int:
        if self.phase == "done":
            return -1
        return self.turn

    def declarer_side(self) -> set[int]:
        side = {self.declarer}
        if self.partner is not None:
            side.add(self.partner)
        return side

    def side_of(self, seat: int) -> int:
        """0 for the declarer's side, 1 for the opponents."""
        return 0 if seat in self.declarer_side() else 1

    def legal_actions(self) -> set[str]:
        seat = self.turn
        if self.phase == "done":
            return set()
        if self.phase == "early":
            return {"pass", "solo"}
        if self.phase == "auction":
            if self.caller is None:
                return {"pass", "solo", "call"}
            return {"pass", "solo"}
        if self.phase == "discard":
            return {"discard:" + c for c in self._legal_discards()}
        if self.phase == "scommessa":
            hand = self.hands[seat]
            if "T20" in hand and FUGGITIVO in hand:
                return {"pass", "scommessa"}
            return {"pass"}
        if self.phase == "rivanto":
            if seat in self.declarer_side():
                return {"pass"}
            return {"pass", "rivanto"}
        if self.phase == "play":
            return {"play:" + c for c in self._legal_plays(seat)}
        raise AssertionError(self.phase)

    def _legal_discards(self) -> list[str]:
        hand = self.hands[self.declarer]
        still_to_make = 3 - len(self.discards)
        allowed = [c for c in hand if not is_trump(c) and c not in KINGS and c != FUGGITIVO]
        if len(allowed) < still_to_make:
            allowed = allowed + [c for c in hand if c in DISCARDABLE_TRUMPS]
        return allowed

    def _legal_plays(self, seat: int) -> list[str]:
        hand = self.hands[seat]
        if not self.current_plays:
            # Leading: EX cannot be led, unless it is the only card left (the last trick).
            non_ex = [c for c in hand if c != FUGGITIVO]
            return non_ex if non_ex else list(hand)
        played = [c for _, c in self.current_plays]
        if played[0] == FUGGITIVO:
            if len(played) == 1:
                return list(hand)  # the player after a led EX may play anything: his card sets the suit
            setter = played[1]
        else:
            setter = played[0]
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
        if FUGGITIVO in hand and FUGGITIVO not in legal:
            legal = legal + [FUGGITIVO]  # EX may always be played instead of a legal card
        return legal

    # ------------------------------------------------------------------ transitions

    def apply(self, action: str) -> None:
        if self.phase == "done":
            raise ValueError("the deal is over")
        if action not in self.legal_actions():
            raise ValueError(f"illegal action {action!r} for seat {self.turn} in phase {self.phase}")
        seat = self.turn
        self.history.append((seat, action))

        if self.phase == "early":
            if action == "solo":
                self.declarer = seat
                self.solo = True
                self.doubled = True
                self._start_discard()
            elif seat == 3:
                self.phase = "auction"
                self.turn = 0
            else:
                self.turn = seat + 1
            return

        if self.phase == "auction":
            if action == "solo":
                self.declarer = seat
                self.solo = True
                self.caller = None
                self._start_discard()
                return
            if action == "call":
                self.caller = seat
            if seat == 3:
                self._end_auction()
            else:
                self.turn = seat + 1
            return

        if self.phase == "discard":
            card = action.split(":", 1)[1]
            self.hands[seat].remove(card)
            self.discards.append(card)
            if len(self.discards) == 3:
                self.phase = "scommessa"
            return

        if self.phase == "scommessa":
            if action == "scommessa":
                self.scommessa_said = True
            self.phase = "rivanto"
            self.rivanto_order = [(self.declarer + k) % 4 for k in (1, 2, 3)]
            self.turn = self.rivanto_order[0]
            return

        if self.phase == "rivanto":
            if action == "rivanto":
                self.rivanto_said = True
                self.rivanto_seat = seat
                self._start_play()
                return
            position = self.rivanto_order.index(seat)
            if position == 2:
                self._start_play()
            else:
                self.turn = self.rivanto_order[position + 1]
            return

        if self.phase == "play":
            card = action.split(":", 1)[1]
            self.hands[seat].remove(card)
            self.current_plays.append((seat, card))
            if len(self.current_plays) < 4:
                self.turn = (seat + 1) % 4
                return
            cards = [c for _, c in self.current_plays]
            winner = self.current_plays[trick_winner_index(cards)][0]
            self.tricks.append({"leader": self.leader, "plays": self.current_plays, "winner": winner})
            self.current_plays = []
            if len(self.tricks) == 15:
                self.phase = "done"
                self.turn = -1
                self._final = self._score()
            else:
                self.leader = winner
                self.turn = winner
            return

        raise AssertionError(self.phase)

    def _end_auction(self) -> None:
        if self.caller is None:
            self.void = True
            self.phase = "done"
            self.turn = -1
            return
        self.declarer = self.caller
        caller_hand = self.hands[self.caller]
        called = None
        for n in range(20, -1, -1):
            if f"T{n}" not in caller_hand:
                called = f"T{n}"
                break
        self.called_trump = called
        if called in self.monte:
            self.solo = True
            self.forced_solo = True
            self.partner = None
        else:
            self.partner = next(s for s in range(4) if called in self.hands[s])
        self._start_discard()

    def _start_discard(self) -> None:
        self.hands[self.declarer].extend(self.monte)
        self.phase = "discard"
        self.turn = self.declarer

    def _start_play(self) -> None:
        self.phase = "play"
        self.leader = self.declarer
        self.turn = self.declarer

    # ------------------------------------------------------------------ scoring

    def _score(self) -> dict:
        won: list[list[str]] = [list(self.discards), []]  # discards count for the declarer's side
        tricks_won = [1, 0]  # the discard counts as one trick for the declarer's side
        for trick in self.tricks:
            tricks_won[self.side_of(trick["winner"])] += 1

        pigliata = [0, 0]
        for trick in self.tricks:
            winner_side = self.side_of(trick["winner"])
            for position, (seat, card) in enumerate(trick["plays"]):
                if card == FUGGITIVO:
                    owner_side = self.side_of(seat)
                    if position == 0:
                        won[winner_side].append(card)  # EX led to the last trick: goes to the winner
                    elif tricks_won[owner_side] >= 1:
                        won[owner_side].append(card)
                    else:
                        won[winner_side].append(card)
                    continue
                won[winner_side].append(card)
                if card in PIGLIATA_CARDS and self.side_of(seat) != winner_side:
                    pigliata[winner_side] += 1

        last_side = self.side_of(self.tricks[-1]["winner"])
        thirds = [thirds_of(won[0]), thirds_of(won[1])]
        thirds[last_side] += LAST_TRICK_BONUS_THIRDS
        assert thirds[0] + thirds[1] == 327
        assert len(won[0]) + len(won[1]) == 63

        jochi = [dict.fromkeys(JOCHI_KEYS, 0), dict.fromkeys(JOCHI_KEYS, 0)]
        for side in (0, 1):
            cards = set(won[side])
            if thirds[side] >= RIMATURA_THRESHOLD_THIRDS:
                jochi[side]["rimatura"] = 1
            if all(c in cards for c in ARIE):
                if "T20" in cards:
                    jochi[side]["arie_giove"] = 2
                else:
                    jochi[side]["arie"] = 1
            jochi[side]["pigliata"] = pigliata[side]
            if all(k in cards for k in KINGS):
                jochi[side]["re"] = 1
        if self.rivanto_said:
            jochi[last_side]["rivanto"] = 2  # opponents if they win the last trick, else the declarer's side
        else:
            jochi[last_side]["vanto"] = 1
        if self.scommessa_said:
            if all(c in won[0] for c in ("T20", "T1", FUGGITIVO)):
                jochi[0]["scommessa"] = 1
            else:
                jochi[1]["scommessa"] = 1

        diff = sum(jochi[0].values()) - sum(jochi[1].values())
        if self.doubled:
            diff *= 2
        payoffs = [0, 0, 0, 0]
        for seat in range(4):
            if seat == self.declarer:
                payoffs[seat] = 3 * diff if self.solo else diff
            elif seat == self.partner:
                payoffs[seat] = diff
            else:
                payoffs[seat] = -diff
        assert sum(payoffs) == 0
        return {"won": won, "thirds": tuple(thirds), "jochi": jochi, "returns": payoffs}

    def _require_terminal(self) -> None:
        if self.phase != "done":
            raise RuntimeError("the deal is not over")

    def returns(self) -> list[int]:
        self._require_terminal()
        if self.void:
            return [0, 0, 0, 0]
        return list(self._final["returns"])

    def side_thirds(self) -> tuple[int, int]:
        self._require_terminal()
        if self.void:
            return (0, 0)
        return self._final["thirds"]

    def jochi(self) -> tuple[dict[str, int], dict[str, int]]:
        self._require_terminal()
        if self.void:
            return dict.fromkeys(JOCHI_KEYS, 0), dict.fromkeys(JOCHI_KEYS, 0)
        return dict(self._final["jochi"][0]), dict(self._final["jochi"][1])

    def won_cards(self) -> tuple[list[str], list[str]]:
        """Won cards of (declarer side, opponents) at the end, discards and EX included."""
        self._require_terminal()
        if self.void:
            return [], []
        return list(self._final["won"][0]), list(self._final["won"][1])
