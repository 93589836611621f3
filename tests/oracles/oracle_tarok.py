"""Independent reference implementation ("oracle") of Slovenian tarok as OpenSpiel's ``tarok`` game plays it.

Written from the rules in docs/rules.md, section "7. Slovenian tarok (tarok3, tarok4)" (which was written from
OpenSpiel's sources and by probing pyspiel), for lockstep runs against OpenSpiel
(experiments/checks/check_openspiel_tarok.py) and later against the batched engine. It shares no code with either:
it is slow and plain (lists of card-name strings), meant to be obviously correct. Where OpenSpiel's game
differs from the usual rules of the game (the kings and trula bonuses, the valat test, the forced Pagat),
this oracle plays OpenSpiel's reading; each such place says so.

Card names: taroks "T1".."T22" (T1 the Pagat, T21 the Mond, T22 the Skis), suit cards rank + suit with suits
H D S C and ranks, high to low, K Q N J then 1 2 3 4 (red suits H, D) or 10 9 8 7 (black suits S, C):
"KH", "NS", "1D", "4H", "10C", "7S".

The deck is given in deal order: seat 0's hand is deck[0:h], seat 1's deck[h:2h], ..., and the talon is the
last 6 cards, in their order (h = 16 with 3 players, 12 with 4). Every hand must hold a tarok (OpenSpiel deals
again otherwise; here such a deck is a ValueError).

Action strings:
  "bid:pass", "bid:<contract>"       contracts: klop three two one solo_three solo_two solo_one beggar
                                      solo_without open_beggar colour_valat valat
  "call:<king>"                      king calling (4 players, three / two / one): "call:KH" ... "call:KC"
  "talon:<i>"                        the declarer takes talon set i (0 = the leftmost)
  "discard:<card>"                   the declarer lays down a card (one action per card)
  "play:<card>"                      a card played to a trick

Phases: "bidding" -> "king_calling" (4 players, three/two/one) -> "talon_choice" -> "discard" (contracts with
a talon exchange) -> "play" -> "done".

returns() gives one integer per seat; it is NOT zero-sum (OpenSpiel scores the declarer's side only, and the
Mond penalty is one seat's own): see score_parts() for the pieces.
"""

from __future__ import annotations

PLAYERS = (3, 4)
TALON_SIZE = 6
HAND_SIZE = {3: 16, 4: 12}

TAROKS = tuple(f"T{i}" for i in range(1, 23))  # low to high: T1 Pagat .. T21 Mond, T22 Skis
PAGAT, MOND, SKIS = "T1", "T21", "T22"
TRULA = (PAGAT, MOND, SKIS)
SUITS = ("H", "D", "S", "C")
RED_RANKS = ("4", "3", "2", "1", "J", "N", "Q", "K")  # low to high
BLACK_RANKS = ("7", "8", "9", "10", "J", "N", "Q", "K")  # low to high
KINGS = ("KH", "KD", "KS", "KC")
HONOUR_POINTS = {"K": 5, "Q": 4, "N": 3, "J": 2}

# name, value, talon cards taken (0: no exchange), king calling with 4 players, declarer leads, negative
CONTRACT_TABLE = (
    ("klop", 70, 0, False, False, True),
    ("three", 10, 3, True, False, False),
    ("two", 20, 2, True, False, False),
    ("one", 30, 1, True, False, False),
    ("solo_three", 40, 3, False, False, False),
    ("solo_two", 50, 2, False, False, False),
    ("solo_one", 60, 1, False, False, False),
    ("beggar", 70, 0, False, True, True),
    ("solo_without", 80, 0, False, True, False),
    ("open_beggar", 90, 0, False, True, True),
    ("colour_valat", 125, 0, False, True, False),
    ("valat", 500, 0, False, True, False),
)
CONTRACTS = tuple(row[0] for row in CONTRACT_TABLE)  # bidding order, low to high
VALUE = {row[0]: row[1] for row in CONTRACT_TABLE}
TALON_TAKEN = {row[0]: row[2] for row in CONTRACT_TABLE}
CALLS_KING = {row[0]: row[3] for row in CONTRACT_TABLE}
DECLARER_LEADS = {row[0]: row[4] for row in CONTRACT_TABLE}
NEGATIVE = {row[0]: row[5] for row in CONTRACT_TABLE}
SOLOS = ("solo_three", "solo_two", "solo_one")  # not played with 3 players
FOREHAND_ONLY = ("klop", "three")  # only seat 0, only when every other seat has passed

MOND_PENALTY = -20
KLOP_LIMIT = 35  # more than this in klop: -70; nothing at all: +70
UNANNOUNCED_VALAT = 250
KING_ULTIMO, PAGAT_ULTIMO = 10, 25
KINGS_BONUS, TRULA_BONUS = 10, 10


def full_deck() -> list[str]:
    """The 54 cards: T1..T22, then H, D, S, C from low to high (OpenSpiel's card order)."""
    deck = list(TAROKS)
    for suit in SUITS:
        ranks = RED_RANKS if suit in ("H", "D") else BLACK_RANKS
        deck.extend(rank + suit for rank in ranks)
    return deck


ALL_CARDS = frozenset(full_deck())


def is_tarok(card: str) -> bool:
    return card in TAROKS


def suit_of(card: str) -> str:
    """"T" for a tarok, else the suit letter."""
    return "T" if is_tarok(card) else card[-1]


def strength(card: str) -> int:
    """Rank within its suit (taroks: T1 = 0 .. T22 = 21; suits: lowest = 0 .. K = 7)."""
    if is_tarok(card):
        return TAROKS.index(card)
    ranks = RED_RANKS if card[-1] in ("H", "D") else BLACK_RANKS
    return ranks.index(card[:-1])


def card_value(card: str) -> int:
    """Face value: trula and Kings 5, Q 4, N 3, J 2, any other card 1."""
    if card in TRULA:
        return 5
    if is_tarok(card):
        return 1
    return HONOUR_POINTS.get(card[:-1], 1)


def card_points(cards: list[str]) -> int:
    """Counted in groups of three: each full group scores its values minus 2, a last group of one or two
    cards its values minus 1. The deck counts 70."""
    n = len(cards)
    groups, rest = divmod(n, 3)
    return sum(card_value(c) for c in cards) - 2 * groups - (1 if rest else 0)


def trick_winner_index(cards: list[str], contract: str) -> int:
    """Index (in playing order) of the card that wins a complete trick.

    The emperor trick: the Pagat wins a trick holding all three trula cards (in colour valat only when a
    tarok was led). Otherwise the highest tarok wins if any tarok was played (in colour valat taroks beat
    only a tarok lead), else the highest card of the suit led.
    """
    lead_suit = suit_of(cards[0])
    if all(c in cards for c in TRULA) and (contract != "colour_valat" or lead_suit == "T"):
        return cards.index(PAGAT)
    taroks = [i for i, c in enumerate(cards) if is_tarok(c)]
    if taroks and contract != "colour_valat":
        return max(taroks, key=lambda i: strength(cards[i]))
    followers = [i for i, c in enumerate(cards) if suit_of(c) == lead_suit]
    return max(followers, key=lambda i: strength(cards[i]))


class TarokOracle:
    def __init__(self, players: int, deck: list[str]):
        if players not in PLAYERS:
            raise ValueError(f"players must be 3 or 4, got {players!r}")
        deck = list(deck)
        if len(deck) != 54 or set(deck) != ALL_CARDS:
            raise ValueError("the deck must be the 54 distinct tarok cards (names like T22, KH, 1D, 10S)")
        size = HAND_SIZE[players]
        hands = [deck[size * s : size * (s + 1)] for s in range(players)]
        for seat, hand in enumerate(hands):
            if not any(is_tarok(c) for c in hand):
                raise ValueError(f"seat {seat} holds no tarok: OpenSpiel deals such a deck again")

        self.players = players
        self.initial_hands = [list(h) for h in hands]
        self.initial_talon = deck[size * players :]
        self.hands = [list(h) for h in hands]
        self.talon = list(self.initial_talon)

        self.phase = "bidding"
        self.turn = 1  # seat 0 (forehand) speaks last in the first round
        self.bids: list[str | None] = [None] * players  # None: not yet spoken; "pass"; or a contract
        self.contract: str | None = None
        self.declarer: int | None = None
        self.called_king: str | None = None
        self.king_in_talon = False
        self.partner: int | None = None
        self.discards_left = 0
        self.collected: list[list[str]] = [[] for _ in range(players)]  # each seat's pile, in order
        self.trick: list[tuple[int, str]] = []
        self.tricks: list[dict] = []  # "plays" [(seat, card)], "winner"
        self.mond_penalty_seat: int | None = None
        self.history: list[tuple[int, str]] = []

    # ------------------------------------------------------------------ queries

    def is_terminal(self) -> bool:
        return self.phase == "done"

    def current_player(self) -> int:
        return -1 if self.phase == "done" else self.turn

    def legal_actions(self) -> set[str]:
        if self.phase == "bidding":
            return {"bid:" + b for b in self._legal_bids()}
        if self.phase == "king_calling":
            return {"call:" + k for k in KINGS}  # any King, also one the declarer holds
        if self.phase == "talon_choice":
            n_sets = TALON_SIZE // TALON_TAKEN[self.contract]
            return {f"talon:{i}" for i in range(n_sets)}
        if self.phase == "discard":
            return {"discard:" + c for c in self._legal_discards()}
        if self.phase == "play":
            return {"play:" + c for c in self._legal_plays()}
        return set()

    def _highest_bid(self) -> tuple[int, int]:
        """(rank in CONTRACTS of the highest standing bid, lowest seat holding it); (-1, -1) if none."""
        best, holder = -1, -1
        for seat, bid in enumerate(self.bids):
            if bid is not None and bid != "pass" and CONTRACTS.index(bid) > best:
                best, holder = CONTRACTS.index(bid), seat
        return best, holder

    def _others_all_passed(self) -> bool:
        return all(self.bids[s] == "pass" for s in range(self.players) if s != self.turn)

    def _legal_bids(self) -> list[str]:
        seat = self.turn
        legal = []
        if self._others_all_passed():
            if seat == 0 and self.bids[0] is None:
                legal.extend(FOREHAND_ONLY)  # forehand, everyone else passed: klop or three allowed
            # no pass: the last seat standing names the contract
        else:
            legal.append("pass")
        best, holder = self._highest_bid()
        for rank in range(CONTRACTS.index("two"), len(CONTRACTS)):
            name = CONTRACTS[rank]
            if self.players == 3 and name in SOLOS:
                continue
            # a higher bid, or the same bid by a seat of higher priority (a lower seat number)
            if rank > best or (rank == best and seat <= holder):
                legal.append(name)
        return legal

    def _legal_discards(self) -> list[str]:
        hand = self.hands[self.declarer]
        plain = [c for c in hand if not is_tarok(c) and card_value(c) != 5]  # no tarok, no King
        if plain:
            return plain
        return [c for c in hand if card_value(c) != 5]  # then taroks, never the trula (nor Kings)

    def _legal_plays(self) -> list[str]:
        hand = self.hands[self.turn]
        negative = NEGATIVE[self.contract]
        if not self.trick:
            return self._without_pagat(hand) if negative else list(hand)
        played = [c for _, c in self.trick]
        lead_suit = suit_of(played[0])
        if any(suit_of(c) == lead_suit for c in hand):
            must = lead_suit
        elif any(is_tarok(c) for c in hand):
            must = "T"
        else:
            return list(hand)  # neither the suit led nor a tarok: any card
        candidates = [c for c in hand if suit_of(c) == must]
        if not negative:
            return candidates
        # Negative contracts (klop, beggar, open beggar).
        if PAGAT in hand and MOND in played and SKIS in played:
            # The emperor trick: the Pagat must be played (OpenSpiel: even by a player who could follow a
            # suit led, see docs/rules.md).
            return [PAGAT]
        to_beat = self._card_to_beat(played, must)
        if to_beat is not None:
            higher = [c for c in candidates if strength(c) > strength(to_beat)]
            if higher:
                candidates = higher  # beat the best card of that suit when able
        return self._without_pagat(candidates) if PAGAT in hand else candidates

    @staticmethod
    def _card_to_beat(played: list[str], must: str) -> str | None:
        """Negative contracts: the card a follower must beat when able. None when following a suit that has
        already been trumped, or when trumping a suit that nobody has trumped yet."""
        taroks_in_trick = any(is_tarok(c) for c in played)
        if must != "T" and taroks_in_trick:
            return None
        if must == "T" and not taroks_in_trick:
            return None
        same = [c for c in played if suit_of(c) == must]
        return max(same, key=strength)

    @staticmethod
    def _without_pagat(cards: list[str]) -> list[str]:
        """The Pagat may only be played as the one card left to choose."""
        if len(cards) > 1:
            return [c for c in cards if c != PAGAT]
        return list(cards)

    # ------------------------------------------------------------------ transitions

    def apply(self, action: str) -> None:
        if self.phase == "done":
            raise ValueError("the deal is over")
        legal = self.legal_actions()
        if action not in legal:
            raise ValueError(f"illegal action {action!r} for seat {self.turn} in phase {self.phase}: "
                             f"legal are {sorted(legal)}")
        seat = self.turn
        self.history.append((seat, action))
        kind, _, arg = action.partition(":")
        if kind == "bid":
            self._bid(seat, arg)
        elif kind == "call":
            self._call(seat, arg)
        elif kind == "talon":
            self._take_talon_set(seat, int(arg))
        elif kind == "discard":
            self.hands[seat].remove(arg)
            self.collected[seat].append(arg)  # the discards count for the declarer
            self.discards_left -= 1
            if self.discards_left == 0:
                self._start_play()
        elif kind == "play":
            self._play(seat, arg)
        else:  # pragma: no cover - legal_actions() never offers anything else
            raise AssertionError(action)

    def _bid(self, seat: int, bid: str) -> None:
        self.bids[seat] = bid
        if self._others_all_passed():
            self.declarer = seat
            self.contract = bid
            if self.players == 4 and CALLS_KING[bid]:
                self.phase = "king_calling"
            elif TALON_TAKEN[bid]:
                self.phase = "talon_choice"
            else:
                self._start_play()
            return
        while True:
            seat = (seat + 1) % self.players
            if self.bids[seat] != "pass":
                break
        self.turn = seat

    def _call(self, seat: int, king: str) -> None:
        self.called_king = king
        if king in self.talon:
            self.king_in_talon = True
        else:
            holders = [s for s in range(self.players) if s != seat and king in self.hands[s]]
            self.partner = holders[0] if holders else None  # the declarer's own King: he plays alone
        self.phase = "talon_choice"

    def _take_talon_set(self, seat: int, index: int) -> None:
        k = TALON_TAKEN[self.contract]
        chosen = self.talon[index * k : (index + 1) * k]
        if MOND in self.talon and MOND not in chosen:
            self.mond_penalty_seat = seat  # the Mond left in the talon
        self.hands[seat].extend(chosen)
        self.talon = self.talon[: index * k] + self.talon[(index + 1) * k :]
        self.discards_left = k
        self.phase = "discard"

    def _start_play(self) -> None:
        self.phase = "play"
        self.turn = self.declarer if DECLARER_LEADS[self.contract] else 0

    def _play(self, seat: int, card: str) -> None:
        self.hands[seat].remove(card)
        self.trick.append((seat, card))
        if len(self.trick) < self.players:
            self.turn = (seat + 1) % self.players
            return
        cards = [c for _, c in self.trick]
        index = trick_winner_index(cards, self.contract)
        winner, winning_card = self.trick[index]
        self.collected[winner].extend(cards)
        if self.contract == "klop" and self.talon:
            self.collected[winner].append(self.talon.pop(0))  # klop: one talon card to each of 6 tricks
        elif winning_card == self.called_king and self.king_in_talon:
            # the called King, taken from the talon, won a trick: the rest of the talon goes with it
            if MOND in self.talon:
                self.mond_penalty_seat = None
            self.collected[winner].extend(self.talon)
            self.talon = []
        elif (TALON_TAKEN[self.contract] or self.contract == "solo_without") and winning_card in (SKIS, PAGAT):
            for player, c in self.trick:
                if c == MOND:
                    self.mond_penalty_seat = player  # the Mond captured (by the Skis or the emperor trick)
        self.tricks.append({"plays": list(self.trick), "winner": winner})
        self.trick = []
        self.turn = winner
        if not self.hands[winner] or self._decided_early(winner):
            self.phase = "done"
            self.turn = -1

    def _decided_early(self, winner: int) -> bool:
        """Beggar ends when the declarer takes a trick, a valat when he loses one."""
        if self.contract in ("beggar", "open_beggar"):
            return winner == self.declarer
        if self.contract in ("colour_valat", "valat"):
            return winner != self.declarer
        return False

    # ------------------------------------------------------------------ scoring

    def _require_terminal(self) -> None:
        if self.phase != "done":
            raise RuntimeError("the deal is not over")

    def team(self) -> list[int]:
        """The declarer and his partner (if any)."""
        return [s for s in (self.declarer, self.partner) if s is not None]

    def score_parts(self) -> dict:
        """The pieces of the result; every amount is an integer.

        "contract", "declarer", "partner"; "mond_penalty" (per seat, -20 or 0); "scores" (per seat, before the
        penalty); for talon contracts also "team_points", "valat" (+1 team / -1 opponents / 0), "base"
        (difference +- contract value), "ultimo", "kings", "trula"; for klop "klop_points" per seat.
        """
        self._require_terminal()
        n = self.players
        penalty = [0] * n
        if self.mond_penalty_seat is not None:
            penalty[self.mond_penalty_seat] = MOND_PENALTY
        parts: dict = {"contract": self.contract, "declarer": self.declarer, "partner": self.partner,
                       "mond_penalty": penalty}
        scores = [0] * n
        if self.contract == "klop":
            points = [card_points(pile) for pile in self.collected]
            parts["klop_points"] = points
            extreme = [p > KLOP_LIMIT or p == 0 for p in points]
            for s in range(n):
                if any(extreme):
                    scores[s] = -70 if points[s] > KLOP_LIMIT else (70 if points[s] == 0 else 0)
                else:
                    scores[s] = -points[s]
        elif TALON_TAKEN[self.contract]:
            score = self._normal_contract_score(parts)
            for s in self.team():
                scores[s] = score
        else:
            pile = self.collected[self.declarer]
            if self.contract in ("beggar", "open_beggar"):
                won = not pile
            elif self.contract in ("colour_valat", "valat"):
                won = len(pile) == 48
            else:  # solo_without
                won = card_points(pile) > 35
            parts["won"] = won
            scores[self.declarer] = VALUE[self.contract] if won else -VALUE[self.contract]
        parts["scores"] = scores
        return parts

    def _normal_contract_score(self, parts: dict) -> int:
        team = self.team()
        team_cards = [c for s in team for c in self.collected[s]]
        other_cards = [c for s in range(self.players) if s not in team for c in self.collected[s]]
        # OpenSpiel's valat test counts the cards in the piles (discards and a talon remainder included),
        # not the tricks: "won" is a pile of exactly 48 cards, "lost" the opponents' pile of 48.
        if len(team_cards) == 48:
            parts["valat"] = 1
            return UNANNOUNCED_VALAT
        if len(other_cards) == 48:
            parts["valat"] = -1
            return -UNANNOUNCED_VALAT
        parts["valat"] = 0
        points = card_points(team_cards)
        parts["team_points"] = points
        value = VALUE[self.contract]
        base = points - 35 + (value if points > 35 else -value)
        parts["base"] = base
        # Ultimo: the called King (else the Pagat) among the last N cards of the last trick's winner's pile.
        last_winner = self.tricks[-1]["winner"]
        last_cards = self.collected[last_winner][-self.players :]
        ultimo = 0
        if self.called_king is not None and self.called_king in last_cards:
            ultimo = KING_ULTIMO
        elif PAGAT in last_cards:
            ultimo = PAGAT_ULTIMO
        if last_winner not in team:
            ultimo = -ultimo
        parts["ultimo"] = ultimo
        # OpenSpiel's kings test counts every card of a pile as a King, so "all four Kings" means a pile of
        # exactly four cards, and the trula is never counted: see docs/rules.md.
        kings = KINGS_BONUS if len(team_cards) == 4 else (-KINGS_BONUS if len(other_cards) == 4 else 0)
        parts["kings"] = kings
        parts["trula"] = 0
        return base + ultimo + kings

    def returns(self) -> list[int]:
        parts = self.score_parts()
        return [s + p for s, p in zip(parts["scores"], parts["mond_penalty"], strict=True)]
