"""The fast paths equal the naive reference, in values and gradients.

The accuracy rule is the one of :mod:`support.kernels` (twice the naive float32 path's error plus a
floor scaled to the quantity's magnitude).
"""

import pytest
import torch
from support.kernels import assert_matches_reference
from support.kernels import inputs as _inputs

from polyattn import activations
from polyattn.attention import MultiHeadAttention, attention
from polyattn.kernels import choose_path, fused_attention, linear_degree
from polyattn.kernels._common import elementwise_kernel, row_counts
from polyattn.kernels.blocked import CAUSAL_TILE_ELEMENTS, BlockedAttention, _Plan, block_sizes, blocked_attention, per_head_rows
from polyattn.kernels.linear import FeatureMapAttention, degree2_features, feature_dim, features, monomial_count

ELEMENTWISE_SPECS = [s for s in activations.BOOK_SPECS if activations.get(s).elementwise]
LINEAR_SPECS = [s for s in ELEMENTWISE_SPECS if linear_degree(s) is not None]


# --- every elementwise activation, every path, the shapes that matter ----------------------

SHAPES = [
    dict(n_q=7, n_k=7),                                              # odd N
    dict(n_q=1, n_k=1),                                              # N = 1
    dict(n_q=13, n_k=13, padded=True),
    dict(n_q=13, n_k=13, causal=True),
    dict(n_q=13, n_k=13, causal=True, padded=True),
    dict(n_q=13, n_k=13, causal=True, padded=True, n_mode="fixed"),
    dict(n_q=13, n_k=13, padded=True, n_mode="fixed"),
    dict(n_q=13, n_k=13, padded=True, n_mode="padded"),
    dict(n_q=13, n_k=13, causal=True, padded=True, n_mode="padded"),
    dict(n_q=5, n_k=9, causal=True, padded=True),                    # queries aligned with the end
    dict(n_q=9, n_k=5, causal=True),                                 # the first queries see nothing
]


@pytest.mark.parametrize("spec", ELEMENTWISE_SPECS)
@pytest.mark.parametrize("shape", range(len(SHAPES)))
def test_blocked_path_matches_naive(spec, shape):
    assert_matches_reference(spec, "blocked", **SHAPES[shape])


@pytest.mark.parametrize("spec", LINEAR_SPECS)
@pytest.mark.parametrize("shape", range(len(SHAPES)))
def test_linear_path_matches_naive(spec, shape):
    assert_matches_reference(spec, "linear", **SHAPES[shape])


# tiles smaller than the problem: several batch-head groups, query and key blocks,
# partial edge tiles, diagonal tiles and skipped tiles of a causal mask
@pytest.mark.parametrize("spec", ["poly:p=3", "poly:p=2", "relu_n", "sigmoid"])
@pytest.mark.parametrize("blocks", [(4, 8, 16), (5, 3, 2), (1, 64, 7)])
@pytest.mark.parametrize("causal, padded, n_mode", [(False, False, "row"), (True, True, "row"),
                                                     (True, False, "fixed")])
def test_blocked_tiling_matches_naive(spec, blocks, causal, padded, n_mode):
    assert_matches_reference(spec, "blocked", n_q=37, n_k=37, causal=causal, padded=padded, n_mode=n_mode,
                             blocks=blocks)


@pytest.mark.parametrize("spec", LINEAR_SPECS)
@pytest.mark.parametrize("causal", [False, True])
def test_linear_path_over_several_chunks(spec, causal, monkeypatch):
    from polyattn.kernels import linear
    monkeypatch.setattr(linear, "CAUSAL_CHUNK", {1: 8, 2: 8, 3: 8})
    monkeypatch.setattr(linear, "FEATURE_CHUNK_POSITIONS", 16)
    monkeypatch.setattr(linear, "FEATURE_CHUNK_ELEMENTS", 2000)
    assert_matches_reference(spec, "linear", n_q=45, n_k=45, causal=causal, padded=True)


def test_higher_degree_poly_and_fractional_scale():
    assert_matches_reference("poly:p=5", "blocked", n_q=11, n_k=11, causal=True, padded=True)
    assert_matches_reference("poly:p=4,c=1/3", "blocked", n_q=11, n_k=11, padded=True)


def test_generic_kernel_matches_the_fused_kernels():
    # the pointwise / pointwise_grad route serves any future elementwise activation
    q, k, v, go, kpm = _inputs(2, 3, 10, 10, 8, 4, 1, True)
    n = per_head_rows(row_counts(2, 10, 10, kpm, True, "row", None), 2, 3)
    keep = kpm[:, None, :, None].double()
    args = [t.reshape(6, 10, -1) for t in (q, k * keep, v * keep)]
    for spec in ELEMENTWISE_SPECS:
        act = activations.get(spec)
        outs = []
        for generic in (False, True):
            leaves = [t.detach().clone().requires_grad_() for t in args]
            out = blocked_attention(*leaves, elementwise_kernel(act, generic=generic), n, causal=True,
                                    blocks=(4, 4, 3))
            out.backward(go.reshape(6, 10, -1))
            outs.append([out.detach()] + [t.grad for t in leaves])
        for a, b in zip(*outs):   # (the registry rounds a constant c to float32)
            torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-9)


def test_blocked_function_gradcheck():
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 6, 4, generator=g, dtype=torch.float64, requires_grad=True) for _ in range(3))
    n = torch.arange(1, 7, dtype=torch.float64).view(1, 6, 1)
    for spec in ("poly:p=3", "sigmoid", "relu_n"):
        kern = elementwise_kernel(activations.get(spec))
        plan = _Plan(kern, True, 0, 1, 4, 3, 0.5, 2, 6, 6)
        assert torch.autograd.gradcheck(lambda a, b, c: BlockedAttention.apply(a, b, c, n, plan), (q, k, v))


@pytest.mark.parametrize("spec", ELEMENTWISE_SPECS)
@pytest.mark.parametrize("shape", [SHAPES[0], SHAPES[4], SHAPES[7], SHAPES[8]])
@pytest.mark.parametrize("grads", ["qkv", "v", "q"])
def test_kept_weights_give_the_same_numbers_as_recomputing(spec, shape, grads, monkeypatch):
    # short sequences keep P and g'(S) from the forward pass; the numbers must not change
    from polyattn.kernels import blocked
    shape = {"n_mode": "row", "causal": False, "padded": False, **shape}
    q, k, v, go, kpm = _inputs(2, 3, shape["n_q"], shape["n_k"], 8, 5, 0, shape["padded"])
    results, kept = [], []
    real_forward = blocked.blocked_forward

    def spy(plan, *args):
        kept.append(plan.keep)
        return real_forward(plan, *args)

    monkeypatch.setattr(blocked, "blocked_forward", spy)
    for limit in (blocked.KEEP_ELEMENTS, 0):
        monkeypatch.setattr(blocked, "KEEP_ELEMENTS", limit)
        leaves = [t.float().detach().requires_grad_(name in grads) for name, t in zip("qkv", (q, k, v))]
        out = fused_attention(*leaves, spec, key_padding_mask=kpm, causal=shape["causal"],
                              n_mode=shape["n_mode"], path="blocked")
        out.backward(go.float())
        results.append([out.detach()] + [t.grad for t in leaves])
    assert kept == [True, False]
    for a, b in zip(*results):
        assert (a is None and b is None) or torch.equal(a, b)


def test_kept_weights_only_for_a_single_tile_with_gradients(monkeypatch):
    kern = elementwise_kernel(activations.get("poly:p=3"))
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(4, 9, 8, generator=g, requires_grad=True) for _ in range(3))
    n = torch.full((1, 1, 1), 9.0)
    plans = {}
    for name, blocks in (("single", (4, 9, 9)), ("tiled", (2, 9, 9))):
        plan = _Plan(kern, False, 0, *blocks, 8 ** -0.5, 4, 9, 9)
        plan.keep = True
        BlockedAttention.apply(q, k, v, n, plan)
        plans[name] = plan.keep
    assert plans == {"single": True, "tiled": False}
    # blocked_attention asks for it only when a gradient will be needed
    seen = []
    real_apply = BlockedAttention.apply
    monkeypatch.setattr(BlockedAttention, "apply", lambda *a: seen.append(a[-1].keep) or real_apply(*a))
    blocked_attention(q, k, v, kern, n)
    with torch.no_grad():
        blocked_attention(q, k, v, kern, n)
    blocked_attention(q.detach(), k.detach(), v.detach(), kern, n)
    monkeypatch.undo()
    assert seen == [True, False, False]
    kept = _Plan(kern, True, 0, 2, 6, 6, 0.5, 2, 6, 6)
    kept.keep = True
    qd, kd, vd = (t[:2, :6, :4].detach().double().requires_grad_() for t in (q, k, v))
    nd = torch.arange(1, 7, dtype=torch.float64).view(1, 6, 1)
    assert torch.autograd.gradcheck(lambda a, b, c: BlockedAttention.apply(a, b, c, nd, kept), (qd, kd, vd))
    assert kept.keep


def test_degree2_features_are_exact():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(5, 7, dtype=torch.float64, generator=g)
    y = torch.randn(3, 7, dtype=torch.float64, generator=g)
    phi_x, phi_y = degree2_features(x), degree2_features(y)
    assert phi_x.shape == (5, feature_dim(7, 2)) == (5, 28)
    torch.testing.assert_close(phi_x @ phi_y.T, (x @ y.T) ** 2)
    torch.testing.assert_close(features(x, 2), phi_x)       # the fast layout, same features
    xg = x.clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda t: features(t, 2), (xg,))
    with pytest.raises(ValueError, match="no exact linear-time form"):
        feature_dim(7, 4)
    assert [monomial_count(32, p) for p in (1, 2, 3)] == [32, 528, 5984] == [feature_dim(32, p) for p in (1, 2, 3)]


def test_degree3_features_are_exact():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 4, 6, dtype=torch.float64, generator=g)
    y = torch.randn(2, 3, 6, dtype=torch.float64, generator=g)
    phi_x, phi_y = features(x, 3), features(y, 3)
    assert phi_x.shape == (2, 4, feature_dim(6, 3)) == (2, 4, 56)
    torch.testing.assert_close(phi_x @ phi_y.transpose(-2, -1), (x @ y.transpose(-2, -1)) ** 3)
    xg = x.clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda t: features(t, 3), (xg,))


@pytest.mark.parametrize("p", [2, 3])
def test_feature_map_function_gradcheck(p):
    g = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(2, 5, 3, generator=g, dtype=torch.float64, requires_grad=True) for _ in range(3))
    assert torch.autograd.gradcheck(lambda a, b, c: FeatureMapAttention.apply(a, b, c, p), (q, k, v))


# --- masks, dtypes, inference ------------------------------------------------------------

@pytest.mark.parametrize("spec, path", [("poly:p=3", "blocked"), ("sigmoid", "blocked"), ("poly:p=1", "linear"),
                                        ("poly:p=2", "linear"), ("poly:p=3", "linear")])
@pytest.mark.parametrize("causal", [False, True])
def test_padded_keys_contribute_exactly_nothing(spec, path, causal):
    q, k, v, go, kpm = (t.float() if torch.is_tensor(t) and t.is_floating_point() else t
                        for t in _inputs(2, 2, 9, 9, 8, 4, 5, True))
    results = []
    for junk in (0.0, 1e4):
        k2, v2 = k.clone(), v.clone()
        k2[~kpm[:, None, :, None].expand_as(k)] = junk
        v2[~kpm[:, None, :, None].expand_as(v)] = -junk
        leaves = [t.requires_grad_() for t in (q.clone(), k2, v2)]
        out = fused_attention(*leaves, spec, key_padding_mask=kpm, causal=causal, path=path)
        out.backward(go)
        results.append([out, leaves[0].grad, leaves[1].grad, leaves[2].grad])
        pad = ~kpm[:, None, :, None]
        assert (leaves[1].grad.masked_select(pad) == 0).all() and (leaves[2].grad.masked_select(pad) == 0).all()
    for a, b in zip(*results):
        assert torch.equal(a, b)


def test_inference_without_grad():
    q, k, v, _, kpm = (t.float() if torch.is_tensor(t) and t.is_floating_point() else t
                       for t in _inputs(2, 2, 9, 9, 8, 4, 6, True))
    for spec, path in (("poly:p=3", "blocked"), ("poly:p=2", "linear")):
        out = fused_attention(q, k, v, spec, key_padding_mask=kpm, path=path)
        assert out.grad_fn is None
        ref = attention(q, k, v, spec, key_padding_mask=kpm, path="naive")
        torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    # gradient for some inputs only
    vg = v.clone().requires_grad_()
    fused_attention(q, k, vg, "poly:p=3", path="blocked").sum().backward()
    vr = v.clone().requires_grad_()
    attention(q, k, vr, "poly:p=3", path="naive").sum().backward()
    torch.testing.assert_close(vg.grad, vr.grad, rtol=1e-5, atol=1e-5)


def test_autocast_keeps_float32_arithmetic():
    q, k, v, _, _ = (t.float() if torch.is_tensor(t) else t for t in _inputs(2, 2, 9, 9, 8, 8, 7, False))
    plain = fused_attention(q, k, v, "poly:p=3", path="blocked")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        under = fused_attention(q, k, v, "poly:p=3", path="blocked")
    assert under.dtype == torch.float32
    torch.testing.assert_close(under, plain)
    half = fused_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), "poly:p=3", path="blocked")
    assert half.dtype == torch.bfloat16


# --- dispatch ------------------------------------------------------------------------------

def test_dispatch_rules():
    q, k, v, _, _ = (t.float() if torch.is_tensor(t) else t for t in _inputs(1, 1, 4, 4, 8, 8, 0, False))
    with pytest.raises(ValueError, match="no exact linear-time form"):
        fused_attention(q, k, v, "relu_n", path="linear")
    with pytest.raises(ValueError, match="no exact linear-time form"):
        fused_attention(q, k, v, "poly:p=4", path="linear")
    with pytest.raises(ValueError, match="no exact linear-time form"):
        fused_attention(q, k, v, "softmax", path="linear")
    with pytest.raises(ValueError, match="softmax only"):
        fused_attention(q, k, v, "poly:p=3", path="sdpa")
    with pytest.raises(ValueError, match="path must be one of"):
        fused_attention(q, k, v, "poly:p=3", path="fast")
    with pytest.raises(ValueError, match="key_padding_mask"):
        fused_attention(q, k, v, "poly:p=3", key_padding_mask=torch.ones(1, 3, dtype=torch.bool))
    for spec in ("softmax", "softpick", "ssmax:s=0.43", "poly_norm:p=2"):
        assert fused_attention(q, k, v, spec) is None              # no fast path: caller goes naive
        assert fused_attention(q, k, v, spec, path="blocked") is None
    assert fused_attention(q, k, v, "poly:p=3", path="naive") is None
    assert choose_path("poly:p=1", 4, 4, 32) == "linear"
    assert choose_path("poly:p=1,c=1", 4096, 4096, 32, causal=True) == "linear"
    assert choose_path("poly:p=2", 64, 64, 32) == "blocked"
    assert choose_path("poly:p=2", 4096, 4096, 32) == "linear"
    assert choose_path("poly:p=3", 8192, 8192, 32) == "blocked"
    assert choose_path("relu_n", 8192, 8192, 32) == "blocked"


def test_block_sizes_cover_whole_matrices_or_single_heads():
    assert block_sizes(32, 64, 64) == (32, 64, 64)                 # one tile: the naive shape
    g, bq, bk = block_sizes(32, 1024, 1024)
    assert g == 1 and bq * bk <= 1024 * 1024
    g, bq, bk = block_sizes(32, 4096, 4096, causal=True)
    assert bq == bk < 4096                                         # square blocks: skip above the diagonal
    assert 1 < g < 32 and g * bq * bk <= CAUSAL_TILE_ELEMENTS      # several heads per tile, a bounded tile
    assert block_sizes(2, 4096, 4096, causal=True)[0] == 2         # never more heads than there are
    with pytest.raises(ValueError, match="positive"):
        blocked_attention(torch.zeros(1, 2, 2), torch.zeros(1, 2, 2), torch.zeros(1, 2, 2),
                          elementwise_kernel(activations.get("relu_n")), torch.ones(1, 1, 1), blocks=(0, 1, 1))


def test_attention_module_takes_the_fast_path_unless_probed():
    torch.manual_seed(0)
    x = torch.randn(2, 9, 16)
    for spec in ("poly:p=3", "poly:p=1", "relu_n"):
        fast = MultiHeadAttention(16, 4, spec)
        naive = MultiHeadAttention(16, 4, spec, path="naive")
        naive.load_state_dict(fast.state_dict())
        calls = []
        fast.attend.register_forward_hook(lambda *a: calls.append(1))
        torch.testing.assert_close(fast(x), naive(x), rtol=1e-5, atol=1e-6)
        assert calls == []                                         # the matrix was never built
        fast.attend.probed = True
        torch.testing.assert_close(fast(x), naive(x), rtol=1e-5, atol=1e-6)
        assert calls == [1]
    for spec, path in (("poly:p=3", "blocked"), ("poly:p=1", "linear")):
        module = MultiHeadAttention(16, 4, spec, path=path)
        torch.testing.assert_close(module(x), attention_module_naive(module, x), rtol=1e-5, atol=1e-6)
        module.attend.probed = True
        with pytest.raises(ValueError, match="probed"):
            module(x)
    with pytest.raises(ValueError, match="no exact linear-time form"):
        MultiHeadAttention(16, 4, "softmax", path="linear")(x)


def attention_module_naive(module, x):
    naive = MultiHeadAttention(16, 4, module.activation.spec, path="naive")
    naive.load_state_dict(module.state_dict())
    return naive(x)


@pytest.mark.parametrize("spec", ["poly:p=3", "poly:p=2", "poly:p=1", "relu_n", "sigmoid"])
def test_causal_tiles_give_future_keys_exactly_zero_weight(spec):
    """Rows before position m are bit-for-bit the same, values and gradients, whatever the keys
    and values from m on hold: the invisible entries of a tile the diagonal crosses weigh exactly 0
    (scores zeroed before g when g(0) = 0, weights after it otherwise)."""
    torch.manual_seed(0)
    bh, n, d, m = 6, 21, 8, 9
    kern = elementwise_kernel(activations.get(spec))
    counts = torch.arange(1, n + 1, dtype=torch.float32).view(1, n, 1)
    q, k, v = (torch.randn(bh, n, d) for _ in range(3))
    k2, v2 = k.clone(), v.clone()
    k2[:, m:] *= 1e3
    v2[:, m:] = 1e30
    outs, grads = [], []
    for kk, vv in ((k, v), (k2, v2)):
        qq = q.clone().requires_grad_()
        out = blocked_attention(qq, kk, vv, kern, counts, causal=True, blocks=(4, 8, 8))
        out[:, :m].sum().backward()
        outs.append(out[:, :m].detach())
        grads.append(qq.grad[:, :m])
    assert torch.equal(outs[0], outs[1])
    assert torch.equal(grads[0], grads[1])
