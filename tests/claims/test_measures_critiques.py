"""Chapter 09's measured claims: planted records drive each form a rule can give, and the committed
records give the committed verdicts."""
import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
from support.planted_records import plant

from polyattn.experiments import vit
from polyattn.measures import critiques as measure
from polyattn.measures import measurement_records, norms

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "data" / "results"

# --- the norm paradox ---------------------------------------------------------------------------

#: x/sqrt(N) and the unscaled cube (the reviewer's pair) among eight activations
ACTIVATIONS = ("poly:p=1", "poly:p=3,c=1", "softmax", "poly:p=3", "poly:p=3,c=1/14", "poly:p=2", "sigmoid", "relu_n")
SEEDS = (0, 1, 2)
NORM_METRICS = ("attn_fro", "attn_fro_over_sqrt_n", "act_jac_fro", "grad_attn_fro", "param_jac_fro")


def _plant_table1(root, planted_grid, level, accuracy, cube_first=0.5, cube_later=1.5, activations=ACTIVATIONS):
    """Table 1 runs, one per activation and seed: every norm of activation ``i`` sits at ``level(i)``
    (the unscaled cube at ``cube_first`` times x/sqrt(N)'s level at the first probe and ``cube_later``
    times at the later one), and the run's final accuracy is ``accuracy(i, seed)``."""
    base = vit.table1("smoke", seeds=[0])[0]
    linear = level(activations.index("poly:p=1"))
    configs = []
    for i, act in enumerate(activations):
        for s in SEEDS:
            cfg = base.replace(activation=act, seed=s)
            values = ({0: cube_first * linear, 10: cube_later * linear} if act == "poly:p=3,c=1"
                      else {0: level(i), 10: level(i)})
            probes = [{"step": step, "layer": 0, "head": 0, "metric": m, "value": v}
                      for step, v in values.items() for m in NORM_METRICS]
            plant(root, cfg, [{"epoch": 1, "step": 10, "test_acc": accuracy(i, s)}], probes=probes,
                  seq_lens={"seq_len": 50})
            configs.append(cfg)
    planted_grid(measure.TABLE1_GRID, configs)


@pytest.fixture
def fewer_draws(monkeypatch):
    """Planted runs need fewer bootstrap draws than the book's to decide."""
    monkeypatch.setattr(norms, "N_BOOT", 300)


def test_norms_unrelated_to_accuracy_across_activations_support_the_conclusion(tmp_path, planted_grid, fewer_draws):
    # the norm depends on the activation only and accuracy on the seed only: rho is 0 in every resample
    _plant_table1(tmp_path, planted_grid, level=lambda i: 1.0 + i, accuracy=lambda i, s: 0.70 + 0.01 * s)
    f = measure.norm_paradox(tmp_path)
    assert f.form == "holds"
    assert f.numbers["attention_reading"] == f.numbers["jacobian_reading"] == "does not explain"
    assert abs(f.numbers["attention_rho"]) < 1e-9
    assert f.numbers["activations"] == len(ACTIVATIONS)
    assert "neither orders the activations by accuracy" in f.summary


def test_the_premise_is_reported_and_does_not_decide(tmp_path, planted_grid, fewer_draws):
    # the cube's norms below x/sqrt(N)'s at the first probe, above later: the premise at initialisation only
    _plant_table1(tmp_path / "a", planted_grid, level=lambda i: 1.0 + i, accuracy=lambda i, s: 0.70 + 0.01 * s)
    only_first = measure.norm_paradox(tmp_path / "a")
    assert only_first.numbers["premise_first_probe"] == "lower"
    assert only_first.numbers["premise_later_probes"] == "higher"
    assert only_first.numbers["attention_below_first_probe"] == 1.0
    assert only_first.numbers["attention_below_later_probes"] == 0.0
    assert only_first.numbers["attention_above_from_step"] == 10
    assert "holds at the first probe only" in only_first.summary
    # the same conclusion with the cube's norms below throughout: the same verdict
    _plant_table1(tmp_path / "b", planted_grid, level=lambda i: 1.0 + i, accuracy=lambda i, s: 0.70 + 0.01 * s,
                  cube_first=0.5, cube_later=0.5)
    throughout = measure.norm_paradox(tmp_path / "b")
    assert throughout.numbers["premise_later_probes"] == "lower"
    assert "holds through training" in throughout.summary
    assert throughout.form == only_first.form == "holds"


def test_norms_that_order_the_activations_by_accuracy_contradict_it(tmp_path, planted_grid, fewer_draws):
    _plant_table1(tmp_path, planted_grid, level=lambda i: 1.0 + i, accuracy=lambda i, s: 0.50 + 0.04 * i + 0.002 * s,
                  cube_first=1.0, cube_later=1.0)
    f = measure.norm_paradox(tmp_path)
    assert f.form == "not supported"
    assert f.numbers["attention_reading"] == "explains"
    assert f.numbers["attention_activations_ci_low"] > 0


def test_a_norm_neither_shown_to_explain_nor_not_to_is_inconclusive_at_this_power(tmp_path, planted_grid,
                                                                                    fewer_draws):
    # accuracy loosely follows the norm across eight activations: the interval holds 0 and reaches 0.5
    order = (2, 0, 5, 1, 7, 3, 4, 6)
    _plant_table1(tmp_path, planted_grid, level=lambda i: 1.0 + i,
                  accuracy=lambda i, s: 0.50 + 0.04 * order[i] + 0.002 * s, cube_first=1.0, cube_later=1.0)
    f = measure.norm_paradox(tmp_path)
    assert f.numbers["attention_reading"] == "undecided"
    assert f.numbers["attention_activations_ci_low"] < 0 < f.numbers["attention_activations_ci_high"]
    assert f.form == "inconclusive at this power"


def test_fewer_than_three_activations_or_no_runs_are_inconclusive_at_this_scale(tmp_path, planted_grid, fewer_draws):
    _plant_table1(tmp_path / "two", planted_grid, level=lambda i: 1.0 + i, accuracy=lambda i, s: 0.70 + 0.01 * s,
                  activations=ACTIVATIONS[:2])
    assert measure.norm_paradox(tmp_path / "two").form == "inconclusive at this scale"
    planted_grid(measure.TABLE1_GRID, vit.table1("smoke", seeds=[0]))
    empty = measure.norm_paradox(tmp_path / "none")
    assert empty.form == "inconclusive at this scale"
    assert empty.numbers["runs"] == 0


# --- scale sensitivity ------------------------------------------------------------------------------


def _plant_sweep(root, planted_grid, accuracy):
    """The book's scale sweep (five constants, three lengths, three seeds) with final accuracy
    ``accuracy(k, seed, n)``, ``k = c sqrt(N)``."""
    configs = vit.scale_sweep("book")
    for cfg in configs:
        k = float(eval(cfg.activation.split("c=")[1])) * math.sqrt(cfg.seq_len)
        plant(root, cfg, [{"epoch": 1, "step": 10, "test_acc": accuracy(k, cfg.seed, cfg.seq_len)}])
    planted_grid(measure.SWEEP_GRID, configs)


def test_a_factor_of_two_that_moves_accuracy_holds(tmp_path, planted_grid):
    _plant_sweep(tmp_path, planted_grid, lambda k, s, n: 0.5 + 0.05 * math.log2(k) + 0.001 * s)
    f = measure.scale_sensitivity(tmp_path)
    assert f.form == "holds"
    first = f.numbers["lengths"].split(", ")[0]
    assert f.numbers[f"k_1_to_2_at_{first}"] == pytest.approx(5.0, abs=0.5)


def test_a_factor_of_two_inside_the_margin_is_not_supported(tmp_path, planted_grid):
    _plant_sweep(tmp_path, planted_grid, lambda k, s, n: 0.7 + 0.001 * math.sin(5 * s + 2 * k + n))
    f = measure.scale_sensitivity(tmp_path)
    assert f.form == "not supported"
    assert f.numbers["half_width_max"] < f.numbers["margin"]


def test_a_noisy_sweep_is_inconclusive_at_this_power(tmp_path, planted_grid):
    # the seeds disagree on the direction: intervals wide around 0
    _plant_sweep(tmp_path, planted_grid, lambda k, s, n: 0.6 + 0.05 * (1.0, -1.0, 0.5)[s] * math.log2(k))
    assert measure.scale_sensitivity(tmp_path).form == "inconclusive at this power"


def test_no_sweep_is_inconclusive_at_this_scale(tmp_path, planted_grid):
    planted_grid(measure.SWEEP_GRID, vit.scale_sweep("smoke"))
    assert measure.scale_sensitivity(tmp_path).form == "inconclusive at this scale"


# --- the short retrainings ---------------------------------------------------------------------------


@pytest.fixture
def short_root(tmp_path):
    """A results folder holding copies of the committed short retrainings, and a planted random-score
    survey beside it (so no survey is computed)."""
    root = tmp_path / "results"
    shutil.copytree(COMMITTED / measure.SHORT_GRID, root / measure.SHORT_GRID)
    settings = measure.survey_settings()
    rows = [{"activation": a, "sigma": s, "N": settings["n"], "mean": (0.3 if a == "softmax" else s ** (i - 1)),
             "saturated_share": (0.6 if a == "softmax" and s >= 10 else 0.0),
             "row_jac_saturated": (0.004 if a == "softmax" and s >= 10 else float("nan")),
             "gaussian_prediction": float("nan")}
            for i, a in enumerate(settings["specs"]) for s in settings["sigmas"]]
    measurement_records.write_planted(tmp_path / "measurements", measure.SURVEY_NAME, measure.SURVEY_FUNCTION, settings,
                                      pd.DataFrame(rows))
    return root


def _edit_short(root, edit):
    """Rewrite every stored short retraining with ``edit(record)``."""
    for path in (root / measure.SHORT_GRID).glob("*.json"):
        record = json.loads(path.read_text())
        edit(record)
        path.write_text(json.dumps(record))


def _gradient_rows(record, state):
    return [r for r in record["final"]["gradients"]["rows"] if r["state"] == state]


def _power(record):
    act = record["config"]["activation"]
    return int(act.split("=")[1]) if act.startswith("poly:p=") and "," not in act else None


def test_the_committed_gradients_vanish_and_explode(short_root):
    f = measure.powers_gradients(short_root)
    assert f.form == "holds"
    assert f.numbers["exploded"] > 0 and f.numbers["gradient_rank_correlation_initial"] <= -0.8
    # the planted survey is read, not recomputed
    assert f.numbers["random_p3_unit_sigma"] == pytest.approx(1.0)


def test_gradients_that_vanish_without_exploding_are_mixed(short_root):
    linear = {}

    def read(record):
        if record["config"]["activation"] == "poly:p=1":
            linear["jac"] = _gradient_rows(record, "trained")[0]["act_jac_fro"]

    _edit_short(short_root, read)

    def tame(record):
        if _power(record):
            for r in _gradient_rows(record, "trained"):
                r["act_jac_fro"] = linear["jac"]

    _edit_short(short_root, tame)
    f = measure.powers_gradients(short_root)
    assert f.numbers["exploded"] == 0
    assert f.form == "mixed"


def test_gradients_that_neither_vanish_nor_explode_are_not_supported(short_root):
    def flat(record):
        p = _power(record) or (int(record["config"]["activation"].split("=")[1])
                               if record["config"]["activation"].startswith("poly_odd") else None)
        if p:
            for r in record["final"]["gradients"]["rows"]:
                r["act_jac_fro"] = 1.0
                if r["state"] == "initialisation":
                    r["grad_scores_fro"] = 0.01 * p

    _edit_short(short_root, flat)
    f = measure.powers_gradients(short_root)
    assert f.numbers["gradient_rank_correlation_initial"] == pytest.approx(1.0)
    assert f.form == "not supported"


def test_softmax_rows_that_saturate_in_the_model_make_saturation_hold(short_root):
    assert measure.softmax_saturation(short_root).form == "holds only under its assumptions"

    def saturate(record):
        if record["config"]["activation"] == "softmax":
            for r in record["final"]["gradients"]["rows"]:
                r["saturated_share"] = 0.2

    _edit_short(short_root, saturate)
    f = measure.softmax_saturation(short_root)
    assert f.form == "holds"
    assert f.numbers["saturated_share_max"] == pytest.approx(0.2)
    assert f.numbers["random_half_saturated_sigma"] == 10.0


def _set_correct(record, where, factor, text):
    o = record["final"]["outliers"]
    o["correct"][where][o["factors"].index(factor)] = text


def test_outliers_that_every_polynomial_amplifies_and_loses_more_to_hold(short_root):
    assert measure.outliers(short_root).form == "mixed"

    def polynomials_lose(record):
        o = record["final"]["outliers"]
        clean = o["correct"]["scores"][o["factors"].index(1.0)]
        lost = "0" * len(clean) if record["config"]["activation"] != "softmax" else clean
        _set_correct(record, "scores", 100.0, lost)

    _edit_short(short_root, polynomials_lose)
    f = measure.outliers(short_root)
    assert f.numbers["loses_more"] == f.numbers["cases"] == 3
    assert f.form == "holds"


def test_outliers_that_no_polynomial_amplifies_nor_loses_more_to_are_not_supported(short_root):
    def tame(record):
        o = record["final"]["outliers"]
        clean = o["correct"]["scores"][o["factors"].index(1.0)]
        softmax = record["config"]["activation"] == "softmax"
        _set_correct(record, "scores", 100.0, "0" * len(clean) if softmax else clean)
        for r in o["table"]:
            if r["where"] == "scores":
                r["token_share"] = 0.02

    _edit_short(short_root, tame)
    f = measure.outliers(short_root)
    assert f.numbers["amplified"] == 0 and f.numbers["loses_more"] == 0
    assert f.form == "not supported"


def test_the_maps_are_described(short_root):
    f = measure.attention_maps(short_root)
    assert f.form == "measured"
    assert f.numbers["negative share, first layer softmax"] == 0.0
    assert f.numbers["distance_min"] <= f.numbers["uniform_distance"] <= f.numbers["distance_max"]


def test_a_missing_short_retraining_leaves_every_short_claim_inconclusive_at_this_scale(short_root):
    next((short_root / measure.SHORT_GRID).glob("*.json")).unlink()
    for fn in (measure.powers_gradients, measure.softmax_saturation, measure.outliers, measure.attention_maps):
        f = fn(short_root)
        assert f.form == "inconclusive at this scale", fn.__name__
        assert f.numbers["short_runs_planned"] == f.numbers["short_runs_measured"] + 1


# --- the random-score survey ---------------------------------------------------------------------------


def test_a_stale_survey_is_computed_again_and_then_read(tmp_path, monkeypatch):
    import polyattn.theory

    calls = []

    def fake_survey(specs, sigmas, n, reps, seed, D=64, saturation=0.99):
        calls.append(n)
        return pd.DataFrame([{"activation": a, "sigma": s, "mean": 1.0} for a in specs for s in sigmas])

    monkeypatch.setattr(polyattn.theory, "jacobian_scale_survey", fake_survey)
    directory = tmp_path / "measurements"
    stale = {**measure.survey_settings(), "reps": 1}
    measurement_records.write_planted(directory, measure.SURVEY_NAME, measure.SURVEY_FUNCTION, stale,
                                      pd.DataFrame([{"activation": "softmax", "sigma": 1.0, "mean": 9.0}]))
    first = measure.jacobian_survey(tmp_path / "results")
    assert first.computed and calls == [measure.survey_settings()["n"]]
    again = measure.jacobian_survey(tmp_path / "results")
    assert not again.computed and len(calls) == 1
    assert set(again.table["activation"]) == set(measure.survey_settings()["specs"])


def test_the_crossing_spread_of_the_quadratic_is_one_half():
    # 2 sigma sqrt(1!!) = 1 at sigma = 1/2
    assert measure.crossing_sigmas()[2] == pytest.approx(0.5)


# --- the committed records -------------------------------------------------------------------------------


@pytest.mark.committed
@pytest.mark.parametrize("claim_id", ["norm_paradox", "scale_sensitivity", "powers_gradients", "softmax_saturation",
                                      "outliers", "attention_maps"])
def test_the_committed_records_give_the_committed_verdict(claim_id):
    committed = json.loads((ROOT / "data" / "verdicts.json").read_text())[claim_id]
    assert getattr(measure, claim_id)().form == committed["form"]
