"""Chapter 09's scale sensitivity: a planted scale sweep drives each form its rule can give, and the
committed records give the committed verdict."""
import json
import math
from pathlib import Path

import pytest
from support.planted_records import plant

from polyattn.experiments import vit
from polyattn.measures import critique_scale as measure

ROOT = Path(__file__).resolve().parents[2]

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


# --- the committed records -------------------------------------------------------------------------------


@pytest.mark.committed
def test_the_committed_records_give_the_committed_verdict():
    committed = json.loads((ROOT / "data" / "verdicts.json").read_text())["scale_sensitivity"]
    assert measure.scale_sensitivity().form == committed["form"]
