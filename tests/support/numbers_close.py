"""Comparing computed numbers with committed ones: exact where the value is exact, within a stated tolerance
where it is a float.

A float computed here (a Bradley-Terry rating, a bootstrap quantile) can differ in its last bits from the same
float computed on another machine: NumPy's ``log`` / ``exp`` and its sums take SIMD paths chosen by the CPU
(AVX2, AVX-512), and BLAS splits work by thread count. So committed floats are compared with
:data:`REL_TOLERANCE`, far above those last-bit differences (1e-9 relative is ~10^7 units in the last place)
and far below anything the committed results show (3 decimals, Elo to the unit). Integers, strings, booleans
and the structure (keys, lengths) are compared exactly.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

REL_TOLERANCE = 1e-9
ABS_TOLERANCE = 1e-9  # for values at or near 0, where a relative bound says nothing


def differences(got: Any, want: Any, where: str = "") -> list[str]:
    """Every place where ``got`` and ``want`` differ beyond the tolerance: ``["path: got X, want Y", ...]``."""
    if isinstance(want, bool) or isinstance(got, bool) or isinstance(want, str) or want is None:
        return [] if got == want and type(got) is type(want) else [f"{where or '.'}: got {got!r}, want {want!r}"]
    if isinstance(want, float) or isinstance(got, float):
        if not isinstance(got, (int, float)) or not isinstance(want, (int, float)):
            return [f"{where or '.'}: got {got!r}, want {want!r}"]
        if math.isnan(want) and math.isnan(got):
            return []
        ok = math.isclose(got, want, rel_tol=REL_TOLERANCE, abs_tol=ABS_TOLERANCE)
        return [] if ok else [f"{where or '.'}: got {got!r}, want {want!r} (beyond rel {REL_TOLERANCE:g})"]
    if isinstance(want, int):
        return [] if isinstance(got, int) and got == want else [f"{where or '.'}: got {got!r}, want {want!r}"]
    if isinstance(want, dict):
        if not isinstance(got, dict) or sorted(got) != sorted(want):
            return [f"{where or '.'}: keys {sorted(got) if isinstance(got, dict) else got!r}, want {sorted(want)}"]
        return [d for k in want for d in differences(got[k], want[k], f"{where}.{k}")]
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return [f"{where or '.'}: length {len(got) if isinstance(got, (list, tuple)) else got!r}, "
                    f"want {len(want)}"]
        return [d for k, (g, w) in enumerate(zip(got, want, strict=True)) for d in differences(g, w, f"{where}[{k}]")]
    return [] if got == want else [f"{where or '.'}: got {got!r}, want {want!r}"]


def assert_numbers_close(got: Any, want: Any, where: str = "") -> None:
    """Fail with the first few :func:`differences`."""
    diff = differences(got, want, where)
    assert not diff, "\n".join(diff[:10]) + (f"\n... {len(diff) - 10} more" if len(diff) > 10 else "")


def nudged(x: Any, ulps: int = 4) -> Any:
    """``x`` with every float moved ``ulps`` units in the last place away from zero: what another CPU's
    last-bit differences look like (the guard that a comparison is not exact)."""
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        for _ in range(ulps):
            x = np.nextafter(x, np.copysign(np.inf, x))
        return x
    if isinstance(x, (float, np.floating)):
        y = np.float64(x)
        for _ in range(ulps):
            y = np.nextafter(y, np.copysign(np.inf, y))
        return type(x)(y)
    if isinstance(x, tuple):
        return tuple(nudged(v, ulps) for v in x)
    if isinstance(x, list):
        return [nudged(v, ulps) for v in x]
    return x
