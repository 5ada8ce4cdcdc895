"""The detection proxy's tables and verdict on synthetic records: planted differences come back out."""
from __future__ import annotations

import numpy as np
import pytest

from polyattn.analysis.detection import (
    EQUIVALENCE_MARGIN,
    detection_curves,
    detection_differences,
    detection_final,
    detection_table,
    learned,
    long_frame,
    wide_table,
)
from polyattn.experiments.detection import detection_proxy, variant_label
from polyattn.experiments.detection_setup import detector_facts, setup_table
from polyattn.results import config_dict
from polyattn.tasks.detection import METRICS

NAMES = [m.name for m in METRICS]
BASE = {"box_ap": 0.30, "box_ap50": 0.55, "mask_ap": 0.25, "mask_ap50": 0.50}
NOISE = {0: 0.0, 1: 0.02, 2: -0.015, 3: 0.01, 4: -0.005, 5: 0.004}


def make_record(cfg, values, status="ok"):
    metrics = [{"epoch": 1, "step": 10, "train_loss": 1.0, **values, "lr": 1e-4, "wall_s": 5.0}]
    return {"schema": 1, "experiment": "detection_proxy", "config": config_dict(cfg), "config_hash": cfg.hash,
            "seed": cfg.seed, "preset": "book", "status": status, "diverged_step": None, "task": "detection",
            "seq_lens": {"seq_len": 256}, "metrics_spec": [m.as_dict() for m in METRICS], "metrics": metrics,
            "probes": [], "n_params": 1000, "provenance": {"git_commit": "abc", "git_dirty": False, "wall_s": 5.0}}


def planted(diff_of, seeds=(0, 1, 2), base=BASE, diverged=()):
    """Book configs; each variant's metrics are softmax's (with a per-seed noise shared by all
    variants, so pairs cancel it) plus the planted difference (in fractions) and a tiny jitter."""
    recs = []
    for cfg in detection_proxy("book", seeds=seeds):
        label = variant_label(cfg)
        jitter = 0.0 if label == "softmax" else 0.001 * (cfg.seed % 3 - 1)
        values = {n: base[n] + NOISE[cfg.seed] + diff_of.get(label, {}).get(n, 0.0) + jitter for n in NAMES}
        status = "diverged" if (label, cfg.seed) in diverged else "ok"
        recs.append(make_record(cfg, values, status))
    return recs


def test_table_gives_mean_and_spread_over_seeds_per_variant_and_metric():
    final = detection_final(planted({"x^3/14": {"box_ap": -0.05}}))
    assert list(dict.fromkeys(final["variant"])) == ["softmax", "x^3/sqrt(N)", "x^3/14"]
    t = detection_table(final)
    assert len(t) == 3 * 4
    row = t[(t["variant"] == "softmax") & (t["metric"] == "box_ap")].iloc[0]
    values = [100 * (0.30 + NOISE[s]) for s in (0, 1, 2)]
    assert row["mean"] == pytest.approx(np.mean(values)) and row["sd"] == pytest.approx(np.std(values, ddof=1))
    assert row["n"] == 3 and row["min"] == pytest.approx(min(values))
    fixed = t[(t["variant"] == "x^3/14") & (t["metric"] == "box_ap")].iloc[0]
    assert fixed["mean"] == pytest.approx(np.mean(values) - 5.0, abs=1e-9)
    wide = wide_table(t)
    assert list(wide.index) == ["softmax", "x^3/sqrt(N)", "x^3/14"]
    assert row["median"] == pytest.approx(np.median(values))
    with_median = wide_table(t, median=True)
    assert with_median.loc["softmax", "box AP"] == (f"{np.mean(values):.1f} ± {np.std(values, ddof=1):.1f} "
                                                    f"(median {np.median(values):.1f})")
    assert "median" not in wide.loc["softmax", "box AP"]
    assert list(wide.columns) == ["box AP", "box AP50", "mask AP", "mask AP50"]
    assert wide.loc["softmax", "box AP"].startswith(f"{np.mean(values):.1f} ± ")


def test_differences_recover_planted_values_and_holm_spans_every_comparison():
    final = detection_final(planted({"x^3/sqrt(N)": {"box_ap": -0.10, "mask_ap": -0.08}}))
    d = detection_differences(final)
    assert len(d) == 2 * 4 and (d["family_size"] == 8).all() and (d["margin"] == EQUIVALENCE_MARGIN).all()
    assert np.all(d["p_holm"].dropna() >= d["t_p"].dropna())
    row = d[(d["variant"] == "x^3/sqrt(N)") & (d["measure"] == "box_ap")].iloc[0]
    assert row["mean_diff"] == pytest.approx(-10.0, abs=1e-9) and row["n_pairs"] == 3 and row["unit"] == "points"
    assert row["verdict"] == "worse" and "worse than softmax (box AP)" in row["verdict_text"]
    same = d[(d["variant"] == "x^3/14") & (d["measure"] == "mask_ap")].iloc[0]
    assert abs(same["mean_diff"]) < 0.01 and same["verdict"] == "equivalent"
    assert (same["mde"] > 0) and np.isfinite(same["tost_p"])


def test_one_seed_has_no_interval_and_no_holm_family():
    final = detection_final(planted({}, seeds=(0,)))
    d = detection_differences(final)
    assert (d["n_pairs"] == 1).all() and (d["verdict"] == "inconclusive").all() and (d["family_size"] == 0).all()


def test_noisy_pairs_are_inconclusive_with_the_detectable_effect():
    noisy = {"x^3/14": {"box_ap": 0.0, "mask_ap": 0.0}}
    recs = planted(noisy)
    for r, shift in zip([r for r in recs if variant_label(r["config"]["activation"]) == "x^3/14"], (0.04, -0.05, 0.03)):
        r["metrics"][0]["box_ap"] += shift
    d = detection_differences(detection_final(recs))
    row = d[(d["variant"] == "x^3/14") & (d["measure"] == "box_ap")].iloc[0]
    assert row["verdict"] == "inconclusive" and row["mde"] > EQUIVALENCE_MARGIN
    assert "could have detected" in row["verdict_text"]


def test_an_unlearned_task_is_seen_as_unlearned():
    zero = {n: 0.0 for n in NAMES}
    final = detection_final(planted({}, base=zero))
    check = learned(final)
    assert not check["learned"] and check["n"] == 3
    assert learned(detection_final(planted({})))["learned"]


def test_diverged_runs_are_counted_not_averaged():
    final = detection_final(planted({}, diverged={("x^3/sqrt(N)", 1)}))
    t = detection_table(final)
    row = t[(t["variant"] == "x^3/sqrt(N)") & (t["metric"] == "box_ap")].iloc[0]
    assert row["n"] == 2 and row["n_diverged"] == 1
    d = detection_differences(final)
    assert (d.loc[d["variant"] == "x^3/sqrt(N)", "n_pairs"] == 2).all()
    assert (d.loc[d["variant"] == "x^3/sqrt(N)", "n_diverged"] == 1).all()


def test_bad_input_is_a_clear_error():
    recs = planted({})
    recs[0] = {**recs[0], "task": "images"}
    with pytest.raises(ValueError, match="records of the detection task"):
        detection_final(recs)
    with pytest.raises(ValueError, match="detection_final"):
        long_frame(detection_final(planted({})).drop(columns=["variant"]))
    with pytest.raises(ValueError, match="not result records"):
        detection_final([{"x": 1}])


def test_curves_have_one_row_per_run_and_evaluation_with_the_variant():
    recs = planted({"x^3/14": {"mask_ap": -0.04}}, seeds=(0, 1))
    for r in recs:    # a second evaluation, as the book's eval_every=1 records hold
        first = r["metrics"][0]
        r["metrics"] = [{**first, "epoch": 1, "step": 5, "box_ap": first["box_ap"] - 0.1}, {**first, "epoch": 2}]
    curves = detection_curves(recs)
    assert len(curves) == 2 * len(recs)
    assert set(curves["variant"]) == {"softmax", "x^3/sqrt(N)", "x^3/14"}
    soft = curves[(curves["variant"] == "softmax") & (curves["seed"] == 0)].sort_values("epoch")
    assert list(soft["epoch"]) == [1, 2] and soft["box_ap"].iloc[1] - soft["box_ap"].iloc[0] == pytest.approx(0.1)
    fixed = curves[(curves["variant"] == "x^3/14") & (curves["seed"] == 1) & (curves["epoch"] == 2)]
    assert fixed["mask_ap"].iloc[0] == pytest.approx(BASE["mask_ap"] + NOISE[1] - 0.04, abs=2e-3)


def test_detector_facts_read_n_and_parameters_from_the_built_model():
    cfg = detection_proxy("smoke")[0]
    facts = detector_facts(cfg)
    assert facts["N"] == (cfg.image_size // cfg.patch_size) ** 2
    assert facts["strides"] == (cfg.patch_size, 2 * cfg.patch_size, 4 * cfg.patch_size)
    assert facts["anchors"] == tuple(3.0 * s for s in facts["strides"])
    assert facts["vit_params"] + facts["pyramid_params"] + facts["head_params"] == facts["n_params"]
    assert 0 < facts["vit_params"] < facts["n_params"] and facts["in_chans"] == 1 and facts["num_classes"] == 11
    with pytest.raises(ValueError, match="detection config"):
        detector_facts(cfg.__class__(task="images"))


def test_setup_table_reads_each_column_from_its_grid():
    smoke, book = detection_proxy("smoke"), detection_proxy("book")
    table = setup_table(book, smoke).set_index("")
    big, small = table["paper preset (COCO, not run)"], table["book preset"]
    assert "N = 64 tokens" in big["backbone"] and "N = 256 tokens" in small["backbone"]
    steps = book[0].train_subset // book[0].batch_size * book[0].epochs
    assert f"({steps:,} steps" in small["schedule"]
    assert f"{book[0].train_subset:,} training / {book[0].test_subset:,} test scenes" in small["data"]
    assert small["seeds"] == "3 (0, 1, 2)" and big["seeds"] == "1 (0)"
    assert small["activations"] == "softmax, x^3/sqrt(N), x^3/14"
    with pytest.raises(ValueError, match="needs both grids"):
        setup_table([], smoke)
