"""tarocchi-rl: a self-play research toolkit for tarot card games on a batched Numba core.

``tarocchi_rl.make(variant, **options)`` gives a single-game API; ``tarocchi_rl.BatchEnv(variant, B, seed)``
steps B games at once. Importing the package compiles nothing: kernels are compiled (or loaded from Numba's
on-disk cache) the first time they run.
"""

import os

import numba

# Numba's default OpenMP layer aborts a process that forks after a parallel kernel ran (multiprocessing,
# gymnasium's AsyncVectorEnv, data loaders). The workqueue layer is fork-safe; NUMBA_THREADING_LAYER wins.
if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"

# A cached kernel is stale when a package module it imports changed, not only its own file (kernel_cache.py)
from . import kernel_cache  # noqa: E402

kernel_cache.install()

from .batch import BatchEnv  # noqa: E402
from .game import Game, State, make  # noqa: E402
from .variants import VARIANTS  # noqa: E402

__all__ = ["BatchEnv", "Game", "State", "VARIANTS", "make"]
__version__ = "0.1.0"
