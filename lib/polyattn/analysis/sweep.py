"""The scale sweep: the best constant c of c*x^3 per sequence length and its slope in N."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from ..display import typographic
from ._common import _require
from .metrics import MetricLike, diff_unit, resolve_metric


@dataclass
class BestConstant:
    """The result of :func:`best_constant`.

    ``table``: per sequence length N the best constant of the grid (``best_c``, its label, its
    mean in the metric's display unit), the runner-up, the margin (how much better the best is,
    positive in the metric's direction) from the same-seed differences between the two, with
    their standard error, t-interval (``margin_ci_low`` .. ``margin_ci_high``, ``n_pairs`` seeds)
    and ``resolved`` (the interval excludes zero; with no spread, a non-zero margin; None when
    one seed gives no interval), the interpolated optimum ``c_star`` (vertex of a parabola in
    log c through the best grid point and its neighbours; the grid value when the best is at
    the grid's edge, flagged ``at_edge``: a censored value, the optimum may lie beyond it), and
    1/sqrt(N).  ``cells``: mean, std and counts per (N, c).  ``slope``: least-squares slope of
    log c_star against log N over the lengths whose optimum is interior (censored edge values
    are left out; NaN with fewer than two interior optima), with a bootstrap CI over seeds
    (``slope_ci``, each resample leaving out its own edge optima); ``slope_grid`` the slope of
    the grid's best c over every length (descriptive).
    ``direction``: how the best grid c moves as N grows: "falls", "rises", "flat" or "mixed".
    """

    table: pd.DataFrame
    cells: pd.DataFrame
    slope: float
    slope_ci: tuple
    slope_grid: float
    direction: str
    theory_slope: float = -0.5
    n_boot: int = 0
    confidence: float = 0.95
    #: bootstrap resamples drawn; those whose optima were censored at the grid's edge define no slope
    n_tried: int = 0
    notes: list = field(default_factory=list)
    metric: dict = field(default_factory=dict)


def _cell_stats(final: pd.DataFrame, metric) -> pd.DataFrame:
    rows = []
    for (n, c), g in final.groupby(["seq_len", "c"], sort=True):
        vals = g.loc[g["status"] == "ok", metric.name].dropna().to_numpy(dtype=float) * metric.scale
        rows.append({"seq_len": int(n), "c": float(c), "c_label": g["c_label"].iloc[0], "n_runs": len(g),
                     "n_ok": len(vals), "n_diverged": int((g["status"] == "diverged").sum()),
                     "mean": vals.mean() if len(vals) else np.nan,
                     "std": vals.std(ddof=1) if len(vals) > 1 else np.nan})
    return pd.DataFrame(rows)


@dataclass
class _Grid:
    """One sequence length of a sweep as arrays: constants ascending, ``acc`` [c, seed] the
    metric in its display unit times ``sign`` (+1 when higher is better, -1 when lower is), so
    that larger is always better (NaN for a diverged or missing run), and the diverged flags."""

    seq_len: int
    cs: np.ndarray
    labels: list
    acc: np.ndarray
    diverged: np.ndarray
    sign: float = 1.0


def _grids(final: pd.DataFrame, metric) -> list[_Grid]:
    sign = 1.0 if metric.higher_is_better else -1.0
    out = []
    for n, g in final.groupby("seq_len", sort=True):
        cs = np.array(sorted(g["c"].unique()), dtype=float)
        seeds = sorted(g["seed"].unique())
        acc = np.full((len(cs), len(seeds)), np.nan)
        div = np.zeros((len(cs), len(seeds)), dtype=bool)
        labels = []
        for i, c in enumerate(cs):
            cell = g[g["c"] == c]
            labels.append(cell["c_label"].iloc[0])
            for _, r in cell.iterrows():
                j = seeds.index(r["seed"])
                div[i, j] = r["status"] == "diverged"
                if r["status"] == "ok":
                    acc[i, j] = sign * float(r[metric.name]) * metric.scale
        out.append(_Grid(int(n), cs, labels, acc, div, sign))
    return out


def _nanmean_rows(acc: np.ndarray) -> np.ndarray:
    ok = np.isfinite(acc)
    cnt = ok.sum(1)
    tot = np.where(ok, acc, 0.0).sum(1)
    return np.where(cnt > 0, tot / np.maximum(cnt, 1), np.nan)


def _ranking(cs: np.ndarray, means: np.ndarray, n_div: np.ndarray) -> np.ndarray:
    """Indices best first: fewest diverged runs, then highest (signed) mean; all-diverged constants last."""
    missing = ~np.isfinite(means)
    return np.lexsort((cs, -np.where(missing, 0.0, means), n_div, missing))


def _interpolated_optimum(cs: np.ndarray, means: np.ndarray, i: int) -> tuple[float, bool]:
    """The vertex (in log c) of the parabola through the best constant and its two neighbours."""
    if i == 0 or i == len(cs) - 1:
        return float(cs[i]), True
    x3, y3 = np.log(cs[i - 1:i + 2]), means[i - 1:i + 2]
    if not np.all(np.isfinite(y3)):
        return float(cs[i]), False
    a, b, _ = np.polyfit(x3, y3, 2)
    if a >= 0:
        return float(cs[i]), False
    return float(math.exp(np.clip(-b / (2 * a), x3[0], x3[-1]))), False


def _best_of(grid: _Grid, acc: np.ndarray, div: np.ndarray):
    means = _nanmean_rows(acc)
    order = _ranking(grid.cs, means, div.sum(1))
    c_star, edge = _interpolated_optimum(grid.cs, means, int(order[0]))
    return order, means, c_star, edge


def _fit_slope(ns, cs) -> float:
    """Least-squares slope of log c against log N over the finite, positive values (NaN marks a
    censored or missing optimum); NaN with fewer than two such points."""
    ns, cs = np.asarray(ns, dtype=float), np.asarray(cs, dtype=float)
    keep = np.isfinite(cs) & (cs > 0)
    if keep.sum() < 2:
        return np.nan
    return float(np.polyfit(np.log(ns[keep]), np.log(cs[keep]), 1)[0])


def _paired_margin(best: np.ndarray, other: np.ndarray, confidence: float):
    """(se, ci_low, ci_high, n_pairs, resolved) of the same-seed differences ``best - other``
    (NaN entries, diverged or missing runs, drop their pair)."""
    from scipy import stats

    d = (best - other)[np.isfinite(best) & np.isfinite(other)]
    n = len(d)
    if n < 2:
        return np.nan, np.nan, np.nan, n, None
    sd = float(d.std(ddof=1))
    mean = float(d.mean())
    if sd == 0:
        return 0.0, mean, mean, n, bool(mean > 0)
    se = sd / math.sqrt(n)
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * se
    return se, mean - half, mean + half, n, bool(mean - half > 0)


def _direction(values: Sequence[float]) -> str:
    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return "flat"
    steps = np.diff(v)
    if np.all(steps == 0):
        return "flat"
    if np.all(steps <= 0):
        return "falls"
    if np.all(steps >= 0):
        return "rises"
    return "mixed"


def best_constant(sweep_final: pd.DataFrame, metric: MetricLike = None, n_boot: int = 1000, seed: int = 0,
                  confidence: float = 0.95) -> BestConstant:
    """The best constant c of ``poly:p=3,c=C`` per sequence length, and how it scales with N.

    ``sweep_final`` is :func:`final_accuracy` of a sweep over c and patch size (rows without a
    fixed c are ignored); ``metric`` a :class:`~polyattn.metric_specs.Metric` or its name (default the
    frame's primary metric).  Ranking: fewest diverged seeds first, then the best mean in the
    metric's direction (the lowest for a loss or bits per character).
    The slope CI resamples seeds with replacement (the same resampled seeds for every c of one
    N, since a seed fixes the data order) and recomputes the interpolated optima and the slope.
    Theory (c proportional to 1/sqrt(N)) predicts a slope of -1/2.
    """
    metric = resolve_metric(metric, sweep_final)
    _require(sweep_final, ["seq_len", "c", "c_label", "seed", "status", metric.name], "best_constant")
    f = sweep_final[np.isfinite(sweep_final["c"].to_numpy(dtype=float))]
    if f.empty:
        raise ValueError("best_constant: no runs with a fixed constant (activation poly:p=P,c=C); "
                         "pass final_accuracy() of the scale sweep")
    grids = _grids(f, metric)
    cells = _cell_stats(f, metric)
    rows = []
    for gr in grids:
        order, means, c_star, edge = _best_of(gr, gr.acc, gr.diverged)
        b = int(order[0])
        s2 = int(order[1]) if len(order) > 1 else None
        ok = np.isfinite(gr.acc[b])
        margin, se, lo, hi, n_pairs, resolved = np.nan, np.nan, np.nan, np.nan, 0, None
        if s2 is not None:
            margin = means[b] - means[s2]
            se, lo, hi, n_pairs, resolved = _paired_margin(gr.acc[b], gr.acc[s2], confidence)
        rows.append({"seq_len": gr.seq_len, "best_c": float(gr.cs[b]), "best_c_label": gr.labels[b],
                     "best_mean": gr.sign * means[b], "best_std": gr.acc[b][ok].std(ddof=1) if ok.sum() > 1 else np.nan,
                     "best_n_diverged": int(gr.diverged[b].sum()),
                     "runner_up_c_label": None if s2 is None else gr.labels[s2],
                     "margin": margin, "margin_se": se, "margin_ci_low": lo, "margin_ci_high": hi,
                     "n_pairs": n_pairs, "resolved": resolved,
                     "c_star": c_star, "at_edge": edge, "inv_sqrt_n": 1 / math.sqrt(gr.seq_len)})
    table = pd.DataFrame(rows)
    slope = _fit_slope(table["seq_len"], table["c_star"].where(~table["at_edge"].astype(bool)))
    slope_grid = _fit_slope(table["seq_len"], table["best_c"])
    notes = []
    if table["at_edge"].any():
        edge = table.loc[table["at_edge"], "seq_len"].tolist()
        notes.append(f"the best c lies at the edge of the grid for N = {_lengths(edge)}: the optimum may lie beyond it")
    interior = int((~table["at_edge"].astype(bool)).sum())
    if interior < len(table):
        notes.append(f"the slope uses the {interior} interior optima of {len(table)} lengths (edge values are censored)"
                     + ("; fewer than two, so no slope is fitted" if interior < 2 else ""))
    if len(table) < 3:
        notes.append(f"only {len(table)} sequence lengths: the slope is a line through {len(table)} points")
    rng = np.random.default_rng(seed)
    boots = []
    if n_boot and all(gr.acc.shape[1] > 1 for gr in grids):
        ns = [gr.seq_len for gr in grids]
        for _ in range(n_boot):
            stars = []
            for gr in grids:
                pick = rng.integers(0, gr.acc.shape[1], gr.acc.shape[1])
                _, _, c_star, edge = _best_of(gr, gr.acc[:, pick], gr.diverged[:, pick])
                stars.append(np.nan if edge else c_star)
            boots.append(_fit_slope(ns, stars))
    boots = np.asarray(boots, dtype=float)
    n_tried = len(boots)
    boots = boots[np.isfinite(boots)]
    a = (1 - confidence) / 2
    ci = tuple(float(v) for v in np.quantile(boots, [a, 1 - a])) if len(boots) else (np.nan, np.nan)
    if not len(boots):
        notes.append("one seed per cell: no bootstrap interval for the slope")
    return BestConstant(table=table, cells=cells, slope=slope, slope_ci=ci, slope_grid=slope_grid,
                        direction=_direction(table["best_c"].to_numpy()), n_boot=len(boots),
                        confidence=confidence, notes=notes, metric=metric.as_dict(), n_tried=n_tried)


#: The columns of :func:`best_constant_table` and the names it shows them under.
BEST_CONSTANT_COLUMNS = {
    "seq_len": "N", "best_c_label": "best c", "best_mean": "accuracy (%)", "best_std": "std",
    "runner_up_c_label": "runner-up c", "margin": "margin (points)", "margin_ci_low": "paired CI low",
    "margin_ci_high": "paired CI high", "resolved": "CI excludes 0", "c_star": "interpolated c*",
    "inv_sqrt_n": "1/sqrt(N)", "at_edge": "best at grid edge"}


def best_constant_table(bc: BestConstant, digits: int = 3) -> pd.DataFrame:
    """:func:`best_constant`'s table for display: one row per N, the columns named for readers."""
    return bc.table[list(BEST_CONSTANT_COLUMNS)].rename(columns=BEST_CONSTANT_COLUMNS).set_index("N").round(digits)


def best_constant_rows(bc: BestConstant) -> list[dict]:
    """:func:`best_constant`'s table for people, one column per N: the best c with its mean ± sd,
    the runner-up, the margin with its paired interval in one cell, whether that interval
    excludes 0, whether the best c is at the grid's edge, the interpolated c* and 1/√N ("–"
    where a length has no answer)."""
    metric = resolve_metric(bc.metric or None)
    t = bc.table.sort_values("seq_len")
    level = f"{round(100 * bc.confidence)}%"
    what = metric.label or metric.name
    unit = f"{metric.unit}, mean ± sd" if metric.unit else "mean ± sd"

    def yes(v):
        return "–" if v is None or v != v else ("yes" if v else "no")

    def value(m, sd):
        return f"{m:.1f}" if sd != sd else f"{m:.1f} ± {sd:.1f}"

    def margin(m, lo, hi):
        if m != m:
            return "–"
        return typographic(f"{m:+.2f}" if lo != lo else f"{m:+.2f} [{lo:+.2f}, {hi:+.2f}]")

    fields = [("best c", lambda r: r.best_c_label),
              (f"its {what} ({unit})", lambda r: value(r.best_mean, r.best_std)),
              ("runner-up c", lambda r: r.runner_up_c_label),
              (f"margin over the runner-up, {diff_unit(metric)} [paired {level} CI]",
               lambda r: margin(r.margin, r.margin_ci_low, r.margin_ci_high)),
              ("interval excludes 0", lambda r: yes(r.resolved)),
              ("best c at the grid's edge", lambda r: yes(r.at_edge)),
              ("interpolated c*", lambda r: f"{r.c_star:.3g}"),
              ("1/√N", lambda r: f"{r.inv_sqrt_n:.3g}")]
    return [{"": name, **{f"N = {int(r.seq_len)}": get(r) for r in t.itertuples()}} for name, get in fields]


def _lengths(ns) -> str:
    """Sequence lengths in words: "17", "17 and 50", "17, 50 and 197"."""
    ns = [str(int(n)) for n in ns]
    return ns[0] if len(ns) == 1 else ", ".join(ns[:-1]) + " and " + ns[-1]


def scale_form(bc: BestConstant) -> str:
    """The verdict form on Figure 1's question (does the best c of c*x^3 move like 1/sqrt(N)?)
    from :func:`best_constant`: ``holds`` when the bootstrap interval of the slope holds -1/2 and
    not 0; ``not supported`` when it excludes -1/2; ``inconclusive at this scale`` when there is
    no interval, when some length's winner is not resolved from its runner-up, or when the
    interval holds both -1/2 and 0."""
    lo, hi = bc.slope_ci
    has_ci = lo == lo and hi > lo
    # None (one seed, no interval) and NaN count as unresolved, like False
    unresolved = any(not (isinstance(r, (bool, np.bool_)) and r) for r in bc.table["resolved"])
    if not has_ci or unresolved or (lo <= bc.theory_slope <= hi and lo <= 0 <= hi):
        return "inconclusive at this scale"
    return "holds" if lo <= bc.theory_slope <= hi else "not supported"
