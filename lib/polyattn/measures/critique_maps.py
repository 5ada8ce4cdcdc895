"""Chapter 09's attention maps (``attention_maps``), described, not judged: the maps' negative mass
per layer and attention distance per head, as the short retrainings of Table 1's model (grid
``critique_short_retrain``) stored them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..analysis import critiques as crit
from ..claims.spec import Finding
from .critique_common import MAP_SPECS, display_name, finding, short_pending, short_records


def map_numbers(records) -> dict:
    """The short retrainings' maps: each activation's share of negative mass in the first and the
    last layer, the range of its heads' mean attention distance, and that of uniform weights."""
    maps = crit.short_maps(records)
    out = {"uniform_distance": crit.uniform_attention_distance(maps["softmax"]["grid"]),
           "test_images": int(maps["softmax"]["n_test"])}
    lows, highs = [], []
    for act in MAP_SPECS:
        neg, dist = maps[act]["negative_mass_share"], maps[act]["attention_distance"]
        out[f"negative share, first layer {act}"] = float(neg[0])
        out[f"negative share, last layer {act}"] = float(neg[-1])
        lows.append(float(dist.min()))
        highs.append(float(dist.max()))
    out["negative_shares"] = ", ".join(f"{display_name(a)} {out[f'negative share, first layer {a}']:.2f} / "
                                       f"{out[f'negative share, last layer {a}']:.2f}" for a in MAP_SPECS)
    out["distances"] = ", ".join(f"{display_name(a)} {lo:.2f} to {hi:.2f}" for a, lo, hi in zip(MAP_SPECS, lows, highs))
    out["distance_min"], out["distance_max"] = min(lows), max(highs)
    return out


def attention_maps(root: Optional[Path] = None) -> Finding:
    """The maps described, not judged ("measured"): negative mass per layer and attention distance
    per head of the four short-retrained models."""
    grid, complete = short_records(root)
    if not complete:
        return short_pending(grid)
    n = map_numbers(list(grid.records))
    summary = (f"Negative share of the absolute attention, first / last layer: {n['negative_shares']}; mean attention "
               f"distance per head {n['distance_min']:.2f} to {n['distance_max']:.2f} patches (uniform "
               f"{n['uniform_distance']:.2f}); short retrainings, seed 0.")
    return finding("measured", summary, n)
