"""Smoke tests of the scripts of experiments/: each run as a subprocess with its smallest settings (issue 32,
item 7)."""
