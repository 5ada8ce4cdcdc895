"""The length sweep's frame, paired differences and slope over log2 T, on planted records."""
import math

import pytest

from polyattn.analysis import length_sweep as ls


def _record(activation, n_mode, context, seed, bpc, status="ok"):
    return {"config": {"activation": activation, "n_mode": n_mode, "options": {"context": context}, "seed": seed},
            "status": status, "metrics": [{"test_bpc": bpc, "test_bpc_x2": bpc + 0.1, "test_bpc_x4": bpc + 0.3}]}


def _planted(growth=0.05):
    recs = []
    for seed in range(3):
        for t in (64, 256, 1024):
            base = 2.5 + 0.01 * seed
            recs.append(_record("poly:p=3", "row", t, seed, base))
            # the unscaled cube's deficit grows by `growth` per doubling of T (plus a seed-specific jitter)
            recs.append(_record("poly:p=3,c=1", "row", t, seed, base + growth * math.log2(t / 64) + 0.002 * seed))
            recs.append(_record("softmax", "row", t, seed, base - 0.05))
    recs.append(_record("poly:p=3", "fixed", 64, 0, math.nan, status="diverged"))
    return recs


def test_the_frame_names_variants_and_lengths():
    frame = ls.sweep_frame(_planted())
    assert list(dict.fromkeys(frame["variant"])) == ["softmax", "x³", "x³/√(i+1)", "x³/√T"]
    assert sorted(set(frame["T"])) == [64, 256, 1024]
    assert frame[frame["status"] == "diverged"]["test_bpc"].isna().all()


def test_the_slope_over_log_length_recovers_the_planted_growth():
    frame = ls.sweep_frame(_planted(growth=0.05))
    s = ls.slope_over_log_length(frame, "x³", "x³/√(i+1)")
    assert s["slope"] == pytest.approx(0.05, abs=1e-9) and s["seeds"] == 3
    paired = ls.paired_by_length(frame, "x³", "x³/√(i+1)").set_index("T")
    assert paired.loc[1024, "difference"] == pytest.approx(0.05 * 4 + 0.002, abs=1e-9)
    assert paired.loc[64, "pairs"] == 3


def test_the_figure_has_both_panels():
    import matplotlib

    matplotlib.use("Agg")
    fig = ls.sweep_figure(ls.sweep_frame(_planted()))
    assert len(fig.axes) == 2 and fig.axes[0].get_xscale() == "log"
