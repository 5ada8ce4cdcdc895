"""Measurement records: the stored result of an expensive computation (an adversarial search, a
Monte Carlo survey) that a measure function reads.

A record is a small JSON file ``<directory>/<name>.json``::

    {"schema": 1, "name", "function": "module:function", "settings": {... "seed" ...},
     "table": [...one object per row...], "numbers": {...},
     "provenance": {"git_commit", "git_dirty", "packages", "hardware", "started", "wall_s"}}

:func:`measurement` loads the record when it is valid (its schema, name, function and settings,
seed included, are the ones asked for) and computes and writes it otherwise: valid -> loaded,
missing or stale -> computed.  The write is atomic, so a reader never sees half a record.

The book preset's records at the default seed live in ``data/measurements/`` (committed, beside
``data/results/``); every other preset or seed in ``_build/measurements/<preset>-seed<k>/`` so
that they can never be mistaken for the book's.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional

import pandas as pd

from ..results import REPO_ROOT, provenance, write_atomic

SCHEMA = 1
MEASUREMENTS_DIR = Path("data") / "measurements"


@dataclass(frozen=True)
class Measurement:
    """A loaded or computed measurement: its table, its scalar numbers, and where it came from."""

    table: pd.DataFrame
    numbers: Mapping[str, object] = field(default_factory=dict)
    provenance: Mapping[str, object] = field(default_factory=dict)
    path: Optional[Path] = None
    computed: bool = False


def measurements_dir(root: Optional[Path] = None) -> Path:
    """The folder of the book's measurement records: ``data/measurements`` for the repository's
    results directory (``root`` None), else the folder ``measurements`` beside ``root``."""
    return REPO_ROOT / MEASUREMENTS_DIR if root is None else Path(root).parent / "measurements"


def scratch_dir(preset: str, seed: int) -> Path:
    """Where a measurement at a preset or seed other than the book's default is kept."""
    return REPO_ROOT / "_build" / "measurements" / f"{preset}-seed{seed}"


def _scalar(value):
    """A numpy scalar as the Python value JSON can hold."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"a measurement holds plain values, got {type(value).__name__}")


def _plain(value):
    """``value`` as JSON gives it back (tuples become lists, numpy scalars plain numbers), so stored
    and asked settings compare."""
    return json.loads(json.dumps(value, default=_scalar))


def valid(record: object, name: str, function: str, settings: Mapping) -> bool:
    """Whether a loaded record is the measurement asked for (same name, function and settings)."""
    return (isinstance(record, dict) and record.get("schema") == SCHEMA and record.get("name") == name
            and record.get("function") == function and record.get("settings") == _plain(dict(settings))
            and isinstance(record.get("table"), list) and isinstance(record.get("numbers", {}), dict))


def load(path: Path, name: str, function: str, settings: Mapping) -> Optional[Measurement]:
    """The record at ``path`` when it exists and is valid for these settings; None otherwise."""
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    if not valid(record, name, function, settings):
        return None
    return Measurement(pd.DataFrame(record["table"]), record.get("numbers", {}), record.get("provenance", {}), Path(path))


def measurement(name: str, function: str, settings: Mapping, compute: Callable[[], tuple], directory: Path) -> Measurement:
    """The measurement ``name`` from ``directory``: loaded when its record is valid, else computed
    by ``compute()`` (which returns ``(table, numbers)``: a DataFrame and a dict of plain values)
    and written atomically with its provenance and wall time."""
    path = Path(directory) / f"{name}.json"
    found = load(path, name, function, settings)
    if found is not None:
        return found
    prov = provenance()  # the tree and the time at the start of the computation
    start = time.perf_counter()
    table, numbers = compute()
    prov["wall_s"] = round(time.perf_counter() - start, 2)
    record = {"schema": SCHEMA, "name": name, "function": function, "settings": _plain(dict(settings)),
              "table": _plain(table.to_dict("records")), "numbers": _plain(dict(numbers)), "provenance": prov}
    write_atomic(path, record)
    return Measurement(pd.DataFrame(record["table"]), record["numbers"], prov, path, computed=True)


def write_planted(directory: Path, name: str, function: str, settings: Mapping, table: pd.DataFrame,
                  numbers: Optional[Mapping] = None) -> Path:
    """Write a measurement record with given contents (for tests that drive a rule with planted
    numbers); returns its path."""
    path = Path(directory) / f"{name}.json"
    write_atomic(path, {"schema": SCHEMA, "name": name, "function": function, "settings": _plain(dict(settings)),
                        "table": _plain(table.to_dict("records")), "numbers": _plain(dict(numbers or {})),
                        "provenance": {"planted": True}})
    return path
