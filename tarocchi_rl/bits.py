"""Bit and random-number primitives shared by every kernel.

Hands and card sets are pairs of ``uint64`` words (see :mod:`tarocchi_rl.cards`). Everything here is written
with explicit ``np.uint64`` constants: in Numba, mixing ``uint64`` with a signed integer silently gives
``float64``. Every function also runs as plain Python under ``NUMBA_DISABLE_JIT=1`` and gives the same bits.

Random numbers: each game carries one ``uint64`` SplitMix64 state, so a batch is reproducible from one seed
and any single game can be replayed on its own.
"""

import numpy as np
from numba import njit

U0 = np.uint64(0)
U1 = np.uint64(1)
U2 = np.uint64(2)
U4 = np.uint64(4)
U32 = np.uint64(32)
U56 = np.uint64(56)
ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


@njit(cache=True, inline="always")
def popcount(x):
    """Number of set bits of a uint64 (SWAR), as int."""
    x = x - ((x >> U1) & _M1)
    x = (x & _M2) + ((x >> U2) & _M2)
    x = (x + (x >> U4)) & _M4
    return int((x * _H01) >> U56)


@njit(cache=True, inline="always")
def lowest_bit(x):
    """Index of the lowest set bit of a non-zero uint64."""
    return popcount((x & (~x + U1)) - U1)


@njit(cache=True, inline="always")
def bit(k):
    """The uint64 with only bit ``k`` set."""
    return U1 << np.uint64(k)


@njit(cache=True, inline="always")
def kth_bit(x, k):
    """Index of the k-th (0-based, from the lowest) set bit of x; requires k < popcount(x)."""
    for _ in range(k):
        x = x & (x - U1)
    return lowest_bit(x)


@njit(cache=True, inline="always")
def splitmix_next(state):
    """Advance a SplitMix64 state. Returns (new_state, 64 random bits), both uint64."""
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return state, z ^ (z >> _S31)


@njit(cache=True, inline="always")
def bounded(bits64, n):
    """Map 64 random bits to an int uniform in [0, n) for 0 < n < 2**32 (multiply-shift)."""
    return int(((bits64 >> U32) * np.uint64(n)) >> U32)


def seed_states(seed, n):
    """Per-game RNG states for a batch of n games derived from one integer seed, uint64[n]."""
    ss = np.random.SeedSequence(int(seed))
    return ss.generate_state(n, dtype=np.uint64)
