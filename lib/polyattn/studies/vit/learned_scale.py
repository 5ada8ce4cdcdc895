"""Chapter 04's section on the quadratic with a learned scale, g_h·x²/sqrt(N) with one learnable
factor a head: the factors after training, per layer.

    glue_values(learned_scale_numbers(records, planned))   # the stored runs, the factors' range
    learned_scale_table(records)                           # mean, smallest, largest g per layer
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ...book.deliver import styled


def learned_scales(records: list[dict]) -> Optional[np.ndarray]:
    """The learned factors g_h of every run, as runs × layers × heads (None without any)."""
    scales = [r["learned_head_scales"] for r in records if r.get("learned_head_scales")]
    return np.asarray(scales, dtype=float) if scales else None


def learned_scale_table(records: list[dict]):
    """Per layer, the learned factor g_h (in units of 1/sqrt(N)) after training: mean, smallest
    and largest over the runs and their heads."""
    arr = learned_scales(records)
    if arr is None:
        return None
    rows = [{"Layer": i + 1, "Mean g": f"{arr[:, i].mean():.2f}", "Smallest": f"{arr[:, i].min():.2f}",
             "Largest": f"{arr[:, i].max():.2f}"} for i in range(arr.shape[1])]
    return styled(rows, f"The learned factor g after training, over {arr.shape[0]} runs and their "
                        f"{arr.shape[2]} heads a layer (1 is the fixed x²/√N)")


def learned_scale_numbers(records: list[dict], planned: int) -> dict[str, str]:
    """The stored runs of the learned-scale quadratic and the range of its factors."""
    arr = learned_scales(records)
    out = {"ch04_quad_stored": f"{len(records)} of {planned}"}
    if arr is None:
        return {**out, "ch04_quad_low": "not stored", "ch04_quad_high": "not stored"}
    return {**out, "ch04_quad_low": f"{arr.min():.2f}", "ch04_quad_high": f"{arr.max():.2f}"}
