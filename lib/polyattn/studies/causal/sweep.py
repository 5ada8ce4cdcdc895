"""Chapter 07's section on the √N scaling across training lengths (grid ``causal_length_sweep``):
its figure, the growth of the unscaled cube's deficit per doubling of T, and the register's
comparisons of its two claims.

    sweep = sweep_runs(page, seeds, recompute)      # polyattn.studies.causal.page
    glue_values(sweep_numbers(sweep)); sweep_figure(sweep, margin)
    sweep_table(claims, preset)                     # the two claims' comparisons with stored pairs
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pandas as pd

from ...analysis import length_sweep as ls
from ...analysis.tables import interval_cell, number_cell
from ...claims import claim
from ...claims.floors import ngram_floor
from ...config import TrainConfig
from .page import Runs, claims_table, training_steps


def sweep_figure(sweep: Runs, margin: float):
    """:func:`polyattn.analysis.length_sweep.sweep_figure` for the page, stamped; None while no run
    of the grid has trained."""
    from ...plotting import stamp

    lengths = sorted({int(c.options["context"]) for c in sweep.grid})
    fig = ls.sweep_figure(sweep.frame, lengths=lengths, margin=margin, chance=claim("length_scale_needed").chance)
    if fig is not None:
        if len(fig.axes) > 1:                # the page's width, so that its type is not scaled down
            fig.set_size_inches(8, 3.9)
        stamp(fig, sweep.preset, "position-free micro character LM, no clipping; dots: seeds")
        fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def sweep_numbers(sweep: Runs) -> dict:
    """How many planned runs are stored (and which diverged), and the growth of x³ − x³/√(i+1) per
    doubling of T: each seed's slope, then their mean with its 95% t-interval."""
    keys = ("ch07_sweep_stored", "ch07_sweep_slope")
    lengths = sorted({int(c.options["context"]) for c in sweep.grid})
    design = {"ch07_sweep_lengths": ", ".join(map(str, lengths[:-1])) + f" and {lengths[-1]}" if len(lengths) > 1
              else ", ".join(map(str, lengths)),
              "ch07_sweep_seeds": len({c.seed for c in sweep.grid})}
    if not sweep.loaded:
        return {**design, **dict.fromkeys(keys, sweep.missing)}
    p = ls.progress(sweep.frame, len(sweep.grid))
    stored = f"{p['stored']} of the {p['planned']}"
    if p["diverged"]:
        stored += f" ({p['diverged']} diverged: {'; '.join(p['diverged_runs'])})"
    s = ls.slope_over_log_length(sweep.frame, "x³", "x³/√(i+1)")
    slope = _slope_text(s, "at two training lengths")
    if not s["seeds"] and not len(ls.paired_by_length(sweep.frame, "x³", "x³/√(i+1)")):
        slope += ", nor at one (so the figure has no panel of differences)"
    return {**design, "ch07_sweep_stored": stored, "ch07_sweep_slope": slope}


def _slope_text(s: dict, over: str) -> str:
    if not s["seeds"]:
        return f"none yet: no seed has both x³ and x³/√(i+1) stored {over}"
    per_seed = ", ".join(f"seed {k}: {number_cell(v, '+.3f')}" for k, v in s["per_seed"].items())
    return (f"{interval_cell(s['slope'], s['ci_low'], s['ci_high'], '+.3f')} bits/char per doubling over "
            f"{s['seeds']} seed(s) ({per_seed})")


def rope_numbers(rope: Runs) -> dict:
    """The RoPE sweep's budget in steps, how many of its planned runs are stored, and the claim's two
    registered statistics of growth: the slope of x³ − x³/√(i+1) over log2 T, and at the longest T
    over log2 of the keys a query sees (position bins)."""
    steps = sorted({training_steps(c) for c in rope.grid})
    lengths = sorted({int(c.options["context"]) for c in rope.grid})
    out = {"ch07_rope_steps": ", ".join(f"{s:,}" for s in steps),
           "ch07_rope_stored": rope.stored if rope.loaded else rope.missing,
           "ch07_rope_longest": f"{lengths[-1]:,}" if lengths else "the longest length",
           "ch07_rope_gate_tolerance": f"{claim('rope_scale_needed').gate.within_of[2]:g}"}
    if not rope.loaded:
        return {**out, "ch07_rope_slope_t": rope.missing, "ch07_rope_slope_position": rope.missing,
                "ch07_rope_change": rope.missing, "ch07_rope_growth_reading": "", "ch07_rope_by_length": rope.missing}
    frame = ls.sweep_frame(rope.records)
    out["ch07_rope_change"] = change_text(ls.change_with_length(frame, lengths[0], lengths[-1]), lengths)
    over_t = ls.slope_over_log_length(frame, "x³", "x³/√(i+1)")
    over_position = ls.position_slope(rope.records, "x³", "x³/√(i+1)", lengths[-1])
    out["ch07_rope_by_length"] = by_length_text(ls.paired_by_length(frame, "x³", "x³/√(i+1)"))
    return {**out, "ch07_rope_slope_t": _slope_text(over_t, "at two training lengths"),
            "ch07_rope_slope_position": _slope_text(over_position, f"at T = {lengths[-1]}"),
            "ch07_rope_growth_reading": growth_reading(over_t, over_position)}


def by_length_text(paired: pd.DataFrame) -> str:
    """x³ − x³/√(i+1) at each training length, same seed, with its 95% interval and which cube it
    favours where the interval excludes zero."""
    if paired.empty:
        return "not yet measured (no seed has both cubes stored at any length)"

    def favours(r) -> str:
        if r.ci_low > 0:
            return ", x³/√(i+1) ahead"
        if r.ci_high < 0:
            return ", x³ ahead"
        return ""

    return "; ".join(f"T = {r.T:,}: {interval_cell(r.difference, r.ci_low, r.ci_high, '+.3f')} "
                     f"({r.pairs} seed{'s' if r.pairs != 1 else ''}{favours(r)})" for r in paired.itertuples())


def growth_reading(over_t: dict, over_position: dict) -> str:
    """What the two registered slopes of x³ − x³/√(i+1) say, in one sentence: each one's sign where
    its 95% interval excludes zero, else that its sign is not resolved."""
    def sign(s: dict) -> str:
        if not s["seeds"] or not np.isfinite(s["ci_low"]):
            return "not yet measured"
        if s["ci_low"] > 0:
            return "positive"
        if s["ci_high"] < 0:
            return "negative"
        return "of unresolved sign"

    t, pos = sign(over_t), sign(over_position)
    if t == pos == "positive":
        return ("Both slopes are positive, the direction the theory predicts: the unscaled cube loses ground "
                "to the scaled one as T grows and, within a window, as a query sees more keys.")
    said = f"The slope over T is {t} and the slope over position is {pos}"
    predicted = [w for w, v in (("over T", t), ("over position", pos)) if v == "positive"]
    return said + (f"; only the slope {predicted[0]} has the sign the theory predicts." if predicted
                   else "; neither shows the growth the theory predicts.")


def change_text(changes: pd.DataFrame, lengths: Sequence[int]) -> str:
    """Each variant's move from the shortest to the longest training length, paired by seed, in words."""
    if changes.empty:
        return f"not yet measured (no seed of any variant is stored at both T = {lengths[0]} and T = {lengths[-1]:,})"
    return "; ".join(
        f"{r.variant} {r.short:.3f} → {r.long:.3f}, "
        f"{interval_cell(r.change, r.ci_low, r.ci_high, '+.3f')} ({r.pairs} seed{'s' if r.pairs != 1 else ''})"
        for r in changes.itertuples())


def rope_figures(rope: Runs, margin: float) -> list:
    """The RoPE sweep's figures, each stamped: bits/char against T with the paired differences, and
    x³ − x³/√(i+1) by position in the window; those with nothing stored yet are left out."""
    from ...plotting import stamp

    if not rope.records:
        return []
    frame = ls.sweep_frame(rope.records)
    lengths = sorted({int(c.options["context"]) for c in rope.grid})
    figs = []
    fig = ls.sweep_figure(frame, lengths=lengths, margin=margin, chance=claim("rope_scale_needed").chance)
    if fig is not None:
        fig.set_size_inches(8, 3.9)
        stamp(fig, rope.preset, "micro character LM, rotary positions; dots: seeds")
        fig.tight_layout(rect=(0, 0.03, 1, 1))
        figs.append(fig)
    fig = ls.position_figure(rope.records, "x³", "x³/√(i+1)", margin=margin)
    if fig is not None:
        stamp(fig, rope.preset, "rotary positions; binned test loss; dots: seeds")
        fig.tight_layout(rect=(0, 0.04, 1, 1))
        figs.append(fig)
    return figs


#: The two claims of the length sweep by short names in its table.
SWEEP_CLAIMS = {"length_scale_needed": "scale needed", "length_scale_follows_n": "follows N"}


def sweep_table(delivered: Sequence, preset: str, roles: Optional[Sequence[str]] = ("primary", "check")):
    """The two sweep claims' comparisons of ``roles`` that have stored pairs, as one table; None while
    none has, or when ``preset`` is not the book's (the register reads the book's records only)."""
    if not delivered or preset != "book":
        return None
    scale = delivered[0].verdict.claim.scale
    controls = sorted({c.margin for d in delivered for c in getattr(d.verdict.claim, "comparisons", ())
                       if c.role == "check" and getattr(c, "margin", None)})
    control = f" (the control ±{', ±'.join(f'{m:g}' for m in controls)})" if controls else ""
    which = f"{' and '.join(roles)} comparisons" if roles else "comparisons"
    return claims_table(delivered, (
        f"The claim register's {which} of the length sweep that have stored pairs: same-seed difference in "
        f"bits/char, margin ±{delivered[0].verdict.claim.margin:g}{control}, Holm within each claim. {scale}"),
        names=SWEEP_CLAIMS, roles=roles)


def floor_numbers(records: Sequence[dict]) -> dict:
    """The position-free sweep set beside the count-based n-gram floors of the same split
    (:mod:`polyattn.claims.floors`): per training length, the range of every model's final test
    bits/char, the count-based bigram and trigram, and which lengths no model took below the
    trigram (``ch07_sweep_floor_*``)."""
    by_length: dict[int, list[float]] = {}
    for r in records:
        if r.get("status") == "ok" and r.get("metrics"):
            by_length.setdefault(int(r["config"]["options"]["context"]), []).append(float(r["metrics"][-1]["test_bpc"]))
    bigram, trigram = ngram_floor(2), ngram_floor(3)
    stuck = [t for t, vals in sorted(by_length.items()) if min(vals) >= trigram]
    learned = [t for t, vals in sorted(by_length.items()) if min(vals) < trigram]
    ranges = "; ".join(f"T = {t}: {min(v):.2f} to {max(v):.2f}" for t, v in sorted(by_length.items()))
    return {"ch07_sweep_floor_ranges": ranges or "no run stored",
            "ch07_sweep_floor_bigram": f"{bigram:.2f}", "ch07_sweep_floor_trigram": f"{trigram:.2f}",
            "ch07_sweep_floor_stuck": " and ".join(f"T = {t}" for t in stuck) or "no length",
            "ch07_sweep_floor_learned": " and ".join(f"T = {t}" for t in learned) or "no length"}


def probe_table(records: Sequence[dict]):
    """Softmax's probes with rotary positions, one row per training length and step budget: its final
    test bits/char, how far below the count-based trigram, and how far from its own T = 64 result at
    the same budget (the gate the sweep's baseline must pass); None without records."""
    if not records:
        return None
    trigram = ngram_floor(3)
    rows = []
    for r in records:
        if r.get("status") != "ok":
            continue
        cfg = TrainConfig.from_dict(r["config"])
        rows.append({"T": int(cfg.options["context"]), "steps": training_steps(cfg),
                     "test bits/char": float(r["metrics"][-1]["test_bpc"])})
    frame = pd.DataFrame(rows).sort_values(["steps", "T"]).reset_index(drop=True)
    frame["below the trigram"] = trigram - frame["test bits/char"]
    at_64 = frame[frame["T"] == frame["T"].min()].set_index("steps")["test bits/char"]
    frame[f"above T = {frame['T'].min()}"] = frame["test bits/char"] - frame["steps"].map(at_64)
    return frame.round(3)


def probe_shown(table):
    """:func:`probe_table` as the page shows it: signed differences with a true minus sign."""
    if table is None:
        return None
    shown = table.copy()
    for col in shown.columns[3:]:
        shown[col] = [f"{v:+.3f}".replace("-", "\u2212") for v in shown[col]]
    shown["test bits/char"] = [f"{v:.3f}" for v in shown["test bits/char"]]
    return shown
