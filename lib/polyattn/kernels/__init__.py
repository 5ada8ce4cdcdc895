"""Fast attention paths for elementwise activations (blocked and linear-time).

``fused_attention`` returns None when no fast path applies, and the caller falls back
to the naive path.  Two paths:

``blocked``  every elementwise activation (poly, relu_n, sigmoid, ...): the score
             matrix is computed tile by tile and never stored; the backward pass
             recomputes the tiles (:mod:`polyattn.kernels.blocked`).
``linear``   poly of degree 1 and 2: exact forms in time linear in N, with a chunked
             variant for causal masks (:mod:`polyattn.kernels.linear`).

``path="auto"`` picks the cheaper one from the shapes (see :func:`choose_path`).
"""
from __future__ import annotations

from typing import Optional

import torch

from .. import activations as _acts
from ._common import elementwise_kernel, row_counts
from .blocked import block_sizes, blocked_attention, per_head_rows
from .linear import LINEAR_DEGREES, feature_dim, linear_attention

FAST_PATHS = ("auto", "blocked", "linear")

#: ``auto`` uses the degree-2 feature map once N reaches this multiple of its feature
#: count F = d (d + 1) / 2.  Measured at d = 32 (F = 528): non-causal, the two paths
#: tie at N = 1024 and the feature map takes half the time at N = 2048; the chunked
#: causal form is still slower than the blocked path at N = 2048.
LINEAR_P2_FEATURE_RATIO = 2.0
LINEAR_P2_FEATURE_RATIO_CAUSAL = 8.0


def linear_degree(act) -> Optional[int]:
    """The degree p when ``act`` has an exact linear-time form (poly with p in 1, 2), else None."""
    act = _acts.get(act)
    if act.family == "poly" and int(act.params["p"]) in LINEAR_DEGREES:
        return int(act.params["p"])
    return None


def choose_path(act, n_q: int, n_k: int, head_dim: int, causal: bool = False) -> str:
    """``blocked`` or ``linear``: the path ``auto`` takes for these shapes."""
    p = linear_degree(act)
    if p == 1:      # measured (1 thread, d = 32): as fast as blocked from N = 8 on, causal or not
        return "linear"
    if p == 2:
        ratio = LINEAR_P2_FEATURE_RATIO_CAUSAL if causal else LINEAR_P2_FEATURE_RATIO
        return "linear" if n_k >= ratio * feature_dim(head_dim, 2) else "blocked"
    return "blocked"


def fused_attention(q, k, v, act, key_padding_mask=None, causal=False, n_mode="row", path="auto",
                    blocks: Optional[tuple[int, int, int]] = None):
    """Attention ``[B, H, Nq, dv]`` for an elementwise activation, or None without a fast path.

    Same result as ``polyattn.attention.attention(..., path="naive")``: scores
    q.k/sqrt(d), weights ``act(scores, mask, N)`` with masked keys exactly zero, N per
    ``n_mode``.  ``path``: ``auto`` | ``blocked`` | ``linear`` (``linear`` raises for an
    activation without a linear-time form).  ``blocks``: (batch-heads, query rows, keys)
    per tile of the blocked path, instead of :func:`block_sizes`.
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
        path = choose_path(act, n_q, n_k, d, causal)
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
        else:
            kernel = elementwise_kernel(act)
            out = blocked_attention(qf.reshape(b * h, n_q, d), kf.reshape(b * h, n_k, d),
                                    vf.reshape(b * h, n_k, dv), kernel, per_head_rows(n, b, h),
                                    causal=causal, offset=n_k - n_q, blocks=blocks)
            out = out.view(b, h, n_q, dv)
    return out.to(v.dtype)


__all__ = ["fused_attention", "choose_path", "linear_degree", "blocked_attention", "linear_attention",
           "block_sizes", "row_counts", "FAST_PATHS"]
