"""Pricing a missing run from a step-time ratio measured side by side with a stored one."""
import math

import pytest

from polyattn import step_cost
from polyattn.config import TrainConfig


def _cfg(**kw):
    base = dict(experiment="unit_cost", preset="book", train_subset=256, test_subset=64, batch_size=64, epochs=2,
                patch_size=7, model="micro")
    return TrainConfig(**{**base, **kw})


def test_cost_class_key_ignores_activation_and_seed_and_is_stable_under_defaults():
    a = _cfg()
    assert step_cost.cost_class_key(a) == step_cost.cost_class_key(a.replace(activation="poly:p=3", seed=4))
    assert step_cost.cost_class_key(a) != step_cost.cost_class_key(a.replace(patch_size=4))
    # a field left at its default is not in the key (hashes stay stable when configs gain fields)
    assert "qk_norm" not in step_cost.cost_class_key(a)


def test_measure_step_ratio_times_both_runs_and_counts_their_steps():
    m = step_cost.measure_step_ratio(_cfg(patch_size=4), _cfg(epochs=3), steps=1, rounds=2)
    assert m["steps"] == (256 // 64) * 2 and m["reference_steps"] == (256 // 64) * 3
    assert m["step_s"] > 0 and m["reference_step_s"] > 0
    assert math.isfinite(m["step_ratio"]) and m["step_ratio"] > 0
    with pytest.raises(ValueError, match="steps and rounds"):
        step_cost.measure_step_ratio(_cfg(), _cfg(), steps=0)


def test_nearest_reference_takes_the_same_task_and_the_fewest_differences():
    missing = _cfg(patch_size=2, train_subset=128)
    near, far = _cfg(patch_size=4, train_subset=128), _cfg(patch_size=4, model="mini", lr=0.01)
    other_task = TrainConfig(experiment="unit_cost", preset="book", task="lra", dataset="listops")
    assert step_cost.nearest_reference(missing, [far, other_task, near]) == near
    assert step_cost.nearest_reference(missing, [other_task]) is None


def test_estimate_scales_the_reference_wall_time_per_step():
    ratios = {"m": {"reference": "r", "step_ratio": 3.0, "steps": 10, "reference_steps": 20}}
    # 100 s and 300 s for 20 steps: 10 s a step; 3 x 10 s x 10 steps
    assert step_cost.estimate_seconds("m", ratios, {"r": [100.0, 300.0]}) == pytest.approx(300.0)
    assert step_cost.estimate_seconds("m", ratios, {}) is None
    assert step_cost.estimate_seconds("other", ratios, {"r": [1.0]}) is None


def test_measure_missing_writes_each_class_once_and_a_corrupt_file_is_named(tmp_path):
    missing = [_cfg(patch_size=4, seed=s) for s in range(2)]
    seen = []
    out = step_cost.measure_missing(missing, [_cfg()], root=tmp_path, steps=1, rounds=1, progress=seen.append)
    assert list(out) == [step_cost.cost_class_key(missing[0])]
    entry = out[step_cost.cost_class_key(missing[0])]
    assert entry["reference"] == step_cost.cost_class_key(_cfg()) and entry["cpu"]
    assert step_cost.load_ratios(tmp_path) == out
    # measured classes are not measured again
    assert step_cost.measure_missing(missing, [_cfg()], root=tmp_path, progress=seen.append) == out
    assert sum("against" in line for line in seen) == 1
    (tmp_path / step_cost.RATIOS_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="records --measure"):
        step_cost.load_ratios(tmp_path)
