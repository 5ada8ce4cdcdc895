"""The Jacobian of the attention weights with respect to the query projection, ||dA/dW_Q||_F:
a Hutchinson estimator for training-time probes and the exact value for tests."""
from __future__ import annotations

import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from .attention import attention_mask, visible_counts

Tensor = torch.Tensor
PROBE_DISTRIBUTIONS = ("rademacher", "normal")


def check_attention_module(attn: nn.Module):
    needed = ("qkv", "attend", "heads", "head_dim", "n_mode")
    missing = [a for a in needed if not hasattr(attn, a)]
    if missing:
        raise ValueError(f"param_jacobian_fro needs a polyattn.attention.MultiHeadAttention (attributes "
                         f"{needed}); {type(attn).__name__} lacks {missing}")


def attention_weights_from_query_weight(attn: nn.Module, x: Tensor, w_q: Tensor,
                                        key_padding_mask: Optional[Tensor] = None,
                                        causal: bool = False) -> Tensor:
    """The weights ``[B, H, N, N]`` of ``attn`` on input ``x`` as a function of its query block ``w_q``.

    Recomputes exactly what ``MultiHeadAttention.forward`` computes before the values (in
    float32, without dropout), with the key projection held fixed, and calls the activation
    directly so that no ``Attend`` hook fires.
    """
    check_attention_module(attn)
    b, n, dim = x.shape
    h, d = attn.heads, attn.head_dim
    weight, bias = attn.qkv.weight.detach().float(), attn.qkv.bias
    bias = None if bias is None else bias.detach().float()
    q = F.linear(x, w_q, None if bias is None else bias[:dim])
    k = F.linear(x, weight[dim:2 * dim], None if bias is None else bias[dim:2 * dim])
    q = q.reshape(b, n, h, d).transpose(1, 2)
    k = k.reshape(b, n, h, d).transpose(1, 2)
    mask = attention_mask(b, n, n, key_padding_mask, causal, x.device)
    n_rows = visible_counts(mask, n, attn.n_mode, key_padding_mask, x.device)
    scores = (q @ k.transpose(-2, -1)) * (d ** -0.5)
    return attn.attend.activation(scores.float(), mask, n_rows).float()


def _query_weight_and_function(attn, x, key_padding_mask, causal):
    check_attention_module(attn)
    x = x.detach().float()
    dim = x.shape[-1]
    w_q = attn.qkv.weight.detach().float()[:dim].clone()
    if key_padding_mask is not None:
        key_padding_mask = key_padding_mask.detach()

    def weights(wq):
        return attention_weights_from_query_weight(attn, x, wq, key_padding_mask, causal)

    return w_q, weights


def param_jacobian_fro(attn: nn.Module, x: Tensor, n_probes: int = 16,
                       generator: Optional[torch.Generator] = None,
                       key_padding_mask: Optional[Tensor] = None, causal: bool = False,
                       distribution: str = "rademacher") -> dict[str, Tensor]:
    """Hutchinson estimate of ||dA_h/dW_Q,h||_F per head, averaged over the samples of ``x``.

    ``attn`` is a ``MultiHeadAttention`` and ``x`` its input hidden states ``[B, N, dim]``.
    For one sample, J_h = dA_h/dW_Q,h maps the head's query rows (d x dim) to its N x N
    weights.  With v of i.i.d. Rademacher (or standard normal) entries in the output space,
    E ||J^T v||^2 = ||J||_F^2, and J^T v is one vector-Jacobian product
    (``autograd.grad`` of <A, v> with respect to W_Q).  One product serves every head and
    sample at once: A_h depends on W_Q,h only, and the samples' Jacobians add up, so the
    head's rows of the product estimate sum_b ||J_{b,h}||_F^2 (divided by B here).

    Returns float32 CPU tensors ``[H]``: ``fro_sq`` (unbiased mean over the probes),
    ``fro_sq_se`` (standard error of that mean; NaN when ``n_probes == 1``) and ``fro``
    (= sqrt(fro_sq), slightly biased low by the square root).  The probe vectors are drawn on
    the CPU from ``generator`` (a fresh ``torch.Generator`` seeded 0 when None), so the
    same generator state gives the same numbers on every device.
    """
    if n_probes < 1:
        raise ValueError(f"n_probes must be a positive number of probe vectors, got {n_probes}")
    if distribution not in PROBE_DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {PROBE_DISTRIBUTIONS}, got {distribution!r}")
    if generator is None:
        generator = torch.Generator().manual_seed(0)
    w_q, weights = _query_weight_and_function(attn, x, key_padding_mask, causal)
    b = x.shape[0]
    h, d = attn.heads, attn.head_dim
    with torch.enable_grad(), torch.autocast(device_type=w_q.device.type, enabled=False):
        w_q.requires_grad_(True)
        a = weights(w_q)
        per_probe = []
        for i in range(n_probes):
            if distribution == "rademacher":
                v = torch.randint(0, 2, a.shape, generator=generator, dtype=torch.float32) * 2 - 1
            else:
                v = torch.randn(a.shape, generator=generator, dtype=torch.float32)
            (g,) = torch.autograd.grad(a, w_q, grad_outputs=v.to(a.device), retain_graph=i + 1 < n_probes)
            per_probe.append(g.reshape(h, d, -1).pow(2).sum((1, 2)) / b)
    z = torch.stack(per_probe).detach().cpu()              # [K, H]
    fro_sq = z.mean(0)
    se = z.std(0, unbiased=True) / math.sqrt(n_probes) if n_probes > 1 else torch.full_like(fro_sq, float("nan"))
    return {"fro": fro_sq.clamp_min(0).sqrt(), "fro_sq": fro_sq, "fro_sq_se": se}


def param_jacobian_fro_exact(attn: nn.Module, x: Tensor, key_padding_mask: Optional[Tensor] = None,
                             causal: bool = False) -> dict[str, Tensor]:
    """The exact ||dA_h/dW_Q,h||_F per head (mean of the squares over the samples of ``x``).

    Materialises the full Jacobian ``[B, H, N, N, dim, dim]`` with ``torch.func.jacrev``:
    for small sizes and tests only.  Returns float32 CPU tensors ``fro`` and ``fro_sq`` ``[H]``.
    """
    w_q, weights = _query_weight_and_function(attn, x, key_padding_mask, causal)
    b, _, dim = x.shape
    h, d = attn.heads, attn.head_dim
    with torch.enable_grad(), torch.autocast(device_type=w_q.device.type, enabled=False):
        jac = torch.func.jacrev(weights)(w_q)                # [B, H, N, N, dim, dim]
    blocks = jac.reshape(b, h, *jac.shape[2:4], h, d, dim)
    fro_sq = torch.stack([blocks[:, i, :, :, i].pow(2).sum() for i in range(h)]) / b
    fro_sq = fro_sq.detach().float().cpu()
    return {"fro": fro_sq.sqrt(), "fro_sq": fro_sq}
