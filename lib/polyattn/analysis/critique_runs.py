"""The trained critique grids of chapter 09 (:mod:`polyattn.experiments.critiques`).

``critique_powers`` trains x^p/sqrt(N) for p = 1..7 (and the sign-keeping form for even p):

    power_of("poly_odd:p=4")          # (4, True): the power and whether the sign is kept
    power_slope(final)                # accuracy against p within each seed, then over seeds
    gradient_change(curves)           # a probe metric at the first and last probed step, per layer

``critique_qk_controls`` sets two alternatives to the 1/sqrt(N) scale, acting on the query and
key projections only, against x^3/sqrt(N):

    qk_frame(records)                 # one row per run, named by its variant (``variant``)
    qk_differences(frame, margin)     # each variant minus x^3/sqrt(N), paired by seed, Holm

``critique_weight_decay`` trains softmax, x^3/sqrt(N) and the unscaled x^3 at three AdamW weight
decays of every weight matrix; the comparisons are fixed by the question, not by the numbers:

    weight_decay_frame(records)                   # one row per run: its decay, cell label, final ||A||_F/sqrt(N)
    weight_decay_comparisons(decays, reference)   # (candidate, baseline, question) of every row, stated up front
    weight_decay_differences(frame, margin)       # those comparisons, paired by seed, Holm over all of them
    weight_decay_summary(diffs, strong, reference)  # a sentence on every decay against the scale
    no_gradient_shrink(config, total_steps)       # what AdamW's decay alone leaves of a matrix over the schedule
"""
from __future__ import annotations

import re
from typing import Iterable

import numpy as np
import pandas as pd

from ..labels import WEIGHT_DECAY_ACTIVATIONS, qk_label, qk_variants
from ..schedule import lr_at
from ._common import _require
from .frames import final_metrics
from .norms import norms_vs_accuracy
from .stats import holm, paired_difference, t_interval
from .verdicts import comparison_verdict

_POWER = re.compile(r"^(poly|poly_odd):p=(\d+)$")


def power_of(spec: str) -> tuple[int, bool]:
    """(p, sign kept) of ``poly:p=P`` or ``poly_odd:p=P`` (the 1/sqrt(N) forms the powers grid trains)."""
    m = _POWER.match(spec)
    if not m:
        raise ValueError(f"power_of: {spec!r} is not one of the powers grid's specs 'poly:p=P' or 'poly_odd:p=P'")
    return int(m.group(2)), m.group(1) == "poly_odd"


def power_slope(final: pd.DataFrame, metric: str = "test_acc", scale: float = 100.0,
                confidence: float = 0.95, chance: float | None = None, band: float = 2.0) -> dict:
    """The least-squares slope of ``metric`` (times ``scale``: points for accuracy) against p over the
    plain powers ``poly:p=P``, within each seed; then the mean over seeds, its t interval and the
    one-sample t-test of slope 0.  A seed with a diverged run, or with fewer than 3 powers, is left out.
    With ``chance`` (in display units), runs within ``band`` of it learned nothing and are left out
    of their seed's fit; ``excluded`` lists them as (activation, seed)."""
    from scipy import stats

    _require(final, ["activation", "seed", "status", metric], "power_slope")
    slopes = {}
    excluded = []
    for seed, g in final.groupby("seed", sort=True):
        g = g[[_POWER.match(a) is not None and not power_of(a)[1] for a in g["activation"]]]
        if chance is not None:
            at_chance = (g[metric].astype(float) * scale - chance).abs() <= band
            excluded += [(a, int(seed)) for a in g.loc[at_chance, "activation"]]
            g = g[~at_chance]
        if len(g) < 3 or (g["status"] != "ok").any():
            continue
        p = np.array([power_of(a)[0] for a in g["activation"]], dtype=float)
        slopes[int(seed)] = float(np.polyfit(p, g[metric].to_numpy(dtype=float) * scale, 1)[0])
    vals = np.array(list(slopes.values()))
    mean, lo, hi = t_interval(vals, confidence) if len(vals) else (np.nan, np.nan, np.nan)
    t_p = float(stats.ttest_1samp(vals, 0.0).pvalue) if len(vals) > 1 and vals.std() > 0 else np.nan
    return {"slope": mean, "ci_low": lo, "ci_high": hi, "n_seeds": len(vals), "t_p": t_p, "per_seed": slopes,
            "excluded": excluded}


def gradient_change(curves: pd.DataFrame, metric: str = "grad_attn_fro") -> pd.DataFrame:
    """Per activation and layer, from :func:`~polyattn.analysis.norms.probe_curves`: the mean over
    seeds of ``metric`` at the first and at the last probed step, and last / first."""
    _require(curves, ["activation", "metric", "layer", "step", "mean"], "gradient_change")
    c = curves[curves["metric"] == metric]
    if c.empty:
        raise ValueError(f"gradient_change: no probe rows of {metric!r}; the metrics present: "
                         f"{sorted(set(curves['metric']))}")
    rows = []
    for (act, layer), g in c.groupby(["activation", "layer"], sort=False):
        g = g.sort_values("step")
        first, last = float(g["mean"].iloc[0]), float(g["mean"].iloc[-1])
        rows.append({"activation": act, "layer": int(layer), "first_step": int(g["step"].iloc[0]),
                     "last_step": int(g["step"].iloc[-1]), "first": first, "last": last,
                     "ratio": last / first if first else np.nan})
    return pd.DataFrame(rows)


def qk_frame(records: Iterable[dict]) -> pd.DataFrame:
    """:func:`~polyattn.analysis.final_metrics` of the ``critique_qk_controls`` records, with each
    run's variant label (:func:`polyattn.labels.qk_label`) in ``variant``, in the
    grid's variant order."""
    records = list(records)
    frame = final_metrics(records)
    frame["variant"] = [qk_label(r["config"]) for r in records]
    order = {label: i for i, (label, _, _) in enumerate(qk_variants())}
    frame["_order"] = [order.get(v, len(order)) for v in frame["variant"]]
    out = frame.sort_values(["_order", "seed"], kind="stable").drop(columns="_order").reset_index(drop=True)
    out.attrs = dict(frame.attrs)
    return out


def qk_differences(frame: pd.DataFrame, margin: float, baseline: str = "x^3/sqrt(N)") -> pd.DataFrame:
    """Every variant minus ``baseline`` in test accuracy (points), paired by seed, Holm over the rows,
    TOST against ``margin``: :func:`~polyattn.analysis.paired_difference` over ``variant``."""
    return paired_difference(frame, baseline=baseline, metric="test_acc", margin=margin, key="variant")


#: The activations of the ``critique_weight_decay`` grid by role.
SOFTMAX, SCALED_CUBE, UNSCALED_CUBE = "softmax", "poly:p=3", "poly:p=3,c=1"
NORM_METRIC = "attn_fro_over_sqrt_n"
#: The question of the rows that compare the unscaled x^3 with x^3/sqrt(N).
AGAINST_SCALE = "unscaled x^3 against the scale"


def decay_cell(activation: str, weight_decay: float) -> str:
    """The label of one (activation, weight decay) cell of the grid, e.g. ``"poly:p=3,c=1, decay 0.5"``."""
    return f"{activation}, decay {float(weight_decay):g}"


def weight_decay_frame(records: Iterable[dict]) -> pd.DataFrame:
    """:func:`~polyattn.analysis.final_metrics` of the ``critique_weight_decay`` records with each
    run's ``weight_decay``, its ``cell`` (:func:`decay_cell`) and ``attn_norm_final``: ||A||_F/sqrt(N)
    at the last probed step, mean over layers and heads (NaN for a run without that probe); sorted
    by decay, then activation in the grid's order, then seed."""
    records = list(records)
    if not records:
        raise ValueError("weight_decay_frame: no records; load the critique_weight_decay grid first")
    frame = final_metrics(records)
    frame["weight_decay"] = [float(r["config"]["weight_decay"]) for r in records]
    frame["cell"] = [decay_cell(a, w) for a, w in zip(frame["activation"], frame["weight_decay"])]
    probed = [r for r in records if any(p["metric"] == NORM_METRIC for p in r.get("probes") or [])]
    norms = (norms_vs_accuracy(probed, [NORM_METRIC]).set_index("run")[f"{NORM_METRIC}_final"] if probed
             else pd.Series(dtype=float))
    frame["attn_norm_final"] = frame["run"].map(norms).astype(float)
    order = {a: i for i, a in enumerate(WEIGHT_DECAY_ACTIVATIONS)}
    frame["_order"] = [order.get(a, len(order)) for a in frame["activation"]]
    out = frame.sort_values(["weight_decay", "_order", "seed"], kind="stable").drop(columns="_order")
    out = out.reset_index(drop=True)
    out.attrs = dict(frame.attrs)
    return out


def weight_decay_comparisons(decays, reference: float = 0.05) -> list[tuple[str, float, str, float, str]]:
    """(candidate activation, its decay, baseline activation, its decay, question) of every comparison
    of the weight-decay table.

    Fixed by the question before any record is read: the unscaled x^3 at every decay against
    x^3/sqrt(N) at the ``reference`` decay (Table 1's); then each activation at every other decay
    against itself at ``reference``: for the unscaled cube whether the decay helps it at all, for
    softmax and x^3/sqrt(N) (the controls) what the decay does to activations that need no rescue.
    """
    decays = sorted({float(d) for d in decays})
    if float(reference) not in decays:
        raise ValueError(f"weight_decay_comparisons: the reference decay {reference:g} is not among the grid's "
                         f"decays {decays}; pass one of them")
    ref = float(reference)
    rows = [(UNSCALED_CUBE, d, SCALED_CUBE, ref, AGAINST_SCALE) for d in decays]
    for act, question in ((UNSCALED_CUBE, "the decay's effect on unscaled x^3"),
                          (SOFTMAX, "the decay's effect on softmax (control)"),
                          (SCALED_CUBE, "the decay's effect on x^3/sqrt(N) (control)")):
        rows += [(act, d, act, ref, question) for d in decays if d != ref]
    return rows


def weight_decay_differences(frame: pd.DataFrame, margin: float, reference: float = 0.05) -> pd.DataFrame:
    """Every comparison of :func:`weight_decay_comparisons` in test accuracy (points): candidate minus
    baseline, paired by seed, TOST against ``margin``, Holm over all the rows of the table.

    The columns of :func:`~polyattn.analysis.paired_difference` plus ``candidate`` and ``question``
    (``activation`` holds the candidate cell, ``baseline`` the baseline cell), ``weight_decay`` and
    ``baseline_decay``.  Every cell a comparison names must have runs in ``frame``."""
    _require(frame, ["cell", "weight_decay", "seed", "status", "test_acc"], "weight_decay_differences")
    comparisons = weight_decay_comparisons(set(frame["weight_decay"]), reference)
    present = set(frame["cell"])
    cells = [(decay_cell(a, d), decay_cell(b, r), d, r, q) for a, d, b, r, q in comparisons]
    missing = sorted({c for cand, base, *_ in cells for c in (cand, base)} - present)
    if missing:
        raise ValueError(f"weight_decay_differences: no runs of {', '.join(missing)}; compare once every cell "
                         "of the grid is stored")
    parts = []
    for cand, base, decay, base_decay, question in cells:
        pair = frame[frame["cell"].isin([cand, base])]
        row = paired_difference(pair, baseline=base, metric="test_acc", margin=margin, key="cell")
        parts.append(row.assign(candidate=cand, question=question, weight_decay=decay, baseline_decay=base_decay))
    out = pd.concat(parts, ignore_index=True)
    out["p_holm"] = holm(out["t_p"].to_numpy(dtype=float))
    out["family_size"] = int(out["t_p"].notna().sum())
    out.attrs = dict(parts[0].attrs)
    return out


def no_gradient_shrink(config, total_steps: int) -> float:
    """The factor AdamW's decoupled weight decay alone leaves of a weight matrix that receives no
    gradient over ``total_steps`` steps of ``config``'s schedule (:func:`polyattn.schedule.lr_at`):
    the product of ``1 - lr_t * weight_decay``.  It says how strong a decay is over one training,
    independently of the data."""
    if total_steps < 1 or total_steps % config.epochs:
        raise ValueError(f"no_gradient_shrink: total_steps must be a positive multiple of the {config.epochs} "
                         f"epoch(s), got {total_steps}")
    warmup = int(round(config.warmup_epochs * total_steps / config.epochs))
    lrs = np.array([lr_at(s, total_steps, warmup, config.lr, config.min_lr) for s in range(total_steps)])
    return float(np.prod(1.0 - lrs * config.weight_decay))


def weight_decay_summary(diffs: pd.DataFrame, strong: float, reference: float = 0.05,
                         names: dict | None = None) -> str:
    """A sentence describing the weight-decay grid from :func:`weight_decay_differences`: every
    comparison of the unscaled x^3 at each decay against x^3/sqrt(N) at ``reference``, and the
    softmax control at ``strong``; where x^3 at ``reference`` is not worse than x^3/sqrt(N), it
    says there is no gap for a stronger decay to close.  Description only: the verdict on the
    claim is the register's (claim ``weight_decay_all``).  ``names`` maps specs to the names it uses."""
    names = {SOFTMAX: "softmax", SCALED_CUBE: "$x^3/\\sqrt{N}$", UNSCALED_CUBE: "the unscaled $x^3$", **(names or {})}
    _require(diffs, ["activation", "baseline", "mean_diff", "question", "weight_decay", "margin", "family_size"],
             "weight_decay_summary")
    table = diffs.set_index(["activation", "baseline"])

    def verdict_of(act, decay, base_act, base_decay):
        key = (decay_cell(act, decay), decay_cell(base_act, base_decay))
        if key not in table.index:
            raise ValueError(f"weight_decay_summary: the table has no row {key[0]!r} minus {key[1]!r}; "
                             "pass the output of weight_decay_differences")
        return comparison_verdict(table.loc[key], name=f"{names[act]} at decay {decay:g}",
                                  baseline=f"{names[base_act]} at decay {base_decay:g}")

    gap = verdict_of(UNSCALED_CUBE, reference, SCALED_CUBE, reference)
    control = verdict_of(SOFTMAX, strong, SOFTMAX, reference)

    def short(v):
        ci = f"95% CI {v.ci[0]:+.1f} to {v.ci[1]:+.1f}" if v.ci[0] == v.ci[0] else "no interval"
        return f"{v.estimate:+.1f} points ({ci}), {v.form}"

    decays = sorted(diffs.loc[diffs["question"] == AGAINST_SCALE, "weight_decay"].astype(float))
    cube = "; ".join(f"at decay {d:g}: {short(verdict_of(UNSCALED_CUBE, d, SCALED_CUBE, reference))}" for d in decays)
    margin = float(diffs["margin"].iloc[0])
    text = (f"{names[UNSCALED_CUBE][0].upper()}{names[UNSCALED_CUBE][1:]} against {names[SCALED_CUBE]} at Table 1's "
            f"decay {reference:g} (test accuracy, paired by seed, Holm over the table's {len(diffs)} comparisons, "
            f"margin ±{margin:g} {'point' if margin == 1 else 'points'}): {cube}; the control, {names[SOFTMAX]} at "
            f"decay {strong:g} "
            f"against {names[SOFTMAX]} at {reference:g}: {short(control)}")
    if not gap.form.startswith("worse"):
        text += (f"; without the decay changed, the unscaled cube is not worse than the scaled one ({gap.form}), so "
                 "there is no gap for a stronger decay to close")
    return text
