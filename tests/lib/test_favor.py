
import pytest
import torch

from polyattn.attention import attention
from polyattn.kernels.favor import favor_attention_weights, favor_plus_attention, random_projection

torch.set_num_threads(1)


def _qkv(seed, b=2, h=2, n=16, d=8, scale=0.7):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(b, h, n, d, generator=g) * scale for _ in range(3))


def _exact(q, k, v, kpm=None, causal=False):
    return attention(q, k, v, "softmax", key_padding_mask=kpm, causal=causal, path="naive")


@pytest.mark.parametrize("causal", [False, True])
def test_error_to_softmax_attention_shrinks_as_features_grow(causal):
    q, k, v = _qkv(0)
    exact = _exact(q, k, v, causal=causal)
    errors = []
    for m in (4, 32, 256, 2048):
        runs = [(favor_plus_attention(q, k, v, m, torch.Generator().manual_seed(s), causal=causal) - exact)
                .pow(2).mean().sqrt() for s in range(6)]
        errors.append(torch.stack(runs).mean().item())
    assert all(b < a for a, b in zip(errors, errors[1:])), errors
    assert errors[-1] < 0.25 * errors[0] and errors[-1] < 0.05, errors


def test_orthogonal_features_have_gaussian_row_lengths_and_orthogonal_blocks():
    w = random_projection(8, 24, torch.Generator().manual_seed(1))
    assert w.shape == (24, 8)
    block = w[:8] / w[:8].norm(dim=1, keepdim=True)
    torch.testing.assert_close(block @ block.T, torch.eye(8), atol=1e-5, rtol=0)
    lengths = random_projection(8, 1024, torch.Generator().manual_seed(2)).norm(dim=1)
    assert abs(lengths.pow(2).mean().item() - 8) < 0.5           # E|w|^2 = d, as for N(0, I_d)
    again = random_projection(8, 24, torch.Generator().manual_seed(1))
    assert torch.equal(w, again)


@pytest.mark.parametrize("causal", [False, True])
def test_padding_keys_contribute_nothing(causal):
    q, k, v = _qkv(3, b=1, n=9)
    kpm = torch.ones(1, 9, dtype=torch.bool)
    kpm[0, 6:] = False
    k2, v2 = k.clone(), v.clone()
    k2[..., 6:, :] = 1e6            # garbage at padding keys must not reach the exponential
    v2[..., 6:, :] = float("nan")
    out = favor_plus_attention(q, k2, v2.nan_to_num(1e6), 64, torch.Generator().manual_seed(5),
                               key_padding_mask=kpm, causal=causal)
    assert torch.isfinite(out).all()
    # the same features on the visible keys alone (keys only: Nq = Nk keeps the causal alignment)
    ref = favor_plus_attention(q[..., :6, :], k[..., :6, :], v[..., :6, :], 64,
                               torch.Generator().manual_seed(5), causal=causal)
    torch.testing.assert_close(out[..., :6, :], ref, rtol=1e-4, atol=1e-5)
    if not causal:
        full = favor_plus_attention(q, k[..., :6, :], v[..., :6, :], 64, torch.Generator().manual_seed(5))
        torch.testing.assert_close(out, full, rtol=1e-4, atol=1e-5)


def test_causal_prefix_sums_match_the_materialised_weights():
    q, k, v = _qkv(4, n=7)
    g = lambda: torch.Generator().manual_seed(9)
    out = favor_plus_attention(q, k, v, 32, g(), causal=True)
    w = favor_attention_weights(q, k, 32, g(), causal=True)
    assert torch.all(w.triu(1) == 0)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 2, 7))
    torch.testing.assert_close(out, w @ v, rtol=1e-4, atol=1e-5)
    # row i depends only on keys up to i
    k2, v2 = k.clone(), v.clone()
    k2[..., 4:, :] += 3
    v2[..., 4:, :] -= 5
    out2 = favor_plus_attention(q, k2, v2, 32, g(), causal=True)
    torch.testing.assert_close(out2[..., :4, :], out[..., :4, :], rtol=1e-4, atol=1e-5)


def test_large_scores_stay_finite():
    q, k, v = _qkv(6, n=12, scale=6.0)
    out = favor_plus_attention(q, k, v, 64, torch.Generator().manual_seed(0))
    assert torch.isfinite(out).all()
    # a convex combination of the values
    assert (out <= v.amax(2, keepdim=True) + 1e-4).all() and (out >= v.amin(2, keepdim=True) - 1e-4).all()


def test_bad_shapes_raise():
    q, k, v = _qkv(0)
    with pytest.raises(ValueError, match="key_padding_mask"):
        favor_plus_attention(q, k, v, 8, torch.Generator(), key_padding_mask=torch.ones(3, 16, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"\[B, H, N, d\]"):
        favor_plus_attention(q, k[..., :4], v, 8, torch.Generator())
