"""Chapter 09's page module on planted records: table cells, glued numbers, the loaders' runs, the
norm paradox's table, the trained grids described without result words, the register's cells of
the alternatives, and the cost of the runs that would settle what is open."""
from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd
import pytest
from support.records import make_record

from polyattn.experiments import vit
from polyattn.pages import critiques as page

matplotlib.use("Agg")

RESULT_WORDS = ("equivalent", "better", "worse", "inconclusive", "holds", "not supported")


def _probes(values: dict, steps=(0, 10), layers=(0, 1), heads=(0, 1)) -> list[dict]:
    """Probe rows: ``values[metric]`` is a number, or a function of the step."""
    return [{"step": s, "layer": layer, "head": h, "metric": m, "value": v(s) if callable(v) else v}
            for m, v in values.items() for s in steps for layer in layers for h in heads]


def _text(styler) -> str:
    return styler.to_html()


def _rows(styler) -> list[dict]:
    return styler.data.to_dict("records")


# --- table cells and glued values ----------------------------------------------------------------


def test_a_grouping_column_blanks_each_repeat_of_the_value_above():
    assert page.first_only(["a", "a", "b", "a", "a"]) == ["a", "", "b", "a", ""]
    assert page.first_only([]) == []


def test_grid_labels_read_as_a_reader_writes_them():
    assert page.qk_name("x^3, Q/K init x0.72") == "x³, Q/K init ×0.72"
    assert page.qk_name("x^3/sqrt(N)") == "x³/√N"


def test_a_before_and_after_cell():
    assert page.before_after(0.5, 2.0) == "0.5 → 2"


def test_numbers_are_formatted_by_their_spec_and_a_missing_one_says_so():
    values = page.formatted({"share": 0.153, "step": 117, "powers": "x⁷/√N", "tiny": 2.56e-9, "gone": float("nan")},
                            {"share": ".0%", "step": "d", "powers": "", "tiny": ".3g", "absent": ".2f", "gone": ".2f"})
    assert values == {"share": "15%", "step": "117", "powers": "x⁷/√N", "tiny": "2.56e-09", "absent": "not stored",
                      "gone": "not stored"}


def test_each_number_is_glued_under_the_page_prefix_with_the_sections_formats(monkeypatch):
    import polyattn.book.deliver as deliver

    glued = {}
    monkeypatch.setattr(deliver, "glue", lambda name, value, display=True: glued.__setitem__(name, value))
    page.glue_numbers("ch09_x", {"rho": -0.52}, {"rho": "+.2f"})
    page.glue_numbers("ch09_outlier", {"factor": 100.0, "images": 500, "other": 1})
    assert glued == {"ch09_x_rho": "-0.52", "ch09_outlier_factor": "100", "ch09_outlier_images": "500"}


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


def test_the_bootstrap_takes_the_registers_draws_at_the_book_preset_only():
    assert page.n_boot("book") == 2000 and page.n_boot("smoke") < 2000


# --- the runs -------------------------------------------------------------------------------------


def test_runs_know_when_every_planned_run_is_stored_and_measured():
    grid = vit.table1("smoke", seeds=[0, 1])[:3]
    ok = {"status": "ok", "final": {"gradients": {}}}
    runs = page.Runs(grid, [ok, {"status": "ok"}, {"status": "diverged", "final": {}}])
    assert runs.complete and not runs.all_measured and len(runs.measured) == 1
    assert runs.seeds == sorted({c.seed for c in grid}) and runs.config is grid[0]
    assert not page.Runs(grid, [ok]).complete and page.Runs(grid[:1], [ok]).all_measured


def test_a_page_that_does_not_train_reads_no_records(planted_grid):
    configs = planted_grid("critique_powers", vit.table1("smoke", seeds=[0]))
    idle = SimpleNamespace(preset="paper", trains=False, on_device=lambda c: list(c))
    runs = page.trained_runs(idle, "critique_powers")
    assert runs.grid == configs and runs.records == []
    assert page.table1_records(idle) == [] and page.sweep_records(idle) == []
    assert page.powers_figure(runs, "paper") is None
    assert "No record" in page.powers_table(runs, "paper").data
    assert set(page.powers_numbers(runs).values()) == {"not stored"}


# --- the norm paradox -----------------------------------------------------------------------------------


def _paradox_records(seeds=(0, 1)):
    """The linear map at norm 1 throughout; every cubic at 0.01 at the first probe and 10 later."""
    cube = {m: (lambda s: 0.01 if s == 0 else 10.0) for m in page.NORM_LABELS}
    recs = []
    for seed in seeds:
        recs.append(make_record("poly:p=1", seed, probes=_probes({m: 1.0 for m in page.NORM_LABELS})))
        for act in ("poly:p=3,c=1", "poly:p=3", "poly:p=3,c=1/14"):
            recs.append(make_record(act, seed, probes=_probes(cube)))
    return recs


def test_the_paradox_table_gives_each_cubics_share_below_the_linear_map_at_the_first_and_later_probes():
    rows = _rows(page.paradox_order_table(_paradox_records()))
    assert [r["activation"] for r in rows] == ["x³ (unscaled)", "x³/√N", "x³/14"]
    assert all(r["‖A‖_F"] == "100% / 0%" and r["‖∂L/∂A‖_F"] == "100% / 0%" for r in rows)
    assert rows[0]["cells"] == 8  # two seeds by two layers by two probed steps
    detailed = _rows(page.paradox_order_table(_paradox_records(), detailed=True))
    assert len(detailed) == 3 * len(page.NORM_LABELS)
    assert detailed[0]["ratio, median (min to max)"] == "5 (0.01 to 10)"  # half the cells at 0.01, half at 10
    assert "No record" in page.paradox_order_table([]).data and page.norm_figure([], "book") is None


def test_correlation_numbers_say_which_accuracy_goes_with_a_larger_attention_norm():
    row = {"rho": -0.5, "ci_low": -0.8, "ci_high": -0.2, "cluster_ci_low": -0.9, "cluster_ci_high": 0.1,
           "within_rho": -0.3, "n": 25}
    corr = pd.DataFrame([{**row, "norm": "attn_fro_over_sqrt_n_mean", "subset": page.FAMILY_LABEL, "activations": 5},
                         {**row, "norm": "grad_attn_fro_mean", "subset": page.ALL_LABEL, "activations": 13}])
    n = page.correlation_numbers(corr)
    assert n["family_attention_rho"] == -0.5 and n["all_gradient_activations_ci_high"] == 0.1
    assert n["family_activations"] == 5 and n["family_attention_runs"] == 25
    assert n["family_attention_direction"] == "lower"
    corr.loc[0, "rho"] = 0.4
    assert page.correlation_numbers(corr)["family_attention_direction"] == "higher"
    assert page.correlation_numbers(pd.DataFrame()) == {}


def test_the_cube_leaves_its_vanishing_start_at_the_first_step_above_the_linear_map():
    steps = pd.DataFrame({0: [0.02, 7.07], 117: [5.37, 7.07], 234: [9.0, 7.07], 935: [22.7, 7.07]},
                         index=["poly:p=3", "poly:p=1"])
    n = page.jacobian_numbers(steps)
    assert n["first_step"] == 0 and n["second_step"] == 117
    assert n["linear_over_cube_first"] == pytest.approx(353.5)
    assert n["cube_above_from_step"] == 234 and n["cube_last"] == 22.7
    below = page.jacobian_numbers(steps.loc[:, [0, 117]])
    assert below["cube_above_from_step"] == "no probed step"
    assert page.records_jacobian_numbers([]) == {}


# --- the trained grids, described ------------------------------------------------------------------------


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
                                    probes=_probes(grad)))
        recs.append(make_record("poly_odd:p=2", seed, accs=(0.5, 0.80 + 0.01 * seed), experiment="critique_powers",
                                probes=_probes({"grad_attn_fro": 0.01})))
    return recs


def test_the_powers_are_described_by_their_slope_with_and_without_the_runs_at_chance():
    runs = page.Runs(vit.table1("smoke", seeds=[0, 1, 2]), _powers_records())
    n = page.powers_numbers(runs)
    assert n["ch09_pw_chance_runs"] == "x⁷/√N with seed 0"
    assert n["ch09_pw_slope_without_chance"].startswith("-2.20 points (95% CI ")
    assert n["ch09_pw_slope"] != n["ch09_pw_slope_without_chance"] and "95% CI" in n["ch09_pw_slope"]
    assert n["ch09_pw_slope_seeds"] == "3 seeds"
    assert n["ch09_pw_grad_min_power"] == "x⁷/√N" and n["ch09_pw_grad_max_power"] == "x/√N"
    clean = page.powers_numbers(page.Runs(runs.grid, _powers_records(chance_run=False)))
    assert clean["ch09_pw_chance_runs"] == "none" and clean["ch09_pw_slope"] == clean["ch09_pw_slope_without_chance"]


def test_the_powers_table_describes_the_sign_keeping_forms_only_and_without_result_words():
    runs = page.Runs(vit.table1("smoke", seeds=[0, 1, 2]), _powers_records())
    table = page.powers_table(runs, "smoke")
    rows = {r["activation"]: r for r in _rows(table)}
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
                            probes=_probes({"attn_fro": float(10 * (i + 1))}))
            r["config"].update(fields)
            r["config_hash"] = f"qk{i}"          # one run name per variant and seed
            recs.append(r)
    return recs


def test_the_qk_controls_are_described_against_the_plain_cube_in_the_grids_order():
    runs = page.Runs(vit.table1("smoke", seeds=[0, 1, 2]), _qk_records())
    rows = _rows(page.qk_table(runs, "smoke"))
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
                                probes=_probes({"attn_fro_over_sqrt_n": 4.0 if w == 0.5 else 12.0}))
                r["config"]["weight_decay"] = w
                r["config_hash"] = f"{act}-{w}"      # one run name per cell and seed
                recs.append(r)
    runs = page.Runs([vit.table1("smoke", seeds=[s])[0] for s in (0, 1, 2)] * 9, recs)
    rows = _rows(page.decay_table(runs, "smoke"))
    assert len(rows) == 9 and rows[0]["activation"] == "softmax" and rows[1]["activation"] == ""
    strong_unscaled = rows[-1]
    assert strong_unscaled["decay"] == "0.5" and strong_unscaled["Δ vs itself at 0.05"].startswith("+3.0")
    assert strong_unscaled["Δ vs x³/√N at 0.05"].startswith("+3.0") and rows[2]["Δ vs x³/√N at 0.05"] == ""
    assert rows[1]["Δ vs itself at 0.05"] == ""      # the reference decay is not compared with itself
    n = page.decay_numbers(runs)
    assert n["ch09_wd_norm_unscaled_strong"] == "4" and n["ch09_wd_norm_scaled_reference"] == "12"
    assert n["ch09_wd_found"] == "27 of 27"


# --- the register's comparisons and what is not settled ---------------------------------------------------------


def _delivered(claim_id, labels=None, **results):
    """A delivered claim with one comparison per keyword: ``id=(pairs, mean, result)``, interval
    mean ± 1; ``labels``: comparison id -> the register's label."""
    labels = labels or {}
    comparisons = [SimpleNamespace(comparison=SimpleNamespace(id=cid, label=labels.get(cid, cid)), n=n, unit="points",
                                   mean=m, ci_low=m - 1, ci_high=m + 1, margin=1.0, result=res, qualifier="")
                   for cid, (n, m, res) in results.items()]
    claim = SimpleNamespace(id=claim_id, margin=1.0, alpha=0.05, scale="micro ViT, planted preset")
    return SimpleNamespace(verdict=SimpleNamespace(claim=claim, comparisons=comparisons), table=None)


def test_a_registered_comparison_is_one_cell_with_its_result_and_pairs():
    d = _delivered("qk_norm", cube_qknorm_vs_scaled=(5, -0.51, "inconclusive"), other=(1, 0.2, "inconclusive"))
    assert page.comparison_cell(d, "cube_qknorm_vs_scaled") == "−0.51 [−1.51, +0.49] points, inconclusive (5 pairs)"
    assert page.comparison_cell(d, "cube_qknorm_vs_scaled", unit=False, pairs=False) == "−0.51 [−1.51, +0.49], inconclusive"
    assert page.comparison_cell(d, "other") == "1 pair stored"
    with pytest.raises(ValueError, match="no comparison 'absent'"):
        page.comparison_cell(d, "absent")


def test_the_alternatives_table_reads_every_cell_from_the_delivered_claims():
    delivered = {
        "qk_controls_unclipped": _delivered("qk_controls_unclipped", **{"qk_decay_0.5": (3, -0.8, "inconclusive"),
                                                                         "qk_decay_5": (3, -2.4, "inconclusive"),
                                                                         "qk_init": (3, -1.6, "inconclusive")}),
        "weight_decay_unclipped": _delivered("weight_decay_unclipped", **{"cube_decay_0.5": (3, 0.7, "inconclusive")}),
        "qk_norm": _delivered("qk_norm", cube_qknorm_vs_scaled=(5, -0.5, "inconclusive")),
        "alternatives_vs_unscaled": _delivered("alternatives_vs_unscaled", **{
            "qk_decay_0.5": (3, 2.0, "inconclusive"), "qk_decay_5": (3, 0.4, "inconclusive"),
            "qk_init": (3, 1.2, "inconclusive"), "decay_0.5": (3, 3.5, "better"), "qk_norm": (5, 1.3, "inconclusive"),
            "clipping": (5, -0.1, "inconclusive")}),
    }
    table = page.alternatives_table(delivered)
    rows = _rows(table)
    assert len(rows) == len(page.ALTERNATIVES)
    assert rows[2]["alternative"] == "Q/K init ×0.72"
    assert rows[3]["against the unscaled x³"] == "+3.50 [+2.50, +4.50], better"
    assert rows[-1]["against x³/√N"] == "the clipping claim"
    assert [r["pairs"] for r in rows] == ["3", "3", "3", "3", "5", "5"]
    assert "points [95% CI]" in table.caption and 'width: 100%' in table.to_html()


def test_the_cost_of_a_run_to_come_is_read_from_the_records_of_the_same_recipe():
    records = [make_record("softmax", s, wall_s=1800.0) for s in (0, 1)]
    assert page.run_hours(10, records) == "about 5 CPU hours"
    assert page.run_hours(10, [{"provenance": {}}]) == "cost unknown (no record to time)"


def test_the_maps_table_gives_each_activations_negative_share_and_the_range_of_its_heads_distances():
    from polyattn.measures import critiques as measured

    recs = []
    for i, act in enumerate(measured.MAP_SPECS):
        r = make_record(act, 0, experiment="critique_short_retrain")
        r["final"] = {"maps": {"cls": np.zeros((2, 1, 4, 7, 7)).tolist(), "negative_mass_share": [0.1 * i, 0.2 * i],
                               "attention_distance": [[3.0, 3.5, 3.25, 3.1], [2.0 + i, 4.0, 3.0, 3.0]],
                               "layers": [0, 3], "grid": 7, "n_images": 1, "n_test": 500}}
        recs.append(r)
    grid = vit.table1("smoke", seeds=[0])[:len(recs)]
    table = page.maps_table(page.Runs(grid, recs), "smoke")
    rows = _rows(table)
    assert [r["activation"] for r in rows] == ["softmax", "x³/√N", "x³/14", "x/√N"]
    assert rows[1]["negative share, first layer"] == "0.10" and rows[1]["negative share, last layer"] == "0.20"
    assert rows[0]["distance, first layer (heads)"] == "3.00 to 3.50"
    assert rows[3]["distance, last layer (heads)"] == "3.00 to 5.00"
    assert "500 test images" in table.caption and "preset smoke" in table.caption
    waiting = page.maps_table(page.Runs(grid + grid[:1], recs), "smoke")
    assert "4 of the 5 short retrainings" in waiting.data


# --- the compact tables, the folded parts and the closing table -----------------------------------------------


def test_a_claim_with_and_without_clipping_is_laid_out_one_column_per_reading():
    labels = {"a_clipped": "x³ with Q/K decay 0.5 − x³/√N, clipped", "a_unclipped": "x³ with Q/K decay 0.5 − x³/√N, unclipped",
              "b_clipped": "x³ − x³/√N (no control), clipped", "b_unclipped": "x³ − x³/√N (no control), unclipped"}
    d = _delivered("qk_alternatives", labels=labels, a_clipped=(3, -0.4, "inconclusive"),
                   a_unclipped=(3, -0.8, "inconclusive"), b_clipped=(3, -0.5, "inconclusive"),
                   b_unclipped=(3, -2.8, "worse"))
    layout = page.by_clipping(d)
    assert layout == {"x³ with Q/K decay 0.5 − x³/√N": {"clipped at norm 1": "a_clipped", "without clipping": "a_unclipped"},
                      "x³ − x³/√N (no control)": {"clipped at norm 1": "b_clipped", "without clipping": "b_unclipped"}}
    table = page.register_table(d, layout)
    rows = _rows(table)
    assert rows[1] == {"comparison": "x³ − x³/√N (no control)", "clipped at norm 1": "−0.50 [−1.50, +0.50], inconclusive",
                       "without clipping": "−2.80 [−3.80, −1.80], worse"}
    assert "3 seed pairs each" in table.caption and "margin ±1" in table.caption and "planted preset" in table.caption
    with pytest.raises(ValueError, match="names no clipping"):
        page.by_clipping(_delivered("x", other=(3, 0.1, "inconclusive")))


def test_a_registered_claim_is_one_row_per_comparison_with_the_pairs_in_the_caption_when_they_differ():
    d = _delivered("powers_trained", labels={"p1": "x/√N − x³/√N", "p7": "x⁷/√N − x³/√N"},
                   p1=(3, 0.7, "inconclusive"), p7=(2, -53.7, "did not learn"))
    table = page.register_table(d)
    assert _rows(table) == [{"comparison": "x/√N − x³/√N", "difference [95% CI], result": "+0.70 [−0.30, +1.70], inconclusive"},
                            {"comparison": "x⁷/√N − x³/√N",
                             "difference [95% CI], result": "−53.70 [−54.70, −52.70], did not learn"}]
    assert "2 or 3 seed pairs" in table.caption


def test_a_folded_part_is_glued_and_a_figure_is_closed_where_it_is_made(monkeypatch):
    import matplotlib.pyplot as plt

    import polyattn.book.deliver as deliver

    glued = {}
    monkeypatch.setattr(deliver, "glue", lambda name, value, display=True: glued.__setitem__(name, value))
    fig, _ = plt.subplots()
    page.glue_folded("ch09_fold_figure", fig)
    page.glue_folded("ch09_fold_missing", None)
    assert glued["ch09_fold_figure"] is fig and not plt.fignum_exists(fig.number)
    assert "Not computed" in glued["ch09_fold_missing"].data
    note = page.nothing_stored()
    assert page.compact(note) is note


def _outlier_pairs():
    rows = []
    for where, base in (("embedding", 0.4), ("attention_input", 32.2), ("scores", 16.6)):
        for i, act in enumerate(("poly:p=3", "poly:p=3,c=1/14", "poly:p=1")):
            drop = base + i - 1
            rows.append({"where": where, "activation": act, "factor": 100.0, "n_images": 500, "drop_a": drop,
                         "drop_b": base, "diff": drop - base, "ci_low": drop - base - 2, "ci_high": drop - base + 2})
    return pd.DataFrame(rows)


def test_the_outlier_table_has_one_row_per_activation_and_one_column_per_place(monkeypatch):
    from polyattn.measures import critiques as measured

    monkeypatch.setattr(measured, "outlier_pairs", lambda records, n_boot=0: _outlier_pairs())
    grid = vit.table1("smoke", seeds=[0])[:2]
    runs = page.Runs(grid, [{"status": "ok", "final": {"x": 1}}] * 2)
    table = page.outlier_pairs_table(runs, 100, "smoke")
    rows = _rows(table)
    assert [r["activation"] for r in rows] == ["softmax", "x³/√N", "x³/14", "x/√N"]
    assert list(rows[0]) == ["activation", "embedding", "attention input", "scores"]
    assert rows[0]["attention input"] == "32.2"
    assert rows[1]["scores"] == "15.6 (−1.0 [−3.0, +1.0])" and rows[3]["embedding"] == "1.4 (+1.0 [−1.0, +3.0])"
    assert "multiplied by 100" in table.caption and "500 test images" in table.caption
    assert "short retrainings" in page.outlier_pairs_table(page.Runs(grid, runs.records[:1]), 100, "smoke").data


def test_each_measured_claim_has_a_short_key_number_from_its_finding():
    n = {"activations": 13, "attention_rho": -0.06, "attention_activations_ci_low": -0.47,
         "attention_activations_ci_high": 0.35, "jacobian_rho": -0.26, "jacobian_activations_ci_low": -0.56,
         "jacobian_activations_ci_high": 0.1, "gradient_p1_initial": 0.0446, "gradient_p7_initial": 2.56e-9,
         "saturated_share_max": 0.0, "factor": 100.0, "shares": "softmax 0.17, x³/√N 0.98",
         "negative_shares": "softmax 0.00 / 0.00", "k_1_to_2_by_length": "-0.7 points at N = 17 (95% CI -4.7 to +3.3)"}
    keys = {cid: f(n) for cid, f in page.KEY_NUMBERS.items()}
    assert set(keys) == set(page.MEASURED_CLAIMS) == set(page.MEASURED_SECTIONS)
    assert keys["norm_paradox"] == ("Spearman ρ of accuracy over 13 activations: with the attention norm −0.06 (−0.47 to "
                                    "+0.35), with the Jacobian −0.26 (−0.56 to +0.10)").replace("−", "-")
    assert keys["powers_gradients"].endswith("0.045 at p = 1, 2.6e-09 at p = 7")
    assert keys["outliers"] == "the token's share of the last layer's attention at ×100: softmax 0.17, x³/√N 0.98"


def test_the_closing_table_links_each_claim_to_its_section_with_its_verdict_and_key_number(monkeypatch):
    import polyattn.claims.evaluate as evaluate_module
    import polyattn.claims.register as register
    import polyattn.claims.report as report

    claims = {"planted_one": SimpleNamespace(chapter="09_critiques"), "planted_two": SimpleNamespace(chapter="09_critiques"),
              "elsewhere": SimpleNamespace(chapter="04_vit")}
    finding = SimpleNamespace(form="mixed", numbers={"factor": 100.0, "shares": "softmax 0.17"}, summary="unused")
    measured = {"outliers": SimpleNamespace(chapter="09_critiques", machine_dependent=False, evaluate=lambda: finding),
                "cost": SimpleNamespace(chapter="09_critiques", machine_dependent=True, evaluate=None)}
    monkeypatch.setattr(register, "REGISTER", claims)
    monkeypatch.setattr(register, "MEASURED", measured)
    monkeypatch.setattr(evaluate_module, "evaluate", lambda cid: cid)
    monkeypatch.setattr(report, "answer_rows", lambda verdicts, ids: [
        {"id": "planted_one", "verdict": "inconclusive at this power", "key number": "a − b: +0.72 [−4.40, +5.83] points",
         "late": True, "interim": False}])
    rows = page.findings_rows()
    assert [r["id"] for r in rows] == ["planted_one", "planted_two", "outliers"]
    assert rows[0]["section"] == "claim-planted-one" and rows[0]["late"]
    assert rows[1]["verdict"] == "no paired runs stored yet" and rows[1]["key"] == ""
    assert rows[2] == {"id": "outliers", "name": "polynomials amplify outliers", "section": "critiques-extreme-entries",
                       "verdict": "mixed", "late": False,
                       "key": "the token's share of the last layer's attention at ×100: softmax 0.17"}
    table = page.findings_table()
    shown = _rows(table)
    assert shown[0]["claim"] == '<a href="#claim-planted-one">planted_one</a>'
    assert shown[0]["verdict"] == "<b>inconclusive at this power</b>†" and shown[2]["verdict"] == "<b>mixed</b>"
    assert "† margin registered after" in table.caption

