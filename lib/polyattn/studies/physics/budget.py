"""Chapter 06, "Convection with a longer budget": softmax and x³/√N on convection at the book's
L-BFGS budget (grid ``physics``) and at the published one (grid ``physics_long``), from the
book's stored records whatever the page's preset.

    budget = budget_runs(); budget_table(budget); budget_values(budget); budget_figure(budget)
    claim_comparison(deliver("physics_long"), "convection")
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from ...analysis import physics as pa
from ...book.deliver import styled
from ...claims.report import comparison_rows
from ...experiments import physics as grids
from ...labels import PINNSFORMER_VARIANTS
from ...measures.stored import grid_records
from .page import FONT, POLY, SOFTMAX, parameters_text, small, variant_name


def _range(values, fmt: str = ".3f") -> str:
    """"0.014 [0.005, 0.031]": the median and the range of ``values``; "–" when there are none."""
    v = np.asarray([x for x in values if x == x], dtype=float)
    if not len(v):
        return "–"
    if len(v) == 1:
        return format(float(v[0]), fmt)
    return f"{format(float(np.median(v)), fmt)} [{format(float(v.min()), fmt)}, {format(float(v.max()), fmt)}]"


@dataclass
class Budget:
    """Softmax and x³/√N on convection at the book's L-BFGS budget (grid ``physics``) and at the
    longer one (grid ``physics_long``): the records per grid, and one row per run in ``runs`` with
    ``grid``, ``steps`` (the run's budget), ``variant``, ``seed``, ``rMAE`` (final), ``failed``,
    ``first_below`` (the first evaluated step at which the test rMAE was at most the failure
    threshold; NaN if never) and ``cpu`` (the processor it ran on)."""
    records: dict
    runs: pd.DataFrame

    @property
    def empty(self) -> bool:
        return self.runs.empty


BUDGET_GRIDS = ("physics", "physics_long")


def budget_runs(root: Optional[Path] = None) -> Budget:
    """:class:`Budget` from the book's stored records whatever the page's preset (the register
    judges ``physics_long`` from them); kept for the session."""
    return _budget_runs(root)


@lru_cache(maxsize=2)
def _budget_runs(root: Optional[Path]) -> Budget:
    cols = ["grid", "steps", "variant", "seed", "rMAE", "failed", "first_below", "cpu"]
    out, kept = [], {}
    for grid in BUDGET_GRIDS:
        records = [r for r in grid_records(grid, root).records
                   if grids.pde_of(r) == "convection" and grids.variant_label(r) in grids.LONG_VARIANTS]
        if not records:
            continue
        kept[grid] = records
        final = pa.physics_final(records)
        epochs = pa.physics_epochs(records)
        below = epochs[epochs["rMAE"] <= pa.FAIL_RMAE].groupby("run")["step"].min()
        run = {f"{r['config_hash']}-seed{r['seed']}": r for r in records}
        out += [{"grid": grid, "steps": int(run[r["run"]]["config"]["epochs"]), "variant": r["variant"],
                 "seed": int(r["seed"]), "rMAE": float(r["rMAE"]), "failed": bool(r["failed"]),
                 "first_below": float(below.get(r["run"], np.nan)),
                 "cpu": ((run[r["run"]].get("provenance") or {}).get("hardware") or {}).get("cpu", "")}
                for _, r in final.iterrows()]
    return Budget(kept, pd.DataFrame(out, columns=cols))


def _short_steps(budget: Budget) -> int:
    short = budget.runs.loc[budget.runs["grid"] == "physics", "steps"]
    return int(short.max()) if len(short) else int(grids.SCALES["book"]["steps"]["convection"])


def budget_summary(budget: Budget) -> pd.DataFrame:
    """Per grid and variant: the budget, the seeds, how many failed at the end, how many had reached
    the threshold by the book's budget, and the first step below it and the final rMAE (medians,
    ranges)."""
    cols = ["grid", "steps", "variant", "seeds", "failed", "by_short", "first_below", "rMAE"]
    if budget.empty:
        return pd.DataFrame(columns=cols)
    short = _short_steps(budget)
    rows = []
    for (grid, variant), g in budget.runs.groupby(["grid", "variant"], sort=False):
        crossed = g["first_below"].dropna()
        rows.append({"grid": grid, "steps": int(g["steps"].max()), "variant": variant, "seeds": len(g),
                     "failed": int(g["failed"].sum()), "by_short": int((crossed <= short).sum()),
                     "first_below": _range(crossed, ".0f") if len(crossed) else "never",
                     "rMAE": _range(g["rMAE"])})
    return pd.DataFrame(rows, columns=cols)


def budget_table(budget: Budget):
    """:func:`budget_summary` for people."""
    from IPython.display import Markdown

    if budget.empty:
        return Markdown("No run of either grid is stored in this checkout.")
    short = _short_steps(budget)
    rows = [{"Variant": variant_name(r["variant"]), "L-BFGS steps": r["steps"],
             "Failed at the end": f"{r['failed']} of {r['seeds']}",
             f"Below {pa.FAIL_RMAE:g} by step {short}": f"{r['by_short']} of {r['seeds']}",
             f"First step below {pa.FAIL_RMAE:g}, median [range]": r["first_below"],
             "Final rMAE, median [range]": r["rMAE"]} for _, r in budget_summary(budget).iterrows()]
    book = grids.SCALES["book"]
    setting = (f"PINNsFormer {book['model']} on the {' × '.join(map(str, book['grid']))} grid, "
               f"{parameters_text(grids.pde_spec('book', 'convection'))}")
    return small(styled(rows, f"Convection at the book's budget (grid physics) and at the published one (grid "
                              f"physics_long): book preset records whatever this page's preset, {setting}; a run "
                              f"fails above rMAE {pa.FAIL_RMAE:g} at its last step. Description, not a test: the "
                              "registered comparison is in the claim's table"))


def budget_values(budget: Budget) -> dict[str, str]:
    """The two budgets, per grid (``short``, ``long``) and variant (``softmax``, ``poly``): the
    failed seeds, the seeds below the threshold by the book's budget, the first step below it and
    the final rMAE (medians and ranges); and the processors each grid ran on."""
    summary = budget_summary(budget)
    out = {"short_steps": str(_short_steps(budget)), "long_steps": str(grids.LONG_STEPS["convection"]),
           "long_seeds": str(budget.runs.loc[budget.runs["grid"] == "physics_long", "seed"].nunique())}
    for grid, key in (("physics", "short"), ("physics_long", "long")):
        for label, short in ((SOFTMAX, "softmax"), (POLY, "poly")):
            r = summary[(summary["grid"] == grid) & (summary["variant"] == label)]
            if r.empty:
                out.update({f"{what}_{key}_{short}": "not stored" for what in ("failed", "by_short", "first", "rmae")})
                continue
            r = r.iloc[0]
            out.update({f"failed_{key}_{short}": f"{r['failed']} of {r['seeds']}",
                        f"by_short_{key}_{short}": f"{r['by_short']} of {r['seeds']}",
                        f"first_{key}_{short}": r["first_below"], f"rmae_{key}_{short}": r["rMAE"]})
        cpus = sorted({c for c in budget.runs.loc[budget.runs["grid"] == grid, "cpu"] if c})
        out[f"cpu_{key}"] = ", ".join(cpus) or "not recorded"
    return out


def claim_comparison(delivered, comparison_id: str) -> dict[str, str]:
    """One comparison of a delivered registered claim: its difference with its interval (log10),
    the ratio of errors it means, the seed pairs and its result."""
    v = delivered.verdict
    for r, row in zip(v.comparisons, comparison_rows(v)):
        if r.comparison.id == comparison_id:
            mean = getattr(r, "mean", float("nan"))
            return {"difference": row["Difference [95% CI]"].removesuffix(" (log10)"), "pairs": row["Pairs"],
                    "ratio": f"{10 ** mean:.2g}" if mean == mean else "–", "result": row["Result"]}
    raise ValueError(f"claim {v.claim.id!r} has no comparison {comparison_id!r}")


def budget_figure(budget: Budget):
    """Convection's test rMAE over L-BFGS steps: the book grid (median and range over seeds, one band
    per variant) and the longer grid (each seed); the book's budget dashed, the threshold dotted."""
    import matplotlib.pyplot as plt

    from ... import plotting

    if budget.empty:
        return None
    short = _short_steps(budget)
    shown = [g for g in BUDGET_GRIDS if g in budget.records]
    fig, axes = plt.subplots(1, len(shown), figsize=(5.5 * len(shown), 3.6), sharey=True, squeeze=False)
    for ax, grid in zip(axes[0], shown):
        records = budget.records[grid]
        epochs = pa.physics_epochs(records)
        for label in grids.LONG_VARIANTS:
            color = plotting.activation_color(dict(PINNSFORMER_VARIANTS)[label])
            e = epochs[epochs["variant"] == label]
            if grid == "physics":
                g = e.groupby("step")["rMAE"]
                ax.fill_between(g.min().index, g.min(), g.max(), color=color, alpha=0.2, lw=0)
                ax.plot(g.median().index, g.median(), color=color, lw=1.6,
                        label=f"{variant_name(label)}: median, range of {e['seed'].nunique()} seeds")
            else:
                for i, (_, s) in enumerate(e.groupby("seed")):
                    ax.plot(s["step"], s["rMAE"], color=color, lw=1.2, alpha=0.85,
                            label=f"{variant_name(label)}: each seed" if i == 0 else None)
        ax.axhline(pa.FAIL_RMAE, color="grey", ls=":", lw=1)
        ax.axvline(short, color="grey", ls="--", lw=1)
        ax.set_yscale("log")
        ax.set_xlabel("L-BFGS step", fontsize=FONT)
        ax.set_title(f"{'book grid' if grid == 'physics' else 'longer grid'}, "
                     f"{int(records[0]['config']['epochs'])} steps", fontsize=FONT + 1)
        ax.legend(fontsize=FONT, loc="lower left")
    axes[0, 0].set_ylabel("convection: test rMAE", fontsize=FONT)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    plotting.stamp(fig, "book", f"dashed: step {short}; dotted: the failure threshold")
    return fig
