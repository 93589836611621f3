"""tarocchi-rl: a self-play research toolkit for tarot card games on a batched Numba core.

``tarocchi_rl.make(variant, **options)`` gives a single-game API; ``tarocchi_rl.BatchEnv(variant, B, seed)``
steps B games at once. Importing the package compiles nothing: kernels are compiled (or loaded from Numba's
on-disk cache) the first time they run.
"""

from .batch import BatchEnv
from .game import Game, State, make
from .variants import VARIANTS

__all__ = ["BatchEnv", "Game", "State", "VARIANTS", "make"]
__version__ = "0.1.0"
