"""PINNsFormer (Zhao, Ding & Prakash, ICLR 2024) with the attention activation as its variable.

    model = build_pinnsformer("paper", activation="poly:p=3")
    u = model(x, t)                       # x, t: [M, 1] -> u: [M, 1]

As published (AdityaLab/pinnsformer, ``model/pinnsformer.py`` and ``util.make_time_sequence``):

* a pseudo-sequence of k = 5 tokens (x, t + i dt), i = 0..k-1, dt = 1e-4;
* a spatio-temporal mixer Linear(2, d_model) applied to each token;
* one encoder layer (self-attention) and one decoder layer whose attention queries come
  from the decoder input (the mixed tokens again) and whose keys and values are the
  encoder output; each layer is pre-activation, with residual connections:
  ``x + attn(act1(x))`` then ``x + ff(act2(x))``; encoder and decoder each end with an
  activation;
* the "Wavelet" activation w1 sin(x) + w2 cos(x) with learnable scalars w1 = w2 = 1 at
  start, used everywhere (no LayerNorm);
* feed-forward d_model -> d_ff -> d_ff -> d_model and output MLP d_model -> d_hidden ->
  d_hidden -> 1, with Wavelet activations between the linear maps;
* Xavier-uniform weights and bias 0.01 for every Linear, except the attention's input
  projection, which keeps ``nn.MultiheadAttention``'s own start (Xavier over the stacked
  q, k, v weight, zero bias) because the published initialiser only visits ``nn.Linear``.

The ``paper`` size (d_model 32, 2 heads, d_ff 256, d_hidden 512) has 453,561 parameters,
the count the published notebooks print.

Prediction: the output at the first token, u(x, t) = out_0.  ``forward`` is that function
of (x, t), so autograd derivatives of ``forward`` are the true derivatives of the
prediction.  The published training loss instead evaluates all k tokens
(``forward_tokens`` on a pseudo-sequence given as input; see
``polyattn.physics.pde_loss(..., sequence=True)``).
"""
from __future__ import annotations

import torch
from torch import nn

from ..attention import MultiHeadAttention
from .pinn import xavier_linears

#: Named widths.  ``paper`` is the published model; ``small`` keeps its attention and
#: narrows the MLPs (an output MLP of width 128 is reported to reproduce convection),
#: ``micro`` is for tests.
PINNSFORMER_SIZES = {
    "paper": dict(d_model=32, heads=2, d_ff=256, d_hidden=512),
    "small": dict(d_model=32, heads=2, d_ff=64, d_hidden=128),
    "micro": dict(d_model=8, heads=2, d_ff=16, d_hidden=16),
}
#: The published pseudo-sequence: k tokens dt apart in time.
SEQ_LEN = 5
SEQ_DT = 1e-4


class Wavelet(nn.Module):
    """w1 sin(x) + w2 cos(x), with learnable scalars w1, w2 (both 1 at start)."""

    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.ones(1))
        self.w2 = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return self.w1 * torch.sin(x) + self.w2 * torch.cos(x)


def _mlp(d_in: int, d_hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, d_hidden), Wavelet(), nn.Linear(d_hidden, d_hidden), Wavelet(),
                         nn.Linear(d_hidden, d_out))


class PINNsFormerLayer(nn.Module):
    """One encoder layer (``memory=None``) or decoder layer (attending to ``memory``)."""

    def __init__(self, d_model: int, heads: int, d_ff: int, activation: str):
        super().__init__()
        self.act1 = Wavelet()
        # path="naive": a PDE loss differentiates the model twice and the fused kernels'
        # hand-written backward passes are not differentiable again; with k = 5 tokens the
        # naive 5 x 5 path is also the cheapest.
        self.attn = MultiHeadAttention(d_model, heads, activation, path="naive")
        self.act2 = Wavelet()
        self.ff = _mlp(d_model, d_ff, d_model)

    def forward(self, x, memory=None):
        x = x + self.attn(self.act1(x), context=memory)
        return x + self.ff(self.act2(x))


class PINNsFormer(nn.Module):
    def __init__(self, d_model: int = 32, heads: int = 2, d_ff: int = 256, d_hidden: int = 512,
                 activation: str = "softmax", seq_len: int = SEQ_LEN, dt: float = SEQ_DT, depth: int = 1,
                 d_out: int = 1):
        super().__init__()
        if seq_len < 1 or depth < 1:
            raise ValueError(f"seq_len and depth must be >= 1, got seq_len={seq_len}, depth={depth}")
        self.seq_len, self.dt = int(seq_len), float(dt)
        self.register_buffer("offsets", torch.arange(self.seq_len, dtype=torch.float32) * self.dt, persistent=False)
        self.embed = nn.Linear(2, d_model)
        self.encoder = nn.ModuleList(PINNsFormerLayer(d_model, heads, d_ff, activation) for _ in range(depth))
        self.encoder_act = Wavelet()
        self.decoder = nn.ModuleList(PINNsFormerLayer(d_model, heads, d_ff, activation) for _ in range(depth))
        self.decoder_act = Wavelet()
        self.head = _mlp(d_model, d_hidden, d_out)
        self.reset_parameters()

    def reset_parameters(self):
        xavier_linears(self)
        for m in self.modules():
            if isinstance(m, MultiHeadAttention):
                nn.init.zeros_(m.qkv.bias)
            elif isinstance(m, Wavelet):
                nn.init.ones_(m.w1)
                nn.init.ones_(m.w2)

    @property
    def activation(self) -> str:
        return self.encoder[0].attn.activation.spec

    def pseudo_sequence(self, x, t):
        """``[M, 1]`` x and t -> the k tokens ``[M, k, 2]``: (x, t + i dt), i = 0..k-1."""
        _check_points(x, t)
        k = self.seq_len
        ts = t.unsqueeze(1) + self.offsets.to(t.dtype).view(1, k, 1)
        return torch.cat([x.unsqueeze(1).expand(-1, k, -1), ts], dim=-1)

    def _decoded(self, tokens):
        src = self.embed(tokens)
        mem = src
        for layer in self.encoder:
            mem = layer(mem)
        mem = self.encoder_act(mem)
        out = src
        for layer in self.decoder:
            out = layer(out, mem)
        return self.decoder_act(out)

    def forward_tokens(self, xs, ts):
        """The output at every token, ``[M, k, 1]``, for given tokens ``xs``, ``ts`` ``[M, k, 1]``."""
        if xs.dim() != 3 or xs.shape != ts.shape or xs.shape[-1] != 1:
            raise ValueError(f"xs and ts must both be [M, k, 1], got {tuple(xs.shape)} and {tuple(ts.shape)}")
        return self.head(self._decoded(torch.cat([xs, ts], dim=-1)))

    def forward(self, x, t):
        # Only the first token's output is the prediction, so the output MLP (the widest
        # part) runs on that token alone; the decoder still runs on all k tokens, as published.
        return self.head(self._decoded(self.pseudo_sequence(x, t))[:, 0])


def _check_points(x, t):
    if x.dim() != 2 or x.shape[1] != 1 or x.shape != t.shape:
        raise ValueError(f"x and t must both be [M, 1], got {tuple(x.shape)} and {tuple(t.shape)}")


def build_pinnsformer(size: str = "paper", activation: str = "softmax", **overrides) -> PINNsFormer:
    """A PINNsFormer of a named size; ``overrides`` change any constructor argument."""
    if size not in PINNSFORMER_SIZES:
        raise ValueError(f"unknown PINNsFormer size {size!r}; choose one of: {', '.join(PINNSFORMER_SIZES)}")
    return PINNsFormer(**{**PINNSFORMER_SIZES[size], "activation": activation, **overrides})


__all__ = ["PINNSFORMER_SIZES", "PINNsFormer", "PINNsFormerLayer", "SEQ_DT", "SEQ_LEN", "Wavelet",
           "build_pinnsformer"]
