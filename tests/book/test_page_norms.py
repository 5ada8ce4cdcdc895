"""Chapter 03's page module on planted records: the sweep's table, chapter 04's verdict under this
chapter's names, the bounds of Figures 2 and 3, the correlations, the intervention's tables and
figure, and the attention maps' values."""
import math
from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd
import pytest
from support.records import make_record, sweep_records

from polyattn import analysis
from polyattn.claims.spec import Finding
from polyattn.experiments import vit
from polyattn.pages import norms as npage

matplotlib.use("Agg")

N_TOKENS = 50          # Table 1's smoke config: 28-pixel images, patch 4, plus the CLS token


def _probes(values: dict, steps=(0, 10), layers=(0, 1), heads=(0, 1)) -> list[dict]:
    """Probe rows with ``values[metric]`` at every step, layer and head."""
    return [{"step": s, "layer": layer, "head": h, "metric": m, "value": v}
            for m, v in values.items() for s in steps for layer in layers for h in heads]


def _table1(records) -> npage.Table1:
    return npage.Table1(vit.table1("smoke"), records, "smoke", "planted runs", analysis.probe_frame(records))


def _page(trains=True):
    return SimpleNamespace(preset="smoke", device="cpu", trains=trains, not_run="not run", prefix="",
                           on_device=lambda configs: list(configs))


# --- Figure 1 ---------------------------------------------------------------------------------------


def test_the_sweep_table_finds_the_planted_best_constants_and_marks_an_optimum_at_the_edge():
    records = sweep_records({4: 1 / 8, 7: 1 / 32}, noise=0.0)
    best = analysis.best_constant(analysis.final_accuracy(records), n_boot=0)
    rows = {r["N"]: r for r in npage.best_constant_rows(best)}
    assert set(rows) == {17, 50}
    assert rows[50]["best c"] == "1/8" and rows[50]["best at grid edge"] == "no"
    assert rows[17]["best c"] == "1/32" and rows[17]["best at grid edge"] == "yes"
    # three seeds with a steady offset: the margin's interval excludes 0
    assert rows[50]["interval excludes 0"] == "yes"
    assert "±" in rows[50]["accuracy (%) ± sd"]


def test_the_sweep_table_says_when_one_seed_gives_no_interval():
    records = sweep_records({4: 1 / 8}, seeds=(0,))
    best = analysis.best_constant(analysis.final_accuracy(records), n_boot=0)
    (row,) = npage.best_constant_rows(best)
    assert row["interval excludes 0"] == "one seed: no interval" and "±" not in row["accuracy (%) ± sd"]


def test_the_sweep_values_name_the_grid_and_a_page_without_runs_shows_no_table():
    grid = vit.scale_sweep("book")
    sweep = npage.Sweep(grid, [], None, "paper", "not run")
    values = npage.sweep_values(sweep)
    constants = sorted({analysis.activation_constant(c.activation) for c in grid})
    assert values["ch03_n_constants"] == len(constants) and values["ch03_n_lengths"] == 3
    assert values["ch03_constants"] == "{" + ", ".join(lbl for _, lbl in constants) + "}"
    assert values["ch03_grid_factor"] == f"{constants[1][0] / constants[0][0]:g}"
    assert values["ch03_scale_caption"] == "not run"
    assert npage.best_constant_table(sweep) is None and npage.scale_figure(sweep) is None


def test_chapter_04s_verdict_is_glued_with_its_slope_and_interval():
    numbers = {"deciding sweep": "vit_scale", "deciding sweep scale": "1,000 images for 5 epochs",
               "deciding sweep runs stored": 45, "deciding sweep runs planned": 45,
               "best c at N = 197": "2", "best c at N = 17": "1/2", "best c at N = 50": "8",
               "slope": -0.124, "slope CI low": -0.705, "slope CI high": 0.882}
    values = npage.fig1_values(Finding("inconclusive at this scale", "planted", numbers))
    assert values["ch03_fig1_form"] == "inconclusive at this scale"
    assert values["ch03_fig1_best"] == "1/2 at N = 17, 8 at N = 50, 2 at N = 197"
    assert values["ch03_fig1_slope"] == "−0.12 (95% bootstrap interval over seeds: −0.70 to +0.88)"
    assert values["ch03_fig1_stored"] == "45 of 45" and values["ch03_fig1_sweep"].data == "`vit_scale`"


def test_a_slope_that_was_not_fitted_is_said_in_words():
    numbers = {"deciding sweep": "vit_scale", "deciding sweep scale": "", "deciding sweep runs stored": 0,
               "deciding sweep runs planned": 45}
    values = npage.fig1_values(Finding("inconclusive at this scale", "planted", numbers))
    assert values["ch03_fig1_slope"].startswith("not fitted") and values["ch03_fig1_best"] == "none"
    missing = {"slope": float("nan"), "slope CI low": float("nan"), "slope CI high": float("nan")}
    with_nan = npage.fig1_values(Finding("inconclusive at this scale", "planted", {**numbers, **missing}))
    assert with_nan["ch03_fig1_slope"].startswith("not fitted")


# --- Figures 2 and 3 --------------------------------------------------------------------------------


def _bound_records(softmax_ratio=0.6, softmax_jac=None, unscaled_status="ok"):
    sharp = math.sqrt(N_TOKENS) / 2
    jac = 0.4 * sharp if softmax_jac is None else softmax_jac
    return [make_record("softmax", 0, accs=(0.5, 0.80),
                        probes=_probes({"attn_fro_over_sqrt_n": softmax_ratio, "act_jac_fro": jac})),
            make_record("poly:p=3", 0, accs=(0.5, 0.78),
                        probes=_probes({"attn_fro_over_sqrt_n": 3.0, "act_jac_fro": 2.0})),
            make_record("poly:p=3,c=1", 0, accs=(0.5, 0.70), status=unscaled_status,
                        diverged_step=5 if unscaled_status == "diverged" else None,
                        probes=_probes({"attn_fro_over_sqrt_n": 12.0, "act_jac_fro": 10.0}))]


def test_softmax_within_its_bounds_and_the_cubics_norms_are_read_from_the_probes():
    v = npage.bound_values(_table1(_bound_records()))
    assert v["ch03_softmax_max_ratio"] == "0.600" and v["ch03_softmax_bound_word"] == "within"
    assert v["ch03_softmax_jac_sharp"] == "0.40" and v["ch03_softmax_jac_word"] == "within"
    assert v["ch03_softmax_jac_paper"] == "0.10"                  # 2√N is four times √N/2
    assert v["ch03_poly_max_ratio"] == "3" and v["ch03_unscaled_max_ratio"] == "12"
    assert v["ch03_unscaled_jac_ratio"] == "5"
    assert v["ch03_unscaled_acc"] == "70.0%" and v["ch03_scaled_acc"] == "78.0%"


def test_a_softmax_norm_above_its_bound_reads_above_and_a_diverged_cubic_has_no_accuracy():
    v = npage.bound_values(_table1(_bound_records(softmax_ratio=1.3, softmax_jac=math.sqrt(N_TOKENS),
                                                  unscaled_status="diverged")))
    assert v["ch03_softmax_bound_word"] == "above" and v["ch03_softmax_jac_word"] == "above"
    assert v["ch03_unscaled_acc"] == "none (every run diverged)"


def test_without_runs_every_bound_value_says_so_and_there_is_no_figure():
    t1 = npage.Table1(vit.table1("book"), [], "paper", "not run", missing="not run")
    v = npage.bound_values(t1)
    assert set(v.values()) == {"not run"} and "ch03_softmax_bound_word" in v
    assert npage.norms_figure(t1) is None and npage.correlation_figure(t1) is None
    assert npage.correlation_table(t1) is None


def test_the_norms_figure_draws_three_layers_and_names_activations_for_people():
    records = [make_record(act, s, accs=(0.5, 0.7),
                           probes=_probes({"attn_fro": 3.0, "attn_fro_over_sqrt_n": 0.5, "act_jac_fro": 1.0,
                                           "param_jac_fro": 2.0}, layers=(0, 1, 2, 3)))
               for act in vit.NORM_ACTIVATIONS for s in (0, 1)]
    fig = npage.norms_figure(_table1(records))
    assert fig.axes[0].get_title() == "layer 1 of 4" and fig.axes[2].get_title() == "layer 4 of 4"
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["softmax", "x³/√N", "x³ (unscaled)"]


def test_within_or_above():
    assert npage.within_or_above(1.0, 1.0) == "within" and npage.within_or_above(1.01, 1.0) == "above"
    assert npage.within_or_above(float("nan"), 1.0) == "not measured"


# --- do the norms predict accuracy? -----------------------------------------------------------------


def test_correlation_rows_name_the_norms_and_say_when_there_is_no_within_activation_value():
    corr = pd.DataFrame([{"norm": "act_jac_fro_mean", "rho": -0.26, "ci_low": -0.44, "ci_high": -0.04, "p": 0.037,
                          "cluster_ci_low": -0.56, "cluster_ci_high": 0.10, "within_rho": float("nan"),
                          "within_ci_low": float("nan"), "within_ci_high": float("nan"), "within_p": float("nan")}])
    (row,) = npage.correlation_rows(corr)
    assert row["norm"] == "‖∂φ(S)/∂S‖_F" and row["ρ over runs [95% CI]"] == "−0.26 [−0.44, −0.04]"
    assert row["95% CI, activations resampled"] == "[−0.56, +0.10]"
    assert row["ρ within activations [95% CI]"] == "none (one run per activation)" and row["p within (permutation)"] == "none"


def test_the_correlation_table_counts_the_runs_and_leaves_out_a_diverged_one():
    records = []
    for i, act in enumerate(("softmax", "poly:p=1", "poly:p=2", "poly:p=3")):
        for s in (0, 1):
            records.append(make_record(act, s, accs=(0.5, 0.6 + 0.05 * i + 0.01 * s),
                                       probes=_probes({"attn_fro_over_sqrt_n": 1.0 + i + 0.1 * s,
                                                       "act_jac_fro": 2.0 + i, "param_jac_fro": 3.0 - i})))
    records.append(make_record("poly:p=3,c=1", 0, accs=(0.5,), status="diverged", diverged_step=3,
                               probes=_probes({"attn_fro_over_sqrt_n": 9.0, "act_jac_fro": 9.0, "param_jac_fro": 9.0})))
    caption = npage.correlation_table(_table1(records)).caption
    assert "over 8 runs of 4 activations (1 diverged runs left out)" in caption and "1 epoch" in caption


def test_the_claims_numbers_are_glued_per_norm_with_signs_and_a_missing_norm_says_none():
    numbers = {"runs": 65, "activations": 13, "diverged runs left out": 0, "norms": 3,
               "norms separating activations": 0}
    for norm, (rho, lo, hi) in {"attention norm": (-0.06, -0.32, 0.21),
                                "activation Jacobian": (-0.26, -0.44, -0.04)}.items():
        numbers.update({f"{norm}: rho": rho, f"{norm}: CI low": lo, f"{norm}: CI high": hi,
                        f"{norm}: CI over activations low": lo - 0.1, f"{norm}: CI over activations high": hi + 0.1,
                        f"{norm}: rho within activations": rho / 2, f"{norm}: within CI low": lo,
                        f"{norm}: within CI high": hi, f"{norm}: within p": 0.0657})
    v = npage.norms_values(numbers)
    assert v["ch03_rho_attn"] == "−0.06" and v["ch03_rho_attn_ci"] == "−0.32 to +0.21"
    assert v["ch03_rho_act_jac_cluster_ci"] == "−0.54 to +0.06" and v["ch03_rho_attn_within_p"] == "0.066"
    assert v["ch03_rho_param_jac"] == "none" and v["ch03_rho_param_jac_within_ci"] == "none"
    assert v["ch03_norms_runs"] == 65 and v["ch03_norms_separating"] == 0


# --- the mechanism, by intervention -----------------------------------------------------------------


def _intervention(k8_seeds=(0, 1, 2), capped_seeds=(0, 1, 2)):
    conv = [make_record(act, s, accs=(0.5, acc + 0.001 * s), experiment="vit_converged",
                        probes=_probes({"attn_fro_over_sqrt_n": ratio}))
            for act, acc, ratio in (("softmax", 0.89, 0.4), ("poly:p=3", 0.888, 2.0), ("poly:p=2", 0.88, 0.5))
            for s in (0, 1, 2)]
    runs = ([make_record("softmax:k=8", s, accs=(0.5, 0.88), experiment="vit_norm_intervention",
                         probes=_probes({"attn_fro_over_sqrt_n": 2.3 + 0.1 * s})) for s in k8_seeds]
            + [make_record("poly_cap:p=3", s, accs=(0.5, 0.892), experiment="vit_norm_intervention",
                           probes=_probes({"attn_fro_over_sqrt_n": 0.35 + 0.05 * s})) for s in capped_seeds])
    return npage.intervention_runs(intervention=runs, converged=conv)


def test_the_intervention_tables_order_softmax_the_cubic_the_cap_then_k():
    iv_runs = _intervention()
    rows = iv_runs and npage.accuracy_table(iv_runs).data
    assert list(rows["activation"]) == ["softmax", "x³/√N", "x³/√N, rows capped at norm 1", "8·softmax"]
    checks = npage.norm_check(iv_runs)
    assert list(checks["activation"]) == ["softmax", "poly:p=3", "poly_cap:p=3", "softmax:k=8"]   # poly:p=2 is not compared
    assert checks.set_index("activation").loc["poly_cap:p=3", "norm_final_max"] == pytest.approx(0.45)


def test_the_intervention_values_count_the_stored_runs_and_read_the_norm_check():
    v = npage.intervention_values(_intervention(k8_seeds=(0, 1)))
    grid = vit.intervention("book")
    assert v["ch03_int_stored"] == f"5 of {len(grid)}"
    planned_k8 = sum(c.activation == "softmax:k=8" for c in grid)
    assert f"8·softmax: 2 of {planned_k8}" in v["ch03_int_stored_by_activation"]
    assert v["ch03_int_stored_by_activation"].index("rows capped") < v["ch03_int_stored_by_activation"].index("2·softmax")
    assert v["ch03_int_norm_k8"] == "2.35" and v["ch03_int_norm_softmax"] == "0.40"
    assert v["ch03_int_norm_capped_max"] == "0.45" and v["ch03_int_margin"] == "±1 accuracy point"
    assert v["ch03_int_ks"] == "2, 4, 8"


def test_the_k_figure_needs_two_values_of_k_and_no_runs_give_no_tables():
    assert npage.k_figure(_intervention()) is not None
    only_softmax = npage.intervention_runs(intervention=[], converged=[make_record("softmax", 0, experiment="vit_converged")])
    assert npage.k_figure(only_softmax) is None
    empty = npage.intervention_runs(intervention=[], converged=[])
    assert not empty and npage.accuracy_table(empty) is None and npage.norm_check_table(empty) is None
    assert npage.intervention_values(empty)["ch03_int_norm_k8"] == "not probed"


# --- attention maps ---------------------------------------------------------------------------------


def test_the_maps_values_count_negative_weights_and_name_the_activations():
    maps = npage.Maps({"softmax": np.full((2, 3, 3), 0.1), "poly:p=3": np.array([-1.0, 1.0, 1.0, 1.0]).reshape(1, 2, 2)},
                      np.zeros((2, 1, 28, 28)), {"softmax": 45.6, "poly:p=3": float("nan")},
                      vit.table1("smoke")[0], 3, 0, 41.6, "book")
    v = npage.map_values(maps)
    assert v["ch03_neg_frac_softmax"] == "0.00" and v["ch03_neg_frac_poly"] == "0.25"
    assert v["ch03_neg_frac_unscaled"] == "not stored"
    assert v["ch03_map_accuracy"] == "softmax 45.6%, x³/√N diverged"
    assert v["ch03_map_layer"] == 4 and v["ch03_map_head"] == 1 and v["ch03_map_seconds"] == "42"
    assert set(npage.map_values(None, "not run").values()) == {"not run"}


def test_a_page_that_trains_nothing_has_no_maps():
    assert npage.attention_maps(_page(trains=False)) is None and npage.maps_figure(None) is None
    assert npage.table1_runs(_page(trains=False)).missing == "not run"
