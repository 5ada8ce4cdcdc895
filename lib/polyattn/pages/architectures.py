"""Chapter 10's tables, figures and glued values (other architectures, and detection).

The verdicts are the claim register's (``table2_architectures``, ``detection_segmentation``,
``linear_vit_deit``) and the measure's (``n_windows_channels``); every other comparison the page
shows is description: a difference, its 95% interval and the seed pairs, with no verdict word.
This module loads the runs a section needs and shapes what the page shows of them:

    judging_values()
    n_table(); n_tables(); n_values(); xca_layer(); xcit_check_values(check)
    setup_values(preset); setup_table(preset); recipe_table()
    runs = load(preset, seeds, device, recompute)      # the architectures grid's records
    accuracy_table(runs); per_seed_table(runs); deit_values(runs); accuracy_figure(runs)
    table2_table(deliver("table2_architectures")); table2_values(delivered)
    readings_table(runs, deliver("n_windows_channels")); readings_values(delivered)
    scenes_figure(preset); detector_values(preset); detector_deviation_values(); detector_setup_table()
    det = load_detection(preset, seeds, device, recompute)
    ap_table(det); claim_table(deliver("detection_segmentation")); detection_figure(det)
    control_values(deliver("detection_segmentation"))  # the positive control, in words
    key_difference(deliver("linear_vit_deit"), "vit")  # one registered comparison's difference
    glue_values("ch10", values); fold("ch10_fold_...", table)   # glue for the text and the folds

:func:`load`, :func:`load_detection` and the model facts keep what they read while the page runs, so
that each section of the page asks for its runs again instead of reading another section's
variables.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

import numpy as np
import pandas as pd

from ..analysis import architectures as arch
from .controls import control_values  # noqa: F401  (the positive control, in words, for the page)
from .shown import fold, glue_values  # noqa: F401  (glue for the page's text and its folded parts)

SOFTMAX, OWN, FIXED, TOKENS = arch.VARIANTS
ARCHITECTURE_NAMES = arch.ARCHITECTURE_NAMES
#: What the paper preset does not run.
PAPER_NOTE = "the paper preset's ImageNet configurations are listed below, not trained"
#: Labels of the figures (points): at least the book's minimum.
FONT = 9
#: A smaller font for tables with many short columns.
SMALL = [{"selector": "th, td", "props": "font-size: 0.85em"}]
#: Data sets and architectures as a reader knows them, for cells read from the grids.
READABLE = {"fashion_mnist": "Fashion-MNIST", "imagenet": "ImageNet", "vit": "ViT", "deit": "DeiT", "swin": "Swin",
            "xcit": "XCiT"}
DESCRIPTION = "description, not a test: no verdict rests on these rows"


def readable(text: str) -> str:
    """Names of data sets and architectures in a cell read from a grid ("fashion_mnist (vit, deit)")
    as a reader knows them ("Fashion-MNIST (ViT, DeiT)"), "64 × 64" for "64 x 64", and maths labels
    as :func:`polyattn.display.label`."""
    from ..display import label

    out = re.sub(r"\b(" + "|".join(READABLE) + r")\b", lambda m: READABLE[m.group(1)], str(text))
    return label(out.replace(" x ", " × "))


def _nowrap(table, *columns):
    """``table`` with ``columns`` kept on one line (an interval split over two lines doubles a row)."""
    return table.set_properties(subset=[c for c in columns if c in table.data.columns], **{"white-space": "nowrap"})


def architecture_name(a: str) -> str:
    return ARCHITECTURE_NAMES.get(a, a)


def plural(n: int, word: str) -> str:
    """"1 seed", "3 seeds"."""
    return f"{n} {word}{'' if n == 1 else 's'}"


# --- how the comparisons are judged -------------------------------------------------------------


def judging_values() -> dict[str, str]:
    """The margins of the chapter's claims (accuracy and AP points), the test level and power."""
    from .. import analysis
    from ..claims import claim

    return {"margin": f"±{claim('table2_architectures').margin:g}",
            "det_margin": f"±{claim('detection_segmentation').margin:g}",
            "alpha": f"{analysis.ALPHA:g}", "power": f"{analysis.POWER:g}"}


# --- what N is in each architecture -------------------------------------------------------------


@lru_cache(maxsize=1)
def n_facts() -> tuple[pd.DataFrame, pd.DataFrame]:
    """N per architecture read from the built models (:func:`polyattn.models.timm_facts.attention_n_table`):
    the book preset's models (Fashion-MNIST: one channel, ten classes) and the paper preset's."""
    from ..experiments import architectures as grids
    from ..models import timm_facts

    return (timm_facts.attention_n_table(grids.table2("book"), in_chans=1),
            timm_facts.attention_n_table(grids.table2("paper"), num_classes=1000))


def n_tables() -> list:
    """The N tables of :func:`n_facts`, one column per architecture (and XCiT's reading of N)."""
    from ..book.deliver import styled

    book, paper = n_facts()
    captions = ("N in the book's models (Fashion-MNIST, one channel; input in px after resizing)",
                "N in the paper preset's ImageNet models (224 px, three channels; built, not trained)")
    return [styled([{k: readable(v) for k, v in row.items()} for row in arch.architecture_rows(t, arch.N_FIELDS,
                                                                                                  arch.N_NAMES)],
                   caption).set_table_styles(SMALL, overwrite=False) for t, caption in zip((book, paper), captions)]


def _rule(value) -> str:
    """XCiT's reading of N ("channels", "tokens"), "" for the other architectures."""
    return value if isinstance(value, str) else ""


def n_table():
    """One row per architecture (and XCiT's reading of N): what a row of its attention runs over,
    its N in the book's model and in the paper preset's, and the paper's 1/14 over 1/√N in each
    (√N/14: below 1, x³/14 makes the weights smaller than x³/√N does)."""
    from ..book.deliver import styled

    book, paper = n_facts()
    rows = []
    for _, b in book.iterrows():
        rule = _rule(b.get("n_rule"))
        p = paper[(paper["architecture"] == b["architecture"]) & (paper["n_rule"].map(_rule) == rule)].iloc[0]
        rows.append({"Architecture": architecture_name(b["architecture"]) + (f", N = {rule}" if rule else ""),
                     "A row of attention runs over": readable(b["runs over"]).replace("d_h", "dₕ"),
                     "N here": int(b["N"]),
                     "N, paper's model": int(p["N"]), "√N/14 here": f"{b['fixed / own']:.2f}",
                     "√N/14, paper's model": f"{p['fixed / own']:.2f}"})
    return styled(rows, "N read from the built models: the book's (Fashion-MNIST, one channel) and the paper preset's "
                        "ImageNet models (224 px, built, not trained); √N/14 is the paper's 1/14 over 1/√N. The folded "
                        "tables give every field").set_table_styles(SMALL, overwrite=False)


def n_values() -> dict:
    """N of each architecture in the book's and the paper's models, the square roots and ratios
    the text quotes, the paper's image and patch sizes, how much larger its models are and the
    book's models' parameters."""
    from ..experiments import architectures as grids
    from ..numbers import square_root

    book, paper = n_facts()
    vit_n, _ = arch.attention_n(book, "vit")
    vit_n_paper, _ = arch.attention_n(paper, "vit")
    swin_n, swin = arch.attention_n(book, "swin")
    swin_n_paper, swin_paper = arch.attention_n(paper, "swin")
    xcit_ch, xcit = arch.attention_n(book, "xcit", "channels")
    p0 = next(c for c in grids.table2("paper") if arch.architecture_of(c) == "vit")
    side = square_root(swin_n_paper)
    ratio = paper.groupby("architecture")["n_params"].max() / book.groupby("architecture")["n_params"].max()
    return {"vit_n": vit_n, "vit_n_paper": vit_n_paper, "vit_root_paper": square_root(vit_n_paper),
            "swin_n": swin_n, "swin_tokens": int(swin["tokens"]), "swin_input": int(swin["input"]),
            "swin_n_paper": swin_n_paper, "swin_root_paper": square_root(swin_n_paper),
            "swin_window_paper": f"{side} × {side}" if "." not in side else f"{swin_n_paper}-token",
            "swin_fixed_ratio": f"{swin['fixed / own']:.2f}", "swin_fixed_ratio_paper": f"{swin_paper['fixed / own']:.2f}",
            "xcit_ch": xcit_ch, "xcit_tok": arch.attention_n(book, "xcit", "tokens")[0],
            "xcit_ch_paper": arch.attention_n(paper, "xcit", "channels")[0],
            "xcit_tok_paper": arch.attention_n(paper, "xcit", "tokens")[0],
            "xcit_other": str(xcit["other layers"]).replace(" x ", " × "),
            "paper_px": p0.image_size, "paper_patch": p0.patch_size,
            "paper_patches": (p0.image_size // p0.patch_size) ** 2,
            "param_ratio": f"{ratio.min():.0f} to {ratio.max():.0f}",
            "book_params": f"{book['n_params'].min() / 1e3:.0f} to {book['n_params'].max() / 1e3:.0f} thousand"}


def xca_layer() -> dict:
    """Width, heads and patch tokens of the book's XCiT's first cross-covariance layer."""
    from ..models import timm_facts

    book, _ = n_facts()
    _, row = arch.attention_n(book, "xcit", "channels")
    layers = timm_facts.attention_layers(f"timm:{row['model']}", row["input"], row["patch"], in_chans=1)
    xca = layers[layers["module"] == "PolyXCA"].iloc[0]
    return {"width": int(xca["width"]), "heads": int(xca["heads"]), "tokens": arch.attention_n(book, "xcit", "tokens")[0]}


def xcit_check_values(check: dict) -> dict[str, str]:
    from ..numbers import scientific

    return {"factor": f"{check['factor']:.3f}", "diff": scientific(check["max_abs_diff"]),
            "without": f"{check['max_abs_diff_without']:.2g}", "scale": f"{check['output_scale']:.2g}"}


# --- what runs here, and what the paper ran ----------------------------------------------------


def _book_shape(preset: str) -> Optional[tuple]:
    """The image shape of the book's data set (a small subset is loaded: only its shape is read);
    None where the preset trains nothing."""
    from ..data import load_dataset
    from ..experiments import architectures as grids
    from ..presets import prologue

    if not prologue(preset).trains:
        return None
    b0 = grids.table2("book")[0]
    return tuple(load_dataset(b0.dataset, 8, 8).train_x.shape)


def setup_values(preset: str) -> dict[str, str]:
    """The book's image size, epochs, training images and clipping; the paper preset's epochs."""
    from ..experiments import architectures as grids
    from ..presets import prologue

    b0, p0 = grids.table2("book")[0], grids.table2("paper")[0]
    shape = _book_shape(preset)
    return {"book_px": f"{shape[-2]} × {shape[-1]}" if shape else prologue(preset, paper_note=PAPER_NOTE).not_run,
            "book_epochs": str(b0.epochs), "book_train": f"{b0.train_subset:,}", "book_clip": f"{b0.clip_grad:g}",
            "paper_epochs": str(p0.epochs)}


def setup_table(preset: str):
    """The paper preset's setting against the book preset's, field by field
    (:func:`polyattn.experiments.architectures.setup_table`), names as a reader knows them."""
    from ..book.deliver import styled
    from ..experiments import architectures as grids

    shape = _book_shape(preset)
    table = grids.setup_table(grids.table2("book"), grids.table2("paper"), book_chans=int(shape[1]) if shape else 1)
    rows = [{k: readable(v) for k, v in r.items()} for r in table.to_dict("records")]
    return styled(rows, "The paper preset (ImageNet, listed for GPUs, not run) against the book preset, read from "
                        "the two grids and the models they build; a cell names the architectures where they differ")


def recipe_table():
    """The paper preset's timm model and recipe per architecture."""
    from ..book.deliver import styled
    from ..experiments import architectures as grids

    recipe = arch.paper_recipe_table(grids.table2("paper"))
    recipe["augmentation"] = recipe["augmentation"].map(lambda a: "DeiT's" if a == "deit" else a)
    recipe["dataset"] = recipe["dataset"].map(readable)
    rows = arch.architecture_rows(recipe, [f for f in recipe.columns if f != "architecture"],
                                  {"lr": "AdamW learning rate", "warm-up": "warm-up epochs"})
    return styled(rows, "The paper preset per architecture: timm model and recipe (one recipe, DeiT's, for all four; "
                        "listed, not run)").set_table_styles(SMALL, overwrite=False)


# --- the architectures grid's runs --------------------------------------------------------------


@dataclass
class Runs:
    """The architectures grid's runs at a preset, as the page reads them."""
    preset: str
    trains: bool                 # whether this preset reads (book) or trains (smoke) the grid
    not_run: str                 # what the page says where it has no runs
    configs: list
    records: list = field(default_factory=list)
    final: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def seeds(self) -> int:
        return len({c.seed for c in self.configs})

    def caption(self, what: str) -> str:
        """``what`` with the preset, data, scale and the deviations from the paper's ImageNet runs."""
        from ..claims.scope import DATA_NAMES

        c = self.configs[0]
        return (f"{what}; preset {self.preset}, {DATA_NAMES.get(c.dataset, c.dataset)} ({c.train_subset:,} training / "
                f"{c.test_subset:,} test images, not ImageNet), micro-sized timm models, {plural(c.epochs, 'epoch')} "
                f"(the paper: 300), {plural(self.seeds, 'seed')}, {len(self.records)} of {len(self.configs)} runs "
                "stored; the setup table gives every deviation")


def load(preset: str, seeds=None, device: str = "cpu", recompute: bool = False) -> Runs:
    """The ``architectures_table2`` grid's runs at ``preset``: at the book preset its stored
    records, under smoke the tiny grid trained (seconds), under paper none.  Kept while the page runs."""
    return _load(preset, tuple(seeds) if seeds else None, device, bool(recompute))


@lru_cache(maxsize=4)
def _load(preset: str, seeds, device: str, recompute: bool) -> Runs:
    from ..experiments import architectures as grids
    from ..presets import prologue

    page = prologue(preset, device, paper_note=PAPER_NOTE)
    configs = page.on_device(grids.table2(preset if page.trains else "book", list(seeds) if seeds else None))
    return _read(Runs(preset, page.trains, page.not_run, configs), "architectures_table2", recompute,
                 arch.architecture_final)


def _read(runs, grid: str, recompute: bool, final):
    """``runs`` with its records read (or trained, under smoke) and ``final(records)`` as its final
    table; a preset without stored records says so instead."""
    from ..runs import page_records

    if not runs.trains:
        return runs
    runs.records = page_records(runs.configs, runs.preset, recompute, desc=grid, progress=False)
    if not runs.records:
        runs.trains = False
        runs.not_run = f"No record of `{grid}` at preset {runs.preset} is stored yet."
        return runs
    runs.final = final(runs.records)
    return runs


def _not_run(runs):
    from IPython.display import Markdown

    return Markdown(runs.not_run)


def differences(runs: Runs) -> pd.DataFrame:
    """Every variant minus softmax on the same architecture, paired by seed
    (:func:`polyattn.analysis.architectures.vs_softmax`)."""
    return arch.vs_softmax(runs.final)


def accuracy_rows(runs: Runs) -> list[dict]:
    """One row per architecture: its own N (x³/√N's, the first attention layer's) and each
    variant's final test accuracy, mean ± sd over seeds, with any diverged runs (XCiT's N = tokens
    with its N)."""
    summary = arch.accuracy_summary(runs.final)
    n = runs.final.groupby(["architecture", "variant"], sort=False)["seq_len"].first()
    variants = [v for v in arch.VARIANTS if v in set(summary["variant"])]
    rows = {}
    for _, r in summary.iterrows():
        a, v = r["architecture"], r["variant"]
        row = rows.setdefault(a, {"Architecture": architecture_name(a),
                                  "N": int(n[(a, OWN)]) if (a, OWN) in n.index else "",
                                  **dict.fromkeys(map(readable, variants), "")})
        acc = "" if r["mean"] != r["mean"] else f"{r['mean']:.1f}" + ("" if r["std"] != r["std"] else f" ± {r['std']:.1f}")
        if r["n_diverged"]:
            acc += f" ({r['n_diverged']} diverged)"
        if v == TOKENS:
            acc += f" (N = {int(n[(a, v)])})"
        row[readable(v)] = acc
    return list(rows.values())


def accuracy_table(runs: Runs):
    """:func:`accuracy_rows`, styled, with a caption that says what the rows are."""
    from ..book.deliver import styled

    if not runs.trains:
        return _not_run(runs)
    return styled(accuracy_rows(runs), runs.caption(
        "Final test accuracy (%), mean ± sd over seeds, per architecture and variant; N: the architecture's own, as "
        "x³/√N used it")).set_table_styles(SMALL, overwrite=False)


def per_seed_table(runs: Runs):
    """Each run's final test accuracy (%), one column per seed."""
    from ..analysis import per_seed_table as per_seed
    from ..book.deliver import styled

    if not runs.trains:
        return _not_run(runs)
    table = per_seed(runs.final, index=["architecture", "variant"])
    rows = [{"Architecture": architecture_name(r["architecture"]), "Variant": readable(r["variant"]),
             **{k: v for k, v in r.items() if str(k).startswith("seed ")}} for r in table.to_dict("records")]
    return styled(rows, runs.caption("Each run's final test accuracy (%)"))


def deit_values(runs: Runs) -> dict[str, str]:
    """Softmax's mean accuracy on ViT and on DeiT (the same model, DeiT with its augmentation and
    drop-path), the gap between them and whether DeiT is ``below`` or ``above``."""
    if not runs.trains:
        return {k: runs.not_run for k in ("vit", "deit", "gap", "direction")}
    summary = arch.accuracy_summary(runs.final)
    soft = summary[summary["variant"] == SOFTMAX].set_index("architecture")["mean"]
    gap = float(soft["deit"] - soft["vit"])
    return {"vit": f"{soft['vit']:.1f}%", "deit": f"{soft['deit']:.1f}%", "gap": f"{abs(gap):.1f}",
            "direction": "below" if gap < 0 else "above"}


def accuracy_figure(runs: Runs):
    """Two panels: each run's final accuracy per architecture and variant (bars: mean ± sd), and
    the same-seed differences from softmax with their 95% intervals and the margin's band."""
    import matplotlib.pyplot as plt

    from .. import plotting
    from ..claims import claim
    from ..display import label

    if not runs.trains:
        return None
    final, diffs, margin = runs.final, differences(runs), claim("table2_architectures").margin
    archs = list(dict.fromkeys(final["architecture"]))
    variants = [v for v in arch.VARIANTS if v in set(final["variant"])]
    colours = {v: plt.get_cmap("tab10")(i) for i, v in enumerate(variants)}
    width = 0.8 / len(variants)
    pairs = final.pivot_table(index=["architecture", "seed"], columns="variant", values="test_acc") * 100.0
    fig, (ax, ax_d) = plt.subplots(1, 2, figsize=(11, 4.2))
    for j, v in enumerate(variants):
        for i, a in enumerate(archs):
            sub = final[(final["architecture"] == a) & (final["variant"] == v)]
            if sub.empty:
                continue
            x = i + (j - (len(variants) - 1) / 2) * width
            vals = sub["test_acc"].to_numpy(dtype=float) * 100.0
            vals = vals[np.isfinite(vals)]
            ax.scatter(np.full(len(vals), x), vals, color=colours[v], s=16, alpha=0.6)
            if len(vals):
                ax.errorbar(x, vals.mean(), yerr=vals.std(ddof=1) if len(vals) > 1 else 0, fmt="_", markersize=14,
                            color=colours[v], capsize=4)
            d = diffs[(diffs["architecture"] == a) & (diffs["variant"] == v)]
            if v == SOFTMAX or d.empty:
                continue
            per_seed = (pairs.loc[a, v] - pairs.loc[a, SOFTMAX]).dropna().to_numpy()
            ax_d.scatter(np.full(len(per_seed), x), per_seed, color=colours[v], s=16, alpha=0.6)
            lo, hi, m = (float(d[k].iloc[0]) for k in ("ci_low", "ci_high", "mean_diff"))
            if lo == lo:
                ax_d.errorbar(x, m, yerr=[[m - lo], [hi - m]], fmt="_", markersize=14, color=colours[v], capsize=4)
    ax_d.axhspan(-margin, margin, color="grey", alpha=0.15, lw=0)
    ax_d.axhline(0, color="grey", lw=0.8)
    own_n = final[final["variant"] == OWN].groupby("architecture")["seq_len"].first()
    ticks = [f"{architecture_name(a)}\nN = {int(own_n[a])}" if a in own_n.index else architecture_name(a) for a in archs]
    for a_ in (ax, ax_d):
        a_.set_xticks(range(len(archs)))
        a_.set_xticklabels(ticks, fontsize=FONT + 1)
        a_.tick_params(labelsize=FONT + 1)
    for v in variants:
        ax_d.scatter([], [], color=colours[v], label=label(v))
    ax.set_ylabel("final test accuracy (%)", fontsize=FONT + 1)
    ax.set_title("Accuracy: each dot a seed; bars mean ± sd", fontsize=FONT + 1)
    ax_d.set_ylabel("minus softmax, same seed (points)", fontsize=FONT + 1)
    ax_d.set_title(f"Paired differences: bars 95% CI; band ±{margin:g}", fontsize=FONT + 1)
    plotting.legend_outside(ax_d, title="variant")
    c0 = runs.configs[0]
    plotting.stamp(ax, runs.preset, f"Fashion-MNIST, {c0.train_subset:,} images, {plural(c0.epochs, 'epoch')}")
    fig.tight_layout()
    return fig


# --- Table 2 across architectures: the register's pooled comparisons and their cells ------------


def _cell_name(key) -> str:
    """A pooled comparison's cell key (``("timm:vit_micro",)``) as its architecture's name."""
    model = key[0] if isinstance(key, tuple) else key
    return architecture_name(arch.architecture_of({"model": model}))


def table2_rows(delivered) -> list[dict]:
    """Each registered comparison of ``table2_architectures`` pooled over the architectures (with
    the register's pairs, interval, p-values and result), followed by its cells: each
    architecture's own difference and 95% interval (description: the register pools them)."""
    from ..claims.report import comparison_rows
    from ..numbers import fixed

    out = []
    for r, row in zip(delivered.verdict.comparisons, comparison_rows(delivered.verdict)):
        name = row["Comparison"].split(",")[0]
        out.append({"Comparison": name, "Over": "pooled (the claim)", "Pairs": row["Pairs"],
                    "Difference (points) [95% CI]": row["Difference [95% CI]"].removesuffix(" points"),
                    "90% CI": row["90% CI"], "Holm p": row["Holm p"], "TOST p": row["TOST p"], "Result": row["Result"]})
        for key, (mean, lo, hi, n) in sorted((r.cell_estimates or {}).items(), key=lambda kv: _cell_order(kv[0])):
            out.append({"Comparison": "", "Over": _cell_name(key), "Pairs": str(n),
                        "Difference (points) [95% CI]": f"{fixed(mean, 2, True)} [{fixed(lo, 2, True)}, {fixed(hi, 2, True)}]",
                        "90% CI": "", "Holm p": "", "TOST p": "", "Result": ""})
    return out


def _cell_order(key) -> int:
    names = list(ARCHITECTURE_NAMES.values())
    name = _cell_name(key)
    return names.index(name) if name in names else len(names)


def table2_table(delivered):
    """:func:`table2_rows`, styled, with the claim's margin, scale and what the cell rows are."""
    from ..book.deliver import styled
    from ..claims.report import plain

    c = delivered.verdict.claim
    # eight columns: the intervals may break at their comma, or the table is wider than the page's column
    return styled(table2_rows(delivered), (
        f"{plain(c.statement)}: the claim register's pooled comparisons (margin ±{c.margin:g}, α = {c.alpha:g}, Holm "
        f"over the claim's comparisons) and, below each, its four architectures' own differences ({DESCRIPTION}); "
        f"{c.scale}")).set_table_styles(SMALL, overwrite=False)


def table2_values(delivered) -> dict[str, str]:
    """Per registered comparison (``sqrt_n``, ``fixed``): the pooled difference with its interval,
    the lowest and the highest architecture's difference, and whether the cells ``differ in sign``
    or ``share a sign``."""
    from ..claims.report import estimate_cell
    from ..numbers import fixed

    keys = {"cube_sqrt_n": "sqrt_n", "cube_14": "fixed"}
    out = {}
    for r in delivered.verdict.comparisons:
        k = keys.get(r.comparison.id, r.comparison.id)
        out[f"{k}_pooled"] = estimate_cell(r).removesuffix(" points")
        cells = sorted((m, _cell_name(key)) for key, (m, *_) in (r.cell_estimates or {}).items())
        if not cells:
            out[f"{k}_low"] = out[f"{k}_high"] = out[f"{k}_signs"] = "no cells stored"
            continue
        out[f"{k}_low"] = f"{fixed(cells[0][0], 2, True)} ({cells[0][1]})"
        out[f"{k}_high"] = f"{fixed(cells[-1][0], 2, True)} ({cells[-1][1]})"
        out[f"{k}_signs"] = "differ in sign" if cells[0][0] < 0 < cells[-1][0] else "share a sign"
    return out


# --- the readings of N ---------------------------------------------------------------------------


#: The measure's two comparisons (its numbers' prefixes), the architecture and reading each is,
#: and how the page names them.
READINGS = (("Swin x^3/14", "swin", FIXED, "Swin: x³/14 minus x³/√N, N its window"),
            ("XCiT N = tokens", "xcit", TOKENS, "XCiT: N = tokens minus N = channels"))
#: Marks the measured claim's rows in the readings table.
MARK = " ‡"
MEASURE_COLUMNS = ("Holm p", "TOST p", "Result")


def readings_claim_rows(delivered) -> list[dict]:
    """The measured claim ``n_windows_channels``'s two comparisons, with the result its measure
    gives (and ``architecture``, ``variant``: the reading's row in :func:`readings_table`)."""
    from ..display import typographic
    from ..numbers import p_value

    numbers = delivered.verdict.numbers
    rows = []
    for prefix, architecture, variant, shown in READINGS:
        if f"{prefix}: pairs" not in numbers:
            continue
        g = {k.split(": ", 1)[1]: v for k, v in numbers.items() if k.startswith(prefix + ": ")}
        rows.append({"architecture": architecture, "variant": variant, "Comparison": shown, "Seed pairs": int(g["pairs"]),
                     "Difference (points) [95% CI]": typographic(f"{g['difference (points)']:+.1f} "
                                                                 f"[{g['CI low']:+.1f}, {g['CI high']:+.1f}]"),
                     "Holm p": p_value(g["Holm p"]), "TOST p": p_value(g["TOST p"]),
                     "Detectable effect (points)": f"{g['detectable effect (points)']:.1f}", "Result": g["result"]})
    return rows


def readings_table(runs: Runs, delivered=None):
    """Every other reading of N against each architecture's own, paired by seed
    (:func:`polyattn.analysis.architectures.n_readings`): difference, 95% interval, pairs; at the
    book preset with ``delivered`` (the measured claim ``n_windows_channels``), its two rows carry
    the measure's difference, p-values and result, marked ‡."""
    from ..analysis.tables import interval_cell
    from ..book.deliver import styled

    if not runs.trains:
        return _not_run(runs)
    measured = ({(r["architecture"], r["variant"]): r for r in readings_claim_rows(delivered)}
                if delivered is not None and runs.preset == "book" else {})
    column = "Minus x³/√N, own N (points) [95% CI]"
    rows = []
    for _, r in arch.n_readings(runs.final).iterrows():
        row = {"Architecture": architecture_name(r["architecture"]), "Reading": readable(r["variant"]),
               "Seed pairs": int(r["n_pairs"]),
               column: interval_cell(r["mean_diff"], r["ci_low"], r["ci_high"], fmt="+.1f", missing="not comparable"),
               **(dict.fromkeys(MEASURE_COLUMNS, "") if measured else {})}
        m = measured.get((r["architecture"], r["variant"]))
        if m is not None:
            row.update({"Seed pairs": m["Seed pairs"], column: m["Difference (points) [95% CI]"] + MARK,
                        **{c: m[c] for c in MEASURE_COLUMNS}})
        rows.append(row)
    what = DESCRIPTION
    if measured:
        what = ("description, not a test, except the rows marked ‡: the measured claim's two comparisons (Holm over "
                f"these two, margin ±{delivered.verdict.numbers['margin (points)']:g}, book preset), with the result "
                "its measure gives")
    return _nowrap(styled(rows, runs.caption(f"Each other reading of N against the architecture's own ({what})")), column)


def readings_values(delivered) -> dict[str, str]:
    """The difference and 95% interval of each of the measure's comparisons (``swin_*``, ``xcit_*``)."""
    from ..display import typographic

    numbers = delivered.verdict.numbers
    out = {}
    for prefix, key, _, _ in READINGS:
        if f"{prefix}: pairs" not in numbers:
            out[f"{key}_diff"] = out[f"{key}_ci"] = "no pair stored"
            continue
        out[f"{key}_diff"] = typographic(f"{numbers[prefix + ': difference (points)']:+.1f}")
        out[f"{key}_ci"] = typographic(f"{numbers[prefix + ': CI low']:+.1f} to {numbers[prefix + ': CI high']:+.1f}")
    return out


# --- detection and instance segmentation --------------------------------------------------------


def _shown_config(preset: str):
    """The detection config whose scenes and model the page shows: the preset's, or the book's
    where the preset trains nothing (the paper preset's data is COCO)."""
    from ..experiments.detection import detection_proxy
    from ..presets import prologue

    return detection_proxy(preset if prologue(preset).trains else "book")[0]


def scenes_figure(preset: str, n: int = 4):
    """The first ``n`` test scenes of the preset's detection data: the items' masks shaded, their
    boxes and Fashion-MNIST classes drawn."""
    import matplotlib.pyplot as plt
    from torchvision.datasets import FashionMNIST

    from ..data.scenes import load_scenes
    from ..tasks.detection import options

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
    from ..experiments.detection_setup import detector_facts

    return detector_facts(_shown_config(preset))


def detector_values(preset: str) -> dict[str, str]:
    """The shown detector's patch, N, √N, the paper's 1/14 over 1/√N, and its parameters."""
    from ..numbers import square_root

    facts, config = _detector_facts(preset), _shown_config(preset)
    return {"patch": str(config.patch_size), "n": f"{facts['N']:,}", "root": square_root(facts["N"]),
            "fixed_ratio": f"{math.sqrt(facts['N']) / 14:.2f}", "params": f"{facts['n_params'] / 1e6:.2f} million",
            "vit_params": f"{facts['vit_params'] / 1e6:.2f} million"}


@lru_cache(maxsize=2)
def _facts_of(preset: str) -> dict:
    from ..experiments.detection import detection_proxy
    from ..experiments.detection_setup import detector_facts

    return detector_facts(detection_proxy(preset)[0])


def detector_deviation_values() -> dict[str, str]:
    """The detection proxy (book preset) and the paper preset's Mask R-CNN on COCO, per preset
    (``_book``, ``_paper``): the input's side in px, the ViT's width and blocks, N, the
    parameters in all, the epochs and batch, and the seeds."""
    from ..experiments.detection import detection_proxy

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
    from ..book.deliver import styled
    from ..experiments.detection import detection_proxy
    from ..experiments.detection_setup import setup_table

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
        from .. import analysis

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
    from ..analysis import detection as det
    from ..experiments.detection import detection_proxy
    from ..presets import prologue

    page = prologue(preset, device, paper_note=PAPER_NOTE)
    configs = page.on_device(detection_proxy(preset if page.trains else "book", list(seeds) if seeds else None))
    return _read(DetectionRuns(preset, page.trains, page.not_run, configs), "detection_proxy", recompute,
                 det.detection_final)


def ap_table(runs: DetectionRuns):
    """Test AP per variant and metric: mean ± sd over seeds (the median with three or more)."""
    from ..analysis import detection as det
    from ..book.deliver import styled

    if not runs.trains:
        return _not_run(runs)
    wide = det.wide_table(det.detection_table(runs.final))
    rows = [{"Variant": readable(v), **{k: readable(x) for k, x in r.items()}} for v, r in wide.iterrows()]
    return styled(rows, runs.caption("Test AP (%) per variant: mean ± sd over seeds"))


def claim_table(delivered):
    """The register's table of a delivered claim without the comparisons that have no runs yet
    (they have nothing to show: a positive control's row appears once its runs are stored); the
    differences' common unit in their column's name, so that each interval fits on one line."""
    from ..book.deliver import styled

    table = delivered.table
    rows = [r for r in table.data.to_dict("records") if not str(r["Pairs"]).startswith("0 of")]
    column = "Difference [95% CI]"
    cells = [str(r.get(column, "")) for r in rows]
    units = {c.rsplit("] ", 1)[1] for c in cells if "] " in c}
    if len(units) == 1 and all("] " in c for c in cells):
        unit = units.pop()
        named = f"Difference ({unit}) [95% CI]"
        rows = [{(named if k == column else k): (str(v).removesuffix(f" {unit}") if k == column else v)
                 for k, v in r.items()} for r in rows]
        column = named
    return _nowrap(styled(rows, table.caption or "").set_table_styles(SMALL, overwrite=False), column)


def key_difference(delivered, comparison_id: str) -> str:
    """One comparison of a delivered registered claim: its difference with its 95% interval."""
    from ..claims.report import estimate_cell

    for r in delivered.verdict.comparisons:
        if r.comparison.id == comparison_id:
            return estimate_cell(r)
    raise ValueError(f"claim {delivered.verdict.claim.id!r} has no comparison {comparison_id!r}")


def detection_figure(runs: DetectionRuns):
    """Training loss and test box and mask AP after each evaluation: per variant the mean over
    seeds (a line) and the range of its runs (a band), so that a panel has one line per variant."""
    import matplotlib.pyplot as plt

    from .. import plotting
    from ..analysis import detection as det
    from ..labels import DETECTION_VARIANTS

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
