"""The end of a deal in words: the score sheet the page shows (``over``'s and ``/v1/replay``'s ``sheet``).

Read from the finished deal's structured outcome (:data:`tarocchi_rl.variants.OUTCOME_FIELDS`: contract,
declarer, sides, card points, itemised bonuses, the family's ``details``) and from the cards each seat won in
tricks. The rows are the variant's rule family's (its ``score_sheet_rows``, in the family contract
:class:`tarocchi_rl.variants.contract.FamilyRules`): the contract, the points needed and made, the family's
bonuses and the payoffs, each step with its numbers (``docs/rules.md`` has the rules these sentences follow).
This module and the page draw the rows as they come: they know no family.

``tally`` reconciles the table's running count (the card points of the tricks each side won, shown during the
play) with the final card points: what is counted only at the end (the family's ``END_COUNT_TEXT``: a discard,
a card kept by its owner's side, a last trick's points) is the difference, said in the family's words.
"""

from typing import Any

from ..core.points import card_points
from ..core.state import WON
from ..variants import get_variant
from ..variants.contract import FamilyRules
from ..variants.words import payoffs_row, points_text, seats_text

__all__ = ["score_sheet", "points_text"]


def _tally(state: Any, out: dict[str, Any], rules: FamilyRules) -> dict[str, Any] | None:
    """The card points of each side's tricks (the table's running count) beside its final count."""
    if not out["sides"]:
        return None
    env = state._env
    st, tb = env.state, env.tables
    per = int(rules.CARD_POINT_UNITS)
    won = [int(card_points(st.cards[0, WON + q, 0], st.cards[0, WON + q, 1], tb))
           for q in range(state.game.num_players)]
    sides = []
    for k, seats in enumerate(out["sides"]):
        tricks, final = sum(won[q] for q in seats), int(out["card_point_units"][k])
        text = (f"{seats_text(seats)}: {points_text(tricks, per)} in the tricks {'+' if final >= tricks else '−'} "
                f"{points_text(abs(final - tricks), per)} at the end = {points_text(final, per)}")
        text += rules.tally_note(final)
        sides.append({"seats": seats, "tricks": round(tricks / per, 4), "final": round(final / per, 4),
                      "end": round((final - tricks) / per, 4), "text": text})
    same = all(s["end"] == 0 for s in sides)
    text = ("The card points of the tricks are the final ones." if same else
            "The table counted the tricks as they were won; counted only at the end: " + rules.END_COUNT_TEXT + ".")
    return {"text": text, "sides": sides}


def score_sheet(state: Any) -> dict[str, Any]:
    """The score sheet of a finished deal (a :class:`tarocchi_rl.game.GameState`): ``headline`` (one sentence),
    ``rows`` (``{term, text}`` in order, the payoffs last) and ``tally`` (each side's tricks and final card points,
    and why they differ; None without a contract)."""
    out = state.outcome()
    rules = get_variant(state.game.variant).rules
    if not out["sides"]:
        return {"headline": "Every seat passed: the deal is annulled, nobody scores", "rows": [payoffs_row(out)],
                "tally": None}
    head, rows = rules.score_sheet_rows(out, dict(state.game.options))
    return {"headline": head, "rows": rows, "tally": _tally(state, out, rules)}
