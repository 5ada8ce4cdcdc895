import math

import pytest
import torch

from polyattn.attention import MultiHeadAttention
from polyattn.data.pde import autograd_derivatives, get_pde
from polyattn.models.pinn import PINN_SIZES, build_pinn
from polyattn.models.pinnsformer import PINNSFORMER_SIZES, SEQ_DT, SEQ_LEN, build_pinnsformer
from polyattn.physics import (
    NonFiniteLoss,
    check_finite,
    evaluate,
    lbfgs_closure,
    loss_is_finite,
    make_lbfgs,
    nonfinite_terms,
    pde_loss,
)
from polyattn.probes import record_attention_maps


@pytest.fixture(autouse=True)
def _one_thread():
    # These models are tiny: threads only add overhead, and the machine is shared.
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _points(m=6, seed=0, x_scale=2 * math.pi):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(m, 1, generator=g) * x_scale, torch.rand(m, 1, generator=g)


def _n_params(model):
    return sum(p.numel() for p in model.parameters())


# --- cross-attention -------------------------------------------------------------------------

def _mha(activation, seed=0, dim=8, heads=2):
    torch.manual_seed(seed)
    return MultiHeadAttention(dim, heads, activation, path="naive")


@pytest.mark.parametrize("activation", ["softmax", "poly:p=3"])
def test_cross_attention_with_context_x_is_self_attention(activation):
    attn = _mha(activation)
    x = torch.randn(3, 5, 8)
    torch.testing.assert_close(attn(x, context=x), attn(x))
    kpm = torch.tensor([[True] * 5, [True, True, True, False, False], [True] * 4 + [False]])
    torch.testing.assert_close(attn(x, key_padding_mask=kpm, context=x), attn(x, key_padding_mask=kpm))


def test_softmax_cross_attention_matches_a_hand_computation():
    attn = _mha("softmax")
    x, ctx = torch.randn(2, 3, 8), torch.randn(2, 7, 8)
    w, b = attn.qkv.weight, attn.qkv.bias
    q = x @ w[:8].T + b[:8]
    k = ctx @ w[8:16].T + b[8:16]
    v = ctx @ w[16:].T + b[16:]
    heads = []
    for h in range(2):
        sl = slice(4 * h, 4 * h + 4)
        a = torch.softmax(q[..., sl] @ k[..., sl].transpose(1, 2) / 2.0, dim=-1)   # sqrt(head_dim) = 2
        heads.append(a @ v[..., sl])
    ref = attn.proj(torch.cat(heads, dim=-1))
    out = attn(x, context=ctx)
    assert out.shape == (2, 3, 8)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-6)
    # The fast softmax path (SDPA) agrees with the naive one on cross-attention too.
    fast = MultiHeadAttention(8, 2, "softmax")
    fast.load_state_dict(attn.state_dict())
    torch.testing.assert_close(fast(x, context=ctx), ref, rtol=1e-5, atol=1e-6)


def test_masked_context_keys_get_exactly_zero_weight_for_poly():
    attn = _mha("poly:p=3")
    x, ctx = torch.randn(2, 3, 8), torch.randn(2, 6, 8)
    kpm = torch.ones(2, 6, dtype=torch.bool)
    kpm[0, 4:] = False
    kpm[1, 0] = False
    seen = []
    attn.attend.register_forward_hook(lambda mod, args, out: seen.append(out.detach()))
    attn.attend.probed = True
    out = attn(x, key_padding_mask=kpm, context=ctx)
    w = seen[0]
    assert w.shape == (2, 2, 3, 6)
    assert bool((w[0, :, :, 4:] == 0).all()) and bool((w[1, :, :, 0] == 0).all())
    assert bool((w[0, :, :, :4] != 0).all())
    # Whatever sits in a masked context row cannot reach the output.
    ctx2 = ctx.clone()
    ctx2[0, 4:] = 1e3
    ctx2[1, 0] = -1e3
    torch.testing.assert_close(attn(x, key_padding_mask=kpm, context=ctx2), out)
    with pytest.raises(ValueError, match="key_padding_mask"):
        attn(x, key_padding_mask=torch.ones(2, 3, dtype=torch.bool), context=ctx)
    with pytest.raises(ValueError, match="context must have shape"):
        attn(x, context=torch.randn(2, 6, 4))


# --- models ----------------------------------------------------------------------------------

def test_published_sizes_and_parameter_counts():
    assert PINNSFORMER_SIZES["paper"] == dict(d_model=32, heads=2, d_ff=256, d_hidden=512)
    assert (SEQ_LEN, SEQ_DT) == (5, 1e-4)
    assert _n_params(build_pinnsformer("paper")) == 453_561     # the published notebooks' count
    assert _n_params(build_pinn("paper")) == 527_361
    assert _n_params(build_pinnsformer("small")) < _n_params(build_pinnsformer("paper")) / 5
    with pytest.raises(ValueError, match="unknown PINNsFormer size 'huge'"):
        build_pinnsformer("huge")
    with pytest.raises(ValueError, match="unknown PINN size"):
        build_pinn("huge")


def test_published_initialisation():
    m = build_pinnsformer("micro")
    assert m.embed.bias[0].item() == pytest.approx(0.01) and m.head[0].bias[0].item() == pytest.approx(0.01)
    attn = m.encoder[0].attn
    assert bool((attn.qkv.bias == 0).all()) and attn.proj.bias[0].item() == pytest.approx(0.01)
    assert m.decoder[0].act1.w1.item() == 1.0 and m.decoder_act.w2.item() == 1.0


@pytest.mark.parametrize("size", list(PINN_SIZES))
def test_pinn_shapes(size):
    x, t = _points(7)
    assert build_pinn(size)(x, t).shape == (7, 1)


@pytest.mark.parametrize("size", ["micro", "small"])
def test_pinnsformer_shapes_and_first_token_prediction(size):
    m = build_pinnsformer(size, "poly:p=3")
    x, t = _points(7)
    u = m(x, t)
    assert u.shape == (7, 1) and u.dtype == torch.float32
    seq = m.pseudo_sequence(x, t)
    all_tokens = m.forward_tokens(seq[..., :1], seq[..., 1:])
    assert all_tokens.shape == (7, SEQ_LEN, 1)
    torch.testing.assert_close(u, all_tokens[:, 0])
    # The later tokens sit at later times, so their outputs differ from the prediction's.
    assert (all_tokens[:, 1:] - all_tokens[:, :1]).abs().max().item() > 0
    with pytest.raises(ValueError, match=r"\[M, 1\]"):
        m(x.flatten(), t.flatten())
    with pytest.raises(ValueError, match=r"\[M, k, 1\]"):
        m.forward_tokens(x, t)


def test_pseudo_sequence_values():
    m = build_pinnsformer("micro")
    x = torch.tensor([[0.5], [3.0]])
    t = torch.tensor([[0.0], [0.25]])
    seq = m.pseudo_sequence(x, t)
    assert seq.shape == (2, 5, 2)
    assert bool((seq[..., 0] == x).all())
    expected = t + torch.arange(5, dtype=torch.float32) * 1e-4
    torch.testing.assert_close(seq[..., 1], expected, rtol=0, atol=1e-7)
    m2 = build_pinnsformer("micro", seq_len=3, dt=0.1)
    torch.testing.assert_close(m2.pseudo_sequence(x, t)[1, :, 1], torch.tensor([0.25, 0.35, 0.45]))


@pytest.mark.parametrize("kind", ["pinnsformer", "pinn"])
def test_derivatives_through_the_model_match_finite_differences(kind):
    torch.manual_seed(0)
    m = build_pinnsformer("micro", "poly:p=3") if kind == "pinnsformer" else build_pinn("micro")
    x, t = _points(5, x_scale=1.0)
    x, t = x.requires_grad_(), t.requires_grad_()
    d = autograd_derivatives(m(x, t), x, t, ("u_x", "u_t", "u_xx", "u_tt"))
    with torch.no_grad():
        # Steps sized for float32: large enough that rounding does not swamp the difference.
        h1, h2 = 1e-2, 3e-2
        fd = {"u_x": (m(x + h1, t) - m(x - h1, t)) / (2 * h1),
              "u_t": (m(x, t + h1) - m(x, t - h1)) / (2 * h1),
              "u_xx": (m(x + h2, t) - 2 * m(x, t) + m(x - h2, t)) / h2 ** 2,
              "u_tt": (m(x, t + h2) - 2 * m(x, t) + m(x, t - h2)) / h2 ** 2}
    for name in fd:
        scale = float(fd[name].abs().max()) + 1e-3
        assert (d[name] - fd[name]).abs().max().item() < 2e-2 * scale, name
    assert d["u_xx"].abs().max().item() > 0 and d["u_xx"].requires_grad


@pytest.mark.parametrize("activation", ["softmax", "poly:p=3"])
def test_attention_maps_over_the_five_tokens_can_be_recorded(activation):
    m = build_pinnsformer("micro", activation)
    x, t = _points(4)
    before = m(x, t)
    maps = record_attention_maps(m, (x, t))
    assert maps.shape == (2, 4, 2, SEQ_LEN, SEQ_LEN)   # [encoder + decoder, M, heads, 5, 5]
    torch.testing.assert_close(m(x, t), before)
    assert not any(a.probed for a in (m.encoder[0].attn.attend, m.decoder[0].attn.attend))
    if activation == "softmax":
        torch.testing.assert_close(maps.sum(-1), torch.ones(2, 4, 2, SEQ_LEN))
    else:
        # The encoder's map by hand: s^3 / sqrt(5) with s = q.k / sqrt(d_head), N = 5 tokens.
        with torch.no_grad():
            layer = m.encoder[0]
            h = layer.act1(m.embed(m.pseudo_sequence(x, t)))
            q, k, _ = layer.attn.qkv(h).reshape(4, SEQ_LEN, 3, 2, 4).permute(2, 0, 3, 1, 4)
            s = q @ k.transpose(-2, -1) / 2.0
        torch.testing.assert_close(maps[0], s ** 3 / math.sqrt(5), rtol=1e-4, atol=1e-6)


# --- loss, optimiser, divergence -------------------------------------------------------------

def test_sequence_loss_equals_function_loss_when_the_tokens_coincide():
    # With dt = 0 all k tokens are equal, so by symmetry the published all-token loss (with
    # its summed-output derivatives) and the first-token function loss must agree.
    torch.manual_seed(1)
    m = build_pinnsformer("micro", "poly:p=3", dt=0.0)
    for name in ("convection", "wave"):
        pde = get_pde(name)
        g = pde.grid(7, 6)
        _, a = pde_loss(pde, m, g)
        _, b = pde_loss(pde, m, g, sequence=True)
        for k in a:
            torch.testing.assert_close(a[k], b[k], rtol=2e-4, atol=1e-6)
    with pytest.raises(ValueError, match="pseudo-sequence model"):
        pde_loss("convection", build_pinn("micro"), get_pde("convection").grid(5, 5), sequence=True)


@pytest.mark.parametrize("kind", ["pinnsformer", "pinn"])
def test_a_few_lbfgs_steps_reduce_the_loss(kind):
    torch.manual_seed(0)
    model = build_pinnsformer("micro") if kind == "pinnsformer" else build_pinn("micro")
    pde = get_pde("convection:beta=5")
    batch = pde.grid(9, 9)
    start = pde_loss(pde, model, batch)[0].item()
    opt = make_lbfgs(model.parameters(), max_iter=5)
    assert opt.defaults["line_search_fn"] == "strong_wolfe" and opt.defaults["history_size"] == 100
    record = []
    closure = lbfgs_closure(pde, model, batch, opt, record=record)
    for _ in range(3):
        opt.step(closure)
    end = pde_loss(pde, model, batch)[0].item()
    assert len(record) >= 3 and all(set(r) == {"total", "residual", "initial", "boundary"} for r in record)
    assert math.isfinite(end) and end < 0.5 * start
    errs = evaluate(pde, model, pde.grid(13, 13))
    assert set(errs) == {"rMAE", "rRMSE"} and all(math.isfinite(v) for v in errs.values())


def test_a_non_finite_loss_is_detected():
    pde = get_pde("reaction")
    batch = pde.grid(5, 5)
    model = build_pinnsformer("micro")
    total, parts = pde_loss(pde, model, batch)
    assert loss_is_finite(total, parts) and nonfinite_terms(total, parts) == []
    check_finite(total, parts)
    with torch.no_grad():
        model.head[-1].bias.fill_(float("inf"))
    total, parts = pde_loss(pde, model, batch)
    assert not loss_is_finite(total, parts)
    assert "total" in nonfinite_terms(total, parts) and "initial" in nonfinite_terms(total, parts)
    with pytest.raises(NonFiniteLoss, match="loss is not finite: total="):
        check_finite(total, parts)
    assert isinstance(NonFiniteLoss("x"), FloatingPointError)
    assert not loss_is_finite(float("nan"))
