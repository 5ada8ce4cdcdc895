"""The stored records a measure reads: those of a grid's book configurations, loaded from the
results directory (``root``; None for the repository's ``data/results``), valid evidence only."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .. import grids
from ..results import InvalidRecord, load, record_path


@dataclass(frozen=True)
class GridRecords:
    """The configurations a grid plans at the book preset, the valid records stored for them, in
    the grid's order, and the configuration of each stored record."""

    configs: tuple
    records: tuple
    stored_configs: tuple = ()

    @property
    def planned(self) -> int:
        return len(self.configs)

    @property
    def stored(self) -> int:
        return len(self.records)

    @property
    def complete(self) -> bool:
        return self.stored == self.planned > 0


def grid_records(grid: str, root: Optional[Path] = None, preset: str = "book") -> GridRecords:
    """The valid stored records of ``grid``'s configurations (a missing or invalid record is left
    out; a book record computed from a modified tree is not evidence and is left out too)."""
    configs = tuple(grids.configs(grid, preset))
    records, stored_configs = [], []
    for c in configs:
        path = record_path(c, root)
        if not path.exists():
            continue
        try:
            records.append(load(path, c, evidence=preset != "smoke"))
        except InvalidRecord:
            continue
        stored_configs.append(c)
    return GridRecords(configs, tuple(records), tuple(stored_configs))
