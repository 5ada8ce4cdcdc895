"""What every section of chapter 05 (the Long Range Arena) shares: the ``lra`` grid's runs as
the page reads them, the names a reader knows the tasks and variants by, and the helpers of the
page's tables and figures.

The statistics are :mod:`polyattn.analysis.lra`'s and the verdicts the claim register's; each
section of the page loads its runs with one call and shows what its module returns:

    runs = load(preset, seeds, device, recompute)    # the grid's records, chance levels, learned tasks
    diffs = differences(runs)                        # each variant minus softmax, paired by seed
    registered = registered_rows(claim, preset)      # the register's rows (book preset)
    comparison_cells(diff, registered, variant, informative)   # a row's cells in a table
    compact(table); not_run_note(runs); variant_lines(ax, ...); shared_legend(fig, axes)

:func:`load` keeps what it reads for the session, so that each section of the page asks for its
runs again instead of reading another section's variables.

The sections' tables, figures and values: :mod:`polyattn.studies.lra.setup` (how the comparisons
are judged, what the harness ran, the grid and its data), :mod:`polyattn.studies.lra.learned` (did
softmax learn each task?), :mod:`polyattn.studies.lra.pathfinder` (Pathfinder's budget check),
:mod:`polyattn.studies.lra.accuracy` (accuracy per task and variant),
:mod:`polyattn.studies.lra.padding` (what N is under padding), :mod:`polyattn.studies.lra.curves`
(learning curves), :mod:`polyattn.studies.lra.lengths` (accuracy against length),
:mod:`polyattn.studies.lra.time` (training time) and :mod:`polyattn.studies.lra.long` (with more
steps).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import pandas as pd

from ... import analysis
from ...analysis import lra as lra_analysis
from ...claims import claim
from ...claims.report import comparison_rows
from ...claims.scope import DATA_NAMES
from ...display import name, typographic
from ...experiments import lra as grids
from ...labels import LRA_TASKS, LRA_VARIANTS
from ...pages.shown import compact  # noqa: F401  (chapter 05 reads it here)
from ...presets import prologue
from ...runs import load_or_run_all, stored
from ...tasks import get_task

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


def task_name(task: str) -> str:
    """A task as the reader knows it: ``listops`` -> ListOps."""
    return DATA_NAMES.get(task, task)


def names(tasks) -> str:
    """Task names joined for a sentence ("ListOps, Text and Retrieval"); "none" when there are none."""
    return listed([task_name(t) for t in tasks])


def listed(items: list) -> str:
    """Words joined for a sentence ("a, b and c"); "none" when there are none."""
    if not items:
        return "none"
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def variant_name(label: str) -> str:
    """A variant as the reader knows it: the activation's name, and which N when it has two readings."""
    spec, mode = next((s, m) for lbl, s, m in LRA_VARIANTS if lbl == label)
    two = sum(s == spec for _, s, _ in LRA_VARIANTS) > 1
    return name(spec) + (f", N {'padded' if mode == 'padded' else 'valid'}" if two else "")


def margin() -> float:
    """The equivalence margin (accuracy points) the register fixed for the chapter's claims."""
    return float(claim("lra_fixed_scale").margin)


def chance_band() -> float:
    """The band (points) around a task's chance level within which the register counts a run as
    not having learned."""
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


def not_run_note(runs: "Runs"):
    """What a table shows where the preset has no runs: the prologue's note."""
    from IPython.display import Markdown

    return Markdown(runs.not_run)


def interval_text(mean: float, low: float, high: float) -> str:
    """"31.3 [30.8, 31.9]" from fractions; the mean alone when the interval is missing."""
    if low != low or high != high:
        return f"{100 * mean:.1f}"
    return f"{100 * mean:.1f} [{100 * low:.1f}, {100 * high:.1f}]"


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


# --- the comparisons in the page's tables --------------------------------------------------------


def registered_rows(delivered, preset: str) -> dict:
    """Task -> the row (:func:`polyattn.claims.report.comparison_rows`) of a delivered claim's
    comparison on that task; none at a preset other than the book's, whose records the register reads."""
    if preset != "book":
        return {}
    v = delivered.verdict
    return {r.comparison.id: row for r, row in zip(v.comparisons, comparison_rows(v))}


def differences(runs: Runs, baseline: str = SOFTMAX, variants=None, tasks=None) -> pd.DataFrame:
    """Each variant minus ``baseline`` with the same seed, per task (paired t interval, Holm over the
    table, TOST against the margin) with its verdict form."""
    if not runs.trains:
        return pd.DataFrame()
    final = runs.final if tasks is None else runs.final[runs.final["lra_task"].isin(tasks)]
    diffs = lra_analysis.variant_difference(final, baseline, compare=variants, margin=margin())
    return analysis.verdict_frame(diffs)


def _p(v) -> str:
    return "" if v != v else f"{v:.2g}"


def _own_row(d, informative: bool) -> dict:
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


def comparison_cells(d, registered: dict, claimed: str, informative: bool) -> dict:
    """The cells of a row ``d`` of :func:`differences` in a table (difference [95% CI], Holm p, TOST p,
    verdict): the register's, marked, where ``d`` compares the ``claimed`` variant on a task of
    ``registered`` (:func:`registered_rows`); the page's own otherwise, the verdict with the MDE when
    inconclusive and noted where softmax did not learn the task (``informative`` false)."""
    t, v = d["lra_task"], d["variant"]
    return _registered_row(registered[t]) if v == claimed and t in registered else _own_row(d, informative)


# --- the figures' lines --------------------------------------------------------------------------


def variant_lines(ax, frame: pd.DataFrame, x: str, y: str, scale: float = 1.0):
    """One line per variant of ``frame`` (``y`` times ``scale`` against ``x``), dotted for the padded
    reading of N."""
    from ... import plotting

    for label, spec, mode in LRA_VARIANTS:
        c = frame[frame["variant"] == label]
        if c.empty:
            continue
        ax.plot(c[x], scale * c[y], marker="o", ms=3, color=plotting.activation_color(spec),
                ls=":" if mode == "padded" else "-", label=variant_name(label))


def shared_legend(fig, axes):
    """The legend of the first panel, once, below all the panels."""
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=FONT, frameon=False)
