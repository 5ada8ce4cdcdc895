"""A small GPT-style character language model from the shared blocks, with the causal mask.

Token embeddings have unit scale and positions are sinusoidal (defined at any length), so the model can be evaluated at 2x and
4x its training context, where the two readings of N in x^p/sqrt(N) (the row's own length,
or the fixed context) differ most.  ``positions="none"`` drops them (NoPE: the causal mask
alone tells a query how far into the sequence it is), the setting in which a causal model's
loss can stay flat beyond its training length; ``positions="rope"`` rotates every layer's queries and
keys instead (:mod:`polyattn.rotary`), so the scores see relative positions.  The model computes its own loss (as nanoGPT's does)
when given targets, and declares its weight-decay groups.

``tie_embeddings=True`` shares the output head's weight with the token embedding (as the
Zoology benchmark's language model does; the associative-recall task uses it): the logits are
then the final features' dot products with the token embeddings, times dim^-1/2 so that they
start at unit scale (the embeddings have unit scale, not GPT-2's 0.02).  Off by default.
"""
from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from .blocks import Encoder, decay_groups, init_weights

#: Position encodings: absolute sinusoidal, none (NoPE), or rotary (RoPE on every layer's queries
#: and keys, :mod:`polyattn.rotary`: relative positions, the same for every activation).
POSITIONS = ("sinusoidal", "none", "rope")

LM_SIZES = {
    "micro": dict(dim=64, depth=2, heads=4),
    "small": dict(dim=128, depth=4, heads=4),
    # the Zoology benchmark's attention baseline for associative recall: two layers, one head
    "recall": dict(dim=64, depth=2, heads=1),
}


def sinusoidal_positions(n: int, dim: int, device=None) -> torch.Tensor:
    pos = torch.arange(n, dtype=torch.float32, device=device)[:, None]
    i = torch.arange(0, dim, 2, dtype=torch.float32, device=device)
    angle = pos / torch.pow(10000.0, i / dim)
    out = torch.zeros(n, dim, device=device)
    out[:, 0::2] = torch.sin(angle)
    out[:, 1::2] = torch.cos(angle[:, : dim // 2])
    return out


class CharLM(nn.Module):
    def __init__(self, vocab_size: int, activation: str = "softmax", size: str = "micro", n_mode: str = "row",
                 context: Optional[int] = None, tie_embeddings: bool = False, positions: str = "sinusoidal"):
        super().__init__()
        if size not in LM_SIZES:
            raise ValueError(f"unknown language-model size {size!r}; choose one of {sorted(LM_SIZES)}")
        if positions not in POSITIONS:
            raise ValueError(f"unknown position encoding {positions!r}; choose one of {POSITIONS}")
        self.positions = positions
        s = LM_SIZES[size]
        self.dim, self.context = s["dim"], context
        self.embed = nn.Embedding(vocab_size, s["dim"])
        self.blocks = Encoder(s["dim"], s["depth"], s["heads"], activation, n_mode=n_mode, rope=positions == "rope")
        self.norm = nn.LayerNorm(s["dim"])
        self.head = nn.Linear(s["dim"], vocab_size, bias=False)
        self.apply(init_weights)
        self.logit_scale = 1.0
        if tie_embeddings:
            self.head.weight = self.embed.weight
            self.logit_scale = s["dim"] ** -0.5

    def decay_groups(self):
        return decay_groups(self, no_decay=("embed",))

    def forward(self, tokens, targets: Optional[torch.Tensor] = None):
        """Logits ``[B, T, V]``; with ``targets`` also the mean cross-entropy in nats (ignore index -100)."""
        t = tokens.shape[1]
        x = self.embed(tokens)
        if self.positions == "sinusoidal":
            x = x + sinusoidal_positions(t, self.dim, tokens.device)
        logits = self.head(self.norm(self.blocks(x, causal=True)))
        if self.logit_scale != 1.0:
            logits = logits * self.logit_scale
        if targets is None:
            return logits
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)
        return logits, loss

    @torch.no_grad()
    def generate(self, prompt: torch.Tensor, new_tokens: int, temperature: float = 1.0, top_k: Optional[int] = None,
                 generator: Optional[torch.Generator] = None, window: Optional[int] = None) -> torch.Tensor:
        """Sample ``new_tokens`` continuations of ``prompt`` ``[B, T]`` (the last ``window`` tokens condition)."""
        window = window or self.context
        out = prompt
        for _ in range(new_tokens):
            ctx = out if window is None else out[:, -window:]
            logits = self(ctx)[:, -1].float() / max(temperature, 1e-6)
            if top_k is not None:
                kth = logits.topk(min(top_k, logits.shape[-1]), dim=-1).values[:, -1:]
                logits = logits.masked_fill(logits < kth, float("-inf"))
            nxt = torch.multinomial(torch.softmax(logits, -1), 1, generator=generator)
            out = torch.cat([out, nxt], dim=1)
        return out
