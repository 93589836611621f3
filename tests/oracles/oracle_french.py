"""Independent reference implementation ("oracle") of French Tarot for 3 and 4 players.

Written from scratch from RULES.md (the rules specification, reproduced in docs/rules.md), section "3.
`french3` and `french4`", plus the sections "Conventions for all games" and "Card notation", for differential
testing of the fast engine. It shares no code with the engine: it is slow and plain (lists and sets of
card-name strings), meant to be obviously correct. Card points are kept in integer HALF points throughout
(deck total 182), never floats.

Card names: trumps "T1".."T21", the Excuse "EX", suit cards rank + suit with ranks K Q N J 10 9 ... 1 (high
to low) and suits S H D C, e.g. "KS", "10H", "1D", "NC".

Action strings: "pass", "prise", "garde", "garde_sans", "garde_contre", "discard:<card>", "chelem",
"poignee:simple", "poignee:double", "poignee:triple", "play:<card>".

Phases, in order:
  (petit sec) a hand holding T1 as its only trump, without EX, ends the deal at once: terminal, no actions,
            returns all 0.
  bidding   seats 0..N-1, one turn each: "pass" or a contract strictly higher than every earlier bid.
            All pass: the deal is void (terminal, returns all 0). The highest bidder is the taker.
  discard   (prise / garde only) the taker has taken the 6 chien cards and makes 6 "discard:<card>" actions.
  chelem    the taker: "pass" or "chelem" (after the discard; after the bidding for garde sans / contre).
  play      24 tricks with 3 players, 18 with 4. Seat 0 leads the first trick, the taker if he
            announced a chelem. At a player's first turn to play (in the first trick) he first makes a
            poignee decision ("pass" or "poignee:<level>" for any level he qualifies for), then plays.

Sides: the taker alone against all the others (no partner with 4 players).

score() (only at the end) returns a dict; every amount is an integer:
  "taker"         the taker's seat (-1 for a void deal or petit sec)
  "contract"      "prise" / "garde" / "garde_sans" / "garde_contre" (None for a void deal or petit sec)
  "half_points"   the taker's card points in HALF points, after the Excuse exchange (== taker_half_points())
  "target"        the target in HALF points, from the oudlers the taker holds at the end (112/102/82/72)
  "made"          True when half_points >= target
  "base"          s*(25 + d)*mult: s = +1 made / -1 failed, d = |points - target| rounded to the nearest
                  point in favour of the side that scores (a half point rounds up in magnitude),
                  mult = 1/2/4/6
  "petit_au_bout" +10*mult / -10*mult / 0 (side that won the au-bout trick, see _petit_au_bout)
  "poignee"       s * (sum of the declared poignees, 20/30/40 each), i.e. signed for the taker
  "chelem"        +400 announced and made, -200 announced and failed, +200 made unannounced, 0 otherwise;
                  plus -200 when the defence won every trick
  "T"             base + petit_au_bout + poignee + chelem; the taker gets (N-1)*T, each defender -T.
For a void deal or petit sec every amount is 0 and "made" is False.
returns() and score() raise RuntimeError before the deal is terminal.

Extras beyond the requested interface (for tests): defence_half_points(), and the attributes tricks (dicts
"leader", "plays", "winner"), taker_cards / defence_cards (cards counted for each side), poignees, phase.

Readings of the rules specification made here:
  - A poignee may be declared at any level up to the highest one the player qualifies for.
  - The half-point rounding (a half point rounds up in magnitude) is applied with 4 players too.
  - Announced chelem failed AND the defence won every trick: -200 - 200 = -400.
  - Petit au bout: T1 in the last trick always counts for the side that won it; T1 in the second-to-last
    trick counts as well only when the taker's EX, led to the last trick, won it by the chelem exception.
  - The EX of the chien (garde sans / garde contre) just counts for the side that gets the chien.
  - EX played to the last trick (option excuse_last_trick): "other_side" (the default, the FFT text) gives it
    to the camp opposite its owner, whoever wins that trick; "trick_winner" gives it to the side of the last
    trick's winner. Either way no half point is exchanged. A chelem keeps the rule of the trick's winner: when
    the owner led EX to the last trick and his side won every earlier trick, EX goes with that trick (the
    taker's EX wins it; a defender's EX goes to whoever wins it).
"""

from __future__ import annotations

SUITS = ("S", "H", "D", "C")
SUIT_RANKS = ("K", "Q", "N", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2", "1")  # high to low
TRUMPS = tuple(f"T{i}" for i in range(1, 22))  # T1 (Petit) .. T21
EXCUSE = "EX"
OUDLERS = ("T1", "T21", "EX")
KINGS = tuple("K" + s for s in SUITS)

CONTRACTS = ("prise", "garde", "garde_sans", "garde_contre")  # low to high
MULTIPLIER = {"prise": 1, "garde": 2, "garde_sans": 4, "garde_contre": 6}

POIGNEE_LEVELS = ("simple", "double", "triple")
POIGNEE_VALUE = {"simple": 20, "double": 30, "triple": 40}
POIGNEE_THRESHOLD = {
    3: {"simple": 13, "double": 15, "triple": 18},
    4: {"simple": 10, "double": 13, "triple": 15},
}

TARGET_POINTS = {0: 56, 1: 51, 2: 41, 3: 36}  # in whole points, by the number of oudlers held at the end
DECK_HALF_POINTS = 182
HAND_SIZE = {3: 24, 4: 18}
CHIEN_SIZE = 6
DISCARD_COUNT = 6
EXCUSE_LAST_TRICK = ("other_side", "trick_winner")


def full_deck() -> list[str]:
    """The 78 cards: suit cards (S, H, D, C; K..1 each), then T1..T21, then EX."""
    deck = [rank + suit for suit in SUITS for rank in SUIT_RANKS]
    deck.extend(TRUMPS)
    deck.append(EXCUSE)
    return deck


ALL_CARDS = frozenset(full_deck())


def is_trump(card: str) -> bool:
    """T1..T21. The Excuse is NOT a trump for following, overtrumping or winning."""
    return card in TRUMPS


def trump_number(card: str) -> int:
    return int(card[1:])


def card_suit(card: str) -> str | None:
    """The suit letter of a suit card; None for trumps and EX."""
    if is_trump(card) or card == EXCUSE:
        return None
    return card[-1]


def rank_strength(card: str) -> int:
    """Within a suit, higher is stronger: K = 13 ... 1 = 0."""
    return len(SUIT_RANKS) - 1 - SUIT_RANKS.index(card[:-1])


def half_points(card: str) -> int:
    """Card value in half points: oudler 9, K 9, Q 7, N 5, J 3, any other card 1."""
    if card in OUDLERS:
        return 9
    if is_trump(card):
        return 1
    rank = card[:-1]
    return {"K": 9, "Q": 7, "N": 5, "J": 3}.get(rank, 1)


def half_points_of(cards: list[str]) -> int:
    return sum(half_points(c) for c in cards)


def trick_winner_index(cards: list[str]) -> int:
    """Index (in playing order) of the card that wins a complete trick by the ordinary rule.

    The highest trump wins if any trump was played; else the highest card of the suit led, where the suit
    led is that of the first card that is not EX (if EX is led, the next card sets the suit). EX never
    wins here (the chelem exception is applied by the caller).
    """
    trump_indices = [i for i, c in enumerate(cards) if is_trump(c)]
    if trump_indices:
        return max(trump_indices, key=lambda i: trump_number(cards[i]))
    setter = next(c for c in cards if c != EXCUSE)
    suit = card_suit(setter)
    same_suit = [i for i, c in enumerate(cards) if c != EXCUSE and card_suit(c) == suit]
    return max(same_suit, key=lambda i: rank_strength(cards[i]))


def legal_cards(hand: list[str], played: list[str]) -> list[str]:
    """The cards of `hand` that may be played to a trick in which `played` (in order) are already down."""
    non_ex = [c for c in played if c != EXCUSE]
    if not non_ex:
        # Leading, or the only card so far is a led EX: the next card sets the suit, anything goes.
        return list(hand)
    setter = non_ex[0]
    trumps_in_hand = [c for c in hand if is_trump(c)]
    trumps_in_trick = [c for c in non_ex if is_trump(c)]

    def trump_obligation() -> list[str]:
        if not trumps_in_hand:
            return list(hand)  # no trump at all: any card
        if trumps_in_trick:
            best = max(trump_number(c) for c in trumps_in_trick)
            higher = [c for c in trumps_in_hand if trump_number(c) > best]
            if higher:
                return higher  # must overtrump when able
        return trumps_in_hand  # no trump in the trick yet, or unable to overtrump: any trump

    if is_trump(setter):
        legal = trump_obligation()
    else:
        suit = card_suit(setter)
        same_suit = [c for c in hand if card_suit(c) == suit]
        legal = same_suit if same_suit else trump_obligation()
    if EXCUSE in hand and EXCUSE not in legal:
        legal = legal + [EXCUSE]  # EX may be played at any time instead
    return legal


def is_petit_sec(hand: list[str]) -> bool:
    trumps = [c for c in hand if is_trump(c)]
    return trumps == ["T1"] and EXCUSE not in hand


class FrenchOracle:
    def __init__(self, hands: list[list[str]], chien: list[str], n_players: int = 3,
                 excuse_last_trick: str = "other_side"):
        if n_players not in (3, 4):
            raise ValueError("n_players must be 3 or 4")
        if excuse_last_trick not in EXCUSE_LAST_TRICK:
            raise ValueError(f"excuse_last_trick must be one of {EXCUSE_LAST_TRICK}, got {excuse_last_trick!r}")
        size = HAND_SIZE[n_players]
        if len(hands) != n_players or any(len(h) != size for h in hands) or len(chien) != CHIEN_SIZE:
            raise ValueError(f"need {n_players} hands of {size} cards and a chien of {CHIEN_SIZE}")
        every = [c for h in hands for c in h] + list(chien)
        if len(every) != 78 or len(set(every)) != 78 or set(every) != ALL_CARDS:
            raise ValueError("the deal must be the 78 distinct French Tarot cards")

        self.n = n_players
        self.excuse_last_trick = excuse_last_trick
        self.n_tricks = size
        self.initial_hands = [list(h) for h in hands]
        self.hands = [list(h) for h in hands]
        self.chien = list(chien)

        self.bids: list[str] = []
        self.taker: int | None = None
        self.contract: str | None = None
        self.discards: list[str] = []
        self.chelem_announced = False
        self.poignee_decided: set[int] = set()
        self.poignees: list[tuple[int, str]] = []  # (seat, level) for every poignee declared
        # Completed tricks: dicts with "leader", "plays" (list of (seat, card)), "winner".
        self.tricks: list[dict] = []
        self.current_plays: list[tuple[int, str]] = []
        self.leader: int | None = None
        self.history: list[tuple[int, str]] = []
        # Cards counted for each side, and the Excuse exchange in half points (+ = to the taker).
        self.taker_cards: list[str] = []
        self.defence_cards: list[str] = []
        self.exchange = 0
        self.ex_chelem_win = False  # the taker's EX led to the last trick won it (chelem exception)

        self.petit_sec = any(is_petit_sec(h) for h in hands)
        self.void = False
        self._final: dict | None = None
        if self.petit_sec:
            self.phase = "done"
        else:
            self.phase = "bidding"

    # ------------------------------------------------------------------ queries

    def is_terminal(self) -> bool:
        return self.phase == "done"

    def current_player(self) -> int:
        if self.phase == "done":
            return -1
        if self.phase == "bidding":
            return len(self.bids)
        if self.phase in ("discard", "chelem"):
            return self.taker
        if self.phase == "play":
            return (self.leader + len(self.current_plays)) % self.n
        raise AssertionError(self.phase)

    def is_taker_side(self, seat: int) -> bool:
        return seat == self.taker

    def legal_actions(self) -> set[str]:
        if self.phase == "done":
            return set()
        seat = self.current_player()
        if self.phase == "bidding":
            highest = max((CONTRACTS.index(b) for b in self.bids if b != "pass"), default=-1)
            return {"pass"} | set(CONTRACTS[highest + 1 :])
        if self.phase == "discard":
            return {"discard:" + c for c in self._legal_discards()}
        if self.phase == "chelem":
            return {"pass", "chelem"}
        if self.phase == "play":
            if self._poignee_pending(seat):
                count = self._poignee_trump_count(seat)
                levels = [lv for lv in POIGNEE_LEVELS if count >= POIGNEE_THRESHOLD[self.n][lv]]
                return {"pass"} | {"poignee:" + lv for lv in levels}
            played = [c for _, c in self.current_plays]
            return {"play:" + c for c in legal_cards(self.hands[seat], played)}
        raise AssertionError(self.phase)

    def _legal_discards(self) -> list[str]:
        hand = self.hands[self.taker]
        still_to_make = DISCARD_COUNT - len(self.discards)
        allowed = [c for c in hand if card_suit(c) is not None and c not in KINGS]
        if len(allowed) < still_to_make:
            allowed = allowed + [c for c in hand if is_trump(c) and c not in OUDLERS]
        return allowed

    def _poignee_pending(self, seat: int) -> bool:
        return not self.tricks and seat not in self.poignee_decided

    def _poignee_trump_count(self, seat: int) -> int:
        hand = self.hands[seat]
        return sum(1 for c in hand if is_trump(c) or c == EXCUSE)

    # ------------------------------------------------------------------ transitions

    def apply(self, action: str) -> None:
        if self.phase == "done":
            raise ValueError("the deal is over")
        if action not in self.legal_actions():
            raise ValueError(f"illegal action {action!r} for seat {self.current_player()} in {self.phase}")
        seat = self.current_player()
        self.history.append((seat, action))

        if self.phase == "bidding":
            self.bids.append(action)
            if len(self.bids) == self.n:
                self._end_bidding()
            return

        if self.phase == "discard":
            card = action.split(":", 1)[1]
            self.hands[seat].remove(card)
            self.discards.append(card)
            if len(self.discards) == DISCARD_COUNT:
                self.taker_cards.extend(self.discards)  # the discard counts for the taker
                self.phase = "chelem"
            return

        if self.phase == "chelem":
            self.chelem_announced = action == "chelem"
            self.leader = self.taker if self.chelem_announced else 0
            self.phase = "play"
            return

        if self.phase == "play":
            if self._poignee_pending(seat):
                self.poignee_decided.add(seat)
                if action != "pass":
                    self.poignees.append((seat, action.split(":", 1)[1]))
                return
            card = action.split(":", 1)[1]
            self.hands[seat].remove(card)
            self.current_plays.append((seat, card))
            if len(self.current_plays) == self.n:
                self._end_trick()
            return

        raise AssertionError(self.phase)

    def _end_bidding(self) -> None:
        bids = [(CONTRACTS.index(b), seat) for seat, b in enumerate(self.bids) if b != "pass"]
        if not bids:
            self.void = True
            self.phase = "done"
            return
        _, self.taker = max(bids)
        self.contract = self.bids[self.taker]
        if self.contract in ("prise", "garde"):
            self.hands[self.taker].extend(self.chien)  # shown and taken
            self.phase = "discard"
        else:
            if self.contract == "garde_sans":
                self.taker_cards.extend(self.chien)
            else:
                self.defence_cards.extend(self.chien)
            self.phase = "chelem"

    def _end_trick(self) -> None:
        plays = self.current_plays
        cards = [c for _, c in plays]
        is_last = len(self.tricks) == self.n_tricks - 1
        winner = plays[trick_winner_index(cards)][0]
        taker_won_all_before = all(self.is_taker_side(t["winner"]) for t in self.tricks)
        if is_last and plays[0] == (self.taker, EXCUSE) and taker_won_all_before:
            winner = self.taker  # chelem exception: the taker's EX led to the last trick wins it
            self.ex_chelem_win = True
        winner_pile = self.taker_cards if self.is_taker_side(winner) else self.defence_cards
        for seat, card in plays:
            owner_is_taker = self.is_taker_side(seat)
            if card == EXCUSE and not is_last:
                (self.taker_cards if owner_is_taker else self.defence_cards).append(card)
                if owner_is_taker != self.is_taker_side(winner):
                    self.exchange += -1 if owner_is_taker else 1  # half a point to the winner's side
            elif card == EXCUSE and self.excuse_last_trick == "other_side" and not self._chelem_lead(seat, plays):
                (self.defence_cards if owner_is_taker else self.taker_cards).append(card)  # it changes camp
            else:
                winner_pile.append(card)
        self.tricks.append({"leader": self.leader, "plays": list(plays), "winner": winner})
        self.current_plays = []
        self.leader = winner
        if len(self.tricks) == self.n_tricks:
            self.phase = "done"
            self._final = self._score()

    def _chelem_lead(self, seat: int, plays) -> bool:
        """EX led to the last trick by ``seat`` after his side won every earlier trick (a chelem)."""
        side = self.is_taker_side(seat)
        return plays[0] == (seat, EXCUSE) and all(self.is_taker_side(t["winner"]) == side for t in self.tricks)

    # ------------------------------------------------------------------ scoring

    def taker_half_points(self) -> int:
        """Half points counted for the taker so far (discard or chien included), after the Excuse exchange."""
        if self.taker is None:
            return 0
        return half_points_of(self.taker_cards) + self.exchange

    def defence_half_points(self) -> int:
        """Extra (not in the requested interface): the defence's half points, after the Excuse exchange."""
        if self.taker is None:
            return 0
        return half_points_of(self.defence_cards) - self.exchange

    def _petit_au_bout(self, mult: int) -> int:
        """+10*mult if the taker won the au-bout trick containing T1, -10*mult if the defence did, else 0.

        The au-bout trick is the last one; when the taker made a chelem through the EX exception (his EX led
        to the last trick), T1 in the second-to-last trick counts as au bout as well.
        """
        candidates = [self.tricks[-1]]
        if self.ex_chelem_win:  # implies the taker won every trick
            candidates.append(self.tricks[-2])
        for trick in candidates:
            if any(card == "T1" for _, card in trick["plays"]):
                return 10 * mult if self.is_taker_side(trick["winner"]) else -10 * mult
        return 0

    def _score(self) -> dict:
        assert len(self.taker_cards) + len(self.defence_cards) == 78
        assert self.taker_half_points() + self.defence_half_points() == DECK_HALF_POINTS
        mult = MULTIPLIER[self.contract]
        points = self.taker_half_points()
        oudlers = sum(1 for c in self.taker_cards if c in OUDLERS)
        target = 2 * TARGET_POINTS[oudlers]
        diff = points - target
        made = diff >= 0
        s = 1 if made else -1
        d = (abs(diff) + 1) // 2  # half points -> points, a half point rounded up in magnitude
        base = s * (25 + d) * mult
        pab = self._petit_au_bout(mult)
        poignee = s * sum(POIGNEE_VALUE[level] for _, level in self.poignees)
        taker_won_all = all(self.is_taker_side(t["winner"]) for t in self.tricks)
        defence_won_all = not any(self.is_taker_side(t["winner"]) for t in self.tricks)
        if self.chelem_announced:
            chelem = 400 if taker_won_all else -200
        else:
            chelem = 200 if taker_won_all else 0
        if defence_won_all:
            chelem -= 200
        total = base + pab + poignee + chelem
        payoffs = [-total] * self.n
        payoffs[self.taker] = (self.n - 1) * total
        assert sum(payoffs) == 0
        return {
            "score": {
                "taker": self.taker,
                "contract": self.contract,
                "half_points": points,
                "target": target,
                "made": made,
                "base": base,
                "petit_au_bout": pab,
                "poignee": poignee,
                "chelem": chelem,
                "T": total,
            },
            "returns": payoffs,
        }

    def _require_terminal(self) -> None:
        if self.phase != "done":
            raise RuntimeError("the deal is not over")

    def returns(self) -> list[int]:
        self._require_terminal()
        if self._final is None:  # void deal or petit sec
            return [0] * self.n
        return list(self._final["returns"])

    def score(self) -> dict:
        self._require_terminal()
        if self._final is None:
            return {
                "taker": -1,
                "contract": None,
                "half_points": 0,
                "target": 0,
                "made": False,
                "base": 0,
                "petit_au_bout": 0,
                "poignee": 0,
                "chelem": 0,
                "T": 0,
            }
        return dict(self._final["score"])
