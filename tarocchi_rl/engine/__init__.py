"""The engine: the family dispatch over the core, one set of row kernels and batch drivers for every variant.

Layer above :mod:`tarocchi_rl.variants` (it calls each family's kernels of the family contract) and below the
game API (:mod:`tarocchi_rl.batch`, :mod:`tarocchi_rl.game`). ``drivers`` deals, lists legal actions, applies
them, resolves tricks and settles; ``observation`` writes the flat observations; ``loops`` picks the parallel
or the serial batch loops.
"""

from .drivers import (
    discardable,
    first_illegal,
    is_legal,
    legal_mask_batch,
    legal_mask_row,
    legal_mask_serial,
    legal_sets,
    new_deal_row,
    random_action,
    random_action_row,
    random_actions_batch,
    random_actions_serial,
    random_playout_row,
    reset_batch,
    reset_row,
    reset_serial,
    resolve_trick,
    rollout_random_batch,
    rollout_row,
    settle_row,
    shuffle_row,
    step_batch,
    step_one,
    step_row,
    step_serial,
)
from .loops import PARALLEL, SERIAL, Loops, loops_for
from .observation import observe_batch, observe_privileged, observe_row, observe_serial, privileged_layout

__all__ = [
    "PARALLEL", "SERIAL", "Loops", "discardable", "first_illegal", "is_legal", "legal_mask_batch", "legal_mask_row",
    "legal_mask_serial", "legal_sets", "loops_for", "new_deal_row", "observe_batch", "observe_privileged",
    "observe_row", "observe_serial", "privileged_layout", "random_action", "random_action_row",
    "random_actions_batch", "random_actions_serial", "random_playout_row", "reset_batch", "reset_row",
    "reset_serial", "resolve_trick", "rollout_random_batch", "rollout_row", "settle_row", "shuffle_row",
    "step_batch", "step_one", "step_row", "step_serial",
]
