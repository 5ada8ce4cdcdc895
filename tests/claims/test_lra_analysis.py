"""Chapter 05's tables on synthetic LRA records: planted differences come back out."""
from __future__ import annotations

import numpy as np
import pytest

from polyattn.analysis import comparison_verdict
from polyattn.analysis.lra import (
    above_chance,
    length_accuracy,
    length_edges,
    length_table,
    lra_epochs,
    lra_final,
    variant_difference,
    wall_table,
)
from polyattn.experiments.lra import LRA_VARIANTS, lra
from polyattn.results import config_dict
from polyattn.tasks.base import ACCURACY, TEST_LOSS
from polyattn.tasks.lra import VAL_ACCURACY

LABELS = [v[0] for v in LRA_VARIANTS]


def make_record(cfg, accs, wall_s=10.0, lengths=None, correct=None, status="ok"):
    metrics = [{"epoch": i + 1, "step": 10 * (i + 1), "train_loss": 1.0, "train_acc": a, "test_loss": 1.0,
                "test_acc": a, "val_acc": a, "lr": 1e-3, "wall_s": wall_s * (i + 1) / len(accs)}
               for i, a in enumerate(accs)]
    rec = {"schema": 1, "experiment": "lra", "config": config_dict(cfg), "config_hash": cfg.hash, "seed": cfg.seed,
           "preset": "smoke", "status": status, "diverged_step": None, "task": "lra", "seq_lens": {"seq_len": 64},
           "metrics_spec": [m.as_dict() for m in (ACCURACY, VAL_ACCURACY, TEST_LOSS)], "metrics": metrics,
           "probes": [], "n_params": 1000,
           "provenance": {"git_commit": "abc", "git_dirty": False, "wall_s": wall_s}}
    if lengths is not None:
        rec["final"] = {"test_lengths": list(lengths), "test_correct": "".join("1" if c else "0" for c in correct),
                        "test_pred": "0" * len(lengths), "length_bins": []}
    return rec


def planted(diff_of, base=0.6, tasks=("listops", "image")):
    """Smoke configs of ``tasks``; each variant's final accuracy is softmax's + its planted difference."""
    recs = []
    noise = {0: 0.0, 1: 0.01, 2: -0.01}
    for s in (0, 1, 2):
        for cfg in lra("smoke", seeds=[s], tasks=tasks):
            from polyattn.experiments.lra import variant_label
            label = variant_label(cfg)
            jitter = 0.001 * (s - 1) if label != "softmax" else 0.0
            acc = base + noise[s] + diff_of.get(label, 0.0) + jitter
            recs.append(make_record(cfg, (0.3, acc), wall_s=10.0 + LABELS.index(label)))
    return recs


def test_final_frame_names_task_and_variant():
    final = lra_final(planted({}))
    assert set(final["lra_task"]) == {"listops", "image"}
    assert set(final["variant"]) == set(LABELS)
    assert set(final.loc[final["variant"] == "x^3/sqrt(N), N padded", "n_mode"]) == {"padded"}
    epochs = lra_epochs(planted({}))
    assert len(epochs) == 2 * len(final) and {"lra_task", "variant", "val_acc"} <= set(epochs.columns)


def test_variant_difference_recovers_planted_differences_and_holm_spans_the_table():
    final = lra_final(planted({"x^3/14": -0.10, "x/sqrt(N)": 0.0005}))
    d = variant_difference(final, "softmax", margin=2.0)
    assert len(d) == 2 * (len(LABELS) - 1) and d["family_size"].iloc[0] == len(d)
    row = d[(d["lra_task"] == "listops") & (d["variant"] == "x^3/14")].iloc[0]
    assert row["mean_diff"] == pytest.approx(-10.0, abs=1e-6) and row["n_pairs"] == 3
    assert comparison_verdict(row).form == "worse"
    near = d[(d["lra_task"] == "image") & (d["variant"] == "x/sqrt(N)")].iloc[0]
    assert comparison_verdict(near).form == "equivalent"
    assert np.all(d["p_holm"].dropna() >= d["t_p"].dropna())


def test_variant_difference_against_another_baseline():
    final = lra_final(planted({"x^3/sqrt(N), N padded": -0.05}, tasks=("listops",)))
    d = variant_difference(final, "x^3/sqrt(N), N valid", compare=["x^3/sqrt(N), N padded", "x^3/14"])
    assert list(d["variant"]) == ["x^3/sqrt(N), N padded", "x^3/14"]
    assert d.iloc[0]["mean_diff"] == pytest.approx(-5.0, abs=1e-6)
    with pytest.raises(ValueError, match="baseline"):
        variant_difference(final, "no such variant")


def test_above_chance_uses_the_softmax_interval():
    final = lra_final(planted({}, base=0.6))
    t = above_chance(final, {"listops": 0.5, "image": 0.65}).set_index("lra_task")
    assert bool(t.loc["listops", "learned"]) and not bool(t.loc["image", "learned"])
    assert t.loc["listops", "mean"] == pytest.approx(0.6)


def test_length_bins_and_accuracy_per_bin():
    assert length_edges([5] * 10) == [5, 6]
    assert length_edges(list(range(100)), 4) == [0, 25, 50, 75, 100]
    lengths = list(range(10, 110))
    recs = []
    for s in (0, 1):
        cfg = lra("smoke", seeds=[s], tasks=("listops",))[0]
        correct = [x < 60 for x in lengths]          # right on short examples only
        recs.append(make_record(cfg, (0.5,), lengths=lengths, correct=correct))
    acc = length_accuracy(recs, bins=2)
    assert acc["bin"].unique().tolist() == [0, 1] and set(acc["n"]) == {50}
    assert acc.groupby("bin")["acc"].mean().tolist() == [1.0, 0.0]
    table = length_table(acc)
    assert table["acc"].tolist() == [100.0, 0.0] and table["bin_label"].tolist() == ["10-59", "60-109"]
    # records without per-example answers are left out
    assert length_accuracy([make_record(lra("smoke", tasks=("listops",))[0], (0.5,))]).empty


def test_wall_table():
    final = lra_final(planted({}))
    w = wall_table(final, tasks=["image", "listops"], variants=LABELS)
    assert list(w.index) == ["image", "listops"] and list(w.columns) == LABELS
    assert w.loc["image", "sigmoid"] == pytest.approx(15.0)


def test_pathfinder_budget_table_separates_a_learned_model_from_chance():
    from polyattn.analysis.lra import pathfinder_budget_table
    from polyattn.experiments.lra import PATHFINDER_BUDGET, budget_label, pathfinder_budget

    accs = {"transformer (softmax)": [0.50, 0.51, 0.49], "transformer (softmax), no distractors": [0.50, 0.50, 0.50],
            "CNN reference": [0.80, 0.82, 0.78]}
    configs = pathfinder_budget("smoke", [0, 1, 2])
    records = [make_record(c, [0.5, accs[budget_label(c)][c.seed]], wall_s=5.0 + c.seed) for c in configs]
    table = pathfinder_budget_table(records, chance=0.5).set_index("model")
    assert list(table.index) == [label for label, _, _ in PATHFINDER_BUDGET]
    assert table.loc["CNN reference", "mean"] == pytest.approx(0.80)
    assert table.loc["CNN reference", "learned"] and table.loc["CNN reference", "ci_low"] > 0.5
    assert not table.loc["transformer (softmax)", "learned"]
    assert not table.loc["transformer (softmax), no distractors", "learned"]
    assert (table["seeds"] == 3).all() and table.loc["CNN reference", "wall_s"] == pytest.approx(6.0)
    assert (table["images seen"] == configs[0].train_subset * configs[0].epochs).all()
    one = pathfinder_budget_table(records[:3], chance=0.5).set_index("model")   # seed 0 only: Wilson interval
    assert (one["seeds"] == 1).all() and one.loc["CNN reference", "learned"]
