"""Chapter 04's page module on planted ViT records: the results tables (the register's rows marked,
the rest description without a result word), the scale and power numbers, Table 2's cells and
pooled row, the figures' panels and legends, the longer sweep's flatness, and the tables of the
converged, unclipped and learned-scale runs."""
import math
from types import SimpleNamespace

import matplotlib
import pytest
from support.records import make_record, table1_records

from polyattn.book.deliver import styled
from polyattn.pages import vit as vp

matplotlib.use("Agg")

#: words of a verdict that a description cell must never hold
VERDICT_WORDS = ("equivalent", "worse", "better", "inconclusive", "supported")


def _registered_row(pairs="3 of 3", diff="−9.99 [−10.50, −9.40] points", result="worse"):
    return {"Pairs": pairs, "Difference [95% CI]": diff, "Holm p": "0.01", "TOST p": "0.9", "Result": result}


# --- results tables ---------------------------------------------------------------------------------------


def test_result_rows_find_the_planted_differences_and_write_no_result_for_description():
    records = table1_records({"poly:p=3": -0.02, "sigmoid": 0.01})
    rows = {r["Activation"]: r for r in vp.result_rows(records)}
    assert rows["softmax"]["Δ vs softmax, points [95% CI]"] == "baseline"
    assert rows["x³/√N"]["Δ vs softmax, points [95% CI]"].startswith("−2.00 [")
    assert rows["sigmoid"]["Δ vs softmax, points [95% CI]"].startswith("+1.00 [")
    assert rows["x³/√N"]["Seed pairs"] == "3"
    # no registered claim: the result column is dropped, and no cell holds a verdict word
    assert all("Register's result" not in r for r in rows.values())
    assert not any(w in str(v) for r in rows.values() for v in r.values() for w in VERDICT_WORDS)


def test_a_registered_comparison_replaces_the_pages_own_and_is_marked():
    records = table1_records({"poly:p=3": -0.02, "sigmoid": 0.01})
    rows = {r["Activation"]: r for r in vp.result_rows(records, {"poly:p=3": _registered_row()})}
    assert rows["x³/√N"]["Δ vs softmax, points [95% CI]"] == "−9.99 [−10.50, −9.40] ‡"
    assert rows["x³/√N"]["Register's result"] == "worse" and rows["x³/√N"]["Seed pairs"] == "3 of 3"
    assert rows["sigmoid"]["Register's result"] == "" and rows["sigmoid"]["Δ vs softmax, points [95% CI]"].startswith("+1.00")
    caption = vp.results_table(records, {"poly:p=3": _registered_row()}, "planted").caption
    assert "‡" in caption and "description" in caption


def test_a_diverged_run_is_counted_apart_and_the_order_is_the_grids():
    records = table1_records({"poly:p=3": -0.02, "relu_n": 0.0})
    records.append(make_record("poly:p=3", 3, accs=(math.nan,), status="diverged", diverged_step=5))
    rows = vp.result_rows(records, order=("relu_n", "softmax", "poly:p=3"))
    assert [r["Activation"] for r in rows] == ["ReLU/N", "softmax", "x³/√N"]
    assert rows[2]["Test accuracy (%), mean ± sd"].endswith("(1 diverged)")


def test_a_page_without_runs_shows_no_table():
    assert vp.results_table([], {}) is None and vp.per_seed_table([], "x") is None
    assert vp.scale_table([], 50) is None and vp.table2_difference_table([]) is None
    assert vp.curves_figure([], vp.TABLE1_GROUPS, "smoke") is None
    assert set(vp.scale_numbers([]).values()) <= {"none (not run)", "not run"}


# --- how much the seeds can say, and the cubic's scale ----------------------------------------------------


def test_power_numbers_follow_the_number_of_seeds():
    numbers = vp.power_numbers(table1_records({"poly:p=3": -0.02}))
    assert numbers["ch04_t1_seeds"] == "3" and numbers["ch04_t_mult"] == "4.30"     # t(0.975, 2)
    assert numbers["ch04_wilcoxon_p"] == "0.250" and numbers["ch04_wilcoxon_n"] == "6"
    assert float(numbers["ch04_mde_low"]) > 0
    one = vp.power_numbers(table1_records({"poly:p=3": -0.02}, seeds=(0,), noise=(0.0,)))
    assert one["ch04_t_mult"] == "undefined (one seed)" and one["ch04_mde_low"] == "not computed"


def test_the_scale_comparisons_are_against_the_scaled_cubic_and_count_intervals_holding_zero():
    # x³/14 planted 1 point below x³/√N with tiny noise (interval excludes 0); x³ equal to it
    records = table1_records({"poly:p=3": 0.0, "poly:p=3,c=1/14": -0.01, "poly:p=3,c=1": 0.0})
    numbers = vp.scale_numbers(records)
    assert numbers["ch04_fixed_diff"].startswith("−1.00 [") and numbers["ch04_fixed_diff"].endswith(" points")
    assert numbers["ch04_scale_cover"] == "1 of 2"
    rows = vp.scale_table(records, 50).data.to_dict("records")
    assert [r["Comparison"] for r in rows] == ["x³/14 − x³/√50", "x³ (unscaled) − x³/√50"]
    assert "Result" not in rows[0] and "description" in vp.scale_table(records, 50).caption


# --- Table 2 ------------------------------------------------------------------------------------------------


def _table2_records(diff=-0.03):
    recs = []
    for model in ("micro", "mini"):
        for augment in ("none", "deit"):
            for s, eps in zip((0, 1, 2), (0.0, 0.004, -0.004)):
                recs.append(make_record("softmax", s, accs=(0.7 + eps,), model=model, augment=augment,
                                        experiment="vit_table2"))
                recs.append(make_record("poly:p=3", s, accs=(0.7 + eps + diff + 0.001 * s,), model=model,
                                        augment=augment, experiment="vit_table2"))
    return recs


def test_table2_shows_each_cell_as_description_and_the_pooled_row_from_the_register():
    records = _table2_records()
    rows = vp.table2_difference_table(records).data.to_dict("records")
    assert len(rows) == 5 and rows[-1]["Cells"] == "pooled over 4 cells"
    assert all(r["Δ x³/√N − softmax, points [95% CI]"].startswith("−2.9") for r in rows[:4])
    assert "Register's result" not in rows[0]
    registered = vp.table2_difference_table(records, {"poly:p=3": _registered_row("12 of 12")}).data.to_dict("records")
    assert registered[-1]["Register's result"] == "worse" and registered[-1]["Seed pairs"] == "12 of 12"
    assert registered[-1]["Δ x³/√N − softmax, points [95% CI]"].endswith("‡")
    assert all(r["Register's result"] == "" for r in registered[:4])
    numbers = vp.table2_numbers(records)
    assert numbers["ch04_t2_cell_low"] == numbers["ch04_t2_cell_high"] == "−2.90"
    assert float(numbers["ch04_t2_f_p"]) > 0.5                       # the planted cells agree
    acc = vp.table2_accuracy_table(records, "planted grid").data
    assert list(acc.columns) == ["Model, recipe", "softmax (%)", "x³/√N (%)"] and len(acc) == 4


# --- figures ------------------------------------------------------------------------------------------------


def test_the_curves_have_a_few_lines_a_panel_named_for_readers_and_no_blank_panel():
    records = table1_records({a: -0.01 for a in ("poly:p=3", "poly:p=3,c=1/14", "poly:p=1", "sigmoid")})
    fig = vp.curves_figure(records, vp.TABLE1_GROUPS, "smoke")
    assert len(fig.axes) == 2                                     # the wider family has no run: no panel
    for ax in fig.axes:
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert len(labels) <= 6 and "softmax" in labels
        assert not any(":" in lbl or "poly" in lbl for lbl in labels)    # never a raw spec
    assert "x³/14" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert all(len(specs) <= 6 for _, specs in vp.TABLE1_GROUPS + vp.CONVERGED_GROUPS)


def test_the_table2_figure_has_one_legend_entry_per_activation():
    fig = vp.table2_figure(_table2_records(), "smoke")
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["softmax", "x³/√N"]


# --- the scale sweeps -------------------------------------------------------------------------------------


def _fig1_numbers(long_decides=False, complete=("17", "50")):
    numbers = {"deciding sweep": "vit_scale_long" if long_decides else "vit_scale",
               "deciding sweep scale": "1,000 images for 5 epochs", "long sweep runs stored": 30,
               "long sweep runs planned": 45, "long sweep scale": "20,000 images (10,000 at $N = 197$) for 10 epochs",
               "flat spread (points)": 1.0, "best c at N = 17": "2", "best c at N = 50": "8",
               "slope": -0.12, "slope CI low": -0.71, "slope CI high": 0.88}
    for n, spread in (("17", 1.5), ("50", 0.24)):
        if n not in complete:
            continue
        numbers.update({f"long sweep N = {n}: spread (points)": spread,
                        f"long sweep N = {n}: flat": "flat" if spread < 1 else "not flat",
                        f"long sweep N = {n}: largest seed sd (points)": 0.5,
                        f"long sweep N = {n}: c = 1/8 (%)": 84.8, f"long sweep N = {n}: c = 32 (%)": 84.8 - spread})
    if complete:
        numbers.update({"long sweep complete lengths": ", ".join(complete), "long sweep flattest N": 50,
                        "long sweep flattest spread (points)": 0.24, "long sweep flattest best c": "1/8",
                        "long sweep flattest worst c": "32", "long sweep flattest best accuracy (%)": 84.8,
                        "long sweep flattest worst accuracy (%)": 84.56,
                        "long sweep flattest largest seed sd (points)": 0.5, "long sweep flattest reading": "flat"})
    return numbers


def test_the_longer_sweep_table_states_each_complete_lengths_spread_and_reading():
    rows = vp.long_sweep_table(_fig1_numbers()).data.to_dict("records")
    assert [r[""] for r in rows][:2] == ["c = 1/8, mean test accuracy (%)", "c = 32, mean test accuracy (%)"]
    reading = rows[-1]
    assert reading["N = 17"] == "not flat" and reading["N = 50"] == "flat"
    assert rows[2]["N = 50"] == "0.24" and "$" not in vp.long_sweep_table(_fig1_numbers()).caption
    assert vp.long_sweep_table(_fig1_numbers(complete=())) is None


def test_the_longer_sweeps_numbers_name_its_flattest_length():
    numbers = vp.long_sweep_numbers(_fig1_numbers())
    assert numbers["ch04_flat_n"] == "50" and numbers["ch04_flat_spread"] == "0.24"
    assert numbers["ch04_flat_worst_acc"] == "84.6%" and numbers["ch04_flat_reading"] == "flat"
    assert numbers["ch04_long_spreads"] == "1.50 points at N = 17 and 0.24 points at N = 50"
    assert numbers["ch04_long_stored"] == "30 of 45" and numbers["ch04_long_ratio"] == "256"
    empty = vp.long_sweep_numbers(_fig1_numbers(complete=()))
    assert empty["ch04_flat_n"] == "not stored" and empty["ch04_long_spreads"] == "nothing yet"


def test_the_deciding_sweep_is_named_for_readers():
    short, long_ = vp.fig1_numbers(_fig1_numbers()), vp.fig1_numbers(_fig1_numbers(long_decides=True))
    assert short["ch04_deciding_sweep"] == "the short sweep" and long_["ch04_deciding_sweep"] == "the longer sweep"
    assert short["ch04_best_by_length"] == "2 at N = 17, 8 at N = 50"
    assert short["ch04_slope"] == "−0.12" and short["ch04_slope_ci"] == "−0.71 to +0.88"


# --- the register's tables ------------------------------------------------------------------------------------


def test_a_claim_table_drops_the_comparisons_without_two_stored_pairs(monkeypatch):
    columns = ["Comparison", "Pairs", "Result"]
    rows = {"a": {"Comparison": "a − softmax", "Pairs": "1 of 5", "Result": "inconclusive", "Role": "primary"},
            "b": {"Comparison": "b − softmax", "Pairs": "2 of 5", "Result": "inconclusive", "Role": "primary"}}
    delivered = SimpleNamespace(verdict=SimpleNamespace(comparisons=[SimpleNamespace(n=1), SimpleNamespace(n=2)]),
                                table=styled([{k: "" for k in columns}], "the claim"))
    monkeypatch.setattr(vp, "claim_rows", lambda d: rows)
    kept = vp.claim_table(delivered)
    assert kept.data.to_dict("records") == [{"Comparison": "b − softmax", "Pairs": "2 of 5", "Result": "inconclusive"}]
    assert kept.caption == "the claim; left out until 2 seed pairs are stored: a − softmax"
    assert vp.claim_table(delivered, min_pairs=1).caption == "the claim"
    delivered.verdict.comparisons = [SimpleNamespace(n=0), SimpleNamespace(n=1)]
    assert vp.claim_table(delivered) is None


# --- converged, unclipped and learned-scale runs ----------------------------------------------------------


def test_the_plateau_is_the_largest_move_over_the_last_two_epochs():
    records = [make_record("softmax", 0, accs=(0.5, 0.80, 0.81, 0.812)), make_record("poly:p=3", 0, accs=(0.70, 0.702, 0.705))]
    assert vp.plateau(records) == pytest.approx(1.2)
    assert math.isnan(vp.plateau([make_record("softmax", 0, accs=(0.5, 0.6))]))


def test_the_unclipped_tables_show_divergence_and_the_clipped_accuracy_beside():
    unclipped = [make_record("softmax", 0, accs=(0.5, 0.78)), make_record("softmax", 1, accs=(0.5, 0.80)),
                 make_record("poly:p=3,c=1", 0, accs=(0.5, math.nan), status="diverged", diverged_step=7)]
    clipped = [make_record("softmax", s, accs=(0.5, a)) for s, a in ((0, 0.79), (1, 0.81))]
    rows = vp.unclipped_table(unclipped, clipped, "smoke").data.to_dict("records")
    assert rows[0] == {"Activation": "softmax", "Runs": 2, "Diverged": 0, "Without clipping (%)": "79.00 ± 1.41",
                       "With clipping (%)": "80.00 ± 1.41"}
    assert rows[1]["Diverged"] == 1 and rows[1]["Without clipping (%)"] == "–"
    runs = vp.unclipped_runs_table(unclipped).data.to_dict("records")
    assert runs[2]["Final test accuracy (%)"] == "diverged at step 7" and runs[0]["Final test accuracy (%)"] == "78.00"
    assert vp.unclipped_converged_numbers(unclipped, 15) == {"ch04_uconv_stored": "3 of 15", "ch04_uconv_diverged": "1"}


def test_the_learned_scales_are_summarised_per_layer():
    records = [make_record("poly_learned:p=2", s) for s in (0, 1)]
    records[0]["learned_head_scales"] = [[0.9, 1.0], [0.8, 1.1]]
    records[1]["learned_head_scales"] = [[1.0, 1.0], [0.7, 1.0]]
    rows = vp.learned_scale_table(records).data.to_dict("records")
    assert rows == [{"Layer": 1, "Mean g": "0.97", "Smallest": "0.90", "Largest": "1.00"},
                    {"Layer": 2, "Mean g": "0.90", "Smallest": "0.70", "Largest": "1.10"}]
    assert vp.learned_scale_numbers(records, 5) == {"ch04_quad_stored": "2 of 5", "ch04_quad_low": "0.70",
                                                    "ch04_quad_high": "1.10"}
    assert vp.learned_scale_table([make_record("poly_learned:p=2", 0)]) is None


def test_the_ratio_of_a_grid_of_constants():
    assert vp._ratio(("1/8", "1/2", "2", "8", "32")) == 256


def test_the_closing_table_leaves_out_claims_without_paired_runs_and_names_them(monkeypatch):
    from polyattn.book import deliver as deliver_module

    table = ("| claim | verdict | key number |\n| --- | --- | --- |\n| A matches softmax | **equivalent** | +0.1 |\n"
             f"| B at $N$ matches softmax | {vp.NO_PAIRS} | |\n\n† late")
    monkeypatch.setattr(deliver_module, "findings", lambda chapter, glue_it=True: table)
    numbers = vp.findings_numbers("04_vit")
    assert vp.NO_PAIRS not in numbers["ch04_findings"].data and "A matches softmax" in numbers["ch04_findings"].data
    assert numbers["ch04_pending"].data == "B at $N$ matches softmax"
    monkeypatch.setattr(deliver_module, "findings", lambda chapter, glue_it=True: table.replace(vp.NO_PAIRS, "**x**"))
    assert vp.findings_numbers("04_vit")["ch04_pending"].data == "none"
