"""Chapter 05's tables, figures and glued values (the Long Range Arena).

The statistics are :mod:`polyattn.analysis.lra`'s and the verdicts the claim register's; this
module loads the runs a section needs and shapes what the page shows of them:

    runs = load(preset, seeds, device, recompute)    # the grid's records, chance levels, learned tasks
    judging_values(); harness_values(); harness_table()
    grid_values(runs); task_tables(runs); listops_example(runs); pathfinder_figure(runs)
    learned_table(runs); learned_values(runs)
    check = pathfinder_check(preset, seeds, device, recompute)
    pathfinder_table(check, preset); pathfinder_values(check)
    accuracy_table(runs); comparison_summary(runs, deliver("lra_fixed_scale"), differences(runs))
    comparison_table(runs, deliver("lra_fixed_scale", glue_it=False), differences(runs))
    padding_table(runs, deliver("n_under_padding")); readings_gap(runs)
    curve_figure(runs); length_tables(runs); length_figure(runs); wall_table(runs); wall_values(runs)
    pairs = long_pairs(deliver("lra_long")); budget_table(pairs); budget_counts(pairs)
    pair_values(pairs, "poly:p=3", "listops")        # one comparison at both budgets
    curve = long_curve("listops"); long_curve_table(curve); catch_up_values(curve)

:func:`load`, :func:`pathfinder_check` and :func:`long_curve` keep what they read for the session,
so that each section of the page asks for its runs again instead of reading another section's
variables.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

import numpy as np
import pandas as pd

from ..analysis import lra as lra_analysis
from ..experiments import lra as grids
from ..labels import LRA_TASKS, LRA_VARIANTS

LABELS = [label for label, _, _ in LRA_VARIANTS]
TASKS = list(LRA_TASKS)
SOFTMAX, VALID, PADDED, FIXED = "softmax", "x^3/sqrt(N), N valid", "x^3/sqrt(N), N padded", "x^3/14"
#: The claims this chapter delivers, in the order of its sections.
CLAIMS = ("lra_fixed_scale", "n_under_padding", "lra_long")
#: A smaller font for tables with many short columns.
SMALL = [{"selector": "th, td", "props": "font-size: 0.85em"}]
#: Labels of the figures (points): at least the book's minimum.
FONT = 9
#: What the paper preset does not run.
PAPER_NOTE = "the published harness's configurations are listed below, not trained"
#: Marks a comparison of a registered claim in the page's own tables.
MARK = " ‡"
REGISTERED_NOTE = ("‡ a comparison of a registered claim: its difference, Holm p (over the claim's own comparisons) "
                   "and result are the claim's, as in its table at the end of the chapter")
#: The published harness's learning rate (the same for every task).
PAPER_LR = 1e-4
#: The comparisons of the longer grid the page discusses: (glue prefix, candidate activation, task).
LONG_COMPARISONS = (("lo_cube", "poly:p=3", "listops"), ("lo_fixed", "poly:p=3,c=1/14", "listops"),
                    ("re_cube", "poly:p=3", "retrieval"), ("re_fixed", "poly:p=3,c=1/14", "retrieval"))
#: A learning-curve panel whose curves all stay within this many points of one another is left out.
FLAT_POINTS = lra_analysis.FLAT_CURVE_POINTS


def task_name(task: str) -> str:
    """A task as the reader knows it: ``listops`` -> ListOps."""
    from ..claims.scope import DATA_NAMES

    return DATA_NAMES.get(task, task)


def names(tasks) -> str:
    """Task names joined for a sentence ("ListOps, Text and Retrieval"); "none" when there are none."""
    return _listed([task_name(t) for t in tasks])


def variant_name(label: str) -> str:
    """A variant as the reader knows it: the activation's name, and which N when it has two readings."""
    from ..display import name

    spec, mode = next((s, m) for lbl, s, m in LRA_VARIANTS if lbl == label)
    two = sum(s == spec for _, s, _ in LRA_VARIANTS) > 1
    return name(spec) + (f", N {'padded' if mode == 'padded' else 'valid'}" if two else "")


def margin() -> float:
    """The equivalence margin (accuracy points) the register fixed for the chapter's claims."""
    from ..claims import claim

    return float(claim("lra_fixed_scale").margin)


def chance_band() -> float:
    """The band (points) around a task's chance level within which the register counts a run as
    not having learned."""
    from ..claims import claim

    return float(claim("lra_fixed_scale").chance_band)


def pct(x: float, digits: int = 1) -> str:
    """A fraction as a percentage for a sentence: 0.3125 -> "31.3%"; "not stored" when missing."""
    return "not stored" if x is None or x != x else f"{100 * x:.{digits}f}%"


def plural(n: int, word: str) -> str:
    """"1 seed", "3 seeds"."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def steps_of(config) -> int:
    """Training steps of a config: batches per epoch times epochs."""
    return math.ceil(config.train_subset / config.batch_size) * config.epochs


def compact(table):
    """A table in the smaller font of the page's wide tables (a delivered claim's, for one)."""
    return table.set_table_styles(SMALL, overwrite=False)


def _not_run(runs: "Runs"):
    """What a table shows where the preset has no runs: the prologue's note."""
    from IPython.display import Markdown

    return Markdown(runs.not_run)


# --- the runs ----------------------------------------------------------------------------------


@dataclass
class Runs:
    """The grid's runs at a preset, as the page reads them."""
    preset: str
    trains: bool                 # whether this preset reads (book) or trains (smoke) the grid
    not_run: str                 # what the page says where it has no runs
    configs: list
    tasks: list                  # the tasks whose runs are all here
    pending: list                # book tasks whose runs are not all stored yet
    data: dict = field(default_factory=dict)      # task -> the data every run of the task sees
    records: list = field(default_factory=list)
    final: pd.DataFrame = field(default_factory=pd.DataFrame)
    chance: dict = field(default_factory=dict)    # task -> majority-class accuracy (a fraction)
    learned: pd.DataFrame = field(default_factory=pd.DataFrame)

    def by_task(self, task: str) -> list:
        return [c for c in self.configs if grids.task_of(c) == task]

    @property
    def informative(self) -> list:
        """The tasks softmax learned (the lower end of its interval above chance)."""
        if self.learned.empty:
            return []
        return [t for t in self.tasks if bool(self.learned.loc[t, "learned"])]

    @property
    def uninformative(self) -> list:
        return [t for t in self.tasks if t not in self.informative] if self.trains else []

    @property
    def seeds(self) -> int:
        return len({c.seed for c in self.configs})

    def caption(self, what: str) -> str:
        """``what`` with the preset, the seeds and the deviations from the published setting."""
        if not self.configs:
            return what
        steps = sorted({steps_of(c) for c in self.configs if grids.task_of(c) in self.tasks} or {0})
        lr = self.configs[0].lr / PAPER_LR
        span = f"{steps[0]:,}" if len(steps) == 1 else f"{steps[0]:,} to {steps[-1]:,}"
        return (f"{what}; preset {self.preset}, {plural(self.seeds, 'seed')}, the harness's model on shortened tasks, "
                f"{span} training steps at {lr:g} times the published learning rate (the task table gives "
                "each deviation)")


def load(preset: str, seeds=None, device: str = "cpu", recompute: bool = False) -> Runs:
    """The ``lra`` grid's runs at ``preset``: at the book preset the stored records of the tasks
    whose runs are all stored (the others wait, see :attr:`Runs.pending`), under smoke the grid
    trained (seconds), under paper none.  Kept for the session."""
    return _load(preset, tuple(seeds) if seeds else None, device, bool(recompute))


@lru_cache(maxsize=4)
def _load(preset: str, seeds, device: str, recompute: bool) -> Runs:
    from ..presets import prologue
    from ..runs import load_or_run_all, stored
    from ..tasks import get_task

    page = prologue(preset, device, paper_note=PAPER_NOTE)
    trains, not_run = page.trains, page.not_run
    configs = page.on_device(grids.lra(preset if trains else "book", list(seeds) if seeds else None))
    runs = Runs(preset, trains, not_run, configs, list(TASKS), [])
    if trains and preset == "book" and not recompute:
        runs.pending = [t for t in TASKS if any(stored(c) is None for c in runs.by_task(t))]
        runs.tasks = [t for t in TASKS if t not in runs.pending]
        if not runs.tasks:
            runs.trains = False
            runs.not_run = ("no task of the `lra` grid has all its book runs stored (`python -m polyattn grid lra "
                            "--preset book` computes them)")
    if not runs.trains:
        return runs
    task_impl = get_task("lra")
    for t in runs.tasks:
        runs.data[t] = task_impl.load(runs.by_task(t)[0], 1, 0)
        runs.records += load_or_run_all(runs.by_task(t), recompute=recompute, desc=f"lra {t}", progress=False,
                                        data=runs.data[t])
    runs.chance = {t: float(d.chance) for t, d in runs.data.items()}
    runs.final = lra_analysis.lra_final(runs.records)
    runs.learned = lra_analysis.above_chance(runs.final, runs.chance).set_index("lra_task").reindex(runs.tasks)
    return runs


@lru_cache(maxsize=2)
def book_chance(tasks: tuple = tuple(TASKS)) -> dict:
    """Task -> the chance level (majority class, a fraction) of the book preset's data, whatever
    the page's preset: the register's claims read book records."""
    from ..tasks import get_task

    task_impl = get_task("lra")
    configs = grids.lra("book", seeds=[0], tasks=tasks)
    return {t: float(task_impl.load(next(c for c in configs if grids.task_of(c) == t), 1, 0).chance) for t in tasks}


# --- how the comparisons are judged, and what the harness ran ------------------------------------


def judging_values() -> dict[str, str]:
    """The margin, the test level and power, the test set's size, the binomial standard error of
    one run's accuracy near 50% (points), the chance band, and how many comparisons each claim
    of the chapter has (``comparisons_<claim id>``)."""
    from .. import analysis
    from ..claims import claim

    test_n = grids.lra("book", seeds=[0])[0].test_subset
    return {"margin": f"±{margin():g} accuracy points", "alpha": f"{analysis.ALPHA:g}", "power": f"{analysis.POWER:g}",
            "test_n": f"{test_n:,}", "binom_se": f"{100 * (0.25 / test_n) ** 0.5:.1f}",
            "chance_band": f"{chance_band():g}",
            **{f"comparisons_{cid}": str(len(claim(cid).comparisons)) for cid in CLAIMS}}


def harness_values() -> dict[str, str]:
    """The harness's model in words and its learning rate."""
    from ..models.seq_classifier import SEQ_SIZES

    size = SEQ_SIZES["nystromformer"]
    return {"model": f"{size['depth']} layers, width {size['dim']}, {size['heads']} heads of "
                     f"{size['dim'] // size['heads']}, MLP {int(size['dim'] * size['mlp_ratio'])}, "
                     f"dropout {size['dropout']:g}",
            "paper_lr": f"{PAPER_LR:g}"}


def harness_table():
    """The published harness's setting, one column per task."""
    from ..book.deliver import styled

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
    from ..book.deliver import styled

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
    from ..data.lra import listops

    options = dict(runs.by_task("listops")[0].options.get("data", {}))
    sample = listops.generate(20, seed=123, **{**listops.DEFAULTS, **options})
    i = min(range(len(sample.ids)), key=lambda k: len(sample.ids[k]))
    return {"expression": f"`{listops.decode(sample.ids[i])}`", "length": str(len(sample.ids[i])),
            "value": str(int(sample.labels[i]))}


def pathfinder_figure(runs: Runs):
    """Two Pathfinder images of each label, drawn with the preset's generator settings."""
    import matplotlib.pyplot as plt

    from ..data.lra import pathfinder

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


# --- did softmax learn each task? ----------------------------------------------------------------


def interval_text(mean: float, low: float, high: float) -> str:
    """"31.3 [30.8, 31.9]" from fractions; the mean alone when the interval is missing."""
    if low != low or high != high:
        return f"{100 * mean:.1f}"
    return f"{100 * mean:.1f} [{100 * low:.1f}, {100 * high:.1f}]"


def learned_table(runs: Runs):
    """Softmax's test accuracy per task beside the task's chance level, and whether it learned it."""
    if not runs.trains:
        return _not_run(runs)
    from ..book.deliver import styled

    rows = [{"Task": task_name(t), "Seeds": int(r["n_runs"]),
             "Softmax test accuracy, % [95% CI]": interval_text(r["mean"], r["ci_low"], r["ci_high"]),
             "Chance (%)": f"{100 * r['chance']:.1f}", "Learned": "yes" if r["learned"] else "no"}
            for t, r in runs.learned.iterrows()]
    return compact(styled(rows, runs.caption("Did softmax learn each task? Chance: the majority class")))


def learned_values(runs: Runs) -> dict[str, str]:
    """The tasks softmax learned and did not, and what the runs cost (runs, hours, longest run in
    minutes, torch threads per run, hardware)."""
    from .. import analysis

    if not runs.trains:
        return {k: runs.not_run for k in ("informative", "uninformative", "n_records", "hours", "longest", "threads",
                                          "hardware")}
    budget = analysis.compute_budget(runs.records)
    threads = budget["torch_threads"]
    return {"informative": names(runs.informative), "uninformative": names(runs.uninformative),
            "n_records": f"{budget['n_runs']:,}", "hours": f"{budget['wall_hours']:.1f}",
            "longest": f"{budget['wall_s_max'] / 60:.0f}",
            "threads": plural(int(threads[0]), "torch thread") if len(threads) == 1 else f"{', '.join(threads)} torch threads",
            "hardware": ", ".join(budget["gpu"] or budget["cpu"]) or "unknown hardware"}


# --- Pathfinder's budget check -------------------------------------------------------------------


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
    from ..presets import prologue
    from ..runs import page_records
    from ..tasks import get_task

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

    from ..book.deliver import styled

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
    out["learned_by"] = _listed([shown[m] for m, y in learned.items() if y])
    out["not_learned_by"] = _listed([shown[m] for m, y in learned.items() if not y])
    return out


def _listed(items: list) -> str:
    if not items:
        return "none"
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


# --- accuracy per task and variant ---------------------------------------------------------------


def accuracy_table(runs: Runs):
    """Final test accuracy per variant (rows) and task (columns), mean over seeds [95% CI]."""
    if not runs.trains:
        return _not_run(runs)
    from .. import analysis
    from ..book.deliver import styled

    def cell(x):
        m, lo, hi = analysis.t_interval(np.asarray(x, dtype=float) * 100)
        return f"{m:.1f}" if lo != lo else f"{m:.1f} [{lo:.1f}, {hi:.1f}]"

    f = runs.final
    rows = [{"Variant": variant_name(v), **{task_name(t): cell(f[(f["lra_task"] == t) & (f["variant"] == v)]["test_acc"])
                                            for t in runs.tasks}} for v in LABELS]
    return compact(styled(rows, runs.caption("Final test accuracy (%) per task and variant, mean over seeds [95% CI]")))


def registered_rows(delivered, preset: str) -> dict:
    """Task -> the row (:func:`polyattn.claims.report.comparison_rows`) of a delivered claim's
    comparison on that task; none at a preset other than the book's, whose records the register reads."""
    from ..claims.report import comparison_rows

    if preset != "book":
        return {}
    v = delivered.verdict
    return {r.comparison.id: row for r, row in zip(v.comparisons, comparison_rows(v))}


def differences(runs: Runs, baseline: str = SOFTMAX, variants=None, tasks=None) -> pd.DataFrame:
    """Each variant minus ``baseline`` with the same seed, per task (paired t interval, Holm over the
    table, TOST against the margin) with its verdict form."""
    from .. import analysis

    if not runs.trains:
        return pd.DataFrame()
    final = runs.final if tasks is None else runs.final[runs.final["lra_task"].isin(tasks)]
    diffs = lra_analysis.variant_difference(final, baseline, compare=variants, margin=margin())
    return analysis.verdict_frame(diffs)


def _p(v) -> str:
    return "" if v != v else f"{v:.2g}"


def _own_row(d, informative: bool) -> dict:
    from ..display import typographic

    diff = (f"{d['mean_diff']:+.1f} [{d['ci_low']:+.1f}, {d['ci_high']:+.1f}]" if d["ci_low"] == d["ci_low"]
            else f"{d['mean_diff']:+.1f}")
    verdict = d["verdict"]
    if verdict == "inconclusive" and d["mde"] == d["mde"]:
        verdict += f" (MDE {d['mde']:.1f})"
    return {"difference": typographic(diff), "Holm p": _p(d["p_holm"]), "TOST p": _p(d["tost_p"]),
            "Verdict": verdict + ("" if informative else " (task not learned)")}


def _registered_row(row: dict) -> dict:
    return {"difference": row["Difference [95% CI]"].removesuffix(" points") + MARK, "Holm p": row["Holm p"],
            "TOST p": row["TOST p"], "Verdict": row["Result"]}


def comparison_table(runs: Runs, fixed_claim, diffs: Optional[pd.DataFrame] = None):
    """Each variant minus softmax, per task; the rows of x^3/14 are the registered claim's."""
    if not runs.trains:
        return _not_run(runs)
    from ..book.deliver import styled

    diffs = differences(runs) if diffs is None else diffs
    registered = registered_rows(fixed_claim, runs.preset)
    rows = []
    for _, d in diffs.iterrows():
        t, v = d["lra_task"], d["variant"]
        cells = (_registered_row(registered[t]) if v == FIXED and t in registered
                 else _own_row(d, t in runs.informative))
        rows.append({"Task": task_name(t), "Variant": variant_name(v),
                     "Minus softmax, points [95% CI]": cells.pop("difference"), **cells})
    return styled(rows, runs.caption(f"Each variant minus softmax with the same seed; {REGISTERED_NOTE}")
                  ).set_table_styles(SMALL, overwrite=False)


def comparison_summary(runs: Runs, fixed_claim, diffs: Optional[pd.DataFrame] = None):
    """:func:`comparison_table` in brief: one row per variant, one column per task, each cell the
    difference from softmax [95% CI] over the verdict (° where softmax did not learn the task)."""
    from ..book.deliver import styled

    if not runs.trains:
        return _not_run(runs)
    diffs = differences(runs) if diffs is None else diffs
    registered = registered_rows(fixed_claim, runs.preset)
    cells: dict = {}
    for _, d in diffs.iterrows():
        t, v = d["lra_task"], d["variant"]
        row = _registered_row(registered[t]) if v == FIXED and t in registered else _own_row(d, True)
        verdict = row["Verdict"].split(" (MDE")[0] + ("" if t in runs.informative else "°")
        cells.setdefault(v, {})[task_name(t)] = f"{row['difference']}<br>{verdict}"
    rows = [{"Variant": variant_name(v), **cells[v]} for v in LABELS if v in cells]
    return styled(rows, runs.caption("Each variant minus softmax with the same seed, in points of test accuracy "
                                     "[95% CI], and the verdict (Holm over the table; ° softmax did not learn the "
                                     f"task; {REGISTERED_NOTE})")).set_table_styles(SMALL, overwrite=False)


def family_size(diffs: pd.DataFrame) -> int:
    """How many comparisons Holm's correction ran over."""
    return int(diffs["family_size"].iloc[0]) if len(diffs) else 0


# --- what N is under padding ---------------------------------------------------------------------


def padding_table(runs: Runs, padded_claim, diffs: Optional[pd.DataFrame] = None):
    """The padded reading and x^3/14 against x^3/sqrt(N) with N the valid keys, on the tasks whose
    sequences vary in length; the padded rows are the registered claim's."""
    if not runs.trains:
        return _not_run(runs)
    from ..book.deliver import styled

    if diffs is None:
        diffs = differences(runs, VALID, variants=[PADDED, FIXED], tasks=grids.VARIABLE_LENGTH_TASKS)
    registered = registered_rows(padded_claim, runs.preset)
    rows = []
    for _, d in diffs.iterrows():
        t, v = d["lra_task"], d["variant"]
        cells = (_registered_row(registered[t]) if v == PADDED and t in registered else _own_row(d, True))
        rows.append({"Task": task_name(t), "Variant": variant_name(v),
                     f"Minus {variant_name(VALID)}, points [95% CI]": cells.pop("difference"),
                     "Holm p": cells["Holm p"], f"TOST p (±{margin():g})": cells["TOST p"], "Verdict": cells["Verdict"]})
    pairs = sorted({int(n) for n in diffs["n_pairs"]}) or [0]
    what = f"{pairs[0]} seed pairs each" if len(pairs) == 1 else f"{pairs[0]} to {pairs[-1]} seed pairs"
    return styled(rows, runs.caption(f"Against {variant_name(VALID)} on the variable-length tasks, paired by seed "
                                     f"({what}); {REGISTERED_NOTE}")).set_table_styles(SMALL, overwrite=False)


def readings_gap(runs: Runs) -> dict[str, str]:
    """On the tasks whose sequences all have one length (both readings of N one computation): the
    tasks, and the largest difference (points) between a padded run and the valid run of its seed."""
    fixed = [t for t in runs.tasks if t not in grids.VARIABLE_LENGTH_TASKS]
    if not runs.trains or not fixed:
        return {"tasks": names(fixed), "gap": "not stored"}
    f = runs.final[runs.final["lra_task"].isin(fixed)]
    pairs = f.pivot_table(index=["lra_task", "seed"], columns="variant", values="last_test_acc")
    if not {PADDED, VALID} <= set(pairs.columns):
        return {"tasks": names(fixed), "gap": "not stored"}
    return {"tasks": names(fixed), "gap": f"{100 * (pairs[PADDED] - pairs[VALID]).abs().max():.2f}"}


# --- figures of the runs -------------------------------------------------------------------------


def _variant_lines(ax, frame: pd.DataFrame, x: str, y: str, scale: float = 1.0):
    from .. import plotting

    for label, spec, mode in LRA_VARIANTS:
        c = frame[frame["variant"] == label]
        if c.empty:
            continue
        ax.plot(c[x], scale * c[y], marker="o", ms=3, color=plotting.activation_color(spec),
                ls=":" if mode == "padded" else "-", label=variant_name(label))


def _shared_legend(fig, axes):
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=FONT, frameon=False)


WHY_LEFT_OUT = {"one epoch": "one epoch", "flat": "flat", "no runs": "no runs"}


def curve_figure(runs: Runs):
    """Test accuracy after every epoch, mean over seeds, one panel per task whose curves say more
    than a table (several epochs, curves not all level); returns ``(figure or None, the tasks left
    out with why)``."""
    if not runs.trains:
        return None, runs.not_run
    import matplotlib.pyplot as plt

    epochs = lra_analysis.lra_epochs(runs.records)
    curves = epochs.groupby(["lra_task", "variant", "epoch"], sort=False)["test_acc"].mean().reset_index()
    panels = lra_analysis.curve_panels(epochs)
    drawn = [t for t in runs.tasks if panels.get(t, "no runs") is None]
    left = ", ".join(f"{task_name(t)} ({WHY_LEFT_OUT[panels.get(t, 'no runs')]})" for t in runs.tasks
                     if t not in drawn) or "none"
    if not drawn:
        return None, left
    fig, axes = plt.subplots(1, len(drawn), figsize=(3.4 * len(drawn), 3.4), squeeze=False)
    axes = axes[0]
    for ax, t in zip(axes, drawn):
        c = curves[curves["lra_task"] == t]
        _variant_lines(ax, c, "epoch", "test_acc", 100)
        if t in runs.chance:
            ax.axhline(100 * runs.chance[t], color="grey", ls=":", lw=1, label="chance")
        ax.set_title(task_name(t))
        ax.set_xlabel("epoch")
        ax.set_xticks(sorted(c["epoch"].unique()))
    axes[0].set_ylabel("test accuracy (%)")
    _shared_legend(fig, axes)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    return fig, left


def length_frame(runs: Runs) -> pd.DataFrame:
    """:func:`polyattn.analysis.lra.length_table` of the variable-length tasks."""
    records = [r for r in runs.records if grids.task_of(r["config"]) in grids.VARIABLE_LENGTH_TASKS]
    return lra_analysis.length_table(lra_analysis.length_accuracy(records))


def length_tables(runs: Runs) -> list:
    """One table per variable-length task: test accuracy per variant and length bin."""
    if not runs.trains:
        return []
    from ..book.deliver import styled

    frame = length_frame(runs)
    out = []
    for t in [t for t in runs.tasks if t in grids.VARIABLE_LENGTH_TASKS]:
        sub = frame[frame["lra_task"] == t] if len(frame) else frame
        if sub.empty:
            continue
        rows = [{"Variant": variant_name(v), **{f"{lbl} tokens": f"{a:.1f}" for lbl, a in zip(g["bin_label"], g["acc"])}}
                for v, g in sub.groupby("variant", sort=False)]
        out.append(styled(rows, runs.caption(f"{task_name(t)}: test accuracy (%) by real length, mean over seeds")))
    return out


def length_figure(runs: Runs):
    """Test accuracy against real length, one panel per variable-length task (None without runs)."""
    if not runs.trains:
        return None
    import matplotlib.pyplot as plt

    frame = length_frame(runs)
    tasks = [t for t in runs.tasks if t in grids.VARIABLE_LENGTH_TASKS and len(frame)
             and (frame["lra_task"] == t).any()]
    if not tasks:
        return None
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.6 * len(tasks), 3.6), squeeze=False)
    axes = axes[0]
    for ax, t in zip(axes, tasks):
        sub = frame[frame["lra_task"] == t]
        _variant_lines(ax, sub, "bin", "acc")
        bins = sub.drop_duplicates("bin").sort_values("bin")
        ax.set_xticks(list(bins["bin"]))
        ax.set_xticklabels(list(bins["bin_label"]), fontsize=FONT)
        ax.set_title(task_name(t))
        ax.set_xlabel("real length (tokens)")
    axes[0].set_ylabel("test accuracy (%)")
    _shared_legend(fig, axes)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    return fig


def wall_table(runs: Runs):
    """Mean wall-clock seconds of a run per variant (rows) and task (columns)."""
    if not runs.trains:
        return _not_run(runs)
    from ..book.deliver import styled

    wall = lra_analysis.wall_table(runs.final, runs.tasks, LABELS)
    rows = [{"Variant": variant_name(v), **{task_name(t): f"{wall.loc[t, v]:.0f}" for t in wall.index}}
            for v in wall.columns]
    threads = sorted({int(c.threads) for c in runs.configs if c.threads})
    per_run = f", {plural(threads[0], 'thread')} per run" if len(threads) == 1 else ""
    return styled(rows, runs.caption(f"Mean wall-clock seconds per run{per_run}"))


def wall_values(runs: Runs) -> dict[str, str]:
    """The summed wall-clock time of the runs, in hours."""
    if not runs.trains:
        return {"hours": runs.not_run}
    return {"hours": f"{float(runs.final['wall_s'].sum()) / 3600:.1f}"}


# --- with more steps -----------------------------------------------------------------------------


def long_pairs(long_claim) -> list:
    """Each comparison of the delivered ``lra_long`` claim beside the same comparison at the book's
    steps (:func:`polyattn.claims.budget.shorter_pairs`)."""
    from ..claims.budget import shorter_pairs

    return shorter_pairs(long_claim.verdict)


def long_factor(task: str) -> str:
    """How many times the book's steps the longer grid trains ``task`` ("5")."""
    return str(grids.LONG_TASKS[task])


def long_factors() -> str:
    """"ListOps at 5 times, Retrieval at 2 times"."""
    return ", ".join(f"{task_name(t)} at {k} times" for t, k in grids.LONG_TASKS.items())


def budget_table(pairs: list):
    """The gaps at the book's steps and with more steps, with each task's chance level."""
    from ..book.deliver import styled
    from ..claims.budget import budget_rows

    chance = {t: 100 * c for t, c in book_chance(tuple(grids.LONG_TASKS)).items()}
    seeds = max((p.longer.planned for p in pairs), default=0)
    return styled(budget_rows(pairs, "book steps", "more steps", chance=chance),
                  f"The gaps at the book's steps and with more steps ({long_factors()} the book's steps): difference "
                  "from softmax in points of test accuracy [95% CI], the two arms' mean accuracies (candidate / "
                  "softmax), the task's chance level (its majority class; the claim registered none, so the register "
                  "judges these comparisons without it), and the register's result on the longer runs; book preset, "
                  f"{seeds} seeds, shortened tasks").set_table_styles(SMALL, overwrite=False)


def budget_counts(pairs: list) -> dict[str, str]:
    """How many of the comparisons' gaps hold, close, narrow, reverse or stay open with more steps
    (:func:`polyattn.claims.budget.change`), and how many comparisons there are."""
    from ..claims.budget import change

    changes = [change(p) for p in pairs]
    out = {k: str(changes.count(k)) for k in ("holds", "closes", "narrows", "reverses", "open", "uninformative")}
    out["total"] = str(len(pairs))
    return out


@lru_cache(maxsize=2)
def long_curve(task: str = "listops") -> pd.DataFrame:
    """Test accuracy of the stored ``lra_long`` book runs of ``task`` after every epoch: one row per
    variant and step with ``mean``, ``min`` and ``max`` over seeds, ``seeds`` and the per-seed values
    ``values`` (fractions).  Empty while no run is stored.  Kept for the session."""
    from ..runs import stored

    records = [r for r in (stored(c) for c in grids.lra_long("book")) if r is not None
               and grids.task_of(r["config"]) == task]
    if not records:
        return pd.DataFrame(columns=["variant", "step", "mean", "min", "max", "seeds", "values"])
    epochs = lra_analysis.lra_epochs(records).sort_values(["step", "seed"])
    rows = []
    for (variant, step), g in epochs.groupby(["variant", "step"], sort=False):
        x = g["test_acc"].to_numpy(dtype=float)
        rows.append({"variant": variant, "step": int(step), "mean": float(x.mean()), "min": float(x.min()),
                     "max": float(x.max()), "seeds": len(x), "values": tuple(x)})
    return pd.DataFrame(rows)


def long_curve_table(curve: pd.DataFrame, task: str = "listops"):
    """:func:`long_curve` for people: one row per variant, one column per step, mean (min to max)."""
    from ..book.deliver import styled

    chance = book_chance((task,))[task]
    rows = []
    for label in [v for v in LABELS if v in set(curve["variant"])]:
        c = curve[curve["variant"] == label]
        rows.append({"Variant": variant_name(label),
                     **{f"step {int(r['step']):,}": f"{100 * r['mean']:.1f} ({100 * r['min']:.1f} to {100 * r['max']:.1f})"
                        for _, r in c.iterrows()}})
    seeds = int(curve["seeds"].max()) if len(curve) else 0
    return styled(rows, f"{task_name(task)} with more steps: test accuracy (%) after every epoch of the longer runs, "
                        f"mean over {seeds} seeds (lowest to highest of the seeds); chance {100 * chance:.1f}%; book preset, "
                        "the learning rate decays over the whole longer run").set_table_styles(SMALL, overwrite=False)


def _pair(pairs: list, candidate: str, task: str):
    for p in pairs:
        fields = p.longer.comparison.candidate.fields
        if fields.get("activation") == candidate and fields.get("dataset") == task:
            return p
    return None


def pair_values(pairs: list, candidate: str, task: str) -> dict[str, str]:
    """One comparison of :func:`long_pairs` (``candidate`` against softmax on ``task``) at both
    budgets: its difference (``short_diff``, ``long_diff``), the two arms' means (``short_candidate``,
    ``short_softmax``, ``long_candidate``, ``long_softmax``), the register's result on the longer runs
    (``result``), what that does to the gap (``change``: holds, closes, ...), the task's chance
    level and how many times the book's steps the longer runs train (``factor``)."""
    from ..claims.budget import change
    from ..claims.report import estimate_cell

    keys = ("short_diff", "short_candidate", "short_softmax", "long_diff", "long_candidate", "long_softmax", "result",
            "change")
    task_values = {"chance": pct(book_chance((task,))[task]), "factor": long_factor(task)}
    p = _pair(pairs, candidate, task)
    if p is None or p.longer.n < 2 or p.shorter.n < 2:
        return {**task_values, **{k: "not stored" for k in keys}}
    return {**task_values, "short_diff": estimate_cell(p.shorter), "short_candidate": f"{p.shorter.candidate_mean:.1f}%",
            "short_softmax": f"{p.shorter.baseline_mean:.1f}%", "long_diff": estimate_cell(p.longer),
            "long_candidate": f"{p.longer.candidate_mean:.1f}%", "long_softmax": f"{p.longer.baseline_mean:.1f}%",
            "result": p.longer.result + p.longer.qualifier, "change": change(p)}


def catch_up_values(curve: pd.DataFrame, task: str = "listops") -> dict[str, str]:
    """What the longer runs' curves (:func:`long_curve`) say of the cube's gap on ``task``: the
    task's chance level and the book's steps on it; the first probe (its step, softmax's and the
    cube's mean accuracy); the first step from which the cube's mean stays within the margin of
    softmax's (``caught_up``); the last step; and how many seeds of x^3/14 end within the chance
    band of chance (``fixed_at_chance`` of ``fixed_seeds``)."""
    chance = book_chance((task,))[task]
    out = {"chance": pct(chance), "book_steps": f"{steps_of(grids.lra('book', seeds=[0], tasks=(task,))[0]):,}"}
    keys = ("long_steps", "first_step", "first_softmax", "first_cube", "caught_up", "fixed_at_chance", "fixed_seeds")
    by = {v: c.set_index("step") for v, c in curve.groupby("variant")} if len(curve) else {}
    if SOFTMAX not in by or VALID not in by:
        return {**out, **{k: "not stored" for k in keys}}
    steps = sorted(by[SOFTMAX].index)
    gap = [abs(by[SOFTMAX].loc[s, "mean"] - by[VALID].loc[s, "mean"]) * 100 for s in steps]
    caught = next((s for i, s in enumerate(steps) if all(g <= margin() for g in gap[i:])), None)
    last = by[FIXED].loc[steps[-1], "values"] if FIXED in by else ()
    band = chance_band() / 100
    out.update(long_steps=f"{steps[-1]:,}", first_step=f"{steps[0]:,}",
               first_softmax=pct(by[SOFTMAX].loc[steps[0], "mean"]), first_cube=pct(by[VALID].loc[steps[0], "mean"]),
               caught_up=f"step {caught:,}" if caught is not None else "no step of the longer runs",
               fixed_at_chance=str(sum(abs(v - chance) <= band for v in last)), fixed_seeds=str(len(last)))
    return out
