"""Chapter 07's sections on associative recall (MQAR): the book's budget (``causal_mqar``), ten times
its training (``causal_mqar_long``), and the setting where softmax learns recall (``causal_mqar_recall``).

    mq = mqar_runs(page, seeds, recompute)      # Runs, as chapter 07's other sections load theirs
    mqar_figure(mq); mqar_table(mq)             # recall per variant and test set, against its levels
    long = mqar_long_runs(); mqar_long_table(long, registered)
    runs = recall_runs(page, seeds, recompute)  # stored runs at the book preset; trained at smoke
    curve_figure(runs)                          # recall on the training test set over the epochs, per seed
    glue_values(recall_numbers(runs))           # the seeds that learned recall, per variant

The figures and tables of the first read any MQAR grid.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ... import analysis
from ...analysis import causal as ca
from ...analysis import recall
from ...analysis.causal import variant_colors, variant_frame
from ...analysis.tables import interval_cell
from ...book.deliver import styled
from ...labels import charlm_label
from ...runs import page_records
from .page import REGISTERED, Runs, compact, load_runs, register_cell, show, unbroken

#: The recall levels of :data:`polyattn.analysis.recall.LEVELS` in a table cell.
SHORT_LEVELS = dict(zip(recall.LEVELS, ("guessing", "below the plateau", "at the plateau", "recall")))



def mqar_runs(page, seeds=None, recompute: bool = False) -> Runs:
    """Associative recall (``causal_mqar``)."""
    from ...experiments import mqar

    return load_runs("mqar", mqar.causal_mqar, page, seeds, recompute, False, "MQAR")

def mqar_long_runs() -> Runs:
    """The stored runs of MQAR with ten times the training (``causal_mqar_long``, book preset:
    the register reads them there, and no other preset trains them)."""
    from ...experiments import mqar
    grid = mqar.causal_mqar_long("book")
    return Runs(grid, page_records(grid, "book"), "book", "no run of this grid is stored yet")

def mqar_figure(mq: Runs):
    """Recall accuracy per variant on each test set (bars, 95% t-intervals; each seed a dot) against the
    copy plateau (dashed, with its band) and guessing (dotted).  A variant split across the plateau
    has no interval: its seeds tell."""
    if not mq:
        return None
    import matplotlib.pyplot as plt

    from ...plotting import stamp

    table = recall.recall_table(mq.frame, mq.grid[0])
    sets = recall.levels(mq.grid[0])
    colours = ca.variant_colors()
    n = table["variant"].nunique()
    fig, axes = plt.subplots(1, len(sets), figsize=(8, 0.24 * n + 1.5), sharey=True, squeeze=False)
    for ax, (name, length, pairs, guess, plateau) in zip(axes.flat, sets):
        g = table[table["test_set"] == name]
        y = np.arange(len(g))[::-1]
        err = np.vstack([g["mean"] - g["ci_low"], g["ci_high"] - g["mean"]]) * 100
        err[:, (g["level"] == recall.SPLIT).to_numpy()] = np.nan
        ax.barh(y, 100 * g["mean"], xerr=None if np.isnan(err).all() else np.nan_to_num(err), capsize=2,
                color=[colours.get(v, "grey") for v in g["variant"]])
        for yi, variant in zip(y, g["variant"]):
            seeds = 100 * mq.frame.loc[mq.frame["activation"] == variant, f"acc_{name}"].astype(float).dropna()
            ax.plot(seeds, np.full(len(seeds), yi), "o", ms=3, color="black", alpha=0.7)
        ax.axvline(100 * plateau, color="black", ls="--", lw=1)
        ax.axvspan(100 * plateau / recall.PLATEAU_BAND, 100 * plateau * recall.PLATEAU_BAND, color="grey",
                   alpha=0.15, lw=0)
        ax.axvline(100 * guess, color="grey", ls=":", lw=1)
        ax.set_yticks(y, [show(v) for v in g["variant"]])
        ax.set_title(f"length {length}, {pairs} pairs", fontsize=10)
        ax.set_xlabel("accuracy (%)")
        ax.tick_params(labelsize=9)
    stamp(fig, mq.preset, f"{len(mq.seeds)} seed(s), each a dot; dashed: copy plateau 1/K, its band grey; "
                          "dotted: guessing")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig

def mqar_table(mq: Runs):
    """Per variant and test set: recall accuracy (%) with its 95% t-interval and its level."""
    if not mq:
        return None
    table = recall.recall_table(mq.frame, mq.grid[0])
    sets = recall.levels(mq.grid[0])
    rows = []
    for variant, g in table.groupby("variant", sort=False):
        row = {"variant": show(variant)}
        for name, length, pairs, _, _ in sets:
            r = g[g["test_set"] == name].iloc[0]
            row[f"length {length}, {pairs} pairs"] = (
                "diverged" if r["level"] == "diverged" else
                f"{100 * r['mean']:.1f} (seeds {100 * r['seed_min']:.1f} to {100 * r['seed_max']:.1f}), "
                f"recall in {r['above']} of {r['n']}" if r["level"] == recall.SPLIT else
                f"{unbroken(interval_cell(100 * r['mean'], 100 * r['ci_low'], 100 * r['ci_high'], '.1f'))}, "
                f"{SHORT_LEVELS[r['level']]}")
        rows.append(row)
    budget = analysis.budget_text(analysis.compute_budget(mq.records))
    return compact(styled(rows, (
        f"Recall accuracy (%), mean [95% t-interval] over seeds, and its level: guessing, below, at or above the "
        f"copy plateau 1/K (recall); where the seeds fall on both sides of the plateau, the mean, the seeds' range "
        f"and how many reached recall, each seed judged on its own (a mean over a split outcome describes no seed). "
        f"{mq.stored} planned runs, preset {mq.preset}; compute: {budget}")))

def mqar_numbers(mq: Runs) -> dict:
    """The test sets, the plateau's band, and the variants above the copy plateau on any test set."""
    sets = recall.levels(mq.grid[0])
    out = {"ch07_plateau_band": f"{recall.PLATEAU_BAND:g}",
           "ch07_mqar_sets": ", ".join(f"length {L} with {K} pairs" for _, L, K, _, _ in sets)}
    if not mq:
        return {**out, "ch07_mqar_above": mq.missing, "ch07_mqar_at_plateau": mq.missing}
    table = recall.recall_table(mq.frame, mq.grid[0])
    above = list(dict.fromkeys(table.loc[table["level"] == recall.LEVELS[3], "variant"]))
    first = table[table["test_set"] == sets[0][0]]
    at = list(first.loc[first["level"] == recall.LEVELS[2], "variant"])
    return {**out, "ch07_mqar_above": ", ".join(map(show, above)) or "none",
            "ch07_mqar_at_plateau": ", ".join(map(show, at)) or "none"}

def mqar_long_table(long: Runs, registered: Mapping[tuple, dict]):
    """Per variant of the long budget and test set: the seeds above the copy plateau (runs that
    learned recall) with the best accuracy, and the register's difference from softmax."""
    if not long:
        return None
    ok = [r for r in long.records if r["status"] == "ok"]
    above = recall.seeds_above_plateau(ca.variant_frame(ok), long.grid[0])
    rows = []
    for variant, per_set in above.items():
        row = {"variant": show(variant)}
        for length, k, n, best in per_set:
            row[f"length {length}"] = f"{k} of {n} ({100 * best:.0f})"
        reg = next((r for (c, b, _), r in registered.items() if c == variant and b == "softmax"), None)
        row["Δ vs softmax (points)"] = unbroken(register_cell(reg, "+.2f")) if reg else ""
        row["result"] = (reg["Result"] + " " + REGISTERED) if reg else ""
        rows.append(row)
    cfg = long.grid[0]
    return compact(styled(rows, (
        f"Ten times the training ({cfg.epochs} epochs): per test set the seeds above the copy plateau (runs that "
        f"learned recall) and the best seed's accuracy (%); {REGISTERED} the register's comparison (claim mqar "
        f"long). {long.stored} planned runs, book preset")))

def mqar_long_numbers(long: Runs) -> dict:
    """The long grid's variants, epochs and stored runs, and the variants with more seeds above the
    copy plateau than softmax on some test set."""
    from ...experiments import mqar

    out = {"ch07_mqar_long_found": f"{long.stored} planned runs stored",
           "ch07_mqar_long_epochs": long.grid[0].epochs,
           "ch07_mqar_long_variants": ", ".join(show(v) for v in mqar.LONG_VARIANTS)}
    if not long:
        return {**out, "ch07_mqar_long_beyond": long.missing, "ch07_mqar_long_softmax": long.missing}
    ok = [r for r in long.records if r["status"] == "ok"]
    above = recall.seeds_above_plateau(ca.variant_frame(ok), long.grid[0])
    soft = max((k for _, k, _, _ in above.get("softmax", [])), default=0)
    beyond = [v for v in above if v != "softmax" and max(k for _, k, _, _ in above[v]) > soft]
    return {**out, "ch07_mqar_long_beyond": ", ".join(map(show, beyond)) or "none",
            "ch07_mqar_long_softmax": str(soft)}

def softpick_numbers(mq: Runs) -> dict:
    """Softpick's MQAR runs: how many trained to the end and the commits that computed them."""
    keys = ("ch07_softpick_ok", "ch07_softpick_commits")
    if not mq:
        return dict.fromkeys(keys, mq.missing)
    recs = [r for r in mq.records if r["config"]["activation"] == "softpick"]
    ok = sum(r["status"] == "ok" for r in recs)
    return {"ch07_softpick_ok": f"{ok} of {len(recs)}",
            "ch07_softpick_commits": ", ".join(sorted({str(r["provenance"]["git_commit"])[:7] for r in recs}))}


def recall_runs(page, seeds=None, recompute: bool = False) -> Runs:
    """The runs of ``causal_mqar_recall``: at the book preset only the stored ones (the grid trains
    for hours), at the others trained."""
    from ...experiments import mqar

    return load_runs("mqar_recall", mqar.causal_mqar_recall, page, seeds, recompute, True, "MQAR recall")


def probe_numbers() -> dict:
    """What the stored softmax probes (``causal_mqar_probe``, book preset, whatever the page's preset:
    they chose the grid's setting) did per vocabulary: ``ch07_probe_<V>`` says the last evaluation
    inside the copy plateau's band, the first above it with its recall, and the recall at the end."""
    from ...experiments import mqar
    grid = mqar.causal_mqar_probe("book")
    stored = {r["config"]["options"]["vocab_size"]: r for r in page_records(grid, "book", progress=False)}
    out = {}
    for cfg in grid:
        vocab = cfg.options["vocab_size"]
        r = stored.get(vocab)
        if r is None:
            out[f"ch07_probe_{vocab}"] = "not stored"
            continue
        name, length, pairs, _, plateau = _training_set(cfg)
        curve = [(m["epoch"], m[f"acc_{name}"]) for m in r["metrics"] if f"acc_{name}" in m]
        above = [(e, a) for e, a in curve if a > plateau * recall.PLATEAU_BAND]
        final = f"{100 * curve[-1][1]:.1f}% after epoch {curve[-1][0]}"
        if not above:
            out[f"ch07_probe_{vocab}"] = f"never above the plateau's band: {final}"
            continue
        first, acc = above[0]
        inside = [e for e, a in curve if e < first]
        out[f"ch07_probe_{vocab}"] = (f"{'within the band through epoch ' + str(inside[-1]) + ', ' if inside else ''}"
                                      f"above it from epoch {first} ({100 * acc:.1f}%), {final}")
    return out


_POSITIONS = {"rope": "rotary", "sinusoidal": "sinusoidal"}
#: The recall a probe setting must reach in every probe seed before the decision grid trains there.
DECIDE_RECALL = 0.90


def probe2_numbers() -> dict:
    """The second round of softmax probes (``causal_mqar_probe2_<setting>``, book preset, whatever the
    page's preset): ``ch07_probe2`` gives, per setting, its learning rate, examples, length, pairs and
    positions and the final recall of each stored seed; ``ch07_probe2_found`` the settings at which
    every stored seed (at least the grid's three) reached :data:`DECIDE_RECALL`, or that none did."""
    from ...experiments import mqar_decide

    parts, found = [], []
    for name, s in mqar_decide.PROBE2_SETTINGS.items():
        grid = mqar_decide.probe2_at(name)("book")
        stored = page_records(grid, "book", progress=False)
        what = (f"learning rate {s['lr']:g}, {s['examples']:,} examples an epoch, length {s['L']} with {s['K']} "
                f"pairs, {_POSITIONS.get(s['positions'], s['positions'])} positions")
        if not stored:
            parts.append(f"{what}: not run")
            continue
        finals = [(r["seed"], r["metrics"][-1]["acc"]) for r in sorted(stored, key=lambda r: r["seed"])]
        parts.append(f"{what}: " + ", ".join(f"{100 * a:.0f}%" for _, a in finals)
                     + f" (seed{'s' * (len(finals) > 1)} {', '.join(str(k) for k, _ in finals)})")
        if len(finals) >= len(grid) and all(a >= DECIDE_RECALL for _, a in finals):
            found.append(what)
    return {"ch07_probe2": "; ".join(parts),
            "ch07_probe2_found": ("every probe seed reached it at " + " and at ".join(found)) if found
            else "no setting has reached it in every probe seed yet"}


def _training_set(config) -> tuple[str, int, int, float, float]:
    """The test set of the training length and load (the first of :func:`polyattn.analysis.recall.levels`)."""
    return recall.levels(config)[0]


def learned(runs: Runs) -> dict[str, tuple[int, int]]:
    """Per variant (chapter labels, in the grid's order): (seeds above the copy plateau's band on the
    training test set, seeds stored), read per seed as :func:`polyattn.analysis.recall.level_of` does."""
    ok = [r for r in runs.records if r["status"] == "ok"]
    if not ok:
        return {}
    return {variant: (k, n) for variant, ((_, k, n, _), *_) in
            recall.seeds_above_plateau(variant_frame(ok), runs.grid[0]).items()}


def recall_numbers(runs: Runs) -> dict:
    """``ch07_recall_learned``: per variant the seeds that learned recall on the training test set;
    ``ch07_recall_setting``: the training length, pairs and epochs; ``ch07_recall_tests``: the test
    sets; ``ch07_recall_plateau``: the copy plateau there; ``ch07_recall_found``: runs stored."""
    from ...experiments import mqar

    cfg = runs.grid[0]
    name, length, pairs, _, plateau = _training_set(cfg)
    out = {"ch07_recall_setting": f"length {length} with {pairs} pairs, {cfg.epochs} epoch{'s' * (cfg.epochs != 1)}",
           "ch07_recall_found": f"{runs.stored} planned runs stored",
           "ch07_recall_plateau": f"{100 * plateau:g}%",
           "ch07_recall_tests": " and ".join(f"length {L} with {K} pairs" for _, L, K, _, _ in recall.levels(cfg)),
           "ch07_recall_variants": ", ".join(show(v) for v in mqar.RECALL_VARIANTS)}
    counts = learned(runs)
    out["ch07_recall_learned"] = ("; ".join(f"{show(v)} {k} of {n}" for v, (k, n) in counts.items())
                                  if counts else runs.missing)
    return out


def curve_figure(runs: Runs):
    """Recall accuracy on the training test set (its length and load) over the epochs, one panel per variant and one line per
    seed, against the copy plateau 1/K (dashed, with its band grey) and guessing (dotted)."""
    if not runs:
        return None
    import matplotlib.pyplot as plt

    from ...plotting import stamp

    name, length, pairs, guess, plateau = _training_set(runs.grid[0])
    colours = variant_colors()
    by_variant: dict[str, list] = {}
    for r in runs.records:
        by_variant.setdefault(charlm_label(r["config"]), []).append(r)
    fig, axes = plt.subplots(1, len(by_variant), figsize=(2.3 * len(by_variant) + 1, 2.4), sharey=True,
                             squeeze=False)
    for ax, (variant, recs) in zip(axes.flat, by_variant.items()):
        for r in sorted(recs, key=lambda r: r["seed"]):
            rows = [m for m in r["metrics"] if f"acc_{name}" in m]
            ax.plot([m["epoch"] for m in rows], [100 * m[f"acc_{name}"] for m in rows], lw=1.2, marker="o", ms=2.5,
                    color=colours.get(variant, "grey"), alpha=0.85)
        ax.axhline(100 * plateau, color="black", ls="--", lw=1)
        ax.axhspan(100 * plateau / recall.PLATEAU_BAND, 100 * plateau * recall.PLATEAU_BAND, color="grey",
                   alpha=0.15, lw=0)
        ax.axhline(100 * guess, color="grey", ls=":", lw=1)
        ax.set_title(show(variant), fontsize=10)
        ax.set_xlabel("epoch")
        ax.set_ylim(0, 102)
        ax.tick_params(labelsize=9)
    axes.flat[0].set_ylabel(f"recall, length {length}, {pairs} pairs (%)")
    stamp(fig, runs.preset, f"{len(runs.seeds)} seed(s), a line each; dashed: copy plateau 1/K = "
                            f"{100 * plateau:g}%, its band grey; dotted: guessing")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


__all__ = ["curve_figure", "learned", "probe_numbers", "mqar_figure", "mqar_long_numbers", "mqar_long_runs", "mqar_long_table",
           "mqar_numbers", "mqar_runs", "mqar_table", "recall_numbers", "recall_runs", "softpick_numbers"]
