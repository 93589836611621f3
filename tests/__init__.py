"""The test suite, a package: ``from tests.support.X import ...`` works from the repository root (pytest's
``pythonpath``), and test modules of the same name in different folders do not clash."""
