"""Chapter 09's norm paradox: planted Table 1 records drive each form its rule can give, and the
committed records give the committed verdict."""
import json
from pathlib import Path

import pytest
from support.planted_records import plant

from polyattn.experiments import vit
from polyattn.measures import critique_paradox as measure
from polyattn.measures import norms

ROOT = Path(__file__).resolve().parents[2]

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


# --- the committed records -------------------------------------------------------------------------------


@pytest.mark.committed
def test_the_committed_records_give_the_committed_verdict():
    committed = json.loads((ROOT / "data" / "verdicts.json").read_text())["norm_paradox"]
    assert measure.norm_paradox().form == committed["form"]
