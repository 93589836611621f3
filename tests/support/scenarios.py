"""Scenarios written once as data and run on both implementations (tests/mineo, tests/piedmont).

A Scenario is a deal, options, a script and the expected figures. The script is a list of steps: action
strings (whitespace-separated, engine spelling; LOWEST: the lowest legal action), At checkpoints, Illegal
actions, Finish (play to the end) or a callable taking the game. A family test module wraps the engine's State
and its oracle in ScenarioGame subclasses with the same interface and runs every scenario on both.
"""

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

IMPLS = ("engine", "oracle")
LOWEST = "LOWEST"  # an action token: the legal action with the lowest engine action id
ANY_CARD = "ANY_CARD"  # At(legal=ANY_CARD): every card held may be played


def slug(text: str) -> str:
    """A test id from a scenario's description: "a solo, doubled" -> "a_solo_doubled"."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def action_set(actions) -> set:
    """A set of action strings from one whitespace-separated string or an iterable of strings."""
    return set(actions.split()) if isinstance(actions, str) else set(actions)


@dataclass(frozen=True)
class At:
    """A checkpoint: ``seat`` is to act (-1: the deal is over); where given, ``legal`` is the exact legal set
    (or ANY_CARD), ``has`` / ``lacks`` actions that are / are not legal, ``phase`` the phase name, ``hands``
    {seat: cards} whole hands (compared as sets). ``engine`` / ``oracle``: a check of that implementation's own
    object only (observations of the engine's State, internals of the oracle)."""

    seat: int
    legal: object = None
    has: object = ()
    lacks: object = ()
    phase: str | None = None
    hands: dict | None = None
    engine: Callable | None = None
    oracle: Callable | None = None


@dataclass(frozen=True)
class Illegal:
    """A step: ``action`` is a ValueError and changes nothing."""

    action: str


@dataclass(frozen=True)
class Finish:
    """A step: play the deal out. Seat s plays the cards of ``cards[s]`` in order while it has some; every other
    turn takes the lowest legal action, or with ``seed`` a random one (``random.Random(seed)`` over the sorted
    legal action strings)."""

    cards: dict = field(default_factory=dict)
    seed: int | None = None


class Sub(dict):
    """An expected figure given in part: only these keys are compared (missing keys of the figure count 0)."""


@dataclass(frozen=True)
class Scenario:
    """A hand-worked deal: ``deal`` in the family's form, ``options``, the ``script`` and the expected figures
    at the end (``expect``: figure name -> value; ``tricks`` {index: (leader, [(seat, card), ...], winner)}
    and ``winners`` (every trick's winner) are read from the play, the last trick's winner is None). ``versus``:
    (options, {figure: difference}) replays the scenario's card actions with other options and checks the
    differences of the figures (this run minus that one)."""

    id: str
    deal: object
    script: tuple
    options: dict = field(default_factory=dict)
    expect: dict = field(default_factory=dict)
    versus: tuple | None = None


class ScenarioGame:
    """One implementation behind the scenarios' interface. Subclasses set ``impl``, ``n_players`` and ``raw`` (the
    engine's State or the oracle) and define ``_apply``, ``current_player``, ``legal`` (set of action strings in
    the engine's spelling), ``phase``, ``hand(seat)``, ``is_terminal``, ``action_key`` (the engine's action id, for
    LOWEST) and ``figures`` (dict of the deal's figures, terminal only; it checks the family's settlement)."""

    impl = ""
    n_players = 0

    def __init__(self):
        self.history: list = []
        self.tricks: list = []
        self._trick: list = []

    def apply(self, action: str) -> None:
        seat = self.current_player()
        self._apply(action)
        self.history.append(action)
        if action.startswith("play:"):
            self._trick.append((seat, action[5:]))
            if len(self._trick) == self.n_players:
                winner = None if self.is_terminal() else self.current_player()
                self.tricks.append((self._trick[0][0], self._trick, winner))
                self._trick = []

    def lowest(self) -> str:
        return min(self.legal(), key=self.action_key)


class EngineGame(ScenarioGame):
    """The engine behind the scenarios' interface: a :class:`tarocchi_rl.game.State` in ``raw``. A family's test
    module sets ``raw`` in ``__init__`` and writes ``figures`` (its outcome as the family's figures)."""

    impl = "engine"
    raw: Any = None

    def _apply(self, action):
        self.raw.apply(action)

    def current_player(self):
        return self.raw.current_player()

    def legal(self):
        return {self.raw.action_to_string(a) for a in self.raw.legal_actions()}

    @property
    def phase(self):
        return self.raw.phase

    def hand(self, seat):
        return self.raw.hand(seat)

    def is_terminal(self):
        return self.raw.is_terminal()

    def action_key(self, action):
        return self.raw.string_to_action(action)


def _check_at(game: ScenarioGame, at: At) -> None:
    where = f"{game.impl}, {len(game.history)} actions in"
    assert game.current_player() == at.seat, where
    legal = game.legal()
    if at.legal == ANY_CARD:
        assert legal == {"play:" + c for c in game.hand(at.seat)}, where
    elif at.legal is not None:
        assert legal == action_set(at.legal), where
    assert action_set(at.has) <= legal, where
    assert not action_set(at.lacks) & legal, where
    if at.phase is not None:
        assert game.phase == at.phase, where
    for seat, cards in (at.hands or {}).items():
        assert sorted(game.hand(seat)) == sorted(cards.split() if isinstance(cards, str) else cards), where
    check = at.engine if game.impl == "engine" else at.oracle
    if check is not None:
        check(game.raw)


def run_script(game: ScenarioGame, script) -> ScenarioGame:
    """Run a scenario's script on ``game`` (see Scenario); returns the game."""
    for step in script:
        if isinstance(step, str):
            for a in step.split():
                game.apply(game.lowest() if a == LOWEST else a)
        elif isinstance(step, At):
            _check_at(game, step)
        elif isinstance(step, Illegal):
            seat, legal = game.current_player(), game.legal()
            with pytest.raises(ValueError):
                game.apply(step.action)
            assert game.current_player() == seat and game.legal() == legal
        elif isinstance(step, Finish):
            queues = {s: list(c.split() if isinstance(c, str) else c) for s, c in step.cards.items()}
            rng = random.Random(step.seed) if step.seed is not None else None
            while not game.is_terminal():
                p = game.current_player()
                if queues.get(p):
                    game.apply("play:" + queues[p].pop(0))
                elif rng is not None:
                    game.apply(rng.choice(sorted(game.legal())))
                else:
                    game.apply(game.lowest())
            assert not any(queues.values()), f"{game.impl}: scripted cards left unplayed"
        elif callable(step):
            step(game)
        else:
            raise TypeError(f"unknown scenario step {step!r}")
    return game


def _matches(got, want) -> bool:
    if isinstance(want, Sub):
        return all(got.get(k, 0) == v for k, v in want.items())
    return got == want


def play_scenario(sc: Scenario, make_game: Callable) -> ScenarioGame:
    """Run ``sc`` on ``make_game(deal, **options)`` and check its expected figures; a finished deal also has no
    player to act, no legal action and refuses one more action."""
    game = run_script(make_game(sc.deal, **sc.options), sc.script)
    figures = {}
    if game.is_terminal():
        assert game.current_player() == -1 and game.legal() == set()
        with pytest.raises(ValueError):
            game.apply(game.history[-1])
        figures = game.figures()
    else:
        assert not sc.versus, "versus needs a finished deal"
    for name, want in sc.expect.items():
        if name == "tricks":
            for k, trick in want.items():
                assert game.tricks[k] == trick, f"{game.impl}: trick {k}"
        elif name == "winners":
            assert [t[2] for t in game.tricks] == want, f"{game.impl}: trick winners"
        else:
            assert name in figures, f"{game.impl}: figure {name!r} needs a finished deal"
            assert _matches(figures[name], want), f"{game.impl}: {name} = {figures[name]!r}, expected {want!r}"
    if sc.versus:
        options, diffs = sc.versus
        other = make_game(sc.deal, **{**sc.options, **options})
        for a in game.history:
            if a.startswith(("discard:", "play:")):
                other.apply(a)
        assert other.is_terminal()
        theirs = other.figures()
        for name, diff in diffs.items():
            got = [x - y for x, y in zip(figures[name], theirs[name], strict=True)]
            assert got == diff, f"{game.impl}: {name} {figures[name]} minus {theirs[name]}"
    return game
