"""Chapter 08's section on the linear forms: the exact linear-time forms of x, x² and x³ against
SDPA and against the blocked path, with the operation count's prediction."""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from ...book.deliver import styled
from ...flops import matmul_flops
from ...kernels.linear import monomial_count
from .page import CUBIC, configuration, series, shape_text, value_at


def linear_rows(df: pd.DataFrame, cfg: Mapping) -> list[dict]:
    """Per linear form (p = 1, 2 at the longest length of ``ns``, p = 3 at ``big_n``): features F,
    N, time / SDPA, time / the blocked path of the same activation (None when not measured at that
    N), and the operation count's ratio to the blocked path's."""
    out = []
    n_max, d = max(cfg["ns"]), cfg["head_dim"]
    for p, n in ((1, n_max), (2, n_max), (3, cfg["big_n"])):
        spec = CUBIC if p == 3 else f"poly:p={p}"
        lin, blk = value_at(df, spec, "linear", n, "time_ms"), value_at(df, spec, "blocked", n, "time_ms")
        if lin is None:
            continue
        out.append({"form": configuration(spec, "linear"), "p": p, "features": monomial_count(d, p), "n": n,
                    "vs_sdpa": value_at(df, spec, "linear", n), "vs_blocked": None if blk is None else lin / blk,
                    "counted": matmul_flops(n, d, "linear", degree=p) / matmul_flops(n, d, "blocked")})
    return out


def linear_table(df: pd.DataFrame, cfg: Mapping, preset: str):
    """The exact linear-time forms at the longest length each was measured at: their time against
    SDPA's and against the blocked path's, and the blocked path's time the operation count predicts."""
    rows = []
    for row in linear_rows(df, cfg):
        rows.append({"form": row["form"], "features F": f"{row['features']:,}", "N": f"{row['n']:,}",
                     "time / SDPA": f"{row['vs_sdpa']:.3f}",
                     "time / blocked path": "" if row["vs_blocked"] is None else f"{row['vs_blocked']:.2f}",
                     "operations / blocked path's": f"{row['counted']:.2f}"})
    return styled(rows, f"The exact linear-time forms, forward and backward (preset {preset}; {shape_text(cfg)}); "
                        "blank: the blocked path was not measured at that length.")


def linear_from(df: pd.DataFrame, cfg: Mapping) -> pd.Series:
    """x/sqrt(N)'s linear form against SDPA from N = 1024 on (or from the longest length of ``ns``,
    when shorter)."""
    lin1 = series(df, "poly:p=1", "linear")
    return lin1[lin1.index >= min(1024, max(cfg["ns"]))]


def linear_texts(df: pd.DataFrame, cfg: Mapping) -> dict[str, str]:
    """x/sqrt(N)'s worst time against SDPA from N = 1024 on (or the longest length, when shorter);
    the degree-2 form against the blocked path; whether the degree-3 form beats the blocked path."""
    lin1 = linear_from(df, cfg)
    rows = {r["p"]: r for r in linear_rows(df, cfg)}
    p2, p3 = rows.get(2), rows.get(3)
    return {"lin1_worst": f"{lin1.max():.3f}", "lin1_from": f"{int(lin1.index.min()):,}",
            "lin2_vs_blocked": "not measured" if p2 is None or p2["vs_blocked"] is None else f"{p2['vs_blocked']:.2f}",
            "n_max": f"{max(cfg['ns']):,}",
            "lin3_vs_blocked": "not measured" if p3 is None else f"{p3['vs_blocked']:.2f}",
            "lin3_counted": "not measured" if p3 is None else f"{p3['counted']:.2f}",
            "lin3_result": ("is not measured" if p3 is None else
                            "wins" if p3["vs_blocked"] < 1 else "does not win")}
