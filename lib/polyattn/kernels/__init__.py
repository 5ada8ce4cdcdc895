"""Fast attention paths for elementwise activations (blocked and linear-time).

``fused_attention`` returns None when no fast path applies, and the caller falls back
to the naive path.  Two paths:

``blocked``  every elementwise activation (poly, relu_n, sigmoid, ...): the score
             matrix is computed tile by tile and never stored; the backward pass
             recomputes the tiles (:mod:`polyattn.kernels.blocked`).
``linear``   poly of degree 1, 2 and 3: exact forms in time linear in N, with a chunked
             variant for causal masks (:mod:`polyattn.kernels.linear`; for p = 1 on the
             CPU it runs in the C++ extension of the compiled path when that builds).
``compiled`` poly (any integer degree) on the CPU: the tiles of the blocked path in a C++
             extension built on first use (:mod:`polyattn.kernels.compiled`).

``path="auto"`` picks the cheaper one from the shapes (see :func:`choose_path`); it takes
the compiled path only where it was measured faster (causal or not) and the extension builds.
"""
from __future__ import annotations

from typing import Optional

import torch

from .. import activations as _acts
from . import compiled as _compiled
from ._common import elementwise_kernel, row_counts
from .blocked import block_sizes, blocked_attention, per_head_rows
from .compiled import compiled_attention
from .linear import LINEAR_DEGREES, feature_dim, linear_attention

FAST_PATHS = ("auto", "blocked", "linear", "compiled")

#: ``auto`` uses the degree-2 feature map once N reaches this multiple of its feature
#: count F = d (d + 1) / 2.  Measured at d = 32 (F = 528): non-causal, the two paths
#: tie at N = 1024 and the feature map takes half the time at N = 2048; the chunked
#: causal form is still slower than the blocked path at N = 2048.
LINEAR_P2_FEATURE_RATIO = 2.0
LINEAR_P2_FEATURE_RATIO_CAUSAL = 8.0
#: Causal poly attention on the CPU: ``auto`` takes the compiled path wherever it would take the
#: blocked one (measured, 1 thread, d = 32, batch-heads 32, forward + backward: 0.5-0.8x SDPA's
#: causal time from N = 64 to 2048, where the blocked path takes 0.9-1.0x; 0.7x the blocked
#: time at N = 8-16), and for p = 1 instead of the linear form up to this many keys (measured
#: under load, forward + backward / SDPA causal: compiled tiles 0.92x, 0.48x, 0.69x, 0.50x and the
#: linear form, itself in C++ where the extension builds, 1.04x, 0.52x, 0.58x, 0.30x at N = 64,
#: 128, 256, 512).
COMPILED_P1_MAX_N = 128
#: Non-causal poly attention on the CPU: ``auto`` takes the compiled path wherever it would take
#: the blocked one, for p <= ``COMPILED_MAX_DEGREE`` and from this many keys on.  Measured under
#: load (1 thread, forward + backward, median over 7-21 interleaved rounds of the paired ratio
#: compiled / blocked time), p = 3: d = 32, batch-heads 32: 0.81-0.93 at every N from 48 to 4096
#: (0.86 at 4096, where compiled takes 0.89x SDPA's time and blocked 1.06x); batch-heads 2:
#: 0.74-0.89 from N = 64 to 4096; batch-heads 128: 0.76-0.87 from N = 40 to 64; d = 64: 0.86-0.90
#: from N = 48 to 1024; d = 16: 0.78-0.80 at N = 48-64; the micro ViT's shape (batch-heads 512,
#: d = 16, N = 50): 0.77-0.85; p = 2, d = 32, batch-heads 32: 0.79-0.91 from N = 48 to 1024; fewer or more
#: queries than keys (Nq x Nk = 1 x 256, 8 x 1024, 16 x 64, 256 x 64): 0.87-0.94.  With
#: fewer keys and many heads the blocked path's one product over all heads wins or ties
#: (batch-heads 128, d = 32: 1.23 at N = 8, 0.97-1.11 at N = 16, 0.96-1.01 at N = 24, 0.88-0.93 at
#: N = 32; batch-heads 32: 0.86 and 1.04 in two runs at N = 32; batch-heads 512, d = 16: 1.11 at N = 16).
#: The linear forms keep their shapes: p = 1 (compiled / linear: 1.02 at N = 32, 1.34 at 64, 2.2 at 128,
#: 3.4 at 256) and p = 2 from ``LINEAR_P2_FEATURE_RATIO`` F keys on (compiled / linear: 0.80 at N = 1024,
#: 1.85 at 2048, 4.0 at 4096).
COMPILED_MIN_KEYS = 48
#: ... and p above it stays blocked: its power is a loop over the exponent (p = 4: 1.18-1.22 at
#: N = 48-64, 0.87-0.88 from N = 128; p = 5: 0.99-1.00 at N = 48-64).
COMPILED_MAX_DEGREE = 3


def linear_degree(act) -> Optional[int]:
    """The degree p when ``act`` has an exact linear-time form (poly with p in 1, 2, 3), else None."""
    act = _acts.get(act)
    if act.family == "poly" and int(act.params["p"]) in LINEAR_DEGREES:
        return int(act.params["p"])
    return None


def choose_path(act, n_q: int, n_k: int, head_dim: int, causal: bool = False, compiled: bool = False) -> str:
    """``blocked``, ``linear`` or ``compiled``: the path ``auto`` takes for these shapes.

    ``compiled``: whether the compiled path may be taken (CPU inputs, extension built).  Causal:
    wherever the blocked path would be taken, and for p = 1 up to ``COMPILED_P1_MAX_N`` keys;
    non-causal: wherever the blocked path would be taken, for p <= ``COMPILED_MAX_DEGREE`` and
    at least ``COMPILED_MIN_KEYS`` keys.
    """
    p = linear_degree(act)
    if p == 1:      # measured (1 thread, d = 32): as fast as blocked from N = 8 on, causal or not
        path = "linear"
    elif p == 2:
        ratio = LINEAR_P2_FEATURE_RATIO_CAUSAL if causal else LINEAR_P2_FEATURE_RATIO
        path = "linear" if n_k >= ratio * feature_dim(head_dim, 2) else "blocked"
    else:           # p = 3: its feature map (C(d + 2, 3) features) is measured in chapter 08, never chosen
        path = "blocked"
    degree = _compiled.power_degree(act)
    if compiled and degree is not None:
        if causal and (path == "blocked" or (p == 1 and n_k <= COMPILED_P1_MAX_N)):
            return "compiled"
        if not causal and path == "blocked" and degree <= COMPILED_MAX_DEGREE and n_k >= COMPILED_MIN_KEYS:
            return "compiled"
    return path


def fused_attention(q, k, v, act, key_padding_mask=None, causal=False, n_mode="row", path="auto",
                    blocks: Optional[tuple[int, int, int]] = None):
    """Attention ``[B, H, Nq, dv]`` for an elementwise activation, or None without a fast path.

    Same result as ``polyattn.attention.attention(..., path="naive")``: scores
    q.k/sqrt(d), weights ``act(scores, mask, N)`` with masked keys exactly zero, N per
    ``n_mode``.  ``path``: ``auto`` | ``blocked`` | ``linear`` | ``compiled`` (``linear``
    raises for an activation without a linear-time form, ``compiled`` for one that is not
    a power of the score, for inputs off the CPU, and when its extension cannot be built).
    ``blocks``: (batch-heads, query rows, keys) per tile of the blocked path, instead of
    :func:`block_sizes`.
    """
    act = _acts.get(act)
    if path == "naive":
        return None
    if path not in FAST_PATHS:
        if path == "sdpa":
            raise ValueError(f"path='sdpa' computes softmax only; activation is {act.spec!r}. "
                             f"Use one of {FAST_PATHS} or 'naive'")
        raise ValueError(f"path must be one of {FAST_PATHS} (or 'naive'), got {path!r}")
    if path == "linear" and linear_degree(act) is None:
        raise ValueError(f"activation {act.spec!r} has no exact linear-time form (only poly with p in "
                         f"{LINEAR_DEGREES} has one); use path='blocked' or 'auto'")
    if path == "compiled":
        _compiled.check_supported(act, q.device)
        _compiled.load_extension()
    if not act.elementwise:
        return None
    b, h, n_q, d = q.shape
    n_k, dv = k.shape[2], v.shape[3]
    if k.shape[:2] != (b, h) or v.shape[:3] != (b, h, n_k) or k.shape[3] != d:
        raise ValueError(f"q, k, v must be [B, H, N, d] with matching B, H, key N and d; got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if key_padding_mask is not None:
        if key_padding_mask.shape != (b, n_k):
            raise ValueError(f"key_padding_mask must have shape (batch, keys) = {(b, n_k)}, "
                             f"got {tuple(key_padding_mask.shape)}")
        key_padding_mask = key_padding_mask.bool()
    if path == "auto":
        # the choice first, the extension (built on first use) only when the choice needs it
        may_compile = q.device.type == "cpu" and _compiled.power_degree(act) is not None
        path = choose_path(act, n_q, n_k, d, causal, compiled=may_compile)
        if path == "compiled" and not _compiled.auto_enabled():
            path = choose_path(act, n_q, n_k, d, causal, compiled=False)
    n = row_counts(b, n_q, n_k, key_padding_mask, causal, n_mode, q.device)
    with torch.autocast(device_type=q.device.type, enabled=False):
        qf, kf, vf = q.float(), k.float(), v.float()
        if key_padding_mask is not None:
            keep = key_padding_mask[:, None, :, None].to(torch.float32)
            kf = kf * keep
            vf = vf * keep
        if path == "linear":
            p = linear_degree(act)
            kernel = elementwise_kernel(act)
            out = linear_attention(qf, kf, vf, p, kernel.row_scale(n), causal=causal)
        elif path == "compiled":
            out = _compiled.compiled_attention(qf.reshape(b * h, n_q, d), kf.reshape(b * h, n_k, d),
                                               vf.reshape(b * h, n_k, dv), act, per_head_rows(n, b, h),
                                               causal=causal, offset=n_k - n_q)
            out = out.view(b, h, n_q, dv)
        else:
            kernel = elementwise_kernel(act)
            out = blocked_attention(qf.reshape(b * h, n_q, d), kf.reshape(b * h, n_k, d),
                                    vf.reshape(b * h, n_k, dv), kernel, per_head_rows(n, b, h),
                                    causal=causal, offset=n_k - n_q, blocks=blocks)
            out = out.view(b, h, n_q, dv)
    return out.to(v.dtype)


__all__ = ["fused_attention", "choose_path", "linear_degree", "blocked_attention", "linear_attention",
           "compiled_attention",
           "block_sizes", "row_counts", "FAST_PATHS", "COMPILED_P1_MAX_N", "COMPILED_MIN_KEYS",
           "COMPILED_MAX_DEGREE"]
