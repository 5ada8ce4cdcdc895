"""Attention-sink measurements on attention weights.

Input: one layer's weights ``[B, H, N, N]`` (queries x keys) or a list of them, one per
layer, from the same forward pass.  Masked entries are expected to be exactly zero (as
every activation of :mod:`polyattn.activations` makes them).

The sink metric (Gu et al., "When Attention Sink Emerges in Language Models: An
Empirical View", ICLR 2025, arXiv:2410.10781; code sail-sg/Attention-Sink):

    alpha^{l,h}_k = 1/(T - k) * sum_{i >= k} A^{l,h}_{i,k}      (0-based key k, causal)
    Sink_k^eps    = 1/(L H) * sum_{l,h} 1[alpha^{l,h}_k > eps]

the mean attention key k receives from the queries that see it, and the share of
layer-head pairs in which that mean exceeds eps; computed per sample and averaged over
samples, with eps = 0.3 and inputs of T = 64 tokens; Sink_1 (key 0 here, the first
token) is the headline number.  Softpick's sink rate (Zuhri et al., arXiv:2504.20966)
is the same quantity for the first token.  Non-causal (encoder) weights average over
all queries instead.

Windows: the metric is defined on T-token inputs.  For causal weights with row-wise N,
the top-left T x T block of a longer sequence's weights *is* the attention a T-token
input would get, so longer inputs are cut to their leading window; non-causal weights
must come from T-token inputs (anything else raises, since cutting would change them).

Weights that are not a distribution (polynomial activations: entries can be negative
and rows need not sum to 1): alpha is then a raw mean weight, compared with eps on the
scale softmax would use; a head with tiny or huge row sums can cross eps for reasons of
scale alone, and negative entries can cancel.  So a report also gives the normalised
share  mean_i |A_{i,k}| / sum_j |A_{i,j}|  (the fraction of the row's absolute mass on
key k; it equals alpha for softmax rows, and a row with no mass counts as 0), its own
rate against eps, the fraction of negative weights, and row-sum statistics.
"""
from __future__ import annotations

from typing import Optional, Sequence

import torch

Tensor = torch.Tensor

SINK_EPS = 0.3
SINK_WINDOW = 64


def stack_layers(weights: Tensor | Sequence[Tensor]) -> Tensor:
    """``[L, B, H, N, N]`` float32 from one ``[B, H, N, N]`` tensor or a list of them."""
    if torch.is_tensor(weights):
        weights = [weights]
    weights = list(weights)
    if not weights:
        raise ValueError("no attention weights given")
    for w in weights:
        if w.dim() != 4 or w.shape[-1] != w.shape[-2]:
            raise ValueError(f"each layer's weights must be [B, H, N, N] (self-attention), got {tuple(w.shape)}")
    if len({tuple(w.shape) for w in weights}) != 1:
        raise ValueError(f"layers differ in shape: {sorted({tuple(w.shape) for w in weights})}")
    return torch.stack([w.detach().float() for w in weights])


def _window(a: Tensor, window: Optional[int], causal: bool, query_mask: Optional[Tensor]):
    n = a.shape[-1]
    if window is None or n == window:
        return a, query_mask
    if n < window:
        raise ValueError(f"weights cover {n} tokens, fewer than the {window}-token window the metric is "
                         "defined on; pass window=None to measure them as they are")
    if not causal:
        raise ValueError(f"non-causal weights over {n} tokens cannot be cut to a {window}-token window "
                         "(every row depends on every token); run the model on windows of that length")
    return a[..., :window, :window], None if query_mask is None else query_mask[:, :window]


def _visible(n: int, causal: bool, query_mask: Optional[Tensor], batch: int, device) -> Tensor:
    """Bool ``[B, N, N]``: the (query, key) entries that count."""
    vis = torch.ones(n, n, dtype=torch.bool, device=device)
    if causal:
        vis = vis.tril()
    vis = vis.expand(batch, n, n)
    if query_mask is not None:
        if query_mask.shape != (batch, n):
            raise ValueError(f"query_mask must be [B, N] = {(batch, n)}, got {tuple(query_mask.shape)}")
        qm = query_mask.bool().to(device)
        vis = vis & qm[:, :, None] & qm[:, None, :]
    return vis


def key_attention(weights, key: int = 0, causal: bool = True, query_mask: Optional[Tensor] = None,
                  window: Optional[int] = SINK_WINDOW, normalised: bool = False) -> Tensor:
    """alpha_k per layer, sample and head ``[L, B, H]``: the mean weight key ``key`` gets from
    the queries that see it (causal: queries i >= key; padding queries, False in
    ``query_mask`` ``[B, N]``, are left out).  ``normalised``: average the share
    |A_{i,k}| / sum_j |A_{i,j}| instead of A_{i,k}.  NaN where no query sees the key."""
    a = stack_layers(weights)
    a, query_mask = _window(a, window, causal, query_mask)
    _, b, _, n, _ = a.shape
    if not 0 <= key < n:
        raise ValueError(f"key {key} is outside the {n} tokens")
    vis = _visible(n, causal, query_mask, b, a.device)                    # [B, N, N]
    a = torch.where(vis[None, :, None], a, torch.zeros((), device=a.device))
    col = a[..., key]                                                      # [L, B, H, N]
    if normalised:
        mass = a.abs().sum(-1)
        col = torch.where(mass > 0, col.abs() / mass.clamp_min(1e-30), torch.zeros((), device=a.device))
    seen = vis[:, :, key]                                                  # [B, N] queries that see it
    count = seen.sum(-1).float()                                           # [B]
    total = (col * seen[None, :, None]).sum(-1)
    return total / count[None, :, None]                                    # 0/0 -> NaN: nobody sees the key


def sink_rate(weights, eps: float = SINK_EPS, key: int = 0, causal: bool = True,
              query_mask: Optional[Tensor] = None, window: Optional[int] = SINK_WINDOW,
              normalised: bool = False) -> float:
    """Sink_k^eps: the share of layer-head pairs with alpha_k > eps, per sample, averaged
    over samples (samples where no query sees the key are left out)."""
    alpha = key_attention(weights, key, causal, query_mask, window, normalised)      # [L, B, H]
    per_sample = (alpha > eps).float().mean(dim=(0, 2))                              # [B]
    ok = ~torch.isnan(alpha).any(0).any(-1)
    if not ok.any():
        raise ValueError(f"no sample has a query that sees key {key}")
    return per_sample[ok].mean().item()


def first_token_mass(weights, causal: bool = True, query_mask: Optional[Tensor] = None,
                     window: Optional[int] = SINK_WINDOW, normalised: bool = False) -> Tensor:
    """Mean alpha_0 over samples, per layer and head ``[L, H]`` (raw, or the normalised share)."""
    return key_attention(weights, 0, causal, query_mask, window, normalised).nanmean(1)


def negative_fraction(weights, causal: bool = True, query_mask: Optional[Tensor] = None) -> float:
    """The share of visible (query, key) entries whose weight is negative."""
    a = stack_layers(weights)
    vis = _visible(a.shape[-1], causal, query_mask, a.shape[1], a.device)[None, :, None].expand_as(a)
    return (a[vis] < 0).float().mean().item()


def row_sums(weights, causal: bool = True, query_mask: Optional[Tensor] = None) -> Tensor:
    """Each query row's weight sum ``[L, B, H, N]`` over its visible keys (NaN for padding
    queries); 1 everywhere for softmax."""
    a = stack_layers(weights)
    vis = _visible(a.shape[-1], causal, query_mask, a.shape[1], a.device)
    s = torch.where(vis[None, :, None], a, torch.zeros((), device=a.device)).sum(-1)
    if query_mask is not None:
        s = torch.where(query_mask.bool()[None, :, None, :], s, torch.full((), float("nan")))
    return s


def sink_report(weights, eps: float = SINK_EPS, causal: bool = True, query_mask: Optional[Tensor] = None,
                window: Optional[int] = SINK_WINDOW) -> dict:
    """Every measurement of the first token as a sink, for one forward pass's weights.

    ``sink_rate`` (the published Sink_1^eps on raw weights), ``sink_rate_normalised``
    (the same on the normalised share), ``alpha`` and ``share`` (``[L, H]`` lists: mean
    first-token weight and normalised share), ``alpha_mean``, ``share_mean``,
    ``negative_fraction`` and ``row_sum_mean`` / ``_min`` / ``_max`` (all on the window).
    """
    a = stack_layers(weights)
    a, qm = _window(a, window, causal, query_mask)
    alpha = first_token_mass(a.unbind(0), causal, qm, None)
    share = first_token_mass(a.unbind(0), causal, qm, None, normalised=True)
    sums = row_sums(a.unbind(0), causal, qm)
    sums = sums[~torch.isnan(sums)]
    return {
        "eps": eps,
        "window": a.shape[-1],
        "sink_rate": sink_rate(a.unbind(0), eps, 0, causal, qm, None),
        "sink_rate_normalised": sink_rate(a.unbind(0), eps, 0, causal, qm, None, normalised=True),
        "alpha": alpha.tolist(),
        "share": share.tolist(),
        "alpha_mean": alpha.nanmean().item(),
        "share_mean": share.nanmean().item(),
        "negative_fraction": negative_fraction(a.unbind(0), causal, qm),
        "row_sum_mean": sums.mean().item(),
        "row_sum_min": sums.min().item(),
        "row_sum_max": sums.max().item(),
    }
