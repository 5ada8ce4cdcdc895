"""Chapter 06, "Attention over the five pseudo-time tokens": per variant, over every stored
attention map, how far a row's weights differ and what a row sums to.

    attention_table(runs); attention_values(runs)
"""
from __future__ import annotations

import pandas as pd

from ...analysis import physics as pa
from ...analysis.tables import number_cell
from ...book.deliver import styled
from ...labels import PHYSICS_VARIANTS
from ...tasks.pde import ATTENTION_POINTS
from .page import POLY, Runs, not_run, variant_name


def attention_rows(runs: Runs) -> pd.DataFrame:
    """Per variant, over every stored map (run, layer, head, query token): the largest difference
    between two weights of one row, and the smallest and largest row sum."""
    cols = ["variant", "maps", "row_spread", "sum_min", "sum_max"]
    if not runs.trains:
        return pd.DataFrame(columns=cols)
    maps = pa.attention_maps(runs.records)
    if maps.empty:
        return pd.DataFrame(columns=cols)
    rows = maps.groupby(["variant", "pde", "seed", "layer", "head", "query"], sort=False)["weight"]
    per_row = pd.DataFrame({"spread": rows.max() - rows.min(), "sum": rows.sum()}).reset_index()
    out = []
    for variant in PHYSICS_VARIANTS:
        g = per_row[per_row["variant"] == variant]
        if len(g):
            out.append({"variant": variant, "maps": len(g.groupby(["pde", "seed", "layer", "head"])),
                        "row_spread": float(g["spread"].max()), "sum_min": float(g["sum"].min()),
                        "sum_max": float(g["sum"].max())})
    return pd.DataFrame(out, columns=cols)


def attention_table(runs: Runs):
    """:func:`attention_rows` for people."""
    if not runs.trains:
        return not_run(runs)
    rows = [{"Activation": variant_name(r["variant"]), "Maps": int(r["maps"]),
             "Largest difference within a row": number_cell(r["row_spread"], ".2g"),
             "Row sums, smallest to largest": f"{number_cell(r['sum_min'])} to {number_cell(r['sum_max'])}"}
            for _, r in attention_rows(runs).iterrows()]
    return styled(rows, runs.caption(f"The stored attention maps (mean weights over {_points()} points of the field), "
                                     "over every run, layer, head and query token"))


def _points() -> int:
    return ATTENTION_POINTS


def attention_values(runs: Runs) -> dict[str, str]:
    """The points each stored map averages, and the largest difference between two weights of one
    row over every map of every variant."""
    rows = attention_rows(runs).set_index("variant")
    if not len(rows):
        return {"points": str(_points()), "row_spread": runs.not_run, "sums_poly": runs.not_run}
    poly = (f"{number_cell(rows.loc[POLY, 'sum_min'])} to {number_cell(rows.loc[POLY, 'sum_max'])}"
            if POLY in rows.index else "not stored")
    return {"points": str(_points()), "row_spread": number_cell(rows["row_spread"].max(), ".1g"), "sums_poly": poly}
