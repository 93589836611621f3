"""Slovenian tarok in lockstep with OpenSpiel's own ``tarok`` game (issue 34, item 3).

    python experiments/checks/check_openspiel_tarok.py --variant tarok3|tarok4 --deals N --seed S [--engine oracle]

Deal ``i`` is the i-th deal of OpenSpiel's ``tarok(players=P, rng_seed=S)``: its one chance action draws a
shuffle from the game's own generator, so the deal is read back from the state (each seat's hand, then the talon
in its order) and given, as card names in deal order, to the engine checked. Both then play the same random
legal actions (``random.Random(S)``; the bids of deal i in style ``BIDDING_STYLES[i % 4]``, which prefer
``pass`` or the lowest bid in three deals of four, so that klop and the talon contracts are met often). At every
decision the player to act and the whole legal set (OpenSpiel's actions mapped to strings by the table below)
must agree, and at the end the returns. Printed: the decisions checked and the contracts met, then ``N deals, 0
divergences`` (exit 0), or the first divergence with the deal (its index, the deck, the actions so far) and the
step (exit 1). Bad arguments: one line, exit 2.

OpenSpiel's action ids are reused from phase to phase; they map to the oracle's strings so:

| OpenSpiel phase            | action id           | string                                            |
|----------------------------|---------------------|---------------------------------------------------|
| bidding                    | 0                   | ``bid:pass``                                      |
| bidding                    | 1 .. 12             | ``bid:`` + BIDS[id], in order: ``klop`` ``three`` |
|                            |                     | ``two`` ``one`` ``solo_three`` ``solo_two``       |
|                            |                     | ``solo_one`` ``beggar`` ``solo_without``          |
|                            |                     | ``open_beggar`` ``colour_valat`` ``valat``        |
| king calling               | 29 37 45 53         | ``call:KH`` ``call:KD`` ``call:KS`` ``call:KC``   |
| talon exchange, 6 in talon | i (0 = leftmost set)| ``talon:i``                                       |
| talon exchange, after      | card id c           | ``discard:`` + CARD_NAMES[c]                      |
| tricks playing             | card id c           | ``play:`` + CARD_NAMES[c]                         |

Card ids (OpenSpiel's deck order) and names: 0..21 the taroks ``T1`` (Pagat) .. ``T20``, ``T21`` (Mond), ``T22``
(Skis); 22..29 hearts 4 3 2 1 J N Q K (``4H`` .. ``KH``); 30..37 diamonds the same; 38..45 spades 7 8 9 10 J N Q K
(``7S`` .. ``KS``); 46..53 clubs the same. The script checks this table against OpenSpiel's own card names
(``OPENSPIEL_LONG_NAMES``) before it starts.

``--engine`` picks what is checked against OpenSpiel: ``oracle`` (tests/oracles/oracle_tarok.py) or ``core`` (the
batched engine, through the single-game API: ``tarocchi_rl.make(variant).state_from_deal``, whose action strings
are the oracle's). An engine is anything with the ``LockstepEngine`` methods, made by a factory ``(variant, deck)
-> LockstepEngine`` registered in ``ENGINES``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

PLAYERS = {"tarok3": 3, "tarok4": 4}
BIDS = ("pass", "klop", "three", "two", "one", "solo_three", "solo_two", "solo_one", "beggar", "solo_without",
        "open_beggar", "colour_valat", "valat")  # OpenSpiel's bidding action id -> our bid


def _card_names() -> tuple[str, ...]:
    taroks = [f"T{i}" for i in range(1, 23)]
    red = ("4", "3", "2", "1", "J", "N", "Q", "K")
    black = ("7", "8", "9", "10", "J", "N", "Q", "K")
    suits = [rank + suit for suit, ranks in (("H", red), ("D", red), ("S", black), ("C", black)) for rank in ranks]
    return tuple(taroks + suits)


CARD_NAMES = _card_names()  # OpenSpiel card id -> our card name
_ROMAN = ("II", "III", "IIII", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII", "XIII", "XIV", "XV", "XVI", "XVII",
          "XVIII", "XIX", "XX")
_RANK_WORDS = {"J": "Jack", "N": "Knight", "Q": "Queen", "K": "King"}
_SUIT_WORDS = {"H": "Hearts", "D": "Diamonds", "S": "Spades", "C": "Clubs"}
OPENSPIEL_LONG_NAMES = ("Pagat", *_ROMAN, "Mond", "Skis") + tuple(
    f"{_RANK_WORDS.get(n[:-1], n[:-1])} of {_SUIT_WORDS[n[-1]]}" for n in CARD_NAMES[22:])


class LockstepEngine(Protocol):
    """What the lockstep drives: one deal, actions as strings (the mapping table above)."""

    def current_player(self) -> int: ...  # -1 once the deal is over

    def legal_actions(self) -> set[str]: ...

    def apply(self, action: str) -> None: ...

    def is_terminal(self) -> bool: ...

    def returns(self) -> list[int]: ...  # one per seat, OpenSpiel's scale


EngineFactory = Callable[[str, list[str]], LockstepEngine]  # (variant, deck: 54 names in deal order)


def oracle_engine(variant: str, deck: list[str]) -> LockstepEngine:
    from tests.oracles.oracle_tarok import TarokOracle

    return TarokOracle(PLAYERS[variant], deck)


class CoreEngine:
    """The batched engine's single-game API driven with the lockstep's strings."""

    def __init__(self, variant: str, deck: list[str]) -> None:
        import tarocchi_rl

        game = _core_games.get(variant) or _core_games.setdefault(variant, tarocchi_rl.make(variant))
        h = 48 // PLAYERS[variant]
        self.state = game.state_from_deal([deck[h * s : h * (s + 1)] for s in range(PLAYERS[variant])], deck[48:])
        if self.state.deal()["hands"] != [deck[h * s : h * (s + 1)] for s in range(PLAYERS[variant])]:
            raise Divergence("the engine dealt the deck again (a hand without a tarok)")

    def current_player(self) -> int:
        return self.state.current_player()

    def legal_actions(self) -> set[str]:
        return {self.state.action_to_string(a) for a in self.state.legal_actions()}

    def apply(self, action: str) -> None:
        self.state.apply(action)

    def is_terminal(self) -> bool:
        return self.state.is_terminal()

    def returns(self) -> list[int]:
        return self.state.returns()


_core_games: dict[str, Any] = {}


def core_engine(variant: str, deck: list[str]) -> LockstepEngine:
    return CoreEngine(variant, deck)


ENGINES: dict[str, EngineFactory | None] = {
    "oracle": oracle_engine,
    "core": core_engine,  # the batched engine (tarocchi_rl's tarok3 / tarok4)
}


class Divergence(Exception):
    pass


def openspiel_action_string(state: Any, action: int) -> str:
    """One OpenSpiel action of ``state`` (the state it is legal in) as the oracle's string."""
    import pyspiel

    phase = state.current_game_phase()
    if phase == pyspiel.TarokGamePhase.BIDDING:
        return "bid:" + BIDS[action]
    if phase == pyspiel.TarokGamePhase.KING_CALLING:
        return "call:" + CARD_NAMES[action]
    if phase == pyspiel.TarokGamePhase.TALON_EXCHANGE:
        if len(state.talon()) == 6:
            return f"talon:{action}"
        return "discard:" + CARD_NAMES[action]
    if phase == pyspiel.TarokGamePhase.TRICKS_PLAYING:
        return "play:" + CARD_NAMES[action]
    raise Divergence(f"OpenSpiel offers action {action} in phase {phase}")


def dealt_deck(state: Any, players: int) -> list[str]:
    """OpenSpiel's dealt cards as our deck in deal order: seat 0's hand, ..., the last seat's, then the talon."""
    ids = [c for seat in range(players) for c in state.player_cards(seat)] + list(state.talon())
    return [CARD_NAMES[c] for c in ids]


def check_card_names(game: Any) -> None:
    """The mapping table agrees with OpenSpiel's own card names (ValueError naming the first mismatch)."""
    state = game.new_initial_state()
    state.apply_action(0)
    for card_id, expected in enumerate(OPENSPIEL_LONG_NAMES):
        got = state.card_action_to_string(card_id)
        if got != expected:
            raise ValueError(f"OpenSpiel card {card_id} is {got!r}, the mapping table says {expected!r}")


BIDDING_STYLES = ("uniform", "passing", "low", "low")  # deal i bids in style BIDDING_STYLES[i % 4]


def choose(rng: random.Random, state: Any, actions: list[int], style: str) -> int:
    """A random legal action. Bids depend on the deal's style: "uniform"; "passing" passes 3 times in 4 when it
    may (klop is met); "low" passes half the time and otherwise bids, 3 times in 4, the lowest contract it may
    (the talon and king-calling contracts are met)."""
    import pyspiel

    if style != "uniform" and state.current_game_phase() == pyspiel.TarokGamePhase.BIDDING:
        if 0 in actions and rng.random() < (0.75 if style == "passing" else 0.5):
            return 0
        bids = [a for a in actions if a != 0]
        if style == "low" and bids and rng.random() < 0.75:
            return min(bids)
    return rng.choice(actions)


def play_deal(state: Any, engine: LockstepEngine, rng: random.Random, style: str, taken: list[str]) -> None:
    """Plays one dealt OpenSpiel state and the engine side by side, recording the actions in ``taken``. Raises
    Divergence at the first disagreement."""
    while True:
        step = len(taken)
        if state.is_terminal() != engine.is_terminal():
            raise Divergence(f"step {step}: OpenSpiel terminal {state.is_terminal()}, engine terminal "
                             f"{engine.is_terminal()}")
        if state.is_terminal():
            expected = [int(r) for r in state.returns()]
            got = list(engine.returns())
            if expected != got:
                raise Divergence(f"returns: OpenSpiel {expected}, engine {got}")
            return
        player, engine_player = state.current_player(), engine.current_player()
        ids = state.legal_actions()
        legal = {openspiel_action_string(state, a) for a in ids}
        engine_legal = engine.legal_actions()
        if player != engine_player or legal != engine_legal:
            raise Divergence(
                f"step {step} ({state.current_game_phase().name}): OpenSpiel player {player} legal "
                f"{sorted(legal)}; engine player {engine_player} legal {sorted(engine_legal)}; only OpenSpiel "
                f"{sorted(legal - engine_legal)}, only engine {sorted(engine_legal - legal)}")
        action = choose(rng, state, ids, style)
        text = openspiel_action_string(state, action)
        engine.apply(text)
        state.apply_action(action)
        taken.append(text)


def run(variant: str, deals: int, seed: int, factory: EngineFactory, out: Callable[[str], None] = print) -> int:
    """The lockstep over ``deals`` deals; 0 when all agree, 1 at the first divergence (printed)."""
    import pyspiel

    players = PLAYERS[variant]
    game = pyspiel.load_game(f"tarok(players={players},rng_seed={seed})")
    check_card_names(game)
    rng = random.Random(seed)
    contracts: Counter = Counter()
    decisions = 0
    start = time.perf_counter()
    for deal in range(deals):
        state = game.new_initial_state()
        state.apply_action(0)  # OpenSpiel's one chance action: the deal
        deck = dealt_deck(state, players)
        taken: list[str] = []
        try:
            engine = factory(variant, deck)
            play_deal(state, engine, rng, BIDDING_STYLES[deal % 4], taken)
        except Exception as error:  # a Divergence, or the engine refusing a deal or an action
            out(f"divergence in deal {deal} of {variant} (rng_seed {seed}): {error}")
            out(f"  deck (hands of seats 0..{players - 1}, then the talon): {' '.join(deck)}")
            out(f"  actions before it: {' '.join(taken) or '(none)'}")
            return 1
        decisions += len(taken)
        contracts[str(state.selected_contract().name).lower()] += 1
    seconds = time.perf_counter() - start
    met = ", ".join(f"{name} {count}" for name, count in sorted(contracts.items(), key=lambda kv: -kv[1]))
    out(f"{variant}: {decisions} decisions checked in {seconds:.1f} s; contracts: {met}")
    out(f"{deals} deals, 0 divergences")
    return 0


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit 2 (argparse's own prints the usage too)
        print(f"check_openspiel_tarok: {message}", file=sys.stderr)
        raise SystemExit(2)


def main(argv: list[str] | None = None) -> int:
    parser = _OneLineParser(description=__doc__.split("\n\n")[0],
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--deals", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--engine", default="oracle")
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return int(stop.code or 0)
    problem = None
    if args.variant not in PLAYERS:
        problem = f"--variant must be one of {', '.join(PLAYERS)}, got {args.variant!r}"
    elif args.deals < 1:
        problem = f"--deals must be at least 1, got {args.deals}"
    elif not 0 <= args.seed < 2**31:
        problem = f"--seed must be in 0 .. 2**31-1 (OpenSpiel's rng_seed), got {args.seed}"
    elif args.engine not in ENGINES:
        problem = f"--engine must be one of {', '.join(ENGINES)}, got {args.engine!r}"
    elif ENGINES[args.engine] is None:
        problem = f"--engine {args.engine}: not available yet (tarok3/tarok4 are not variants of the engine yet)"
    if problem is None:
        try:
            import pyspiel  # noqa: F401
        except ImportError:
            problem = "pyspiel (OpenSpiel's Python package) is not installed"
    if problem is not None:
        print(f"check_openspiel_tarok: {problem}", file=sys.stderr)
        return 2
    factory = ENGINES[args.engine]
    assert factory is not None
    return run(args.variant, args.deals, args.seed, factory)


if __name__ == "__main__":
    sys.exit(main())
