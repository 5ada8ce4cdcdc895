"""FAVOR+ (Choromanski et al., "Rethinking Attention with Performers", ICLR 2021,
arXiv:2009.14794): softmax attention estimated in time linear in N with positive
orthogonal random features.

For scores q.k / sqrt(d), scale q and k by d^(-1/4); then exp(q.k) is the expectation
over w ~ N(0, I_d) of phi_w(q) phi_w(k) with phi_w(x) = exp(w.x - |x|^2 / 2) > 0.  With
m features w_1..w_m stacked in W [m, d], phi(x) = exp(W x - |x|^2/2) / sqrt(m) and

    out_i = sum_j phi(q_i).phi(k_j) v_j / sum_j phi(q_i).phi(k_j)
          = phi(q_i)^T (phi(K)^T V) / phi(q_i)^T (phi(K)^T 1)

which never forms the N x N matrix.  The estimator is unbiased for each kernel value
(the ratio is not exactly, but converges as m grows).  "Orthogonal": W is drawn in
blocks of d exactly orthogonal directions, each row's length drawn as the norm of a
d-dimensional Gaussian vector (so every row is still marginally N(0, I_d)); this
lowers the variance.  Causal attention uses prefix sums over keys.

This is not an activation: the weights depend on q and k, not on the scores, so it
cannot enter the registry of :mod:`polyattn.activations`.  How it would plug into
``polyattn.attention``: a ``path="favor"`` (or an activation-like spec ``favor:m=M``
that only selects this path) would, in ``attention()``, call
``favor_plus_attention(q, k, v, m, generator, key_padding_mask, causal)`` in place
of the score matrix, with the projection kept as a module buffer (redrawn every so
many steps, as the Performer does) instead of a generator per call; probes that need
weights would call :func:`favor_attention_weights`, which materialises the implicit
N x N matrix.
"""
from __future__ import annotations

import math
from typing import Optional

import torch

Tensor = torch.Tensor

#: Floor of each row's normaliser.  Features are positive, so the normaliser is zero only
#: for a query with no visible key (or features that all underflowed): its output is 0.
#: An additive epsilon would bias rows whose normaliser is legitimately tiny.
_TINY = 1e-30


def random_projection(d: int, n_features: int, generator: torch.Generator, orthogonal: bool = True,
                      device=None) -> Tensor:
    """Feature directions W ``[n_features, d]`` (float32), rows marginally N(0, I_d)."""
    if n_features < 1 or d < 1:
        raise ValueError(f"need n_features >= 1 and d >= 1, got n_features={n_features}, d={d}")
    if not orthogonal:
        w = torch.randn(n_features, d, generator=generator)
    else:
        blocks = []
        for _ in range(math.ceil(n_features / d)):
            q, r = torch.linalg.qr(torch.randn(d, d, generator=generator))
            q = q * torch.sign(torch.diagonal(r))       # Haar-distributed, not biased by QR's signs
            blocks.append(q.T)
        w = torch.cat(blocks)[:n_features]
        lengths = torch.randn(n_features, d, generator=generator).norm(dim=1, keepdim=True)
        w = w * lengths
    return w.to(device=device, dtype=torch.float32)


def _log_features(x: Tensor, w: Tensor) -> Tensor:
    # log of phi(x) * sqrt(m): W x - |x|^2 / 2, for x already scaled by d^(-1/4)
    return x @ w.T - 0.5 * (x * x).sum(-1, keepdim=True)


def _features(q: Tensor, k: Tensor, w: Tensor, key_padding_mask: Optional[Tensor]):
    """phi(q) ``[B, H, Nq, m]`` and phi(k) ``[B, H, Nk, m]`` up to positive factors that
    cancel in the ratio: a per-query one for q, and one per batch-head (shared by all its
    keys) for k.  Padding keys get exactly zero features."""
    d = q.shape[-1]
    scale = d ** -0.25
    lq = _log_features(q.float() * scale, w)
    lq = lq - lq.amax(-1, keepdim=True)
    kf = k.float() * scale
    if key_padding_mask is not None:
        keep = key_padding_mask.bool()[:, None, :, None]
        kf = torch.where(keep, kf, torch.zeros((), device=kf.device))    # garbage never reaches exp
    lk = _log_features(kf, w)
    if key_padding_mask is not None:
        lk = torch.where(keep, lk, torch.full((), -math.inf, device=lk.device))
    top = lk.amax(dim=(-1, -2), keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    return torch.exp(lq), torch.exp(lk - top)


def _check(q, k, v, key_padding_mask):
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError("q, k, v must be [B, H, N, d]")
    b, h, _, d = q.shape
    n_k = k.shape[2]
    if k.shape[:2] != (b, h) or v.shape[:3] != (b, h, n_k) or k.shape[3] != d:
        raise ValueError(f"q, k, v must be [B, H, N, d] with matching B, H, key N and d; got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if key_padding_mask is not None and key_padding_mask.shape != (b, n_k):
        raise ValueError(f"key_padding_mask must have shape (batch, keys) = {(b, n_k)}, "
                         f"got {tuple(key_padding_mask.shape)}")


def favor_plus_attention(q: Tensor, k: Tensor, v: Tensor, n_features: int, generator: torch.Generator,
                         key_padding_mask: Optional[Tensor] = None, causal: bool = False,
                         orthogonal: bool = True, projection: Optional[Tensor] = None) -> Tensor:
    """FAVOR+ estimate of softmax(q k^T / sqrt(d)) v for ``[B, H, N, d]`` tensors.

    ``generator`` draws the ``n_features`` directions (the same generator state gives the
    same features); ``projection`` ([m, d], from :func:`random_projection`) overrides it.
    ``key_padding_mask`` ``[B, Nk]``, True = real key: padding keys contribute nothing.
    ``causal``: query i sees keys j <= i + (Nk - Nq), as ``polyattn.attention``; a query
    with no visible key gets a zero output.  Computed in float32, returned in v's dtype.
    Time O(N m (d + dv)); the causal form keeps prefix sums, O(N m dv) memory.
    """
    _check(q, k, v, key_padding_mask)
    d = q.shape[-1]
    w = projection if projection is not None else random_projection(d, n_features, generator, orthogonal,
                                                                     device=q.device)
    w = w.to(device=q.device, dtype=torch.float32)
    with torch.autocast(device_type=q.device.type, enabled=False):
        fq, fk = _features(q, k, w, key_padding_mask)
        vf = v.float()
        if not causal:
            kv = fk.transpose(-1, -2) @ vf                       # [B, H, m, dv]
            num = fq @ kv
            den = fq @ fk.sum(-2).unsqueeze(-1)                  # [B, H, Nq, 1]
        else:
            n_q, n_k = q.shape[2], k.shape[2]
            kv = torch.cumsum(fk.unsqueeze(-1) * vf.unsqueeze(-2), dim=2)    # [B, H, Nk, m, dv]
            ks = torch.cumsum(fk, dim=2)                                     # [B, H, Nk, m]
            last = torch.arange(n_q, device=q.device) + (n_k - n_q)
            seen = (last >= 0).to(torch.float32)[:, None]
            last = last.clamp(0, n_k - 1)
            num = torch.einsum("bhim,bhimv->bhiv", fq, kv[:, :, last]) * seen
            den = (fq * ks[:, :, last]).sum(-1, keepdim=True) * seen
        out = num / den.clamp_min(_TINY)
    return out.to(v.dtype)


def favor_attention_weights(q: Tensor, k: Tensor, n_features: int, generator: torch.Generator,
                            key_padding_mask: Optional[Tensor] = None, causal: bool = False,
                            orthogonal: bool = True, projection: Optional[Tensor] = None) -> Tensor:
    """The N x N weights FAVOR+ implies, ``[B, H, Nq, Nk]`` (rows sum to 1), for probes and sink
    measurements on small inputs; the same features as :func:`favor_plus_attention` for the same
    generator state or projection."""
    b, h, n_q, d = q.shape
    n_k = k.shape[2]
    _check(q, k, k, key_padding_mask)
    w = projection if projection is not None else random_projection(d, n_features, generator, orthogonal,
                                                                     device=q.device)
    with torch.autocast(device_type=q.device.type, enabled=False):
        fq, fk = _features(q, k, w.to(device=q.device, dtype=torch.float32), key_padding_mask)
        a = fq @ fk.transpose(-1, -2)
        if causal:
            vis = torch.ones(n_q, n_k, dtype=torch.bool, device=q.device).tril(diagonal=n_k - n_q)
            a = torch.where(vis, a, torch.zeros((), device=a.device))
        return a / a.sum(-1, keepdim=True).clamp_min(_TINY)
