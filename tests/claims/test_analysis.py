"""Statistics of polyattn.analysis on synthetic result records with known answers."""
import math

import numpy as np
import pandas as pd
import pytest
from support.records import make_record, sweep_records, table1_records

from polyattn import analysis as A
from polyattn.experiments import vit
from polyattn.tasks import ACCURACY, TEST_LOSS, Metric

# --- frames -----------------------------------------------------------------------------------

def test_records_to_frame_is_tidy_and_keeps_identifiers():
    recs = [make_record("poly:p=3", 0, accs=(0.3, 0.4)), make_record("poly:p=3,c=2/28", 1, accs=(0.1,))]
    f = A.records_to_frame(recs)
    assert len(f) == 3
    assert list(f["epoch"]) == [1, 2, 1]
    assert set(f["activation"]) == {"poly:p=3", "poly:p=3,c=1/14"}   # canonical specs
    assert (f["seq_len"] == 50).all()
    row = f[f["activation"] == "poly:p=3,c=1/14"].iloc[0]
    assert row["c"] == pytest.approx(1 / 14) and row["c_label"] == "1/14"
    assert f[f["activation"] == "poly:p=3"]["scale"].iloc[0] == pytest.approx(1 / math.sqrt(50))
    assert math.isnan(f[f["activation"] == "poly:p=3"]["c"].iloc[0])


def test_diverged_runs_are_kept_with_status_and_nan_accuracy():
    recs = [make_record("softmax", 0), make_record("poly:p=3,c=1", 0, accs=(0.4,), status="diverged",
                                                   diverged_step=17),
            make_record("poly:p=3,c=1", 1, accs=(), status="diverged", diverged_step=3)]
    frame = A.records_to_frame(recs)
    assert (frame["status"] == "diverged").sum() == 2          # the run with no epoch keeps a row
    final = A.final_accuracy(recs)
    assert len(final) == 3
    div = final[final["status"] == "diverged"]
    assert div["test_acc"].isna().all()
    assert sorted(div["diverged_step"]) == [3, 17]
    assert div["last_test_acc"].iloc[0] == pytest.approx(0.4)
    summary = A.summary_table(final).set_index("activation")
    assert summary.loc["poly:p=3,c=1", "n_diverged"] == 2
    assert summary.loc["poly:p=3,c=1", "n_runs"] == 2
    assert math.isnan(summary.loc["poly:p=3,c=1", "mean"])
    assert summary.loc["poly:p=3,c=1", "status"] == "diverged in 2 of 2"
    table = A.per_seed_table(final).set_index("activation")
    assert table.loc["poly:p=3,c=1", "seed 0"] == "diverged at step 17"


def test_summary_table_mean_std_in_percent():
    recs = [make_record("softmax", s, accs=(a,)) for s, a in enumerate((0.70, 0.80, 0.90))]
    s = A.summary_table(A.final_accuracy(recs)).iloc[0]
    assert s["mean"] == pytest.approx(80.0)
    assert s["std"] == pytest.approx(10.0)
    assert s["n_ok"] == 3 and s["n_diverged"] == 0


# --- paired differences -------------------------------------------------------------------------

def test_paired_difference_recovers_planted_differences_and_signs():
    recs = table1_records({"poly:p=3": -0.05, "sigmoid": +0.04, "relu_n": 0.0})
    d = A.paired_difference(A.final_accuracy(recs), baseline="softmax").set_index("activation")
    worse, better, same = d.loc["poly:p=3"], d.loc["sigmoid"], d.loc["relu_n"]
    assert worse["mean_diff"] == pytest.approx(-5.0, abs=1e-9)
    assert worse["ci_high"] < 0 and worse["t_p"] < 0.01
    assert better["ci_low"] > 0 and better["mean_diff"] == pytest.approx(4.0, abs=1e-9)
    assert same["ci_low"] < 0 < same["ci_high"]
    assert same["t_p"] > 0.5
    assert (d["n_pairs"] == 3).all() and d["low_power"].all()
    assert d["wilcoxon_p"].isna().all()          # n = 3 cannot reach p < 0.05: not reported


def test_paired_difference_matches_scipy_and_reports_wilcoxon_for_enough_seeds():
    from scipy import stats

    rng = np.random.default_rng(0)
    base = 0.8 + rng.normal(0, 0.01, 8)
    other = base - 0.02 + rng.normal(0, 0.005, 8)
    recs = [make_record("softmax", s, accs=(b,)) for s, b in enumerate(base)]
    recs += [make_record("poly:p=3", s, accs=(o,)) for s, o in enumerate(other)]
    row = A.paired_difference(A.final_accuracy(recs)).iloc[0]
    assert row["t_p"] == pytest.approx(stats.ttest_rel(other * 100, base * 100).pvalue)
    assert row["wilcoxon_p"] == pytest.approx(stats.wilcoxon(other * 100 - base * 100).pvalue)
    d = (other - base) * 100
    half = stats.t.ppf(0.975, 7) * d.std(ddof=1) / math.sqrt(8)
    assert row["ci_low"] == pytest.approx(d.mean() - half)
    assert not row["low_power"]


def test_paired_difference_pairs_by_seed_and_skips_diverged_pairs():
    recs = [make_record("softmax", s, accs=(0.8 + 0.01 * s,)) for s in range(3)]
    recs += [make_record("poly:p=3", 0, accs=(0.81,)), make_record("poly:p=3", 1, accs=(0.82,)),
             make_record("poly:p=3", 2, accs=(0.5,), status="diverged", diverged_step=5)]
    row = A.paired_difference(A.final_accuracy(recs)).iloc[0]
    assert row["n_pairs"] == 2 and row["n_diverged"] == 1
    assert row["mean_diff"] == pytest.approx(1.0)
    recs = [make_record("softmax", 0), make_record("poly:p=3,c=1", 0, status="diverged", diverged_step=1)]
    row = A.paired_difference(A.final_accuracy(recs)).iloc[0]
    assert row["n_pairs"] == 0


def test_paired_difference_by_groups_and_other_baseline():
    recs = []
    for model, gap in (("micro", -0.03), ("mini", 0.03)):
        for s in range(3):
            recs.append(make_record("softmax", s, accs=(0.8 + 0.01 * s,), model=model, experiment="vit_table2"))
            recs.append(make_record("poly:p=3", s, accs=(0.8 + 0.01 * s + gap + 0.001 * s,), model=model,
                                    experiment="vit_table2"))
    d = A.paired_difference(A.final_accuracy(recs), by=["model"]).set_index("model")
    assert d.loc["micro", "ci_high"] < 0 < d.loc["mini", "ci_low"]
    d2 = A.paired_difference(A.final_accuracy(recs), baseline="poly:p=3", by="model").set_index("model")
    assert d2.loc["micro", "activation"] == "softmax" and d2.loc["micro", "mean_diff"] > 0
    with pytest.raises(ValueError, match="baseline"):
        A.paired_difference(A.final_accuracy(recs), baseline="sigmoid")


def test_format_summary_shows_baseline_and_diverged():
    recs = table1_records({"poly:p=3": -0.05})
    recs += [make_record("poly:p=3,c=1", s, status="diverged", diverged_step=2) for s in range(3)]
    final = A.final_accuracy(recs)
    t = A.format_summary(A.summary_table(final), A.paired_difference(final)).set_index("activation")
    assert t.loc["softmax", "Δ vs softmax (points)"] == "baseline"
    assert t.loc["poly:p=3,c=1", "test accuracy (%)"] == "diverged"
    assert t.loc["poly:p=3", "Δ vs softmax (points)"] == "−5.00"


# --- probes and correlations ------------------------------------------------------------------

def _probe_rows(level, steps=(0, 5, 9), layers=(0, 1, 2, 3)):
    rows = []
    for st in steps:
        for layer in layers:
            for h in range(2):
                for m in A.NORM_METRICS:
                    rows.append({"step": st, "layer": layer, "head": h, "metric": m, "value": level * (1 + st)})
    return rows


def test_probe_frame_and_norms_vs_accuracy():
    recs = [make_record("softmax", 0, accs=(0.9,), probes=_probe_rows(1.0)),
            make_record("poly:p=3", 0, accs=(0.8,), probes=_probe_rows(2.0)),
            make_record("poly:p=3,c=1", 0, accs=(0.5,), probes=_probe_rows(3.0), status="diverged", diverged_step=9)]
    pf = A.probe_frame(recs)
    assert len(pf) == 3 * 3 * 4 * 2 * 3
    assert {"run", "activation", "seed", "step", "layer", "head", "metric", "value"} <= set(pf.columns)
    assert A.early_middle_last(pf["layer"]) == (0, 2, 3)
    curves = A.probe_curves(pf, metrics=["act_jac_fro"], layers=[0])
    assert len(curves) == 3 * 3
    c = curves[(curves["activation"] == "poly:p=3") & (curves["step"] == 9)].iloc[0]
    assert c["mean"] == c["min"] == c["max"] == pytest.approx(20.0) and c["n"] == 1
    nv = A.norms_vs_accuracy(recs).set_index("activation")
    assert nv.loc["poly:p=3", "act_jac_fro_final"] == pytest.approx(20.0)
    assert nv.loc["poly:p=3", "act_jac_fro_mean"] == pytest.approx(2.0 * (1 + 6 + 10) / 3)
    assert math.isnan(nv.loc["poly:p=3,c=1", "test_acc"])
    assert nv.loc["softmax", "test_acc"] == pytest.approx(90.0)


def test_spearman_is_one_on_monotone_data_and_bootstrap_is_seeded():
    x = np.arange(12.0)
    r = A.spearman_ci(x, np.exp(x))
    assert r["rho"] == pytest.approx(1.0)
    assert r["ci_low"] == pytest.approx(1.0) and r["ci_high"] == pytest.approx(1.0)
    r = A.spearman_ci(x, -x ** 3)
    assert r["rho"] == pytest.approx(-1.0)
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=30), rng.normal(size=30)
    r1, r2 = A.spearman_ci(a, b, seed=3, n_boot=500), A.spearman_ci(a, b, seed=3, n_boot=500)
    assert r1 == r2
    assert r1["ci_low"] < r1["rho"] < r1["ci_high"]
    assert r1["ci_low"] < 0 < r1["ci_high"]
    r = A.spearman_ci(np.r_[x, np.nan], np.r_[x, 1.0])
    assert r["n"] == 12


def test_spearman_cluster_bootstrap_is_wider_for_clustered_noise():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(5), 6)
    offsets = rng.normal(size=5)
    x = offsets[groups] + 0.01 * rng.normal(size=30)
    y = offsets[groups] * 0.0 + rng.normal(size=5)[groups] + 0.01 * rng.normal(size=30)
    plain = A.spearman_ci(x, y, seed=0)
    clustered = A.spearman_ci(x, y, seed=0, clusters=groups)
    assert clustered["n_clusters"] == 5
    assert (clustered["ci_high"] - clustered["ci_low"]) > (plain["ci_high"] - plain["ci_low"])


# --- the scale sweep --------------------------------------------------------------------------



def test_best_constant_recovers_planted_optimum_and_slope():
    # the planted optimum is exactly 1/sqrt(N) for N = 17, 50, 197
    planted = {7: 1 / math.sqrt(17), 4: 1 / math.sqrt(50), 2: 1 / math.sqrt(197)}
    bc = A.best_constant(A.final_accuracy(sweep_records(planted)), n_boot=100)
    t = bc.table.set_index("seq_len")
    assert list(t.index) == [17, 50, 197]
    assert t.loc[17, "best_c_label"] == "1/8" and t.loc[197, "best_c_label"] == "1/8"   # grid resolution
    for n in (17, 50, 197):
        assert t.loc[n, "c_star"] == pytest.approx(1 / math.sqrt(n), rel=1e-6)
    assert bc.slope == pytest.approx(-0.5, abs=1e-6)
    assert bc.direction == "flat"
    noisy = A.best_constant(A.final_accuracy(sweep_records(planted, noise=0.003)), n_boot=200)
    assert noisy.slope == pytest.approx(-0.5, abs=0.15)
    assert noisy.slope_ci[0] < -0.5 < noisy.slope_ci[1]
    assert noisy.slope_ci[1] - noisy.slope_ci[0] > 0.01
    shown = A.best_constant_table(bc)
    assert list(shown.index) == [17, 50, 197] and shown.loc[17, "best c"] == "1/8"
    assert shown.loc[50, "interpolated c*"] == pytest.approx(1 / math.sqrt(50), abs=1e-3)


def test_best_constant_direction_edges_and_divergence():
    planted = {7: 2.0, 4: 0.5, 2: 1 / 32}
    bc = A.best_constant(A.final_accuracy(sweep_records(planted)), n_boot=50)
    t = bc.table.set_index("seq_len")
    assert [t.loc[n, "best_c_label"] for n in (17, 50, 197)] == ["2", "1/2", "1/32"]
    assert bc.direction == "falls" and bc.slope_grid < 0
    assert t.loc[17, "at_edge"] and t.loc[197, "at_edge"] and not t.loc[50, "at_edge"]
    # the two edge optima are censored, which leaves one interior point: no slope is fitted
    assert math.isnan(bc.slope) and any("censored" in n for n in bc.notes)
    assert t["resolved"].all()
    # all constants equally good: the grid's winner is a tie, and the verdict says so
    flat = [dict(r, metrics=[dict(r["metrics"][0], test_acc=0.1 + 0.001 * r["seed"])])
            for r in sweep_records({7: 2.0, 4: 0.5, 2: 1 / 32})]
    tie = A.best_constant(A.final_accuracy(flat), n_boot=20)
    assert not tie.table["resolved"].any()
    # a constant that diverges on one seed loses to a stable one, even with a higher mean
    recs = sweep_records({7: 2.0, 4: 0.5, 2: 0.5}, diverge={(4, "1/2")})
    bc = A.best_constant(A.final_accuracy(recs), n_boot=0)
    assert bc.table.set_index("seq_len").loc[50, "best_c_label"] != "1/2"
    rising = A.best_constant(A.final_accuracy(sweep_records({7: 1 / 32, 4: 0.5, 2: 2.0})), n_boot=0)
    assert rising.direction == "rises"


def test_best_constant_resolves_by_a_paired_interval():
    # best and runner-up differ by 0.2 points on every seed, while both swing by +-5 points from
    # seed to seed: an unpaired two-SE rule would call it a tie, the paired interval resolves it
    recs = sweep_records({7: 0.5, 4: 0.5, 2: 0.5})
    for r in recs:
        c = r["config"]["activation"].split("c=")[1]
        swing = 0.05 * (r["seed"] - 1)
        base = 0.8 + swing
        r["metrics"] = [dict(r["metrics"][0], test_acc=base + (0.002 if c == "1/2" else 0.0 if c == "2" else -0.05))]
    bc = A.best_constant(A.final_accuracy(recs), n_boot=0)
    t = bc.table.set_index("seq_len")
    assert (t["best_c_label"] == "1/2").all() and t["resolved"].all()
    assert (t["margin_ci_low"] > 0).all() and (t["n_pairs"] == 3).all()
    assert np.allclose(t["margin"], 0.2)


def test_best_constant_needs_fixed_constants():
    with pytest.raises(ValueError, match="fixed constant"):
        A.best_constant(A.final_accuracy([make_record("softmax", 0)]))


# --- budget and configurations ---------------------------------------------------------------

def test_compute_budget_sums_wall_clock():
    recs = [make_record("softmax", s, wall_s=1800.0) for s in range(3)]
    b = A.compute_budget(recs)
    assert b["n_runs"] == 3 and b["wall_hours"] == pytest.approx(1.5)
    assert b["cpu"] == ["Test CPU"]
    assert "1.50 hours" in A.budget_text(b)


def _join(values):
    return ", ".join(str(v) for v in sorted(values))


def test_deviations_table_comes_from_configs():
    cfgs = vit.table1("book")
    t = A.deviations_table(cfgs, vit.paper_configs()).set_index("")
    assert t.loc["epochs", "this book"] == str(cfgs[0].epochs)
    assert t.loc["epochs", "paper"] == _join({c.epochs for c in vit.paper_configs()})
    assert str(cfgs[0].train_subset) in t.loc["dataset", "this book"]
    assert t.loc["seeds per configuration", "this book"] == str(len({c.seed for c in cfgs})) == "5"
    mixed = A.deviations_table(cfgs + vit.table2("book"), vit.paper_configs()).set_index("")
    assert mixed.loc["seeds per configuration", "this book"] == "3, 5"
    assert "49 patches + CLS" in t.loc["images and tokens", "this book"]
    assert t.loc["seeds per configuration", "paper"] == str(len({c.seed for c in vit.paper_configs()}))
    assert "196 patches + CLS" in t.loc["images and tokens", "paper"]
    # training details that change results are disclosed, not only the sizes
    clip = "gradient clipping (max norm; 0 = off)"
    assert t.loc[clip, "this book"] == "1.0" and t.loc[clip, "paper"] == "0.0"
    assert t.loc["label smoothing", "paper"] == "0.1" and t.loc["label smoothing", "this book"] == "0.0"
    assert t.loc["drop path (stochastic depth)", "paper"] == "0.1"


def test_grid_caption_states_dataset_epochs_model_preset_and_compute():
    cfgs = vit.table1("smoke", seeds=[0, 1])
    recs = [make_record("softmax", s, wall_s=360.0) for s in range(2)]
    text = A.grid_caption(cfgs, recs)
    for part in ("fashion_mnist", f"train subset {cfgs[0].train_subset}", f"{cfgs[0].epochs} epoch(s)",
                 "micro (dim 64", "1k parameters", "2 seed(s)", "preset smoke", "2 runs, 0.20 hours"):
        assert part in text, part
    assert "compute" not in A.grid_caption(cfgs)


# --- metrics: declarations, direction and sequence lengths ----------------------------------------

BPC = Metric("bpc", unit="bpc", higher_is_better=False, scale=1.0, label="bits per character")


def bpc_record(activation, seed, bpc, status="ok", **kw):
    rec = make_record(activation, seed, accs=(0.5,), status=status, **kw)
    rec["task"] = "charlm"
    rec["metrics_spec"] = [BPC.as_dict(), TEST_LOSS.as_dict()]
    rec["seq_lens"] = {"context": 256}
    rec["metrics"] = [{"epoch": 1, "step": 10, "bpc": bpc, "test_loss": bpc * math.log(2), "wall_s": 1.0}]
    return rec


def test_records_without_declarations_are_image_classification():
    rec = make_record("softmax", 0, patch_size=7)
    assert A.record_metrics(rec) == (ACCURACY, TEST_LOSS)
    assert A.record_seq_len(rec) == A.image_seq_len(rec["config"]) == (28 // 7) ** 2 + 1
    assert A.image_seq_len({**rec["config"], "pool": "mean"}) == 16
    final = A.final_metrics([rec])
    assert final["task"].iloc[0] == "images" and final["seq_len"].iloc[0] == 17
    assert A.resolve_metric(None, final) == ACCURACY
    assert A.resolve_metric("test_loss", final) == TEST_LOSS
    with pytest.raises(ValueError, match="unknown metric 'bpc'"):
        A.resolve_metric("bpc", final)
    with pytest.raises(ValueError, match="seq_lens"):
        A.record_seq_len({"config": {"activation": "softmax"}})


def test_declared_metrics_and_sequence_lengths_are_read_from_the_record():
    rec = bpc_record("poly:p=3", 0, 1.5)
    assert A.record_metrics(rec)[0] == BPC
    assert A.record_seq_lens(rec) == {"context": 256} and A.record_seq_len(rec) == 256
    final = A.final_metrics([rec])
    assert final["seq_len"].iloc[0] == 256
    assert final["scale"].iloc[0] == pytest.approx(1 / 16)          # 1/sqrt(N) from the declared length
    assert final["bpc"].iloc[0] == pytest.approx(1.5) and final["task"].iloc[0] == "charlm"
    assert A.resolve_metric(None, final) == BPC
    assert A.resolve_metric(None, final[final["seed"] == 0]) == BPC   # declarations survive a filter
    clash = bpc_record("softmax", 1, 1.4)
    clash["metrics_spec"] = [dict(BPC.as_dict(), higher_is_better=True)]
    with pytest.raises(ValueError, match="declared twice"):
        A.final_metrics([rec, clash])


def test_lower_is_better_metric_is_ranked_and_judged_by_its_direction():
    recs = []
    for s in range(4):
        recs.append(bpc_record("softmax", s, 1.60 + 0.01 * s))
        recs.append(bpc_record("poly:p=3", s, 1.40 + 0.01 * s + 0.002 * (s % 2)))   # lower: better
        recs.append(bpc_record("sigmoid", s, 1.90 + 0.01 * s - 0.003 * (s % 2)))    # higher: worse
    final = A.final_metrics(recs)
    summary = A.summary_table(final).set_index("activation")
    assert summary.loc["poly:p=3", "rank"] == 1 and summary.loc["sigmoid", "rank"] == 3
    assert summary.loc["poly:p=3", "mean"] == pytest.approx(1.415 + 0.001)
    d = A.paired_difference(final).set_index("activation")
    assert d.loc["poly:p=3", "mean_diff"] < 0 and d.loc["poly:p=3", "unit"] == "bpc"
    better = A.comparison_verdict(d.loc["poly:p=3"])
    worse = A.comparison_verdict(d.loc["sigmoid"])
    assert (better.form, worse.form) == ("better", "worse")
    assert "better than softmax by 0.20 bpc" in better.text and "lower is better" in better.text
    table = A.format_summary(summary.reset_index(), A.paired_difference(final)).set_index("activation")
    assert "bits per character (bpc)" in table.columns and "Δ vs softmax (bpc)" in table.columns
    assert table.loc["poly:p=3", "verdict"] == "better" and table.loc["sigmoid", "verdict"] == "worse"
    # the same numbers read as accuracy (higher is better) flip every verdict
    as_acc = Metric("bpc", unit="%", higher_is_better=True, scale=1.0)
    assert A.comparison_verdict(A.paired_difference(final, metric=as_acc).iloc[0]).form == "worse"


def test_best_constant_follows_a_lower_is_better_metric():
    recs = []
    for c, loss in (("1/32", 1.9), ("1/8", 1.5), ("1/2", 1.2), ("2", 1.6)):
        for s in range(3):
            recs.append(bpc_record(f"poly:p=3,c={c}", s, loss + 0.01 * s, experiment="vit_scale"))
    bc = A.best_constant(A.final_metrics(recs), n_boot=0)
    row = bc.table.iloc[0]
    assert row["best_c_label"] == "1/2" and row["runner_up_c_label"] == "1/8"
    assert row["best_mean"] == pytest.approx(1.21) and row["margin"] == pytest.approx(0.3)
    assert A.best_constant(A.final_metrics(recs), metric="test_loss", n_boot=0).table.iloc[0]["best_c_label"] == "1/2"


# --- equivalence, power, multiplicity, pooling ------------------------------------------------------

def _exact(mean, sd, n, seed=0):
    """n values with exactly this mean and sample standard deviation."""
    z = np.random.default_rng(seed).normal(size=n)
    return mean + sd * (z - z.mean()) / z.std(ddof=1)


def test_tost_accepts_a_planted_equivalence_and_rejects_a_planted_gap():
    from scipy import stats

    same = _exact(0.0, 0.3, 10)
    r = A.tost(same, margin=1.0)
    p_hand = max(stats.ttest_1samp(same, -1.0, alternative="greater").pvalue,
                 stats.ttest_1samp(same, 1.0, alternative="less").pvalue)
    assert r["p"] == pytest.approx(p_hand) and r["p"] < 1e-5 and r["equivalent"]
    assert -1 < r["ci_low"] < r["ci_high"] < 1
    gap = _exact(-2.0, 0.3, 10)
    g = A.tost(gap, margin=1.0)
    assert not g["equivalent"] and g["p"] > 0.99
    # a wide interval around 0 is not equivalence
    noisy = _exact(0.0, 3.0, 4)
    assert not A.tost(noisy, margin=1.0)["equivalent"]
    with pytest.raises(ValueError, match="margin"):
        A.tost(same, margin=-1)
    with pytest.raises(ValueError, match="margin"):
        A.tost(same, margin=None)


def test_paired_difference_with_a_margin_gives_tost_mde_and_the_verdict_forms():
    rng = np.random.default_rng(3)
    base = 0.80 + rng.normal(0, 0.01, 10)
    recs = [make_record("softmax", s, accs=(b,)) for s, b in enumerate(base)]
    recs += [make_record("poly:p=3", s, accs=(b + d,)) for s, (b, d) in enumerate(zip(base, _exact(0.0, 0.003, 10)))]
    recs += [make_record("sigmoid", s, accs=(b + d,)) for s, (b, d) in enumerate(zip(base, _exact(-0.02, 0.003, 10)))]
    recs += [make_record("relu_n", s, accs=(b + d,)) for s, (b, d) in enumerate(zip(base, _exact(0.0, 0.05, 10)))]
    d = A.paired_difference(A.final_accuracy(recs), margin=1.0).set_index("activation")
    eq, gap, noisy = (A.comparison_verdict(d.loc[a]) for a in ("poly:p=3", "sigmoid", "relu_n"))
    assert eq.form == "equivalent" and eq.tost_p < 0.05 and eq.margin == 1.0
    assert "equivalent to softmax within ±1 point" in eq.text
    assert gap.form == "worse" and gap.estimate == pytest.approx(-2.0) and gap.tost_p > 0.5
    assert "worse than softmax by 2.00 points" in gap.text and "Holm-corrected over 3 comparisons" in gap.text
    assert noisy.form == "inconclusive"
    assert f"could have detected a difference of ±{noisy.mde:.2f} points" in noisy.text
    assert "equivalence within ±1 point is not shown" in noisy.text
    assert noisy.mde == pytest.approx(A.minimal_detectable_effect(5.0, 10))
    assert d["family_size"].eq(3).all()
    assert np.allclose(d["p_holm"], A.holm(d["t_p"]))
    assert {v.form for v in (eq, gap, noisy)} <= set(A.FORMS)
    vf = A.verdict_frame(d.reset_index(), names={"poly:p=3": "x^3/sqrt(N)"})
    assert list(vf["verdict"]) == ["equivalent", "worse", "inconclusive"]
    assert vf["verdict_text"].iloc[0].startswith("x^3/sqrt(N) is equivalent")


def test_a_difference_that_does_not_survive_holm_is_inconclusive():
    row = {"activation": "a", "baseline": "b", "n_pairs": 5, "n_seeds": 5, "n_diverged": 0, "mean_diff": 1.0,
           "ci_low": 0.1, "ci_high": 1.9, "t_p": 0.03, "p_holm": 0.09, "family_size": 3, "mde": 1.4,
           "margin": np.nan, "tost_p": np.nan, "confidence": 0.95, "unit": "points", "higher_is_better": True}
    v = A.comparison_verdict(row)
    assert v.form == "inconclusive" and "Holm-corrected p does not reach 0.05" in v.text
    assert A.comparison_verdict(dict(row, p_holm=0.02)).form == "better"
    assert A.comparison_verdict(dict(row, family_size=1, p_holm=0.03)).form == "better"
    gone = A.comparison_verdict(dict(row, n_pairs=0, n_diverged=5))
    assert gone.form == "not comparable" and "diverged in 5 of 5 seeds" in gone.text


def test_holm_matches_a_hand_computation():
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> monotone 0.02, 0.03, 0.06, 0.06
    assert np.allclose(A.holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    out = A.holm([0.01, np.nan, 0.04])                     # NaN is not a member of the family
    assert np.isnan(out[1]) and np.allclose(out[[0, 2]], [0.02, 0.04])
    assert np.allclose(A.holm([0.5, 0.6]), [1.0, 1.0])
    assert np.allclose(A.holm([0.2]), [0.2])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        A.holm([0.5, 1.5])


def test_minimal_detectable_effect_shrinks_with_n_and_has_the_stated_power():
    from scipy import stats

    mdes = [A.minimal_detectable_effect(1.0, n) for n in (2, 3, 5, 10, 40)]   # two pairs: one degree of freedom
    assert all(a > b for a, b in zip(mdes, mdes[1:]))
    n, sd = 8, 0.7
    m = A.minimal_detectable_effect(sd, n)
    crit = stats.t.ppf(0.975, n - 1)
    nc = m / (sd / math.sqrt(n))
    assert stats.nct.sf(crit, n - 1, nc) + stats.nct.cdf(-crit, n - 1, nc) == pytest.approx(0.8, abs=1e-6)
    # for large n the normal approximation (z_0.975 + z_0.8) sd / sqrt(n) holds
    assert A.minimal_detectable_effect(1.0, 400) == pytest.approx(2.8016 / 20, rel=0.01)
    assert A.minimal_detectable_effect(2.0, 10) == pytest.approx(2 * A.minimal_detectable_effect(1.0, 10))
    assert math.isnan(A.minimal_detectable_effect(1.0, 1)) and A.minimal_detectable_effect(0.0, 5) == 0.0


def cell_records(effects, seeds=range(3), noise=0.004):
    """4 cells (model x recipe) with different accuracy levels; poly:p=3 at softmax + the cell's effect."""
    recs, rng = [], np.random.default_rng(7)
    cells = [("micro", "none"), ("micro", "deit"), ("mini", "none"), ("mini", "deit")]
    for (model, aug), level, eff in zip(cells, (0.70, 0.75, 0.80, 0.85), effects):
        for s in seeds:
            b = level + 0.01 * s
            recs.append(make_record("softmax", s, accs=(b,), model=model, augment=aug, experiment="vit_table2"))
            recs.append(make_record("poly:p=3", s, accs=(b + eff + rng.normal(0, noise),), model=model,
                                    augment=aug, experiment="vit_table2"))
    return recs


def test_pooled_difference_recovers_a_planted_effect_across_cells_and_matches_ols():
    final = A.final_accuracy(cell_records([-0.015] * 4))
    row = A.pooled_difference(final, cells=["model", "augment"], margin=1.0).iloc[0]
    assert row["n_cells"] == 4 and row["n_pairs"] == 12 and row["df"] == 8
    assert row["mean_diff"] == pytest.approx(-1.5, abs=0.3) and row["ci_low"] < -1.5 < row["ci_high"]
    assert row["ci_high"] < 0 and row["t_p"] < 1e-4
    assert row["heterogeneity_p"] > 0.05
    # the same estimate and standard error from OLS of the differences on cell dummies
    per = A.paired_difference(final, by=["model", "augment"])
    sub = final.pivot_table(index=["model", "augment", "seed"], columns="activation", values="test_acc") * 100
    d = (sub["poly:p=3"] - sub["softmax"]).to_numpy()
    cells = np.repeat(np.arange(4), 3)
    X = np.eye(4)[cells]
    coef, rss, *_ = np.linalg.lstsq(X, d, rcond=None)
    sigma2 = float(rss[0]) / (12 - 4)
    w = np.full(4, 3 / 12)
    assert row["mean_diff"] == pytest.approx(w @ coef)
    assert row["se"] == pytest.approx(math.sqrt(sigma2 * w @ np.linalg.inv(X.T @ X) @ w))
    assert row["mean_diff"] == pytest.approx(per["mean_diff"].mean())
    v = A.comparison_verdict(row, name="x^3/sqrt(N)")
    assert v.form == "worse" and "n = 12 seed pairs in 4 cells" in v.text
    assert "t-test with cell effects p" in v.text and "cells do not disagree detectably" in v.text
    # cells that disagree: the pooled mean is near 0 and the F-test flags the disagreement
    het = A.pooled_difference(A.final_accuracy(cell_records([-0.03, 0.03, -0.03, 0.03])),
                              cells=["model", "augment"]).iloc[0]
    assert abs(het["mean_diff"]) < 0.5 and het["heterogeneity_p"] < 1e-3
    assert "the cells disagree" in A.comparison_verdict(het).text
    # one seed per cell: the cell means absorb every pair, so no spread is left for an interval
    one = A.pooled_difference(A.final_accuracy(cell_records([-0.015] * 4, seeds=[0])), cells=["model", "augment"])
    assert one["n_pairs"].iloc[0] == 4 and one["df"].iloc[0] == 0 and one["ci_low"].isna().all()
    lone = A.comparison_verdict(one.iloc[0])
    assert lone.form == "inconclusive" and "4 pair(s) in 4 cells without an interval" in lone.text
    with pytest.raises(ValueError, match="cell"):
        A.pooled_difference(final, cells=[])


# --- norms against accuracy: between and within activations ----------------------------------------

def test_within_spearman_separates_within_from_between_activation_association():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(6), 8)
    level = np.arange(6.0)
    # between activations: larger norm, lower accuracy; within one: larger norm, higher accuracy
    x = 10 * level[groups] + rng.normal(size=48)
    y = -10 * level[groups] + 0.8 * (x - 10 * level[groups]) + 0.3 * rng.normal(size=48)
    run = A.spearman_ci(x, y, n_boot=300)
    within = A.within_spearman(x, y, groups, n_boot=500, n_perm=500)
    assert run["rho"] < -0.8 and run["ci_high"] < 0
    assert within["rho"] > 0.8 and within["ci_low"] > 0 and within["p"] < 0.01
    assert within["n"] == 48 and within["n_groups"] == 6
    # ranks: a monotone transform of x inside the groups changes nothing
    assert A.within_spearman(np.exp(x / 10), y, groups, n_boot=0)["rho"] == pytest.approx(within["rho"])
    unrelated = A.within_spearman(x, -10 * level[groups] + rng.normal(size=48), groups, n_boot=500, n_perm=500)
    assert unrelated["ci_low"] < 0 < unrelated["ci_high"] and unrelated["p"] > 0.05
    lone = A.within_spearman(np.arange(5.0), np.arange(5.0), list("abcde"))
    assert lone["n_groups"] == 0 and math.isnan(lone["rho"])


def test_correlation_table_reports_three_views_and_the_verdict_names_them():
    rng = np.random.default_rng(1)
    acts = np.repeat([f"a{i}" for i in range(5)], 5)
    level = np.repeat(np.arange(5.0), 5)
    norms = pd.DataFrame({"n1": level + 0.1 * rng.normal(size=25), "activation": acts})
    norms["test_acc"] = 80 + 2 * level + 0.5 * rng.normal(size=25)
    t = A.correlation_table(norms, ["n1"], n_boot=300).iloc[0]
    for col in ("rho", "ci_low", "p", "cluster_ci_low", "within_rho", "within_ci_low", "within_p"):
        assert col in t.index and t[col] == t[col], col


def test_a_description_table_reads_a_comparison_as_the_register_does():
    """comparison_verdict's form is the register's result of the same statistics: a detectable
    difference whose interval reaches inside the margin is "worse, size unclear", not "worse"."""
    from polyattn.analysis.results import comparison_result

    base = (0.80, 0.81, 0.82, 0.83)
    recs = [make_record("softmax", s, accs=(b,)) for s, b in enumerate(base)]
    # 1.5 points worse with a small spread, against a margin of 1 point (interval straddles -1)
    recs += [make_record("poly:p=3", s, accs=(b - 0.015 + 0.004 * (-1) ** s,)) for s, b in enumerate(base)]
    # 5 points worse: beyond the margin
    recs += [make_record("sigmoid", s, accs=(b - 0.05 + 0.001 * (-1) ** s,)) for s, b in enumerate(base)]
    d = A.paired_difference(A.final_accuracy(recs), margin=1.0).set_index("activation")
    inside, beyond = A.comparison_verdict(d.loc["poly:p=3"]), A.comparison_verdict(d.loc["sigmoid"])
    assert d.loc["poly:p=3", "ci_low"] < -1.0 < d.loc["poly:p=3", "ci_high"] < 0
    assert inside.form == "worse, size unclear" and "reaches inside the margin of ±1 point" in inside.text
    assert beyond.form == "worse" and d.loc["sigmoid", "ci_high"] < -1.0
    for act, v in (("poly:p=3", inside), ("sigmoid", beyond)):
        r = d.loc[act]
        assert v.form == comparison_result(n=int(r["n_pairs"]), mean=r["mean_diff"], ci_low=r["ci_low"],
                                           ci_high=r["ci_high"], holm_p=r["p_holm"], equivalent=r["tost_p"] < 0.05,
                                           alpha=0.05, margin=1.0)
    assert A.BOOK_FORMS[inside.form] == "worse, size unclear"
