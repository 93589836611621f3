"""``experiments/studies/calibrate_tarok_bids.py``: the forced declarer's mean return by hand strength, per contract, on
a few deals of each tarok variant."""

import pytest

from .scripts import ok, run_script


@pytest.mark.parametrize("variant,contracts", [("tarok3", 3), ("tarok4", 6)])
def test_each_contract_gets_a_row_of_strength_buckets(variant, contracts):
    out = ok(run_script("calibrate_tarok_bids", "--variant", variant, "--deals", "300", "--seed", "1")).stdout
    lines = out.splitlines()
    assert lines[0].startswith(f"{variant}: the forced declarer's mean return")
    rows = [line for line in lines[1:] if not line.strip().startswith("strength")]
    assert len(rows) == contracts
    assert rows[0].split()[0] == "three" and all("(" in r and ":" in r for r in rows)  # buckets of 30+ deals
    assert "strength quantiles" in lines[-1]
