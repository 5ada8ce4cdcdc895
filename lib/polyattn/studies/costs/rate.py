"""Chapter 08's section on how close the paths come to the machine's limit: the achieved rate of
each configuration as a fraction of a plain matrix product's."""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from ... import bench
from ...book.deliver import styled
from .page import CUBIC, CUBIC_FEATURES, FIGURE_LINES, configuration, pivot_rows, shape_text, value_at

#: The rows of the rate table: the figure's lines and the cubic's feature map.
RATE_LINES = FIGURE_LINES + ((CUBIC_FEATURES.activation, CUBIC_FEATURES.path),)


def rate_table(df: pd.DataFrame, cfg: Mapping, preset: str):
    """The achieved rate of each configuration of :data:`RATE_LINES` as a fraction of the plain
    matrix product's, and the product's own rate in the last row."""
    rate = df.dropna(subset=["matmul_fraction"])
    shown = {configuration(*line) for line in RATE_LINES}
    rows = pivot_rows(rate[rate["configuration"].isin(shown)], "matmul_fraction", lambda x: f"{x:.2f}")
    mm = rate.groupby("n")["matmul_gflop_s"].first()
    rows.append({"configuration": "float32 matrix product (GFLOP/s)",
                 **{f"N = {n:,}": f"{mm[n]:.0f}" for n in sorted(rate["n"].unique())}})
    sides = ", ".join(f"{bench.matched_matmul_side(n, cfg['batch'], cfg['heads'], cfg['head_dim']):,}"
                      for n in mm.index)
    return styled(rows, f"Achieved rate of the matrix products of SDPA, the cubic on each path and the linear forms, "
                        f"fraction of a plain matrix product's (preset {preset}; "
                        f"{shape_text(cfg)}; forward and backward, median over rounds of the ratio within a round; "
                        f"last row: the product's own rate, sides {sides}).")


def rate_texts(df: pd.DataFrame, cfg: Mapping) -> dict[str, str]:
    """The product's rate at the longest length of ``ns``, SDPA's fraction of it, the cubic's best
    path and its fraction there and at the shortest length."""
    n_max, n_min = max(cfg["ns"]), min(cfg["ns"])
    mm = df.dropna(subset=["matmul_gflop_s"]).groupby("n")["matmul_gflop_s"].first()
    best = max(((value_at(df, CUBIC, p, n_max, "matmul_fraction") or 0.0, p) for p in ("blocked", "compiled")))
    small = value_at(df, CUBIC, best[1], n_min, "matmul_fraction")
    return {"rate_n": f"{n_max:,}", "rate_gflop": f"{mm[n_max]:.0f}",
            "rate_sdpa": f"{value_at(df, 'softmax', 'sdpa', n_max, 'matmul_fraction'):.2f}",
            "rate_best_path": best[1], "rate_best": f"{best[0]:.2f}", "rate_small_n": f"{n_min:,}",
            "rate_small": "not measured" if small is None else f"{small:.2f}", "rate_small_gflop": f"{mm[n_min]:.0f}"}
