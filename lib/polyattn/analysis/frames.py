"""Result records -> tidy frames: one row per (run, epoch) or per run, with the run's identifiers."""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Iterable, Optional

import numpy as np
import pandas as pd

from .. import activations
from ._common import _check_records

PERCENT = 100.0

RUN_COLUMNS = ("experiment", "run", "config_hash", "seed", "activation", "model", "augment", "patch_size",
               "image_size", "seq_len", "c", "c_label", "scale", "train_subset", "test_subset", "epochs",
               "batch_size", "preset", "status", "diverged_step", "n_params", "wall_s")
EPOCH_COLUMNS = ("epoch", "step", "train_loss", "train_acc", "test_loss", "test_acc", "elapsed_s")


def _seq_len(config: dict) -> int:
    image, patch = int(config.get("image_size", 28)), int(config.get("patch_size", 4))
    return (image // patch) ** 2 + (config.get("pool", "cls") == "cls")


def activation_constant(spec: str) -> tuple[float, Optional[str]]:
    """``(c, label)`` of a fixed-scale polynomial ``poly:p=P,c=C``; ``(nan, None)`` otherwise."""
    act = activations.get(spec)
    c = act.params.get("c") if act.family == "poly" else None
    if c is None:
        return float("nan"), None
    return float(Fraction(c)), str(c)


def activation_scale(spec: str, seq_len: int) -> float:
    """The multiplier of s^p in a polynomial activation: c, or 1/sqrt(N) for ``poly:p=P``; NaN otherwise."""
    act = activations.get(spec)
    if act.family != "poly":
        return float("nan")
    c, _ = activation_constant(spec)
    return c if not math.isnan(c) else 1.0 / math.sqrt(seq_len)


def run_info(record: dict) -> dict:
    """The identifiers of one run: what it trained, how, and how it ended."""
    cfg = record["config"]
    spec = activations.canonical(cfg["activation"])
    seq_len = _seq_len(cfg)
    c, c_label = activation_constant(spec)
    prov = record.get("provenance") or {}
    return {
        "experiment": record["experiment"], "run": f"{record['config_hash']}-seed{record['seed']}",
        "config_hash": record["config_hash"], "seed": int(record["seed"]), "activation": spec,
        "model": cfg.get("model"), "augment": cfg.get("augment", "none"), "patch_size": cfg.get("patch_size"),
        "image_size": cfg.get("image_size"), "seq_len": seq_len, "c": c, "c_label": c_label,
        "scale": activation_scale(spec, seq_len), "train_subset": cfg.get("train_subset"),
        "test_subset": cfg.get("test_subset"), "epochs": cfg.get("epochs"), "batch_size": cfg.get("batch_size"),
        "preset": record.get("preset"), "status": record["status"], "diverged_step": record.get("diverged_step"),
        "n_params": record.get("n_params"), "wall_s": prov.get("wall_s", float("nan")),
    }


def _check_records(records) -> list[dict]:
    records = list(records)
    bad = [i for i, r in enumerate(records) if not isinstance(r, dict) or "config" not in r or "metrics" not in r]
    if bad:
        raise ValueError(f"records {bad[:5]} are not result records (dicts with 'config' and 'metrics'); "
                         "load them with polyattn.results.load_or_run_all or load_records")
    return records


def records_to_frame(records: Iterable[dict]) -> pd.DataFrame:
    """One row per (run, epoch) with the run's identifiers.

    A run that diverged before its first evaluation keeps one row with ``epoch`` NaN, so that
    it stays visible in every table built from the frame.
    """
    rows = []
    for rec in _check_records(records):
        info = run_info(rec)
        metrics = rec["metrics"] or [{}]
        for m in metrics:
            rows.append({**info, "epoch": m.get("epoch", np.nan), "step": m.get("step", np.nan),
                         "train_loss": m.get("train_loss", np.nan), "train_acc": m.get("train_acc", np.nan),
                         "test_loss": m.get("test_loss", np.nan), "test_acc": m.get("test_acc", np.nan),
                         "elapsed_s": m.get("wall_s", np.nan)})
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS + EPOCH_COLUMNS))


def final_accuracy(records: Iterable[dict]) -> pd.DataFrame:
    """One row per run: the final test accuracy (NaN for a diverged run) and the last one it reached."""
    rows = []
    for rec in _check_records(records):
        info = run_info(rec)
        metrics = rec["metrics"]
        last = metrics[-1] if metrics else {}
        ok = rec["status"] == "ok"
        rows.append({**info, "epochs_done": len(metrics),
                     "test_acc": last.get("test_acc", np.nan) if ok else np.nan,
                     "train_acc": last.get("train_acc", np.nan) if ok else np.nan,
                     "test_loss": last.get("test_loss", np.nan) if ok else np.nan,
                     "last_test_acc": last.get("test_acc", np.nan)})
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS) + ["epochs_done", "test_acc", "train_acc", "test_loss",
                                                            "last_test_acc"])
