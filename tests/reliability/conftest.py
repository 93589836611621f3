"""The Hypothesis profiles of tests/reliability (every public boundary validates; helpers in tests/support).

Profiles (``HYPOTHESIS_PROFILE``): ``reliability`` (the default: 60 examples per test, what ``make test`` runs) and
``fuzz`` (5,000 examples per test: ``make fuzz``). The default profile keeps no example database on disk, so that
the tests write nothing outside their temporary directories. No profile has a per-example deadline: an example
that compiles kernels on a cold Numba cache took 17 s, and a loaded machine slows every one; a failure must be a
wrong answer, never a slow one (what is bounded in time is bounded by the readers' own timeouts, and tested so).
"""

import os

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

# an absolute path: the tests change the working directory (tests.support.reliability.in_empty_dir)
_DB = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), ".hypothesis",
                   "examples")
settings.register_profile("reliability", max_examples=60, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fuzz", max_examples=5000, deadline=None, database=DirectoryBasedExampleDatabase(_DB),
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "reliability"))
