"""Chapter 03's attention maps: the CLS token's attention on a few test images per activation,
from the short retrainings' records, and what the maps' caption and prose state."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ...analysis import PERCENT
from ...analysis import critiques as critique_analysis
from ...display import name
from ...runs import page_records


@dataclass
class Maps:
    """The CLS token's attention on a few test images, per activation, from the short retrainings'
    records: ``maps`` (activation -> array [images, g, g]), the images, the test accuracies and
    what the caption states."""

    maps: dict
    images: object
    accuracy: dict
    config: object
    layer: int
    head: int
    seconds: float
    preset: str


def attention_maps(page, recompute: bool = False, layer: int = -1, head: int = 0, n_images: int = 4,
                   records: Optional[list] = None) -> Optional[Maps]:
    """The maps of head ``head`` in layer ``layer`` (-1: the last probed) for the activations of
    Figures 2 and 3, from the stored short retrainings (trained only when a record is missing or
    under ``recompute``); None where the page trains nothing.  ``records`` stand for the stored
    ones in tests."""
    from ...data import load_dataset
    from ...experiments import short_retrain, vit
    if not page.trains:
        return None
    grid = [c for c in page.on_device(short_retrain.short_retrain(page.preset)) if c.activation in vit.NORM_ACTIVATIONS]
    if records is None:
        records = page_records(grid, page.preset, recompute=recompute, desc="short retrainings", progress=False)
    if not records:
        return None
    stored = critique_analysis.short_maps(records)
    maps, accuracy, shown_layer = {}, {}, None
    for rec in records:
        act = rec["config"]["activation"]
        m = stored[act]
        index = len(m["layers"]) - 1 if layer == -1 else m["layers"].index(layer)
        shown_layer = m["layers"][index]
        maps[act] = np.asarray(m["cls"][index, :n_images, head])
        accuracy[act] = rec["metrics"][-1]["test_acc"] * PERCENT if rec["status"] == "ok" else float("nan")
    cfg = grid[0]
    images = load_dataset(cfg.dataset, cfg.train_subset, cfg.test_subset).test_x[:n_images]
    return Maps(maps, np.asarray(images), accuracy, cfg, int(shown_layer), head,
                float(sum(r["provenance"]["wall_s"] for r in records)), page.preset)


def maps_figure(maps: Optional[Maps]):
    """The test images (top row) and, per activation, the CLS token's attention on each image's
    patches on a colour scale centred at zero (red positive, blue negative)."""
    if maps is None:
        return None
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    from ...plotting import stamp

    acts = list(maps.maps)
    n_images = len(maps.images)
    fig, axes = plt.subplots(len(acts) + 1, n_images, figsize=(2.2 * n_images + 1.2, 2.2 * (len(acts) + 1)),
                             squeeze=False)
    for k in range(n_images):
        axes[0, k].imshow(maps.images[k, 0], cmap="gray")
        axes[0, k].set_axis_off()
    axes[0, 0].set_title("test image", fontsize="small", loc="left")
    for i, act in enumerate(acts, start=1):
        m = maps.maps[act]
        vmax = float(np.abs(m).max()) or 1.0
        norm = TwoSlopeNorm(vmin=-vmax, vcenter=0.0, vmax=vmax)
        for k in range(n_images):
            im = axes[i, k].imshow(m[k], cmap="RdBu_r", norm=norm)
            axes[i, k].set_xticks([])
            axes[i, k].set_yticks([])
        axes[i, 0].set_ylabel(name(act), fontsize="small")
        fig.colorbar(im, ax=list(axes[i, :]), fraction=0.025, pad=0.01)
    stamp(fig, maps.preset, "short retraining, see caption")
    return fig


def map_values(maps: Optional[Maps], not_run: str = "not run") -> dict:
    """What the maps' caption and prose state: the retraining's model, images, epochs, seed and
    training time, each activation's test accuracy, the head and layer shown, and the fraction of
    negative CLS weights per activation."""
    keys = ("ch03_map_model", "ch03_map_preset", "ch03_map_images", "ch03_map_epochs", "ch03_map_seed",
            "ch03_map_seconds", "ch03_map_test_images", "ch03_map_accuracy", "ch03_map_head", "ch03_map_layer",
            "ch03_neg_frac_softmax", "ch03_neg_frac_poly", "ch03_neg_frac_unscaled")
    if maps is None:
        return {k: not_run for k in keys}
    cfg = maps.config
    negative = {a: f"{float((m < 0).mean()):.2f}" for a, m in maps.maps.items()}
    return {"ch03_map_model": cfg.model, "ch03_map_preset": maps.preset, "ch03_map_images": f"{cfg.train_subset:,}",
            "ch03_map_epochs": cfg.epochs, "ch03_map_seed": cfg.seed, "ch03_map_seconds": f"{maps.seconds:.0f}",
            "ch03_map_test_images": f"{cfg.test_subset:,}",
            "ch03_map_accuracy": ", ".join(f"{name(a)} {v:.1f}%" if v == v else f"{name(a)} diverged"
                                           for a, v in maps.accuracy.items()),
            "ch03_map_head": maps.head + 1, "ch03_map_layer": maps.layer + 1,
            "ch03_neg_frac_softmax": negative.get("softmax", "not stored"),
            "ch03_neg_frac_poly": negative.get("poly:p=3", "not stored"),
            "ch03_neg_frac_unscaled": negative.get("poly:p=3,c=1", "not stored")}
