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
    assert vp.table2_table([]) is None and vp.curves_figure([], vp.TABLE1_GROUPS, "smoke") is None
    assert set(vp.scale_numbers([]).values()) <= {"no", "not run"}


# --- how much the seeds can say, and the cubic's scale ----------------------------------------------------


def test_power_numbers_follow_the_number_of_seeds():
    numbers = vp.power_numbers(table1_records({"poly:p=3": -0.02}))
    assert numbers["ch04_t1_seeds"] == "3" and numbers["ch04_t_mult"] == "4.30"     # t(0.975, 2)
    assert numbers["ch04_wilcoxon_p"] == "0.250" and numbers["ch04_wilcoxon_n"] == "6"
    assert float(numbers["ch04_mde_low"]) > 0
    one = vp.power_numbers(table1_records({"poly:p=3": -0.02}, seeds=(0,), noise=(0.0,)))
    assert one["ch04_t_mult"] == "undefined (one seed)" and one["ch04_mde_low"] == "not computed"


def test_the_scale_comparisons_are_against_the_scaled_cubic():
    # x³/14 planted 1 point below x³/√N, the unscaled x³ 2 points above it
    records = table1_records({"poly:p=3": 0.0, "poly:p=3,c=1/14": -0.01, "poly:p=3,c=1": 0.02})
    numbers = vp.scale_numbers(records)
    assert numbers["ch04_fixed_diff"].startswith("−1.00 [") and numbers["ch04_fixed_diff"].endswith(" points")
    assert numbers["ch04_unscaled_diff"].startswith("+2.00 [") and numbers["ch04_scale_pairs"] == "3"
    assert vp.scale_numbers(table1_records({"poly:p=3": 0.0}))["ch04_fixed_diff"] == "not run"


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


def test_table2_shows_each_cells_accuracy_and_difference_and_the_pooled_row_from_the_register():
    records = _table2_records()
    delta = "Δ, points [95% CI]"
    table = vp.table2_table(records, caption_text="planted grid")
    rows = table.data.to_dict("records")
    assert list(table.data.columns) == ["Model, recipe", "softmax (%)", "x³/√N (%)", delta, "Seed pairs"]
    assert len(rows) == 5 and rows[-1]["Model, recipe"] == "pooled over 4 cells" and rows[-1]["softmax (%)"] == ""
    assert all(r[delta].startswith("−2.9") for r in rows[:4]) and rows[0]["softmax (%)"].startswith("70.00 ± ")
    assert table.caption.startswith("planted grid; ") and "description" in table.caption
    registered = vp.table2_table(records, {"poly:p=3": _registered_row("12 of 12")}).data.to_dict("records")
    assert registered[-1]["Register's result"] == "worse" and registered[-1]["Seed pairs"] == "12 of 12"
    assert registered[-1][delta].endswith("‡") and all(r["Register's result"] == "" for r in registered[:4])
    assert float(vp.table2_numbers(records)["ch04_t2_f_p"]) > 0.5                       # the planted cells agree


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
    table = vp.long_sweep_table(_fig1_numbers())
    rows = table.data.to_dict("records")
    assert [r["N"] for r in rows] == ["17", "50"]
    assert list(table.data.columns)[1:3] == ["c = 1/8 (%)", "c = 32 (%)"]
    assert [r["Reading"] for r in rows] == ["not flat", "flat"]
    assert rows[1]["Spread (points)"] == "0.24" and rows[1]["c = 32 (%)"] == "84.56"
    assert "$" not in table.caption and "under 1 point" in table.caption
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



# --- the register's verdicts, compact tables and the closing list (planted claims) -------------------------


@pytest.fixture
def planted(tmp_path, planted_grid):
    """Two planted claims of a chapter "unit_vit" on a grid of planted records: "unit_parity" (x³/√N
    within 0.2 points of softmax over 5 seeds, and ReLU/N, described, with one seed only; registered
    late) and
    "unit_pending" (a grid with no stored run); returns (evaluate, claims, root)."""
    from support.planted_records import plant

    from polyattn.claims.evaluate import evaluate
    from polyattn.claims.spec import Arm, Comparison, RegisteredClaim
    from polyattn.config import TrainConfig

    offsets = {"softmax": 0.0, "poly:p=3": -0.002}
    noise = (0.0, 0.004, -0.004, 0.002, -0.002)
    jitter = {"softmax": (0.0,) * 5, "poly:p=3": (0.0, 0.002, -0.002, 0.001, -0.001)}
    configs = [plant(tmp_path, TrainConfig(experiment="unit_vit", activation=a, seed=s, preset="smoke"),
                     [{"epoch": 1, "test_acc": 0.80 + d + e + jitter[a][s]}])
               for a, d in offsets.items() for s, e in enumerate(noise)]
    configs.append(plant(tmp_path, TrainConfig(experiment="unit_vit", activation="relu_n", seed=0, preset="smoke"),
                         [{"epoch": 1, "test_acc": 0.79}]))
    configs.append(TrainConfig(experiment="unit_vit", activation="relu_n", seed=1, preset="smoke"))   # not stored
    planted_grid("unit_vit", configs)
    planted_grid("unit_vit_pending", [TrainConfig(experiment="unit_vit_pending", seed=s, preset="smoke") for s in (0, 1)])

    def arm(grid, act):
        return Arm(grid, {"activation": act})

    claims = {
        "unit_parity": RegisteredClaim(
            "unit_parity", "x³/√N matches softmax", "test", "unit_vit", margin=1.0,
            registered_after="after the runs", scale="planted records",
            comparisons=(Comparison("cube", "x³/√N − softmax", arm("unit_vit", "poly:p=3"), arm("unit_vit", "softmax"),
                                    "equivalent"),
                         Comparison("relu", "ReLU/N − softmax", arm("unit_vit", "relu_n"), arm("unit_vit", "softmax"),
                                    "equivalent", role="description"))),
        "unit_pending": RegisteredClaim(
            "unit_pending", "a claim without runs", "test", "unit_vit", margin=1.0, scale="planted records",
            comparisons=(Comparison("c", "softmax − softmax", arm("unit_vit_pending", "softmax"),
                                    arm("unit_vit_pending", "softmax"), "equivalent"),)),
    }

    def planted_evaluate(claim_id, root=None, preset="book"):
        return evaluate(claims[claim_id], root=tmp_path, preset="smoke")

    return planted_evaluate, claims, tmp_path


def _delivered(verdict):
    from polyattn.book.deliver import Delivered
    from polyattn.claims.report import comparison_rows

    rows = [{k: r[k] for k in ("Comparison", "Pairs", "Difference [95% CI]", "Result")} for r in comparison_rows(verdict)]
    return Delivered(verdict, "", styled(rows, f"{verdict.claim.statement}: margin ±1; {verdict.claim.scale}"))


def test_a_verdict_for_the_prose_is_the_registers_word_marked_late_and_its_key_comparison(planted):
    evaluate, _, _ = planted
    numbers = vp.verdict_numbers("u", _delivered(evaluate("unit_parity")))
    assert numbers["u_form"].startswith("equivalent within the margin†")
    assert numbers["u_key"].startswith("x³/√N − softmax: −0.2") and numbers["u_key"].endswith(" points")
    pending = vp.verdict_numbers("p", _delivered(evaluate("unit_pending")))
    assert pending["p_key"] == "no comparison has two paired runs yet" and "†" not in pending["p_form"]


def test_the_compact_table_leaves_out_comparisons_without_two_pairs_and_says_so(planted):
    evaluate, _, _ = planted
    table = vp.compact_claims_table([_delivered(evaluate("unit_parity"))])
    rows = table.data.to_dict("records")
    assert [r["Comparison"] for r in rows] == ["x³/√N − softmax"]
    assert list(rows[0]) == ["Comparison", "Difference [95% CI]", "Pairs", "Result"] and rows[0]["Pairs"] == "5 of 5"
    assert table.caption.startswith("x³/√N matches softmax: margin ±1; planted records")
    assert "left out until 2 seed pairs are stored: ReLU/N − softmax (1 of 2 pairs stored)" in table.caption
    assert not any(w in str(v) for r in rows for v in r.values() for w in ("n/a", "no runs yet"))
    assert vp.compact_claims_table([_delivered(evaluate("unit_pending"))]) is None


def test_the_clipping_table_sets_each_question_with_and_without_clipping_side_by_side(planted, monkeypatch):
    from polyattn.claims import register

    evaluate, claims, _ = planted
    monkeypatch.setattr(register, "claim", lambda cid: claims[cid])
    d = {"unit_parity": _delivered(evaluate("unit_parity"))}
    layout = (("cube", ("unit_parity", "cube"), ("unit_parity", "relu")),)
    rows = vp.clipping_table(d, layout).data.to_dict("records")
    cell = rows[0]["With clipping at norm 1"]
    assert cell.startswith("−0.20 [") and ", equivalent" in cell and cell.endswith(" (5 of 5 pairs)")
    assert rows[0]["Without clipping"] == "1 of 2 pairs stored"
    assert "planted records" in vp.clipping_table(d, layout).caption


def test_runs_still_to_run_are_counted_with_their_grid(planted):
    _, _, root = planted
    assert vp.to_run("unit_vit", root) == "1 of the 12 runs of the grid `unit_vit` is still to run"
    assert vp.to_run("unit_vit_pending", root) == "none of the 2 runs of the grid `unit_vit_pending` is stored yet"


def test_the_closing_list_has_one_linked_line_per_claim_and_names_the_waiting_ones(planted, monkeypatch):
    from polyattn.claims import evaluate as evaluate_module
    from polyattn.claims import register

    evaluate, claims, root = planted
    monkeypatch.setattr(register, "REGISTER", claims)
    monkeypatch.setattr(evaluate_module, "evaluate", evaluate)
    monkeypatch.setattr(vp, "to_run", lambda grid: f"to run: {grid}")
    text = vp.findings_list("unit_vit")
    lines = text.splitlines()
    assert lines[0].startswith("- {ref}`unit_parity <claim-unit-parity>`: **equivalent within the margin**†; "
                               "x³/√N − softmax: −0.2")
    assert sum(line.startswith("- ") for line in lines) == 1          # the claim without runs has no line
    assert "Still waiting for paired runs: {ref}`unit_pending <claim-unit-pending>` (to run: unit_vit_pending)." in text
    assert "† margin or chance level registered after" in text
    assert "no runs yet" not in text and "n/a" not in text


def test_a_folded_glue_says_what_is_missing_and_closes_a_figure(monkeypatch):
    import matplotlib.pyplot as plt

    from polyattn.book import deliver as deliver_module

    glued = {}
    monkeypatch.setattr(deliver_module, "glue", lambda name, value, display=True: glued.update({name: value}))
    vp.glue_folded("a", None, "Nothing stored")
    assert glued["a"].data == "*Nothing stored.*"
    fig = plt.figure()
    vp.glue_folded("b", fig)
    assert glued["b"] is fig and not plt.fignum_exists(fig.number)


def test_the_curves_fit_the_pages_column():
    records = table1_records({a: -0.01 for a in ("poly:p=3", "sigmoid", "periodic")})
    fig = vp.curves_figure(records, vp.TABLE1_GROUPS, "smoke")
    assert len(fig.axes) == 3 and fig.get_size_inches()[0] <= vp.WIDTH
    assert all(len(ax.get_lines()) <= 6 for ax in fig.axes)
