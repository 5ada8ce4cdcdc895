"""Every registered activation, at extreme scores: weights and gradients finite, masked keys with
exactly zero weight and zero gradient, through the bare activation and through attention on every
path it can take.  A family added to the registry is covered as soon as one of its specs is listed
(the first test fails until it is)."""
import itertools

import pytest
import torch

from polyattn import activations as A
from polyattn.activations_extra import EXTRA_SPECS
from polyattn.attention import attention

SPECS = tuple(dict.fromkeys(A.BOOK_SPECS + EXTRA_SPECS))
SCALES = (1e3, 3e3)


def test_every_registered_family_has_a_spec_under_test():
    covered = {A.get(s).family for s in SPECS}
    assert set(A._BUILDERS) <= covered, f"families without an extreme-score test: {set(A._BUILDERS) - covered}"


def _linear_loss(w, seed=0):
    # a linear functional of the weights: finite whenever the weights are
    g = torch.Generator().manual_seed(seed)
    return (w * torch.randn(w.shape, generator=g, dtype=w.dtype)).sum()


def _rows(scale):
    """Score rows [R, 6] and their masks: masked keys far above and far below the visible ones,
    a row with one visible key, a row with none, all-large and all-very-negative rows."""
    s = torch.tensor([
        [1.0, 2.0, 150.0, 3.0, -2.0, 0.5],
        [-scale, -scale + 1, scale, -scale + 2, -scale + 3, scale],
        [scale, scale - 1, -scale, scale - 2, 0.0, scale],
        [-120.0, -119.0, -118.0, -121.0, -122.0, -117.0],
        [-scale, -scale, -scale, -scale, -scale, -scale],
        [scale, -scale, 0.0, scale / 2, -scale / 2, 1.0],
        [scale, 2 * scale, -3.0, 4.0, 5.0, 6.0],
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    ])
    m = torch.tensor([
        [1, 1, 0, 1, 1, 1],
        [1, 1, 0, 1, 1, 0],
        [1, 1, 0, 1, 1, 0],
        [1, 1, 1, 1, 1, 1],
        [1, 1, 1, 1, 1, 1],
        [1, 1, 1, 1, 1, 1],
        [0, 0, 1, 0, 0, 0],   # one visible key, the masked ones far above it
        [0, 0, 0, 0, 0, 0],   # no visible key
    ], dtype=torch.bool)
    return s, m


@pytest.mark.parametrize("spec,scale", list(itertools.product(SPECS, SCALES)))
def test_bare_activation_at_extreme_scores(spec, scale):
    s, m = _rows(scale)
    s = s.clone().requires_grad_(True)
    w = A.get(spec)(s, m)
    assert torch.isfinite(w).all(), f"{spec}: non-finite weights {w}"
    assert torch.all(w[~m] == 0)
    _linear_loss(w).backward()
    assert torch.isfinite(s.grad).all(), f"{spec}: non-finite gradient {s.grad}"
    assert torch.all(s.grad[~m] == 0), f"{spec}: masked keys get gradient {s.grad[~m]}"
    assert torch.all(w[-1] == 0) and torch.all(s.grad[-1] == 0)


def _paths(spec):
    act = A.get(spec)
    paths = ["naive", "auto"]
    if act.elementwise:
        paths.append("blocked")
        from polyattn.kernels import linear_degree
        if linear_degree(act) is not None:
            paths.append("linear")
    if spec == "softmax":
        paths.append("sdpa")
    return paths


def _compiled_available(spec):
    from polyattn.kernels import compiled
    try:
        compiled.check_supported(A.get(spec), torch.device("cpu"))
        compiled.load_extension()
    except Exception:  # noqa: BLE001  (not a power, or no compiler here)
        return False
    return True


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("causal", [False, True])
def test_attention_at_extreme_scores_on_every_path(spec, causal):
    paths = _paths(spec) + (["compiled"] if A.get(spec).elementwise and _compiled_available(spec) else [])
    g = torch.Generator().manual_seed(1)
    b, h, n, d = 2, 2, 7, 8
    # q, k of standard deviation 40: scores q.k/sqrt(d) of a few thousand, in both signs
    q0 = torch.randn(b, h, n, d, generator=g) * 40
    k0 = torch.randn(b, h, n, d, generator=g) * 40
    k0[1, :, -3:] *= 50   # padded keys with scores far beyond the visible ones
    v0 = torch.randn(b, h, n, d, generator=g)
    pad = torch.ones(b, n, dtype=torch.bool)
    pad[1, -3:] = False
    for path in paths:
        q, k, v = (t.clone().requires_grad_(True) for t in (q0, k0, v0))
        out = attention(q, k, v, spec, key_padding_mask=pad, causal=causal, path=path)
        assert torch.isfinite(out).all(), f"{spec} on {path}: non-finite output"
        _linear_loss(out).backward()
        for name, t in (("q", q), ("k", k), ("v", v)):
            assert torch.isfinite(t.grad).all(), f"{spec} on {path} (causal={causal}): non-finite grad of {name}"
        assert torch.all(k.grad[1, :, -3:] == 0) and torch.all(v.grad[1, :, -3:] == 0), \
            f"{spec} on {path}: padded keys get gradient"
