"""The index a parallel loop over games hands its callees, and the batch size below which loops stay serial.

Numba types the index of ``for i_ in prange(n)`` as ``uint64`` (the range's bound is known to be non-negative),
where serial code indexes games with ``int64``: a kernel called from both is compiled twice, once per signature,
and every kernel it calls with that index too. Each parallel loop over games therefore converts its index first,
``i = game_index(i_)``, so that every kernel below it is compiled once (a cold ``tarocchi-rl eval --variant french4
--agents heuristic,random --deals 4`` compiled 141 kernels with prange's own index, 73 without; docs/core.md).
"""

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def game_index(i: int) -> np.int64:
    """``i`` (a prange loop's index) as the ``int64`` game index every kernel takes."""
    return np.int64(i)


SERIAL_BELOW = 64
"""Games per call under which a batch kernel runs its loop on the calling thread: starting a parallel region costs
more than a few games' work, and a command that only ever steps a few games (a first ``eval``, one web table) never
compiles the parallel kernels (1-4 s each from an empty cache)."""
