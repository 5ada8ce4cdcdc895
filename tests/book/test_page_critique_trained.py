"""Chapter 09's trained critique grids on planted records: their table cells and glued phrases, and
the powers, the Q/K controls and the weight decay described without result words."""
import numpy as np
import pytest
from support.pages import RESULT_WORDS, probe_rows, table_rows
from support.records import make_record

from polyattn.experiments import vit
from polyattn.studies.critiques import trained as page
from polyattn.studies.critiques.page import Runs

# --- table cells and glued phrases ----------------------------------------------------------------


def test_grid_labels_read_as_a_reader_writes_them():
    assert page.qk_name("x^3, Q/K init x0.72") == "x³, Q/K init ×0.72"
    assert page.qk_name("x^3/sqrt(N)") == "x³/√N"


def test_an_estimate_reads_with_its_interval_or_says_it_has_none():
    assert page.interval_phrase(-7.016, -13.91, -0.14) == "-7.02 points (95% CI -13.91 to -0.14)"
    assert page.interval_phrase(-1.5, float("nan"), float("nan")) == "-1.50 points (no interval)"
    assert page.interval_phrase(float("nan"), 0.0, 1.0) == "not computed"


def test_a_description_cell_gives_difference_interval_and_pairs_and_no_result_word():
    row = {"n_pairs": 3, "mean_diff": -0.52, "ci_low": -4.19, "ci_high": 3.16}
    cell = page.description_cell(row)
    assert cell == "−0.5 [−4.2, +3.2] (3 pairs)"
    assert not any(w in cell for w in RESULT_WORDS)
    assert page.description_cell({**row, "n_pairs": 1, "ci_low": np.nan, "ci_high": np.nan}) == "−0.5 (1 pair)"
    assert page.description_cell({**row, "n_pairs": 0}) == "no pairs"


# --- the grids, described -------------------------------------------------------------------------


def _powers_records(chance_run=True):
    """Accuracy falls by 2, 2.2 and 2.4 points per power in seeds 0, 1 and 2; with ``chance_run``
    x⁷/√N of seed 0 ends at chance instead.  The gradient at the attention weights is 10⁻ᵖ at the
    last probe."""
    recs = []
    for seed in (0, 1, 2):
        for p in range(1, 8):
            acc = 0.80 - (0.02 + 0.002 * seed) * (p - 1)
            if chance_run and seed == 0 and p == 7:
                acc = 0.10
            grad = {"grad_attn_fro": (lambda s, p=p: 0.01 if s == 0 else 10.0 ** -p)}
            recs.append(make_record(f"poly:p={p}", seed, accs=(0.5, acc), experiment="critique_powers",
                                    probes=probe_rows(grad)))
        recs.append(make_record("poly_odd:p=2", seed, accs=(0.5, 0.80 + 0.01 * seed), experiment="critique_powers",
                                probes=probe_rows({"grad_attn_fro": 0.01})))
    return recs


def test_the_powers_are_described_by_their_slope_with_and_without_the_runs_at_chance():
    runs = Runs(vit.table1("smoke", seeds=[0, 1, 2]), _powers_records())
    n = page.powers_numbers(runs)
    assert n["ch09_pw_chance_runs"] == "x⁷/√N with seed 0"
    assert n["ch09_pw_slope_without_chance"].startswith("-2.20 points (95% CI ")
    assert n["ch09_pw_slope"] != n["ch09_pw_slope_without_chance"] and "95% CI" in n["ch09_pw_slope"]
    assert n["ch09_pw_slope_seeds"] == "3 seeds"
    assert n["ch09_pw_grad_min_power"] == "x⁷/√N" and n["ch09_pw_grad_max_power"] == "x/√N"
    clean = page.powers_numbers(Runs(runs.grid, _powers_records(chance_run=False)))
    assert clean["ch09_pw_chance_runs"] == "none" and clean["ch09_pw_slope"] == clean["ch09_pw_slope_without_chance"]


def test_the_powers_table_describes_the_sign_keeping_forms_only_and_without_result_words():
    runs = Runs(vit.table1("smoke", seeds=[0, 1, 2]), _powers_records())
    table = page.powers_table(runs, "smoke")
    rows = {r["activation"]: r for r in table_rows(table)}
    column = "sign kept: Δ vs x³/√N (points)"
    assert rows["x⁴/√N"][column] == "" and rows["x·|x|¹/√N (odd x²)"][column].endswith("(3 pairs)")
    assert rows["x/√N"]["‖∂L/∂A‖_F, first → last probe"] == "0.01 → 0.1"
    assert "description, not a test" in table.caption and "preset smoke" in table.caption
    assert not any(w in " ".join(map(str, r.values())) for r in rows.values() for w in RESULT_WORDS)


def _qk_records():
    from polyattn.labels import qk_variants

    recs = []
    for i, (_, act, fields) in enumerate(qk_variants()):
        for seed in (0, 1, 2):
            r = make_record(act, seed, accs=(0.5, 0.70 + 0.01 * i + 0.002 * seed), experiment="critique_qk_controls",
                            probes=probe_rows({"attn_fro": float(10 * (i + 1))}))
            r["config"].update(fields)
            r["config_hash"] = f"qk{i}"          # one run name per variant and seed
            recs.append(r)
    return recs


def test_the_qk_controls_are_described_against_the_plain_cube_in_the_grids_order():
    runs = Runs(vit.table1("smoke", seeds=[0, 1, 2]), _qk_records())
    rows = table_rows(page.qk_table(runs, "smoke"))
    assert [r["variant"] for r in rows][:2] == ["x³/√N", "x³"]
    by = {r["variant"]: r for r in rows}
    assert by["x³"]["Δ vs x³ (points)"] == "" and by["x³, Q/K decay 5"]["Δ vs x³ (points)"] == "+2.0 [+2.0, +2.0] (3 pairs)"
    assert by["x³/√N"]["‖A‖_F at the last probe"] == "10"
    n = page.qk_numbers(runs)
    assert n["ch09_qk_norms"].startswith("x³/√N: 10; x³: 20; ") and n["ch09_qk_decays"] == "0.5 or 5"
    assert float(n["ch09_qk_gain"]) ** 6 == pytest.approx(n["ch09_qk_tokens"] ** -0.5, rel=1e-2)


def test_the_weight_decay_table_describes_each_decay_against_the_reference_decay():
    from polyattn.experiments import critiques as grids

    recs = []
    for act in grids.WEIGHT_DECAY_ACTIVATIONS:
        for w in grids.WEIGHT_DECAYS:
            for seed in (0, 1, 2):
                r = make_record(act, seed, accs=(0.5, 0.78 + (0.03 if w == 0.5 else 0.0) + 0.002 * seed),
                                experiment="critique_weight_decay",
                                probes=probe_rows({"attn_fro_over_sqrt_n": 4.0 if w == 0.5 else 12.0}))
                r["config"]["weight_decay"] = w
                r["config_hash"] = f"{act}-{w}"      # one run name per cell and seed
                recs.append(r)
    runs = Runs([vit.table1("smoke", seeds=[s])[0] for s in (0, 1, 2)] * 9, recs)
    rows = table_rows(page.decay_table(runs, "smoke"))
    assert len(rows) == 9 and rows[0]["activation"] == "softmax" and rows[1]["activation"] == ""
    strong_unscaled = rows[-1]
    assert strong_unscaled["decay"] == "0.5" and strong_unscaled["Δ vs itself at 0.05"].startswith("+3.0")
    assert strong_unscaled["Δ vs x³/√N at 0.05"].startswith("+3.0") and rows[2]["Δ vs x³/√N at 0.05"] == ""
    assert rows[1]["Δ vs itself at 0.05"] == ""      # the reference decay is not compared with itself
    n = page.decay_numbers(runs)
    assert n["ch09_wd_norm_unscaled_strong"] == "4" and n["ch09_wd_norm_scaled_reference"] == "12"
    assert n["ch09_wd_found"] == "27 of 27"
