"""Chapter 06, "How the errors are judged" and "Errors per problem and variant": the failure
threshold, the margin and the published errors they are set against; the final errors per
problem and variant, and the measured claim's counts of seed-sensitive cases.

    judging_values(); error_table(runs); error_values(runs)
    seed_values(deliver("seed_sensitivity").verdict.numbers)
"""
from __future__ import annotations

import pandas as pd

from ... import analysis
from ...analysis import physics as pa
from ...book.deliver import styled
from ...experiments import physics as grids
from ...labels import PDES, PINN_LABEL
from ..critiques.page import first_only
from .page import POLY, SOFTMAX, Runs, margin, not_run, small, variant_name


def judging_values() -> dict[str, str]:
    """The failure threshold, the margin (log10 and as a factor), the test level and power, the
    spread factor, and the published errors the threshold is set against."""
    pub = grids.PUBLISHED_ERRORS
    return {"fail": f"{pa.FAIL_RMAE:g}", "margin": f"{margin():.3f}", "margin_factor": f"{10 ** margin():.3g}",
            "alpha": f"{analysis.ALPHA:g}", "power": f"{analysis.POWER:g}", "spread": f"{pa.SPREAD_FACTOR:g}",
            "pub_former": " and ".join(f"{pub[p]['PINNsFormer'][0]:.3f}" for p in ("convection", "reaction")),
            "pub_pinn": " and ".join(f"{pub[p]['PINN'][0]:.2f}" for p in ("convection", "reaction")),
            "pub_wave": f"{pub['wave']['PINNsFormer'][0]:.2f}"}


def error_table(runs: Runs):
    """Per problem and variant: the median rMAE over the seeds with its quartiles, the best and
    worst seed, the failed seeds with the exact interval of their share, and whether the library's
    rule calls the variant seed-sensitive there."""
    if not runs.trains:
        return not_run(runs)
    def cell(r):
        if r["n_seeds"] == r["n_diverged"]:
            return "diverged"
        q = f" [{r['q25']:.3f}, {r['q75']:.3f}]" if r["n_seeds"] - r["n_diverged"] > 1 else ""
        return f"{r['median']:.3f}{q}"

    table = runs.table
    rows = [{"PDE": pde, "Variant": variant_name(r["variant"]), "Median rMAE [quartiles]": cell(r),
             "Best / worst seed": f"{r['best']:.3f} / {r['worst']:.3f}" if r["best"] == r["best"] else "–",
             "Failed seeds (95% CI of the share)": (f"{r['n_failed']} of {r['n_seeds']} ({r['fail_ci_low']:.2f}–"
                                                    f"{r['fail_ci_high']:.2f})"
                                                    + (f", {r['n_diverged']} diverged" if r["n_diverged"] else "")),
             "Seed-sensitive": "yes" if r["seed_sensitive"] else "no"}
            for pde, (_, r) in zip(first_only(table["pde"]), table.iterrows())]
    return small(styled(rows, runs.caption(f"Final test rMAE per problem and variant over the seeds; a seed fails "
                                           f"above rMAE {pa.FAIL_RMAE:g}")))


def error_values(runs: Runs) -> dict[str, str]:
    """What the runs cost, in one line, and per problem the failed seeds of softmax, x³/√N and the
    PINN (``failed_<pde>_<softmax|poly|pinn>``: "0 of 5")."""
    table = runs.table.set_index(["pde", "variant"]) if runs.trains else pd.DataFrame()
    out = {"budget": analysis.budget_text(analysis.compute_budget(runs.records)) if runs.trains else runs.not_run}
    for p in PDES:
        for label, key in ((SOFTMAX, "softmax"), (POLY, "poly"), (PINN_LABEL, "pinn")):
            out[f"failed_{p}_{key}"] = (f"{table.loc[(p, label), 'n_failed']} of {table.loc[(p, label), 'n_seeds']}"
                                        if (p, label) in table.index else runs.not_run)
    return out


def seed_values(numbers: dict) -> dict[str, str]:
    """The measured claim's counts: problems on which softmax is seed-sensitive, of those checked,
    and the other activations' seed-sensitive cases."""
    keys = {"sensitive": "problems where softmax is seed-sensitive", "checked": "problems checked",
            "others": "other activation cases seed-sensitive", "other_cases": "other activation cases"}
    return {k: str(numbers.get(v, "not stored")) for k, v in keys.items()}
