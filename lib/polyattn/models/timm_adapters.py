"""timm's attention modules with a polyattn activation in place of softmax.

``adapt(model, activation)`` changes, in place, every attention module of a timm model that
it knows into one that computes its weights with ``activation`` through a
:class:`polyattn.attention.Attend` submodule (``module.attend``), so that
:func:`polyattn.probes.capture`, the :class:`~polyattn.probes.Recorder` and
:func:`~polyattn.probes.record_attention_maps` see the weights of timm models as they see
those of the book's own ViT::

    net = timm.create_model("swin_tiny_patch4_window7_224", pretrained=False)
    adapt(net, "poly:p=3")                   # every WindowAttention now computes x^3 / sqrt(N)

Each module keeps its class's parameters, buffers and methods (the adapted class is a
subclass of timm's, and :class:`Attend` holds no parameters), so a state dict moves freely
between an adapted model and an unmodified one.  With ``"softmax"`` an adapted model computes
what timm computes, to float rounding.  While nothing probes a module, softmax runs through
``F.scaled_dot_product_attention`` (and an elementwise activation in ViT/DeiT through the
kernels of :mod:`polyattn.kernels`); a probed module materialises its weights.

What N (the paper's sequence length, in x^p / sqrt(N)) is, per module:

``Attention`` (timm.layers; ViT, DeiT, their distilled variants)
    The keys a query sees: every token, prefix tokens (CLS, distillation, registers)
    included, e.g. 197 for ViT-S/16 at 224 px.  With the causal flag, ``n_mode`` decides as
    in :func:`polyattn.attention.attention` ("row": the keys that row sees); with an
    ``attn_mask``, "row" counts the keys each row sees and "fixed"/"padded" every key.  A
    boolean ``attn_mask`` is a visibility mask (True = visible); a float one is additive, its
    -inf entries hide keys and its finite entries are added to the scores.
``WindowAttention`` (Swin)
    The window's token count, e.g. 49 for 7x7 windows.  The relative position bias is added
    to the scores before the activation.  Swin's shift mask (0 within a region of the rolled
    map, -100 across regions) becomes a boolean visibility mask: keys of another region get
    exactly zero weight.  Under it, ``n_mode="row"`` (default) counts the keys each query
    sees (the size of its region within the window); ``"fixed"`` and ``"padded"`` keep the
    window's token count for every row.  Tokens that pad a map to a multiple of the window
    are visible keys, as in timm.
``XCA`` (XCiT's cross-covariance attention)
    Attention across channels: per head a d_h x d_h matrix of L2-normalised q, k (normalised
    over the tokens) times a learned temperature.  ``n_rule="channels"`` (default): N = d_h,
    the length of the matrix's rows (48 for XCiT-S12); ``n_rule="tokens"``: N = the number of
    patch tokens the covariances sum over (196 for XCiT-S12/16 at 224 px).  The paper's fixed
    constant is a spec with ``c`` (``"poly:p=3,c=1/14"``), where N plays no part.
``ClassAttn`` (the class-attention layers of XCiT and CaiT)
    The CLS query against every token, CLS included (N = tokens + 1); adapted unless
    ``class_attention=False``.

Not supported: the parameter-Jacobian probe (``param_jac_fro``) needs polyattn's own
:class:`~polyattn.attention.MultiHeadAttention`, and other timm attention classes
(subclasses included) are left alone.
"""
from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from ..attention import N_MODES, Attend, attention

try:
    from timm.layers import Attention as _TimmAttention
    from timm.models.cait import ClassAttn as _TimmClassAttn
    from timm.models.swin_transformer import WindowAttention as _TimmWindowAttention
    from timm.models.xcit import XCA as _TimmXCA
except ImportError as exc:  # pragma: no cover - exercised only without timm
    raise ImportError("polyattn.models.timm_adapters needs timm (pip install timm==1.0.29, "
                      "as pinned in requirements.txt)") from exc

N_RULES = ("channels", "tokens")

__all__ = ["N_RULES", "PolyAttention", "PolyClassAttn", "PolyWindowAttention", "PolyXCA", "adapt",
           "adapted_modules"]


def _dropout(module: nn.Module) -> float:
    return module.attn_drop.p if module.training else 0.0


def _softmax_fast(attend: Attend, p: float) -> bool:
    return not attend.probed and p == 0.0 and attend.activation.spec == "softmax"


def _weighted(scores, v, module, visible: Optional[torch.Tensor], n) -> torch.Tensor:
    """Weights from ``scores`` through ``module.attend`` (attention dropout after), times ``v``."""
    w = module.attend(scores, visible, n)
    if _dropout(module):
        w = module.attn_drop(w)
    return w.to(v.dtype) @ v


def _row_counts(visible: Optional[torch.Tensor], n_k: int, n_mode: str, device) -> torch.Tensor:
    """N per row: the keys each row sees (``row``) or every key of the window (``fixed``, ``padded``)."""
    if visible is None or n_mode != "row":
        return torch.tensor(float(n_k), device=device)
    return visible.sum(-1, keepdim=True).clamp_min(1).float()


class PolyAttention(_TimmAttention):
    """timm's ViT/DeiT ``Attention`` with its weights computed by ``self.attend``."""

    def forward(self, x, attn_mask: Optional[torch.Tensor] = None, is_causal: bool = False):
        b, n, _ = x.shape
        gate = self.gate(x).sigmoid() if self.gate is not None else None
        q, k, v = self.qkv(x).reshape(b, n, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
        q, k = self.q_norm(q), self.k_norm(k)
        p = _dropout(self)
        if attn_mask is None:
            x = attention(q, k, v, self.attend, causal=is_causal, n_mode=self.n_mode, dropout=p, drop=self.attn_drop)
        else:
            bias, visible = _split_mask(attn_mask)
            if is_causal:
                visible = visible & torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
            if _softmax_fast(self.attend, p):
                x = F.scaled_dot_product_attention(q, k, v, attn_mask=_additive(bias, visible, q.dtype))
            else:
                scores = (q * self.scale) @ k.transpose(-2, -1)
                if bias is not None:
                    scores = scores + bias
                x = _weighted(scores, v, self, visible, _row_counts(visible, n, self.n_mode, x.device))
        x = self.norm(x.transpose(1, 2).reshape(b, n, self.attn_dim))
        if gate is not None:
            x = x * gate
        return self.proj_drop(self.proj(x))


def _split_mask(attn_mask: torch.Tensor) -> tuple[Optional[torch.Tensor], torch.Tensor]:
    """(additive bias or None, boolean visibility) of a timm attention mask."""
    if attn_mask.dtype == torch.bool:
        return None, attn_mask
    visible = attn_mask > float("-inf")
    return torch.where(visible, attn_mask, torch.zeros((), dtype=attn_mask.dtype, device=attn_mask.device)), visible


def _additive(bias: Optional[torch.Tensor], visible: Optional[torch.Tensor], dtype) -> Optional[torch.Tensor]:
    """One float mask for SDPA: the bias, and -inf where a key is hidden (exactly zero weight)."""
    if visible is None:
        return None if bias is None else bias.to(dtype)
    hide = torch.zeros(visible.shape, dtype=dtype, device=visible.device).masked_fill(~visible, float("-inf"))
    return hide if bias is None else bias.to(dtype) + hide


class PolyWindowAttention(_TimmWindowAttention):
    """Swin's ``WindowAttention``: relative position bias added to the scores, the shift mask
    applied as a visibility mask, weights computed by ``self.attend``."""

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        b_, n, _ = x.shape
        q, k, v = self.qkv(x).reshape(b_, n, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4).unbind(0)
        bias = self._get_rel_pos_bias()                                    # [1, H, N, N]
        visible = None if mask is None else window_visibility(mask, b_)    # [B_, 1, N, N]
        p = _dropout(self)
        if _softmax_fast(self.attend, p):
            x = F.scaled_dot_product_attention(q, k, v, attn_mask=_additive(bias, visible, q.dtype))
        else:
            scores = (q * self.scale) @ k.transpose(-2, -1) + bias
            x = _weighted(scores, v, self, visible, _row_counts(visible, n, self.n_mode, x.device))
        x = x.transpose(1, 2).reshape(b_, n, -1)
        return self.proj_drop(self.proj(x))


def window_visibility(shift_mask: torch.Tensor, batch_windows: int) -> torch.Tensor:
    """Swin's additive shift mask ``[nW, N, N]`` (0 = same region, nonzero = another region) as
    a boolean mask ``[B * nW, 1, N, N]`` in the order of timm's window batch (window index fastest)."""
    n_win, n, _ = shift_mask.shape
    visible = shift_mask == 0
    return visible[None].expand(batch_windows // n_win, n_win, n, n).reshape(batch_windows, 1, n, n)


class PolyXCA(_TimmXCA):
    """XCiT's cross-covariance attention (a d_h x d_h matrix per head) with its weights computed
    by ``self.attend``; N is d_h (``n_rule="channels"``) or the token count (``"tokens"``)."""

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.num_heads, c // self.num_heads).permute(2, 0, 3, 4, 1).unbind(0)
        q = F.normalize(q, dim=-1)                                         # [B, H, d_h, N]
        k = F.normalize(k, dim=-1)
        p = _dropout(self)
        if _softmax_fast(self.attend, p):
            x = F.scaled_dot_product_attention(q * self.temperature, k, v, scale=1.0)
        else:
            scores = (q @ k.transpose(-2, -1)) * self.temperature           # [B, H, d_h, d_h]
            big_n = q.shape[-2] if self.n_rule == "channels" else n
            x = _weighted(scores, v, self, None, torch.tensor(float(big_n), device=x.device))
        x = x.permute(0, 3, 1, 2).reshape(b, n, c)
        return self.proj_drop(self.proj(x))


class PolyClassAttn(_TimmClassAttn):
    """CaiT's class attention (the CLS query against every token) with ``self.attend``."""

    def forward(self, x):
        b, n, c = x.shape
        h = self.num_heads
        q = self.q(x[:, 0]).unsqueeze(1).reshape(b, 1, h, c // h).permute(0, 2, 1, 3)
        k = self.k(x).reshape(b, n, h, c // h).permute(0, 2, 1, 3)
        v = self.v(x).reshape(b, n, h, c // h).permute(0, 2, 1, 3)
        x_cls = attention(q, k, v, self.attend, n_mode=self.n_mode, dropout=_dropout(self), drop=self.attn_drop)
        x_cls = x_cls.transpose(1, 2).reshape(b, 1, c)
        return self.proj_drop(self.proj(x_cls))


#: timm's class -> the adapted class (exact types: subclasses of timm's may compute otherwise).
_ADAPTED = {
    _TimmAttention: PolyAttention,
    _TimmWindowAttention: PolyWindowAttention,
    _TimmXCA: PolyXCA,
    _TimmClassAttn: PolyClassAttn,
}


def adapted_modules(model: nn.Module) -> list[nn.Module]:
    """The adapted attention modules of ``model``, in ``model.modules()`` order."""
    return [m for m in model.modules() if type(m) in _ADAPTED.values()]


def adapt(model: nn.Module, activation: str = "softmax", n_mode: str = "row", n_rule: Optional[str] = None,
          class_attention: bool = True) -> nn.Module:
    """Make every known attention module of the timm ``model`` compute its weights with
    ``activation`` (a spec string of :mod:`polyattn.activations`), in place; returns ``model``.

    ``n_mode``: N under a mask ("row", "fixed" or "padded"; see the module docstring).
    ``n_rule``: XCiT's N, "channels" (default) or "tokens"; an error for a model without XCA.
    ``class_attention``: also adapt XCiT's/CaiT's class-attention layers.  A module adapted
    before gets the new activation and settings.
    """
    if n_mode not in N_MODES:
        raise ValueError(f"n_mode must be one of {N_MODES}, got {n_mode!r}")
    if n_rule is not None and n_rule not in N_RULES:
        raise ValueError(f"n_rule must be one of {N_RULES} (XCiT's N), got {n_rule!r}")
    reverse = {v: k for k, v in _ADAPTED.items()}
    found = []
    for m in model.modules():
        base = reverse.get(type(m), type(m))
        if base not in _ADAPTED or (base is _TimmClassAttn and not class_attention):
            continue
        m.__class__ = _ADAPTED[base]
        m.attend = Attend(activation, heads=getattr(m, "num_heads", None))
        m.n_mode = n_mode
        if base is _TimmXCA:
            m.n_rule = n_rule or "channels"
        found.append(m)
    if not found:
        raise ValueError(f"{type(model).__name__} has no attention module that polyattn can adapt "
                         f"(known: {', '.join(c.__name__ for c in _ADAPTED)})")
    if n_rule is not None and not any(isinstance(m, PolyXCA) for m in found):
        raise ValueError(f"n_rule={n_rule!r} chooses XCiT's N, but {type(model).__name__} has no XCA module")
    return model
