"""Bit and random-number primitives shared by every kernel.

Hands and card sets are pairs of ``uint64`` words (see :mod:`tarocchi_rl.cards`). Everything here is written
with explicit ``np.uint64`` constants: in Numba, mixing ``uint64`` with a signed integer silently gives
``float64``. Every function also runs as plain Python under ``NUMBA_DISABLE_JIT=1`` and gives the same bits.

Random numbers: each game carries one ``uint64`` SplitMix64 state, so a batch is reproducible from one seed
and any single game can be replayed on its own.
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import config
from numba.extending import intrinsic

U0 = np.uint64(0)
U1 = np.uint64(1)
_U32 = np.uint64(32)
ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_MASK64 = (1 << 64) - 1


if config.DISABLE_JIT:  # plain Python: the same results, for NUMBA_DISABLE_JIT=1 runs

    def popcount(x):
        """Number of set bits of a uint64, as int."""
        return bin(int(x)).count("1")

    def lowest_bit(x):
        """Index of the lowest set bit of a non-zero uint64."""
        x = int(x)
        return (x & -x).bit_length() - 1

else:  # the CPU's popcnt / tzcnt through LLVM intrinsics (the SWAR versions cost ~3x more per decision)

    @intrinsic
    def _ctpop64(typingctx, x):
        def codegen(context, builder, signature, args):
            fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
            return builder.call(fn, args)

        return types.uint64(types.uint64), codegen

    @intrinsic
    def _cttz64(typingctx, x):
        def codegen(context, builder, signature, args):
            fn = builder.module.declare_intrinsic("llvm.cttz", [ir.IntType(64), ir.IntType(1)])
            return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])

        return types.uint64(types.uint64), codegen

    @njit(cache=True, inline="always")
    def popcount(x):
        """Number of set bits of a uint64, as int64 (Numba's int() of a uint64 stays unsigned)."""
        return np.int64(_ctpop64(x))

    @njit(cache=True, inline="always")
    def lowest_bit(x):
        """Index of the lowest set bit of a non-zero uint64, as int64."""
        return np.int64(_cttz64(x))


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


if config.DISABLE_JIT:

    def splitmix_next(state):
        """Advance a SplitMix64 state. Returns (new_state, 64 random bits), both uint64."""
        s = (int(state) + 0x9E3779B97F4A7C15) & _MASK64
        z = ((s ^ (s >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return np.uint64(s), np.uint64(z ^ (z >> 31))

else:

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
    return np.int64(((bits64 >> _U32) * np.uint64(n)) >> _U32)


@njit(cache=True, inline="always")
def draw_bits(c0, c1, k, r):
    """Draw ``k`` of the set bits of the two-word set (c0, c1) uniformly without replacement, with the SplitMix64
    state ``r`` (k <= popcount). Returns (r, drawn0, drawn1, rest0, rest1), all uint64."""
    left = popcount(c0) + popcount(c1)
    d0 = U0
    d1 = U0
    for _ in range(k):
        r, z = splitmix_next(r)
        e = bounded(z, left)
        n0 = popcount(c0)
        if e < n0:
            mk = bit(kth_bit(c0, e))
            c0 &= ~mk
            d0 |= mk
        else:
            mk = bit(kth_bit(c1, e - n0))
            c1 &= ~mk
            d1 |= mk
        left -= 1
    return r, d0, d1, c0, c1


#: the largest seed a user may give (CLI flags, agent specs, configs, requests): numpy's SeedSequence and
#: ``torch.manual_seed`` both take it, and it fits a signed 64-bit integer
SEED_MAX = 2**63 - 1


def check_seed(what: str, value: object) -> int:
    """``value`` as a user's seed: an int in [0, SEED_MAX] (a bool is refused), else a ValueError that names
    ``what`` ("--seed", "ppo spec: seed", ...)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= SEED_MAX:
        raise ValueError(f"{what} must be an integer in [0, 2**63 - 1], got {value!r}")
    return int(value)


def parse_seed(what: str, text: str) -> int:
    """A seed written as text (a spec's ``seed=N``): :func:`check_seed` of its integer, the same ValueError."""
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError(f"{what} must be an integer in [0, 2**63 - 1], got {text.strip()!r}") from None
    return check_seed(what, value)


def seed_states(seed, n):
    """Per-game RNG states for a batch of n games derived from one integer seed, uint64[n]."""
    ss = np.random.SeedSequence(int(seed))
    return ss.generate_state(n, dtype=np.uint64)
