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


def _axes_with_data(fig):
    return [ax for ax in fig.axes if ax.lines or ax.collections]


def test_any_subset_of_the_grid_draws_what_it_can():
    import matplotlib

    matplotlib.use("Agg")
    recs = _planted()
    # nothing stored: no figure, no pair, no slope
    empty = ls.sweep_frame([])
    assert ls.sweep_figure(empty, lengths=(64, 256, 1024)) is None
    assert ls.paired_by_length(empty, "x³", "x³/√(i+1)").empty
    assert math.isnan(ls.slope_over_log_length(empty, "x³", "x³/√(i+1)")["slope"])
    # only the unscaled cube of one seed (the first runs of the grid): one panel, one line, no pair
    cube_only = ls.sweep_frame([r for r in recs if r["config"]["activation"] == "poly:p=3,c=1"
                                and r["config"]["seed"] == 0])
    fig = ls.sweep_figure(cube_only, lengths=(64, 256, 1024))
    assert len(fig.axes) == 1 and [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["x³"]
    assert [int(x) for x in fig.axes[0].get_xticks()] == [64, 256, 1024]
    assert ls.slope_over_log_length(cube_only, "x³", "x³/√(i+1)")["seeds"] == 0
    # only diverged runs: nothing to draw
    assert ls.sweep_figure(ls.sweep_frame([recs[-1]])) is None


def test_one_seed_gives_a_slope_without_an_interval_and_lengths_without_pairs_drop_out():
    recs = [r for r in _planted(growth=0.05) if r["config"]["seed"] == 1 and r["config"]["options"]["context"] != 1024]
    frame = ls.sweep_frame(recs)
    s = ls.slope_over_log_length(frame, "x³", "x³/√(i+1)")
    assert s["seeds"] == 1 and s["slope"] == pytest.approx(0.05) and math.isnan(s["ci_low"])
    assert s["per_seed"] == {1: pytest.approx(0.05)}
    paired = ls.paired_by_length(frame, "x³", "x³/√(i+1)")
    assert list(paired["T"]) == [64, 256] and math.isnan(paired["ci_low"].iloc[0])


def test_a_diverged_run_leaves_its_pairs_and_is_named():
    recs = _planted()
    recs = [r for r in recs if not (r["config"]["activation"] == "poly:p=3,c=1" and r["config"]["seed"] == 2
                                    and r["config"]["options"]["context"] == 1024)]
    recs.append(_record("poly:p=3,c=1", "row", 1024, 2, math.nan, status="diverged"))
    frame = ls.sweep_frame(recs)
    p = ls.progress(frame, planned=36)
    assert (p["stored"], p["ok"], p["diverged"]) == (len(recs), len(recs) - 2, 2)
    assert "x³ at T = 1024, seed 2" in p["diverged_runs"]
    assert ls.paired_by_length(frame, "x³", "x³/√(i+1)").set_index("T").loc[1024, "pairs"] == 2
    assert ls.seed_slopes(frame, "x³", "x³/√(i+1)").set_index("seed").loc[2, "lengths"] == (64, 256)
    levels = ls.levels_by_length(frame).set_index(["variant", "T"])
    assert levels.loc[("x³", 1024), "n"] == 2 and levels.loc[("x³", 1024), "diverged"] == 1


def test_the_right_panel_draws_the_fixed_reading_at_twice_the_length():
    import matplotlib

    matplotlib.use("Agg")
    recs = [r for r in _planted() if r["status"] == "ok"]
    for seed in range(3):
        for t in (64, 256, 1024):
            recs.append(_record("poly:p=3", "fixed", t, seed, 2.6))
    fig = ls.sweep_figure(ls.sweep_frame(recs), margin=0.05)
    labels = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert labels[-2:] == ["x³ − x³/√(i+1), at T", "x³/√T − x³/√(i+1), at 2T"]
    paired = ls.paired_by_length(ls.sweep_frame(recs), "x³/√T", "x³/√(i+1)", "test_bpc_x2").set_index("T")
    # planted: fixed at 2.6 + 0.1 at 2T, per-row at 2.5 + 0.01 seed + 0.1
    assert paired.loc[256, "difference"] == pytest.approx(0.09, abs=1e-9)


def _binned(activation, n_mode, context, seed, per_doubling, status="ok"):
    """A run whose binned loss rises by ``per_doubling`` per doubling of the keys a query sees."""
    edges = [0] + [2 ** j for j in range(int(math.log2(context)) + 1)]
    bpc = [2.0 + per_doubling * math.log2(hi) + 0.003 * seed for hi in edges[1:]]
    rec = _record(activation, n_mode, context, seed, 2.0)
    rec["status"] = status
    rec["final"] = {"position_bpc": {"edges": edges, "bpc": bpc, "chars": [1] * len(bpc)}}
    return rec


def test_the_slope_over_position_recovers_a_planted_late_deficit_and_skips_diverged_runs():
    recs = [_binned("poly:p=3", "row", 256, s, 0.0) for s in range(3)]
    recs += [_binned("poly:p=3,c=1", "row", 256, s, 0.02 + 0.001 * s) for s in range(3)]
    recs += [_binned("poly:p=3,c=1", "row", 64, s, 0.5) for s in range(3)]     # another length: not read
    recs.append(_binned("poly:p=3", "row", 256, 3, 0.0, status="diverged"))
    s = ls.position_slope(recs, "x³", "x³/√(i+1)", 256)
    assert s["seeds"] == 3 and s["slope"] == pytest.approx(0.021, abs=1e-9)
    assert s["ci_low"] < s["slope"] < s["ci_high"]
    assert ls.position_slope(recs, "x³", "x³/√(i+1)", 1024)["seeds"] == 0
    assert len(ls.position_frame(recs)) == 6 * 9 + 3 * 7     # the diverged run stores no bins


def test_the_position_figure_draws_one_line_per_length_with_pairs():
    import matplotlib

    matplotlib.use("Agg")
    recs = [_binned(a, "row", t, s, g) for t in (64, 256) for s in range(2)
            for a, g in (("poly:p=3", 0.0), ("poly:p=3,c=1", 0.01))]
    fig = ls.position_figure(recs, "x³", "x³/√(i+1)", margin=0.05)
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()][-2:] == ["T = 64", "T = 256"]
    assert ls.position_figure(recs[:1], "x³", "x³/√(i+1)") is None


def test_the_change_with_length_pairs_each_variant_with_itself_by_seed():
    import pandas as pd

    from polyattn.analysis import length_sweep as ls

    rows = [{"variant": v, "T": t, "seed": s, "status": "ok", "test_bpc": base + (0.2 if t == 1024 else 0) + 0.01 * s}
            for v, base in (("softmax", 1.8), ("x³", 1.9)) for t in (64, 1024) for s in range(3)]
    rows.append({"variant": "x³", "T": 1024, "seed": 3, "status": "ok", "test_bpc": 9.0})  # no T = 64 partner
    rows.append({"variant": "uniform", "T": 64, "seed": 0, "status": "ok", "test_bpc": 3.2})  # no T = 1024 run
    changes = ls.change_with_length(pd.DataFrame(rows), 64, 1024).set_index("variant")
    assert list(changes.index) == ["softmax", "x³"]
    assert changes.loc["x³", "change"] == pytest.approx(0.2) and changes.loc["x³", "pairs"] == 3
    assert changes.loc["softmax", "ci_low"] == pytest.approx(0.2)  # identical changes: no spread
