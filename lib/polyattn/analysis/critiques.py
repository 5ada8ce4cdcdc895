"""The reviewers' remaining objections as computations on records and on attention weights.

Record-based (chapter 09 reads the committed Table 1 and scale-sweep records):

    norm_order(probes, "poly:p=3,c=1", "poly:p=1", metrics)   # how often one activation's norm is below another's
    multiplier(c, n); paper_constants()                     # the scale as a multiple of 1/sqrt(N)
    factor_effect(final, k_low=1, k_high=2)                 # accuracy at k_high minus at k_low, per N, per seed

On attention weights ``[..., N_q, N_k]`` (any activation, signed weights allowed):

    negative_mass_share(w)            # sum of |negative weights| over sum of |weights|
    token_mass_share(w, token)        # share of each row's absolute weight on one key, mean over rows
    mean_attention_distance(w, grid)  # |weight|-weighted distance between patches, per head
    saturated_rows(w, threshold)      # rows whose largest weight exceeds the threshold

and a paired bootstrap over test images for "which model loses more accuracy under a
perturbation" (:func:`paired_drop_difference`).

The short retrainings' measurements, stored in their records (``critique_short_retrain``,
:func:`polyattn.attention_maps.measure`), read back:

    short_accuracy(records); short_gradients(records)   # accuracy by activation; gradient rows
    short_outliers(records)                           # outlier table and per-image correctness
    short_maps(records)                               # CLS maps, negative share, attention distance
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np
import pandas as pd

from ._common import _require
from .stats import t_interval

if TYPE_CHECKING:  # the functions on attention weights take tensors; the record readers need no torch
    from torch import Tensor


# --- norms of two activations, cell by cell --------------------------------------------------

def norm_order(probes: pd.DataFrame, activation: str, reference: str, metrics: Sequence[str]) -> pd.DataFrame:
    """Per metric: how often ``activation``'s norm is below ``reference``'s.

    A cell is one (seed, layer, probed step); the value of a run in a cell is its mean over
    heads, and the two activations are paired by seed (same initialisation and data order).
    Columns: ``n_cells``, ``share_lower`` (fraction of cells where ``activation`` is lower),
    ``median_ratio`` / ``min_ratio`` / ``max_ratio`` (of ``activation`` over ``reference``),
    ``share_lower_first`` / ``share_lower_rest`` (the first probed step alone, and every later
    step), so a pattern of the initialisation is told apart from one of training.
    """
    _require(probes, ["activation", "seed", "layer", "step", "metric", "value"], "norm_order")
    rows = []
    for metric in metrics:
        p = probes[probes["metric"] == metric]
        cell = p.groupby(["activation", "seed", "layer", "step"])["value"].mean()
        a = cell.xs(activation, level="activation") if activation in cell.index.get_level_values(0) else None
        b = cell.xs(reference, level="activation") if reference in cell.index.get_level_values(0) else None
        if a is None or b is None:
            raise ValueError(f"norm_order: no {metric!r} probes for {activation if a is None else reference!r}")
        both = pd.concat({"a": a, "b": b}, axis=1).dropna()
        ratio = both["a"] / both["b"]
        first = both.index.get_level_values("step") == both.index.get_level_values("step").min()
        lower = (both["a"] < both["b"]).to_numpy()
        rows.append({"metric": metric, "activation": activation, "reference": reference, "n_cells": len(both),
                     "share_lower": float(lower.mean()) if len(lower) else np.nan,
                     "share_lower_first": float(lower[first].mean()) if first.any() else np.nan,
                     "share_lower_rest": float(lower[~first].mean()) if (~first).any() else np.nan,
                     "median_ratio": float(ratio.median()), "min_ratio": float(ratio.min()),
                     "max_ratio": float(ratio.max())})
    return pd.DataFrame(rows)


# --- the scale as a multiple of 1/sqrt(N) ----------------------------------------------------

def multiplier(c: float, n: int) -> float:
    """The constant ``c`` of ``c x^p`` as a multiple ``k`` of ``1/sqrt(N)``: ``k = c sqrt(N)``.

    ``k = 1`` is the paper's ``x^p / sqrt(N)``; ``k > 1`` a larger weight, ``k < 1`` a smaller one.
    """
    if not n > 0:
        raise ValueError(f"multiplier: N must be positive, got {n}")
    return float(c) * math.sqrt(n)


#: The constants the paper uses, with the sequence length each one meets (patch tokens; the
#: CLS token adds one).  Tiny-ImageNet: 64-pixel images, patch 4 gives 256 tokens and patch 8
#: gives 64 (the paper does not say which it used); its text says 1/8, its table 1/16.
PAPER_CONSTANTS = (
    ("Tiny-ImageNet, text and caption", "1/8", 256),
    ("Tiny-ImageNet, text and caption", "1/8", 64),
    ("Tiny-ImageNet, table header", "1/16", 256),
    ("Tiny-ImageNet, table header", "1/16", 64),
    ("ImageNet-1k, every architecture", "1/14", 196),
)


def paper_constants(cls_token: bool = True) -> pd.DataFrame:
    """The paper's constants on the multiplier axis: ``k = c sqrt(N)`` for N patch tokens
    (and N + 1 with a CLS token when ``cls_token``)."""
    rows = []
    for setting, c, n in PAPER_CONSTANTS:
        cv = float(Fraction(c))
        row = {"setting": setting, "c": c, "patch_tokens": n, "k_patches": multiplier(cv, n)}
        if cls_token:
            row["k_with_cls"] = multiplier(cv, n + 1)
        rows.append(row)
    return pd.DataFrame(rows)


def interpolate_log(xs: Sequence[float], ys: Sequence[float], x: float) -> float:
    """``y`` at ``x`` by linear interpolation in ``log x`` between the grid points; NaN outside
    the grid or when a neighbouring value is missing."""
    xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    order = np.argsort(xs)
    xs, ys = xs[order], ys[order]
    if len(xs) == 0 or not xs[0] <= x <= xs[-1]:
        return float("nan")
    j = int(np.searchsorted(xs, x))
    if xs[j] == x:
        return float(ys[j])
    lo, hi = j - 1, j
    t = (math.log(x) - math.log(xs[lo])) / (math.log(xs[hi]) - math.log(xs[lo]))
    return float(ys[lo] + t * (ys[hi] - ys[lo]))


def factor_effect(final: pd.DataFrame, k_low: float = 1.0, k_high: float = 2.0, metric: str = "test_acc",
                  scale: float = 100.0, confidence: float = 0.95) -> pd.DataFrame:
    """Per sequence length: the metric at multiplier ``k_high`` minus at ``k_low``, read off each
    seed's sweep curve by :func:`interpolate_log` (``final``: one row per run with ``seq_len``,
    ``c``, ``seed``, ``status`` and ``metric``), then the mean over seeds with a t interval.

    Also ``best_k`` (the grid multiplier with the best mean), ``range`` (best minus worst mean
    over the grid) and ``k_grid`` (the multipliers the grid holds at that length).  A diverged
    run counts as missing.  Differences are in the metric times ``scale`` (points for accuracy).
    """
    _require(final, ["seq_len", "c", "seed", "status", metric], "factor_effect")
    rows = []
    for n, g in final.groupby("seq_len", sort=True):
        g = g.assign(k=g["c"].astype(float) * math.sqrt(n),
                     y=np.where(g["status"] == "ok", g[metric].astype(float) * scale, np.nan))
        means = g.groupby("k")["y"].mean()
        diffs = []
        for _, s in g.groupby("seed"):
            s = s.dropna(subset=["y"])
            diffs.append(interpolate_log(s["k"], s["y"], k_high) - interpolate_log(s["k"], s["y"], k_low))
        d = np.array([x for x in diffs if x == x])
        mean, lo, hi = t_interval(d, confidence) if len(d) else (np.nan, np.nan, np.nan)
        rows.append({"seq_len": int(n), "k_grid": tuple(round(float(k), 3) for k in means.index),
                     "best_k": float(means.idxmax()) if means.notna().any() else np.nan,
                     "best_mean": float(means.max()), "range": float(means.max() - means.min()),
                     "k_low": k_low, "k_high": k_high, "n_seeds": len(d), "diff": mean, "ci_low": lo, "ci_high": hi})
    return pd.DataFrame(rows)


# --- attention weights -------------------------------------------------------------------------

def negative_mass_share(w: Tensor, dims: Optional[Sequence[int]] = None) -> Tensor:
    """Sum of |negative weights| over the sum of |weights| (0 for non-negative weights, 1 when all
    are negative), reduced over ``dims`` (default: all).  NaN where every weight is zero."""
    import torch  # the weights are tensors: only these functions on them import torch

    w = w.double()
    dims = tuple(range(w.dim())) if dims is None else tuple(dims)
    neg = (-w).clamp_min(0).sum(dims)
    tot = w.abs().sum(dims)
    return torch.where(tot > 0, neg / tot.clamp_min(1e-300), torch.full_like(tot, float("nan")))


def token_mass_share(w: Tensor, token: int) -> Tensor:
    """The share of each row's absolute weight that falls on key ``token``, averaged over the
    query rows: ``w [..., N_q, N_k] -> [...]``.  For softmax it is the weight itself; for uniform
    weights ``1 / N_k``.  Rows of all-zero weights count as 0."""
    a = w.double().abs()
    share = a[..., token] / a.sum(-1).clamp_min(1e-300)
    return share.mean(-1)


def patch_distances(grid: int) -> Tensor:
    """Euclidean distances between the cells of a ``grid x grid`` patch grid (row-major), in patches."""
    import torch  # a tensor, for the weights it weighs

    ij = torch.stack(torch.meshgrid(torch.arange(grid), torch.arange(grid), indexing="ij"), -1).reshape(-1, 2)
    return torch.cdist(ij.double(), ij.double())


def mean_attention_distance(w: Tensor, grid: int, n_prefix: int = 1) -> Tensor:
    """The |weight|-weighted mean distance (in patches) from each patch query to the patch keys,
    averaged over the patch queries: ``w [..., N, N] -> [...]``, ``N = n_prefix + grid^2`` (the
    prefix tokens, e.g. CLS, are left out as queries and as keys).  Signed weights enter by
    their absolute value, so the distance describes where a head's weight sits, whatever its sign.
    """
    n = n_prefix + grid * grid
    if w.shape[-1] != n or w.shape[-2] != n:
        raise ValueError(f"mean_attention_distance: expected {n} x {n} weights ({n_prefix} prefix tokens and a "
                         f"{grid} x {grid} grid), got {tuple(w.shape[-2:])}")
    a = w.double().abs()[..., n_prefix:, n_prefix:]
    d = patch_distances(grid)
    per_query = (a * d).sum(-1) / a.sum(-1).clamp_min(1e-300)
    return per_query.mean(-1)


def uniform_attention_distance(grid: int) -> float:
    """:func:`mean_attention_distance` of uniform weights on a ``grid x grid`` patch grid."""
    return float(patch_distances(grid).mean())


def saturated_rows(w: Tensor, threshold: float = 0.99) -> Tensor:
    """Rows whose largest weight exceeds ``threshold``: ``w [..., N_q, N_k] -> bool [..., N_q]``."""
    return w.amax(-1) > threshold


# --- a perturbation's cost, two models on the same images --------------------------------------

def paired_drop_difference(a_clean, a_perturbed, b_clean, b_perturbed, n_boot: int = 2000, seed: int = 0,
                           confidence: float = 0.95) -> dict:
    """How much more accuracy model a loses than model b under a perturbation, on the same images.

    Each argument is a boolean (or 0/1) array over the same test images: correct or not.  The
    drop of a model is its clean accuracy minus its perturbed accuracy, in points; ``diff`` is
    a's drop minus b's.  The interval resamples images (percentile bootstrap), so it covers the
    choice of test images for these two trained models, not the randomness of training.
    """
    arrs = [np.asarray(x, dtype=float) for x in (a_clean, a_perturbed, b_clean, b_perturbed)]
    n = len(arrs[0])
    if any(len(x) != n for x in arrs) or n == 0:
        raise ValueError("paired_drop_difference: the four arrays must cover the same, non-empty set of images")
    per_image = (arrs[0] - arrs[1]) - (arrs[2] - arrs[3])
    rng = np.random.default_rng(seed)
    boots = per_image[rng.integers(0, n, (n_boot, n))].mean(1) * 100
    a = (1 - confidence) / 2
    lo, hi = np.quantile(boots, [a, 1 - a]) if n_boot else (np.nan, np.nan)
    return {"drop_a": float((arrs[0] - arrs[1]).mean() * 100), "drop_b": float((arrs[2] - arrs[3]).mean() * 100),
            "diff": float(per_image.mean() * 100), "ci_low": float(lo), "ci_high": float(hi), "n_images": n}


# --- the short retrainings' stored measurements (``critique_short_retrain``) ---------------------

def _measured(records, key: str) -> list:
    """The records that carry ``final[key]`` (a diverged run stores no measurements)."""
    return [r for r in records if r.get("status") == "ok" and key in (r.get("final") or {})]


def short_accuracy(records) -> dict:
    """Test accuracy (%) at the end of each run, by activation; NaN for a diverged run."""
    return {r["config"]["activation"]: (100 * float(r["metrics"][-1]["test_acc"])
                                        if r.get("status") == "ok" and r.get("metrics") else float("nan"))
            for r in records}


def short_gradients(records) -> pd.DataFrame:
    """The stored gradients through the activation (``final["gradients"]``), one row per
    activation, state (``"initialisation"``, ``"trained"``) and layer, with the columns of
    :func:`polyattn.model_checks.activation_gradients`."""
    rows = [{**row, "activation": r["config"]["activation"]}
            for r in _measured(records, "gradients") for row in r["final"]["gradients"]["rows"]]
    return pd.DataFrame(rows)


def short_outliers(records) -> tuple[pd.DataFrame, dict]:
    """The stored outlier sweeps (``final["outliers"]``): a table with one row per activation,
    place, factor and layer (``accuracy`` in %, ``token_share``, ``uniform_share``), and the
    per-image correctness ``{(activation, place): {factor: bool array}}`` for paired comparisons."""
    tables, correct = [], {}
    for r in _measured(records, "outliers"):
        o, act = r["final"]["outliers"], r["config"]["activation"]
        tables.append(pd.DataFrame(o["table"]).assign(activation=act))
        for where, strings in o["correct"].items():
            correct[(act, where)] = {float(f): np.frombuffer(s.encode(), dtype=np.uint8) == ord("1")
                                     for f, s in zip(o["factors"], strings)}
    return (pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()), correct


def short_maps(records) -> dict:
    """The stored maps (``final["maps"]``) by activation: ``cls`` as an array ``[L, B, H, g, g]``,
    ``negative_mass_share`` ``[L]`` and ``attention_distance`` ``[L, H]`` as arrays, ``layers``
    (0-based), ``grid``, ``n_images`` and ``n_test``."""
    out = {}
    for r in _measured(records, "maps"):
        m = r["final"]["maps"]
        out[r["config"]["activation"]] = {
            **m, "cls": np.asarray(m["cls"], dtype=float),
            "negative_mass_share": np.asarray(m["negative_mass_share"], dtype=float),
            "attention_distance": np.asarray(m["attention_distance"], dtype=float)}
    return out
