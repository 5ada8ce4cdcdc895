"""Chapter 05's first sections: how the comparisons are judged, what the published harness ran and
what runs here (the grid, the data every run of a task sees, an example of ListOps and of
Pathfinder).

    judging_values(); harness_values(); harness_table()
    grid_values(runs); task_tables(runs); listops_example(runs); pathfinder_figure(runs)

``runs`` is :func:`polyattn.studies.lra.page.load` of the page.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ... import analysis
from ...book.deliver import styled
from ...claims import claim
from ...data.lra import listops, pathfinder
from ...experiments import lra as grids
from ...models.seq_classifier import SEQ_SIZES
from .page import CLAIMS, FONT, LABELS, PAPER_LR, TASKS, Runs, chance_band, compact, margin, names, plural, task_name


def judging_values() -> dict[str, str]:
    """The margin, the test level and power, the test set's size, the binomial standard error of
    one run's accuracy near 50% (points), the chance band, and how many comparisons each claim
    of the chapter has (``comparisons_<claim id>``)."""
    test_n = grids.lra("book", seeds=[0])[0].test_subset
    return {"margin": f"±{margin():g} accuracy points", "alpha": f"{analysis.ALPHA:g}", "power": f"{analysis.POWER:g}",
            "test_n": f"{test_n:,}", "binom_se": f"{100 * (0.25 / test_n) ** 0.5:.1f}",
            "chance_band": f"{chance_band():g}",
            **{f"comparisons_{cid}": str(len(claim(cid).comparisons)) for cid in CLAIMS}}


def harness_values() -> dict[str, str]:
    """The harness's model in words and its learning rate."""
    size = SEQ_SIZES["nystromformer"]
    return {"model": f"{size['depth']} layers, width {size['dim']}, {size['heads']} heads of "
                     f"{size['dim'] // size['heads']}, MLP {int(size['dim'] * size['mlp_ratio'])}, "
                     f"dropout {size['dropout']:g}",
            "paper_lr": f"{PAPER_LR:g}"}


def harness_table():
    """The published harness's setting, one column per task."""
    paper = pd.DataFrame(grids.paper_table()).set_index("task")
    shown = [("data", "data"), ("train", "train examples"), ("val", "validation examples"), ("test", "test examples"),
             ("max length", "max length (tokens)"), ("batch", "batch"), ("steps", "steps"),
             ("warm-up steps", "warm-up steps")]
    rows = [{"": label, **{task_name(t): (f"{v:,}" if isinstance(v, (int, np.integer)) else str(v).replace("_", " "))
                           for t, v in paper[key].items()}} for key, label in shown]
    return styled(rows, "The published harness's setting per task (the paper preset; listed, not trained here)")


# --- the grid and its data -----------------------------------------------------------------------


def grid_values(runs: Runs) -> dict[str, str]:
    """Runs, seeds, tasks and variants of the grid, and the tasks that wait for their runs."""
    return {"n_runs": f"{len(runs.configs):,}", "seeds": plural(runs.seeds, "seed"), "n_tasks": str(len(TASKS)),
            "n_variants": str(len(LABELS)), "pending": names(runs.pending)}


def task_tables(runs: Runs) -> list:
    """Two tables (so that neither is wider than the page): what each task asks and how it departs
    from the published one; the data every run of it sees, with its chance level."""
    if not runs.trains:
        return []
    what, data = [], []
    for t in runs.tasks:
        d, cfg = runs.data[t], runs.by_task(t)[0]
        lengths = np.concatenate([s.lengths.numpy() for s in d.splits.values()]
                                 + [s.lengths2.numpy() for s in d.splits.values() if s.paired]).astype(float)
        what.append({"task": task_name(t), "what it is": d.description["task"],
                     "deviation from the published setting": grids.deviation(cfg)})
        data.append({"task": task_name(t),
                     "real tokens min / mean / max": f"{lengths.min():.0f} / {lengths.mean():.0f} / {lengths.max():.0f}",
                     "padded to": d.max_len, "train / val / test": " / ".join(f"{len(s):,}" for s in d.splits.values()),
                     "classes": d.num_classes, "chance (%)": f"{100 * d.chance:.1f}"})
    return [compact(styled(what, f"What each task asks, and how it departs from the published one (preset {runs.preset})")),
            compact(styled(data, f"The data every run of a task sees (preset {runs.preset}); chance: the test accuracy "
                                 "of always answering the most frequent training label"))]


def listops_example(runs: Runs) -> dict[str, str]:
    """The shortest of 20 ListOps expressions drawn with the preset's generator settings: the
    expression (as code), its length in tokens and its value."""
    options = dict(runs.by_task("listops")[0].options.get("data", {}))
    sample = listops.generate(20, seed=123, **{**listops.DEFAULTS, **options})
    i = min(range(len(sample.ids)), key=lambda k: len(sample.ids[k]))
    return {"expression": f"`{listops.decode(sample.ids[i])}`", "length": str(len(sample.ids[i])),
            "value": str(int(sample.labels[i]))}


def pathfinder_figure(runs: Runs):
    """Two Pathfinder images of each label, drawn with the preset's generator settings."""
    import matplotlib.pyplot as plt

    options = dict(runs.by_task("pathfinder")[0].options.get("data", {}))
    cfg = pathfinder.preset(14, **options)
    pics = pathfinder.generate(8, seed=123, cfg=cfg)
    labels = [int(v) for v in pics["labels"]]
    shown = [k for lab in (1, 0) for k in [j for j in range(len(labels)) if labels[j] == lab][:2]]
    fig, axes = plt.subplots(1, len(shown), figsize=(2 * len(shown), 2.4), squeeze=False)
    for ax, k in zip(axes[0], shown):
        ax.imshow(pics["images"][k].numpy(), cmap="gray", vmin=0, vmax=255)
        ax.set_title(f"label {labels[k]}: {'joined' if labels[k] else 'not joined'}", fontsize=FONT)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(f"Pathfinder at {cfg.size} × {cfg.size}, contour length {cfg.contour_length}", fontsize=10)
    fig.tight_layout()
    return fig
