"""Chapter 06's measured claim: does PINNsFormer's outcome depend on the seed?"""
import json
from pathlib import Path

import pytest
from support.planted_records import plant

from polyattn.experiments import physics
from polyattn.measures import physics as measure

RMAE_SPEC = [{"name": "rMAE", "higher_is_better": False, "scale": 1.0, "unit": "", "label": "relative mean absolute error"},
             {"name": "rRMSE", "higher_is_better": False, "scale": 1.0, "unit": "",
              "label": "relative root-mean-square error"}]


def _plant(root, planted_grid, errors, other=None):
    """Softmax PINNsFormer runs with ``errors[pde]`` (one final rMAE per seed), and, when given,
    x^3/sqrt(N) runs with ``other[pde]``."""
    configs = []
    for label, table in (("softmax", errors), ("x^3/sqrt(N)", other or {})):
        for pde, values in table.items():
            for seed, err in enumerate(values):
                cfg = physics.config_for("smoke", pde, label, seed)
                plant(root, cfg, [{"epoch": 1, "step": 1, "rMAE": err, "rRMSE": err}], metrics_spec=RMAE_SPEC,
                      task="pde", seq_lens={"seq_len": 5})
                configs.append(cfg)
    planted_grid(measure.GRID, configs)


def test_seeds_that_disagree_on_a_problem_make_the_claim_hold(tmp_path, planted_grid):
    _plant(tmp_path, planted_grid, {"convection": [0.01, 0.02, 0.8], "reaction": [0.01, 0.012, 0.011]})
    f = measure.seed_sensitivity(tmp_path)
    assert f.form == "holds"
    assert f.numbers["problems where softmax is seed-sensitive"] == 1
    assert f.numbers["softmax on convection: seed-sensitive"] == "yes"
    assert "seed-sensitive on convection: 1 of 3 seeds fail" in f.summary


def test_a_spread_above_the_factor_makes_a_problem_seed_sensitive(tmp_path, planted_grid):
    _plant(tmp_path, planted_grid, {"convection": [0.001, 0.002, 0.05]})
    assert measure.seed_sensitivity(tmp_path).form == "holds"


def test_seeds_that_all_agree_leave_the_rate_open(tmp_path, planted_grid):
    _plant(tmp_path, planted_grid, {"convection": [0.01, 0.02, 0.015], "wave": [0.6, 0.7, 0.65]},
           other={"convection": [0.01, 0.9, 0.02]})
    f = measure.seed_sensitivity(tmp_path)
    assert f.form == "inconclusive at this power"
    assert f.numbers["softmax on convection: failed seeds"] == 0
    assert f.numbers["softmax on convection: failure rate CI high"] == pytest.approx(0.708, abs=1e-3)
    assert f.numbers["other activation cases seed-sensitive"] == 1
    assert "failure rates up to 71% not excluded" in f.summary


def test_two_seeds_are_too_few(tmp_path, planted_grid):
    _plant(tmp_path, planted_grid, {"convection": [0.01, 0.02]})
    assert measure.seed_sensitivity(tmp_path).form == "inconclusive at this scale"


def test_no_stored_run_is_inconclusive_at_this_scale(tmp_path, planted_grid):
    planted_grid(measure.GRID, physics.physics("smoke"))
    f = measure.seed_sensitivity(tmp_path)
    assert f.form == "inconclusive at this scale"
    assert f.numbers["runs stored"] == 0


def test_the_scope_names_the_changed_problem():
    grid = measure.GridRecords(tuple(physics.physics("smoke")), ())
    assert "convection at β = 30 instead of the published parameters" in measure.physics_scope(grid)


@pytest.mark.committed
def test_the_committed_records_give_the_committed_verdict(repo_root: Path):
    committed = json.loads((repo_root / "data" / "verdicts.json").read_text())["seed_sensitivity"]
    assert measure.seed_sensitivity().form == committed["form"]
