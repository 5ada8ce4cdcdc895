"""The trained critique grids' analysis: powers against p, gradient change, Q/K controls."""
import numpy as np
import pandas as pd
import pytest

from polyattn.analysis import critique_runs as R
from polyattn.experiments import critiques
from polyattn.results import config_dict


def _record(cfg, acc, status="ok"):
    return {"schema": 1, "experiment": cfg.experiment, "config": config_dict(cfg), "config_hash": cfg.hash,
            "seed": cfg.seed, "preset": cfg.preset, "status": status, "diverged_step": None if status == "ok" else 5,
            "metrics": [{"epoch": 1, "step": 10, "test_acc": acc, "test_loss": 1.0, "train_acc": acc,
                         "train_loss": 1.0}], "probes": [],
            "provenance": {"git_commit": "abc", "git_dirty": False, "wall_s": 1.0, "hardware": {}, "packages": {}}}


def test_power_of_reads_both_families_and_refuses_others():
    assert R.power_of("poly:p=5") == (5, False) and R.power_of("poly_odd:p=4") == (4, True)
    with pytest.raises(ValueError, match="not one of the powers grid's specs"):
        R.power_of("poly:p=3,c=1")


def test_power_slope_recovers_a_planted_fall_and_ignores_the_sign_keeping_forms():
    rows = []
    for seed, noise in zip((0, 1, 2), (0.0, 0.004, -0.004)):
        for p in range(1, 8):
            rows.append({"activation": f"poly:p={p}", "seed": seed, "status": "ok", "test_acc": 0.8 - 0.02 * p + noise * p})
        rows.append({"activation": "poly_odd:p=2", "seed": seed, "status": "ok", "test_acc": 0.1})
    out = R.power_slope(pd.DataFrame(rows))
    assert out["slope"] == pytest.approx(-2.0) and out["n_seeds"] == 3
    assert out["ci_low"] < -2.0 < out["ci_high"] < 0 and out["t_p"] < 0.05
    rows[0]["status"] = "diverged"
    assert R.power_slope(pd.DataFrame(rows))["n_seeds"] == 2


def test_gradient_change_takes_first_and_last_probed_steps_per_layer():
    curves = pd.DataFrame([{"activation": "poly:p=7", "metric": "grad_attn_fro", "layer": layer, "step": step,
                            "mean": value} for layer, values in ((0, (4.0, 2.0, 1.0)), (1, (1.0, 1.0, 3.0)))
                           for step, value in zip((0, 100, 200), values)])
    out = R.gradient_change(curves).set_index("layer")
    assert out.loc[0, "ratio"] == 0.25 and out.loc[1, "ratio"] == 3.0 and out.loc[1, "last_step"] == 200
    with pytest.raises(ValueError, match="no probe rows of 'act_jac_fro'"):
        R.gradient_change(curves, "act_jac_fro")


def test_qk_frame_names_variants_and_the_differences_pair_them_with_the_scaled_cube():
    configs = critiques.qk_controls("smoke", seeds=[0, 1, 2])
    planted = {"x^3/sqrt(N)": 0.0, "x^3": -0.10, "x^3, Q/K decay 0.5": -0.05, "x^3, Q/K decay 5": -0.002}
    recs = []
    for cfg in configs:
        label = critiques.qk_label(cfg)
        jitter = 0.0005 * (cfg.seed == 1) * (label != "x^3/sqrt(N)")
        recs.append(_record(cfg, 0.80 + planted.get(label, 0.001) + 0.01 * cfg.seed + jitter))
    frame = R.qk_frame(reversed(recs))
    assert list(dict.fromkeys(frame["variant"])) == [label for label, _, _ in critiques.qk_variants()]
    d = R.qk_differences(frame, margin=1.0).set_index("variant")
    assert d.loc["x^3", "mean_diff"] == pytest.approx(-10.0 + 0.05 / 3, abs=1e-6)
    assert d.loc["x^3, Q/K decay 5", "equivalent"] and not d.loc["x^3", "equivalent"]
    assert (d["family_size"] == 4).all() and np.isfinite(d["p_holm"]).all()
