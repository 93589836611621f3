"""The export tests are a package so that their conftest (the checkpoint and bot fixtures) does not shadow
tests/conftest.py, which other test modules import as ``conftest``."""
