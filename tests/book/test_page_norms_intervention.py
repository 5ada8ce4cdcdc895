"""Chapter 03's intervention on the bound on planted records: the order of its tables, the
stored runs and the norm check in words, and the figure of accuracy against k."""
import matplotlib
import pytest
from support.pages import probe_rows
from support.records import make_record

from polyattn.experiments import vit
from polyattn.studies.norms import intervention as ni

matplotlib.use("Agg")


def _intervention(k8_seeds=(0, 1, 2), capped_seeds=(0, 1, 2)):
    conv = [make_record(act, s, accs=(0.5, acc + 0.001 * s), experiment="vit_converged",
                        probes=probe_rows({"attn_fro_over_sqrt_n": ratio}))
            for act, acc, ratio in (("softmax", 0.89, 0.4), ("poly:p=3", 0.888, 2.0), ("poly:p=2", 0.88, 0.5))
            for s in (0, 1, 2)]
    runs = ([make_record("softmax:k=8", s, accs=(0.5, 0.88), experiment="vit_norm_intervention",
                         probes=probe_rows({"attn_fro_over_sqrt_n": 2.3 + 0.1 * s})) for s in k8_seeds]
            + [make_record("poly_cap:p=3", s, accs=(0.5, 0.892), experiment="vit_norm_intervention",
                           probes=probe_rows({"attn_fro_over_sqrt_n": 0.35 + 0.05 * s})) for s in capped_seeds])
    return ni.intervention_runs(intervention=runs, converged=conv)


def test_the_intervention_tables_order_softmax_the_cubic_the_cap_then_k():
    iv_runs = _intervention()
    rows = iv_runs and ni.accuracy_table(iv_runs).data
    assert list(rows["activation"]) == ["softmax", "x³/√N", "x³/√N, rows capped at norm 1", "8·softmax"]
    checks = ni.norm_check(iv_runs)
    assert list(checks["activation"]) == ["softmax", "poly:p=3", "poly_cap:p=3", "softmax:k=8"]   # poly:p=2 is not compared
    assert checks.set_index("activation").loc["poly_cap:p=3", "norm_final_max"] == pytest.approx(0.45)


def test_the_intervention_values_count_the_stored_runs_and_read_the_norm_check():
    v = ni.intervention_values(_intervention(k8_seeds=(0, 1)))
    grid = vit.intervention("book")
    assert v["ch03_int_stored"] == f"5 of {len(grid)}"
    planned_k8 = sum(c.activation == "softmax:k=8" for c in grid)
    assert f"8·softmax: 2 of {planned_k8}" in v["ch03_int_stored_by_activation"]
    assert v["ch03_int_stored_by_activation"].index("rows capped") < v["ch03_int_stored_by_activation"].index("2·softmax")
    assert v["ch03_int_norm_k8"] == "2.35" and v["ch03_int_norm_softmax"] == "0.40"
    assert v["ch03_int_norm_capped_max"] == "0.45" and v["ch03_int_margin"] == "±1 accuracy point"
    assert v["ch03_int_ks"] == "2, 4, 8"


def test_the_k_figure_needs_two_values_of_k_and_no_runs_give_no_tables():
    assert ni.k_figure(_intervention()) is not None
    only_softmax = ni.intervention_runs(intervention=[], converged=[make_record("softmax", 0, experiment="vit_converged")])
    assert ni.k_figure(only_softmax) is None
    empty = ni.intervention_runs(intervention=[], converged=[])
    assert not empty and ni.accuracy_table(empty) is None and ni.norm_check_table(empty) is None
    assert ni.intervention_values(empty)["ch03_int_norm_k8"] == "not probed"


def _unconfounded(tightened_seeds=()):
    base = [make_record(act, s, accs=(0.5, acc), experiment="vit_unclipped",
                        probes=probe_rows({"attn_fro_over_sqrt_n": ratio}))
            for act, acc, ratio in (("softmax", 0.895, 0.35), ("poly:p=3", 0.894, 1.3), ("poly:p=3,c=1", 0.89, 9.0))
            for s in (0, 1)]
    runs = ([make_record("softmax:k=8", s, accs=(0.5, 0.89), experiment="vit_intervention_unclipped",
                         probes=probe_rows({"attn_fro_over_sqrt_n": 2.0 + 0.2 * s})) for s in (0, 1)]
            + [make_record("softmax:k=1/8", s, accs=(0.5, 0.893), experiment="vit_intervention_unclipped",
                           probes=probe_rows({"attn_fro_over_sqrt_n": 0.3})) for s in tightened_seeds])
    return ni.unclipped_runs(intervention=runs, unclipped=base)


def test_the_unconfounded_table_names_the_compensated_arm_and_reads_its_norm():
    rows = ni.unclipped_table(_unconfounded()).data
    assert list(rows["activation"]) == ["softmax", "x³/√N", "8·softmax, output projection started 8 times smaller"]
    assert rows.iloc[2, -1] == "2.1 (2.2)"                  # the unscaled cube of vit_unclipped is not an arm
    assert "no gradient clipping" in ni.unclipped_table(_unconfounded()).caption


def test_the_unconfounded_values_say_which_arm_has_no_run_yet():
    v = ni.unclipped_values(_unconfounded())
    assert v["ch03_iu_norm_k8"] == "2.10" and v["ch03_iu_norm_softmax"] == "0.35" and v["ch03_iu_norm_cube"] == "1.30"
    assert v["ch03_iu_norm_tightened"] == "no run stored yet" and v["ch03_iu_norm_capped"] == "no run stored yet"
    assert ni.unclipped_values(_unconfounded(tightened_seeds=(0,)))["ch03_iu_norm_tightened"] == "0.30"
    empty = ni.unclipped_runs(intervention=[], unclipped=[])
    assert not empty and ni.unclipped_table(empty) is None
