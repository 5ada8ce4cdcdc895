"""Chapter 06's measured claim: PINNsFormer's outcome depends strongly on the seed.

The runs of the ``physics`` grid train softmax PINNsFormer (and other attention activations,
and the PINN) on convection, reaction and the wave with several seeds.  A (problem, variant) is
*seed-sensitive* when its seeds disagree on the outcome (some reach a test rMAE below
:data:`polyattn.analysis.physics.FAIL_RMAE`, some do not) or when its best and worst seed differ
by more than a factor :data:`polyattn.analysis.physics.SPREAD_FACTOR`
(:func:`polyattn.analysis.physics.error_table`).  The claim is about softmax PINNsFormer, the
published model; the other activations are counted beside it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..analysis import physics as pa
from ..claims.spec import Finding
from ..display import typographic
from ..labels import PINN_LABEL, pde_of
from .stored import GridRecords, grid_records

GRID = "physics"
#: The variant the claim is about (PINNsFormer as published).
CLAIM_VARIANTS = ("softmax",)
#: Names of the PDE parameters, as the chapter writes them.
GREEK = {"beta": "β", "rho": "ρ", "nu": "ν"}


def physics_scope(grid: GridRecords) -> str:
    """The setting in words: model, collocation grid, L-BFGS steps per problem, the problems whose
    parameters differ from the published ones, and the preset."""
    cfg = grid.configs[0]
    steps = {}
    for c in grid.configs:
        if not str(c.model).startswith("pinn_"):
            steps.setdefault(pde_of(c), c.epochs)
    changed = []
    for dataset in dict.fromkeys(c.dataset for c in grid.configs):
        name, _, params = dataset.partition(":")
        if params:
            values = ", ".join(f"{GREEK.get(k, k)} = {float(v):g}" for k, v in (p.split("=") for p in params.split(",")))
            changed.append(f"{name} at {values}")
    return (f"PINNsFormer {cfg.model}, {' x '.join(map(str, cfg.options['grid']))} grid, L-BFGS steps "
            + ", ".join(f"{p} {n}" for p, n in steps.items())
            + (f", {'; '.join(changed)} instead of the published parameters" if changed else "")
            + f", preset {cfg.preset}")


def seed_sensitivity(root: Optional[Path] = None) -> Finding:
    """Per problem, whether softmax PINNsFormer's seeds disagree, the failures out of the seeds
    with the exact interval of the failure rate they leave open, and how many (problem, other
    activation) cases are seed-sensitive; the form by :func:`polyattn.analysis.physics.seed_claim`."""
    grid = grid_records(GRID, root)
    scope = physics_scope(grid)
    numbers = {"runs stored": grid.stored, "runs planned": grid.planned, "failure threshold (rMAE)": pa.FAIL_RMAE,
               "spread factor": pa.SPREAD_FACTOR}
    if not grid.records:
        return Finding("inconclusive at this scale", f"No run of the physics grid is stored ({scope}).", numbers)
    table = pa.error_table(pa.physics_final(grid.records))
    seed = pa.seed_claim(table, variants=CLAIM_VARIANTS)
    for rate in seed["rates"]:
        key = f"{rate['variant']} on {rate['pde']}"
        numbers.update({f"{key}: failed seeds": rate["failed"], f"{key}: seeds": rate["seeds"],
                        f"{key}: failure rate CI low": rate["low"], f"{key}: failure rate CI high": rate["high"]})
    for _, r in seed["checked"].iterrows():
        key = f"{r['variant']} on {r['pde']}"
        numbers.update({f"{key}: best rMAE": float(r["best"]), f"{key}: worst rMAE": float(r["worst"]),
                        f"{key}: seed-sensitive": "yes" if r["seed_sensitive"] else "no"})
    others = table[~table["variant"].isin([*CLAIM_VARIANTS, PINN_LABEL])]
    numbers.update({"problems where softmax is seed-sensitive": len(seed["sensitive"]),
                    "problems checked": len(seed["checked"]),
                    "other activation cases seed-sensitive": int(others["seed_sensitive"].sum()),
                    "other activation cases": len(others)})
    return Finding(seed["form"], typographic(_summary(seed, pa, numbers, scope, grid)), numbers)


def _summary(seed: dict, pa, numbers: dict, scope: str, grid: GridRecords) -> str:
    sens = seed["sensitive"]
    parts = [f"{r['pde']}: {r['n_failed']} of {r['n_seeds']} seeds fail, rMAE {r['best']:.3f} to {r['worst']:.3f}"
             for _, r in sens.iterrows()]
    text = ("Softmax PINNsFormer is seed-sensitive on " + "; ".join(parts) + ". ") if parts else \
        "Softmax PINNsFormer is seed-sensitive on no problem. "
    steady = seed["checked"][~seed["checked"]["seed_sensitive"]]
    if len(steady):
        text += (f"On {', '.join(steady['pde'])} every seed falls on the same side of rMAE {pa.FAIL_RMAE:g} and within "
                 f"a factor {pa.SPREAD_FACTOR:g}, which a handful of seeds cannot turn into a rate: "
                 + "; ".join(pa.rate_text(r) for r in seed["rates"] if r["pde"] in set(steady["pde"])) + ". ")
    stored = "" if grid.complete else f"; {grid.stored} of {grid.planned} runs stored"
    text += (f"Other activations seed-sensitive: {numbers['other activation cases seed-sensitive']} of "
             f"{numbers['other activation cases']} (PDE, activation) cases ({scope}{stored}).")
    return text
