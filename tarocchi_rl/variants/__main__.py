"""``python -m tarocchi_rl.variants`` prints every variant's observation layout (docs/observations.md)."""

from . import observation_layouts_markdown

print(observation_layouts_markdown(), end="")
