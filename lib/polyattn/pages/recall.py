"""Chapter 07's section on associative recall where softmax learns it (grid ``causal_mqar_recall``).

    runs = recall_runs(page, seeds, recompute)   # stored runs at the book preset; trained at smoke
    curve_figure(runs)                           # recall at the training length over the epochs, per seed
    glue_values(recall_numbers(runs))            # the seeds that learned recall, per variant

The per-test-set bars and table are chapter 07's :func:`polyattn.pages.causal.mqar_figure` and
:func:`~polyattn.pages.causal.mqar_table`, which read any MQAR grid.
"""
from __future__ import annotations

from ..analysis import recall
from ..analysis.causal import variant_colors, variant_frame
from .causal import Runs, _runs, show


def recall_runs(page, seeds=None, recompute: bool = False) -> Runs:
    """The runs of ``causal_mqar_recall``: at the book preset only the stored ones (the grid trains
    for hours), at the others trained."""
    from ..experiments import mqar

    return _runs("mqar_recall", mqar.causal_mqar_recall, page, seeds, recompute, True, "MQAR recall")


def _training_set(config) -> tuple[str, int, int, float, float]:
    """The test set of the training length and load (the first of :func:`polyattn.analysis.recall.levels`)."""
    return recall.levels(config)[0]


def learned(runs: Runs) -> dict[str, tuple[int, int]]:
    """Per variant (chapter labels, in the grid's order): (seeds above the copy plateau's band on the
    training test set, seeds stored), read per seed as :func:`polyattn.analysis.recall.level_of` does."""
    ok = [r for r in runs.records if r["status"] == "ok"]
    if not ok:
        return {}
    return {variant: (k, n) for variant, ((_, k, n, _), *_) in
            recall.seeds_above_plateau(variant_frame(ok), runs.grid[0]).items()}


def recall_numbers(runs: Runs) -> dict:
    """``ch07_recall_learned``: per variant the seeds that learned recall on the training test set;
    ``ch07_recall_setting``: the training length, pairs and epochs; ``ch07_recall_tests``: the test
    sets; ``ch07_recall_plateau``: the copy plateau there; ``ch07_recall_found``: runs stored."""
    from ..experiments import mqar

    cfg = runs.grid[0]
    name, length, pairs, _, plateau = _training_set(cfg)
    out = {"ch07_recall_setting": f"length {length} with {pairs} pairs, {cfg.epochs} epoch{'s' * (cfg.epochs != 1)}",
           "ch07_recall_found": f"{runs.stored} planned runs stored",
           "ch07_recall_plateau": f"{100 * plateau:g}%",
           "ch07_recall_tests": " and ".join(f"length {L} with {K} pairs" for _, L, K, _, _ in recall.levels(cfg)),
           "ch07_recall_variants": ", ".join(show(v) for v in mqar.RECALL_VARIANTS)}
    counts = learned(runs)
    out["ch07_recall_learned"] = ("; ".join(f"{show(v)} {k} of {n}" for v, (k, n) in counts.items())
                                  if counts else runs.missing)
    return out


def curve_figure(runs: Runs):
    """Recall accuracy on the training test set (its length and load) over the epochs, one panel per variant and one line per
    seed, against the copy plateau 1/K (dashed, with its band grey) and guessing (dotted)."""
    if not runs:
        return None
    import matplotlib.pyplot as plt

    from ..labels import charlm_label
    from ..plotting import stamp

    name, length, pairs, guess, plateau = _training_set(runs.grid[0])
    colours = variant_colors()
    by_variant: dict[str, list] = {}
    for r in runs.records:
        by_variant.setdefault(charlm_label(r["config"]), []).append(r)
    fig, axes = plt.subplots(1, len(by_variant), figsize=(2.3 * len(by_variant) + 1, 2.8), sharey=True,
                             squeeze=False)
    for ax, (variant, recs) in zip(axes.flat, by_variant.items()):
        for r in sorted(recs, key=lambda r: r["seed"]):
            rows = [m for m in r["metrics"] if f"acc_{name}" in m]
            ax.plot([m["epoch"] for m in rows], [100 * m[f"acc_{name}"] for m in rows], lw=1.2, marker="o", ms=2.5,
                    color=colours.get(variant, "grey"), alpha=0.85)
        ax.axhline(100 * plateau, color="black", ls="--", lw=1)
        ax.axhspan(100 * plateau / recall.PLATEAU_BAND, 100 * plateau * recall.PLATEAU_BAND, color="grey",
                   alpha=0.15, lw=0)
        ax.axhline(100 * guess, color="grey", ls=":", lw=1)
        ax.set_title(show(variant), fontsize=10)
        ax.set_xlabel("epoch")
        ax.set_ylim(0, 102)
        ax.tick_params(labelsize=9)
    axes.flat[0].set_ylabel(f"recall, length {length}, {pairs} pairs (%)")
    stamp(fig, runs.preset, f"{len(runs.seeds)} seed(s), a line each; dashed: copy plateau 1/K = "
                            f"{100 * plateau:g}%, its band grey; dotted: guessing")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


__all__ = ["curve_figure", "learned", "recall_numbers", "recall_runs"]
