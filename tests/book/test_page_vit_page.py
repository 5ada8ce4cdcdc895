"""Chapter 04's shared page module on planted ViT records: the results tables (the register's rows
marked, the rest description without a result word), the accuracy curves' panels, legends and
width, the register's tables and verdicts for the prose, the runs still to run and the folded
glue."""
import math
from types import SimpleNamespace

import matplotlib
import pytest
from support.patching import patch_everywhere
from support.records import make_record, table1_records
from support.vit_claims import delivered_claim, plant_claims, registered_row

from polyattn.book.deliver import styled
from polyattn.studies.vit import converged as cv
from polyattn.studies.vit import page as vp
from polyattn.studies.vit import table1 as t1

matplotlib.use("Agg")

#: words of a verdict that a description cell must never hold
VERDICT_WORDS = ("equivalent", "worse", "better", "inconclusive", "supported")


@pytest.fixture
def planted(tmp_path, planted_grid):
    """The planted claims of :func:`support.vit_claims.plant_claims`: (evaluate, claims, root)."""
    return plant_claims(tmp_path, planted_grid)


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
    rows = {r["Activation"]: r for r in vp.result_rows(records, {"poly:p=3": registered_row()})}
    assert rows["x³/√N"]["Δ vs softmax, points [95% CI]"] == "−9.99 [−10.50, −9.40] ‡"
    assert rows["x³/√N"]["Register's result"] == "worse" and rows["x³/√N"]["Seed pairs"] == "3 of 3"
    assert rows["sigmoid"]["Register's result"] == "" and rows["sigmoid"]["Δ vs softmax, points [95% CI]"].startswith("+1.00")
    caption = vp.results_table(records, {"poly:p=3": registered_row()}, "planted").caption
    assert "‡" in caption and "description" in caption


def test_a_diverged_run_is_counted_apart_and_the_order_is_the_grids():
    records = table1_records({"poly:p=3": -0.02, "relu_n": 0.0})
    records.append(make_record("poly:p=3", 3, accs=(math.nan,), status="diverged", diverged_step=5))
    rows = vp.result_rows(records, order=("relu_n", "softmax", "poly:p=3"))
    assert [r["Activation"] for r in rows] == ["ReLU/N", "softmax", "x³/√N"]
    assert rows[2]["Test accuracy (%), mean ± sd"].endswith("(1 diverged)")


def test_a_page_without_runs_shows_no_table():
    assert vp.results_table([], {}) is None and vp.per_seed_table([], "x") is None
    assert vp.curves_figure([], t1.TABLE1_GROUPS, "smoke") is None


# --- figures ------------------------------------------------------------------------------------------------


def test_the_curves_have_a_few_lines_a_panel_named_for_readers_and_no_blank_panel():
    records = table1_records({a: -0.01 for a in ("poly:p=3", "poly:p=3,c=1/14", "poly:p=1", "sigmoid")})
    fig = vp.curves_figure(records, t1.TABLE1_GROUPS, "smoke")
    assert len(fig.axes) == 2                                     # the wider family has no run: no panel
    for ax in fig.axes:
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert len(labels) <= 6 and "softmax" in labels
        assert not any(":" in lbl or "poly" in lbl for lbl in labels)    # never a raw spec
    assert "x³/14" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert all(len(specs) <= 6 for _, specs in t1.TABLE1_GROUPS + cv.CONVERGED_GROUPS)


def test_the_curves_fit_the_pages_column():
    records = table1_records({a: -0.01 for a in ("poly:p=3", "sigmoid", "periodic")})
    fig = vp.curves_figure(records, t1.TABLE1_GROUPS, "smoke")
    assert len(fig.axes) == 3 and fig.get_size_inches()[0] <= vp.WIDTH
    assert all(len(ax.get_lines()) <= 6 for ax in fig.axes)


# --- the register's tables ------------------------------------------------------------------------------------


def test_a_claim_table_drops_the_comparisons_without_two_stored_pairs(monkeypatch):
    columns = ["Comparison", "Pairs", "Result"]
    rows = {"a": {"Comparison": "a − softmax", "Pairs": "1 of 5", "Result": "inconclusive", "Role": "primary"},
            "b": {"Comparison": "b − softmax", "Pairs": "2 of 5", "Result": "inconclusive", "Role": "primary"}}
    delivered = SimpleNamespace(verdict=SimpleNamespace(comparisons=[SimpleNamespace(n=1), SimpleNamespace(n=2)]),
                                table=styled([{k: "" for k in columns}], "the claim"))
    patch_everywhere(monkeypatch, vp, "claim_rows", lambda d: rows)
    kept = vp.claim_table(delivered)
    assert kept.data.to_dict("records") == [{"Comparison": "b − softmax", "Pairs": "2 of 5", "Result": "inconclusive"}]
    assert kept.caption == "the claim; left out until 2 seed pairs are stored: a − softmax"
    assert vp.claim_table(delivered, min_pairs=1).caption == "the claim"
    delivered.verdict.comparisons = [SimpleNamespace(n=0), SimpleNamespace(n=1)]
    assert vp.claim_table(delivered) is None


# --- the register's verdicts, compact tables and the runs still to run (planted claims) ---------------------


def test_a_verdict_for_the_prose_is_the_registers_word_marked_late_and_its_key_comparison(planted):
    evaluate, _, _ = planted
    numbers = vp.verdict_numbers("u", delivered_claim(evaluate("unit_parity")))
    assert numbers["u_form"].startswith("equivalent within the margin†")
    assert numbers["u_key"].startswith("x³/√N − softmax: −0.2") and numbers["u_key"].endswith(" points")
    pending = vp.verdict_numbers("p", delivered_claim(evaluate("unit_pending")))
    assert pending["p_key"] == "no comparison has two paired runs yet" and "†" not in pending["p_form"]


def test_the_compact_table_leaves_out_comparisons_without_two_pairs_and_says_so(planted):
    evaluate, _, _ = planted
    table = vp.compact_claims_table([delivered_claim(evaluate("unit_parity"))])
    rows = table.data.to_dict("records")
    assert [r["Comparison"] for r in rows] == ["x³/√N − softmax"]
    assert list(rows[0]) == ["Comparison", "Difference [95% CI]", "Pairs", "Result"] and rows[0]["Pairs"] == "5 of 5"
    assert table.caption.startswith("x³/√N matches softmax: margin ±1; planted records")
    assert "left out until 2 seed pairs are stored: ReLU/N − softmax (1 of 2 pairs stored)" in table.caption
    assert not any(w in str(v) for r in rows for v in r.values() for w in ("n/a", "no runs yet"))
    assert vp.compact_claims_table([delivered_claim(evaluate("unit_pending"))]) is None


def test_runs_still_to_run_are_counted_with_their_grid(planted):
    _, _, root = planted
    assert vp.to_run("unit_vit", root) == "1 of the 12 runs of the grid `unit_vit` is still to run"
    assert vp.to_run("unit_vit_pending", root) == "none of the 2 runs of the grid `unit_vit_pending` is stored yet"


def test_a_folded_glue_says_what_is_missing_and_closes_a_figure(monkeypatch):
    import matplotlib.pyplot as plt

    from polyattn.book import deliver as deliver_module

    glued = {}
    patch_everywhere(monkeypatch, deliver_module, "glue", lambda name, value, display=True: glued.update({name: value}))
    vp.glue_folded("a", None, "Nothing stored")
    assert glued["a"].data == "*Nothing stored.*"
    fig = plt.figure()
    vp.glue_folded("b", fig)
    assert glued["b"] is fig and not plt.fignum_exists(fig.number)
