"""The dose-response of softmax·k and the capped cubes, on planted records."""
import math

import pytest

from polyattn.analysis import dose_response as dr


def _record(activation, seed, bpc, status="ok"):
    return {"config": {"activation": activation, "seed": seed}, "status": status,
            "metrics": [{"test_bpc": bpc}] if status == "ok" else []}


def _planted():
    """Lifting the bound costs 0.02 bits/char per doubling of k; tightening it costs nothing."""
    recs = []
    for seed in range(3):
        base = 1.9 + 0.01 * seed
        for spec, k in (("softmax", 1), ("softmax:k=1/8", 1 / 8), ("softmax:k=1/2", 1 / 2), ("softmax:k=2", 2),
                        ("softmax:k=8", 8)):
            recs.append(_record(spec, seed, base + 0.02 * max(0.0, math.log2(k)) + 0.001 * seed * (k == 8)))
        recs += [_record("poly:p=3", seed, base + 0.1), _record("poly_cap:p=3", seed, base + 0.05),
                 _record("poly_unit:p=3", seed, base + 0.12)]
    recs.append(_record("softmax:k=8", 3, math.nan, status="diverged"))
    return recs


def test_the_frame_reads_k_from_the_spec_and_names_the_cubes():
    frame = dr.dose_frame(_planted())
    assert sorted(set(frame["k"].dropna())) == [0.125, 0.5, 1.0, 2.0, 8.0]
    assert "softmax·1/8" in set(frame["arm"]) and "capped at row norm 1" in set(frame["arm"])
    assert frame[frame["status"] == "diverged"]["test_bpc"].isna().all()


def test_each_k_is_read_against_k_one_by_seed_and_the_asymmetry_recovers_the_planted_cost():
    frame = dr.dose_frame(_planted())
    table = dr.by_k(frame).set_index("k")
    assert list(table.index) == [0.125, 0.5, 2.0, 8.0]
    assert table.loc[0.125, "difference"] == pytest.approx(0.0, abs=1e-12)
    assert table.loc[8.0, "difference"] == pytest.approx(0.06 + 0.001, abs=1e-9)
    assert table.loc[8.0, "pairs"] == 3                  # the diverged seed 3 forms no pair
    a = dr.asymmetry(frame)
    assert a["difference"] == pytest.approx(0.061, abs=1e-9) and a["ci_low"] < a["difference"] < a["ci_high"]


def test_the_cube_contrasts_are_against_the_uncapped_cube():
    c = dr.cube_contrasts(dr.dose_frame(_planted())).set_index("arm")
    assert c.loc["capped at row norm 1", "difference"] == pytest.approx(-0.05)
    assert c.loc["rows of norm 1", "difference"] == pytest.approx(0.02)


def test_the_figure_waits_for_a_pair_and_labels_k_as_fractions():
    import matplotlib

    matplotlib.use("Agg")
    assert dr.dose_figure(dr.dose_frame(_planted()[:1])) is None
    fig = dr.dose_figure(dr.dose_frame(_planted()), margin=0.05)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["1/8", "1/2", "1", "2", "8"]


def test_the_page_reads_the_side_that_costs_more_from_the_interval_and_names_each_side():
    from polyattn.studies.norms import intervention as ni

    values = ni.dose_values(dr.dose_frame(_planted()))
    assert "costs more than tightening" in values["ch03_dose_reading"]  # the planted cost lifts with k
    assert values["ch03_dose_tightened"].startswith("+0.000") and "3 seed(s)" in values["ch03_dose_lifted"]
    flipped = [dict(r, config={**r["config"], "activation": {"softmax:k=8": "softmax:k=1/8",
                                                            "softmax:k=1/8": "softmax:k=8"}.get(
                                                                r["config"]["activation"], r["config"]["activation"])})
               for r in _planted() if r["config"]["seed"] < 3]
    assert "costs less than tightening" in ni.dose_values(dr.dose_frame(flipped))["ch03_dose_reading"]
    assert "Too few seeds" in ni.dose_reading({"pairs": 1})
    assert "not told apart" in ni.dose_reading({"pairs": 3, "ci_low": -0.1, "ci_high": 0.1})
