"""What chapter 04 shows of the marked garment (:mod:`polyattn.data.marked`): example scenes, the
softmax and uniform-attention probes that fixed its budget, and their numbers for the prose."""
from __future__ import annotations

from typing import Sequence

from ...analysis.tables import number_cell
from ...claims import claim
from ...claims.floors import floor
from ...data.fashion_mnist import CLASS_NAMES, load_fashion_mnist
from ...data.marked import SCENE_SEED, marked_scenes
from ...display import name
from ...experiments import vit_marked
from ...experiments.vit_marked import MARKED_ACTIVATIONS, PROBE_EPOCHS
from .page import FONT, WIDTH, book_runs

#: The probes' two arms, in the order they are drawn.
PROBE_ARMS = ("softmax", "uniform")


def garment_set_floor() -> float:
    """The stored garment-set floor (%): naming the most frequent class of a scene's four garments."""
    return floor("fashion_marked", "garment_set")


def gate_band() -> str:
    """How far beyond the garment-set floor the claim's baseline must be (points), as registered."""
    return f"{claim('marked_garment').gate.band:g}"


def scenes_figure(n: int = 4):
    """``n`` test scenes, each titled with its label, the class of the garment in the marked quarter."""
    import matplotlib.pyplot as plt

    _, _, images, labels = load_fashion_mnist()
    x, y, _, _ = marked_scenes(images, labels, n, SCENE_SEED + 1)
    fig, axes = plt.subplots(1, n, figsize=(min(WIDTH, 2.1 * n), 2.5), squeeze=False)
    for ax, img, label in zip(axes[0], x, y):
        ax.imshow(img[0], cmap="gray", vmin=0, vmax=255)
        ax.set_title(f"label: {CLASS_NAMES[int(label)]}", fontsize=FONT)
        ax.set_xticks([]), ax.set_yticks([])
    fig.tight_layout()
    return fig


def probe_runs() -> list[dict]:
    """The stored probe records (book preset)."""
    return book_runs(vit_marked.marked_probe)


def _curve(record) -> list[float]:
    return [100.0 * m["test_acc"] for m in record["metrics"] if "test_acc" in m]


def probe_values(records: Sequence[dict]) -> dict[str, str]:
    """``ch04_marked_probe_<arm>_<epochs>``: each probe's final test accuracy (%), "not run" where none is
    stored; ``ch04_marked_floor``: the garment-set floor; ``ch04_marked_gap``: softmax − uniform at the
    longest budget with both (points)."""
    final = {(r["config"]["activation"], r["config"]["epochs"]): _curve(r)[-1] for r in records if _curve(r)}
    out = {f"ch04_marked_probe_{arm}_{e}": number_cell(final[(arm, e)], ".1f") + "%" if (arm, e) in final else "not run"
           for arm in PROBE_ARMS for e in PROBE_EPOCHS["book"]}
    both = [e for e in PROBE_EPOCHS["book"] if all((a, e) in final for a in PROBE_ARMS)]
    out["ch04_marked_gap"] = (number_cell(final[("softmax", both[-1])] - final[("uniform", both[-1])], ".1f")
                              + " points" if both else "not measured")
    out["ch04_marked_floor"] = number_cell(garment_set_floor(), ".1f") + "%"
    return out


def probe_figure(records: Sequence[dict], preset: str = "book"):
    """Test accuracy per epoch of each probe, one panel per budget, with the garment-set floor and chance;
    None without records."""
    import matplotlib.pyplot as plt

    from ... import plotting

    budgets = sorted({r["config"]["epochs"] for r in records})
    if not budgets:
        return None
    fig, axes = plt.subplots(1, len(budgets), figsize=(min(WIDTH, 4.1 * len(budgets)), 3.4), sharey=True,
                             squeeze=False)
    for ax, epochs in zip(axes[0], budgets):
        for arm in PROBE_ARMS:
            for r in (r for r in records if r["config"]["epochs"] == epochs and r["config"]["activation"] == arm):
                curve = _curve(r)
                ax.plot(range(1, len(curve) + 1), curve, marker="o", ms=3, color=plotting.activation_color(arm),
                        label=name(arm))
        ax.axhline(garment_set_floor(), color="grey", ls="--", lw=1, label="garment-set floor")
        ax.axhline(10.0, color="grey", ls=":", lw=1, label="chance")
        ax.set_title(f"{epochs} epochs", fontsize=FONT + 1)
        ax.set_xlabel("epoch", fontsize=FONT)
        ax.tick_params(labelsize=FONT)
    axes[0][0].set_ylabel("test accuracy (%)", fontsize=FONT)
    axes[0][0].legend(fontsize=FONT, frameon=False, loc="upper left")
    plotting.stamp(axes[0][-1], preset, "one seed a line", loc="upper left").set_fontsize(FONT)
    fig.tight_layout()
    return fig


def marked_runs() -> list[dict]:
    """The stored records of the claim's own grid, ``vit_marked`` (book preset)."""
    return book_runs(vit_marked.marked)


def final_accuracies(records: Sequence[dict]) -> dict[str, dict[int, float]]:
    """Each arm's final test accuracy (%) by seed, arms in the grid's order; runs that did not end
    ``ok`` are left out."""
    out: dict[str, dict[int, float]] = {arm: {} for arm in MARKED_ACTIVATIONS}
    for r in records:
        curve = _curve(r)
        if r.get("status") == "ok" and curve and r["config"]["activation"] in out:
            out[r["config"]["activation"]][int(r["config"]["seed"])] = curve[-1]
    return out


def marked_values(records: Sequence[dict]) -> dict[str, str]:
    """``ch04_marked_means``: each arm's mean final test accuracy with its seeds, in words ("not run"
    for an arm with none); ``ch04_marked_margin``: the claim's registered margin (points)."""
    parts = []
    for arm, by_seed in final_accuracies(records).items():
        vals = list(by_seed.values())
        said = (f"{number_cell(sum(vals) / len(vals), '.1f')}% ({len(vals)} seed{'s' if len(vals) != 1 else ''})"
                if vals else "not run")
        parts.append(f"{name(arm)} {said}")
    return {"ch04_marked_means": "; ".join(parts), "ch04_marked_margin": f"{claim('marked_garment').margin:g}"}


def marked_figure(records: Sequence[dict], preset: str = "book"):
    """Final test accuracy of each arm of ``vit_marked``, one dot a seed and a bar at the mean, with the
    garment-set floor and chance; None without records."""
    import matplotlib.pyplot as plt

    from ... import plotting

    finals = {arm: v for arm, v in final_accuracies(records).items() if v}
    if not finals:
        return None
    fig, ax = plt.subplots(figsize=(min(WIDTH, 6.4), 3.0))
    for i, (arm, by_seed) in enumerate(finals.items()):
        vals = list(by_seed.values())
        color = plotting.activation_color(arm)
        ax.scatter([i] * len(vals), vals, color=color, s=18, zorder=3)
        ax.hlines(sum(vals) / len(vals), i - 0.3, i + 0.3, color=color, lw=2)
    ax.axhline(garment_set_floor(), color="grey", ls="--", lw=1, label="garment-set floor")
    ax.axhline(10.0, color="grey", ls=":", lw=1, label="chance")
    ax.set_xticks(range(len(finals)), [name(a).replace(" (attention ablated)", "\n(ablated)") for a in finals],
                  fontsize=FONT)
    ax.set_xlim(-0.6, len(finals) - 0.4)
    ax.set_ylim(0, 100)
    ax.set_ylabel("test accuracy (%)", fontsize=FONT)
    ax.tick_params(labelsize=FONT)
    ax.legend(fontsize=FONT, frameon=False, loc="lower left")
    plotting.stamp(ax, preset, "dots: seeds; bars: means", loc="upper right").set_fontsize(FONT)
    fig.tight_layout()
    return fig
