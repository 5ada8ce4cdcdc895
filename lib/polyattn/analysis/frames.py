"""Result records -> tidy frames: one row per (run, epoch) or per run, with the run's identifiers.

Frames carry the records' metric declarations in ``frame.attrs["metrics"]`` (see
:mod:`polyattn.analysis.metrics`); values stay as stored (accuracy as a fraction), and the
tables scale them for display.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Iterable, Optional

import numpy as np
import pandas as pd

from .. import specs
from ..model_sizes import image_seq_len
from ._common import _check_records
from .metrics import declared_metrics, set_metrics

PERCENT = 100.0

RUN_COLUMNS = ("experiment", "task", "run", "config_hash", "seed", "activation", "model", "augment", "patch_size",
               "image_size", "seq_len", "c", "c_label", "scale", "train_subset", "test_subset", "epochs",
               "batch_size", "preset", "status", "diverged_step", "n_params", "wall_s")
EPOCH_COLUMNS = ("epoch", "step", "train_loss", "train_acc", "test_loss", "test_acc", "elapsed_s")
#: The task of a record that does not name one (records written before tasks were declared).
DEFAULT_TASK = "images"


def record_seq_lens(record: dict) -> dict[str, int]:
    """The sequence length(s) of a run's model: ``record["seq_lens"]``, or for records that do
    not carry it (image classification) the image model's token count under ``"seq_len"``."""
    lens = record.get("seq_lens")
    if lens is None:
        return {"seq_len": image_seq_len(record["config"])}
    if isinstance(lens, dict) and lens:
        return {str(k): int(v) for k, v in lens.items()}
    if isinstance(lens, (int, np.integer)):
        return {"seq_len": int(lens)}
    raise ValueError(f"seq_lens must be a non-empty dict of name -> length, got {lens!r}")


def record_seq_len(record: dict) -> int:
    """The run's sequence length N: ``seq_len`` of :func:`record_seq_lens` (the model's training
    length), or the longest length a record declares when it names no ``seq_len``."""
    lens = record_seq_lens(record)
    return lens.get("seq_len", max(lens.values()))


def activation_constant(spec: str) -> tuple[float, Optional[str]]:
    """``(c, label)`` of a fixed-scale polynomial ``poly:p=P,c=C``; ``(nan, None)`` otherwise."""
    act = specs.declare(spec)
    c = act.params.get("c") if act.family == "poly" else None
    if c is None:
        return float("nan"), None
    return float(Fraction(c)), str(c)


def activation_scale(spec: str, seq_len: int) -> float:
    """The multiplier of s^p in a polynomial activation: c, or 1/sqrt(N) for ``poly:p=P``; NaN otherwise."""
    act = specs.declare(spec)
    if act.family != "poly":
        return float("nan")
    c, _ = activation_constant(spec)
    return c if not math.isnan(c) else 1.0 / math.sqrt(seq_len)


def run_info(record: dict) -> dict:
    """The identifiers of one run: what it trained, how, and how it ended."""
    cfg = record["config"]
    spec = specs.canonical(cfg["activation"])
    seq_len = record_seq_len(record)
    c, c_label = activation_constant(spec)
    prov = record.get("provenance") or {}
    return {
        "experiment": record["experiment"], "task": record.get("task", DEFAULT_TASK),
        "run": f"{record['config_hash']}-seed{record['seed']}", "config_hash": record["config_hash"],
        "seed": int(record["seed"]), "activation": spec,
        "model": cfg.get("model"), "augment": cfg.get("augment", "none"), "patch_size": cfg.get("patch_size"),
        "image_size": cfg.get("image_size"), "seq_len": seq_len, "c": c, "c_label": c_label,
        "scale": activation_scale(spec, seq_len), "train_subset": cfg.get("train_subset"),
        "test_subset": cfg.get("test_subset"), "epochs": cfg.get("epochs"), "batch_size": cfg.get("batch_size"),
        "preset": record.get("preset"), "status": record["status"], "diverged_step": record.get("diverged_step"),
        "n_params": record.get("n_params"), "wall_s": prov.get("wall_s", float("nan")),
    }


def records_to_frame(records: Iterable[dict]) -> pd.DataFrame:
    """One row per (run, epoch) with the run's identifiers and every metric logged at that epoch.

    A run that diverged before its first evaluation keeps one row with ``epoch`` NaN, so that
    it stays visible in every table built from the frame.
    """
    records = _check_records(records)
    metrics = declared_metrics(records)
    extra = [name for name in metrics if name not in EPOCH_COLUMNS]
    rows = []
    for rec in records:
        info = run_info(rec)
        for m in rec["metrics"] or [{}]:
            row = {**info, **{c: m.get(c, np.nan) for c in EPOCH_COLUMNS[:-1] + tuple(extra)}}
            row["elapsed_s"] = m.get("wall_s", np.nan)
            rows.append(row)
    return set_metrics(pd.DataFrame(rows, columns=list(RUN_COLUMNS + EPOCH_COLUMNS) + extra), metrics)


def final_metrics(records: Iterable[dict]) -> pd.DataFrame:
    """One row per run: each declared metric at the last evaluation (NaN for a diverged run,
    so that it never enters a mean) and, as ``last_<name>``, the last value it reached."""
    records = _check_records(records)
    metrics = declared_metrics(records)
    rows = []
    for rec in records:
        evals = rec["metrics"]
        last = evals[-1] if evals else {}
        ok = rec["status"] == "ok"
        row = {**run_info(rec), "epochs_done": len(evals)}
        row.update({name: last.get(name, np.nan) if ok else np.nan for name in metrics})
        row.update({f"last_{name}": last.get(name, np.nan) for name in metrics})
        rows.append(row)
    cols = list(RUN_COLUMNS) + ["epochs_done"] + list(metrics) + [f"last_{name}" for name in metrics]
    return set_metrics(pd.DataFrame(rows, columns=cols), metrics)


#: The per-run frame under its first name (image classification reports accuracy).
final_accuracy = final_metrics
