"""Shared test helpers: run the core and the oracle side by side."""

import os

import numpy as np
import pytest

JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT", "0") == "1"


def oracle_name(action_string: str) -> str:
    """The oracle's spelling of an engine action string (``bid:pass`` -> ``pass``)."""
    return action_string[4:] if action_string.startswith("bid:") else action_string


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
