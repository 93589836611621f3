"""``tarocchi-rl play``: a terminal game against bots, saved as a record at the end.

Seats are ``human`` or ``random``. A human sees his hand sorted by name, the auction, the monte when shown,
the trick on the table and the tricks won, and picks a move by number, by its string (``play:KC``,
``bid:call``) or just by the card (``KC``); anything else is re-prompted.
"""

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .core.points import card_points
from .core.state import (
    BID_WORD,
    CALLED,
    DECLARER,
    DISCARDED,
    EARLY_BID,
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
from .records import describe_outcome

SEAT_KINDS = ("human", "random")


def parse_seats(text: str | None, n_players: int) -> list[str]:
    """``human,random,...`` with one entry per seat; None gives a human at seat 0 against random bots."""
    if text is None:
        return ["human"] + ["random"] * (n_players - 1)
    seats = [s.strip().lower() for s in text.split(",")]
    if len(seats) != n_players:
        raise ValueError(f"--seats needs {n_players} comma-separated entries, got {len(seats)}")
    for s in seats:
        if s not in SEAT_KINDS:
            raise ValueError(f"unknown seat kind {s!r} (use: {', '.join(SEAT_KINDS)})")
    return seats


def describe(state: State, viewer: int) -> str:
    """What ``viewer`` may see now, as text (nothing hidden from him is shown)."""

    g = state.game
    st = state._env.state
    tb = state._env.tables
    m = st.meta[0]
    n = g.num_players
    names = g.deck.names
    words = getattr(g.spec.rules, "BID_WORDS", ())

    def cards(row: int) -> str:
        return " ".join(names[c] for c in sorted(g.deck.cards_of(st.cards[0, row]), key=g.deck.sort_key))

    lines = [f"--- {g.variant}: phase {state.phase}, seat {state.current_player()} to act ---"]
    if g.variant == "mineo":
        early = [words[w] if w >= 0 else "-" for w in m[EARLY_BID : EARLY_BID + n]]
        lines.append(f"early round: {early}")
    if words:
        lines.append(f"bids: {[words[w] if w >= 0 else '-' for w in m[BID_WORD : BID_WORD + n]]}")
    if m[STOCK_SHOWN]:
        lines.append(f"stock (shown): {cards(STOCK)}")
    if m[DECLARER] >= 0:
        called = f", called {names[m[CALLED]]}" if m[CALLED] >= 0 else ""
        lines.append(f"declarer: seat {int(m[DECLARER])}{called}")
    if viewer == m[DECLARER] and cards(DISCARDED):
        lines.append(f"your discard: {cards(DISCARDED)}")
    if cards(SHOWN):
        lines.append(f"discarded trumps (shown): {cards(SHOWN)}")
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
        unit = "half points" if g.variant.startswith("french") else "thirds"
        lines.append(f"tricks won per seat: {list(map(int, m[TRICKS_WON : TRICKS_WON + n]))}   "
                     f"card points won ({unit}): {won}")
    lines.append(f"your hand (seat {viewer}): {' '.join(state.hand(viewer))}")
    return "\n".join(lines)


def ask_human(state: State, inp: Callable[[str], str] = input, out: Callable[[str], object] = print) -> int:
    legal = state.legal_actions()
    names = [state.action_to_string(a) for a in legal]
    out(describe(state, state.current_player()))
    out("legal: " + "  ".join(f"[{k}] {n}" for k, n in enumerate(names)))
    while True:
        try:
            text = inp("your move> ").strip()
        except EOFError:
            raise SystemExit("input closed; game abandoned") from None
        if text.isdigit() and int(text) < len(legal):
            return legal[int(text)]
        for a, n in zip(legal, names, strict=True):
            if text.lower() == n.lower() or text.upper() == n.partition(":")[2].upper() != "":
                return a
            if text.lower() == n.partition(":")[2].lower() and n.startswith("bid:"):
                return a
        out(f"not a legal move: {text!r}; type a number 0..{len(legal) - 1} or one of the names above")


def play_game(variant: str, seats: Sequence[str], seed: int | None = None,
              record_path: str | os.PathLike[str] | None = None, inp: Callable[[str], str] = input,
              out: Callable[[str], object] = print) -> dict[str, Any]:
    """Play one deal; returns its record (also written to ``record_path`` when given)."""
    game = make(variant)
    state = game.new_state(seed)
    if state.is_terminal():
        out("the deal was annulled at once (French petit sec); deal again")
    rng = np.random.default_rng(seed)
    while not state.is_terminal():
        p = state.current_player()
        if seats[p] == "human":
            a = ask_human(state, inp, out)
        else:
            a = int(rng.choice(state.legal_actions()))
        out(f"seat {p} ({seats[p]}): {state.action_to_string(a)}")
        state.apply(a)

    out("=== deal over ===")
    for line in describe_outcome(state.outcome(), state.game.variant):
        out(line)
    record = state.to_record()
    if record_path:
        with open(record_path, "w", encoding="utf-8") as f:
            json.dump(record, f)
        out(f"record saved to {record_path}")
    return record

