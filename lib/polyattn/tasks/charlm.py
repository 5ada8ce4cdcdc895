"""Character-level causal language modelling (bits per character, lower is better).

Corpus: the King James Bible from Debian's ``bible-kjv`` (``dataset="bible_kjv"``), split by
book so that validation and test text is unseen (:mod:`polyattn.data.charlm`), or a small
generated text (``dataset="synthetic"``) for tests.  Model: :class:`polyattn.models.char_lm.CharLM`
with the causal mask.  Options (``config.options``):

    context          training window in characters (default 128)
    windows          random training windows per epoch (default 200 batches' worth)
    eval_windows     windows per evaluation and length (default 64)
    eval_multiples   lengths evaluated, as multiples of the context (default (1, 2, 4))
    sample_chars     characters generated from the fixed prompt at the end (default 200)
    positions        ``sinusoidal`` (default), ``none`` (NoPE) or ``rope`` (rotary), see :class:`CharLM`

At the end of training the record also holds (under ``final``) generated samples from a
fixed prompt with fixed sampling settings, the test loss binned by position in the window
(``position_bpc``: bits per character of the predictions made at positions i in [lo, hi), bins
by powers of two, on the windows of ``test_bpc``; the query at position i sees N = i + 1 keys),
the attention-sink measurements of
:mod:`polyattn.sinks` on test windows of 64 characters, and the first layer's weights on
the first of those windows (every head, its leading ``MAP_TOKENS`` queries and keys, four
significant digits), so that a figure can show them without retraining.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..data.bible import books
from ..data.charlm import build_corpus, eval_windows, random_windows
from ..presets import generator
from ..probes import record_attention_maps
from ..sinks import SINK_WINDOW, sink_report
from ..task_declarations import CHARLM_DEFAULTS as DEFAULTS
from ..task_declarations import charlm_metrics, charlm_option, charlm_seq_lens
from .base import Batch

#: The options a config may set (the prompt and sampling settings are fixed, the same for every run).
OPTIONS = ("context", "windows", "eval_windows", "eval_multiples", "sample_chars", "positions")
CORPORA = ("bible_kjv", "synthetic")
#: Test windows (of :data:`polyattn.sinks.SINK_WINDOW` characters) the sinks are measured on.
SINK_WINDOWS = 16


def position_edges(n: int) -> list[int]:
    """Bin edges over positions 0..n-1 by powers of two: [0, 1, 2, 4, ..., n] (the last bin ends at n)."""
    if n < 1:
        raise ValueError(f"a window has at least one position, got {n}")
    edges, e = [0], 1
    while e < n:
        edges.append(e)
        e *= 2
    return edges + [n]


#: Queries and keys of the stored first-layer map (a 32 x 32 block per head keeps a record small).
MAP_TOKENS = 32


_opt = charlm_option


def synthetic_books(n_books: int = 12, words: int = 3000, seed: int = 0) -> dict:
    """A small deterministic corpus with learnable structure (for tests and smoke runs)."""
    g = generator(seed, "synthetic_books")
    vocab = ["and", "the", "of", "lord", "said", "unto", "him", "them", "land", "king", "day", "people"]
    books = {}
    for b in range(n_books):
        idx = torch.randint(0, len(vocab), (words,), generator=g).tolist()
        books[f"Book {b + 1}"] = " ".join(vocab[i] for i in idx) + "."
    return books


class CharLanguageModel:
    name = "charlm"

    def metrics(self, config):
        return charlm_metrics(config)

    def seq_lens(self, config):
        return charlm_seq_lens(config)

    def load(self, config, world, rank):
        unknown = sorted(set(config.options) - set(OPTIONS))
        if unknown:
            raise ValueError(f"unknown charlm option(s) {unknown}; the task reads {sorted(OPTIONS)}")
        from ..models.char_lm import POSITIONS

        if _opt(config, "positions") not in POSITIONS:
            raise ValueError(f"charlm option 'positions' must be one of {POSITIONS}, got {_opt(config, 'positions')!r}")
        if config.dataset == "bible_kjv":
            return build_corpus(books())
        if config.dataset == "synthetic":
            return build_corpus(synthetic_books())
        raise ValueError(f"the charlm task reads dataset one of {CORPORA}, got {config.dataset!r}")

    def build_model(self, config, data):
        from ..models.char_lm import CharLM

        return CharLM(len(data.vocab), config.activation, config.model, config.n_mode, _opt(config, "context"),
                      positions=_opt(config, "positions"))

    def steps_per_epoch(self, config, data):
        return max(1, _opt(config, "windows") // config.batch_size)

    def batches(self, config, data, epoch, world, rank, state=None):
        g = generator(config.seed, "charlm_batches", epoch)
        stream = data.stream("train")
        shard = config.batch_size // world
        for _ in range(self.steps_per_epoch(config, data)):
            x, y = random_windows(stream, _opt(config, "context"), config.batch_size, g)
            x, y = x[rank * shard:(rank + 1) * shard], y[rank * shard:(rank + 1) * shard]
            yield Batch(x, y, causal=True, size=len(x))

    def loss(self, model, batch, config):
        _, loss = model(batch.inputs, batch.target)
        return loss, {"train_bpc": loss.item() / math.log(2) * batch.size}

    @torch.no_grad()
    def _bpc(self, model, stream, context, multiple, max_windows, device):
        x, y = eval_windows(stream, context, multiple, max_windows)
        total, count = 0.0, 0
        for i in range(0, len(x), 16):
            logits = model(x[i:i + 16].to(device)).float()
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y[i:i + 16].reshape(-1).to(device),
                                     reduction="sum").item()
            count += y[i:i + 16].numel()
        return total / count / math.log(2)

    @torch.no_grad()
    def position_bpc(self, model, stream, context, max_windows, device) -> dict:
        """The test loss by position in the window (bins of :func:`position_edges`), on the windows of
        ``test_bpc``: ``{"edges", "bpc", "chars"}`` (``chars``: predictions per bin)."""

        x, y = eval_windows(stream, context, 1, max_windows)
        total = torch.zeros(x.shape[1], dtype=torch.float64)
        for i in range(0, len(x), 16):
            logits = model(x[i:i + 16].to(device)).float()
            ce = F.cross_entropy(logits.transpose(1, 2), y[i:i + 16].to(device), reduction="none")   # [b, n]
            total += ce.sum(0).double().cpu()
        edges = position_edges(x.shape[1])
        bins = list(zip(edges[:-1], edges[1:]))
        return {"edges": edges,
                "bpc": [float(total[lo:hi].sum() / ((hi - lo) * len(x)) / math.log(2)) for lo, hi in bins],
                "chars": [(hi - lo) * len(x) for lo, hi in bins]}

    def evaluate(self, model, config, data, device):
        model.eval()
        ctx, windows = _opt(config, "context"), _opt(config, "eval_windows")
        out = {"val_bpc": self._bpc(model, data.stream("validation"), ctx, 1, windows, device)}
        for m in _opt(config, "eval_multiples"):
            out["test_bpc" + ("" if m == 1 else f"_x{m}")] = self._bpc(model, data.stream("test"), ctx, m,
                                                                       max(1, windows // m), device)
        model.train()
        return out

    @torch.no_grad()
    def summarise(self, model, config, data, device) -> dict:
        """Samples from the fixed prompt and the sink measurements, on the trained model."""
        model.eval()
        by_position = self.position_bpc(model, data.stream("test"), _opt(config, "context"),
                                        _opt(config, "eval_windows"), device)
        prompt = data.vocab.encode(DEFAULTS["prompt"])[None].to(device)
        g = torch.Generator().manual_seed(1234)
        out = model.generate(prompt, _opt(config, "sample_chars"), temperature=DEFAULTS["temperature"],
                             top_k=DEFAULTS["top_k"], generator=g)
        sample = data.vocab.decode(out[0, prompt.shape[1]:].tolist())
        x, _ = eval_windows(data.stream("test"), SINK_WINDOW, 1, SINK_WINDOWS)
        maps = record_attention_maps(model, x.to(device))        # [L, B, H, 64, 64]
        report = sink_report(list(maps), causal=True)
        first = maps[0, 0, :, :MAP_TOKENS, :MAP_TOKENS]                  # [H, t, t]: layer 1, window 1
        model.train()
        return {"prompt": DEFAULTS["prompt"], "sample": sample, "position_bpc": by_position,
                "sampling": {"temperature": DEFAULTS["temperature"], "top_k": DEFAULTS["top_k"], "seed": 1234},
                "sinks": {k: (v.tolist() if torch.is_tensor(v) else v) for k, v in report.items()},
                "attention_map": {"layer": 0, "window": 0, "text": data.vocab.decode(x[0, :MAP_TOKENS].tolist()),
                                  "weights": [[[float(f"{v:.4g}") for v in row] for row in head]
                                              for head in first.tolist()]}}
