"""``NO_TORCH``: a ``sitecustomize.py`` that makes ``import torch`` fail in a subprocess (the light runtime's tests)."""

NO_TORCH = """
import sys


class _NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError(f"torch is blocked in this test ({name})")
        return None


sys.meta_path.insert(0, _NoTorch())
"""
