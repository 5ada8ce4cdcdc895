"""Chapter 10's "Detection and instance segmentation": the detection proxy's synthetic scenes,
its detector and N against the paper preset's Mask R-CNN, and the ``detection_proxy`` grid's runs
as test AP and curves (the register's table and the positive control are
:mod:`polyattn.studies.architectures.page`'s):

    scenes_figure(preset); detector_values(preset); detector_deviation_values(); detector_setup_table()
    det = load_detection(preset, seeds, device, recompute)
    ap_table(det); detection_figure(det)

:func:`load_detection` and the detector's facts keep what they read while the page runs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from ... import analysis
from ...analysis import detection as det
from ...book.deliver import styled
from ...labels import DETECTION_VARIANTS
from ...numbers import square_root
from ...presets import prologue
from .page import FONT, PAPER_NOTE, not_run, plural, read_records, readable


def _shown_config(preset: str):
    """The detection config whose scenes and model the page shows: the preset's, or the book's
    where the preset trains nothing (the paper preset's data is COCO)."""
    from ...experiments.detection import detection_proxy
    return detection_proxy(preset if prologue(preset).trains else "book")[0]


def scenes_figure(preset: str, n: int = 4):
    """The first ``n`` test scenes of the preset's detection data: the items' masks shaded, their
    boxes and Fashion-MNIST classes drawn."""
    import matplotlib.pyplot as plt
    from torchvision.datasets import FashionMNIST

    from ...data.scenes import load_scenes
    from ...tasks.detection import options

    config = _shown_config(preset)
    opts = options(config)
    spec = opts["spec"]
    scenes = load_scenes("test", config.test_subset, spec, seed=opts["data_seed"])
    classes = FashionMNIST.classes
    fig, axes = plt.subplots(1, n, figsize=(10, 3.0))
    for i, ax in enumerate(np.atleast_1d(axes)):
        target = scenes.target(i)
        ax.imshow(scenes.images[i, 0].numpy(), cmap="gray", vmin=0, vmax=255)
        overlay = np.zeros((*scenes.images.shape[-2:], 4))
        for k, (mask, box, lab) in enumerate(zip(target["masks"], target["boxes"], target["labels"])):
            colour = plt.get_cmap("tab10")(k)
            overlay[mask.numpy()] = (*colour[:3], 0.45)
            x0, y0, x1, y1 = box.tolist()
            ax.add_patch(plt.Rectangle((x0 - 0.5, y0 - 0.5), x1 - x0, y1 - y0, fill=False, color=colour, lw=1.2))
            ax.text(x0 - 0.5, y0 - 1, classes[int(lab)], color=colour, fontsize=FONT, va="bottom")
        ax.imshow(overlay)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"test scene {i}: {plural(len(target['labels']), 'item')}", fontsize=FONT)
    fig.suptitle(f"Synthetic scenes, preset {config.preset}: {spec.min_items}–{spec.max_items} Fashion-MNIST items of "
                 f"{spec.min_side}–{spec.max_side} px on a {spec.canvas} × {spec.canvas} canvas", fontsize=FONT + 1)
    fig.tight_layout()
    return fig


@lru_cache(maxsize=2)
def _detector_facts(preset: str) -> dict:
    from ...experiments.detection_setup import detector_facts

    return detector_facts(_shown_config(preset))


def detector_values(preset: str) -> dict[str, str]:
    """The shown detector's patch, N, √N, the paper's 1/14 over 1/√N, and its parameters."""
    facts, config = _detector_facts(preset), _shown_config(preset)
    return {"patch": str(config.patch_size), "n": f"{facts['N']:,}", "root": square_root(facts["N"]),
            "fixed_ratio": f"{math.sqrt(facts['N']) / 14:.2f}", "params": f"{facts['n_params'] / 1e6:.2f} million",
            "vit_params": f"{facts['vit_params'] / 1e6:.2f} million"}


@lru_cache(maxsize=2)
def _facts_of(preset: str) -> dict:
    from ...experiments.detection import detection_proxy
    from ...experiments.detection_setup import detector_facts

    return detector_facts(detection_proxy(preset)[0])


def detector_deviation_values() -> dict[str, str]:
    """The detection proxy (book preset) and the paper preset's Mask R-CNN on COCO, per preset
    (``_book``, ``_paper``): the input's side in px, the ViT's width and blocks, N, the
    parameters in all, the epochs and batch, and the seeds."""
    from ...experiments.detection import detection_proxy

    out = {}
    for key in ("book", "paper"):
        configs, facts = detection_proxy(key), _facts_of(key)
        c = configs[0]
        out.update({f"px_{key}": f"{c.image_size:,}", f"width_{key}": str(facts["width"]),
                    f"depth_{key}": str(facts["depth"]), f"n_{key}": f"{facts['N']:,}",
                    f"params_{key}": f"{facts['n_params'] / 1e6:.2f} million", f"epochs_{key}": str(c.epochs),
                    f"batch_{key}": str(c.batch_size), f"seeds_{key}": str(len({x.seed for x in configs}))})
    return out


def detector_setup_table():
    """The book preset's detection proxy against the paper preset's Mask R-CNN on COCO, field by
    field (:func:`polyattn.experiments.detection_setup.setup_table`)."""
    from ...experiments.detection import detection_proxy
    from ...experiments.detection_setup import setup_table

    table = setup_table(detection_proxy("book"), detection_proxy("paper"))
    rows = [{k: readable(v) for k, v in r.items()} for r in table.to_dict("records")]
    return styled(rows, "The detection proxy (book preset: synthetic Fashion-MNIST scenes) against the paper "
                        "preset's Mask R-CNN (COCO, not run), read from the two grids and the models they build")


@dataclass
class DetectionRuns:
    """The ``detection_proxy`` grid's runs at a preset, as the page reads them."""
    preset: str
    trains: bool
    not_run: str
    configs: list
    records: list = field(default_factory=list)
    final: pd.DataFrame = field(default_factory=pd.DataFrame)

    def caption(self, what: str) -> str:
        """``what`` with the preset, the data, the scale and the compute."""
        c = self.configs[0]
        steps = c.train_subset // c.batch_size * c.epochs
        seeds = len({r["seed"] for r in self.records})
        return (f"{what}; Mask R-CNN trained from scratch on synthetic Fashion-MNIST scenes, not COCO ({c.image_size} "
                f"px, {c.train_subset:,} training / {c.test_subset:,} test scenes, {steps:,} steps of batch "
                f"{c.batch_size}), {plural(seeds, 'seed')}, {len(self.records)} of {len(self.configs)} runs, preset "
                f"{self.preset}; compute: {analysis.budget_text(analysis.compute_budget(self.records))}")


def load_detection(preset: str, seeds=None, device: str = "cpu", recompute: bool = False) -> DetectionRuns:
    """The ``detection_proxy`` grid's runs at ``preset``: at the book preset its stored records
    (never trained here), under smoke the tiny grid trained (seconds), under paper none."""
    return _load_detection(preset, tuple(seeds) if seeds else None, device, bool(recompute))


@lru_cache(maxsize=4)
def _load_detection(preset: str, seeds, device: str, recompute: bool) -> DetectionRuns:
    from ...experiments.detection import detection_proxy
    page = prologue(preset, device, paper_note=PAPER_NOTE)
    configs = page.on_device(detection_proxy(preset if page.trains else "book", list(seeds) if seeds else None))
    return read_records(DetectionRuns(preset, page.trains, page.not_run, configs), "detection_proxy", recompute,
                        det.detection_final)


def ap_table(runs: DetectionRuns):
    """Test AP per variant and metric: mean ± sd over seeds (the median with three or more)."""
    if not runs.trains:
        return not_run(runs)
    wide = det.wide_table(det.detection_table(runs.final))
    rows = [{"Variant": readable(v), **{k: readable(x) for k, x in r.items()}} for v, r in wide.iterrows()]
    return styled(rows, runs.caption("Test AP (%) per variant: mean ± sd over seeds"))



def detection_figure(runs: DetectionRuns):
    """Training loss and test box and mask AP after each evaluation: per variant the mean over
    seeds (a line) and the range of its runs (a band), so that a panel has one line per variant."""
    import matplotlib.pyplot as plt

    from ... import plotting
    if not runs.trains:
        return None
    curves = det.detection_curves(runs.records)
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
    panels = (("train_loss", "training loss (Mask R-CNN's sum)", 1.0), ("box_ap", "test box AP (%)", 100.0),
              ("mask_ap", "test mask AP (%)", 100.0))
    for v, (lbl, _) in enumerate(DETECTION_VARIANTS):
        colour = plt.get_cmap("tab10")(v)
        sub = curves[curves["variant"] == lbl]
        for ax, (column, title, scale) in zip(axes, panels):
            by_step = sub.groupby("step")[column]
            ax.fill_between(by_step.min().index, by_step.min() * scale, by_step.max() * scale, color=colour,
                            alpha=0.15, lw=0)
            mean = by_step.mean() * scale
            ax.plot(mean.index, mean.to_numpy(), color=colour, lw=2, marker="o", ms=3,
                    label=readable(lbl) if column == "mask_ap" else None)
            ax.set_xlabel("step", fontsize=FONT + 1)
            ax.set_title(title, fontsize=FONT + 1)
            ax.tick_params(labelsize=FONT)
    plotting.legend_outside(axes[2], title="variant")
    c = runs.configs[0]
    plotting.stamp(fig, runs.preset, f"lines: mean over seeds; bands: their range; {c.train_subset:,} training scenes")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig
