"""The reliability tests are a package so that their conftest (the Hypothesis profiles) does not shadow
tests/conftest.py, which other test modules import as ``conftest``."""
