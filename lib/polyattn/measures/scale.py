"""Chapter 04's measured claim on the paper's Figure 1: does the best constant c of c*x^3 move
with the sequence length N like 1/sqrt(N)?

Two sweeps of c at three lengths are stored: ``vit_scale`` (short training) and
``vit_scale_long`` (far longer training, with a wider grid of c).  The longer sweep decides once
all its runs are stored, the short one until then.  Per length the best constant, its margin over
the runner-up and the interpolated optimum c* come from :func:`polyattn.analysis.best_constant`;
the slope of log c* on log N, with a bootstrap interval over seeds, is read against the
theory's -1/2 and against 0 by :func:`polyattn.analysis.sweep.scale_form`.

A sweep is *flat* at a length when the mean accuracies of all its constants lie within
:data:`FLAT_SPREAD` points of each other: the grid then identifies no best constant there, so
neither does a slope through it.  The spread is stated for every length of the longer sweep whose
runs are all stored, whether or not that sweep decides yet.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from .. import analysis
from ..analysis.sweep import scale_form
from ..claims.spec import Finding
from ..display import typographic
from .stored import GridRecords, grid_records

SHORT_GRID = "vit_scale"
LONG_GRID = "vit_scale_long"
#: Bootstrap draws of the slope's interval (seeds resampled), and their seed.
N_BOOT = 1000
SEED = 0
#: Mean accuracies (points) of all constants within this of each other make a length flat: the
#: ViT chapters' equivalence margin, the size of a difference the book treats as no difference.
FLAT_SPREAD = 1.0


def sweep_result(grid: GridRecords):
    """:func:`polyattn.analysis.best_constant` of a sweep's stored runs (None without runs)."""
    if not grid.records:
        return None
    return analysis.best_constant(analysis.final_accuracy(grid.records), n_boot=N_BOOT, seed=SEED)


def complete_lengths(grid: GridRecords) -> list[int]:
    """The lengths N of a sweep whose planned runs are all stored."""
    planned, stored = {}, {}
    for c in grid.configs:
        planned[c.seq_len] = planned.get(c.seq_len, 0) + 1
    for c in grid.stored_configs:
        stored[c.seq_len] = stored.get(c.seq_len, 0) + 1
    return sorted(n for n in planned if stored.get(n, 0) == planned[n])


def flatness(cells, seq_len: int) -> dict:
    """How flat a sweep is at one length, from :func:`best_constant`'s ``cells``: the spread of
    the constants' mean accuracies (points), the constants with the highest and lowest mean, the
    largest seed-to-seed standard deviation of a constant, and whether the spread is under
    :data:`FLAT_SPREAD`."""
    g = cells[(cells["seq_len"] == seq_len) & np.isfinite(cells["mean"])].sort_values("c")
    top, bottom = g.loc[g["mean"].idxmax()], g.loc[g["mean"].idxmin()]
    spread = float(top["mean"] - bottom["mean"])
    return {"N": int(seq_len), "spread": spread, "flat": spread < FLAT_SPREAD,
            "c from": g["c_label"].iloc[0], "c to": g["c_label"].iloc[-1],
            "best c": top["c_label"], "best accuracy": float(top["mean"]),
            "worst c": bottom["c_label"], "worst accuracy": float(bottom["mean"]),
            "largest seed sd": float(g["std"].max()),
            "accuracy": {lbl: float(m) for lbl, m in zip(g["c_label"], g["mean"])}}


def decide(best, flat_lengths) -> str:
    """The form: :func:`polyattn.analysis.sweep.scale_form` of the deciding sweep, and ``inconclusive
    at this scale`` when that sweep is flat at some length or has no runs."""
    if best is None or flat_lengths:
        return "inconclusive at this scale"
    return scale_form(best)


def _sweep_scale(grid: GridRecords) -> str:
    """"1,000 images for 5 epochs", or "20,000 images (10,000 at $N = 197$) for 10 epochs"."""
    images = {}
    for c in grid.configs:
        images.setdefault(c.train_subset, []).append(c.seq_len)
    if not images:
        return "no runs planned"
    common = max(images, key=lambda k: len(images[k]))
    others = "; ".join(f"{k:,} at $N = {', '.join(str(n) for n in sorted(set(v)))}$"
                       for k, v in sorted(images.items()) if k != common)
    return f"{common:,} images" + (f" ({others})" if others else "") + f" for {grid.configs[0].epochs} epochs"


def _lengths_text(ns) -> str:
    ns = [f"$N = {n}$" for n in ns]
    return ns[0] if len(ns) == 1 else ", ".join(ns[:-1]) + " and " + ns[-1]


def fig1_scale(root: Optional[Path] = None) -> Finding:
    """The best constant per length and the slope of log c* on log N with its interval, from the
    deciding sweep, and how flat the longer sweep is at each of its complete lengths."""
    short, long = grid_records(SHORT_GRID, root), grid_records(LONG_GRID, root)
    deciding = long if long.complete else short
    best = sweep_result(deciding)
    numbers = {"deciding sweep": LONG_GRID if deciding is long else SHORT_GRID,
               "deciding sweep scale": _sweep_scale(deciding),
               "deciding sweep runs stored": deciding.stored, "deciding sweep runs planned": deciding.planned,
               "long sweep runs stored": long.stored, "long sweep runs planned": long.planned,
               "long sweep scale": _sweep_scale(long), "theory slope": -0.5, "flat spread (points)": FLAT_SPREAD}
    if best is None:
        return Finding("inconclusive at this scale", f"No run of the scale sweep is stored ({numbers['deciding sweep scale']}).",
                       numbers)
    t = best.table.sort_values("seq_len")
    deciding_flat = [flatness(best.cells, n) for n in t["seq_len"]]
    flat_lengths = [f["N"] for f in deciding_flat if f["flat"]]
    for r in t.itertuples():
        numbers[f"best c at N = {int(r.seq_len)}"] = r.best_c_label
        numbers[f"best accuracy at N = {int(r.seq_len)} (%)"] = float(r.best_mean)
        numbers[f"c* at N = {int(r.seq_len)}"] = float(r.c_star)
    lo, hi = best.slope_ci
    numbers.update({"slope": float(best.slope), "slope CI low": float(lo), "slope CI high": float(hi),
                    "deciding sweep flat lengths": ", ".join(str(n) for n in flat_lengths) or "none"})
    long_flat = _long_flatness(long, best if deciding is long else None)
    for f in long_flat:
        key = f"long sweep N = {f['N']}"
        numbers.update({f"{key}: spread (points)": f["spread"], f"{key}: flat": "flat" if f["flat"] else "not flat",
                        f"{key}: largest seed sd (points)": f["largest seed sd"],
                        **{f"{key}: c = {c} (%)": v for c, v in f["accuracy"].items()}})
    if long_flat:
        flattest = min(long_flat, key=lambda f: f["spread"])
        numbers.update({"long sweep flattest N": flattest["N"], "long sweep flattest spread (points)": flattest["spread"],
                        "long sweep flattest best c": flattest["best c"],
                        "long sweep flattest best accuracy (%)": flattest["best accuracy"],
                        "long sweep flattest worst c": flattest["worst c"],
                        "long sweep flattest worst accuracy (%)": flattest["worst accuracy"],
                        "long sweep flattest largest seed sd (points)": flattest["largest seed sd"],
                        "long sweep flattest reading": "flat" if flattest["flat"] else "not flat",
                        "long sweep complete lengths": ", ".join(str(f["N"]) for f in long_flat)})
    form = decide(best, flat_lengths)
    return Finding(form, typographic(_summary(best, numbers, deciding_flat, long_flat, deciding is long)), numbers)


def _long_flatness(long: GridRecords, best_long) -> list[dict]:
    """:func:`flatness` of the longer sweep at each length whose runs are all stored."""
    lengths = complete_lengths(long)
    if not lengths:
        return []
    if best_long is None:
        final = analysis.final_accuracy(list(long.records))
        best_long = analysis.best_constant(final[final["seq_len"].isin(lengths)], n_boot=0)
    return [flatness(best_long.cells, n) for n in lengths]


def _summary(best, numbers: dict, deciding_flat: list, long_flat: list, long_decides: bool) -> str:
    t = best.table.sort_values("seq_len")
    lo, hi = best.slope_ci
    text = "Best $c$ in $c\\,x^3$: " + ", ".join(f"{lbl} at $N = {n}$" for lbl, n in zip(t["best_c_label"], t["seq_len"]))
    if best.slope == best.slope:
        ci = f" (95% CI {lo:+.2f} to {hi:+.2f})" if lo == lo and hi > lo else ""
        text += f"; the slope of $\\log c^*$ on $\\log N$ is {best.slope:+.2f}{ci}, against $-1/2$ for $c \\propto 1/\\sqrt{{N}}$"
    else:
        text += "; no slope is fitted (fewer than two lengths with an interior optimum)"
    text += f" ({numbers['deciding sweep scale']})"
    flat = [f for f in deciding_flat if f["flat"]]
    if flat:
        text += (f"; flat at {_lengths_text([f['N'] for f in flat])}, where every constant's mean accuracy lies within "
                 f"{FLAT_SPREAD:g} point of the others")
    text += "."
    if long_flat and not long_decides:
        text += " " + _long_sentence(numbers, long_flat)
    return text


def _long_sentence(numbers: dict, long_flat: list) -> str:
    """How flat the longer sweep is at its complete lengths, in one sentence."""
    spreads = " and ".join(f"{f['spread']:.2f}{' points' if k == 0 else ''} at $N = {f['N']}$"
                           for k, f in enumerate(long_flat))
    f = min(long_flat, key=lambda x: x["spread"])
    flat = [x["N"] for x in long_flat if x["flat"]]
    if len(flat) == len(long_flat):
        reading = f"within the {FLAT_SPREAD:g}-point margin, so its best constant is not identified there"
    elif flat:
        reading = (f"within the {FLAT_SPREAD:g}-point margin at {_lengths_text(flat)}, where its best constant is "
                   "not identified")
    else:
        reading = f"beyond the {FLAT_SPREAD:g}-point margin at every one of them"
    return (f"The longer sweep, {numbers['long sweep scale']} with {numbers['long sweep runs stored']} of "
            f"{numbers['long sweep runs planned']} runs stored: where its runs are complete, its mean accuracy over "
            f"$c$ from {f['c from']} to {f['c to']} spans {spreads} (at $N = {f['N']}$ from "
            f"{f['worst accuracy']:.1f}% with $c = {f['worst c']}$ to {f['best accuracy']:.1f}% with "
            f"$c = {f['best c']}$, and a seed standard deviation up to {f['largest seed sd']:.2f} points), {reading}.")
