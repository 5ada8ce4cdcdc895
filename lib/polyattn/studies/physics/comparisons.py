"""Chapter 06, "Paired comparisons with softmax": each variant minus softmax PINNsFormer with the
same seed, per problem, the rows of x³/√N and of the positive control being the registered
claim's at the book preset.

    comparison_table(runs, deliver("physics_poly"), diffs); comparison_values(runs, diffs)
"""
from __future__ import annotations

import math
from typing import Optional

import pandas as pd

from ...analysis import physics as pa
from ...analysis.tables import interval_cell, number_cell
from ...book.deliver import styled
from ...claims.report import comparison_rows
from ...labels import PDES
from ..critiques.page import first_only
from .page import POLY, Runs, margin, not_run, small, variant_name

#: Marks a comparison of a registered claim in the page's own tables.
MARK = " ‡"
REGISTERED_NOTE = ("‡ a comparison of the registered claim (x³/√N, and the positive control with attention ablated): "
                   "its difference, p-values and result are the claim register's")


def _nowrap(table, *columns):
    """``table`` with ``columns`` kept on one line (an interval split over two lines doubles a row)."""
    return table.set_properties(subset=list(columns), **{"white-space": "nowrap"})


def differences(runs: Runs) -> pd.DataFrame:
    """Every variant minus softmax PINNsFormer with the same seed, per problem, in log10 rMAE
    (:func:`polyattn.analysis.physics.compare_to_softmax`); empty without runs."""
    if not runs.trains:
        return pd.DataFrame()
    return pa.compare_to_softmax(runs.final, margin=margin())


def registered_rows(poly_claim, preset: str) -> dict:
    """Comparison id -> the row of the registered claim's comparison there (``convection``: x³/√N
    minus softmax; ``ablated_convection``: the positive control), with its ``mean``; empty unless
    the page reads the book preset (the register reads the book's records)."""
    if poly_claim is None or preset != "book":
        return {}
    v = poly_claim.verdict
    return {r.comparison.id: {**row, "mean": getattr(r, "mean", math.nan)}
            for r, row in zip(v.comparisons, comparison_rows(v))}


#: The positive control's variant, as the page names it.
ABLATED = "attention ablated (uniform 1/N)"
#: The register's columns the page's table shows for a registered comparison.
REGISTER_COLUMNS = ("Holm p", "TOST p", "Result")


def comparison_table(runs: Runs, poly_claim=None, diffs: Optional[pd.DataFrame] = None):
    """One table for the three problems: each variant minus softmax with the same seed, in log10
    rMAE with its 95% interval and as a ratio of errors (description), except the registered
    claim's rows at the book preset: x³/√N and the positive control (attention ablated), with the
    register's difference, Holm and TOST p-values and result, marked ‡."""
    if not runs.trains:
        return not_run(runs)
    diffs = differences(runs) if diffs is None else diffs
    reg = registered_rows(poly_claim, runs.preset)
    solved = pa.softmax_solved(runs.final)
    blank = dict.fromkeys(REGISTER_COLUMNS, "") if reg else {}

    def registered(row, cells):
        runs_stored = not str(cells["Pairs"]).startswith("0 of")
        diff = cells["Difference [95% CI]"].removesuffix(" (log10)")
        row.update({"Δ log10 rMAE [95% CI]": diff + (MARK if runs_stored else ""),
                    **{c: cells[c] if runs_stored else "–" for c in REGISTER_COLUMNS}})
        return row

    rows, names = [], []
    for p in dict.fromkeys(diffs["pde"]):
        name = p if solved.get(p) else f"{p} (softmax failed)"
        for _, r in diffs[diffs["pde"] == p].iterrows():
            row = {"Variant": variant_name(r["variant"]), "Seed pairs": int(r["n_pairs"]),
                   "Δ log10 rMAE [95% CI]": interval_cell(r["mean_diff"], r["ci_low"], r["ci_high"]),
                   "Error ratio": number_cell(r["ratio"]), **blank}
            cells = reg.get(p) if r["variant"] == POLY else None
            rows.append(registered(row, cells) if cells is not None else row)
            names.append(name)
        cells = reg.get(f"ablated_{p}")
        if cells is not None:
            mean = cells.get("mean", math.nan)
            rows.append(registered({"Variant": ABLATED, "Seed pairs": cells["Pairs"],
                                    "Error ratio": number_cell(10 ** mean) if mean == mean else "–"}, cells))
            names.append(name)
    rows = [{"PDE": pde, **row} for pde, row in zip(first_only(names), rows)]
    return _nowrap(small(styled(rows, runs.caption("Each variant minus softmax PINNsFormer with the same seed, log10 of the "
                                            "final test rMAE (negative: smaller error); error ratio: 10 to that mean. "
                                            "Description, not a test" + (f"; {REGISTERED_NOTE}" if reg else "")))),
                   "Δ log10 rMAE [95% CI]")


def comparison_values(runs: Runs, diffs: Optional[pd.DataFrame] = None) -> dict[str, str]:
    """The error ratio of x³/√N to softmax on each problem (``ratio_<pde>``)."""
    if not runs.trains:
        return {f"ratio_{p}": runs.not_run for p in PDES}
    diffs = differences(runs) if diffs is None else diffs
    poly = diffs[diffs["variant"] == POLY].set_index("pde")
    return {f"ratio_{p}": (f"{poly.loc[p, 'ratio']:.3g}" if p in poly.index else "not run") for p in PDES}
