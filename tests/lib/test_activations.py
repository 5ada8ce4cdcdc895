import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from polyattn import activations as A
from polyattn.activations_extra import EXTRA_SPECS

torch.manual_seed(0)


def _direct(spec, s, n):
    """Each activation written straight from its formula, for unmasked rows."""
    if spec == "softmax":
        return torch.exp(s) / torch.exp(s).sum(-1, keepdim=True)
    if spec == "poly:p=3":
        return s ** 3 / math.sqrt(n)
    if spec == "poly:p=3,c=1/14":
        return s ** 3 / 14
    if spec == "poly:p=3,c=1":
        return s ** 3
    if spec == "poly:p=1":
        return s / math.sqrt(n)
    if spec == "poly:p=2":
        return s ** 2 / math.sqrt(n)
    if spec == "relu_n":
        return torch.clamp(s, min=0) / n
    if spec == "sigmoid":
        return 1 / (1 + torch.exp(-(s - math.log(n))))
    if spec == "softpick":
        e = torch.exp(s) - 1
        return torch.clamp(e, min=0) / (e.abs().sum(-1, keepdim=True) + 1e-8)
    if spec == "ssmax:s=0.43":
        z = 0.43 * math.log(n) * s
        return torch.exp(z) / torch.exp(z).sum(-1, keepdim=True)
    if spec == "poly_norm:p=2":
        return s ** 2 / (s ** 2).sum(-1, keepdim=True)
    raise KeyError(spec)


@pytest.mark.parametrize("spec", A.BOOK_SPECS)
def test_matches_direct_formula(spec):
    s = torch.randn(3, 2, 7, 9, dtype=torch.float64)
    got = A.get(spec)(s.float())
    want = _direct(spec, s, 9)
    torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("spec", A.BOOK_SPECS)
def test_masked_keys_get_zero_and_n_counts_visible_keys(spec):
    s = torch.randn(2, 5, 8)
    mask = torch.ones(2, 1, 8, dtype=torch.bool)
    mask[0, :, 5:] = False   # first sequence: 5 visible keys
    mask[1, :, 2:3] = False  # second: 7 visible keys
    w = A.get(spec)(s, mask)
    assert torch.all(w[~mask.expand_as(w)] == 0)
    # the visible part equals the activation applied to the visible keys alone (N = visible count)
    torch.testing.assert_close(w[0, :, :5], A.get(spec)(s[0, :, :5]), rtol=1e-5, atol=1e-6)
    keep = torch.tensor([0, 1, 3, 4, 5, 6, 7])
    torch.testing.assert_close(w[1][:, keep], A.get(spec)(s[1][:, keep]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("spec", ["poly:p=3", "poly:p=2", "softpick", "poly_norm:p=2"])
def test_huge_scores_at_masked_keys_do_not_leak(spec):
    s = torch.randn(4, 6)
    s[:, -2:] = 1e30  # whatever sits at masked positions must not matter
    mask = torch.tensor([True] * 4 + [False] * 2)
    w = A.get(spec)(s, mask)
    assert torch.isfinite(w).all()
    torch.testing.assert_close(w[:, :4], A.get(spec)(s[:, :4]))


def test_explicit_n_overrides_visible_count():
    s = torch.randn(3, 4)
    torch.testing.assert_close(A.get("poly:p=3")(s, n=16.0), s ** 3 / 4)


@pytest.mark.parametrize("spec", A.BOOK_SPECS)
def test_float32_under_autocast_and_dtype_preserved(spec):
    s = torch.randn(2, 4, 4).to(torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        w = A.get(spec)(s)
    assert w.dtype == torch.bfloat16
    ref = A.get(spec)(s.float())
    torch.testing.assert_close(w.float(), ref, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("bad", ["", "soft max", "poly", "poly:p=x", "poly:q=2", "poly:p=3,c", "poly:p=1.5",
                                 "poly_norm:p=3", "ssmax", "ssmax:s=-1", "relu_n:p=2", "poly:p=0"])
def test_bad_specs_raise_valueerror_listing_valid_forms(bad):
    with pytest.raises(ValueError, match="valid forms"):
        A.get(bad)


def test_canonical_spec_and_fractions():
    assert A.canonical("poly:p=3,c=2/28") == "poly:p=3,c=1/14"
    assert A.canonical(" poly : p = 3 ") == "poly:p=3" or A.canonical("poly:p=3") == "poly:p=3"
    assert A.get("poly:p=3,c=1/14").pointwise(torch.tensor(2.0), torch.tensor(1.0)).item() == pytest.approx(8 / 14)


@pytest.mark.parametrize("spec", A.BOOK_SPECS + EXTRA_SPECS)
def test_declared_properties_hold(spec):
    s = torch.randn(64, 16) * 3
    act = A.get(spec)
    w = act(s)
    if act.nonnegative:
        assert (w >= 0).all(), spec
    if act.rows_sum_to_one:
        torch.testing.assert_close(w.sum(-1), torch.ones(64), msg=spec)
    if act.elementwise:  # weight depends on its own score only
        s2 = s.clone()
        s2[:, 1:] += 1
        assert torch.equal(act(s2)[:, 0], w[:, 0]), spec


def test_properties_table_lists_the_book_specs():
    assert len(A.properties_table()) == len(A.BOOK_SPECS)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 24), scale=st.floats(0.01, 50.0), seed=st.integers(0, 10_000))
def test_softmax_norm_and_jacobian_bounds(n, scale, seed):
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(n, n, generator=g, dtype=torch.float64) * scale
    act = A.get("softmax")
    w = act(s.float())
    assert torch.linalg.norm(w) <= math.sqrt(n) * (1 + 1e-5)
    assert act.jacobian_fro_sq(s.float()).sum().sqrt() <= math.sqrt(n) / 2 * (1 + 1e-5)


def _softpick_published(s, mask):
    """Softpick as its authors compute it, in float64: masked scores set to -inf before the row
    maximum m, then relu(e^(s-m) - e^-m) / (sum_j |e^(s_j-m) - e^-m| + eps), eps after rescaling."""
    m = s.masked_fill(~mask, float("-inf")).amax(-1, keepdim=True)
    d = torch.where(mask, torch.exp(s.masked_fill(~mask, 0.0) - m) - torch.exp(-m), torch.zeros((), dtype=s.dtype))
    return torch.relu(d) / (d.abs().sum(-1, keepdim=True) + A.SOFTPICK_EPS)


@pytest.mark.parametrize("scale", [0.5, 2.0, 8.0])
def test_softpick_values_and_gradients_match_the_published_formula_in_float64(scale):
    g = torch.Generator().manual_seed(3)
    s = torch.randn(4, 6, 9, generator=g, dtype=torch.float64) * scale
    mask = torch.rand(4, 1, 9, generator=g) > 0.3
    mask[..., 0] = True
    mask = mask & torch.ones(6, 9, dtype=torch.bool).tril(2)   # causal-like rows too
    up = torch.randn(s.shape, generator=g, dtype=torch.float64)
    ref_s = s.clone().requires_grad_(True)
    ref = _softpick_published(ref_s, mask)
    (ref * up).sum().backward()
    ours_s = s.float().requires_grad_(True)
    ours = A.get("softpick")(ours_s, mask)
    (ours * up.float()).sum().backward()
    torch.testing.assert_close(ours.double(), ref.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(ours_s.grad.double(), ref_s.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("big", [1e2, 1e3, 1e4])
def test_softpick_stays_finite_up_to_ten_thousand(big):
    s = (torch.rand(3, 5, 8) * 2 - 1) * big
    s[0, :, 3] = big                      # a masked score far above the visible ones
    s[1] = -big + torch.arange(8.0)        # a row of very negative scores
    mask = torch.ones(3, 5, 8, dtype=torch.bool)
    mask[0, :, 3] = False
    mask = mask & torch.ones(5, 8, dtype=torch.bool).tril(3)
    s.requires_grad_(True)
    w = A.get("softpick")(s, mask)
    (w * torch.randn(w.shape)).sum().backward()
    assert torch.isfinite(w).all() and torch.isfinite(s.grad).all()
    assert torch.all(w[~mask] == 0) and torch.all(s.grad[~mask] == 0)
