"""Chapter 06, "What runs, and what the published setting was": the grid's runs and seeds, how the
book preset departs from the published setting, and the detail the page folds (the variants'
formulas, both presets' settings, the reasons, the probes, the first runs at the published
speed).

    grid_values(runs); setting_values(); published_speed_values()
    fold_setting(runs)    # variants_table(runs), setting_tables(), book_notes(), probes_table(), ...
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import pandas as pd

from ... import activations
from ...analysis import physics as pa
from ...book.deliver import styled
from ...display import markdown_table
from ...experiments import physics as grids
from ...formulas import math_formula
from ...labels import PDES, PINN_LABEL, PINNSFORMER_VARIANTS
from ...models.pinn import PINN_SIZES
from ...models.pinnsformer import PINNSFORMER_SIZES
from ...runs import stored
from .page import SOFTMAX, Runs, fold, parameters_text, small, variant_name


def _and(items) -> str:
    """"a", "a and b", "a, b and c"."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def variants_table(runs: Runs):
    """The variants as a Markdown table (so that MyST renders their weights' formulas): the
    attention weights with N = 5, the seeds, and whether the weights are non-negative and rows sum
    to one."""
    from IPython.display import Markdown

    rows = []
    for label, spec in PINNSFORMER_VARIANTS:
        act = activations.get(spec)
        rows.append([variant_name(label), math_formula(act.description), runs.seeds(label),
                     "yes" if act.nonnegative else "no", "yes" if act.rows_sum_to_one else "no"])
    rows.append([PINN_LABEL, "no attention", runs.seeds(PINN_LABEL), "–", "–"])
    return Markdown("**The variants**: PINNsFormer with each attention activation, and the PINN without attention"
                    "\n\n" + markdown_table(["Variant", "Weights", "Seeds", "Non-negative", "Rows sum to one"], rows))


def grid_values(runs: Runs) -> dict[str, str]:
    """The runs of the grid, the seeds of the claim's variants and of the others, the test grid."""
    test = runs.configs[0].options["test_grid"] if runs.configs else grids.SCALES["book"]["test_grid"]
    return {"n_runs": str(len(runs.configs)), "seeds_main": str(runs.seeds(SOFTMAX)),
            "seeds_rest": str(runs.seeds("x^3/14")), "test_grid": " × ".join(map(str, test))}


def setting_values() -> dict[str, str]:
    """What the book preset changes from the published setting (the paper preset), per preset
    (``_book``, ``_paper``): PINNsFormer's feed-forward and output widths (``ff``, ``mlp``), the
    PINN's width (``pinn``), both collocation grids (``grid``, ``pinn_grid``), the L-BFGS steps
    on convection, reaction and the wave (``steps``) and how often the test error is computed
    (``eval``)."""
    out = {}
    for key in ("book", "paper"):
        s = grids.SCALES[key]
        former, pinn = PINNSFORMER_SIZES[s["model"]], PINN_SIZES[s["pinn"].removeprefix("pinn_")]
        out.update({f"ff_{key}": str(former["d_ff"]), f"mlp_{key}": str(former["d_hidden"]),
                    f"pinn_{key}": str(pinn["width"]), f"grid_{key}": " × ".join(map(str, s["grid"])),
                    f"pinn_grid_{key}": " × ".join(map(str, s["pinn_grid"])),
                    f"steps_{key}": _and(f"{s['steps'][p]:,}" for p in PDES if p in s["steps"]),
                    f"eval_{key}": str(s["eval_every"])})
    return out


def setting_tables() -> list:
    """The models under the book and paper presets, then the problems and their optimisation."""
    setting = pd.DataFrame(grids.setting_table())
    models = setting[["preset", "PINNsFormer", "PINNsFormer grid", "PINN", "PINN grid"]].drop_duplicates()
    problems = [{"PDE": r["PDE"], "preset": r["preset"], "parameters": parameters_text(r["problem"]),
                 "L-BFGS steps × iterations": r["L-BFGS steps x iterations"].replace(" x ", " × "),
                 "test grid": r["test grid"].replace(" x ", " × ")} for _, r in setting.iterrows()]
    return [small(styled(models.to_dict("records"), "The models under each preset")),
            styled(problems, "The problems and their optimisation under each preset")]


def book_notes():
    """How the book preset departs from the published setting, and why, as a Markdown list."""
    from IPython.display import Markdown

    return Markdown("**How the book preset departs from the published setting, and why:**\n\n"
                    + "\n".join(f"- {note}" for note in grids.BOOK_NOTES.values()))


def probes_table():
    """The probes that sized the book preset: seconds (CPU for the short probes, wall for the long
    ones, each probe has one of the two) and the test rMAE reached."""
    rows = [{"PDE": r["PDE"].replace("beta", "β"),
             "Model": ", ".join(variant_name(p) for p in r["model"].replace("_", " ").split(", ")),
             "Grid": r["grid"].replace(" x ", " × "), "Steps × iterations": r["steps x iterations"].replace(" x ", " × "),
             "Seconds": f"{r['CPU s']:.3g} CPU" if r.get("CPU s") is not None else f"{r['wall s']:,} wall",
             "rMAE": f"{r['rMAE']:.3g}"} for r in grids.SIZING]
    return small(styled(rows, "The probes that sized the book preset (one thread of a shared machine: upper bounds)"))


#: The folded parts of the section on what runs, in the order the page shows them.
SETTING_FOLDS = ("variants", "models", "problems", "notes", "probes", "pub_speed")


def fold_setting(runs: Runs, prefix: str = "ch06_fold") -> list[str]:
    """Glue the configuration detail the page folds (:data:`SETTING_FOLDS`, as ``<prefix>_<name>``):
    the variants' formulas, the two presets' models and problems, the reasons for each reduction,
    the probes that sized the book preset and the first runs at the published speed.  Returns the
    names glued."""
    models, problems = setting_tables()
    shown = dict(zip(SETTING_FOLDS, (variants_table(runs), models, problems, book_notes(), probes_table(),
                                     published_speed_table())))
    for name, value in shown.items():
        fold(f"{prefix}_{name}", value)
    return [f"{prefix}_{name}" for name in shown]


def _published_speed_final(root: Optional[Path] = None) -> pd.DataFrame:
    records = [r for r in (stored(c, root) for c in grids.published_speed_runs()) if r is not None]
    if not records:
        return pd.DataFrame()
    final = pa.physics_final(records)
    final["train_loss"] = [r["metrics"][-1]["train_loss"] for r in records]
    return final


def published_speed_table(root: Optional[Path] = None):
    """The first book runs, on convection at the published speed: final rMAE and training loss."""
    from IPython.display import Markdown

    final = _published_speed_final(root)
    if final.empty:
        return Markdown("Their records are not in this checkout.")
    rows = [{"Variant": variant_name(r["variant"]), "Seed": int(r["seed"]), "Final rMAE": f"{r['rMAE']:.3g}",
             "Final training loss": f"{r['train_loss']:.3g}", "Above the failure threshold": "yes" if r["failed"] else "no"}
            for _, r in final.iterrows()]
    return styled(rows, f"Convection at the published speed, {grids.PUBLISHED_SPEED_STEPS} L-BFGS steps, book preset "
                        f"otherwise; failure threshold: rMAE {pa.FAIL_RMAE:g}")


def published_speed_values(root: Optional[Path] = None) -> dict[str, str]:
    """The steps of the first runs, softmax's and the PINN's final rMAE, and how many failed."""
    final = _published_speed_final(root).reindex(columns=["variant", "rMAE", "failed"])
    of = {r["variant"]: f"{r['rMAE']:.3f}" for _, r in final.iterrows()}
    return {"steps": str(grids.PUBLISHED_SPEED_STEPS), "softmax": of.get(SOFTMAX, "not stored"),
            "pinn": of.get(PINN_LABEL, "not stored"),
            "failed": f"{int(final['failed'].sum())} of {len(final)}"}
