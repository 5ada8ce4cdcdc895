"""The seeds a comparison needs, from its measured spread."""
import math

import pytest

from polyattn.claims import design


def test_tost_power_grows_with_pairs_and_shrinks_with_spread():
    assert design.tost_power(0.2, 5, 1.0) > 0.99
    assert design.tost_power(2.0, 3, 1.0) == pytest.approx(0.0, abs=0.05)
    assert design.tost_power(1.0, 10, 1.0) < design.tost_power(1.0, 20, 1.0)
    assert math.isnan(design.tost_power(1.0, 1, 1.0))


def test_pairs_needed_matches_the_power_it_promises():
    n = design.pairs_needed(1.83, 1.0, "equivalent")
    assert design.tost_power(1.83, n, 1.0) >= design.POWER > design.tost_power(1.83, n - 1, 1.0)
    # a directional comparison: the 95% interval no wider than the margin on each side
    from scipy import stats

    m = design.pairs_needed(0.5, 1.0, "worse")
    assert stats.t.ppf(0.975, m - 1) * 0.5 / math.sqrt(m) <= 1.0 < stats.t.ppf(0.975, m - 2) * 0.5 / math.sqrt(m - 1)
    assert design.pairs_needed(math.nan, 1.0, "worse") is None
    assert design.pairs_needed(100.0, 0.01, "equivalent", cap=50) == 51


def test_a_comparison_needing_more_than_ten_seeds_is_description_only():
    row = design.DesignRow("c", "x", "primary", "main", 2.4, 1.0, 51, 5, 5)
    assert row.decides is False and row.plan == "cannot decide here: description only"
    row = design.DesignRow("c", "x", "primary", "main", 0.66, 1.0, 6, 5, 5)
    assert row.decides and row.plan == "needs 1 more seeds"
    assert design.DesignRow("c", "x", "check", "main", 0.1, 1.0, 2, 3, 3).plan == "check"


def test_the_design_table_covers_every_registered_comparison_a_claim_owns():
    from polyattn.claims.register import REGISTER

    rows = design.design_table()
    owned = {(cid, c.id) for cid, claim in REGISTER.items() for c in claim.comparisons if c.cited_from is None}
    assert {(r["claim"], r["comparison"]) for r in rows} == owned
