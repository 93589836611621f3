"""Playing games of the arena: every game of a batch to the end, each seat's decisions taken by its agent, with the
games' records when asked (``tarocchi-record/1``)."""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..batch import BatchEnv
from ..core.state import PHASE
from ..policies import AgentLike


def play_games(
    variant: str,
    decks: NDArray[np.integer[Any]],
    seat_agents: NDArray[np.integer[Any]],
    agents: Sequence[AgentLike],
    options: dict[str, Any] | None = None,
    record: bool = False,
    progress: Callable[[int, int], object] | None = None,
) -> tuple[NDArray[np.int32], NDArray[np.int32], list[dict[str, Any]] | None]:
    """Play every game to the end. decks int[G, C]; seat_agents int[G, N] agent index per seat.

    Returns (payoffs int32[G, N], meta int32[G, ...] final state columns, records or None).
    """
    g = len(decks)
    env = BatchEnv(variant, g, seed=0, **(options or {}))
    env.set_deals(decks)
    rows = np.arange(g)
    need_obs = any(getattr(a, "needs_obs", True) for a in agents)
    need_mask = any(getattr(a, "needs_mask", True) for a in agents)
    trusted = all(getattr(a, "legal_by_construction", False) for a in agents)  # else every action is checked
    if any(getattr(a, "needs_history", False) for a in agents):  # e.g. an external bot: it gets the seat's view
        env.keep_history()
    mask_buf = np.empty((g, env.num_actions), bool)
    actions = np.zeros(g, np.int64)
    history: list[tuple[NDArray[np.int64], NDArray[np.int32]]] = []
    step = 0
    while True:
        cur = env.current_player().astype(np.int64)
        live = cur >= 0
        if not live.any():
            break
        mask = env.legal_mask(out=mask_buf) if need_mask else None
        obs = env.observe() if need_obs else None
        who = np.where(live, seat_agents[rows, np.maximum(cur, 0)], -1)
        actions[:] = -1
        for k, agent in enumerate(agents):
            idx = np.nonzero(who == k)[0]
            if len(idx):
                o = None if obs is None else obs[idx]
                actions[idx] = agent.act(o, None if mask is None else mask[idx], env, idx)
        if record:
            history.append((actions.copy(), env.state.meta[:, PHASE].copy()))
        env.step(actions, check=not trusted)
        step += 1
        if progress is not None:
            progress(int((~live).sum()), g)
    records: list[dict[str, Any]] | None = None
    if record:
        records = _records(env, decks, history)
    return env.returns(), env.state.meta.copy(), records


def check_plays(agent: AgentLike, variant: str, options: dict[str, Any] | None = None) -> None:
    """``agent`` (a throwaway copy) takes the first decision of one deal of ``variant``: an agent that cannot play
    it (a bot trained on another variant, a program that does not answer, ...) raises its error here, before a long
    run starts. The copy is closed afterwards when it can be (a ``cmd:`` program's process)."""
    try:
        env = BatchEnv(variant, 1, seed=0, **(options or {}))
        if getattr(agent, "needs_history", False):
            env.keep_history()
        agent.act(env.observe(), env.legal_mask(), env, np.zeros(1, np.int64))
    finally:
        close = getattr(agent, "close", None)
        if callable(close):
            close()


def _records(env: BatchEnv, decks: NDArray[np.integer[Any]],
             history: list[tuple[NDArray[np.int64], NDArray[np.int32]]]) -> list[dict[str, Any]]:
    spec = env.spec
    names = spec.deck.names
    out = []
    for i in range(len(decks)):
        hands: list[list[str]] = []
        k = 0
        for size in spec.hand_sizes:
            hands.append([names[c] for c in decks[i][k : k + size]])
            k += size
        acts = [spec.rules.action_to_string(a[i], ph[i]) for a, ph in history if a[i] >= 0]
        out.append({
            "format": "tarocchi-record/1", "variant": env.variant, "options": env.options,
            "deal": {"hands": hands, "stock": [names[c] for c in decks[i][k : k + spec.stock_size]]},
            "actions": acts, "result": {"payoffs": [int(x) for x in env.returns()[i]]},
        })
    return out
