"""The wording the families' score sheets share (``score_sheet_rows`` of each family, read by
:mod:`tarocchi_rl.web.score_sheet`): card points as a person writes them, signed numbers with a typographic minus,
lists of seats, and the row of the payoffs. Pure Python (no Numba)."""

from typing import Any

__all__ = ["Row", "num", "payoffs_row", "points_text", "seats_text", "signed"]

Row = dict[str, str]  # one line of the score sheet: {"term": ..., "text": ...}


def points_text(units: int, per_point: int) -> str:
    """Card points counted in ``units`` of 1 / ``per_point`` as a person writes them: 54⅔, 50.5, 36."""
    whole, rest = divmod(abs(units), per_point)
    sign = "−" if units < 0 else ""
    if rest == 0:
        return f"{sign}{whole}"
    if per_point == 2:
        return f"{sign}{whole}.5"
    frac = {(1, 3): "⅓", (2, 3): "⅔"}.get((rest, per_point), f" {rest}/{per_point}")
    return f"{sign}{whole}{frac}" if whole else f"{sign}{frac.strip()}"


def signed(x: float) -> str:
    """+3, −2, 0 (a typographic minus)."""
    return f"+{x:g}" if x > 0 else f"−{-x:g}" if x < 0 else "0"


def num(x: float) -> str:
    """3, −2 (a typographic minus)."""
    return f"−{-x:g}" if x < 0 else f"{x:g}"


def seats_text(seats: list[int]) -> str:
    """seat 2, seats 0 + 2."""
    return "seat " + str(seats[0]) if len(seats) == 1 else "seats " + " + ".join(str(s) for s in seats)


def payoffs_row(out: dict[str, Any]) -> Row:
    """The row of the deal's payoffs, seat by seat (from a finished deal's outcome)."""
    return {"term": "Payoffs", "text": ", ".join(f"seat {k} {signed(p)}" for k, p in enumerate(out["payoffs"]))}
