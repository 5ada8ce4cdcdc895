"""Chapter 05, "Pathfinder: the data, or the model?": the ``lra_pathfinder_budget`` grid (the
softmax transformer on more images, without distractors, and a small CNN) against the task's
chance level.

    check = pathfinder_check(preset, seeds, device, recompute)
    pathfinder_table(check, preset); pathfinder_values(check)

:func:`pathfinder_check` keeps what it reads for the session.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import pandas as pd

from ...analysis import lra as lra_analysis
from ...book.deliver import styled
from ...experiments import lra as grids
from ...presets import prologue
from ...runs import page_records
from ...tasks import get_task
from .page import PAPER_NOTE, compact, interval_text, listed, plural


@dataclass
class PathfinderCheck:
    configs: list
    records: list
    chance: float
    table: pd.DataFrame          # lra_analysis.pathfinder_budget_table, indexed by model; empty until all stored
    grid_images: int             # images the grid's Pathfinder runs see

    @property
    def complete(self) -> bool:
        return bool(self.configs) and len(self.records) == len(self.configs)


def pathfinder_check(preset: str, seeds=None, device: str = "cpu", recompute: bool = False) -> PathfinderCheck:
    """The ``lra_pathfinder_budget`` grid's runs (the book preset reads them, smoke trains them),
    with the task's chance level; kept for the session."""
    return _pathfinder_check(preset, tuple(seeds) if seeds else None, device, bool(recompute))


@lru_cache(maxsize=4)
def _pathfinder_check(preset: str, seeds, device: str, recompute: bool) -> PathfinderCheck:
    page = prologue(preset, device, paper_note=PAPER_NOTE)
    grid_preset = preset if page.trains else "book"
    configs = page.on_device(grids.pathfinder_budget(grid_preset, list(seeds) if seeds else None))
    grid = next(c for c in grids.lra(grid_preset, seeds=[0]) if grids.task_of(c) == "pathfinder")
    records = (page_records(configs, preset, recompute, desc="pathfinder budget", progress=False)
               if page.trains else [])
    # the chance level of the grid's Pathfinder data (the same generator): generating the check's
    # larger training set only to count its labels would take minutes
    chance = float(get_task("lra").load(grid, 1, 0).chance)
    check = PathfinderCheck(configs, records, chance, pd.DataFrame(), grid.train_subset * grid.epochs)
    if check.complete:
        check.table = lra_analysis.pathfinder_budget_table(records, chance).set_index("model")
    return check


def pathfinder_table(check: PathfinderCheck, preset: str):
    """The check's models: seeds, images seen, test accuracy, whether it left chance, CPU time."""
    from IPython.display import Markdown

    if not check.complete:
        return Markdown("")
    rows = [{"Model": m, "Seeds": int(r["seeds"]), "Images seen": f"{int(r['images seen']):,}",
             "Test accuracy, % [95% CI]": interval_text(r["mean"], r["ci_low"], r["ci_high"]),
             "Learned": "yes" if r["learned"] else "no", "CPU s per run": f"{r['wall_s']:.0f}"}
            for m, r in check.table.iterrows()]
    return compact(styled(rows, f"Pathfinder's budget check, preset {preset}: the grid's softmax transformer and a "
                                f"small CNN on {check.configs[0].train_subset:,} training images; chance is "
                                f"{100 * check.chance:.1f}%"))


TRANSFORMER, EASY, CNN = "transformer (softmax)", "transformer (softmax), no distractors", "CNN reference"


def pathfinder_values(check: PathfinderCheck) -> dict[str, str]:
    """The check's scale, each model's accuracy, which models left chance, and the published
    harness's budget beside it."""
    cfg = check.configs[0]
    _, _, batch, steps, _, _ = grids.PAPER_HARNESS["pathfinder"]
    seen = cfg.train_subset * cfg.epochs
    out = {"seeds": plural(len({c.seed for c in check.configs}), "seed"), "train": f"{cfg.train_subset:,}",
           "epochs": str(cfg.epochs), "seen": f"{seen:,}", "times_grid": f"{seen / check.grid_images:.1f}",
           "stored": f"{len(check.records)} of {len(check.configs)}", "chance": f"{100 * check.chance:.1f}%",
           "published_steps": f"{steps:,}", "published_batch": str(batch), "published_images": f"{batch * steps:,}",
           "times_published": f"{batch * steps / seen:,.0f}"}
    for key, model in (("transformer", TRANSFORMER), ("easy", EASY), ("cnn", CNN)):
        r = check.table.loc[model] if model in check.table.index else None
        out[key] = "not stored" if r is None else (
            f"{100 * r['mean']:.1f}% (95% CI {100 * r['ci_low']:.1f} to {100 * r['ci_high']:.1f})")
        out[f"{key}_learned"] = "not stored" if r is None else ("learns" if r["learned"] else "does not learn")
    shown = {TRANSFORMER: "the transformer", EASY: "the transformer without distractors", CNN: "the CNN"}
    learned = {m: bool(r["learned"]) for m, r in check.table.iterrows()}
    out["learned_by"] = listed([shown[m] for m, y in learned.items() if y])
    out["not_learned_by"] = listed([shown[m] for m, y in learned.items() if not y])
    return out
