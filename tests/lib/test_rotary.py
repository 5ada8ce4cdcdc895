"""Rotary positions: relative, norm-preserving, and blind to the activation and the mask."""
from __future__ import annotations

import pytest
import torch

from polyattn.rotary import apply_rope, rope_angles

#: Every activation the causal grids train with RoPE, and the norm-bounded cubes.
ROPE_ACTIVATIONS = ("softmax", "poly:p=3", "poly:p=3,c=1", "poly:p=3,c=1/14", "uniform", "softmax:k=8",
                    "softmax:k=1/8", "poly_cap:p=3", "poly_unit:p=3")


def test_rope_keeps_norms_and_is_the_identity_at_position_zero():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 40, 16)
    r = apply_rope(x)
    assert torch.allclose(r.norm(dim=-1), x.norm(dim=-1), atol=1e-5)
    assert torch.equal(r[:, :, 0], x[:, :, 0])
    assert not torch.allclose(r[:, :, 1:], x[:, :, 1:], atol=1e-3)


def test_rope_scores_depend_only_on_the_offset_between_query_and_key():
    torch.manual_seed(1)
    q, k = torch.randn(16), torch.randn(16)
    n = 50
    # the same query and key at every position: the score matrix must be constant along each diagonal
    rq = apply_rope(q.expand(1, 1, n, 16))[0, 0]
    rk = apply_rope(k.expand(1, 1, n, 16))[0, 0]
    s = rq @ rk.T
    for off in (-7, 0, 3, 20):
        d = torch.diagonal(s, offset=off)
        assert torch.allclose(d, d[:1].expand_as(d), atol=1e-4), off
    assert not torch.allclose(torch.diagonal(s, 0)[:1], torch.diagonal(s, 5)[:1], atol=1e-3)
    # shifting every position by the same offset leaves the scores unchanged
    shifted = apply_rope(q.expand(1, 1, n, 16), offset=123)[0, 0] @ apply_rope(k.expand(1, 1, n, 16), offset=123)[0, 0].T
    assert torch.allclose(shifted, s, atol=1e-3)


def test_rope_angles_need_an_even_head_width():
    cos, sin = rope_angles(5, 8)
    assert cos.shape == sin.shape == (5, 8) and torch.allclose(cos ** 2 + sin ** 2, torch.ones(5, 8))
    with pytest.raises(ValueError, match="head width must be even"):
        rope_angles(5, 7)


@pytest.mark.parametrize("activation", ROPE_ACTIVATIONS)
def test_rope_model_gives_masked_keys_exactly_zero_weight_and_stays_causal(activation):
    from polyattn.models.char_lm import CharLM
    from polyattn.probes import record_attention_maps

    torch.manual_seed(2)
    model = CharLM(12, activation, "micro", positions="rope").eval()
    tokens = torch.randint(0, 12, (2, 24))
    maps = record_attention_maps(model, tokens)                       # [L, B, H, N, N]
    assert torch.isfinite(maps).all()
    future = torch.ones(24, 24, dtype=torch.bool).triu(1)
    assert (maps[..., future] == 0).all()
    assert (maps[..., ~future] != 0).any()
    # the fast paths: changing the last tokens changes no earlier position's logits
    changed = tokens.clone()
    changed[:, 16:] = (changed[:, 16:] + 1) % 12
    with torch.no_grad():
        a, b = model(tokens), model(changed)
    assert torch.allclose(a[:, :16], b[:, :16], atol=1e-5)
    assert not torch.allclose(a[:, 16:], b[:, 16:], atol=1e-4)


def test_rope_model_sees_order_where_nope_does_not():
    from polyattn.models.char_lm import CharLM

    torch.manual_seed(3)
    tokens = torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8]])
    rope = CharLM(10, "softmax", "micro", positions="rope").eval()
    nope = CharLM(10, "softmax", "micro", positions="none").eval()
    with torch.no_grad():
        for blk in rope.blocks:           # scores of order one, so that positions move the weights visibly
            blk.attn.qkv.weight.mul_(50)
    nope.load_state_dict(rope.state_dict())
    with torch.no_grad():
        # the first query sees only itself: positions cannot change it
        assert torch.allclose(rope(tokens)[0, 0], nope(tokens)[0, 0], atol=1e-5)
        assert not torch.allclose(rope(tokens)[0, 1:], nope(tokens)[0, 1:], atol=1e-4)
    assert all(blk.attn.rope for blk in rope.blocks) and not any(blk.attn.rope for blk in nope.blocks)


def test_rope_refuses_cross_attention():
    from polyattn.attention import MultiHeadAttention

    mha = MultiHeadAttention(16, 2, rope=True)
    with pytest.raises(ValueError, match="self-attention only"):
        mha(torch.randn(1, 3, 16), context=torch.randn(1, 5, 16))
