"""Chapter 04's measured claim on Figure 1: does the best constant move like 1/sqrt(N)?"""
import json
import math
from pathlib import Path

import pytest
from support.planted_records import plant

from polyattn.experiments import vit
from polyattn.measures import scale as measure

#: patch sizes of 28-px images and the lengths they give (with the CLS token)
PATCHES = {7: 17, 4: 50, 2: 197}
CONSTANTS = ("1/8", "1/4", "1/2", "1", "2")
SEEDS = (0, 1, 2)


def _sweep(root, grid, best_c, curvature=20.0, noise=0.05, patches=PATCHES, constants=CONSTANTS, stored=None):
    """A sweep whose mean accuracy (points) peaks, as a parabola in log c of the given curvature, at
    ``best_c(N)``; each run gets a deterministic wobble of up to ``noise`` points that averages to 0 over
    the seeds, so the means sit on the parabola and resampling seeds moves them both ways.  ``stored``:
    the patch sizes whose runs are written (default all); the grid plans every one."""
    base = vit.scale_sweep("smoke")[0].replace(experiment=grid)
    configs = []
    for patch, n in patches.items():
        for c in constants:
            for s in SEEDS:
                cfg = base.replace(activation=f"poly:p=3,c={c}", patch_size=patch, seed=s)
                configs.append(cfg)
                if stored is not None and patch not in stored:
                    continue
                cv = float(eval(c))
                points = 80 - curvature * (math.log(cv) - math.log(best_c(n))) ** 2 + noise * (s - 1) * math.sin(3 * cv + n)
                plant(root, cfg, [{"epoch": 1, "step": 10, "test_acc": points / 100}], seq_lens={"seq_len": n})
    return configs


def _grids(planted_grid, short, long=()):
    planted_grid(measure.SHORT_GRID, short)
    planted_grid(measure.LONG_GRID, list(long))


def test_a_best_constant_that_follows_one_over_root_n_holds(tmp_path, planted_grid):
    _grids(planted_grid, _sweep(tmp_path, "vit_scale", lambda n: 3 / math.sqrt(n)))
    f = measure.fig1_scale(tmp_path)
    assert f.form == "holds", f.summary
    assert f.numbers["slope CI low"] <= -0.5 <= f.numbers["slope CI high"] < 0
    assert f.numbers["deciding sweep"] == "vit_scale"


def test_a_best_constant_that_does_not_move_is_not_supported(tmp_path, planted_grid):
    _grids(planted_grid, _sweep(tmp_path, "vit_scale", lambda n: 0.45))
    f = measure.fig1_scale(tmp_path)
    assert f.form == "not supported", f.summary
    assert f.numbers["slope CI high"] < -0.5 or f.numbers["slope CI low"] > -0.5


def test_a_flat_sweep_identifies_no_best_constant(tmp_path, planted_grid):
    # the optimum still moves like 1/sqrt(N), but no constant is a point better than another
    _grids(planted_grid, _sweep(tmp_path, "vit_scale", lambda n: 3 / math.sqrt(n), curvature=0.2, noise=0.002))
    f = measure.fig1_scale(tmp_path)
    assert f.form == "inconclusive at this scale"
    assert f.numbers["deciding sweep flat lengths"] == "17, 50, 197"
    assert "flat at" in f.summary


def test_noisy_winners_are_inconclusive_at_this_scale(tmp_path, planted_grid):
    _grids(planted_grid, _sweep(tmp_path, "vit_scale", lambda n: 3 / math.sqrt(n), curvature=2.0, noise=3.0))
    assert measure.fig1_scale(tmp_path).form == "inconclusive at this scale"


def test_the_complete_longer_sweep_decides(tmp_path, planted_grid):
    short = _sweep(tmp_path, "vit_scale", lambda n: 3 / math.sqrt(n))
    long = _sweep(tmp_path, "vit_scale_long", lambda n: 0.45)
    _grids(planted_grid, short, long)
    f = measure.fig1_scale(tmp_path)
    assert f.numbers["deciding sweep"] == "vit_scale_long"
    assert f.form == "not supported"


def test_a_partial_longer_sweep_states_its_spread_but_does_not_decide(tmp_path, planted_grid):
    short = _sweep(tmp_path, "vit_scale", lambda n: 3 / math.sqrt(n))
    long = _sweep(tmp_path, "vit_scale_long", lambda n: 0.45, curvature=0.2, noise=0.002, stored=(7, 4))
    _grids(planted_grid, short, long)
    f = measure.fig1_scale(tmp_path)
    assert f.form == "holds"
    assert f.numbers["long sweep runs stored"] == 2 * len(CONSTANTS) * len(SEEDS)
    assert f.numbers["long sweep complete lengths"] == "17, 50"
    spread = f.numbers["long sweep N = 50: spread (points)"]
    accs = [f.numbers[f"long sweep N = 50: c = {c} (%)"] for c in CONSTANTS]
    assert spread == pytest.approx(max(accs) - min(accs)) and spread < measure.FLAT_SPREAD
    assert f.numbers["long sweep N = 50: flat"] == "flat"
    assert "so its best constant is not identified there" in f.summary


def test_no_stored_run_is_inconclusive_at_this_scale(tmp_path, planted_grid):
    _grids(planted_grid, vit.scale_sweep("smoke"))
    assert measure.fig1_scale(tmp_path).form == "inconclusive at this scale"


@pytest.mark.committed
def test_the_committed_records_give_the_committed_verdict(repo_root: Path):
    committed = json.loads((repo_root / "data" / "verdicts.json").read_text())["fig1_scale"]
    f = measure.fig1_scale()
    assert f.form == committed["form"]
    # the longer sweep is flat at N = 50: every constant within a point of the others
    assert f.numbers["long sweep N = 50: flat"] == "flat"
