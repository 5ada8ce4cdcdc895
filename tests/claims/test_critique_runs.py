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


def _decay_records(planted, spread=None, norms=None):
    """Records of the weight-decay grid (smoke configs, seeds 0-2) with accuracy 0.8 + planted[cell]
    + a seed offset shared by every cell (so pairs cancel it) + a jitter of zero mean over the seeds,
    different in every cell (wider by spread[cell])."""
    recs, cells = [], {}
    for cfg in critiques.weight_decay("smoke", seeds=[0, 1, 2]):
        cell = R.decay_cell(cfg.activation, cfg.weight_decay)
        i = cells.setdefault(cell, len(cells))
        jitter = (0.0, 1.0, -1.0)[cfg.seed] * (0.0005 * (1 + i) + (spread or {}).get(cell, 0.0))
        acc = 0.8 + planted.get(cell, 0.0) + 0.02 * cfg.seed + jitter
        rec = _record(cfg, acc)
        if norms is not None:
            rec["probes"] = [{"step": step, "layer": layer, "head": head, "metric": "attn_fro_over_sqrt_n",
                              "value": norms[cell] * (1 + step) / 2 + head} for step in (0, 1) for layer in (0, 1)
                             for head in (0, 1)]
        recs.append(rec)
    return recs


def test_weight_decay_frame_orders_cells_and_reads_the_last_attention_norm():
    norms = {R.decay_cell(a, w): 10 * w + i for w in critiques.WEIGHT_DECAYS
             for i, a in enumerate(critiques.WEIGHT_DECAY_ACTIVATIONS)}
    frame = R.weight_decay_frame(reversed(_decay_records({}, norms=norms)))
    assert list(frame["weight_decay"]) == sorted(frame["weight_decay"]) and len(frame) == 27
    assert list(frame["activation"][:3]) == ["softmax"] * 3 and list(frame["seed"][:3]) == [0, 1, 2]
    # the last step (1) gives norm * 1, plus the mean head offset 0.5
    cell = R.decay_cell("poly:p=3,c=1", 0.5)
    assert frame.loc[frame["cell"] == cell, "attn_norm_final"].tolist() == [pytest.approx(norms[cell] + 0.5)] * 3
    assert frame[frame["cell"] != cell]["attn_norm_final"].notna().all()
    no_probes = R.weight_decay_frame(_decay_records({}))
    assert no_probes["attn_norm_final"].isna().all()
    with pytest.raises(ValueError, match="no records"):
        R.weight_decay_frame([])


def test_weight_decay_comparisons_are_stated_from_the_grid_and_refuse_a_missing_reference():
    rows = R.weight_decay_comparisons(critiques.WEIGHT_DECAYS)
    against = [r for r in rows if r[4] == R.AGAINST_SCALE]
    assert [(a, d, b, r) for a, d, b, r, _ in against] == [("poly:p=3,c=1", d, "poly:p=3", 0.05) for d in (0.0, 0.05, 0.5)]
    assert len(rows) == 3 + 3 * 2 and all(r[3] == 0.05 for r in rows)
    assert ("softmax", 0.5, "softmax", 0.05) in [r[:4] for r in rows]
    with pytest.raises(ValueError, match="reference decay 0.1 is not among"):
        R.weight_decay_comparisons((0.0, 0.5), reference=0.1)


def test_weight_decay_differences_pair_by_seed_and_correct_over_the_whole_table():
    cube = R.decay_cell("poly:p=3,c=1", 0.05)
    planted = {cube: -0.05, R.decay_cell("poly:p=3,c=1", 0.0): -0.06, R.decay_cell("poly:p=3,c=1", 0.5): -0.001,
               R.decay_cell("softmax", 0.5): -0.03}
    d = R.weight_decay_differences(R.weight_decay_frame(_decay_records(planted)), margin=1.0)
    assert len(d) == 9 and (d["family_size"] == 9).all() and (d["p_holm"] >= d["t_p"]).all()
    by = d.set_index(["activation", "baseline"])
    scaled = R.decay_cell("poly:p=3", 0.05)
    assert by.loc[(cube, scaled), "mean_diff"] == pytest.approx(-5.0) and by.loc[(cube, scaled), "n_pairs"] == 3
    strong = by.loc[(R.decay_cell("poly:p=3,c=1", 0.5), scaled)]
    assert strong["mean_diff"] == pytest.approx(-0.1) and strong["equivalent"]
    assert by.loc[(R.decay_cell("poly:p=3,c=1", 0.5), cube), "mean_diff"] == pytest.approx(4.9)
    assert by.loc[(R.decay_cell("softmax", 0.5), R.decay_cell("softmax", 0.05)), "mean_diff"] == pytest.approx(-3.0)
    frame = R.weight_decay_frame(_decay_records(planted))
    with pytest.raises(ValueError, match="no runs of poly:p=3, decay 0.05"):
        R.weight_decay_differences(frame[frame["cell"] != scaled], margin=1.0)


@pytest.mark.parametrize("strong_shift", [-0.001, -0.05])
def test_weight_decay_summary_reports_every_decay_and_the_control(strong_shift):
    planted = {R.decay_cell("poly:p=3,c=1", 0.05): -0.05, R.decay_cell("poly:p=3,c=1", 0.0): -0.05,
               R.decay_cell("poly:p=3,c=1", 0.5): strong_shift}
    d = R.weight_decay_differences(R.weight_decay_frame(_decay_records(planted)), margin=1.0)
    text = R.weight_decay_summary(d, strong=0.5)
    for decay in ("0", "0.05", "0.5"):
        assert f"at decay {decay}:" in text
    assert f"at decay 0.5: {100 * strong_shift:+.1f} points" in text
    assert "the control, softmax at decay 0.5" in text
    assert "Holm over the table's 9 comparisons, margin ±1 point)" in text
    assert "no gap for a stronger decay to close" not in text


def test_weight_decay_summary_says_when_there_is_no_gap_to_close():
    planted = {R.decay_cell("poly:p=3,c=1", 0.5): -0.05}
    d = R.weight_decay_differences(R.weight_decay_frame(_decay_records(planted)), margin=1.0)
    text = R.weight_decay_summary(d, strong=0.5)
    assert "no gap for a stronger decay to close" in text
    with pytest.raises(ValueError, match="has no row"):
        R.weight_decay_summary(d[d["question"] != R.AGAINST_SCALE], strong=0.5)


def test_no_gradient_shrink_is_one_without_decay_and_a_power_at_a_constant_rate():
    cfg = critiques.weight_decay("smoke", seeds=[0])[-1].replace(lr=0.01, min_lr=0.01, warmup_epochs=0.0, epochs=2)
    assert R.no_gradient_shrink(cfg.replace(weight_decay=0.0), 100) == 1.0
    assert R.no_gradient_shrink(cfg.replace(weight_decay=0.5), 100) == pytest.approx((1 - 0.005) ** 100)
    # warm-up lowers the early rates, so the matrix keeps more of its size
    assert R.no_gradient_shrink(cfg.replace(weight_decay=0.5, warmup_epochs=1.0), 100) > (1 - 0.005) ** 100
    with pytest.raises(ValueError, match="positive multiple of the 2 epoch"):
        R.no_gradient_shrink(cfg, 101)


def test_the_powers_slope_leaves_out_runs_at_chance_when_asked():
    import pandas as pd

    from polyattn.analysis.critique_runs import power_slope

    rows = []
    for seed in range(3):
        for p in range(1, 8):
            acc = 0.10 if (p == 7 and seed < 2) else 0.80 - 0.02 * p + 0.002 * seed
            rows.append({"activation": f"poly:p={p}", "seed": seed, "status": "ok", "test_acc": acc})
    final = pd.DataFrame(rows)
    with_chance = power_slope(final)
    without = power_slope(final, chance=10.0)
    assert without["excluded"] == [("poly:p=7", 0), ("poly:p=7", 1)]
    assert without["slope"] == pytest.approx(-2.0, abs=1e-6)
    assert with_chance["slope"] < without["slope"] - 1
