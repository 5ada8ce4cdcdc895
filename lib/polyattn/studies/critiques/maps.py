"""Chapter 09, "Attention maps": the CLS token's weights on the patches of a test image after the
short retrainings, their negative mass and the heads' attention distances.
"""
from __future__ import annotations

import numpy as np

from ...analysis import critiques as crit
from ...book.deliver import styled
from ...display import name
from ...measures.critique_common import MAP_SPECS
from .page import SHORT_DEVIATION, Runs, short_pending


def maps_figure(runs: Runs, preset: str, image: int = 0):
    """The CLS token's weights on the patches of one test image: one row per activation of
    :data:`~polyattn.measures.critique_common.MAP_SPECS`, the heads of the first layer, then of the last,
    on a colour scale centred at zero (each row to its own largest weight)."""
    if not runs.all_measured:
        return None
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    from ... import plotting
    from ...data import load_dataset
    c = runs.config
    smaps = crit.short_maps(runs.records)
    picture = load_dataset(c.dataset, c.train_subset, c.test_subset).test_x[image, 0]
    n_l, _, n_h = smaps[MAP_SPECS[0]]["cls"].shape[:3]
    fig, axes = plt.subplots(len(MAP_SPECS), 1 + n_l * n_h, figsize=(7, 0.78 * len(MAP_SPECS) + 0.4))
    for row, act in zip(axes, MAP_SPECS):
        cls = smaps[act]["cls"][:, image]                                           # [L, H, g, g]
        vmax = float(np.abs(cls).max()) or 1.0
        norm = TwoSlopeNorm(vmin=-vmax, vcenter=0.0, vmax=vmax)
        row[0].imshow(picture, cmap="gray")
        row[0].set_ylabel(name(act), rotation=0, ha="right", va="center")
        for li in range(n_l):
            for h in range(n_h):
                row[1 + li * n_h + h].imshow(cls[li, h], cmap="RdBu_r", norm=norm)
    for li in range(n_l):
        for h in range(n_h):
            axes[0, 1 + li * n_h + h].set_title(f"h{h + 1}", fontsize="small")
    for a in axes.flat:
        a.set_xticks([])
        a.set_yticks([])
    fig.tight_layout(pad=0.3, rect=(0, 0.04, 1, 0.92))
    for li, which in enumerate(("first layer", "last layer")[:n_l]):
        left, right = axes[0, 1 + li * n_h].get_position(), axes[0, (li + 1) * n_h].get_position()
        fig.text((left.x0 + right.x1) / 2, 0.97, which, ha="center", va="top")
    plotting.stamp(fig, preset, "red positive, blue negative; each row scaled to its largest |weight|")
    return fig


def maps_table(runs: Runs, preset: str):
    """Per activation: the share of negative mass in the first and last layer, and the mean attention
    distance of its heads (min to max) in each, next to uniform weights'."""
    if not runs.all_measured:
        return short_pending(runs)
    smaps = crit.short_maps(runs.records)
    uniform = crit.uniform_attention_distance(smaps[MAP_SPECS[0]]["grid"])
    rows = []
    for act in MAP_SPECS:
        m = smaps[act]
        neg, dist = m["negative_mass_share"], m["attention_distance"]
        which = ["first" if li == 0 else "last" for li in range(len(m["layers"]))]
        rows.append({"activation": name(act), **{f"negative share, {w} layer": f"{neg[li]:.2f}" for li, w in enumerate(which)},
                     **{f"distance, {w} layer (heads)": f"{dist[li].min():.2f} to {dist[li].max():.2f}"
                        for li, w in enumerate(which)}})
    n_test = smaps[MAP_SPECS[0]].get("n_test", runs.config.test_subset)
    return styled(rows, f"Share of negative mass, and the mean attention distance in patches (uniform weights: "
                        f"{uniform:.2f}), over all query rows and heads of {n_test} test images (short retraining, "
                        f"seed {runs.config.seed}, preset {preset})" + SHORT_DEVIATION)
