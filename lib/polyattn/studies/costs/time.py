"""Chapter 08's time section: each configuration's time against SDPA's, and the cubic's on the
blocked path, the compiled path and the path ``auto`` takes."""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from ... import kernels
from ...book.deliver import styled
from .page import CUBIC, auto_cubic, naive_max_n, pivot_rows, series, shape_text, value_range


def time_table(df: pd.DataFrame, cfg: Mapping, preset: str):
    """Each configuration's time as a multiple of SDPA's at the same N."""
    return styled(pivot_rows(df, "ratio_to_sdpa", lambda x: f"{x:.2f}"),
                  f"Time of one forward and backward call, multiple of SDPA softmax's at the same N (preset {preset}; "
                  f"{shape_text(cfg)}; median over interleaved rounds of the ratio within a round, "
                  f"{rounds_text(df)}; one thread). "
                  f"Blank: not measured (the naive path above N = {naive_max_n(cfg):,}; at the longest length only "
                  "the cubic's blocked path and the linear forms). The paper reports no timings.")


def rounds_text(df: pd.DataFrame) -> str:
    """How many timed rounds each length had ("3 rounds at N = 64, 256; 1 at N = 4,096, 8,192")."""
    if "rounds" not in df or df["rounds"].isna().all():
        return "rounds not recorded"
    per_n = df.groupby("n")["rounds"].max().astype(int)
    parts = [f"{k} round{'s' if k != 1 else ''} at N = " + ", ".join(f"{n:,}" for n in per_n[per_n == k].index)
             for k in sorted(per_n.unique(), reverse=True)]
    return "; ".join(parts)


def time_texts(df: pd.DataFrame, cfg: Mapping) -> dict[str, str]:
    """The cubic's time against SDPA on the blocked path (best and worst length), on the compiled
    path, against the blocked path from ``COMPILED_MIN_KEYS`` keys on, and on the path ``auto`` takes."""
    blocked = series(df, CUBIC, "blocked")
    blocked = blocked[blocked.index.isin(cfg["ns"])]
    compiled = series(df, CUBIC, "compiled")
    compiled = compiled[compiled.index.isin(cfg["ns"])]
    vs_blocked = (compiled / blocked.reindex(compiled.index)).dropna()
    at_rule = vs_blocked[vs_blocked.index >= kernels.COMPILED_MIN_KEYS]
    if compiled.empty:
        rule = "was not measured: the C++ extension did not build here or is switched off"
        time = "was not measured: the C++ extension did not build here or is switched off"
    else:
        time = (f"takes {value_range(compiled)} times SDPA's time over the same lengths and {value_range(vs_blocked)} "
                "times the blocked path's")
        rule = (f"was not measured: this preset measures no length of {kernels.COMPILED_MIN_KEYS} keys or more"
                if at_rule.empty else
                f"takes {value_range(at_rule)} times the blocked path's time: "
                + ("faster at every measured length" if bool((at_rule < 1).all()) else "not faster at every measured length"))
    auto, paths = auto_cubic(df, cfg)
    return {"cubic_best": f"{blocked.min():.2f}", "cubic_best_n": f"{int(blocked.idxmin()):,}",
            "cubic_worst": f"{blocked.max():.2f}", "cubic_worst_n": f"{int(blocked.idxmax()):,}",
            "compiled_time": time, "compiled_rule": rule,
            "auto_range": value_range(auto), "auto_paths": " or ".join(paths)}
