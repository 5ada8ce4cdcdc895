"""Training throughput per activation, as ratios to softmax measured in the same run
(``python -m polyattn.bench train``): a ViT on images, or the LRA classifier on padded byte
sequences."""
from __future__ import annotations

import statistics
from typing import Callable, Optional, Sequence

import torch
import torch.nn.functional as F

from . import activations
from .bench_clock import clock, paired_ratio


def _train_setup(model: str, spec: str, size: str, batch: int, image_size: int, seq_len: int, seed: int):
    """(model, inputs as a tuple of arguments, labels) for one training benchmark."""
    g = torch.Generator().manual_seed(seed)
    if model == "vit":
        from .models import build_vit

        images = torch.randn(batch, 1, image_size, image_size, generator=g)
        labels = torch.randint(0, 10, (batch,), generator=g)
        torch.manual_seed(seed)
        return build_vit(size, activation=spec, image_size=image_size), (images,), labels
    if model == "lra":
        from .models.seq_classifier import SequenceClassifier

        # byte tokens padded to seq_len; real lengths from half the length to all of it
        lengths = torch.randint(seq_len // 2, seq_len + 1, (batch,), generator=g)
        mask = torch.arange(seq_len)[None] < lengths[:, None]
        tokens = torch.randint(1, 257, (batch, seq_len), generator=g).masked_fill(~mask, 0)
        labels = torch.randint(0, 10, (batch,), generator=g)
        torch.manual_seed(seed)
        return SequenceClassifier(257, seq_len, 10, spec, size), (tokens, mask), labels
    raise ValueError(f"unknown benchmark model {model!r}; choose 'vit' or 'lra'")


def run_train_bench(specs: Optional[Sequence[str]] = None, size: str = "micro", batch: int = 128,
                    steps: int = 3, rounds: int = 3, image_size: int = 28, threads: int = 1, seed: int = 0,
                    progress: Optional[Callable[[str], None]] = None, model: str = "vit",
                    seq_len: int = 1024) -> list[dict]:
    """Records ``{activation, images_per_s, step_ms, ratio_to_softmax}``, softmax first.

    One model per activation (same seed, so same initial weights), AdamW, random inputs
    and labels; after one warm-up step each, ``rounds`` rounds of ``steps`` steps per
    activation, interleaved; the median step time per activation, and the median over
    rounds of the throughput ratio to softmax within each round.  ``model="vit"``: a ViT
    of ``size`` on ``image_size`` images; ``model="lra"``: the LRA classifier of ``size``
    (e.g. ``nystromformer``) on byte sequences padded to ``seq_len`` with key-padding masks.
    """
    if threads < 1 or steps < 1 or rounds < 1:
        raise ValueError(f"threads, steps and rounds must be >= 1, got {threads}, {steps}, {rounds}")
    specs = [activations.canonical(s) for s in (specs or activations.BOOK_SPECS)]
    if "softmax" in specs:
        specs.remove("softmax")
    specs = ["softmax"] + specs
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    _, now = clock(threads)
    try:
        models = {}
        for spec in specs:
            net, inputs, labels = _train_setup(model, spec, size, batch, image_size, seq_len, seed)
            models[spec] = (net, torch.optim.AdamW(net.parameters(), lr=1e-4, weight_decay=0.05), inputs, labels)

        def step(spec):
            net, opt, inputs, labels = models[spec]
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(net(*inputs), labels).backward()
            opt.step()

        for spec in specs:
            step(spec)
        times = {s: [] for s in specs}
        for r in range(rounds):
            for spec in specs:
                t0 = now()
                for _ in range(steps):
                    step(spec)
                times[spec].append((now() - t0) / steps)
            if progress:
                progress(f"round {r + 1}/{rounds}")
    finally:
        torch.set_num_threads(previous_threads)
    step_s = {s: statistics.median(t) for s, t in times.items()}
    # throughput ratio: softmax's step time over this activation's, paired by round
    ratio = {s: paired_ratio(times["softmax"], t) for s, t in times.items()}
    return [{"activation": s, "images_per_s": batch / step_s[s], "step_ms": 1e3 * step_s[s],
             "ratio_to_softmax": ratio[s]} for s in specs]


def format_train_table(records: list[dict], settings: Optional[dict] = None) -> str:
    lines = []
    if settings:
        lines.append("training steps, " + ", ".join(f"{k} {v}" for k, v in settings.items()))
    header = f"{'activation':<18} {'examples/s':>10} {'step ms':>9} {'x softmax':>10}"
    lines += [header, "-" * len(header)]
    for r in records:
        lines.append(f"{r['activation']:<18} {r['images_per_s']:>10.1f} {r['step_ms']:>9.1f} "
                     f"{r['ratio_to_softmax']:>10.3f}")
    return "\n".join(lines)
