"""The batch loops a game API calls, parallel or serial, and the choice between them.

Each batch driver (a prange loop over games) has a serial twin (a plain loop) that runs on the calling thread: under
:data:`~tarocchi_rl.core.parallel.SERIAL_BELOW` games starting a parallel region costs more than the games' work,
and a command that only steps a few games never compiles the parallel kernels.
"""

from collections.abc import Callable
from typing import NamedTuple

from ..core.parallel import SERIAL_BELOW
from .drivers import (
    legal_mask_batch,
    legal_mask_serial,
    random_actions_batch,
    random_actions_serial,
    reset_batch,
    reset_serial,
    step_batch,
    step_serial,
)
from .observation import observe_batch, observe_serial


class Loops(NamedTuple):
    """One set of batch loops (their arguments: the drivers' of the same name in :mod:`.drivers`)."""

    reset: Callable  # (st, tb, shuffle)
    legal_mask: Callable  # (st, tb, out bool[B, n_actions])
    step: Callable  # (st, actions int64[B], tb, auto_reset, done_out bool[B], payoff_out int32[B, 4])
    random_actions: Callable  # (st, tb, out int64[B])
    observe: Callable  # (st, tb, viewers int64[B], out float32[B, obs_dim])


PARALLEL = Loops(reset_batch, legal_mask_batch, step_batch, random_actions_batch, observe_batch)
SERIAL = Loops(reset_serial, legal_mask_serial, step_serial, random_actions_serial, observe_serial)


def loops_for(n_games: int) -> Loops:
    """The loops for a batch of ``n_games``: serial under SERIAL_BELOW games, else parallel."""
    return SERIAL if n_games < SERIAL_BELOW else PARALLEL
