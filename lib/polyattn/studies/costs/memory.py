"""Chapter 08's memory section: each configuration's peak memory against SDPA's."""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from ...book.deliver import styled
from .page import CUBIC, configuration, naive_max_n, pivot_rows, shape_text, value_at


def memory_table(df: pd.DataFrame, cfg: Mapping, preset: str):
    """Each configuration's peak memory as a multiple of SDPA's; SDPA's own row in MiB."""
    ref_label = configuration("softmax", "sdpa")
    (ref,) = pivot_rows(df[df["configuration"] == ref_label], "peak_mb", lambda x: f"{x:.3g} MiB")
    rows = [{**ref, "configuration": f"{ref_label} (MiB)"} if r["configuration"] == ref_label else r
            for r in pivot_rows(df, "peak_ratio", lambda x: f"{x:.2f}")]
    return styled(rows, f"Peak memory of one forward and backward call, multiple of SDPA softmax's at the same N "
                        f"(preset {preset}; {shape_text(cfg)}; bytes held at once by tensors created during the "
                        "call, inputs not counted; SDPA's own peak in its row).")


def memory_texts(df: pd.DataFrame, cfg: Mapping) -> dict[str, str]:
    """The naive path's peak memory against SDPA's at its longest length, the blocked path's at
    the longest length of all (``big_n``, glued by :func:`polyattn.studies.costs.setup.setup_texts`)."""
    naive_n = max(n for n in cfg["ns"] if n <= naive_max_n(cfg))
    big = cfg["big_n"]
    return {"naive_peak": f"{value_at(df, CUBIC, 'naive', naive_n, 'peak_ratio'):.1f}", "naive_n": f"{naive_n:,}",
            "big_peak": f"{value_at(df, CUBIC, 'blocked', big, 'peak_ratio'):.2f}"}
