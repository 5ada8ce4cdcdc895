import pytest
import torch
import torch.nn.functional as F

from polyattn.attention import MultiHeadAttention, attention, attention_mask, visible_counts
from polyattn.models import VIT_SIZES, build_vit


def _qkv(b=2, h=3, n=7, d=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(b, h, n, d, generator=g) for _ in range(3)]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("padded", [False, True])
def test_softmax_naive_path_equals_sdpa(causal, padded):
    q, k, v = _qkv()
    kpm = None
    if padded:
        kpm = torch.ones(2, 7, dtype=torch.bool)
        kpm[1, 5:] = False
    naive = attention(q, k, v, "softmax", key_padding_mask=kpm, causal=causal, path="naive")
    mask = attention_mask(2, 7, 7, kpm, causal)
    sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(naive, sdpa, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(attention(q, k, v, "softmax", key_padding_mask=kpm, causal=causal), sdpa)


@pytest.mark.parametrize("spec, gain", [("softmax:k=8", 8.0), ("softmax:k=1/8", 0.125)])
def test_k_softmax_takes_the_fast_path_as_k_times_softmax(spec, gain, monkeypatch):
    calls = []
    sdpa = F.scaled_dot_product_attention
    monkeypatch.setattr(F, "scaled_dot_product_attention", lambda *a, **kw: calls.append(1) or sdpa(*a, **kw))
    q, k, v = _qkv()
    kpm = torch.ones(2, 7, dtype=torch.bool)
    kpm[1, 5:] = False
    for causal in (False, True):
        naive = attention(q, k, v, spec, key_padding_mask=kpm, causal=causal, path="naive")
        fast = attention(q, k, v, spec, key_padding_mask=kpm, causal=causal)
        torch.testing.assert_close(fast, naive, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(fast, gain * attention(q, k, v, "softmax", key_padding_mask=kpm, causal=causal))
    assert len(calls) == 4                  # the fast calls of k * softmax and of softmax, never the naive ones


@pytest.mark.parametrize("n_mode", ["row", "fixed"])
def test_uniform_fast_path_is_the_mean_of_the_visible_values(n_mode, monkeypatch):
    from polyattn import kernels

    # no score is computed: the fused score kernels are never called
    monkeypatch.setattr(kernels, "fused_attention", lambda *a, **kw: pytest.fail("scores computed"))
    kpm = torch.ones(2, 7, dtype=torch.bool)
    kpm[1, 5:] = False
    for causal, pad in ((False, None), (True, None), (False, kpm), (True, kpm)):
        q, k, v = (t.requires_grad_(True) for t in _qkv())
        fast = attention(q, k, v, "uniform", key_padding_mask=pad, causal=causal, n_mode=n_mode)
        naive = attention(q, k, v, "uniform", key_padding_mask=pad, causal=causal, n_mode=n_mode, path="naive")
        torch.testing.assert_close(fast, naive, rtol=1e-5, atol=1e-6)
        g = torch.randn_like(fast)
        gv_fast, gq_fast, gk_fast = torch.autograd.grad(fast, (v, q, k), g)
        gv_naive, gq = torch.autograd.grad(naive, (v, q), g)
        torch.testing.assert_close(gv_fast, gv_naive, rtol=1e-5, atol=1e-6)
        assert torch.equal(gq, torch.zeros_like(gq)) and torch.equal(gq_fast, gq)
        assert torch.equal(gk_fast, torch.zeros_like(k))
    # causal, every key visible, N = i + 1: query i reads the running mean of v_0..v_i
    q, k, v = _qkv()
    mean = v.cumsum(2) / torch.arange(1, 8).view(1, 1, 7, 1)
    torch.testing.assert_close(attention(q, k, v, "uniform", causal=True), mean)


@pytest.mark.parametrize("spec", ["poly_cap:p=3", "poly_unit:p=3"])
@pytest.mark.parametrize("n_mode", ["row", "fixed"])
def test_norm_bounded_cubes_take_a_fused_path_with_the_naive_weights_and_gradients(spec, n_mode, monkeypatch):
    from polyattn.attention import Attend

    kpm = torch.ones(2, 7, dtype=torch.bool)
    kpm[1, 5:] = False
    for causal, pad in ((False, None), (True, None), (True, kpm)):
        # scores of order one and larger, so that some rows of the cap bind and some do not
        q, k, v = (t.mul(s).requires_grad_(True) for t, s in zip(_qkv(seed=4), (2.0, 1.5, 1.0)))
        naive = attention(q, k, v, spec, key_padding_mask=pad, causal=causal, n_mode=n_mode, path="naive")
        with monkeypatch.context() as m:      # the fused path never builds the weights
            m.setattr(Attend, "forward", lambda *a: pytest.fail("weights materialised"))
            fast = attention(q, k, v, spec, key_padding_mask=pad, causal=causal, n_mode=n_mode)
        torch.testing.assert_close(fast, naive, rtol=1e-4, atol=1e-5)
        g = torch.randn_like(fast)
        for a, b in zip(torch.autograd.grad(fast, (q, k, v), g), torch.autograd.grad(naive, (q, k, v), g)):
            torch.testing.assert_close(a, b, rtol=1e-3, atol=1e-4)
    zero = torch.zeros(1, 1, 3, 4, requires_grad=True)
    out = attention(zero, zero, torch.ones(1, 1, 3, 4), spec, causal=True)
    assert torch.isfinite(out).all()
    out.sum().backward()
    assert torch.isfinite(zero.grad).all()


def test_causal_row_n_counts_the_querys_own_prefix():
    mask = attention_mask(1, 5, 5, causal=True)
    assert visible_counts(mask, 5, "row").flatten().tolist() == [1, 2, 3, 4, 5]
    kpm = torch.tensor([[True, True, True, False, False]])
    assert visible_counts(attention_mask(1, 5, 5, kpm, causal=True), 5, "fixed", kpm).flatten().tolist() == [3]


def test_padded_n_is_the_padded_length_but_padding_still_gets_no_weight():
    q, k, v = _qkv(b=1, h=1, n=6, d=2)
    kpm = torch.tensor([[True, True, True, True, False, False]])
    s = (q @ k.transpose(-2, -1)) / 2 ** 0.5
    for n_mode, n in (("row", 4.0), ("fixed", 4.0), ("padded", 6.0)):
        w = (s ** 3 / n ** 0.5) * kpm[:, None, None, :]
        out = attention(q, k, v, "poly:p=3", key_padding_mask=kpm, n_mode=n_mode, path="naive")
        torch.testing.assert_close(out, w @ v, rtol=1e-5, atol=1e-6)
        fast = attention(q, k, v, "poly:p=3", key_padding_mask=kpm, n_mode=n_mode, path="blocked")
        torch.testing.assert_close(fast, out, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n_mode, expected_n", [("row", [1, 2, 3, 4]), ("fixed", [4, 4, 4, 4])])
def test_causal_poly_uses_the_chosen_n(n_mode, expected_n):
    q, k, v = _qkv(b=1, h=1, n=4, d=2)
    s = (q @ k.transpose(-2, -1)) / 2 ** 0.5
    n = torch.tensor(expected_n, dtype=torch.float32)[:, None]
    w = torch.tril(s ** 3 / n.sqrt())
    out = attention(q, k, v, "poly:p=3", causal=True, n_mode=n_mode, path="naive")
    torch.testing.assert_close(out, w @ v, rtol=1e-5, atol=1e-6)


def test_module_rejects_inconsistent_settings():
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="softmax only"):
        MultiHeadAttention(8, 2, "poly:p=3", path="sdpa")
    with pytest.raises(ValueError, match="n_mode"):
        MultiHeadAttention(8, 2, n_mode="sometimes")
    with pytest.raises(ValueError, match="valid forms"):
        MultiHeadAttention(8, 2, "cubic")


def test_activation_is_the_only_difference_between_variants():
    torch.manual_seed(0)
    a = MultiHeadAttention(16, 4, "softmax")
    torch.manual_seed(0)
    b = MultiHeadAttention(16, 4, "poly:p=3")
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.mark.parametrize("size", list(VIT_SIZES))
def test_vit_forward_backward_shapes(size):
    cfg = dict(image_size=32, patch_size=8, in_chans=3, num_classes=7) if size in ("tiny", "small", "base") \
        else dict(image_size=28, patch_size=7, in_chans=1, num_classes=10)
    model = build_vit(size, activation="poly:p=3", **cfg)
    x = torch.randn(2, cfg["in_chans"], cfg["image_size"], cfg["image_size"], requires_grad=True)
    out = model(x)
    assert out.shape == (2, cfg["num_classes"])
    out.sum().backward()
    assert x.grad.shape == x.shape
    assert all(p.grad is not None for p in model.parameters())
    assert model.blocks[0].attn.heads == VIT_SIZES[size]["heads"]


@pytest.mark.parametrize("pool", ["cls", "mean"])
def test_vit_pooling_and_sequence_length(pool):
    model = build_vit("micro", patch_size=4, pool=pool, drop_path=0.1)
    assert model.seq_len == 49 + (pool == "cls")
    assert model(torch.randn(3, 1, 28, 28)).shape == (3, 10)
    with pytest.raises(ValueError, match="divisible"):
        build_vit("micro", patch_size=5)
    with pytest.raises(ValueError, match="unknown ViT size"):
        build_vit("huge")
