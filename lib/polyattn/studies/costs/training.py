"""Chapter 08's training throughput section: training steps of the micro ViT per activation of
the book, against softmax."""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from ... import activations, bench
from ...book.deliver import styled
from ...display import name
from .page import CUBIC, THREADS, once


def training(cfg: Mapping) -> pd.DataFrame:
    """Training steps of the micro ViT per activation of the book, interleaved, against softmax."""
    return once("training", cfg, lambda: pd.DataFrame(
        bench.run_train_bench(activations.BOOK_SPECS, threads=THREADS, **cfg["train"])))


def training_table(train: pd.DataFrame, cfg: Mapping, preset: str):
    """The micro ViT's training throughput per activation, and its ratio to softmax's."""
    t = cfg["train"]
    rows = [{"activation": name(r.activation), "images/s": f"{r.images_per_s:,.0f}", "step (ms)": f"{r.step_ms:.3g}",
             "throughput / softmax": f"{r.ratio_to_softmax:.2f}"} for r in train.itertuples()]
    return styled(rows, f"Training throughput ({t['size']} ViT, preset {preset}; batch {t['batch']} of random "
                        f"{t['image_size']}×{t['image_size']} images, median over {t['rounds']} interleaved rounds of "
                        f"{t['steps']} steps; above 1: faster than softmax)")


def training_texts(train: pd.DataFrame, cfg: Mapping) -> dict[str, str]:
    """The cubic's training throughput against softmax's, and the batch."""
    return {"train_cubic": f"{float(train.set_index('activation').loc[CUBIC, 'ratio_to_softmax']):.2f}",
            "train_batch": str(cfg["train"]["batch"])}
