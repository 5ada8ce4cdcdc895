"""Chapter 09's computations on synthetic inputs with known answers."""
import math

import numpy as np
import pandas as pd
import pytest
import torch

from polyattn import activations as A
from polyattn import model_checks, theory
from polyattn.analysis import critiques as cr
from polyattn.tasks import get_task

torch.set_num_threads(1)


# --- norms cell by cell ---------------------------------------------------------------------

def _probes(values_a, values_b, metric="attn_fro"):
    """Two activations, two seeds, two layers, steps 0 and 10, two heads; value per (seed, layer, step)."""
    rows = []
    for act, values in (("a", values_a), ("b", values_b)):
        for (seed, layer, step), v in values.items():
            for head, dv in enumerate((-0.5, 0.5)):        # the head mean is v
                rows.append({"activation": act, "seed": seed, "layer": layer, "step": step, "head": head,
                             "metric": metric, "value": v + dv})
    return pd.DataFrame(rows)


def test_norm_order_counts_paired_cells_and_separates_the_first_step():
    cells = [(s, layer, step) for s in (0, 1) for layer in (0, 1) for step in (0, 10)]
    a = {c: (1.0 if c[2] == 0 else 8.0) for c in cells}       # a below b at step 0 only
    b = {c: 2.0 for c in cells}
    out = cr.norm_order(_probes(a, b), "a", "b", ["attn_fro"]).iloc[0]
    assert out["n_cells"] == 8
    assert out["share_lower"] == 0.5 and out["share_lower_first"] == 1.0 and out["share_lower_rest"] == 0.0
    assert out["min_ratio"] == pytest.approx(0.5) and out["max_ratio"] == pytest.approx(4.0)
    with pytest.raises(ValueError, match="no 'act_jac_fro' probes"):
        cr.norm_order(_probes(a, b), "a", "b", ["act_jac_fro"])


# --- the multiplier axis --------------------------------------------------------------------

def test_multiplier_and_the_papers_constants():
    assert cr.multiplier(1 / 14, 196) == pytest.approx(1.0)
    assert cr.multiplier(0.125, 64) == pytest.approx(1.0)
    table = cr.paper_constants().set_index(["c", "patch_tokens"])
    assert table.loc[("1/8", 256), "k_patches"] == pytest.approx(2.0)
    assert table.loc[("1/16", 64), "k_patches"] == pytest.approx(0.5)
    assert table.loc[("1/14", 196), "k_with_cls"] == pytest.approx(math.sqrt(197) / 14)
    with pytest.raises(ValueError):
        cr.multiplier(1.0, 0)


def test_interpolate_log_is_linear_in_log_x():
    xs, ys = [1.0, 4.0, 16.0], [0.0, 2.0, 4.0]
    assert cr.interpolate_log(xs, ys, 2.0) == pytest.approx(1.0)
    assert cr.interpolate_log(xs, ys, 8.0) == pytest.approx(3.0)
    assert cr.interpolate_log(xs, ys, 4.0) == 2.0
    assert math.isnan(cr.interpolate_log(xs, ys, 0.5)) and math.isnan(cr.interpolate_log(xs, ys, 32.0))


def test_factor_effect_reads_each_seed_curve():
    # accuracy = base + slope * log2(k) per seed: k from 1 to 2 adds `slope` points
    n = 16
    rows = []
    for seed, (base, slope) in enumerate(((0.5, 0.01), (0.6, 0.03))):
        for c in (1 / 16, 1 / 4, 1.0, 4.0):
            k = c * math.sqrt(n)
            rows.append({"seq_len": n, "c": c, "seed": seed, "status": "ok",
                         "test_acc": base + slope * math.log2(k)})
    out = cr.factor_effect(pd.DataFrame(rows)).iloc[0]
    assert out["diff"] == pytest.approx(2.0)                   # mean of 1 and 3 points
    assert out["n_seeds"] == 2 and out["best_k"] == pytest.approx(16.0)
    assert out["range"] == pytest.approx(100 * 0.02 * 6)        # mean slope 0.02 over log2 k from -2 to 4
    assert out["ci_low"] < 2.0 < out["ci_high"]
    diverged = pd.DataFrame(rows).assign(status="diverged")
    assert math.isnan(cr.factor_effect(diverged).iloc[0]["diff"])


# --- weights ----------------------------------------------------------------------------------

def test_negative_mass_and_token_share():
    w = torch.tensor([[[0.5, -0.5, 1.0, 0.0], [0.25, 0.25, 0.25, 0.25]]])
    assert float(cr.negative_mass_share(w)) == pytest.approx(0.5 / 3.0)
    assert float(cr.negative_mass_share(w.abs())) == 0.0
    assert torch.isnan(cr.negative_mass_share(torch.zeros(2, 2)))
    per_row = cr.negative_mass_share(w, dims=[-1])
    torch.testing.assert_close(per_row, torch.tensor([[0.25, 0.0]], dtype=torch.float64))
    # row 1: |w| on key 2 is 1 of 2; row 2: uniform, 1/4
    assert float(cr.token_mass_share(w, 2)) == pytest.approx((0.5 + 0.25) / 2)
    soft = torch.softmax(torch.randn(3, 5, 7), -1)
    torch.testing.assert_close(cr.token_mass_share(soft, 3), soft[..., 3].double().mean(-1))


def test_mean_attention_distance_known_answers():
    g = 3
    n = 1 + g * g
    eye = torch.eye(n)                                         # every patch attends to itself: distance 0
    assert float(cr.mean_attention_distance(eye, g)) == 0.0
    # every patch attends only to its right neighbour (the last column to its left one): distance 1
    w = torch.zeros(n, n)
    for r in range(g):
        for c in range(g):
            i = 1 + r * g + c
            w[i, 1 + r * g + (c + 1 if c < g - 1 else c - 1)] = -2.0   # the sign does not matter
    assert float(cr.mean_attention_distance(w, g)) == pytest.approx(1.0)
    uniform = torch.full((2, 4, n, n), 1.0 / n)
    torch.testing.assert_close(cr.mean_attention_distance(uniform, g),
                               torch.full((2, 4), cr.uniform_attention_distance(g), dtype=torch.float64))
    # on a 2 x 2 grid: distances 0, 1, 1, sqrt(2) from each patch
    assert cr.uniform_attention_distance(2) == pytest.approx((2 + math.sqrt(2)) / 4)
    with pytest.raises(ValueError, match="prefix tokens"):
        cr.mean_attention_distance(torch.zeros(9, 9), 3)


def test_saturated_rows():
    w = torch.tensor([[0.995, 0.005, 0.0], [0.5, 0.5, 0.0]])
    assert cr.saturated_rows(w).tolist() == [True, False]


def test_paired_drop_difference():
    clean = np.ones(100, dtype=bool)
    a_pert = np.r_[np.zeros(30, bool), np.ones(70, bool)]      # a loses 30 points
    b_pert = np.r_[np.zeros(10, bool), np.ones(90, bool)]      # b loses 10
    out = cr.paired_drop_difference(clean, a_pert, clean, b_pert, n_boot=500)
    assert out["drop_a"] == pytest.approx(30) and out["drop_b"] == pytest.approx(10)
    assert out["diff"] == pytest.approx(20) and out["ci_low"] < 20 < out["ci_high"] and out["ci_low"] > 0
    same = cr.paired_drop_difference(clean, a_pert, clean, a_pert, n_boot=200)
    assert same["diff"] == 0 and same["ci_low"] == 0 == same["ci_high"]
    with pytest.raises(ValueError):
        cr.paired_drop_difference(clean, a_pert[:5], clean, b_pert)


# --- theory on random scores ----------------------------------------------------------------

@pytest.mark.parametrize("p", [1, 2, 3, 4, 5])
def test_scaled_power_jacobian_matches_quadrature_and_is_the_same_with_the_sign_kept(p):
    for sigma in (0.1, 0.7, 1.5):
        closed = theory.scaled_power_jacobian(p, sigma)
        assert theory.gaussian_elementwise_jacobian(f"poly:p={p}", 50, sigma) == pytest.approx(closed, rel=1e-6)
        assert theory.gaussian_elementwise_jacobian(f"poly_odd:p={p}", 50, sigma) == pytest.approx(closed, rel=1e-6)
    assert math.isnan(theory.gaussian_elementwise_jacobian("softmax", 50, 1.0))


def test_jacobian_survey_on_iid_gaussian_scale_and_softmax_bound():
    df = theory.jacobian_scale_survey(["softmax", "poly:p=1", "poly:p=3"], (0.1, 1.0), n=64, reps=8, seed=0)
    assert (df[df.activation == "poly:p=1"]["mean"] - 1).abs().max() < 1e-6      # x/sqrt(N): exactly 1
    soft = df[df.activation == "softmax"]
    assert (soft["mean"] <= 0.5).all() and soft["saturated_share"].eq(0).all()
    cubic = df[df.activation == "poly:p=3"].set_index("sigma")
    assert cubic.loc[0.1, "mean"] < 0.1 < 1 < cubic.loc[1.0, "mean"]              # vanishes small, grows large
    again = theory.jacobian_scale_survey(["poly:p=3"], (0.1,), n=64, reps=8, seed=0)
    assert again["mean"].iloc[0] == cubic.loc[0.1, "mean"]


# --- on a model -------------------------------------------------------------------------------

def _tiny_vit(activation, seed=0):
    from polyattn.models.vit import build_vit

    torch.manual_seed(seed)
    return build_vit("micro", image_size=8, patch_size=2, depth=2, activation=activation).eval()


def test_activation_gradients_are_the_chain_rule_through_the_activation():
    x, y = torch.randn(4, 1, 8, 8), torch.tensor([0, 1, 2, 3])
    lin = model_checks.activation_gradients(_tiny_vit("poly:p=1"), x, y)
    assert list(lin["layer"]) == [0, 1]
    # x/sqrt(N): dL/dS = dL/dA / sqrt(N) entry by entry, so the norms differ by exactly sqrt(N)
    n = 17
    np.testing.assert_allclose(lin["grad_scores_fro"], lin["grad_attn_fro"] / math.sqrt(n), rtol=1e-5)
    np.testing.assert_allclose(lin["act_jac_fro"], math.sqrt(n), rtol=1e-6)    # N^2 entries of 1/N
    soft = model_checks.activation_gradients(_tiny_vit("softmax"), x, y)
    assert (soft["act_jac_fro"] <= math.sqrt(n) / 2 + 1e-6).all() and (soft["saturated_share"] == 0).all()
    assert soft["row_grad_saturated"].isna().all()
    # the cube at init: scores are small, so almost nothing passes the activation
    cube = model_checks.activation_gradients(_tiny_vit("poly:p=3"), x, y)
    assert (cube["grad_scores_fro"] < 1e-2 * lin["grad_scores_fro"]).all()
    model = _tiny_vit("softmax")
    model_checks.activation_gradients(model, x, y)
    assert all(p.grad is None for p in model.parameters())


def test_saturated_softmax_rows_pass_almost_no_gradient():
    model = _tiny_vit("softmax")
    with torch.no_grad():                                    # huge query/key weights: one-hot rows
        for blk in model.blocks:
            blk.attn.qkv.weight[: 2 * 64].mul_(300.0)
    x, y = torch.randn(4, 1, 8, 8), torch.tensor([0, 1, 2, 3])
    out = model_checks.activation_gradients(model, x, y)
    assert (out["saturated_share"] > 0.5).all()
    sat, other = out["row_jac_saturated"], out["row_jac_other"]
    assert (sat < 0.1).all() and ((other != other) | (sat < other)).all()


def test_outlier_sweep_scales_one_token():
    model = _tiny_vit("poly:p=3")
    x, y = torch.randn(6, 1, 8, 8), torch.arange(6) % 3
    res = model_checks.outlier_sweep(model, x, y, token=5, factors=[1, 30], where="attention_input")
    t = res.table.set_index(["factor", "layer"])
    assert set(res.correct) == {1.0, 30.0} and len(res.correct[1.0]) == 6
    # clean: about 1/N each; scaled in the attention input, the cube gives the token most of each row
    assert t.loc[(1.0, 0), "token_share"] < 3 / 17 and t.loc[(30.0, 0), "token_share"] > 0.5
    emb = model_checks.outlier_sweep(model, x, y, token=5, factors=[1], where="embedding")
    assert emb.table["accuracy"].iloc[0] == t.loc[(1.0, 0), "accuracy"]
    # only the token's column of the scores: the cube's weight on it grows like the factor cubed
    col = model_checks.outlier_sweep(model, x, y, token=5, factors=[1, 30], where="scores", layers=[0])
    c = col.table.set_index("factor")["token_share"]
    assert c[1.0] < 3 / 17 < 0.5 < c[30.0]
    with pytest.raises(ValueError, match="not a patch token"):
        model_checks.outlier_sweep(model, x, y, token=0, factors=[2], where="embedding")
    with pytest.raises(ValueError, match="where must be"):
        model_checks.outlier_sweep(model, x, y, token=1, factors=[2], where="values")


def test_outlier_sweep_embedding_hook_changes_only_that_patch():
    model = _tiny_vit("softmax")
    x = torch.randn(2, 1, 8, 8)
    base = model.patch_embed(x)
    handles = model_checks._scale_token(model, 5, 10.0, "embedding")
    try:
        out = model.patch_embed(x)
    finally:
        for h in handles:
            h.remove()
    r, c = divmod(5, 4)
    torch.testing.assert_close(out[:, :, r, c], 10 * base[:, :, r, c])
    keep = torch.ones(4, 4, dtype=torch.bool)
    keep[r, c] = False
    torch.testing.assert_close(out[:, :, keep], base[:, :, keep])


def test_attention_weights_of_chosen_layers_and_initial_model_is_seeded():
    from polyattn.config import TrainConfig

    model = _tiny_vit("poly:p=3")
    w = model_checks.attention_weights(model, torch.randn(2, 1, 8, 8), layers=[0, -1])
    assert w.shape == (2, 2, 4, 17, 17)
    cfg = TrainConfig(activation="poly:p=3", image_size=8, patch_size=2, seed=3)

    class Data:
        train_x = torch.zeros(4, 1, 8, 8)
        num_classes = 10

    task = get_task(cfg.task)
    m1 = model_checks.initial_model(cfg, Data, task)
    m2 = model_checks.initial_model(cfg.replace(activation="softmax"), Data, task)
    for a, b in zip(m1.parameters(), m2.parameters()):
        assert torch.equal(a, b)                             # the activation has no parameters
    assert A.get("poly:p=3") is m1.blocks[0].attn.activation


def test_critique_grids_change_one_thing_of_table_one():
    from polyattn.experiments import GRIDS, critiques, vit

    t1 = vit.table1("book", seeds=[0])[0]
    wd = GRIDS["critique_weight_decay"]("book")
    assert {c.weight_decay for c in wd} == set(critiques.WEIGHT_DECAYS)
    assert len(wd) == 3 * 3 * len(critiques.CRITIQUE_SEEDS["book"]) and len({(c.hash, c.seed) for c in wd}) == len(wd)
    assert set(critiques.CRITIQUE_SEEDS["book"]) < set(vit.TABLE1_SEEDS["book"])
    pw = GRIDS["critique_powers"]("book", seeds=[0])
    assert [c.activation for c in pw] == list(critiques.POWER_ACTIVATIONS)
    qk = GRIDS["critique_qk_controls"]("book", seeds=[0])
    assert [critiques.qk_label(c) for c in qk] == [label for label, _, _ in critiques.qk_variants()]
    assert len({c.hash for c in qk}) == len(qk)
    for c in wd + pw + qk:
        assert (c.model, c.patch_size, c.epochs, c.train_subset, c.lr, c.clip_grad) == \
               (t1.model, t1.patch_size, t1.epochs, t1.train_subset, t1.lr, t1.clip_grad)
    assert all(c.weight_decay == t1.weight_decay for c in pw + qk)


def test_a_weight_decay_smoke_config_trains(tmp_path, monkeypatch):
    from polyattn.experiments import GRIDS
    from polyattn.runs import load_or_run

    smoke = GRIDS["critique_weight_decay"]("smoke", seeds=[0])
    assert all(c.preset == "smoke" for c in smoke)
    monkeypatch.setenv("POLYATTN_RESULTS", str(tmp_path))
    rec = load_or_run(smoke[-1].replace(train_subset=128, test_subset=64), progress=False)
    assert rec["status"] in ("ok", "diverged") and rec["config"]["weight_decay"] == 0.5


def test_the_scores_hook_scales_one_column_and_nothing_else():
    model = _tiny_vit("poly:p=1")
    x = torch.randn(2, 1, 8, 8)
    clean = model_checks.attention_weights(model, x, layers=[0])
    handles = model_checks._scale_token(model, 3, 10.0, "scores")
    try:
        scaled = model_checks.attention_weights(model, x, layers=[0])
    finally:
        for h in handles:
            h.remove()
    # x/sqrt(N) is linear: the column is 10 times larger, every other weight is unchanged
    torch.testing.assert_close(scaled[..., 3], 10 * clean[..., 3])
    keep = [i for i in range(17) if i != 3]
    torch.testing.assert_close(scaled[..., keep], clean[..., keep])
