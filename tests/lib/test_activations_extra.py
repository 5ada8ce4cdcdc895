import math

import pytest
import torch
from torch.func import jacrev

from polyattn import activations as A
from polyattn.activations_extra import EXTRA_SPECS
from polyattn.attention import attention, attention_mask, visible_counts

torch.set_num_threads(1)


def _direct(spec, s, n):
    """Each published (or documented) formula written out, for unmasked float64 rows."""
    if spec == "softmax:k=2":
        return 2 * torch.softmax(s, -1)
    if spec == "poly_cap:p=3":
        v = s ** 3 / math.sqrt(n)
        return v / torch.clamp(v.norm(dim=-1, keepdim=True), min=1)
    if spec == "poly_unit:p=3":
        return s ** 3 / (s ** 3).norm(dim=-1, keepdim=True)
    if spec.startswith("power_softmax:p="):
        p = int(spec.split("=")[1])
        return s.abs() ** p / (s.abs() ** p).sum(-1, keepdim=True)
    if spec == "taylor_softmax":
        f = 1 + s + s ** 2 / 2
        return f / f.sum(-1, keepdim=True)
    if spec == "periodic":
        f = torch.sin(s + math.pi / 4) ** 2
        return f / f.sum(-1, keepdim=True)
    if spec == "relu2_n":
        return torch.clamp(s, min=0) ** 2 / n
    if spec == "relu2_norm":
        f = torch.clamp(s, min=0) ** 2
        return f / f.sum(-1, keepdim=True)
    if spec == "sa_softmax":
        return s * torch.exp(s) / torch.exp(s).sum(-1, keepdim=True)
    if spec == "sa_softmax_norm":
        lo = torch.clamp(s.min(-1, keepdim=True).values, max=0)
        hi = torch.clamp(s.max(-1, keepdim=True).values, min=0)
        return (s - lo) / (hi - lo) * torch.exp(s) / torch.exp(s).sum(-1, keepdim=True)
    if spec == "invsqrt":
        f = 1 / (s ** 2 + 1)
        return f / f.sum(-1, keepdim=True)
    if spec == "polyak_sum":
        return s / s.abs().sum(-1, keepdim=True)
    if spec.startswith("poly_odd:p="):
        p = int(spec.split("=")[1])
        return s * s.abs() ** (p - 1) / math.sqrt(n)
    if spec == "uniform":
        return torch.ones_like(s) / n
    if spec.startswith("poly_learned:p="):   # at the head factor's initial value 1
        p = int(spec.split("=")[1])
        return s ** p / math.sqrt(n)
    raise KeyError(spec)


@pytest.mark.parametrize("spec", EXTRA_SPECS)
def test_matches_direct_formula(spec):
    g = torch.Generator().manual_seed(0)
    s = torch.randn(3, 2, 7, 9, dtype=torch.float64, generator=g) * 1.5
    got = A.get(spec)(s.float())
    torch.testing.assert_close(got.double(), _direct(spec, s, 9), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("spec", EXTRA_SPECS)
def test_masked_keys_get_zero_and_n_counts_visible_keys(spec):
    s = torch.randn(2, 5, 8)
    mask = torch.ones(2, 1, 8, dtype=torch.bool)
    mask[0, :, 5:] = False
    mask[1, :, 2:3] = False
    w = A.get(spec)(s, mask)
    assert torch.all(w[~mask.expand_as(w)] == 0)
    torch.testing.assert_close(w[0, :, :5], A.get(spec)(s[0, :, :5]), rtol=1e-5, atol=1e-6)
    keep = torch.tensor([0, 1, 3, 4, 5, 6, 7])
    torch.testing.assert_close(w[1][:, keep], A.get(spec)(s[1][:, keep]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("spec", EXTRA_SPECS)
@pytest.mark.parametrize("bad", [1e30, float("inf"), float("-inf"), float("nan")])
def test_huge_or_nonfinite_scores_at_masked_keys_do_not_leak(spec, bad):
    s = torch.randn(4, 6)
    s[:, -2:] = bad
    mask = torch.tensor([True] * 4 + [False] * 2)
    act = A.get(spec)
    w = act(s, mask)
    assert torch.isfinite(w).all()
    assert torch.all(w[:, 4:] == 0)
    torch.testing.assert_close(w[:, :4], act(s[:, :4]))
    torch.testing.assert_close(act.jacobian_fro_sq(s, mask), act.jacobian_fro_sq(s[:, :4]))


def _rowwise_jacobian_fro_sq(act, scores, mask, n):
    jac = jacrev(lambda x: act(x, mask, n))(scores)
    b, h, nq, nk = scores.shape
    flat = jac.reshape(b * h * nq, nk, b * h * nq, nk)
    rows = torch.stack([flat[r, :, r, :].pow(2).sum() for r in range(b * h * nq)]).reshape(b, h, nq)
    block = torch.eye(b * h * nq, dtype=torch.bool)[:, None, :, None].expand_as(flat)
    return rows, flat[~block].abs().max()


@pytest.mark.parametrize("kind", ["none", "padding+causal"])
@pytest.mark.parametrize("n_mode", ["row", "fixed"])
@pytest.mark.parametrize("spec", EXTRA_SPECS)
def test_closed_form_jacobian_matches_jacrev(spec, kind, n_mode):
    torch.manual_seed(1)
    act = A.get(spec)
    b, h, nq, nk = 2, 2, 4, 5
    # scale 2 so that some poly_cap rows are capped and some are not
    scores = torch.randn(b, h, nq, nk) * 2.0
    kpm = None
    if kind != "none":
        kpm = torch.ones(b, nk, dtype=torch.bool)
        kpm[0, -2:] = False
    mask = attention_mask(b, nq, nk, kpm, kind != "none")
    n = visible_counts(mask, nk, n_mode, kpm)
    exact, off = _rowwise_jacobian_fro_sq(act, scores, mask, n)
    closed = act.jacobian_fro_sq(scores, mask, n)
    assert off == 0
    # near-one-hot rows: the closed form cancels terms of size ~1 in float32
    torch.testing.assert_close(closed, exact, rtol=1e-4, atol=1e-6)


def test_poly_cap_bounds_every_row_and_leaves_small_rows_alone():
    act = A.get("poly_cap:p=3")
    s = torch.randn(2, 3, 16, 16) * 3
    s[0, 0] *= 0.05  # a head whose rows stay inside the unit ball
    w = act(s)
    assert (w.norm(dim=-1) <= 1 + 1e-5).all()
    assert (torch.linalg.matrix_norm(w) <= 4 * (1 + 1e-5)).all()        # sqrt(16 rows)
    torch.testing.assert_close(w[0, 0], A.get("poly:p=3")(s[0, 0]))
    assert (w.norm(dim=-1) > 0.999).float().mean() > 0.5                 # the cap is active


def test_poly_unit_puts_every_row_at_norm_one_and_masked_keys_at_zero():
    unit, cap = A.get("poly_unit:p=3"), A.get("poly_cap:p=3")
    s = torch.randn(2, 3, 16, 16) * 3
    s[0, 0] *= 0.05                       # rows that the cap would leave inside the unit ball
    w = unit(s)
    torch.testing.assert_close(w.norm(dim=-1), torch.ones(2, 3, 16))
    assert cap(s)[0, 0].norm(dim=-1).max() < 0.5
    big = cap(s).norm(dim=-1) > 1 - 1e-6  # where the cap binds, the two agree
    torch.testing.assert_close(w[big], cap(s)[big])
    assert (w < 0).any()                  # the sign of s^3 is kept
    # causal mask with -inf at masked keys: exactly zero there, finite rows of norm 1, finite gradients
    mask = torch.ones(16, 16, dtype=torch.bool).tril()
    s2 = s.masked_fill(~mask, float("-inf")).requires_grad_(True)
    w2 = unit(s2, mask)
    assert (w2[..., ~mask] == 0).all() and torch.isfinite(w2).all()
    torch.testing.assert_close(w2.norm(dim=-1), torch.ones(2, 3, 16))
    w2.pow(2).mul(torch.randn_like(w2)).sum().backward()
    assert torch.isfinite(s2.grad).all() and (s2.grad[..., ~mask] == 0).all()
    # a row of zero scores keeps zero weights (no division by zero), with a finite gradient
    z = torch.zeros(1, 4, requires_grad=True)
    out = unit(z)
    assert torch.equal(out, torch.zeros(1, 4))
    out.sum().backward()
    assert torch.isfinite(z.grad).all()


def test_softmax_k_scales_weights_norm_and_jacobian():
    s = torch.randn(3, 8, 8)
    base, k3 = A.get("softmax"), A.get("softmax:k=3")
    torch.testing.assert_close(k3(s), 3 * base(s))
    torch.testing.assert_close(k3.jacobian_fro_sq(s), 9 * base.jacobian_fro_sq(s))
    one_hot = torch.full((8, 8), -1e4).fill_diagonal_(0)
    assert torch.linalg.norm(k3(one_hot)).item() == pytest.approx(3 * math.sqrt(8), rel=1e-5)
    assert not k3.rows_sum_to_one and base.rows_sum_to_one


def test_zero_normaliser_rows_get_zero_weights():
    neg = -torch.rand(2, 5) - 0.1
    assert torch.equal(A.get("relu2_norm")(neg), torch.zeros(2, 5))
    zeros = torch.zeros(3, 4)
    for spec in ("power_softmax:p=2", "polyak_sum", "sa_softmax_norm", "relu2_norm"):
        w = A.get(spec)(zeros)
        assert torch.equal(w, torch.zeros_like(w)), spec
    on_zeros = torch.full((2, 4), -math.pi / 4)        # every score a zero of sin^2(s + pi/4)
    assert torch.allclose(A.get("periodic")(on_zeros), torch.zeros(2, 4), atol=1e-6)


def test_power_softmax_is_stable_for_large_powers_and_scores():
    s = torch.tensor([[300.0, -150.0, 10.0]])
    w = A.get("power_softmax:p=9")(s)
    assert torch.isfinite(w).all()
    want = torch.tensor([[300.0, 150.0, 10.0]], dtype=torch.float64) ** 9
    torch.testing.assert_close(w.double(), want / want.sum(), rtol=1e-5, atol=1e-12)
    # even p is the normalised polynomial of the main registry
    x = torch.randn(4, 6)
    torch.testing.assert_close(A.get("power_softmax:p=2")(x), A.get("poly_norm:p=2")(x))


def test_taylor_softmax_is_positive_even_for_very_negative_scores():
    s = torch.tensor([[-50.0, -1.0, 0.0, 3.0]])
    w = A.get("taylor_softmax")(s)
    assert (w > 0).all()
    torch.testing.assert_close(w.sum(), torch.tensor(1.0))


def test_invsqrt_favours_scores_near_zero_not_large_ones():
    w = A.get("invsqrt")(torch.tensor([[0.0, 1.0, 5.0, -5.0]]))
    assert w[0].argmax() == 0 and w[0, 2] == w[0, 3]
    assert A.canonical("invsqrt:e=1") == "invsqrt" and A.canonical("invsqrt:e=2/4") == "invsqrt:e=1/2"


def test_which_extra_activations_are_signed():
    # their declared properties are checked with the book's in test_activations.py
    s = torch.randn(64, 16) * 3
    signed = [sp for sp in EXTRA_SPECS if not A.get(sp).nonnegative]
    assert set(signed) == {"poly_cap:p=3", "poly_unit:p=3", "sa_softmax", "polyak_sum", "poly_odd:p=2", "poly_odd:p=4"}
    assert (A.get("polyak_sum")(s).abs().sum(-1) - 1).abs().max() < 1e-5


@pytest.mark.parametrize("bad", ["power_softmax", "power_softmax:p=0", "power_softmax:p=1/2", "poly_cap",
                                 "poly_cap:p=-1", "softmax:k=0", "softmax:k=-2", "invsqrt:e=0",
                                 "taylor_softmax:p=2", "periodic:x=1", "relu2_n:p=2", "sa_softmax:k=1",
                                 "invsqrt_sum", "polyak", "poly_odd", "poly_odd:p=0", "poly_odd:p=3/2"])
def test_bad_specs_raise_one_line_valueerror_listing_valid_forms(bad):
    with pytest.raises(ValueError, match="valid forms") as err:
        A.get(bad)
    assert "\n" not in str(err.value) and "power_softmax:p=P" in str(err.value)


def test_canonical_forms():
    assert A.canonical("softmax:k=1") == "softmax"
    assert A.canonical("softmax:k=4/2") == "softmax:k=2"
    assert A.canonical("power_softmax:p=4/2") == "power_softmax:p=2"
    assert A.canonical("poly_cap: p=3") == "poly_cap:p=3"


@pytest.mark.parametrize("spec", EXTRA_SPECS)
def test_float32_under_autocast_and_dtype_preserved(spec):
    s = torch.randn(2, 4, 4).to(torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        w = A.get(spec)(s)
    assert w.dtype == torch.bfloat16
    torch.testing.assert_close(w.float(), A.get(spec)(s.float()), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("causal", [False, True])
def test_relu2_n_fast_path_matches_naive_path(causal):
    torch.manual_seed(3)
    q, k, v = (torch.randn(2, 2, 12, 8, requires_grad=True) for _ in range(3))
    kpm = torch.ones(2, 12, dtype=torch.bool)
    kpm[1, -3:] = False
    fast = attention(q, k, v, "relu2_n", key_padding_mask=kpm, causal=causal, path="blocked")
    naive = attention(q, k, v, "relu2_n", key_padding_mask=kpm, causal=causal, path="naive")
    torch.testing.assert_close(fast, naive, rtol=1e-5, atol=1e-6)
    gf = torch.autograd.grad(fast.sum(), (q, k, v))
    gn = torch.autograd.grad(naive.sum(), (q, k, v))
    for a, b in zip(gf, gn):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("spec", [s for s in EXTRA_SPECS if not A.get(s).elementwise])
def test_row_coupled_specs_take_the_naive_path_in_attention(spec):
    torch.manual_seed(4)
    q, k, v = (torch.randn(1, 2, 6, 4) for _ in range(3))
    out = attention(q, k, v, spec, causal=True)
    mask = attention_mask(1, 6, 6, None, True)
    w = A.get(spec)((q @ k.transpose(-2, -1)) / 2, mask, visible_counts(mask, 6))
    torch.testing.assert_close(out, w @ v)


@pytest.mark.parametrize("p", [1, 2, 3, 4, 5, 6, 7])
def test_poly_odd_is_the_sign_keeping_power(p):
    s = torch.randn(3, 6, 10, dtype=torch.float64) * 1.3
    odd, plain = A.get(f"poly_odd:p={p}"), A.get(f"poly:p={p}")
    w, w_plain = odd(s.float()).double(), plain(s.float()).double()
    torch.testing.assert_close(w, torch.sign(s) * s.abs() ** p / math.sqrt(10), rtol=1e-5, atol=1e-7)
    if p % 2:                                         # odd p: the paper's s^p itself
        torch.testing.assert_close(w, w_plain, rtol=1e-6, atol=1e-7)
    else:                                             # even p: same magnitude, the score's sign
        torch.testing.assert_close(w.abs(), w_plain.abs(), rtol=1e-6, atol=1e-7)
        assert torch.equal(torch.sign(w), torch.sign(s))
    # the derivative's magnitude is that of s^p for every p, so the Jacobian norms agree
    torch.testing.assert_close(odd.jacobian_fro_sq(s.float()), plain.jacobian_fro_sq(s.float()),
                               rtol=1e-5, atol=1e-7)
    assert not odd.nonnegative and odd.elementwise and not odd.rows_sum_to_one


def test_poly_odd_fixed_scale_masking_and_fast_path():
    act = A.get("poly_odd:p=2,c=1/14")
    assert act.spec == "poly_odd:p=2,c=1/14"
    s = torch.tensor([[-2.0, 1.0, 3.0, -1.0]])
    torch.testing.assert_close(act(s), torch.tensor([[-4.0, 1.0, 9.0, -1.0]]) / 14)
    mask = torch.tensor([True, False, True, False])
    w = act(s * 1e6, mask)
    assert w[0, 1] == 0 and w[0, 3] == 0 and torch.isfinite(w).all()
    # the blocked kernel (generic elementwise path) gives the weights of the naive path
    q, k, v = (torch.randn(2, 2, 9, 8) for _ in range(3))
    kpm = torch.ones(2, 9, dtype=torch.bool)
    kpm[1, -3:] = False
    for spec in ("poly_odd:p=2", "poly_odd:p=4"):
        fast = attention(q, k, v, spec, key_padding_mask=kpm, path="blocked")
        naive = attention(q, k, v, spec, key_padding_mask=kpm, path="naive")
        torch.testing.assert_close(fast, naive, rtol=1e-4, atol=1e-5)
