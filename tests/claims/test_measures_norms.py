"""Chapter 03's measured claim: do the norms predict which activation trains best?"""
import json
from pathlib import Path

import pytest
from support.planted_records import plant

from polyattn.experiments import vit
from polyattn.measures import norms as measure

ACTIVATIONS = ("softmax", "poly:p=3", "poly:p=3,c=1/14", "poly:p=3,c=1", "poly:p=1", "poly:p=2")
SEEDS = (0, 1, 2)
#: a ranking of the activations unrelated to their accuracy (ranks 1..6 against 3, 6, 1, 5, 2, 4 would
#: still correlate a little; this order does not)
SCRAMBLED = (3, 1, 5, 6, 2, 4)


def _plant_table1(root, planted_grid, norm_of, activations=ACTIVATIONS):
    """Table 1 runs whose accuracy rises with the activation's index and, a little, with the seed;
    ``norm_of(metric, i, seed)`` gives each run's norm."""
    base = vit.table1("smoke", seeds=[0])[0]
    configs = []
    for i, act in enumerate(activations):
        for s in SEEDS:
            cfg = base.replace(activation=act, seed=s)
            acc = 0.50 + 0.05 * i + 0.004 * s
            probes = [{"step": step, "layer": 0, "head": 0, "metric": m, "value": norm_of(m, i, s) * (1 + 0.01 * step)}
                      for step in (0, 10) for m in ("attn_fro_over_sqrt_n", "act_jac_fro", "param_jac_fro")]
            plant(root, cfg, [{"epoch": 1, "step": 10, "test_acc": acc}], probes=probes, seq_lens={"seq_len": 50})
            configs.append(cfg)
    planted_grid(measure.GRID, configs)


@pytest.fixture
def fewer_draws(monkeypatch):
    """Planted runs need fewer bootstrap draws than the book's to decide."""
    monkeypatch.setattr(measure, "N_BOOT", 300)


def test_norms_that_rank_the_activations_as_accuracy_does_hold(tmp_path, planted_grid, fewer_draws):
    _plant_table1(tmp_path, planted_grid, lambda m, i, s: 1.0 + i + 0.1 * s)
    f = measure.norms_predict(tmp_path)
    assert f.form == "holds"
    assert f.numbers["norms separating activations"] == 3
    assert f.numbers["attention norm: rho"] > 0.9
    assert f.numbers["runs"] == len(ACTIVATIONS) * len(SEEDS)
    assert "3 of 3 norms separate activations" in f.summary


def test_one_norm_that_ranks_them_and_two_that_do_not_are_mixed(tmp_path, planted_grid, fewer_draws):
    _plant_table1(tmp_path, planted_grid,
                  lambda m, i, s: (1.0 + i if m == "attn_fro_over_sqrt_n" else SCRAMBLED[i]) + 0.1 * s)
    f = measure.norms_predict(tmp_path)
    assert f.form == "mixed"
    assert f.numbers["attention norm: separates activations"] == "yes"
    assert f.numbers["activation Jacobian: separates activations"] == "no"


def test_norms_unrelated_to_accuracy_are_inconclusive_at_this_power(tmp_path, planted_grid, fewer_draws):
    _plant_table1(tmp_path, planted_grid, lambda m, i, s: SCRAMBLED[i] + 0.1 * s)
    f = measure.norms_predict(tmp_path)
    assert f.form == "inconclusive at this power"
    assert f.numbers["norms separating activations"] == 0


def test_two_activations_cannot_separate_activations(tmp_path, planted_grid, fewer_draws):
    _plant_table1(tmp_path, planted_grid, lambda m, i, s: 1.0 + i + 0.1 * s, activations=ACTIVATIONS[:2])
    assert measure.norms_predict(tmp_path).form == "inconclusive at this scale"


def test_no_stored_run_is_inconclusive_at_this_scale(tmp_path, planted_grid, fewer_draws):
    planted_grid(measure.GRID, vit.table1("smoke", seeds=[0]))
    f = measure.norms_predict(tmp_path)
    assert f.form == "inconclusive at this scale"
    assert f.numbers["runs"] == 0


def test_the_decision_counts_the_norms_that_separate():
    assert measure.decide(3, 3, 13) == "holds"
    assert measure.decide(1, 3, 13) == "mixed"
    assert measure.decide(0, 3, 13) == "inconclusive at this power"
    assert measure.decide(3, 3, 2) == "inconclusive at this scale"


@pytest.mark.committed
def test_the_committed_records_give_the_committed_verdict(repo_root: Path):
    committed = json.loads((repo_root / "data" / "verdicts.json").read_text())["norms_predict"]
    assert measure.norms_predict().form == committed["form"]
