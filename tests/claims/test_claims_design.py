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
    assert design.pairs_needed(math.nan, 1.0, "worse") is None
    assert design.pairs_needed(100.0, 0.01, "equivalent", cap=50) == 51


def test_the_plan_assumes_the_observed_difference_not_zero():
    # inside the margin: TOST at the observed difference needs more pairs than at zero
    at_zero, at_d = design.pairs_needed(0.5, 1.0, "equivalent"), design.pairs_needed(0.5, 1.0, "equivalent", 0.7)
    assert at_d > at_zero
    assert design.tost_power(0.5, at_d, 1.0, true_diff=0.7) >= design.POWER > \
        design.tost_power(0.5, at_d - 1, 1.0, true_diff=0.7)
    # beyond the margin: 80% power that the adjusted interval lies beyond it, at the observed difference
    n = design.pairs_needed(0.5, 1.0, "worse", -2.0)
    assert design.beyond_power(0.5, n, 1.0, -2.0) >= design.POWER > design.beyond_power(0.5, n - 1, 1.0, -2.0)
    # a family of four needs at least as many pairs as one comparison alone
    assert design.pairs_needed(0.5, 1.0, "worse", -2.0, m=4) >= n
    # the norm intervention's necessity at -0.93 with a pair SD near 0.57: not decidable with ten seeds
    assert design.pairs_needed(0.57, 1.0, "worse", -0.93) > design.MAX_SEEDS
    # a difference on the margin's edge never decides
    assert design.pairs_needed(0.5, 1.0, "worse", -1.0) == design.UNREACHABLE


def test_a_comparison_needing_more_than_ten_seeds_is_description_only():
    row = design.DesignRow("c", "x", "primary", "main", 2.4, 1.0, 51, 5, 5)
    assert row.decides is False and row.plan == "cannot decide with about 10 seeds per arm: description only"
    row = design.DesignRow("c", "x", "primary", "main", 0.66, 1.0, 6, 5, 5)
    assert row.decides and row.plan == "needs 1 more seeds"
    assert design.DesignRow("c", "x", "check", "main", 0.1, 1.0, 2, 3, 3).plan == "check"
    edge = design.DesignRow("c", "x", "primary", "main", 0.5, 1.0, design.UNREACHABLE, 5, 5)
    assert edge.decides is False and edge.plan.startswith("cannot decide at any seed count")
    assert design.DesignRow("c", "x", "primary", "main", math.nan, 1.0, None, 10, 0).plan == "pending"


def test_a_planned_grid_with_no_runs_is_a_pending_row():
    rows = {(r["claim"], r["comparison"]): r for r in design.design_table()}
    assert rows[("table2_converged", "cube_sqrt_n")]["plan"] == "pending"


def test_the_design_table_covers_every_registered_comparison_a_claim_owns():
    from polyattn.claims.register import REGISTER

    rows = design.design_table()
    owned = {(cid, c.id) for cid, claim in REGISTER.items() for c in claim.comparisons if c.cited_from is None}
    assert {(r["claim"], r["comparison"]) for r in rows} == owned
