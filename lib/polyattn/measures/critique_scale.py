"""Chapter 09's scale sensitivity (``scale_sensitivity``): a factor of 2 in the scale constant, read
off the scale sweep (grid ``vit_scale``) on the axis k = c sqrt(N), against the chapter's margin.
The form is decided by the rules of :mod:`polyattn.analysis.critique_verdicts`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from .. import analysis
from ..analysis import critique_verdicts as rules
from ..analysis import critiques as crit
from ..claims.spec import Finding
from .critique_common import chapter_margin, finding, listed
from .stored import grid_records

#: The scale sweep.
SWEEP_GRID = "vit_scale"
#: The factor between the paper's 1/16 and 1/8, on the axis k = c sqrt(N).
K_LOW, K_HIGH = 1.0, 2.0


def sweep_final(records) -> pd.DataFrame:
    """One row per scale-sweep run with its final accuracy and its multiplier ``k = c sqrt(N)``."""
    final = analysis.final_accuracy(records)
    return final.assign(k=final["c"] * np.sqrt(final["seq_len"]))


def constants_test(final: pd.DataFrame) -> dict:
    """Per sequence length, the p-value of a one-way F-test that the grid's constants give the same
    accuracy (constants with fewer than two trained runs left out; NaN with fewer than two)."""
    from scipy import stats

    out = {}
    for n, g in final[final["status"] == "ok"].groupby("seq_len"):
        groups = [v["test_acc"].to_numpy() * 100 for _, v in g.groupby("c") if len(v) > 1]
        out[int(n)] = float(stats.f_oneway(*groups).pvalue) if len(groups) > 1 else float("nan")
    return out


def factor_effects(final: pd.DataFrame) -> pd.DataFrame:
    """A factor of 2 in k at each length (k = 1 -> 2, the paper's 1/16 -> 1/8, and k = 1/2 -> 1),
    read off each seed's curve (:func:`polyattn.analysis.critiques.factor_effect`), with the
    whole grid's best constant, range and F-test p."""
    effects = pd.concat([crit.factor_effect(final, K_LOW, K_HIGH), crit.factor_effect(final, K_LOW / 2, K_LOW)],
                        ignore_index=True)
    return effects.assign(f_test_p=effects["seq_len"].map(constants_test(final)))


def paper_k_values() -> list:
    """The paper's constants on the axis k = c sqrt(N) (patch tokens), rounded and without repeats."""
    return sorted(set(np.round(crit.paper_constants()["k_patches"], 3)))


def scale_sensitivity(root: Optional[Path] = None) -> Finding:
    """Accuracy at k = 2 minus at k = 1 (the paper's 1/8 against its 1/16) at each length of the
    scale sweep, with 95% t-intervals over seeds, against the chapter's margin."""
    grid = grid_records(SWEEP_GRID, root)
    cfg = grid.configs[0]
    k_values = paper_k_values()
    numbers = {"paper_k": listed(k_values, "g"), "runs": grid.stored, "runs_planned": grid.planned,
               "training_images": int(cfg.train_subset), "epochs": int(cfg.epochs)}
    if not grid.records:
        return finding("inconclusive at this scale", f"No run of the scale sweep is stored ({cfg.train_subset:,} "
                       f"images, {cfg.epochs} epochs).", numbers)
    final = sweep_final(grid.records)
    effects = factor_effects(final)
    e12 = effects[effects["k_low"] == K_LOW].set_index("seq_len")
    cells = final[final["status"] == "ok"].groupby(["seq_len", "k"])["test_acc"].std()
    half = (e12["ci_high"] - e12["ci_low"]) / 2
    margin = chapter_margin()
    form = rules.scale_sensitivity_form(zip(e12["ci_low"], e12["ci_high"]), margin)
    if e12[["ci_low", "ci_high"]].isna().all().all():
        form = "inconclusive at this scale"
    numbers.update({
        "lengths": listed(e12.index, "d"), "seeds": int(e12["n_seeds"].max()), "margin": margin,
        "k_1_to_2_by_length": "; ".join(f"{r['diff']:+.1f} points at N = {n} (95% CI {r['ci_low']:+.1f} to "
                                        f"{r['ci_high']:+.1f})" for n, r in e12.iterrows()),
        "half_width_min": float(half.min()), "half_width_max": float(half.max()),
        "range_by_length": "; ".join(f"{r['range']:.1f} points at N = {n} (F-test p = {r['f_test_p']:.2g})"
                                     for n, r in e12.iterrows()),
        "seed_sd_mean": float(100 * cells.mean()),
    })
    for n, r in e12.iterrows():
        numbers.update({f"k_1_to_2_at_{n}": float(r["diff"]), f"k_1_to_2_at_{n}_ci_low": float(r["ci_low"]),
                        f"k_1_to_2_at_{n}_ci_high": float(r["ci_high"]), f"range_at_{n}": float(r["range"]),
                        f"f_test_p_at_{n}": float(r["f_test_p"])})
    summary = (f"On the axis $k = c\\sqrt{{N}}$ the paper's constants lie at $k \\in \\{{{numbers['paper_k']}\\}}$; "
               f"$k = 1 \\to 2$ (its $1/16$ vs $1/8$) changes accuracy by "
               + ", ".join(f"{r['diff']:+.1f} ({r['ci_low']:+.1f} to {r['ci_high']:+.1f})" for _, r in e12.iterrows())
               + f" points at $N = {', '.join(str(n) for n in e12.index)}$; best minus worst over a factor 256: "
               + ", ".join(f"{r['range']:.1f}" for _, r in e12.iterrows())
               + f" points ({cfg.train_subset:,} images, {cfg.epochs} epochs, {numbers['seeds']} seeds).")
    return finding(form, summary, numbers)
