"""Chapter 07's sections on length generalisation (test bits/char at 1x, 2x and 4x the context,
with sinusoidal positions) and on models trained without position encodings.

    length_figure(lm, margin); length_table(lm, margin, registered)    # past the training length
    glue_values(length_numbers(lm, margin, registered))
    nope_figure(lm, nope); nope_table(lm, nope, margin, registered)    # without positions
    positions_table(lm, nope, margin); glue_values(nope_numbers(lm, nope, margin))

``lm`` and ``nope`` are :func:`polyattn.studies.causal.page.charlm_runs` and
:func:`polyattn.studies.causal.page.nope_runs` of the page; ``registered`` is
:func:`polyattn.studies.causal.page.register_rows` of the claims causal_scaling (and nope_lm) on the grid
the table shows.
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ...analysis import causal as ca
from ...analysis.tables import interval_cell, number_cell
from ...analysis.verdicts import comparison_verdict
from ...book.deliver import styled
from .bpc import result_forms
from .page import MULTIPLES, REGISTERED, Runs, compact, register_cell, scale_caption, show, unbroken

# --- length generalisation ------------------------------------------------------------------------------


def _length_groups(frame: pd.DataFrame) -> list[tuple[str, list[str]]]:
    """The variants in three groups read from the registry: the paper's polynomial with softmax,
    the alternatives whose rows sum to one, those whose rows need not."""
    from ... import activations

    spec_of = dict(zip(frame["variant"], frame["spec"]))
    order = [v for v in ca.variant_order() if v in spec_of]
    cubic = [v for v in order if activations.get(spec_of[v]).family == "poly" or v == "softmax"]
    rest = [v for v in order if v not in cubic]
    return [("softmax and the paper's cubic", cubic),
            ("rows sum to one", [v for v in rest if activations.get(spec_of[v]).rows_sum_to_one]),
            ("rows need not sum to one", [v for v in rest if not activations.get(spec_of[v]).rows_sum_to_one])]


def _length_lines(ax, lengths: pd.DataFrame, variants: Sequence[str], reference: Optional[str] = None) -> None:
    """Test bits/char against the evaluation length, one line per variant (the fixed reading of N
    dashed), ``reference`` thin and grey behind them."""
    from ...plotting import REFERENCE_GREY

    colours = ca.variant_colors()
    for variant, g in lengths[lengths["variant"].isin([*variants, reference])].groupby("variant", sort=False):
        err = np.vstack([g["mean"] - g["ci_low"], g["ci_high"] - g["mean"]])
        grey = variant == reference and variant not in variants
        ax.errorbar(g["multiple"], g["mean"], yerr=None if np.isnan(err).all() else np.nan_to_num(err),
                    color=REFERENCE_GREY if grey else colours[variant], lw=1.2 if grey else 1.8,
                    linestyle="--" if g["n_mode"].iloc[0] == "fixed" else "-", marker="" if grey else "o",
                    capsize=0 if grey else 3, label=show(variant), zorder=1 if grey else 2)
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(MULTIPLES), [f"{m}x" for m in MULTIPLES])
    ax.minorticks_off()
    ax.legend(fontsize=9, frameon=False, loc="upper left", labelspacing=0.3, handlelength=1.6)


def length_figure(lm: Runs, margin: float):
    """Three panels of a few variants each (test bits/char at 1x, 2x, 4x the context; softmax in
    grey where it is not one of them) and the fixed minus the per-row reading of N per seed."""
    if not lm:
        return None
    import matplotlib.pyplot as plt

    from ...plotting import stamp

    frame = lm.frame
    lengths = ca.length_summary(frame)
    rvf = ca.row_vs_fixed(frame, margin)
    context = lm.grid[0].options["context"]
    fig, axes = plt.subplots(2, 2, figsize=(8, 5.0))
    for ax, (title, variants) in zip(axes.flat, _length_groups(frame)):
        _length_lines(ax, lengths, variants, reference="softmax")
        ax.set_title(title)
        ax.set_ylabel("test bits per character")
    for ax in axes[1]:
        ax.set_xlabel(f"evaluation length (T = {context})")
    for ax in axes.flat[1:3]:
        ax.sharey(axes.flat[0])
    ax = axes.flat[3]
    seeds = frame.set_index(["activation", "seed"])
    colour = ca.variant_colors()[ca.FIXED]
    for name, m in ca.LENGTH_METRICS:
        delta = seeds.loc[ca.FIXED, name] - seeds.loc[ca.ROW, name]
        ax.scatter(np.full(len(delta), m), delta, color=colour, s=14, alpha=0.6)
    err = np.vstack([rvf["mean_diff"] - rvf["ci_low"], rvf["ci_high"] - rvf["mean_diff"]])
    ax.errorbar(rvf["multiple"], rvf["mean_diff"], yerr=None if np.isnan(err).all() else np.nan_to_num(err),
                color="black", marker="o", capsize=4)
    ax.axhline(0, color="grey", lw=0.8)
    ax.axhspan(-margin, margin, color="grey", alpha=0.15, lw=0)
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(MULTIPLES), [f"{m}x" for m in MULTIPLES])
    ax.minorticks_off()
    ax.set_ylabel("difference (bits/char)")
    ax.set_title(f"{show(ca.FIXED)} − {show(ca.ROW)}")
    stamp(fig, lm.preset, f"{len(lm.seeds)} seed(s); means, 95% t-intervals; dots: seeds; band: ±margin")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return fig


def _length_cell(row) -> str:
    """A paired difference at one length with its interval and result, or why there is none."""
    if not row["n_pairs"]:
        return "diverged"
    return f"{unbroken(interval_cell(row['mean_diff'], row['ci_low'], row['ci_high'], '+.2f'))}, {comparison_verdict(row).form}"


def length_rows(diffs: pd.DataFrame, label_of, registered: Mapping[tuple, dict] = None) -> list[dict]:
    """One row per compared pair of ``diffs`` (columns ``activation`` and ``multiple`` at least), one
    column per evaluation length; ``label_of(activation)`` names the row; a comparison the register
    holds (``registered`` keyed by the row's (activation, multiple)) shows the register's numbers."""
    registered = registered or {}
    rows = {}
    for _, r in diffs.iterrows():
        row = rows.setdefault(r["activation"], {"comparison": label_of(r["activation"])})
        reg = registered.get((r["activation"], int(r["multiple"])))
        row[f"at {int(r['multiple'])}x"] = (f"{unbroken(register_cell(reg, '+.2f'))}, {reg['Result']}" if reg
                                            else _length_cell(r))
    return list(rows.values())


def length_table(lm: Runs, margin: float, registered: Mapping[tuple, dict]):
    """Every variant against softmax at 2x and 4x the context (Holm within each length; at 1x the
    table of bits per character holds them), and the fixed minus the per-row reading of N at 2x and
    4x (Holm over its three lengths); ``registered``: the register's rows of the sinusoidal grid
    (:func:`polyattn.studies.causal.page.register_rows` of the claim causal_scaling)."""
    if not lm:
        return None
    frame = lm.frame
    vs_softmax = ca.lengths_vs_softmax(frame, margin)
    reg_soft, reg_rvf = _by_length(registered, set(vs_softmax["activation"]), "softmax"), _by_length(
        registered, {ca.FIXED}, ca.ROW)
    rows = length_rows(vs_softmax[vs_softmax["multiple"] != 1], lambda v: f"{show(v)} − softmax", reg_soft)
    rvf = ca.row_vs_fixed(frame, margin).assign(activation=ca.FIXED)
    rows += length_rows(rvf[rvf["multiple"] != 1], lambda v: f"{show(ca.FIXED)} − {show(ca.ROW)}", reg_rvf)
    note = (f"; {REGISTERED} the claim register's comparison, Holm over its own" if any(
        m != 1 for _, m in (*reg_soft, *reg_rvf)) else "")
    return compact(styled(rows, (
        f"Same-seed difference in test bits/char [95% t-interval] and result past the training length (at 1x: the "
        f"table above and, for the last row, the text), Holm within each length (the last row: over its three "
        f"lengths), margin ±{margin:g}{note}. {scale_caption(lm)}; sinusoidal positions past T that the models never saw")))


def _by_length(registered: Mapping[tuple, dict], candidates, baseline: str) -> dict[tuple, dict]:
    """The register's rows of ``candidates`` against ``baseline`` keyed by (candidate, multiple)."""
    metric_of = {m: name for name, m in ca.LENGTH_METRICS}
    return {(v, m): registered[(v, baseline, metric_of[m])] for v in candidates for m in MULTIPLES
            if (v, baseline, metric_of[m]) in registered}


def _spread(series: pd.Series) -> str:
    """"+1.300 for Polyak-Sum to +1.906 for sigmoid": the smallest and largest value, each with its variant."""
    s = series.dropna()
    if s.empty:
        return "not measured"
    return (f"{number_cell(s.min(), '+.3f')} for {show(s.idxmin())} to {number_cell(s.max(), '+.3f')} "
            f"for {show(s.idxmax())}")


def _change(lengths: pd.DataFrame, a: int, b: int) -> pd.Series:
    at = {m: lengths[lengths["multiple"] == m].set_index("variant")["mean"] for m in (a, b)}
    return at[b] - at[a]


def length_numbers(lm: Runs, margin: float, registered: Mapping[tuple, dict] = None) -> dict:
    """How the test bits/char change from 1x to 2x and 4x across variants, the lowest at 4x, and the
    fixed minus the per-row reading of N at the training length (the register's numbers where
    ``registered`` holds them, marked ‡)."""
    keys = ("ch07_rise_2x", "ch07_growth_4x", "ch07_best_4x", "ch07_rvf_1x", "ch07_rvf_past", "ch07_past_results")
    if not lm:
        return dict.fromkeys(keys, lm.missing)
    lengths = ca.length_summary(lm.frame)
    x4 = lengths[lengths["multiple"] == 4].set_index("variant")["mean"].dropna()
    rvf = ca.row_vs_fixed(lm.frame, margin).set_index("multiple")
    vs_softmax = ca.lengths_vs_softmax(lm.frame, margin)
    past = vs_softmax[vs_softmax["multiple"] != 1]
    forms = pd.Series(result_forms(past)).value_counts() if len(past) else pd.Series(dtype=int)
    rvf_past = ca.row_vs_fixed(lm.frame, margin)
    rvf_past = "; ".join(f"{_length_cell(r)} at {int(r['multiple'])}x" for _, r in rvf_past.iterrows()
                         if r["multiple"] != 1)
    reg = (registered or {}).get((ca.FIXED, ca.ROW, "test_bpc"))
    at_1x = (f"{register_cell(reg)} bits/char ({reg['numbers'].n} pairs)" if reg and reg["numbers"].n
             else _with_pairs(rvf.loc[1]))
    return {"ch07_rise_2x": _spread(_change(lengths, 1, 2)), "ch07_growth_4x": _spread(_change(lengths, 1, 4)),
            "ch07_best_4x": f"{show(x4.idxmin())}, {x4.min():.3f} bits/char" if len(x4) else "none",
            "ch07_rvf_1x": at_1x, "ch07_rvf_past": rvf_past.replace("\u00a0", " ") or "not measured",
            "ch07_past_results": "; ".join(f"{n} {f}" for f, n in forms.items()) + f" (of {len(past)})"
            if len(past) else "not measured"}


def _with_pairs(row) -> str:
    """"+0.066 [+0.010, +0.121] bits/char (3 pairs)"."""
    if not row["n_pairs"]:
        return "no pair (diverged)"
    n = int(row["n_pairs"])
    return (f"{interval_cell(row['mean_diff'], row['ci_low'], row['ci_high'], '+.3f')} bits/char "
            f"({n} pair{'s' if n != 1 else ''})")


# --- without position encodings ----------------------------------------------------------------------------


def nope_figure(lm: Runs, nope: Runs):
    """Test bits/char at 1x, 2x and 4x of the variants trained without positions, beside the same
    variants with sinusoidal positions."""
    if not (lm and nope):
        return None
    import matplotlib.pyplot as plt

    from ...plotting import stamp

    shown = list(dict.fromkeys(nope.frame["variant"]))
    context = lm.grid[0].options["context"]
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.6), sharey=True)
    for ax, runs, title in ((axes[0], lm, "sinusoidal positions"), (axes[1], nope, "no positions (NoPE)")):
        _length_lines(ax, ca.length_summary(runs.frame), shown)
        ax.set_xlabel(f"evaluation length (T = {context})")
        ax.set_title(title)
    axes[0].set_ylabel("test bits per character")
    axes[0].get_legend().remove()
    stamp(axes[1], nope.preset, f"sinusoidal: {len(lm.seeds)} seed(s); NoPE: {len(nope.seeds)} seed(s)",
          loc="lower right")
    fig.tight_layout()
    return fig


def nope_table(lm: Runs, nope: Runs, margin: float, registered: Mapping[tuple, dict]):
    """The section's comparisons at 1x, 2x and 4x: each variant without positions against softmax
    without positions (Holm within each length) and the fixed minus the per-row reading of N (Holm
    over the lengths)."""
    if not (lm and nope):
        return None
    frame = nope.frame
    vs_softmax = pd.concat([ca.compare_variants(frame, "softmax", name, margin).assign(multiple=m)
                            for name, m in ca.LENGTH_METRICS], ignore_index=True)
    reg_soft = _by_length(registered, set(vs_softmax["activation"]), "softmax")
    rows = length_rows(vs_softmax, lambda v: f"{show(v)} − softmax", reg_soft)
    rvf = ca.row_vs_fixed(frame, margin).assign(activation=ca.FIXED)
    reg_rvf = _by_length(registered, {ca.FIXED}, ca.ROW)
    rows += length_rows(rvf, lambda v: f"{show(ca.FIXED)} − {show(ca.ROW)}", reg_rvf)
    note = (f"; {REGISTERED} the claim register's comparison (claims nope lm and causal scaling, Holm over each "
            "claim's own)" if reg_soft or reg_rvf else "")
    return compact(styled(rows, (
        f"Without position encodings: same-seed differences in test bits/char [95% t-interval] and result; against "
        f"softmax Holm within each length, {show(ca.FIXED)} − {show(ca.ROW)} over its lengths; margin "
        f"±{margin:g}{note}. {nope.stored} runs without positions stored ({len(nope.seeds)} seeds), everything "
        "else as above")))


def positions_table(lm: Runs, nope: Runs, margin: float):
    """Each variant of the grid without positions minus the same variant with sinusoidal positions,
    same seed, at 1x, 2x and 4x (Holm over all of them)."""
    if not (lm and nope):
        return None
    effect = ca.positions_effect(lm.frame, nope.frame, margin).assign(activation=lambda d: d["variant"])
    rows = length_rows(effect, lambda v: f"{show(v)}: none − sinusoidal")
    return compact(styled(rows, (
        f"No positions minus sinusoidal positions: same-seed differences in test bits/char [95% t-interval] and "
        f"result, Holm over the {len(effect)} comparisons, margin ±{margin:g}; seeds trained both ways only")))


def nope_numbers(lm: Runs, nope: Runs, margin: float) -> dict:
    """How much the variants without positions change from 1x to 4x, what dropping the positions costs
    at the training length."""
    keys = ("ch07_nope_found", "ch07_nope_growth_4x", "ch07_sin_growth_4x", "ch07_nope_cost_1x")
    if not (lm and nope):
        return dict.fromkeys(keys, nope.missing or "no run of this grid is stored yet")
    shown = list(dict.fromkeys(nope.frame["variant"]))
    effect = ca.positions_effect(lm.frame, nope.frame, margin)
    at1 = effect[effect["multiple"] == 1].set_index("variant")["mean_diff"]
    sin = _change(ca.length_summary(lm.frame), 1, 4).reindex(shown)
    return {"ch07_nope_found": f"{nope.stored} planned runs ({len(nope.seeds)} of "
                               f"{len({c.seed for c in nope.grid})} seeds)",
            "ch07_nope_growth_4x": _spread(_change(ca.length_summary(nope.frame), 1, 4)),
            "ch07_sin_growth_4x": _spread(sin), "ch07_nope_cost_1x": _spread(at1)}
