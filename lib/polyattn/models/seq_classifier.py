"""Sequence classifiers for Long Range Arena, built from the shared blocks.

The standard transformer of the Nyströmformer LRA harness: token embedding plus learned
positions, pre-LN blocks with key-padding masks, a final LayerNorm, mean pooling over the
real tokens, then Linear(dim, 2 dim)-ReLU-Linear(classes).  The retrieval task encodes two
documents with the same encoder and classifies [x0, x1, x0*x1, x0 - x1] (LRA's dual head).

One deviation from that harness, on purpose: it builds the mask as ``tokens != 0``, so black
pixels of the image tasks count as padding there; here the mask comes with the batch and a
black pixel is a token.  Its pooling averages over every position of the masked outputs; here
it averages over the real tokens.
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import nn

from .blocks import Encoder, decay_groups, init_weights

#: Named sizes; ``nystromformer`` is that harness's configuration for every LRA task.
SEQ_SIZES = {
    "nystromformer": dict(dim=64, depth=2, heads=2, mlp_ratio=2.0, dropout=0.1),
    "tiny": dict(dim=32, depth=2, heads=2, mlp_ratio=2.0, dropout=0.0),
}


class SequenceEncoder(nn.Module):
    def __init__(self, vocab_size: int, max_len: int, dim: int, depth: int, heads: int, mlp_ratio: float,
                 dropout: float, activation: str, n_mode: str = "row"):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.pos_embed = nn.Parameter(torch.zeros(1, max_len, dim))
        self.drop = nn.Dropout(dropout)
        self.blocks = Encoder(dim, depth, heads, activation, mlp_ratio, n_mode=n_mode, dropout=dropout)
        self.norm = nn.LayerNorm(dim)
        nn.init.normal_(self.pos_embed, std=0.02)

    def forward(self, tokens, key_padding_mask: Optional[torch.Tensor] = None):
        n = tokens.shape[1]
        if n > self.pos_embed.shape[1]:
            raise ValueError(f"sequence of {n} tokens exceeds the model's max_len {self.pos_embed.shape[1]}")
        x = self.drop(self.embed(tokens) + self.pos_embed[:, :n])
        x = self.norm(self.blocks(x, key_padding_mask=key_padding_mask))
        if key_padding_mask is None:
            return x.mean(1)
        w = key_padding_mask.to(x.dtype)[..., None]
        return (x * w).sum(1) / w.sum(1).clamp_min(1)


class SequenceClassifier(nn.Module):
    """One sequence in, class logits out; ``pair=True``: two sequences, LRA's dual head."""

    def __init__(self, vocab_size: int, max_len: int, num_classes: int, activation: str = "softmax",
                 size: str = "nystromformer", pair: bool = False, n_mode: str = "row"):
        super().__init__()
        if size not in SEQ_SIZES:
            raise ValueError(f"unknown sequence-model size {size!r}; choose one of {sorted(SEQ_SIZES)}")
        s = SEQ_SIZES[size]
        self.pair = pair
        self.encoder = SequenceEncoder(vocab_size, max_len, s["dim"], s["depth"], s["heads"], s["mlp_ratio"],
                                       s["dropout"], activation, n_mode)
        feat = s["dim"] * (4 if pair else 1)
        self.head = nn.Sequential(nn.Linear(feat, 2 * s["dim"]), nn.ReLU(), nn.Linear(2 * s["dim"], num_classes))
        self.apply(init_weights)

    def decay_groups(self):
        return decay_groups(self, no_decay=("pos_embed", "embed"))

    def forward(self, tokens, key_padding_mask=None):
        if not self.pair:
            return self.head(self.encoder(tokens, key_padding_mask))
        (t0, t1), (m0, m1) = tokens, key_padding_mask if key_padding_mask is not None else (None, None)
        x0, x1 = self.encoder(t0, m0), self.encoder(t1, m1)
        return self.head(torch.cat([x0, x1, x0 * x1, x0 - x1], dim=-1))


class PixelCNN(nn.Module):
    """A reference without attention for the image tasks: the pixel tokens laid back on their
    square grid (intensity / 255 as one channel), four 3 x 3 convolutions of width ``width``
    (the last two dilated by 2 and 4, so the receptive field spans 17 pixels), global max
    pooling and a linear head.  It answers whether a task's labels can be learned from its
    images at a budget, independently of attention; every token must be real."""

    def __init__(self, seq_len: int, num_classes: int, width: int = 32):
        super().__init__()
        side = int(round(seq_len ** 0.5))
        if side * side != seq_len:
            raise ValueError(f"PixelCNN needs a square image: {seq_len} tokens is not a square number")
        self.side = side
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=2, dilation=2), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=4, dilation=4), nn.ReLU(),
            nn.AdaptiveMaxPool2d(1), nn.Flatten())
        self.head = nn.Linear(width, num_classes)

    def decay_groups(self):
        return decay_groups(self)

    def forward(self, tokens, key_padding_mask=None):
        if isinstance(tokens, (tuple, list)):
            raise ValueError("PixelCNN classifies single images; paired tasks (retrieval) need the sequence model")
        if tokens.shape[1] != self.side * self.side:
            raise ValueError(f"PixelCNN expected {self.side * self.side} pixel tokens, got {tokens.shape[1]}")
        if key_padding_mask is not None and not bool(key_padding_mask.all()):
            raise ValueError("PixelCNN needs every token real; this batch has padding")
        x = tokens.float().div(255.0).view(-1, 1, self.side, self.side)
        return self.head(self.features(x))
