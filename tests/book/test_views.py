"""The chapters' tables for people: cells, rows and styled views on planted numbers and records."""
import math

import numpy as np
import pandas as pd
import pytest
from support.planted_records import plant
from support.records import make_record, sweep_records, table1_records

from polyattn import analysis as A
from polyattn.analysis import architectures as arch
from polyattn.book import views
from polyattn.book.deliver import Delivered, registered_rows, registered_text
from polyattn.claims.evaluate import evaluate
from polyattn.claims.spec import Arm, Comparison, RegisteredClaim
from polyattn.config import TrainConfig
from polyattn.data import SIZES, DatasetMissing, load_fashion_mnist, split_sizes
from polyattn.display import breakable, typographic
from polyattn.numbers import MISSING, square_root

# --- cells ------------------------------------------------------------------------------------


def test_number_cells_read_n_a_when_missing_and_carry_a_minus_sign():
    assert A.number_cell(None) == MISSING == "n/a" and A.number_cell(float("nan")) == MISSING
    assert A.number_cell(3) == "3" and A.number_cell(np.int64(196)) == "196"
    assert A.number_cell(-0.012345) == "−0.0123"
    assert A.number_cell(0.041, ".2g") == "0.041"
    assert A.number_cell(2.4e-7) == "2.4 × 10⁻⁷"


def test_an_interval_cell_holds_the_estimate_and_its_interval():
    assert A.interval_cell(-0.24, -0.49, 0.01) == "−0.24 [−0.49, +0.01]"
    assert A.interval_cell(1.5, -0.25, 3.25, fmt="+.1f") == "+1.5 [−0.2, +3.2]"
    assert A.interval_cell(0.5, float("nan"), float("nan")) == "+0.50"
    assert A.interval_cell(float("nan"), 0.1, 0.2, missing="not comparable") == "not comparable"


def test_a_bracket_cell_is_the_interval_alone_and_n_a_without_one():
    assert A.bracket_cell(-0.49, 0.01) == "[−0.49, +0.01]"
    assert A.bracket_cell(0.1, float("nan")) == MISSING and A.bracket_cell(None, 0.2) == MISSING


def test_correlation_rows_name_the_norms_and_put_each_interval_in_one_cell():
    corr = pd.DataFrame([{"norm": "attn_fro_over_sqrt_n_mean", "n": 45, "n_within_groups": 9, "rho": -0.412,
                          "ci_low": -0.63, "ci_high": -0.15, "p": 0.0049, "cluster_ci_low": -0.8,
                          "cluster_ci_high": 0.2, "within_rho": 0.05, "within_ci_low": float("nan"),
                          "within_ci_high": float("nan"), "within_p": 0.7}])
    (row,) = A.correlation_rows(corr, {"attn_fro_over_sqrt_n_mean": "‖A‖_F/√N"})
    assert row == {"norm": "‖A‖_F/√N", "runs (activations)": "45 (9)", "ρ [95% CI]": "−0.41 [−0.63, −0.15]",
                   "p": "0.0049", "CI, activations resampled": "[−0.80, +0.20]",
                   "ρ within activations [95% CI]": "+0.05", "p within (permutation)": "0.7"}


def test_verdict_and_recipe_cells():
    assert A.verdict_cell("inconclusive", "1.20") == "inconclusive (MDE 1.20)"
    assert A.verdict_cell("inconclusive") == "inconclusive"
    assert A.verdict_cell("worse", "1.20") == "worse"
    assert A.recipe_label("mini", "deit") == "mini, DeiT-style aug."
    assert A.recipe_label("micro", "none") == "micro, no aug."
    assert A.registered_cell({"Difference [95% CI]": "−0.24 [−0.49, +0.01] points"}) == "−0.24 [−0.49, +0.01] ‡"


def test_typographic_minus_at_the_start_of_a_cell_and_short_texts():
    assert typographic("-0.24 [-0.49, +0.01]") == "−0.24 [−0.49, +0.01]"
    assert typographic("seeds 3-5") == "seeds 3-5"
    assert breakable("xcit_nano_12_p16") == "xcit_\u200bnano_\u200b12_\u200bp16"
    assert square_root(196) == "14" and square_root(192) == "13.86" and square_root(49) == "7"


# --- rows of the results tables ------------------------------------------------------------------

def _table1(extra=()):
    recs = table1_records({"poly:p=3": -0.02, "poly:p=1": 0.0}) + list(extra)
    final = A.final_accuracy(recs)
    return A.summary_table(final), A.paired_difference(final, baseline="softmax", margin=1.0), final


DELTA = "Δ vs softmax (points) [95% CI]"


def test_summary_rows_show_the_planted_differences_and_verdicts():
    summary, diffs, _ = _table1()
    rows = {r["Activation"]: r for r in A.summary_rows(summary, diffs)}
    assert list(rows) == ["softmax", "x³/√N", "x/√N"]
    assert rows["softmax"]["Test accuracy (%)"] == "80.00 ± 0.40"
    assert rows["softmax"][DELTA] == "baseline" and rows["softmax"]["Verdict"] == ""
    cubic = rows["x³/√N"]
    assert cubic[DELTA].startswith("−2.00 [−") and "-" not in cubic[DELTA]
    assert cubic["Verdict"] == "worse" and float(cubic["Holm p"]) < 0.05
    assert rows["x/√N"][DELTA].startswith("+0.00 [−") and rows["x/√N"]["Verdict"] == "equivalent"
    assert set(cubic) == {"Activation", "Test accuracy (%)", DELTA, "Holm p", "TOST p (±1)", "Verdict"}


def test_summary_rows_take_a_registered_comparison_and_show_divergence():
    diverged = [make_record("poly:p=3,c=1", s, accs=(0.5, 0.81), status="ok" if s else "diverged",
                            diverged_step=None if s else 7) for s in range(3)]
    summary, diffs, _ = _table1(diverged)
    claims = {"poly:p=3": {"Difference [95% CI]": "−1.50 [−2.00, −1.00] points", "Holm p": "0.012",
                           "TOST p": "0.91", "Result": "worse"}}
    rows = {r["Activation"]: r for r in A.summary_rows(summary, diffs, claims)}
    assert rows["x³/√N"][DELTA] == "−1.50 [−2.00, −1.00] ‡"
    assert (rows["x³/√N"]["Holm p"], rows["x³/√N"]["TOST p (±1)"], rows["x³/√N"]["Verdict"]) == \
        ("0.012", "0.91", "worse")
    assert rows["x/√N"]["Verdict"] == "equivalent"        # the table's own rows keep their numbers
    assert rows["x³ (unscaled)"]["Test accuracy (%)"].endswith("(diverged in 1 of 3)")


def test_per_seed_rows_name_the_activation_and_the_recipe():
    _, _, final = _table1()
    rows = A.per_seed_rows(final)
    assert rows[0] == {"Activation": "softmax", "seed 0": "80.00", "seed 1": "80.40", "seed 2": "79.60"}
    recs = [make_record("softmax", s, accs=(0.7,), model="mini", augment="deit") for s in (0, 1)]
    recs.append(make_record("poly:p=3", 0, accs=(0.6,), model="mini", augment="deit"))
    rows = A.per_seed_rows(A.final_accuracy(recs), index=["model", "augment", "activation"])
    assert rows[1] == {"Model, recipe": "mini, DeiT-style aug.", "Activation": "x³/√N", "seed 0": "60.00",
                       "seed 1": "–"}


def test_difference_rows_label_variants_and_state_the_margin():
    diffs = pd.DataFrame([
        {"variant": "x^3/sqrt(N)", "n_pairs": 3, "mean_diff": -0.5, "ci_low": -1.2, "ci_high": 0.2, "p_holm": 0.04,
         "tost_p": 0.2, "mde": 1.3, "verdict": "inconclusive"},
        {"variant": "x^3/14", "n_pairs": 0, "mean_diff": np.nan, "ci_low": np.nan, "ci_high": np.nan,
         "p_holm": np.nan, "tost_p": np.nan, "mde": np.nan, "verdict": "not comparable"}])
    rows = A.difference_rows(diffs, ["variant"], "minus softmax (points)", margin=1.5)
    assert rows[0] == {"variant": "x³/√N", "seed pairs": 3, "minus softmax (points) [95% CI]": "−0.50 [−1.20, +0.20]",
                       "Holm p": "0.04", "TOST p (±1.5)": "0.2", "MDE": "1.30", "verdict": "inconclusive"}
    assert rows[1]["minus softmax (points) [95% CI]"] == "not comparable" and rows[1]["Holm p"] == MISSING
    assert "verdict" not in A.difference_rows(diffs.drop(columns="verdict"), ["variant"], "d", 1.0)[0]


def test_best_constant_rows_put_one_length_in_each_column():
    planted = {7: 1 / math.sqrt(17), 4: 1 / math.sqrt(50), 2: 1 / math.sqrt(197)}
    bc = A.best_constant(A.final_accuracy(sweep_records(planted)), n_boot=50)
    rows = {r[""]: r for r in A.best_constant_rows(bc)}
    assert list(rows["best c"]) == ["", "N = 17", "N = 50", "N = 197"]
    assert rows["best c"]["N = 17"] == "1/8"
    assert rows["1/√N"]["N = 17"] == f"{1 / math.sqrt(17):.3g}"
    assert rows["interpolated c*"]["N = 50"] == f"{1 / math.sqrt(50):.3g}"
    assert set(rows["interval excludes 0"].values()) - {"interval excludes 0"} <= {"yes", "no", "–"}
    assert "its test accuracy (%, mean ± sd)" in rows
    margin = rows["margin over the runner-up, points [paired 95% CI]"]["N = 17"]
    assert margin.startswith("+") and "[" in margin and "-" not in margin


def test_architecture_rows_and_the_n_of_an_architecture():
    table = pd.DataFrame([
        {"architecture": "swin", "n_rule": "", "model": "swin_micro_w4", "N": 16, "1/sqrt(N)": 0.25},
        {"architecture": "xcit", "n_rule": "channels", "model": "xcit_micro", "N": 8, "1/sqrt(N)": 1 / math.sqrt(8)},
        {"architecture": "xcit", "n_rule": "tokens", "model": "xcit_micro", "N": 49, "1/sqrt(N)": 1 / 7}])
    rows = arch.architecture_rows(table, ["model", "N", "1/sqrt(N)"], {"1/sqrt(N)": "1/√N"})
    assert [r[""] for r in rows] == ["model", "N", "1/√N"]
    assert list(rows[0])[1:] == ["Swin", "XCiT (N = channels)", "XCiT (N = tokens)"]
    assert rows[0]["Swin"] == "swin_\u200bmicro_\u200bw4"
    assert rows[1]["XCiT (N = tokens)"] == "49" and rows[2]["XCiT (N = channels)"] == "0.354"
    n, row = arch.attention_n(table, "xcit", "tokens")
    assert n == 49 and row["model"] == "xcit_micro"
    with pytest.raises(ValueError, match="no row for 'vit'"):
        arch.attention_n(table, "vit")


# --- styled views ----------------------------------------------------------------------------------

def test_views_style_the_rows_and_note_registered_comparisons():
    summary, diffs, final = _table1()
    plain = views.summary_view(summary, diffs, caption="Table 1")
    assert plain.caption == "Table 1"
    assert plain.data.to_dict("records") == A.summary_rows(summary, diffs)
    claims = {"poly:p=3": {"Difference [95% CI]": "−1.50 [−2.00, −1.00] points", "Holm p": "0.012",
                           "TOST p": "0.91", "Result": "worse"}}
    marked = views.summary_view(summary, diffs, caption="Table 1", claims=claims)
    assert marked.caption == f"Table 1; {views.REGISTERED_NOTE}"
    assert views.summary_view(summary, diffs, claims={"sigmoid": claims["poly:p=3"]}).caption is None
    assert views.per_seed_view(final, caption="seeds").data.to_dict("records") == A.per_seed_rows(final)


# --- comparisons of a registered claim, as the chapters show them ---------------------------------

@pytest.fixture
def delivered(tmp_path, monkeypatch):
    from polyattn import experiments

    accs = {"softmax": [0.80, 0.81, 0.79], "poly:p=3": [0.78, 0.79, 0.77], "poly:p=3,c=1": [0.70, 0.72, 0.69]}
    configs = [plant(tmp_path, TrainConfig(experiment="unit_views", activation=a, seed=s, preset="smoke"),
                     [{"epoch": 1, "test_acc": v}]) for a, vals in accs.items() for s, v in enumerate(vals)]
    monkeypatch.setitem(experiments.GRIDS, "unit_views",
                        lambda preset, seeds: [c for c in configs if seeds is None or c.seed in seeds])

    def cmp(cid, cand, base, **kw):
        return Comparison(cid, f"{cid} label", Arm("unit_views", cand), Arm("unit_views", base), "equivalent", **kw)

    claim = RegisteredClaim("unit", "unit claim", "test", "04_vit", margin=1.0, comparisons=(
        cmp("main", {"activation": "poly:p=3"}, {"activation": "softmax"}),
        cmp("vs_cubic", {"activation": "poly:p=3,c=1"}, {"activation": "poly:p=3"}),
        cmp("pooled", {"activation": "poly:p=3,c=1"}, {"activation": "softmax"}, pool_over=("model",))))
    return Delivered(evaluate(claim, root=tmp_path, preset="smoke"), "", None)


def test_registered_rows_keep_the_grids_comparisons_against_softmax(delivered):
    rows = registered_rows("unit_views", [delivered])
    assert list(rows) == ["poly:p=3"]
    row = rows["poly:p=3"]
    assert row["claim"] == "unit" and row["Comparison"] == "main label" and row["Pairs"] == "3 of 3"
    assert row["Difference [95% CI]"].startswith("−2.00 [")
    assert list(registered_rows("unit_views", [delivered], pooled=True)) == ["poly:p=3,c=1"]
    assert registered_rows("other_grid", [delivered]) == {}
    assert registered_rows("unit_views", [delivered], preset="smoke") == {}


def test_registered_text_states_one_comparison_of_the_claim(delivered):
    text = registered_text(delivered, "main")
    assert text.startswith("main label: −2.00 [")
    assert "(3 of 3 seed pairs, Holm p " in text and "against ±1)" in text
    assert text.endswith(", " + delivered.verdict.comparisons[0].result + delivered.verdict.comparisons[0].qualifier)
    with pytest.raises(ValueError, match="has no comparison 'nope'; its comparisons: main, vs_cubic, pooled"):
        registered_text(delivered, "nope")


# --- the dataset's size ---------------------------------------------------------------------------

def test_split_sizes_are_the_subsets_or_the_whole_splits():
    assert split_sizes("fashion_mnist") == SIZES["fashion_mnist"]
    assert split_sizes("fashion_mnist", 5000, 2000) == (5000, 2000)
    assert split_sizes("fashion_mnist", 10 ** 9, None) == SIZES["fashion_mnist"]
    with pytest.raises(DatasetMissing, match="unknown in-memory dataset 'imagenet'"):
        split_sizes("imagenet")


def test_the_sizes_are_those_of_the_files_on_disk():
    try:
        train_x, _, test_x, _ = load_fashion_mnist()
    except DatasetMissing:
        pytest.skip("Fashion-MNIST is not on this machine")
    assert (len(train_x), len(test_x)) == SIZES["fashion_mnist"]


def test_difference_rows_refuse_a_key_named_twice():
    # a renamed column that already existed leaves two of that name: each cell would hold a row
    diffs = pd.DataFrame([{"variant": "x^3/14", "measure": "box_ap", "metric": "ap", "label": "box AP", "n_pairs": 3,
                           "mean_diff": 0.2, "ci_low": -1.0, "ci_high": 1.4, "p_holm": 0.5, "tost_p": 0.04, "mde": 1.1}])
    with pytest.raises(ValueError, match="more than once"):
        A.difference_rows(diffs.rename(columns={"label": "metric"}), ["variant", "metric"], "d", 1.0)
    rows = A.difference_rows(diffs.drop(columns="metric").rename(columns={"label": "metric"}), ["variant", "metric"],
                             "d", 1.0)
    assert rows[0]["metric"] == "box AP"


def test_stored_of_counts_only_valid_stored_records(tmp_path, monkeypatch):
    from polyattn import runs
    from polyattn.book.deliver import stored_of
    from polyattn.config import TrainConfig

    configs = [TrainConfig(experiment="unit", preset="book", seed=s) for s in range(3)]
    from polyattn.book import deliver

    planted = lambda c, root=None: {"seed": c.seed} if c.seed < 2 else None  # noqa: E731
    monkeypatch.setattr(runs, "stored", planted)
    monkeypatch.setattr(deliver, "stored", planted)  # the name the page module reads
    assert stored_of(configs) == "2 of 3"
