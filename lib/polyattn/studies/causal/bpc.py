"""Chapter 07's section on bits per character: every variant against softmax on test bits/char,
paired by seed, with the register's comparisons in their place at the book preset.

    bpc_table(lm, margin, registered)              # each variant − softmax, one row a variant
    glue_values(bpc_numbers(lm, margin, registered))   # the results counted by form, the MDEs

``lm`` is :func:`polyattn.studies.causal.page.charlm_runs` of the page, ``margin``
:func:`polyattn.studies.causal.page.margin` and ``registered``
:func:`polyattn.studies.causal.page.register_rows` of the claim lm_vs_softmax.
"""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from ...analysis import causal as ca
from ...analysis.tables import interval_cell, number_cell
from ...analysis.verdicts import comparison_verdict
from ...book.deliver import styled
from .page import REGISTERED, Runs, compact, register_cell, scale_caption, show, unbroken


def bpc_comparisons(frame: pd.DataFrame, margin: float, baseline: str = "softmax") -> pd.DataFrame:
    """Every variant against ``baseline`` on test bits/char, same seed, Holm over the variants."""
    return ca.compare_variants(frame, baseline, "test_bpc", margin)


def result_forms(diffs: pd.DataFrame) -> list[str]:
    """The result word of each row of ``diffs`` (same-seed comparisons, one per ``activation``)."""
    return [comparison_verdict(r, name=r["activation"]).form for _, r in diffs.iterrows()]


def _p(x) -> str:
    return number_cell(x, ".2g")


def bpc_rows(runs: Runs, margin: float, registered: Mapping[tuple, dict], metric: str = "test_bpc") -> list[dict]:
    """Per variant: its mean test bits/char over seeds, the paired difference from softmax with its
    interval, Holm p, TOST p, MDE and result; the register's numbers where it holds the comparison
    (marked ‡).  A variant with seeds that did not train to the end says how many did."""
    frame = runs.frame
    diffs = bpc_comparisons(frame, margin).set_index("activation")
    forms = dict(zip(diffs.index, result_forms(diffs.reset_index())))
    rows = []
    for variant, g in frame.groupby("activation", sort=False):
        ok = int((g["status"] == "ok").sum())
        row = {"variant": show(variant) + ("" if ok == len(g) else f" ({ok} of {len(g)} seeds)"),
               "test bits/char": number_cell(g[metric].mean(), ".3f", missing="diverged")}
        if variant in diffs.index:
            x = diffs.loc[variant]
            reg = registered.get((variant, "softmax", metric))
            row.update({"Δ vs softmax [95% CI]": unbroken(register_cell(reg) if reg else interval_cell(
                            x["mean_diff"], x["ci_low"], x["ci_high"], "+.3f", missing="diverged")),
                        "Holm p": reg["Holm p"] if reg else _p(x["p_holm"]),
                        f"TOST p (±{margin:g})": reg["TOST p"] if reg else _p(x["tost_p"]),
                        "MDE": number_cell(x["mde"], ".3f"),
                        "result": (reg["Result"] + " " + REGISTERED) if reg else forms[variant]})
        else:
            row.update({"Δ vs softmax [95% CI]": "baseline", "Holm p": "", f"TOST p (±{margin:g})": "", "MDE": "",
                        "result": ""})
        rows.append(row)
    return rows


def bpc_table(lm: Runs, margin: float, registered: Mapping[tuple, dict]):
    """:func:`bpc_rows` as the section's table, its caption the preset, data, scale and deviations."""
    if not lm:
        return None
    n = len(bpc_comparisons(lm.frame, margin))
    k = len({key for key in registered if key[2] == "test_bpc"})
    note = (f"; {REGISTERED} the claim register's comparison, Holm over its own {k}" if k else "")
    return compact(styled(bpc_rows(lm, margin, registered), (
        f"Test bits per character (lower is better), mean over seeds, and the same-seed difference from softmax, "
        f"Holm over the table's {n} comparisons{note}. {scale_caption(lm)}; a decoder on characters, far smaller than "
        "the paper's models")))


def bpc_numbers(lm: Runs, margin: float, registered: Mapping[tuple, dict]) -> dict:
    """The number of comparisons, the results counted by form and the range of detectable effects."""
    keys = ("ch07_family", "ch07_count_text", "ch07_mde_range")
    if not lm:
        return dict.fromkeys(keys, lm.missing)
    rows = bpc_rows(lm, margin, registered)
    results = [r["result"].removesuffix(" " + REGISTERED) for r in rows if r["result"]]
    counts = pd.Series(results).value_counts()
    mdes = bpc_comparisons(lm.frame, margin)["mde"].dropna()
    return {"ch07_family": len(results),
            "ch07_count_text": "; ".join(f"{n} {form}" for form, n in counts.items()),
            "ch07_mde_range": (f"{mdes.min():.3f} to {mdes.max():.3f} bits/char" if len(mdes)
                               else "not defined with a single seed")}
