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
