"""Chapter 09, the critique grids trained at Table 1's scale: the powers, the Q/K controls and the
weight decay of every matrix, described.  A comparison the register does not hold is shown as
description (difference, interval, pairs) without a result word; the register's own comparisons
are :mod:`.critique_register`'s.
"""
from __future__ import annotations

import math
import re
from typing import Iterable

import numpy as np
import pandas as pd

from ... import analysis
from ...analysis import critique_runs
from ...analysis.tables import interval_cell, number_cell
from ...book.deliver import styled
from ...claims import claim
from ...claims.constants import FASHION_MNIST_CHANCE
from ...display import label as display_label
from ...display import name
from ...labels import length_aware_gain, qk_variants
from .page import SCALED, UNSCALED, Runs, before_after, first_only, nothing_stored

#: The powers drawn per layer over training (the table holds every power).
LAYER_POWERS = ("poly:p=1", "poly:p=3", "poly:p=5", "poly:p=7")


# --- table cells and glued values of the trained grids --------------------------------------------


def qk_name(label: str) -> str:
    """A label of the library's grids ("x^3, Q/K init x0.72") as the reader reads it ("x³, Q/K init ×0.72")."""
    return re.sub(r" x(?=\d)", " ×", display_label(label))


def _and(items: Iterable[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _signed(x: float, fmt: str = "+.2f") -> str:
    return format(x, fmt)


def interval_phrase(estimate: float, low: float, high: float, unit: str = "points", fmt: str = "+.2f") -> str:
    """"−7.02 points (95% CI −13.91 to −0.14)"; the estimate alone, "no interval", when the interval
    is missing (one seed); "not computed" when the estimate is."""
    if estimate is None or estimate != estimate:
        return "not computed"
    if low is None or low != low or high is None or high != high:
        return f"{_signed(estimate, fmt)} {unit} (no interval)"
    return f"{_signed(estimate, fmt)} {unit} (95% CI {_signed(low, fmt)} to {_signed(high, fmt)})"


def description_cell(row) -> str:
    """A description cell of one paired difference: "−0.52 [−4.19, +3.16] (3 pairs)", no result word."""
    n = int(row["n_pairs"])
    if n == 0:
        return "no pairs"
    return f"{interval_cell(row['mean_diff'], row['ci_low'], row['ci_high'], '+.1f')} ({n} pair{'s' if n != 1 else ''})"


def recipe_caption(config, preset: str, stored: int, planned: int) -> str:
    """The caption's account of a trained grid: recipe, data, runs stored, preset and the
    deviations from the paper."""
    clip = ("gradients clipped at norm 1 (the paper does not say it clips)" if config.clip_grad else
            "no gradient clipping")
    return (f"micro ViT on Fashion-MNIST ({config.train_subset:,} training and {config.test_subset:,} test images, "
            f"N = {config.seq_len} tokens, {config.epochs} epochs of batch {config.batch_size}), {clip}; "
            f"{stored} of {planned} runs stored; preset {preset}.  Deviation from the paper: a micro ViT on "
            "Fashion-MNIST, not its ViTs on Tiny-ImageNet and ImageNet-1k")


# --- the powers -----------------------------------------------------------------------------------


def _power_means(runs: Runs) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The powers grid's final metrics and, per activation and layer, the gradient arriving at the
    attention weights at the first and last probe (mean over heads and seeds)."""
    final = analysis.final_metrics(runs.records)
    curves = analysis.probe_curves(analysis.probe_frame(runs.records, ["grad_attn_fro"]))
    return final, critique_runs.gradient_change(curves)


def powers_table(runs: Runs, preset: str):
    """Per activation of the powers grid: accuracy with its t-interval over seeds, the gradient
    arriving at the attention weights at the first → last probe (mean over layers, heads and seeds),
    and, for the sign-keeping forms (no claim of the register), the paired difference from
    x^3/sqrt(N) as description."""
    if not runs.records:
        return nothing_stored()
    final, change = _power_means(runs)
    grad = change.groupby("activation")[["first", "last"]].mean()
    diffs = analysis.paired_difference(final, baseline=SCALED).set_index("activation")
    rows = []
    for act, g in final.groupby("activation", sort=False):
        p, odd = critique_runs.power_of(act)
        m, lo, hi = analysis.t_interval(100 * g["test_acc"].dropna())
        rows.append({"activation": name(act), "runs": f"{int((g['status'] == 'ok').sum())} of {len(g)}",
                     "test accuracy (%) [95% CI]": interval_cell(m, lo, hi, ".1f"),
                     "‖∂L/∂A‖_F, first → last probe": before_after(*grad.loc[act, ["first", "last"]])
                     if act in grad.index else "",
                     f"sign kept: Δ vs {name(SCALED)} (points)": description_cell(diffs.loc[act])
                     if odd and act in diffs.index else ""})
    recipe = recipe_caption(runs.config, preset, len(runs.records), len(runs.grid))
    return styled(rows, "The powers trained to the end of Table 1's schedule: description, not a test (the register's "
                        f"comparisons of the plain powers are the table above); {recipe}")


def powers_numbers(runs: Runs) -> dict:
    """The powers grid described in numbers for the prose (``ch09_pw_<key>``): the slope of accuracy
    against p over the plain powers (within each seed, then over seeds), again without the runs
    that ended at chance, which runs those are, and the range of the gradient arriving at the
    attention weights at the last probe (mean over layers)."""
    keys = ("slope", "slope_seeds", "chance_runs", "slope_without_chance", "grad_min", "grad_min_power", "grad_max",
            "grad_max_power")
    if not runs.records:
        return {f"ch09_pw_{k}": "not stored" for k in keys}
    final, change = _power_means(runs)
    slope = critique_runs.power_slope(final)
    band = claim("table_parity").chance_band
    no_chance = critique_runs.power_slope(final, chance=FASHION_MNIST_CHANCE, band=band)
    excluded = no_chance["excluded"]
    by_act: dict = {}
    for act, seed in excluded:
        by_act.setdefault(act, []).append(seed)
    chance_runs = "; ".join(f"{name(a)} with seed{'s' if len(s) > 1 else ''} {_and(map(str, s))}"
                            for a, s in by_act.items()) or "none"
    last = change.groupby("activation")["last"].mean()
    plain = last[[not critique_runs.power_of(a)[1] for a in last.index]]
    seeds = slope["n_seeds"]
    return {"ch09_pw_slope": interval_phrase(slope["slope"], slope["ci_low"], slope["ci_high"], "points"),
            "ch09_pw_slope_seeds": f"{seeds} seed{'s' if seeds != 1 else ''}",
            "ch09_pw_chance_runs": chance_runs,
            "ch09_pw_slope_without_chance": interval_phrase(no_chance["slope"], no_chance["ci_low"],
                                                            no_chance["ci_high"], "points"),
            "ch09_pw_grad_min": f"{plain.min():.3g}", "ch09_pw_grad_min_power": name(plain.idxmin()),
            "ch09_pw_grad_max": f"{plain.max():.3g}", "ch09_pw_grad_max_power": name(plain.idxmax())}


def powers_figure(runs: Runs, preset: str):
    """Accuracy against p (plain and sign-keeping powers; mean and t-interval over seeds), and the
    gradient arriving at the attention weights at the first and last probe against p (plain powers,
    mean over layers, heads and seeds)."""
    if not runs.records:
        return None
    import matplotlib.pyplot as plt

    from ... import analysis, plotting
    final, change = _power_means(runs)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(7, 2.8))
    for odd, style, colour, label in ((False, "o-", "C0", "xᵖ/√N"), (True, "s--", "C3", "sign kept, x·|x|ᵖ⁻¹/√N")):
        sub = final[[critique_runs.power_of(a)[1] == odd for a in final["activation"]]]
        stats_ = [(critique_runs.power_of(a)[0], *analysis.t_interval(100 * g["test_acc"].dropna()))
                  for a, g in sub.groupby("activation", sort=False)]
        ps, ms, los, his = map(np.array, zip(*stats_))
        ax.errorbar(ps, ms, yerr=None if np.isnan(los).all() else [ms - los, his - ms], fmt=style, capsize=3,
                    color=colour, label=label)
    ax.set(xlabel="power p", ylabel="test accuracy (%)", title="Accuracy after Table 1's schedule")
    ax.legend(frameon=False, fontsize="small")
    plain = change[[not critique_runs.power_of(a)[1] for a in change["activation"]]]
    mean = plain.groupby("activation", sort=False)[["first", "last"]].mean()
    ps = [critique_runs.power_of(a)[0] for a in mean.index]
    ax2.plot(ps, mean["first"], "o:", color="grey", label="first probe")
    ax2.plot(ps, mean["last"], "o-", color="black", label="last probe")
    ax2.set(yscale="log", xlabel="power p (xᵖ/√N)", ylabel="‖∂L/∂A‖_F", title="Gradient at the attention weights")
    ax2.legend(frameon=False, fontsize="small")
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    plotting.stamp(fig, preset, f"mean, 95% t-interval over {len(runs.seeds)} seed(s)", loc="upper right")
    return fig


def powers_layer_figure(runs: Runs, preset: str):
    """The gradient arriving at the attention weights over training, one panel per layer, for the
    powers of :data:`LAYER_POWERS` (mean over heads and seeds)."""
    if not runs.records:
        return None
    import matplotlib.pyplot as plt

    from ... import analysis, plotting

    curves = analysis.probe_curves(analysis.probe_frame(runs.records, ["grad_attn_fro"]))
    layers = sorted(set(curves["layer"]))
    cols = 2
    fig, axes = plt.subplots(math.ceil(len(layers) / cols), cols, figsize=(7, 2.4 * math.ceil(len(layers) / cols)),
                             sharey=True, squeeze=False)
    colours = dict(zip(LAYER_POWERS, plt.cm.viridis(np.linspace(0, 0.9, len(LAYER_POWERS)))))
    for ax, layer in zip(axes.flat, layers):
        for act in LAYER_POWERS:
            c = curves[(curves["activation"] == act) & (curves["layer"] == layer)].sort_values("step")
            ax.plot(c["step"], c["mean"], color=colours[act], label=f"p = {act.split('=')[1]}")
        ax.set(yscale="log", title=f"layer {layer + 1}")
    for ax in axes[-1]:
        ax.set_xlabel("training step")
    for ax in axes[:, 0]:
        ax.set_ylabel("‖∂L/∂A‖_F")
    for ax in axes.flat[len(layers):]:
        ax.set_visible(False)
    axes.flat[0].legend(frameon=False, fontsize="small", ncol=2)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    plotting.stamp(fig, preset, "xᵖ/√N, mean over heads and seeds", loc="upper right")
    return fig


# --- the Q/K controls -----------------------------------------------------------------------------


def qk_table(runs: Runs, preset: str):
    """Per variant of the Q/K-control grid: accuracy with its t-interval, ||A||_F at the last probe
    (mean over layers, heads and seeds) and, as description, the paired difference from the
    unscaled x^3 without a control (the register judges the controls against x^3/sqrt(N))."""
    if not runs.records:
        return nothing_stored()
    qk = critique_runs.qk_frame(runs.records)
    vs_plain = analysis.paired_difference(qk, baseline="x^3", metric="test_acc", key="variant").set_index("variant")
    norms = qk_norms(runs)
    rows = []
    for variant, g in qk.groupby("variant", sort=False):
        m, lo, hi = analysis.t_interval(100 * g["test_acc"].dropna())
        rows.append({"variant": qk_name(variant), "runs": f"{int((g['status'] == 'ok').sum())} of {len(g)}",
                     "test accuracy (%) [95% CI]": interval_cell(m, lo, hi, ".1f"),
                     "‖A‖_F at the last probe": number_cell(norms.get(variant, np.nan)),
                     f"Δ vs {qk_name('x^3')} (points)": description_cell(vs_plain.loc[variant])
                     if variant in vs_plain.index else ""})
    return styled(rows, "The Q/K controls: description, not a test (the register's comparisons with x³/√N are the "
                        f"table above); {recipe_caption(runs.config, preset, len(runs.records), len(runs.grid))}")


def qk_norms(runs: Runs) -> dict:
    """``||A||_F`` at the last probed step per variant of the Q/K-control grid (mean over layers,
    heads and runs)."""
    qk = critique_runs.qk_frame(runs.records)
    probes = analysis.probe_frame(runs.records, ["attn_fro"]).merge(qk[["run", "variant"]], on="run")
    last = probes[probes["step"] == probes["step"].max()]
    return last.groupby(["variant", "run"])["value"].mean().groupby("variant").mean().to_dict()


def qk_numbers(runs: Runs) -> dict:
    """The Q/K grid's settings and its norms for the prose (``ch09_qk_<key>``)."""
    from ...experiments import critiques as grids
    from ...experiments import vit
    norms = qk_norms(runs) if runs.records else {}
    listed = "; ".join(f"{qk_name(v)}: {norms[v]:.3g}" for v, _, _ in qk_variants() if v in norms) or "not stored"
    return {"ch09_qk_seeds": len(runs.seeds), "ch09_qk_decays": " or ".join(f"{w:g}" for w in grids.QK_WEIGHT_DECAYS),
            "ch09_qk_t1_decay": f"{vit.table1('book')[0].weight_decay:g}",
            "ch09_qk_gain": f"{length_aware_gain(grids.TABLE1_TOKENS, 3):.3f}", "ch09_qk_tokens": grids.TABLE1_TOKENS,
            "ch09_qk_norms": listed}


# --- the weight decay of every matrix -------------------------------------------------------------


def decay_frame(runs: Runs) -> pd.DataFrame:
    """:func:`polyattn.analysis.critique_runs.weight_decay_frame` of the grid's records."""
    return critique_runs.weight_decay_frame(runs.records)


def decay_table(runs: Runs, preset: str):
    """One row per cell (activation, decay) of the weight-decay grid: runs, accuracy (mean ± sd),
    ||A||_F/sqrt(N) at the end of training, and as description the paired differences from the same
    activation at Table 1's decay and, for the unscaled x^3, from x^3/sqrt(N) at Table 1's decay."""
    if not runs.records:
        return nothing_stored()
    from ...experiments import critiques as grids
    from ...experiments import vit

    reference = vit.table1("book")[0].weight_decay
    wd = decay_frame(runs)
    diff_of = {}
    for act, decay, base_act, base_decay, _ in critique_runs.weight_decay_comparisons(grids.WEIGHT_DECAYS, reference):
        cand, base = critique_runs.decay_cell(act, decay), critique_runs.decay_cell(base_act, base_decay)
        pair = wd[wd["cell"].isin([cand, base])]
        if {cand, base} <= set(pair["cell"]):
            d = analysis.paired_difference(pair, baseline=base, metric="test_acc", key="cell")
            diff_of[(cand, base)] = description_cell(d.iloc[0])
    rows = []
    for act in grids.WEIGHT_DECAY_ACTIVATIONS:
        for w in grids.WEIGHT_DECAYS:
            cell = critique_runs.decay_cell(act, w)
            g = wd[wd["cell"] == cell]
            acc = 100 * g.loc[g["status"] == "ok", "test_acc"]
            norm = g["attn_norm_final"].dropna()
            rows.append({"activation": name(act), "decay": f"{w:g}", "runs": f"{len(g)} of {len(runs.seeds)}",
                         "accuracy (%), mean ± sd": (f"{acc.mean():.2f} ± {acc.std():.2f}" if len(acc) > 1
                                                     else f"{acc.mean():.2f}" if len(acc) else ""),
                         f"Δ vs itself at {reference:g}": diff_of.get((cell, critique_runs.decay_cell(act, reference)), ""),
                         f"Δ vs {name(SCALED)} at {reference:g}":
                             diff_of.get((cell, critique_runs.decay_cell(SCALED, reference)), "")
                             if act == UNSCALED else "",
                         "‖A‖_F/√N at the end": f"{norm.mean():.3g}" if len(norm) else ""})
    for shown, row in zip(first_only(r["activation"] for r in rows), rows):
        row["activation"] = shown
    return styled(rows, "Weight decay of every matrix: accuracy, and the paired differences in points [95% CI] as "
                        "description, not a test (the register's comparisons are the table above); ‖A‖_F/√N at the "
                        "last probed step, mean over layers, heads and seeds; "
                        + recipe_caption(runs.config, preset, len(runs.records), len(runs.grid))
                        + "; the paper never varies the decay")


def decay_figure(runs: Runs, preset: str):
    """Accuracy and ||A||_F/sqrt(N) at the end of training against the weight decay of every matrix,
    one line per activation through the means over seeds, each seed a point."""
    if not runs.records:
        return None
    import matplotlib.pyplot as plt

    from ... import plotting
    from ...experiments import critiques as grids

    wd = decay_frame(runs)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(7, 3.0))
    xs = {w: i for i, w in enumerate(grids.WEIGHT_DECAYS)}
    for k, act in enumerate(grids.WEIGHT_DECAY_ACTIVATIONS):
        g = wd[wd["activation"] == act]
        col = plotting.activation_color(act)
        for axis, column, scale in ((ax, "test_acc", 100.0), (ax2, "attn_norm_final", 1.0)):
            pos = g["weight_decay"].map(xs) + 0.06 * (k - 1)
            axis.plot(pos, scale * g[column], "o", color=col, alpha=0.5, markersize=4)
            means = (scale * g.groupby("weight_decay")[column].mean()).sort_index()
            axis.plot([xs[w] + 0.06 * (k - 1) for w in means.index], means.to_numpy(), "-", color=col, label=name(act))
    for axis in (ax, ax2):
        axis.set_xticks(list(xs.values()), [f"{w:g}" for w in xs])
        axis.set_xlabel("weight decay of every matrix (not to scale)")
    ax.set(ylabel="test accuracy (%)", title="Accuracy")
    ax2.set(yscale="log", ylabel="‖A‖_F/√N at the end", title="Attention norm")
    handles, labels = ax2.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    plotting.stamp(ax, preset, f"{len(runs.records)} of {len(runs.grid)} runs; seeds as points", loc="lower left")
    return fig


def decay_numbers(runs: Runs) -> dict:
    """The weight-decay grid's settings and two of its norms for the prose (``ch09_wd_<key>``): the
    decays, the seeds, the runs found, what AdamW's decay alone leaves of a matrix over Table 1's
    schedule, and ||A||_F/sqrt(N) of the unscaled x^3 at the strongest decay and of x^3/sqrt(N) at
    Table 1's."""
    from ...experiments import critiques as grids
    from ...experiments import vit

    book = vit.table1("book", seeds=[0])[0]
    total = book.train_subset // book.batch_size * book.epochs
    reference, strong = book.weight_decay, max(grids.WEIGHT_DECAYS)
    out = {"ch09_wd_decays": ", ".join(f"{w:g}" for w in grids.WEIGHT_DECAYS), "ch09_wd_seeds": len(runs.seeds),
           "ch09_wd_reference": f"{reference:g}", "ch09_wd_strong": f"{strong:g}",
           "ch09_wd_found": f"{len(runs.records)} of {len(runs.grid)}",
           "ch09_wd_shrink": ", ".join(f"{critique_runs.no_gradient_shrink(book.replace(weight_decay=w), total):.2f} "
                                       f"at decay {w:g}" for w in grids.WEIGHT_DECAYS),
           "ch09_wd_norm_unscaled_strong": "not stored", "ch09_wd_norm_scaled_reference": "not stored",
           "ch09_wd_norm_unscaled_reference": "not stored"}
    if runs.records:
        norms = decay_frame(runs).groupby("cell")["attn_norm_final"].mean()
        for key, act, w in (("unscaled_strong", UNSCALED, strong), ("scaled_reference", SCALED, reference),
                            ("unscaled_reference", UNSCALED, reference)):
            value = norms.get(critique_runs.decay_cell(act, w), np.nan)
            if value == value:
                out[f"ch09_wd_norm_{key}"] = f"{value:.3g}"
    return out
