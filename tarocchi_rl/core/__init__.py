"""The batched game core: rule tables, batch state, and the kernels shared by every variant."""
