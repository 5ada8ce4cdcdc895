"""Recall accuracy against the guessing and copy-plateau levels (chapter 07's MQAR section)."""
import pandas as pd
import pytest

from polyattn.analysis import recall
from polyattn.experiments.mqar import causal_mqar


def test_levels_follow_the_vocabulary_and_the_pairs():
    cfg = causal_mqar("book", seeds=[0])[0]
    got = recall.levels(cfg)
    assert [(n, L, K) for n, L, K, _, _ in got] == [("L64", 64, 4), ("L128", 128, 8), ("L256", 256, 16)]
    assert got[0][3] == pytest.approx(2 / 512) and got[2][4] == pytest.approx(1 / 16)


@pytest.mark.parametrize("low,high,level", [
    (0.001, 0.003, 0), (0.0, 0.001, 0), (0.01, 0.05, 1), (0.10, 0.19, 1),
    (0.20, 0.30, 2), (0.30, 0.40, 2), (0.32, 0.40, 3), (0.40, 0.90, 3)])
def test_level_of_places_an_interval(low, high, level):
    assert recall.level_of(low, high, guess=0.004, plateau=0.25) == recall.LEVELS[level]


def test_recall_table_reads_each_test_set_per_variant():
    cfg = causal_mqar("book", seeds=[0])[0]
    final = pd.DataFrame([{"activation": v, "seed": s, "acc_L64": a + 0.002 * s, "acc_L128": 0.125, "acc_L256": float("nan")}
                          for v, a in (("softmax", 0.24), ("x^3/sqrt(i+1)", 0.009)) for s in (0, 1, 2)])
    t = recall.recall_table(final, cfg).set_index(["variant", "test_set"])
    assert t.loc[("softmax", "L64"), "level"] == "at the copy plateau"
    assert t.loc[("x^3/sqrt(i+1)", "L64"), "level"] == "above guessing, below the copy plateau"
    assert t.loc[("softmax", "L128"), "mean"] == pytest.approx(0.125) and t.loc[("softmax", "L256"), "level"] == "diverged"


def test_seeds_above_plateau_counts_the_runs_that_learned_recall():
    cfg = causal_mqar("book", seeds=[0])[0]
    final = pd.DataFrame([{"activation": v, "seed": s, "acc_L64": a, "acc_L128": 0.1, "acc_L256": 0.05}
                          for v, accs in (("softmax", (0.24, 0.26, 0.22)), ("x^3/14", (0.2, 1.0, 0.9)))
                          for s, a in enumerate(accs)])
    got = recall.seeds_above_plateau(final, cfg)
    assert got["softmax"][0] == (64, 0, 3, pytest.approx(0.26))
    assert got["x^3/14"] == [(64, 2, 3, 1.0), (128, 0, 3, pytest.approx(0.1)), (256, 0, 3, pytest.approx(0.05))]


def test_a_variant_split_across_the_plateau_is_read_per_seed_not_as_an_interval():
    """Two seeds at recall and one at the plateau: the t-interval reaches below zero and would read
    as guessing; the level is the split, with the seeds' range and how many reached recall."""
    cfg = causal_mqar("book", seeds=[0])[0]
    final = pd.DataFrame([{"activation": "softmax", "seed": s, "acc_L64": a, "acc_L128": 0.5, "acc_L256": 0.9}
                          for s, a in enumerate((1.0, 0.99, 0.26))])
    t = recall.recall_table(final, cfg).set_index("test_set")
    row = t.loc["L64"]
    assert row["ci_low"] < 0.004 and row["level"] == recall.SPLIT
    assert (row["above"], row["n"], row["seed_min"], row["seed_max"]) == (2, 3, pytest.approx(0.26), 1.0)
    assert t.loc["L256", "level"] == "above the copy plateau" and t.loc["L256", "above"] == 3
