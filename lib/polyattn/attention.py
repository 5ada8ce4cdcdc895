"""One multi-head attention module; the activation is its only variable.

The weights are computed by a small ``Attend`` submodule (scores, mask, N -> weights),
which is where probes hook in (as vit-pytorch's ``attend``).  When nothing probes it,
the module takes a fast path: ``F.scaled_dot_product_attention`` for softmax, and the
blocked or linear-time kernels of :mod:`polyattn.kernels` for elementwise activations.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from . import activations as _acts
from . import kernels
from .rotary import apply_rope

N_MODES = ("row", "fixed", "padded")
PATHS = ("auto", "naive", "sdpa", "blocked", "linear", "compiled")


def attention_mask(batch: int, n_q: int, n_k: int, key_padding_mask: Optional[torch.Tensor] = None,
                   causal: bool = False, device=None) -> Optional[torch.Tensor]:
    """Boolean mask ``[B, 1, Nq, Nk]`` (True = visible), or None when every key is visible."""
    mask = None
    if key_padding_mask is not None:
        if key_padding_mask.shape != (batch, n_k):
            raise ValueError(f"key_padding_mask must have shape (batch, keys) = {(batch, n_k)}, "
                             f"got {tuple(key_padding_mask.shape)}")
        mask = key_padding_mask.bool()[:, None, None, :]
    if causal:
        # Query i sees keys 0..i + (n_k - n_q) (aligned at the end, as for a KV cache).
        c = torch.ones(n_q, n_k, dtype=torch.bool, device=device).tril(diagonal=n_k - n_q)
        mask = c[None, None] if mask is None else (mask & c)
    if mask is not None:
        mask = mask.expand(batch, 1, n_q, n_k)
    return mask


def visible_counts(mask: Optional[torch.Tensor], n_k: int, n_mode: str = "row",
                   key_padding_mask: Optional[torch.Tensor] = None, device=None) -> torch.Tensor:
    """N per query row, as float32 broadcastable to ``[B, H, Nq, 1]``.

    ``row``: the number of keys that query may see (N = i + 1 for causal query i).
    ``fixed``: the number of non-padding keys, the same for every query of a sequence.
    ``padded``: the padded length ``n_k``, whatever the masks (padding keys still get zero weight).
    """
    if n_mode not in N_MODES:
        raise ValueError(f"n_mode must be one of {N_MODES}, got {n_mode!r}")
    if n_mode == "padded":
        return torch.tensor(float(n_k), device=device)
    if n_mode == "fixed" or mask is None:
        if key_padding_mask is None:
            return torch.tensor(float(n_k), device=device)
        return key_padding_mask.sum(-1).clamp_min(1).float()[:, None, None, None]
    return mask.sum(-1, keepdim=True).clamp_min(1).float()


class Attend(nn.Module):
    """scores -> weights.  The probe point: a recorder sets ``probed`` and hooks ``forward``.

    An activation with a learned scale (``poly_learned:p=P``) gets its factor per head here,
    ``head_scale`` (initialised at 1, a vector, so the optimiser's decay groups leave it
    undecayed); ``heads`` is then required.
    """

    def __init__(self, activation: str, heads: Optional[int] = None):
        super().__init__()
        self.activation = _acts.get(activation)
        self.probed = False
        self.head_scale = None
        if self.activation.learned_scale:
            if not heads or heads < 1:
                raise ValueError(f"activation {self.activation.spec!r} learns a scale per head: give Attend "
                                 f"the number of heads (Attend({self.activation.spec!r}, heads=H))")
            self.head_scale = nn.Parameter(torch.ones(heads))

    def scale_heads(self, t: torch.Tensor) -> torch.Tensor:
        """``t`` ``[B, H, ...]`` times the learned factor of each head (unchanged without one)."""
        if self.head_scale is None:
            return t
        if t.shape[1] != self.head_scale.numel():
            raise ValueError(f"{self.head_scale.numel()} learned head scales for {t.shape[1]} heads")
        return t * self.head_scale.view(1, -1, *([1] * (t.dim() - 2))).to(t.dtype)

    def forward(self, scores, mask=None, n=None):
        return self.scale_heads(self.activation(scores, mask, n))

    def extra_repr(self):
        return f"activation={self.activation.spec!r}"


class MultiHeadAttention(nn.Module):
    def __init__(self, dim: int, heads: int, activation: str = "softmax", qkv_bias: bool = True,
                 attn_drop: float = 0.0, proj_drop: float = 0.0, n_mode: str = "row", path: str = "auto",
                 qk_norm: bool = False, rope: bool = False):
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim ({dim}) must be divisible by heads ({heads})")
        if n_mode not in N_MODES:
            raise ValueError(f"n_mode must be one of {N_MODES}, got {n_mode!r}")
        if path not in PATHS:
            raise ValueError(f"path must be one of {PATHS}, got {path!r}")
        self.heads, self.head_dim = heads, dim // heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)
        self.attend = Attend(activation, heads)
        # QK-norm: a LayerNorm over each head's query and key (Dehghani et al. 2023; Wortsman et al.
        # 2023 use it to stabilise ReLU/N attention): it bounds the scores themselves.
        self.q_norm = nn.LayerNorm(self.head_dim) if qk_norm else None
        self.k_norm = nn.LayerNorm(self.head_dim) if qk_norm else None
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)
        self.n_mode, self.path = n_mode, path
        # Rotary positions on the queries and keys of self-attention (polyattn.rotary): the scores
        # then carry relative positions, and the activation, mask and N are untouched.
        self.rope = rope
        if path == "sdpa" and self.attend.activation.spec != "softmax":
            raise ValueError(f"path='sdpa' computes softmax only; activation is {self.attend.activation.spec!r}")

    @property
    def activation(self) -> _acts.Activation:
        return self.attend.activation

    def forward(self, x, key_padding_mask: Optional[torch.Tensor] = None, causal: bool = False,
                context: Optional[torch.Tensor] = None):
        """``x`` ``[B, N, dim]``.  With ``context`` ``[B, M, dim]`` this is cross-attention: queries
        from ``x``, keys and values from ``context`` (``key_padding_mask`` is then ``[B, M]``)."""
        b, n, _ = x.shape
        if context is None:
            q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        else:
            q, k, v = self._cross_qkv(x, context)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        if self.rope:
            if context is not None:
                raise ValueError("rotary positions are implemented for self-attention only; "
                                 "build the module with rope=False for cross-attention")

            q, k = apply_rope(q), apply_rope(k)
        out = attention(q, k, v, self.attend, key_padding_mask=key_padding_mask, causal=causal,
                        n_mode=self.n_mode, path=self.path,
                        dropout=self.attn_drop.p if self.training else 0.0, drop=self.attn_drop)
        out = out.transpose(1, 2).reshape(b, n, -1)
        return self.proj_drop(self.proj(out))

    def _cross_qkv(self, x, context):
        # The q rows of the fused weight act on x and the k, v rows on context, so a model
        # with cross-attention keeps the same parameter layout (and probes) as self-attention.
        b, n, dim = x.shape
        if context.dim() != 3 or context.shape[0] != b or context.shape[2] != dim:
            raise ValueError(f"context must have shape (batch, keys, dim) = ({b}, M, {dim}), "
                             f"got {tuple(context.shape)}")
        m = context.shape[1]
        w_q, w_kv = self.qkv.weight.split([dim, 2 * dim])
        b_q, b_kv = self.qkv.bias.split([dim, 2 * dim]) if self.qkv.bias is not None else (None, None)
        q = F.linear(x, w_q, b_q).reshape(b, n, self.heads, self.head_dim).transpose(1, 2)
        k, v = F.linear(context, w_kv, b_kv).reshape(b, m, 2, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        return q, k, v


def attention(q, k, v, attend: Attend | str, key_padding_mask=None, causal=False, n_mode="row",
              path="auto", dropout=0.0, drop: Optional[nn.Module] = None):
    """Attention on ``[B, H, N, d]`` tensors with scores q.k/sqrt(d), choosing a path.

    ``naive`` materialises the N x N matrix and goes through ``attend`` (probes see it);
    the other paths are used only when nothing probes ``attend`` and no attention dropout
    is active.
    """
    if isinstance(attend, str):
        attend = Attend(attend, heads=q.shape[1])
    act = attend.activation
    b, _, n_q, d = q.shape
    n_k = k.shape[2]
    fast_ok = not attend.probed and dropout == 0.0
    if fast_ok and path in ("auto", "sdpa") and act.family == "softmax":
        mask = attention_mask(b, n_q, n_k, key_padding_mask, causal, q.device)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        # k * softmax (the norm intervention) weighs the values k times: its output is k times softmax's
        gain = act.params.get("k")
        return out if gain is None else out * float(Fraction(gain))
    if fast_ok and path == "auto" and act.family == "uniform":
        # attention ablated: each query reads the mean of the values it may see, whatever the scores
        # (no score is needed; q and k get the zero gradient the weights' derivative gives them)
        mask = attention_mask(b, n_q, n_k, key_padding_mask, causal, q.device)
        n = visible_counts(mask, n_k, n_mode, key_padding_mask, q.device)
        w = torch.ones(n_q, n_k, dtype=v.dtype, device=v.device) if mask is None else mask.to(v.dtype)
        # a term that is exactly zero keeps q and k in the graph, so they get a zero gradient, not none
        # (as on the other paths; the clamp keeps an infinite entry from making 0 * inf)
        zero = sum((t.flatten()[:1].clamp(-1.0, 1.0) * 0.0).sum() for t in (q, k))
        return (w / n.to(v.dtype)) @ v + zero.to(v.dtype)
    if fast_ok and path == "auto" and act.family in ("poly_cap", "poly_unit"):
        out = _norm_bounded_poly(q, k, v, act, key_padding_mask, causal, n_mode)
        if out is not None:
            return out
    if fast_ok and path != "naive" and (act.elementwise or path in ("linear", "compiled")):
        # A learned factor per head multiplies each head's weights, so it multiplies its output too.
        base = _acts.get(f"poly:p={act.params['p']}") if act.learned_scale else act
        out = kernels.fused_attention(q, k, v, base, key_padding_mask=key_padding_mask, causal=causal,
                                      n_mode=n_mode, path=path)
        if out is not None:
            return attend.scale_heads(out)
    if path in ("blocked", "linear", "compiled") and not fast_ok:
        raise ValueError(f"path={path!r} cannot be used while the attention matrix is probed or dropped out")
    mask = attention_mask(b, n_q, n_k, key_padding_mask, causal, q.device)
    n = visible_counts(mask, n_k, n_mode, key_padding_mask, q.device)
    scores = (q @ k.transpose(-2, -1)) * (d ** -0.5)
    w = attend(scores, mask, n)
    if drop is not None and dropout:
        w = drop(w)
    return w.to(v.dtype) @ v


def _norm_bounded_poly(q, k, v, act, key_padding_mask, causal, n_mode):
    """``poly_cap:p=P`` and ``poly_unit:p=P`` from two fused passes, without the N x N weights: the rows
    of s^P times v, and each row's sum of s^(2P) (its squared norm); a row is then divided by
    max(1, its norm / sqrt(N)) (cap, after the 1/sqrt(N)) or by its norm (unit).  None without a fast
    path (the naive path then computes the same weights)."""

    p = int(Fraction(act.params["p"]))
    opts = dict(key_padding_mask=key_padding_mask, causal=causal, n_mode=n_mode)
    raw = kernels.fused_attention(q, k, v, _acts.get(f"poly:p={p},c=1"), **opts)
    sq = kernels.fused_attention(q, k, v.new_ones(*v.shape[:3], 1), _acts.get(f"poly:p={2 * p},c=1"), **opts)
    if raw is None or sq is None:
        return None
    if act.family == "poly_unit":
        # the floor keeps a row of zero scores at zero weights with a finite gradient
        return raw / sq.clamp_min(1e-30).sqrt()
    b, _, n_q, _ = q.shape
    mask = attention_mask(b, n_q, k.shape[2], key_padding_mask, causal, q.device)
    n = visible_counts(mask, k.shape[2], n_mode, key_padding_mask, q.device).to(raw.dtype)
    # v = s^P / sqrt(N) has squared norm sum(s^2P) / N; max(1, ||v||) = sqrt(max(1, ||v||^2))
    return raw / n.sqrt() / (sq / n).clamp_min(1.0).sqrt()
