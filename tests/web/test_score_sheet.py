"""The end of a deal in words (tarocchi_rl.web.score_sheet), over deals of every variant with a person making random
choices against heuristic bots: every sheet's numbers are the outcome's (the payoffs it derives are the deal's, the
French score's terms add up to T, the tarok base is (points - 35) +- value), its tally reconciles the table's running
count of the tricks with the final card points exactly, and no row reads like a Python dump; over and /v1/replay give
the same sheet for the same deal."""

import random
import re
from fractions import Fraction

import pytest

from tarocchi_rl.play import make_bot
from tarocchi_rl.variants import VARIANTS, get_variant
from tarocchi_rl.web.score_sheet import points_text, score_sheet
from tarocchi_rl.web.table import SeatBot, Table, variants_info

DUMP = re.compile(r"\[|\]|\{|\}|\bTrue\b|\bFalse\b|\bNone\b|details:")  # what a repr of the outcome would show
NUMBER = r"[+−]?\d+"


def family(variant: str) -> str:
    """The rule family of a variant: its module's name (french, mineo, piedmont, tarok)."""
    return get_variant(variant).rules.__name__.rsplit(".", 1)[-1]


def deals(variant: str, count: int):
    """Finished tables: seat 0 a person choosing at random (a bid over a pass half the time), heuristic bots."""
    n = get_variant(variant).n_players
    for seed in range(count):
        rng = random.Random(seed)
        t = Table.deal(variant, {}, [None] + [SeatBot("heuristic", make_bot("heuristic", 10 * seed + k, "b"))
                                             for k in range(1, n)], seed)
        t.advance()
        while not t.is_over():
            legal = t.snapshot(0)["legal"]
            bids = [m for m in legal if "pass" not in m["action"]]
            pick = rng.choice(bids) if bids and rng.random() < 0.5 else rng.choice(legal)
            t.act(pick["id"])
            t.advance()
        yield t


def minus(text: str) -> int:
    return int(text.replace("−", "-").replace("+", ""))


def check_payoffs(variant: str, out: dict, rows: dict[str, str]) -> None:
    """The payoffs row states the deal's payoffs."""
    text = rows["Payoffs"]
    fam = family(variant)
    pay = out["payoffs"]
    if not out["sides"] or fam in ("piedmont", "tarok"):  # seat by seat
        found = re.findall(rf"seats? (\d)[^,:]*? ({NUMBER})(?:,|$)", text)
        assert len(found) >= min(2, len(pay)), text
        for seat, value in found:
            assert minus(value) == pay[int(seat)], (text, pay)
    elif fam == "french":
        taker = out["declarer"]
        got = [minus(x) for x in re.findall(rf"= ({NUMBER})", text)]
        assert got == [pay[taker], pay[next(s for s in out["sides"][1])]], (text, pay)
    elif fam == "mineo":
        got = [minus(x) for x in re.findall(rf"= ({NUMBER})", text)]
        assert got[0] == pay[out["declarer"]] and got[-1] == pay[out["sides"][1][0]], (text, pay)


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_sheet_says_the_outcome_in_words(variant):
    per = get_variant(variant).rules.CARD_POINT_UNITS
    for t in deals(variant, 25):
        state = t.views.state
        out = state.outcome()
        sheet = score_sheet(state)
        assert sheet == t.result()["sheet"]
        rows = {r["term"]: r["text"] for r in sheet["rows"]}
        assert sheet["headline"] and list(rows)[-1] == "Payoffs"
        for text in [sheet["headline"], *rows.values()]:
            assert not DUMP.search(text), text
        check_payoffs(variant, out, rows)
        if not out["sides"]:
            assert sheet["tally"] is None and "annulled" in sheet["headline"]
            continue
        check_family(variant, out, rows)
        tally = sheet["tally"]
        snap = t.snapshot(0)
        for k, side in enumerate(tally["sides"]):
            assert side["seats"] == out["sides"][k]
            running = sum(Fraction(snap["card_point_units"][q], per) for q in side["seats"])  # the table's count
            assert Fraction(side["tricks"]).limit_denominator(per) == running
            assert Fraction(side["final"]).limit_denominator(per) == Fraction(out["card_point_units"][k], per)
            final = Fraction(side["final"]).limit_denominator(per)
            assert Fraction(side["end"]).limit_denominator(per) == final - running
            assert points_text(out["card_point_units"][k], per) in side["text"]
        if any(side["end"] for side in tally["sides"]):
            assert get_variant(variant).rules.END_COUNT_TEXT in tally["text"]


def check_family(variant: str, out: dict, rows: dict[str, str]) -> None:
    """The family's own steps agree with its details."""
    d = out["details"]
    fam = family(variant)
    if fam == "french":
        terms = re.search(r"T = (.*) = (" + NUMBER + ")$", rows["Score"])
        assert terms and minus(terms.group(2)) == d["score"]
        assert f"{d['base']} × {d['multiplier']}" in rows["Score"] and f"needed {d['target']:g}" in rows["Oudlers"]
        bonuses = sum(b["points"] if b["side"] == 0 else -b["points"] for b in out["bonuses"])
        assert (d["base"] if d["made"] else -d["base"]) * d["multiplier"] + bonuses == d["score"]
    elif fam == "mineo":
        jochi = [sum(b["points"] for b in out["bonuses"] if b["side"] == k) for k in range(2)]
        diff = minus(rows["Difference"].rsplit("= ", 1)[1])
        assert diff == (jochi[0] - jochi[1]) * (2 if d["doubled"] else 1)
    elif fam == "tarok" and "Base" in rows:
        base = minus(rows["Base"].rsplit("= ", 1)[1])
        assert base == d["base"] and f"{d['points']} of 70" in rows["Card points"]


def test_the_variants_say_what_is_counted_at_the_end():
    for v in variants_info():
        assert v["end_count"] == get_variant(v["name"]).rules.END_COUNT_TEXT and v["end_count"]


def test_points_are_written_as_a_person_writes_them():
    assert [points_text(u, 3) for u in (164, 165, 1, 2, 0, -4)] == ["54⅔", "55", "⅓", "⅔", "0", "−1⅓"]
    assert [points_text(u, 2) for u in (101, 72, 1)] == ["50.5", "36", "0.5"]
