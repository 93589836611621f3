"""``experiments/checks/verify_rules.py`` (``make verify``): a few deals of every variant on the core and on the
oracles, through the two-process pool, summarised as JSON."""

import json

from tarocchi_rl.variants import VARIANTS

from .scripts import ok, run_script


def test_every_variant_agrees_with_its_oracle_on_a_few_deals(tmp_path):
    out = tmp_path / "verify.json"
    done = ok(run_script("verify_rules", "--deals", "2", "--workers", "2", "--out", str(out)))
    r = json.loads(out.read_text())
    assert list(r["variants"]) == list(VARIANTS) and r["workers"] == 2
    for v, s in r["variants"].items():
        assert s["deals"] == 2 and s["failures"] == 0 and s["failed"] == [], (v, s)
        # every decision of two whole deals was checked (random tarok deals are short: the high contracts end early)
        assert s["decisions"] > 2 * (4 if v.startswith("tarok") else 20), (v, s)
    assert r["total_deals"] == 2 * len(VARIANTS) and r["total_failures"] == 0
    assert r["total_decisions"] == sum(s["decisions"] for s in r["variants"].values())
    assert "0 failures" in done.stdout.splitlines()[-1]
