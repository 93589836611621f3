"""``tarocchi-rl play``: a deal in the terminal against bots, saved as a record at the end.

Seats are ``human`` or any agent spec of :func:`tarocchi_rl.agents.specs.make_agent` (``random``,
``heuristic``, ``ismcts:iterations=200``, ``ppo:PATH``, ...). Bots are driven as in the arena
(:func:`tarocchi_rl.arena.play_games`): each sees the observation and legal mask of its own seat, computed on
the batch of one the State wraps, and must not change it. A human sees his hand sorted by name, the auction,
the monte when shown, the trick on the table and the tricks won, and picks a move by number, by its string
(``play:KC``, ``bid:call``) or just by the card (``KC``); a decision with one legal move plays itself. At the
prompt, ``hint`` asks the hint bot (``--hint SPEC``) what it would play, on a copy of the game (with its top
probabilities when it has them: ``ppo:`` agents); ``help`` or ``?`` lists the commands; ``quit``, end of input
or Ctrl-C abandon the deal (exit 0, no record saved). Anything else is re-prompted.
"""

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import bounded
from .agents.specs import known_specs, make_agent, split_agent_specs
from .core.points import card_points
from .core.state import (
    CALLED,
    DECLARER,
    DISCARDED,
    SHOWN,
    SHOWN_BY,
    STOCK,
    STOCK_SHOWN,
    TRICK,
    TRICK_LEADER,
    TRICKS_WON,
    WON,
)
from .game import State, make
from .keyvalue import key_value
from .policies import AgentLike, agent_label
from .records import describe_outcome

MAX_OPTION_CHARS = 1000  # characters of one --option KEY=VALUE (a variant option is a word or a number)
_HELP = ("commands: a move by its number, its string (play:KC, bid:call) or its card (KC); "
        "hint: what the hint bot would play; help or ?: this list; quit: abandon the deal (no record saved)")


class _GameAbandoned(Exception):
    """The human quit (``quit``, end of input, Ctrl-C)."""


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def make_bot(spec: str | AgentLike, seed: int, where: str, seat: bool = False) -> AgentLike:
    """The agent of ``spec`` (make_agent); a bad spec is a one-line ValueError naming ``where`` (``seat``: it
    was a seat, where ``human`` is also allowed)."""
    try:
        return make_agent(spec, seed)
    except (ValueError, OSError, ImportError) as e:
        msg = _one_line(e)
        if seat and msg.startswith("unknown agent spec"):
            raise ValueError(f"{where}: unknown seat kind {spec!r} (known: human, {known_specs()})") from None
        if msg.startswith("unknown agent spec"):
            raise ValueError(f"{where}: {msg}") from None
        raise ValueError(f"{where}: bad agent spec {spec!r}: {msg}") from None


def parse_seats(text: str | None, n_players: int) -> list[str]:
    """``human,heuristic,ismcts:iterations=200,seed=3,...``: one entry per seat, each ``human`` or an agent spec
    (split by :func:`split_agent_specs`, so ``key=value`` pieces stay with their spec); None gives a human at
    seat 0 against random bots. Bare names are checked here (they cost nothing to build); specs with
    arguments, which may load files, when :func:`make_seat_agents` builds them."""
    if text is None:
        return ["human"] + ["random"] * (n_players - 1)
    pieces = split_agent_specs(text)
    seats = [s if ":" in s else s.lower() for s in pieces]
    if len(seats) != n_players:
        raise ValueError(f"--seats needs {n_players} comma-separated entries, got {len(seats)}: "
                         + " | ".join(seats))
    for k, s in enumerate(seats):
        if s != "human" and ":" not in s:
            make_bot(s, 0, f"seat {k}", seat=True)
    return seats


def new_seed() -> int:
    """A fresh deal seed (printed at the start, so the deal and its bots can be played again)."""
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))


def bot_seeds(seed: int | None, n: int) -> list[int]:
    """n agent seeds drawn from the deal's seed (fresh entropy when None)."""
    return [int(x) for x in np.random.SeedSequence(seed).generate_state(n)]


def make_seat_agents(seats: Sequence[str | AgentLike], seed: int | None = None) -> list[AgentLike | None]:
    """The bot of every seat (None for ``human``); agent objects are kept as they are."""
    seeds = bot_seeds(seed, len(seats))
    return [None if isinstance(s, str) and s.strip().lower() == "human" else make_bot(s, seeds[k], f"seat {k}", True)
            for k, s in enumerate(seats)]


def parse_options(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` strings -> variant options; a value is read as JSON when it parses within the bounds of
    :func:`tarocchi_rl.bounded.loads` (``true``, ``5``, ``"x"``), else kept as a string. Whether the variant accepts
    them is checked by ``make``; a pair longer than :data:`MAX_OPTION_CHARS` is a ValueError."""
    options: dict[str, Any] = {}
    for pair in pairs or []:
        key, value = key_value(pair, "--option", "KEY=VALUE")
        if len(pair) > MAX_OPTION_CHARS:
            raise ValueError(f"--option {key[:40]!r}: longer than {MAX_OPTION_CHARS} characters")
        try:
            options[key] = bounded.loads(value)
        except bounded.BoundedInputError:  # not JSON (or deeper, longer than JSON may be): the string itself
            options[key] = value
    return options


def bot_action(agent: AgentLike, state: State, who: str = "bot") -> int:
    """The bot's move for the player to act, driven as in the arena: the observation and legal mask of that
    seat (only those the agent asks for) on the batch of one the State wraps. An illegal answer is a
    ValueError naming it."""
    env = state._env
    mask = env.legal_mask() if getattr(agent, "needs_mask", True) else None
    obs = env.observe() if getattr(agent, "needs_obs", True) else None
    if getattr(agent, "needs_history", False):  # an external bot (cmd:) writes the seat's view from it
        env.history = [list(state.history)]
    a = int(np.asarray(agent.act(obs, mask, env, np.zeros(1, np.int64)))[0])
    if a not in state.legal_actions():
        raise ValueError(state.illegal_action_message(a, who))
    return a


def taken_cards(state: State, a: int) -> list[str]:
    """The cards that move ``a`` of the seat to act takes into its hand from the stock lying face up (tarok's
    ``talon:1``: one set of the talon), in deal order; [] for any other move. Those cards are face up already:
    naming them tells nothing hidden."""
    if int(state._env.state.meta[0, STOCK_SHOWN]) != 1 or a < 2 * state.game.deck.n_cards:
        return []
    trial = state.clone()
    seat = trial.current_player()
    before = set(trial.hand(seat))
    trial.apply(a)
    joined = set(trial.hand(seat)) - before
    stock = state.deal()["stock"]
    return [c for c in stock if c in joined] if joined <= set(stock) else []


def _hint_lines(agent: AgentLike, state: State, top: int = 5) -> list[str]:
    """What ``agent`` would play in the human's place, and its top probabilities over the legal actions when
    it has ``probabilities`` (ppo:, onnx: agents). It thinks on a copy: the game itself is never touched."""
    view = state.clone()
    label = agent_label(agent)
    try:
        a = bot_action(agent, view, f"hint bot {label}")
        lines = [f"hint ({label}): {state.action_to_string(a)}"]
        probabilities = getattr(agent, "probabilities", None)
        if callable(probabilities):
            env = view._env
            p = np.asarray(probabilities(env.observe(), env.legal_mask(), env))[0]
            best = sorted(state.legal_actions(), key=lambda x: -float(p[x]))[:top]
            lines.append("  probabilities: " + ", ".join(f"{state.action_to_string(x)} {float(p[x]):.2f}"
                                                         for x in best))
    except (ValueError, OSError, RuntimeError) as e:
        return [f"hint ({label}) failed: {_one_line(e)}"]
    return lines


def describe(state: State, viewer: int) -> str:
    """What ``viewer`` may see now, as text (nothing hidden from him is shown)."""

    g = state.game
    st = state._env.state
    tb = state._env.tables
    m = st.meta[0]
    n = g.num_players
    names = g.deck.names
    words = g.spec.rules.BID_WORDS

    def cards(row: int) -> str:
        return " ".join(names[c] for c in sorted(g.deck.cards_of(st.cards[0, row]), key=g.deck.sort_key))

    lines = [f"--- {g.variant}: phase {state.phase}, seat {state.current_player()} to act ---"]
    for col, name, _ in g.spec.rules.BID_ROUNDS:
        lines.append(f"{name}: {[words[w] if w >= 0 else '-' for w in m[col : col + n]]}")
    if m[STOCK_SHOWN] == 1 and cards(STOCK):  # -1: never shown (Piedmontese); empty: tarok's talon all taken
        lines.append(f"stock (shown): {cards(STOCK)}")
    if m[DECLARER] >= 0:
        called = f", called {names[m[CALLED]]}" if m[CALLED] >= 0 else ""
        lines.append(f"declarer: seat {int(m[DECLARER])}{called}")
    if viewer == m[DECLARER] and cards(DISCARDED):
        lines.append(f"your discard: {cards(DISCARDED)}")
    if cards(SHOWN):
        lines.append(f"shown to all (discarded trumps, klop's talon cards): {cards(SHOWN)}")
    for s in range(n):
        if cards(SHOWN_BY + s):
            lines.append(f"shown by seat {s}: {cards(SHOWN_BY + s)}")
    if state.phase in ("play", "poignee"):
        lead = int(m[TRICK_LEADER])
        on_table = []
        for k in range(n):
            s = (lead + k) % n
            c = int(m[TRICK + s])
            if c >= 0:
                on_table.append(f"seat {s}: {names[c]}")
        lines.append("trick: " + (", ".join(on_table) if on_table else "(empty)"))
        won = [int(card_points(st.cards[0, WON + s, 0], st.cards[0, WON + s, 1], tb)) for s in range(n)]
        unit = g.spec.rules.CARD_POINT_UNIT_NAME
        lines.append(f"tricks won per seat: {list(map(int, m[TRICKS_WON : TRICKS_WON + n]))}   "
                     f"card points won ({unit}): {won}")
    lines.append(f"your hand (seat {viewer}): {' '.join(state.hand(viewer))}")
    return "\n".join(lines)


def _ask_human(state: State, inp: Callable[[str], str] = input, out: Callable[[str], object] = print,
              hint: AgentLike | None = None) -> int:
    """The human's move (module docstring); ``hint``, ``help`` and bad input re-prompt, ``quit`` and end of
    input raise _GameAbandoned."""
    legal = state.legal_actions()
    names = [state.action_to_string(a) for a in legal]
    out(describe(state, state.current_player()))
    takes = [" ".join(taken_cards(state, a)) for a in legal]  # a talon set: its cards, shown after it
    shown = [f"{n} ({t})" if t else n for n, t in zip(names, takes, strict=True)]
    out("legal: " + "  ".join(f"[{k}] {n}" for k, n in enumerate(shown)))
    while True:
        try:
            text = inp("your move> ").strip()
        except EOFError:
            raise _GameAbandoned("input closed") from None
        command = text.lower()
        if command in ("quit", "exit"):
            raise _GameAbandoned("quit")
        if command in ("help", "?"):
            out(_HELP)
            continue
        if command == "hint":
            for line in _hint_lines(hint, state) if hint is not None else ["no hint bot (--hint)"]:
                out(line)
            continue
        if text.isdigit() and int(text) < len(legal):
            return legal[int(text)]
        for a, n in zip(legal, names, strict=True):
            if text.lower() == n.lower() or text.upper() == n.partition(":")[2].upper() != "":
                return a
            if text.lower() == n.partition(":")[2].lower() and n.startswith("bid:"):
                return a
        out(f"not a legal move: {text!r}; type a number 0..{len(legal) - 1} or one of the names above "
            "(help: the commands)")


def play_game(variant: str, seats: Sequence[str | AgentLike], seed: int | None = None,
              record_path: str | os.PathLike[str] | None = None, inp: Callable[[str], str] = input,
              out: Callable[[str], object] = print, options: dict[str, Any] | None = None,
              hint: str | AgentLike | None = "heuristic") -> dict[str, Any]:
    """Play one deal; returns its record (also written to ``record_path`` when given, once the deal is over).

    ``seats``: per seat ``human``, an agent spec or an agent; ``hint``: the bot asked by ``hint`` (a spec or an
    agent; None: none). Bad specs or options are a ValueError before the deal starts. When the human quits
    the record returned is the partial one (no ``result``) and nothing is saved."""
    game = make(variant, **(options or {}))
    if len(seats) != game.num_players:
        raise ValueError(f"{variant} needs {game.num_players} seats, got {len(seats)}")
    if seed is None:
        seed = new_seed()
    agents = make_seat_agents(seats, seed)
    hint_bot = None if hint is None else make_bot(hint, seed, "--hint")
    labels = ["human" if a is None else agent_label(s) for s, a in zip(seats, agents, strict=True)]
    state = game.new_state(seed)
    out(f"{variant} {game.options}, seed {seed}: " + ", ".join(f"seat {p} {s}" for p, s in enumerate(labels)))
    if state.is_terminal():
        out("the deal was annulled at once (French petit sec); deal again")
    try:
        while not state.is_terminal():
            p = state.current_player()
            agent = agents[p]
            if agent is not None:
                a = bot_action(agent, state, f"seat {p} ({labels[p]})")
                out(f"seat {p} ({labels[p]}): {state.action_to_string(a)}")
            elif len(legal := state.legal_actions()) == 1:
                a = legal[0]
                out(f"seat {p} plays {state.action_to_string(a)} (only legal move)")
            else:
                a = _ask_human(state, inp, out, hint_bot)
                out(f"seat {p} (human): {state.action_to_string(a)}")
            state.apply(a)
    except (_GameAbandoned, KeyboardInterrupt) as e:
        reason = str(e) if isinstance(e, _GameAbandoned) else "interrupted"
        out(f"game abandoned ({reason}) after {len(state.history)} actions; no record saved")
        return state.to_record()

    out("=== deal over ===")
    for line in describe_outcome(state.outcome(), state.game.variant):
        out(line)
    record = state.to_record()
    if record_path:
        with open(record_path, "w", encoding="utf-8") as f:
            json.dump(record, f)
        out(f"record saved to {record_path}")
    return record
