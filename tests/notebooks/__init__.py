"""The notebook tests are a package so that their conftest (which runs them last) does not shadow
tests/conftest.py, which other test modules import as ``conftest``."""
