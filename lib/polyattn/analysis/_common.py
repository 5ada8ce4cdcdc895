"""Helpers shared by the analysis modules: argument checks and the status text of a group of runs
(numbers are formatted by :mod:`polyattn.numbers`)."""
from __future__ import annotations

from typing import Sequence

import pandas as pd


def _check_records(records) -> list[dict]:
    records = list(records)
    bad = [i for i, r in enumerate(records) if not isinstance(r, dict) or "config" not in r or "metrics" not in r]
    if bad:
        raise ValueError(f"records {bad[:5]} are not result records (dicts with 'config' and 'metrics'); "
                         "load them with polyattn.results.load_or_run_all or load_records")
    return records


def _by(by) -> list[str]:
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def _require(frame: pd.DataFrame, cols: Sequence[str], what: str):
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise ValueError(f"{what}: the frame lacks the columns {missing} (it has {list(frame.columns)}); "
                         "build it with final_accuracy(records)")


def _status_text(n_div: int, n: int) -> str:
    if n_div == 0:
        return "ok"
    return f"diverged in {n_div} of {n}"
