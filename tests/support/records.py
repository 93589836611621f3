"""Records of whole deals for the tests that need stored games."""

import numpy as np

from tarocchi_rl.game import make


def random_record(variant: str, seed: int) -> dict:
    """The record of a deal played to its end by random legal moves."""
    state = make(variant).new_state(seed)
    rng = np.random.default_rng(seed)
    while not state.is_terminal():
        state.apply(int(rng.choice(state.legal_actions())))
    return state.to_record()
