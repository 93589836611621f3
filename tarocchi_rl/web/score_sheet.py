"""The end of a deal in words: the score sheet the page shows (``over``'s and ``/v1/replay``'s ``sheet``).

Read from the finished deal's structured outcome (:data:`tarocchi_rl.variants.OUTCOME_FIELDS`: contract,
declarer, sides, card points, itemised bonuses, the family's ``details``) and from the cards each seat won in
tricks, per rule family: the contract, the points needed and made, the oudlers (French), the jochi (Mineo), the
Matto and the accuso (Piedmontese), the contract's value, the ultimo and the Mond (tarok), the multiplier, and
so the payoffs, each step with its numbers (``docs/rules.md`` has the rules these sentences follow). The page
draws the rows as they come: it knows no family.

``tally`` reconciles the table's running count (the card points of the tricks each side won, shown during the
play) with the final card points: what is counted only at the end (the discard, the chien, the Excuse kept by its
side and the point given for it, Mineo's last trick) is the difference, said in the family's words.
"""

from collections.abc import Callable
from typing import Any

from ..core.points import card_points
from ..core.state import WON
from ..variants import french, get_variant, mineo, piedmont, tarok

__all__ = ["END_COUNT", "score_sheet", "points_text"]

Row = dict[str, str]

# what each family counts only at the end of the deal, not in the tricks (the table's running tally)
END_COUNT: dict[str, str] = {
    "french": "the taker's discard (the chien in a garde sans, the defence's in a garde contre), the Excuse, kept by "
              "its owner's side, and the half point given for it to the side that won its trick",
    "mineo": "the declarer's discard (his side's first trick), the 5 points of the last trick and the Fuggitivo, "
             "kept by its owner's side",
    "piedmont": "the dealer's discard and the Matto, kept by its owner (a third of a point given for it to the "
                "trick's winner)",
    "tarok": "the declarer's discard; the talon's rest counts for nobody and is listed with the opponents",
}
JOCHI_WORDS = {  # Mineo's jochi (docs/rules.md, section 2)
    "rimatura": "Rimatura (54⅔ card points or more)", "vanto": "Vanto (the last trick)",
    "rivanto": "Rivanto (the last trick, said by an opponent)", "arie": "Tutte le Arie (T16-T19, or with T20)",
    "pigliata": "Pigliata (an honour of the other side captured)", "re": "Tutti i Re (the four Kings)",
    "scommessa": "Scommessa (T20, T1 and the Fuggitivo)",
}
FRENCH_BONUS_WORDS = {"petit au bout": "petit au bout", "poignee": "poignée", "chelem": "chelem"}
FRENCH_TOTAL, MINEO_RIMATURA, TAROK_HALF = 91, 164, 35  # French card points; Mineo thirds; tarok's 35 of 70


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
    return "seat " + str(seats[0]) if len(seats) == 1 else "seats " + " + ".join(str(s) for s in seats)


def _payoffs_row(out: dict[str, Any]) -> Row:
    return {"term": "Payoffs", "text": ", ".join(f"seat {k} {signed(p)}" for k, p in enumerate(out["payoffs"]))}


# -- French tarot -----------------------------------------------------------------------------------------------
def _french(out: dict[str, Any], options: dict[str, Any]) -> tuple[str, list[Row]]:
    d, n, taker = out["details"], len(out["payoffs"]), out["declarer"]
    mult, made, base, score = d["multiplier"], d["made"], d["base"], d["score"]
    units = out["card_point_units"]
    got, need = points_text(units[0], 2), f"{d['target']:g}"
    diff = base - 25
    rows = [
        {"term": "Contract", "text": f"{out['contract']} by seat {taker}, the taker, against "
                                     f"{seats_text(out['sides'][1])} (multiplier {mult}: prise 1, garde 2, "
                                     "garde sans 4, garde contre 6)"},
        {"term": "Oudlers", "text": f"the taker ended with {d['oudlers']} oudler{'s' if d['oudlers'] != 1 else ''} "
                                    f"(T1, T21, the Excuse), so needed {need} of the {FRENCH_TOTAL} card points"},
        {"term": "Card points", "text": f"the taker made {got}, the defence {points_text(units[1], 2)}: the "
                                        f"contract is {'made' if made else 'failed'} by {diff} (a half point counts "
                                        "for the side that scores)"},
        {"term": "Base", "text": f"25 + {diff} = {base}, × {mult} = {base * mult}, "
                                 f"{'for' if made else 'against'} the taker"},
    ]
    terms = [f"{'+' if made else '−'}{base} × {mult}"]
    for b in out["bonuses"]:
        pts = b["points"] if b["side"] == 0 else -b["points"]
        word = FRENCH_BONUS_WORDS.get(b["name"], b["name"])
        terms.append(f"{'+' if pts >= 0 else '−'} {abs(pts)} {word}")
        rows.append({"term": word.capitalize(), "text": _french_bonus(b, d, mult)})
    rows.append({"term": "Score", "text": f"T = {' '.join(terms)} = {num(score)}"})
    rows.append({"term": "Payoffs", "text": f"the taker {n - 1} × T = {signed((n - 1) * score)}, each defender −T = "
                                            f"{signed(-score)}"})
    head = (f"{out['contract'].capitalize()} {'made' if made else 'failed'} by {diff}: the taker "
            f"{signed(out['payoffs'][taker])}, each defender {signed(-score)}")
    return head, rows


def _french_bonus(b: dict[str, Any], d: dict[str, Any], mult: int) -> str:
    side = "the taker" if b["side"] == 0 else "the defence"
    if b["name"] == "petit au bout":
        return f"the Petit (T1) in the last trick: 10 × {mult} = {b['points']} to {side}, who won that trick"
    if b["name"] == "poignee":
        shown = ", ".join(f"seat {k} a {p} poignée" for k, p in enumerate(d["poignees"]) if p != "none")
        return f"{shown} (simple 20, double 30, triple 40): {b['points']} to {side}, the side that won the deal"
    announced = "announced" if d["chelem_announced"] else "not announced"
    return f"chelem ({announced}): {b['points']} to {side}"


# -- Mineo ------------------------------------------------------------------------------------------------------
def _mineo(out: dict[str, Any], options: dict[str, Any]) -> tuple[str, list[Row]]:
    d, dec = out["details"], out["declarer"]
    sides, units = out["sides"], out["card_point_units"]
    solo = out["contract"] != "call"
    who = f"{out['contract']} by seat {dec}, the declarer"
    if not solo:
        who += f", who called {d['called']}: partner seat {d['partner']}"
    names = ("the declarer's side", "the opponents") if not solo else ("the soloist", "the opponents")
    got = [[b for b in out["bonuses"] if b["side"] == k] for k in range(2)]
    jochi = [sum(b["points"] for b in g) for g in got]
    rows = [{"term": "Contract", "text": who},
            {"term": "Card points", "text": f"{names[0]} ({seats_text(sides[0])}) {points_text(units[0], 3)}, "
                                            f"{names[1]} {points_text(units[1], 3)} of 109 (the Rimatura needs "
                                            f"{points_text(MINEO_RIMATURA, 3)})"}]
    for k in range(2):
        listed = ", ".join(f"{JOCHI_WORDS.get(b['name'], b['name'])} {b['points']}" for b in got[k]) or "none"
        rows.append({"term": f"Jochi of {names[k]}", "text": f"{listed}: {jochi[k]}"})
    mult = 2 if d["doubled"] else 1
    diff = (jochi[0] - jochi[1]) * mult
    rows.append({"term": "Difference", "text": f"D = {jochi[0]} − {jochi[1]}"
                                               + (" × 2 (an early solo doubles the stakes)" if mult == 2 else "")
                                               + f" = {signed(diff)}"})
    if solo:
        pay = f"the soloist 3 × D = {signed(3 * diff)}, each opponent −D = {signed(-diff)}"
    else:
        pay = f"the declarer and the partner +D = {signed(diff)} each, each opponent −D = {signed(-diff)}"
    rows.append({"term": "Payoffs", "text": pay})
    return f"{out['contract'].capitalize()}: D = {diff}, {pay}", rows


# -- Piedmontese tarocchi ---------------------------------------------------------------------------------------
def _piedmont(out: dict[str, Any], options: dict[str, Any]) -> tuple[str, list[Row]]:
    d, sides = out["details"], out["sides"]
    cards = out["card_point_units"]
    accuso = [sum(b["points"] for b in out["bonuses"] if b["side"] == k) for k in range(len(sides))]
    total = sum(cards)
    rows = [{"term": "Dealer", "text": f"seat {out['declarer']} dealt and discarded"},
            {"term": "Card points", "text": ", ".join(f"{seats_text(s)} {points_text(cards[k], 3)}"
                                                      for k, s in enumerate(sides))
             + f" (of {points_text(total, 3)})"}]
    rows.append({"term": "Matto", "text": _matto(d["excuse"], bool(options.get("excuse_exchange", True)), sides)})
    if len(sides) == 2:
        for k, s in enumerate(sides):
            if accuso[k]:
                rows.append({"term": "Accuso", "text": f"{seats_text(s)}: {accuso[k]} thirds for the conditions "
                                                       "declared"})
        mine = [cards[k] + accuso[k] for k in range(2)]
        pay = (f"each side its thirds minus the other's: {seats_text(sides[0])} {mine[0]} − {mine[1]} = "
               f"{signed(mine[0] - mine[1])}, {seats_text(sides[1])} {signed(mine[1] - mine[0])}")
    else:
        third = total // 3
        pay = "each seat its thirds minus a third of the deck (" + str(third) + "): " + ", ".join(
            f"seat {s[0]} {cards[k]} − {third} = {signed(cards[k] - third)}" for k, s in enumerate(sides))
    rows.append({"term": "Payoffs", "text": pay})
    best = max(range(len(out["payoffs"])), key=lambda k: out["payoffs"][k])
    return f"Seat {best} scores most: {signed(out['payoffs'][best])}", rows


def _matto(ex: dict[str, Any], exchange: bool, sides: list[list[int]]) -> str:
    by, won = ex["played_by"], ex["trick_won_by"]
    if by < 0:
        return "not played"
    if ex["to_last_trick_winner"]:
        return f"played by seat {by} to the last trick: it went to the trick's winner, seat {won}"
    same = any(by in s and won in s for s in sides)
    if same or not exchange:
        return f"played by seat {by} to a trick won by seat {won}: kept by seat {by}'s side"
    return f"played by seat {by} to a trick won by seat {won}: kept by seat {by}, who gave a third of a point for it"


# -- Slovenian tarok --------------------------------------------------------------------------------------------
def _tarok(out: dict[str, Any], options: dict[str, Any]) -> tuple[str, list[Row]]:
    d, dec, contract = out["details"], out["declarer"], out["contract"]
    if contract == "klop":
        points = d["points"]
        rows = [{"term": "Contract", "text": "klop (every seat passed): each seat for itself"},
                {"term": "Card points", "text": ", ".join(f"seat {k} {p}" for k, p in enumerate(points))},
                {"term": "Rule", "text": f"when a seat has more than {TAROK_HALF} points or none, each seat above "
                                         f"{TAROK_HALF} gets −70 and each seat without a trick +70; otherwise each "
                                         "seat loses its points"}]
        rows.append(_payoffs_row(out))
        return "Klop: " + ", ".join(f"seat {k} {signed(p)}" for k, p in enumerate(out["payoffs"])), rows
    call = ""
    if d["called"] is not None:
        call = (f", called {d['called']}: " + ("it lay in the talon" if d["king_in_talon"] else
                                               f"partner seat {d['partner']}" if d["partner"] is not None else
                                               "held by the declarer"))
    rows = [{"term": "Contract", "text": f"{contract} by seat {dec}, the declarer, value {d['value']}{call}"}]
    if tarok.TAKEN[tarok.CONTRACT_NAMES.index(contract)] > 0:  # the normal contracts: points, base, bonuses
        rows += _tarok_points(out, d)
    else:
        rows.append({"term": "Result", "text": f"{'made' if d.get('won') else 'failed'}: the declarer alone scores "
                                               f"{'+' if d.get('won') else '−'}{d['value']}"})
    if d["mond_penalty"] is not None:
        rows.append({"term": "Mond", "text": f"seat {d['mond_penalty']} lost the Mond (T21) to the other side: "
                                             f"{num(tarok.MOND_PENALTY)} to that seat"})
    rows.append({"term": "Score", "text": f"each seat of the declarer's side ({seats_text(out['sides'][0])}) "
                                          f"scores {signed(d['score'])}; the opponents 0"})
    rows.append(_payoffs_row(out))
    result = "won" if d.get("won") else "lost"
    return f"{contract.capitalize()} {result}: {signed(d['score'])} to the declarer's side", rows


def _tarok_points(out: dict[str, Any], d: dict[str, Any]) -> list[Row]:
    points, value = d["points"], d["value"]
    rows = [{"term": "Card points", "text": f"the declarer's side {points} of 70 (more than {TAROK_HALF} wins)"}]
    extra = [b for b in out["bonuses"] if b["name"] != "mond penalty"]
    if any(b["name"] == "valat" for b in extra):
        (v,) = [b for b in extra if b["name"] == "valat"]
        rows.append({"term": "Valat", "text": "one side's piles hold all 48 cards (OpenSpiel's valat): "
                                              f"{signed(v['points'])}, nothing else counts"})
        return rows
    won = points > TAROK_HALF
    rows.append({"term": "Base", "text": f"({points} − {TAROK_HALF}) {'+' if won else '−'} {value} = {num(d['base'])}"})
    for b in extra:
        what = ("the called King or the Pagat in the last trick" if b["name"] == "ultimo" else
                "exactly four cards in one side's piles (OpenSpiel's test of the four Kings)")
        rows.append({"term": b["name"].capitalize(), "text": f"{what}: {signed(b['points'])}"})
    return rows


FAMILY_SHEETS: dict[str, Callable[[dict[str, Any], dict[str, Any]], tuple[str, list[Row]]]] = {
    "french": _french, "mineo": _mineo, "piedmont": _piedmont, "tarok": _tarok}
FAMILY_OF: dict[Any, str] = {french: "french", mineo: "mineo", piedmont: "piedmont", tarok: "tarok"}


def family(variant: str) -> str:
    """The rule family of a variant (``french``, ``mineo``, ``piedmont``, ``tarok``)."""
    return FAMILY_OF[get_variant(variant).rules]


def _tally(state: Any, out: dict[str, Any], fam: str) -> dict[str, Any] | None:
    """The card points of each side's tricks (the table's running count) beside its final count."""
    if not out["sides"]:
        return None
    env = state._env
    st, tb = env.state, env.tables
    per = int(get_variant(state.game.variant).rules.CARD_POINT_UNITS)
    won = [int(card_points(st.cards[0, WON + q, 0], st.cards[0, WON + q, 1], tb))
           for q in range(state.game.num_players)]
    sides = []
    for k, seats in enumerate(out["sides"]):
        tricks, final = sum(won[q] for q in seats), int(out["card_point_units"][k])
        text = (f"{seats_text(seats)}: {points_text(tricks, per)} in the tricks {'+' if final >= tricks else '−'} "
                f"{points_text(abs(final - tricks), per)} at the end = {points_text(final, per)}")
        if fam == "tarok" and final % per:  # a pile counts in groups of three cards: whole points
            text += f", {(final + 1) // per} counted in threes"
        sides.append({"seats": seats, "tricks": round(tricks / per, 4), "final": round(final / per, 4),
                      "end": round((final - tricks) / per, 4), "text": text})
    same = all(s["end"] == 0 for s in sides)
    text = ("The card points of the tricks are the final ones." if same else
            "The table counted the tricks as they were won; counted only at the end: " + END_COUNT[fam] + ".")
    return {"text": text, "sides": sides}


def score_sheet(state: Any) -> dict[str, Any]:
    """The score sheet of a finished deal (a :class:`tarocchi_rl.game.GameState`): ``headline`` (one sentence),
    ``rows`` (``{term, text}`` in order, the payoffs last) and ``tally`` (each side's tricks and final card points,
    and why they differ; None without a contract)."""
    out = state.outcome()
    variant = state.game.variant
    fam = family(variant)
    if not out["sides"]:
        return {"headline": "Every seat passed: the deal is annulled, nobody scores", "rows": [_payoffs_row(out)],
                "tally": None}
    head, rows = FAMILY_SHEETS[fam](out, dict(state.game.options))
    return {"headline": head, "rows": rows, "tally": _tally(state, out, fam)}
