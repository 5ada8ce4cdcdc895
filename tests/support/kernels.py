"""Inputs and the accuracy rule shared by the kernel tests: a fast path against the naive reference.

Accuracy rule: against a float64 naive reference, a fast path's float32 error may be
at most twice the naive float32 path's error, plus a floor scaled to the magnitude
of the quantity (2e-6 of its largest entry: sums of feature products or of tiles
round differently from one matrix product).  The degree-3 feature map gets a floor of 1e-5:
its sums run over C(d + 2, 3) products as large as (|q| |k|)^3, which cancel down to the
cubed score (the largest excess measured over these shapes is about half that floor).
"""
import torch

from polyattn.attention import attention
from polyattn.kernels import fused_attention, linear_degree

#: The absolute floor, relative to the largest entry of the quantity (~30 float32 ulps).
FLOOR = 2e-6
FLOOR_DEGREE3_FEATURES = 1e-5


def inputs(b, h, n_q, n_k, d, dv, seed, padded):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, h, n_q, d, generator=g, dtype=torch.float64)
    k = torch.randn(b, h, n_k, d, generator=g, dtype=torch.float64)
    v = torch.randn(b, h, n_k, dv, generator=g, dtype=torch.float64)
    go = torch.randn(b, h, n_q, dv, generator=g, dtype=torch.float64)
    kpm = None
    if padded:
        kpm = torch.rand(b, n_k, generator=g) > 0.3
        kpm[:, 0] = True
        kpm[-1, n_k // 2:] = False       # one sequence with a padded tail
        kpm[-1, 0] = True
    return q, k, v, go, kpm


def _run(fn, q, k, v, go, dtype):
    leaves = [t.to(dtype).detach().requires_grad_() for t in (q, k, v)]
    out = fn(*leaves)
    out.backward(go.to(dtype))
    return [out.detach().double()] + [t.grad.double() for t in leaves]


def assert_matches_reference(spec, path, *, b=2, h=3, n_q=7, n_k=7, d=8, dv=5, causal=False,
                             n_mode="row", padded=False, blocks=None, seed=0):
    q, k, v, go, kpm = inputs(b, h, n_q, n_k, d, dv, seed, padded)

    def naive(q_, k_, v_):
        return attention(q_, k_, v_, spec, key_padding_mask=kpm, causal=causal, n_mode=n_mode, path="naive")

    def fast(q_, k_, v_):
        out = fused_attention(q_, k_, v_, spec, key_padding_mask=kpm, causal=causal, n_mode=n_mode,
                              path=path, blocks=blocks)
        assert out is not None and out.dtype == q_.dtype and out.shape == (b, h, n_q, dv)
        return out

    ref = _run(naive, q, k, v, go, torch.float64)
    approx = _run(naive, q, k, v, go, torch.float32)
    got = _run(fast, q, k, v, go, torch.float32)
    floor = FLOOR_DEGREE3_FEATURES if path == "linear" and linear_degree(spec) == 3 else FLOOR
    for name, r, a, g in zip(("out", "dq", "dk", "dv"), ref, approx, got):
        naive_err = (a - r).abs().max().item()
        err = (g - r).abs().max().item()
        bound = 2 * naive_err + floor * max(1.0, r.abs().max().item())
        assert err <= bound, (f"{spec} {path} {name}: error {err:.3g} > bound {bound:.3g} "
                              f"(naive float32 error {naive_err:.3g})")
