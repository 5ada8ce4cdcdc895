import gc
import math
import weakref

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from torch import nn
from torch.func import jacrev

from polyattn import activations, probes
from polyattn.attention import Attend, MultiHeadAttention, attention_mask, visible_counts
from polyattn.models import build_vit

torch.set_num_threads(1)

MASKS = ("none", "padding", "causal", "padding+causal")


def _mask_and_n(kind, b, nq, nk, n_mode="row"):
    kpm = None
    if "padding" in kind:
        kpm = torch.ones(b, nk, dtype=torch.bool)
        kpm[0, -2:] = False
        kpm[-1, 1] = False
    mask = attention_mask(b, nq, nk, kpm, "causal" in kind)
    return mask, visible_counts(mask, nk, n_mode, kpm)


def _rowwise_jacobian_fro_sq(act, scores, mask, n):
    """Per-row ||d w_row / d s_row||_F^2 from the full Jacobian, and the mass off the row blocks."""
    jac = jacrev(lambda s: act(s, mask, n))(scores)          # [B,H,Nq,Nk, B,H,Nq,Nk]
    b, h, nq, nk = scores.shape
    flat = jac.reshape(b * h * nq, nk, b * h * nq, nk)
    rows = torch.stack([flat[r, :, r, :].pow(2).sum() for r in range(b * h * nq)]).reshape(b, h, nq)
    block = torch.eye(b * h * nq, dtype=torch.bool)[:, None, :, None].expand_as(flat)
    off = flat[~block].abs().max()
    return rows, off


# --- closed-form Jacobian norms -------------------------------------------------------------------

@pytest.mark.parametrize("kind", MASKS)
@pytest.mark.parametrize("spec", activations.BOOK_SPECS)
def test_closed_form_activation_jacobian_matches_jacrev(spec, kind):
    torch.manual_seed(1)
    act = activations.get(spec)
    b, h, nq, nk = 2, 2, 4, 5
    scores = torch.randn(b, h, nq, nk) * 1.3
    mask, n = _mask_and_n(kind, b, nq, nk)
    exact, off = _rowwise_jacobian_fro_sq(act, scores, mask, n)
    closed = act.jacobian_fro_sq(scores, mask, n)
    assert closed.shape == (b, h, nq)
    assert off == 0                                          # the Jacobian is block-diagonal by rows
    torch.testing.assert_close(closed, exact, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("spec", ["poly:p=3", "relu_n", "sigmoid", "ssmax:s=0.43"])
def test_closed_form_with_fixed_n_matches_jacrev(spec):
    # n_mode="fixed" under a causal mask: N is the sequence length, not the row's count.
    torch.manual_seed(2)
    act = activations.get(spec)
    scores = torch.randn(2, 1, 5, 5)
    mask, n = _mask_and_n("padding+causal", 2, 5, 5, n_mode="fixed")
    exact, _ = _rowwise_jacobian_fro_sq(act, scores, mask, n)
    torch.testing.assert_close(act.jacobian_fro_sq(scores, mask, n), exact, rtol=1e-4, atol=1e-7)


def test_softmax_jacobian_attains_one_quarter_per_row_at_two_halves():
    s = torch.tensor([[0.0, 0.0, -1e4, -1e4]])
    assert activations.get("softmax").jacobian_fro_sq(s).item() == pytest.approx(0.25, abs=1e-7)


square_scores = st.integers(1, 8).flatmap(
    lambda n: st.tuples(arrays(np.float32, (n, n), elements=st.floats(-50, 50, width=32)),
                        st.sampled_from([1.0, 1e2, 1e4, 1e6])))


@settings(max_examples=150, deadline=None)
@given(square_scores)
@example((np.array([[0.0, 0.0, -1.0], [3.0, 3.0, -2.0], [0.0, 0.0, 0.0]], dtype=np.float32), 1e4))
def test_softmax_norm_bounds_hold_for_any_scores(case):
    s_np, magnitude = case
    s = torch.from_numpy(s_np) * magnitude
    n = s.shape[-1]
    act = activations.get("softmax")
    weights_fro = torch.linalg.norm(act(s))
    jac_sq = act.jacobian_fro_sq(s)
    assert torch.isfinite(weights_fro) and torch.isfinite(jac_sq).all()
    assert (jac_sq >= -1e-7).all()
    assert weights_fro <= math.sqrt(n) * (1 + 1e-6)                          # Thm 4.1(a)
    assert math.sqrt(jac_sq.sum().clamp_min(0)) <= math.sqrt(n) / 2 * (1 + 1e-5)   # sharp form of Thm 4.1(b)


# --- models used below ----------------------------------------------------------------------------

class OneAttention(nn.Module):
    """A single MultiHeadAttention, with optional padding and causal masks."""

    def __init__(self, dim=8, heads=2, activation="softmax", causal=False, n_mode="row"):
        super().__init__()
        self.attn = MultiHeadAttention(dim, heads, activation, n_mode=n_mode)
        self.causal = causal

    def forward(self, x, key_padding_mask=None):
        return self.attn(x, key_padding_mask=key_padding_mask, causal=self.causal)


def _capture(model):
    """Hooks that keep every Attend's (scores, mask, n) and weights of the last forward."""
    seen = []

    def hook(module, args, output):
        seen.append((args, output))

    attends = probes.find_attends(model)
    return seen, [a.register_forward_hook(hook) for a in attends]


def _micro(activation="softmax"):
    torch.manual_seed(0)
    return build_vit("micro", activation=activation).eval()


def _images(b=3):
    g = torch.Generator().manual_seed(5)
    return torch.randn(b, 1, 28, 28, generator=g), torch.randint(0, 10, (b,), generator=g)


# --- the recorder ---------------------------------------------------------------------------------

ALL = ("attn_fro", "act_jac_fro", "grad_attn_fro", "param_jac_fro", "attn_neg_frac", "attn_row_sum")


def test_recorder_finds_every_layer_of_a_micro_vit_and_returns_tidy_rows():
    model = _micro("poly:p=3")
    x, y = _images()
    rec = probes.Recorder(model, metrics=ALL, param_probes=2, layers=None)
    assert len(rec.attends) == 4 and rec.layers == [0, 1, 2, 3]
    with rec:
        F.cross_entropy(model(x), y).backward()
    rows = rec.collect(7)
    expected_metrics = {r for m in ALL for r in probes.METRIC_ROWS[m]}
    keys = {(r["layer"], r["head"], r["metric"]) for r in rows}
    assert keys == {(l, h, m) for l in range(4) for h in range(4) for m in expected_metrics}
    assert len(rows) == len(keys)
    for r in rows:
        assert tuple(r) == probes.ROW_KEYS and r["step"] == 7
        assert isinstance(r["value"], float) and math.isfinite(r["value"])
    frame = probes.rows_to_frame(rows)
    assert list(frame.columns) == list(probes.ROW_KEYS) and len(frame) == len(rows)
    assert rec.collect(8) == []                              # collect clears


def test_recorder_layers_selects_a_subset():
    model = _micro()
    x, _ = _images()
    rec = probes.Recorder(model, metrics=("attn_fro",), layers=[1, 3])
    with rec:
        model(x)
    assert {r["layer"] for r in rec.collect(0)} == {1, 3}
    with pytest.raises(ValueError, match="layers"):
        probes.Recorder(model, layers=[4])
    with pytest.raises(ValueError, match="metric"):
        probes.Recorder(model, metrics=("attention_norm",))
    with pytest.raises(ValueError, match="Attend"):
        probes.Recorder(nn.Linear(2, 2))


@pytest.mark.parametrize("spec", ["softmax", "poly:p=3", "sigmoid"])
def test_attaching_the_recorder_does_not_change_outputs(spec):
    model = _micro(spec)
    x, _ = _images()
    with torch.no_grad():
        fast = model(x)
        with probes.Recorder(model, metrics=("attn_fro",)) as rec:
            probed = model(x)
    assert len(rec.collect(0)) == 4 * 4 * 2                  # the naive path ran through every Attend
    torch.testing.assert_close(probed, fast, rtol=0, atol=1e-5)


def test_detaching_restores_probed_and_removes_every_hook():
    model = _micro()
    x, y = _images()
    attends = probes.find_attends(model)
    attends[2].probed = True                                  # a flag set by someone else is kept
    rec = probes.Recorder(model, metrics=ALL, param_probes=1)
    with pytest.raises(RuntimeError, match="boom"):
        with rec:
            assert all(a.probed for a in attends)
            F.cross_entropy(model(x), y).backward()
            raise RuntimeError("boom")
    assert [a.probed for a in attends] == [False, False, True, False]
    for m in model.modules():
        assert not m._forward_hooks and not m._forward_pre_hooks
    rec.collect(0)
    assert not rec._tensor_handles and not rec._buf


def test_collect_keeps_no_graph_alive():
    model = _micro()
    x, _ = _images()
    refs = []
    handles = [a.register_forward_hook(lambda m, args, out: refs.append(weakref.ref(out)))
               for a in probes.find_attends(model)]
    rec = probes.Recorder(model, metrics=ALL, param_probes=1)
    with rec:
        out = model(x)
    for hd in handles:
        hd.remove()
    rec.collect(0)
    assert len(refs) == 4 and all(r() is not None for r in refs)    # the graph holds the weights
    del out
    gc.collect()
    assert all(r() is None for r in refs)                            # and nothing else does


def test_attention_norms_and_grad_match_manual_autograd():
    model = _micro("poly:p=2")
    x, y = _images()
    with probes.Recorder(model, metrics=("attn_fro", "grad_attn_fro", "attn_row_sum", "attn_neg_frac")) as rec:
        F.cross_entropy(model(x), y).backward()
    got = probes.rows_to_frame(rec.collect(0)).set_index(["layer", "head", "metric"])["value"]

    # The same forward again, by hand: probe flags set, weights captured, gradient by autograd.grad.
    model.zero_grad()
    for a in probes.find_attends(model):
        a.probed = True
    seen, handles = _capture(model)
    loss = F.cross_entropy(model(x), y)
    weights = [w for _, w in seen]
    grads = torch.autograd.grad(loss, weights)
    for hd in handles:
        hd.remove()
    for layer, (w, g) in enumerate(zip(weights, grads)):
        for head in range(4):
            fro = w[:, head].detach().pow(2).sum((-2, -1)).sqrt().mean()
            gfro = g[:, head].pow(2).sum((-2, -1)).sqrt().mean()
            assert got[(layer, head, "attn_fro")] == pytest.approx(fro.item(), rel=1e-5)
            assert got[(layer, head, "attn_fro_over_sqrt_n")] == pytest.approx(fro.item() / math.sqrt(50), rel=1e-5)
            assert got[(layer, head, "grad_attn_fro")] == pytest.approx(gfro.item(), rel=1e-5)
            want = w[:, head].sum(-1).mean().item()
            assert got[(layer, head, "attn_row_sum")] == pytest.approx(want, rel=1e-4, abs=1e-7)
            assert got[(layer, head, "attn_neg_frac")] == pytest.approx((w[:, head] < 0).float().mean().item())
            assert got[(layer, head, "attn_neg_frac")] == 0.0     # x^2 is non-negative


@pytest.mark.parametrize("spec,causal", [("softmax", False), ("poly:p=3", True), ("softpick", False)])
def test_recorded_activation_jacobian_matches_jacrev_under_masks(spec, causal):
    torch.manual_seed(3)
    model = OneAttention(activation=spec, causal=causal)
    x = torch.randn(2, 5, 8)
    kpm = torch.tensor([[True, True, True, False, False], [True] * 5])
    with probes.Recorder(model, metrics=("act_jac_fro", "attn_fro")) as rec:
        seen, handles = _capture(model)
        model(x, key_padding_mask=kpm)
    for hd in handles:
        hd.remove()
    rows = {(r["head"], r["metric"]): r["value"] for r in rec.collect(0)}
    (scores, mask, n), w = seen[0]
    act = activations.get(spec)
    exact, _ = _rowwise_jacobian_fro_sq(act, scores.detach(), mask, n)
    per_head = exact.sum(-1).sqrt().mean(0)                   # sum over rows, sqrt, mean over batch
    n_mean = n.expand(2, 1, 5, 1).mean((1, 2, 3))
    for head in range(2):
        assert rows[(head, "act_jac_fro")] == pytest.approx(per_head[head].item(), rel=1e-4)
        fro = w[:, head].detach().pow(2).sum((-2, -1)).sqrt()
        assert rows[(head, "attn_fro_over_sqrt_n")] == pytest.approx((fro / n_mean.sqrt()).mean().item(), rel=1e-5)


# --- the parameter Jacobian -----------------------------------------------------------------------

def _loop_exact_param_fro_sq(attn, x, kpm=None, causal=False):
    """||dA_h/dW_Q,h||_F^2 per head, one output entry at a time (independent of jacrev)."""
    dim = x.shape[-1]
    w_q = attn.qkv.weight.detach()[:dim].clone().requires_grad_(True)
    a = probes.attention_weights_from_query_weight(attn, x, w_q, kpm, causal)
    b, h, n, _ = a.shape
    total = torch.zeros(h)
    for idx in np.ndindex(b, h, n, n):
        (g,) = torch.autograd.grad(a[idx], w_q, retain_graph=True)
        head = idx[1]
        total[head] += g[head * attn.head_dim:(head + 1) * attn.head_dim].pow(2).sum()
    return total / b


def test_recomputed_weights_equal_the_forward_weights():
    torch.manual_seed(4)
    model = OneAttention(activation="poly:p=3", causal=True)
    x = torch.randn(2, 5, 8)
    kpm = torch.tensor([[True, True, True, True, False], [True] * 5])
    model.attn.attend.probed = True
    seen, handles = _capture(model)
    model(x, key_padding_mask=kpm)
    for hd in handles:
        hd.remove()
    a = probes.attention_weights_from_query_weight(model.attn, x, model.attn.qkv.weight[:8], kpm, True)
    torch.testing.assert_close(a, seen[0][1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("spec,causal", [("softmax", False), ("poly:p=3", False), ("poly:p=2", True)])
def test_hutchinson_estimate_within_three_standard_errors_of_exact(spec, causal):
    torch.manual_seed(6)
    attn = MultiHeadAttention(8, 2, spec)
    x = torch.randn(2, 5, 8)
    kpm = torch.tensor([[True, True, True, True, False], [True] * 5])
    exact = probes.param_jacobian_fro_exact(attn, x, kpm, causal)
    torch.testing.assert_close(exact["fro_sq"], _loop_exact_param_fro_sq(attn, x, kpm, causal), rtol=1e-4, atol=0)
    for dist in probes.PROBE_DISTRIBUTIONS:
        est = probes.param_jacobian_fro(attn, x, n_probes=200, generator=torch.Generator().manual_seed(11),
                                        key_padding_mask=kpm, causal=causal, distribution=dist)
        assert (est["fro_sq_se"] > 0).all()
        assert ((est["fro_sq"] - exact["fro_sq"]).abs() <= 3 * est["fro_sq_se"]).all(), (dist, est, exact)
        assert (est["fro_sq_se"] < 0.3 * exact["fro_sq"]).all()       # the check has teeth
        torch.testing.assert_close(est["fro"], est["fro_sq"].sqrt())


def test_recorder_param_rows_equal_the_estimator_on_the_first_sample_and_repeat_with_the_seed():
    model = _micro("poly:p=3")
    x, y = _images()
    inputs = []
    hd = model.blocks[1].attn.register_forward_pre_hook(lambda m, args: inputs.append(args[0].detach()))

    def run():
        rec = probes.Recorder(model, metrics=("param_jac_fro",), param_probes=3, seed=9)
        with rec:
            F.cross_entropy(model(x), y).backward()
        return rec.collect(0)

    first, second = run(), run()
    hd.remove()
    assert first == second
    # layer 1 is the second to draw probes: replay the generator through layer 0 first.
    gen = torch.Generator().manual_seed(9)
    probes.param_jacobian_fro(model.blocks[0].attn, torch.zeros(1, 50, 64), n_probes=3, generator=gen)
    est = probes.param_jacobian_fro(model.blocks[1].attn, inputs[0][:1], n_probes=3, generator=gen)
    got = {(r["head"], r["metric"]): r["value"] for r in first if r["layer"] == 1}
    for head in range(4):
        assert got[(head, "param_jac_fro_sq")] == pytest.approx(est["fro_sq"][head].item(), rel=1e-6)
        assert got[(head, "param_jac_fro_sq_se")] == pytest.approx(est["fro_sq_se"][head].item(), rel=1e-6)
        assert got[(head, "param_jac_fro")] == pytest.approx(est["fro"][head].item(), rel=1e-6)


def test_param_jacobian_rejects_bad_arguments():
    attn = MultiHeadAttention(8, 2)
    x = torch.randn(1, 4, 8)
    with pytest.raises(ValueError, match="n_probes"):
        probes.param_jacobian_fro(attn, x, n_probes=0)
    with pytest.raises(ValueError, match="distribution"):
        probes.param_jacobian_fro(attn, x, distribution="uniform")
    with pytest.raises(ValueError, match="MultiHeadAttention"):
        probes.param_jacobian_fro(Attend("softmax"), x)
    assert torch.isnan(probes.param_jacobian_fro(attn, x, n_probes=1)["fro_sq_se"]).all()


# --- attention maps -------------------------------------------------------------------------------

def test_record_attention_maps_stacks_every_layer_and_leaves_the_model_unprobed():
    model = _micro()
    x, _ = _images(2)
    maps = probes.record_attention_maps(model, x)
    assert maps.shape == (4, 2, 4, 50, 50)
    torch.testing.assert_close(maps.sum(-1), torch.ones(4, 2, 4, 50))   # softmax rows
    assert not any(a.probed for a in probes.find_attends(model))
    assert all(not m._forward_hooks for m in model.modules())
    torch.testing.assert_close(probes.record_attention_maps(model, (x,), layers=[2])[0], maps[2])


def test_parameter_jacobian_refuses_cross_attention():
    from polyattn.attention import MultiHeadAttention

    attn = MultiHeadAttention(8, 2, "poly:p=3")
    rec = probes.Recorder(attn, metrics=("param_jac_fro",), param_probes=1)
    with rec, pytest.raises(ValueError, match="cross-attention"):
        attn(torch.randn(1, 3, 8), context=torch.randn(1, 5, 8))
    assert not attn.attend.probed      # the flag is restored after the error
