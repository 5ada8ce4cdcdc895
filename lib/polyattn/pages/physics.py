"""Chapter 06's tables, figures and glued values (PINNsFormer with polynomial attention).

The statistics are :mod:`polyattn.analysis.physics`'s, the verdicts the claim register's and the
measured claim's (:mod:`polyattn.measures.physics`); this module loads the runs a section needs
and shapes what the page shows of them:

    intro_values()                                            # the five tokens and the two scales
    runs = load(preset, seeds, device, recompute)             # the ``physics`` grid's records
    problem_tables(runs); solution_figure(runs); problem_values(runs)
    grid_values(runs); setting_values(); published_speed_values()
    fold_setting(runs)    # variants_table(runs), setting_tables(), book_notes(), probes_table(), ...
    judging_values(); error_table(runs); error_values(runs)
    comparison_table(runs, deliver("physics_poly"), diffs); comparison_values(runs, diffs)
    control_values(deliver("physics_poly"))                   # the positive control, in words
    budget = budget_runs(); budget_table(budget); budget_values(budget); budget_figure(budget)
    claim_comparison(deliver("physics_long"), "convection")
    field_figure(runs); field_values(runs); curve_figure(runs)
    attention_table(runs); attention_values(runs)
    scope(runs); seed_values(deliver("seed_sensitivity").verdict.numbers)
    glue_values("ch06", values); fold("ch06_fold_...", table)      # glue for the text and the folds

:func:`load` keeps what it reads for the session, so that each section of the page asks for its
runs again instead of reading another section's variables.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from ..analysis import physics as pa
from ..experiments import physics as grids
from ..labels import PDES, PHYSICS_VARIANTS, PINN_LABEL, PINNSFORMER_VARIANTS
from ..measures.physics import GREEK, physics_scope
from .controls import control_values  # noqa: F401  (the positive control, in words, for the page)
from .shown import fold, glue_values  # noqa: F401  (glue for the page's text and its folded parts)

SOFTMAX, POLY = "softmax", "x^3/sqrt(N)"
#: What the paper preset does not run.
PAPER_NOTE = "the published configuration is listed below for GPUs, not trained"
#: Labels of the figures (points): at least the book's minimum.
FONT = 9
#: The variants whose loss curves the page draws (the claim's two, the paper's fixed scale, the
#: PINN): more lines than these make a panel unreadable; every variant is in the tables.
CURVE_VARIANTS = (SOFTMAX, POLY, "x^3/14", PINN_LABEL)
#: Marks a comparison of a registered claim in the page's own tables.
MARK = " ‡"
REGISTERED_NOTE = ("‡ a comparison of the registered claim (x³/√N, and the positive control with attention ablated): "
                   "its difference, p-values and result are the claim register's")
#: The equations, conditions and closed-form solutions, as the page writes them.
EQUATIONS = {
    "convection": ("u_t + β u_x = 0", "u(x, 0) = sin x", "periodic in x", "sin(x − βt)"),
    "reaction": ("u_t − ρ u (1 − u) = 0", "u(x, 0) = exp(−(x − π)² / (2 (π/4)²))", "periodic in x",
                 "h e^{ρt} / (h e^{ρt} + 1 − h), h = u(x, 0)"),
    "wave": ("u_tt − c² u_xx = 0", "u(x, 0) = sin πx + ½ sin 3πx, u_t(x, 0) = 0", "u(0, t) = u(1, t) = 0",
             "sin πx cos cπt + ½ sin 3πx cos 3cπt"),
}
#: Points per side of the grid on which the closed-form solutions are drawn.
REFERENCE_POINTS = 101
#: A smaller font for tables with many columns.
SMALL = [{"selector": "th, td", "props": "font-size: 0.85em"}]


def variant_name(label: str) -> str:
    """A variant as the reader knows it: x³/√N for ``x^3/sqrt(N)``; the PINN as it is."""
    from ..display import name

    return name(dict(PINNSFORMER_VARIANTS)[label]) if label in dict(PINNSFORMER_VARIANTS) else label


def parameters_text(spec: str) -> str:
    """A problem's parameters in words: ``convection:beta=30`` -> "β = 30"."""
    from ..data.pde import get_pde

    return ", ".join(f"{GREEK.get(k, k)} = {v:g}" for k, v in get_pde(spec).params.items())


def _small(table):
    return table.set_table_styles(SMALL, overwrite=False)


def _nowrap(table, *columns):
    """``table`` with ``columns`` kept on one line (an interval split over two lines doubles a row)."""
    return table.set_properties(subset=list(columns), **{"white-space": "nowrap"})


def _range(values, fmt: str = ".3f") -> str:
    """"0.014 [0.005, 0.031]": the median and the range of ``values``; "–" when there are none."""
    v = np.asarray([x for x in values if x == x], dtype=float)
    if not len(v):
        return "–"
    if len(v) == 1:
        return format(float(v[0]), fmt)
    return f"{format(float(np.median(v)), fmt)} [{format(float(v.min()), fmt)}, {format(float(v.max()), fmt)}]"


def _and(items) -> str:
    """"a", "a and b", "a, b and c"."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# --- the runs ----------------------------------------------------------------------------------


@dataclass
class Runs:
    """The ``physics`` grid's runs at a preset, as the page reads them."""
    preset: str
    trains: bool                 # whether the page has runs (book: all stored; smoke: trained)
    not_run: str                 # what the page says where it has none
    configs: list
    records: list = field(default_factory=list)
    final: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def grid_preset(self) -> str:
        """The preset whose problems and settings the page describes (the book's under paper)."""
        return self.preset if self.trains or self.preset == "book" else "book"

    @property
    def pdes(self) -> list:
        return [p for p in PDES if any(grids.pde_of(c) == p for c in self.configs)]

    def seeds(self, label: str) -> int:
        return len({c.seed for c in self.configs if grids.variant_label(c) == label})

    def caption(self, what: str) -> str:
        """``what`` with the setting of the runs, the preset among it (:func:`scope`)."""
        return f"{what}; {scope(self)} (the setting tables give each departure from the published setting)"

    @property
    def table(self) -> pd.DataFrame:
        """:func:`polyattn.analysis.physics.error_table` of the runs."""
        return pa.error_table(self.final) if len(self.final) else pd.DataFrame()


def load(preset: str, seeds=None, device: str = "cpu", recompute: bool = False) -> Runs:
    """The ``physics`` grid at ``preset``: the stored records at the book preset (the page waits
    until all are stored rather than start hours of training), the grid trained under smoke
    (seconds), none under paper.  Kept for the session."""
    return _load(preset, tuple(seeds) if seeds else None, device, bool(recompute))


@lru_cache(maxsize=4)
def _load(preset: str, seeds, device: str, recompute: bool) -> Runs:
    from ..presets import prologue
    from ..runs import load_or_run_all, stored

    page = prologue(preset, device, paper_note=PAPER_NOTE)
    configs = page.on_device(grids.physics(preset if page.trains else "book", list(seeds) if seeds else None))
    runs = Runs(preset, page.trains, page.not_run, configs)
    if page.trains and preset == "book" and not recompute:
        found = sum(stored(c) is not None for c in configs)
        if found < len(configs):
            runs.trains = False
            runs.not_run = (f"{found} of {len(configs)} book runs of the `physics` grid are stored; this page shows "
                            "its results once all are (`python -m polyattn grid physics --preset book` computes the "
                            "rest)")
    if runs.trains:
        runs.records = load_or_run_all(configs, recompute=recompute, desc="physics", progress=False)
        runs.final = pa.physics_final(runs.records)
    return runs


def _not_run(runs: Runs):
    from IPython.display import Markdown

    return Markdown(runs.not_run)


# --- the introduction and the problems -----------------------------------------------------------


def intro_values() -> dict[str, str]:
    """The tokens per point and their time step, how much smaller 1/14 is than 1/sqrt(N) (on the
    weights, and on the scores), and what users of the published code report about seeds."""
    from ..models.pinnsformer import SEQ_DT, SEQ_LEN

    ratio = 14 / math.sqrt(SEQ_LEN)
    return {"k": str(SEQ_LEN), "dt": f"{SEQ_DT:g}", "scale_ratio": f"{ratio:.2f}",
            "score_ratio": f"{ratio ** (1 / 3):.2f}", "seed_report": grids.SEED_REPORT}


def problem_specs(runs: Runs) -> dict[str, str]:
    """PDE -> the problem the page's runs solve (``convection:beta=30`` at the book preset)."""
    return {p: grids.pde_spec(runs.grid_preset, p) for p in PDES}


def problem_tables(runs: Runs) -> list:
    """Two tables, so that neither is wider than the page: the equations with their parameters
    and domains, then their conditions and closed-form solutions."""
    from ..book.deliver import styled
    from ..data.pde import get_pde

    first, second = [], []
    for name, spec in problem_specs(runs).items():
        pde = get_pde(spec)
        eq, ic, bc, sol = EQUATIONS[name]
        first.append({"PDE": name, "equation": eq, "parameters": parameters_text(spec),
                      "domain": f"x in [{pde.x_range[0]:g}, {pde.x_range[1]:.3g}], "
                                f"t in [{pde.t_range[0]:g}, {pde.t_range[1]:g}]"})
        second.append({"PDE": name, "initial condition": ic, "boundary": bc, "solution": sol})
    return [styled(first, f"The three problems (preset {runs.grid_preset})"),
            _small(styled(second, "Their initial and boundary conditions, and the closed-form solutions"))]


def reference(spec: str, n: int = REFERENCE_POINTS):
    """The closed-form solution of ``spec`` on an ``n`` x ``n`` grid (rows are times), and the PDE."""
    import torch

    from ..data.pde import get_pde

    pde = get_pde(spec)
    g = pde.grid(n, n, dtype=torch.float64)
    return g.image(pde.solution(g.x, g.t)).numpy(), pde


def _field(ax, img, pde, title, **kw):
    # rows of img are times: transposed, t runs left to right and x bottom to top
    im = ax.imshow(img.T, origin="lower", aspect="auto", extent=(*pde.t_range, *pde.x_range), **kw)
    ax.grid(False)
    ax.set_title(title, fontsize=FONT)
    return im


def solution_figure(runs: Runs):
    """The closed-form solution of each problem over (t, x)."""
    import matplotlib.pyplot as plt

    from .. import plotting

    fig, axes = plt.subplots(1, len(PDES), figsize=(12, 3.2))
    for ax, (name, spec) in zip(axes, problem_specs(runs).items()):
        img, pde = reference(spec)
        im = _field(ax, img, pde, f"{name} ({parameters_text(spec)})", cmap="RdBu_r")
        ax.set_xlabel("t")
        ax.set_ylabel("x")
        fig.colorbar(im, ax=ax, shrink=0.85)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    plotting.stamp(fig, runs.preset, "closed-form solutions")
    return fig


def problem_values(runs: Runs) -> dict[str, str]:
    """The convection speed of the page's runs and the published one, whether they are the same,
    and how often the solution crosses the domain in t in [0, 1]."""
    from ..data.pde import get_pde

    conv, published = get_pde(problem_specs(runs)["convection"]), get_pde("convection")
    same = conv.params == published.params
    return {"beta": f"{conv.params['beta']:g}", "beta_published": f"{published.params['beta']:g}",
            "crossings": f"{conv.params['beta'] / (conv.x_range[1] - conv.x_range[0]):.1f}",
            "beta_note": "the published speed" if same else "not the published speed: the setting below says why"}


# --- what runs ------------------------------------------------------------------------------------


def variants_table(runs: Runs):
    """The variants as a Markdown table (so that MyST renders their weights' formulas): the
    attention weights with N = 5, the seeds, and whether the weights are non-negative and rows sum
    to one."""
    from IPython.display import Markdown

    from .. import activations
    from ..display import markdown_table
    from ..formulas import math_formula

    rows = []
    for label, spec in PINNSFORMER_VARIANTS:
        act = activations.get(spec)
        rows.append([variant_name(label), math_formula(act.description), runs.seeds(label),
                     "yes" if act.nonnegative else "no", "yes" if act.rows_sum_to_one else "no"])
    rows.append([PINN_LABEL, "no attention", runs.seeds(PINN_LABEL), "–", "–"])
    return Markdown("**The variants**: PINNsFormer with each attention activation, and the PINN without attention"
                    "\n\n" + markdown_table(["Variant", "Weights", "Seeds", "Non-negative", "Rows sum to one"], rows))


def grid_values(runs: Runs) -> dict[str, str]:
    """The runs of the grid, the seeds of the claim's variants and of the others, the test grid."""
    test = runs.configs[0].options["test_grid"] if runs.configs else grids.SCALES["book"]["test_grid"]
    return {"n_runs": str(len(runs.configs)), "seeds_main": str(runs.seeds(SOFTMAX)),
            "seeds_rest": str(runs.seeds("x^3/14")), "test_grid": " × ".join(map(str, test))}


def setting_values() -> dict[str, str]:
    """What the book preset changes from the published setting (the paper preset), per preset
    (``_book``, ``_paper``): PINNsFormer's feed-forward and output widths (``ff``, ``mlp``), the
    PINN's width (``pinn``), both collocation grids (``grid``, ``pinn_grid``), the L-BFGS steps
    on convection, reaction and the wave (``steps``) and how often the test error is computed
    (``eval``)."""
    from ..models.pinn import PINN_SIZES
    from ..models.pinnsformer import PINNSFORMER_SIZES

    out = {}
    for key in ("book", "paper"):
        s = grids.SCALES[key]
        former, pinn = PINNSFORMER_SIZES[s["model"]], PINN_SIZES[s["pinn"].removeprefix("pinn_")]
        out.update({f"ff_{key}": str(former["d_ff"]), f"mlp_{key}": str(former["d_hidden"]),
                    f"pinn_{key}": str(pinn["width"]), f"grid_{key}": " × ".join(map(str, s["grid"])),
                    f"pinn_grid_{key}": " × ".join(map(str, s["pinn_grid"])),
                    f"steps_{key}": _and(f"{s['steps'][p]:,}" for p in PDES if p in s["steps"]),
                    f"eval_{key}": str(s["eval_every"])})
    return out


def setting_tables() -> list:
    """The models under the book and paper presets, then the problems and their optimisation."""
    from ..book.deliver import styled

    setting = pd.DataFrame(grids.setting_table())
    models = setting[["preset", "PINNsFormer", "PINNsFormer grid", "PINN", "PINN grid"]].drop_duplicates()
    problems = [{"PDE": r["PDE"], "preset": r["preset"], "parameters": parameters_text(r["problem"]),
                 "L-BFGS steps × iterations": r["L-BFGS steps x iterations"].replace(" x ", " × "),
                 "test grid": r["test grid"].replace(" x ", " × ")} for _, r in setting.iterrows()]
    return [_small(styled(models.to_dict("records"), "The models under each preset")),
            styled(problems, "The problems and their optimisation under each preset")]


def book_notes():
    """How the book preset departs from the published setting, and why, as a Markdown list."""
    from IPython.display import Markdown

    return Markdown("**How the book preset departs from the published setting, and why:**\n\n"
                    + "\n".join(f"- {note}" for note in grids.BOOK_NOTES.values()))


def probes_table():
    """The probes that sized the book preset: seconds (CPU for the short probes, wall for the long
    ones, each probe has one of the two) and the test rMAE reached."""
    from ..book.deliver import styled

    rows = [{"PDE": r["PDE"].replace("beta", "β"),
             "Model": ", ".join(variant_name(p) for p in r["model"].replace("_", " ").split(", ")),
             "Grid": r["grid"].replace(" x ", " × "), "Steps × iterations": r["steps x iterations"].replace(" x ", " × "),
             "Seconds": f"{r['CPU s']:.3g} CPU" if r.get("CPU s") is not None else f"{r['wall s']:,} wall",
             "rMAE": f"{r['rMAE']:.3g}"} for r in grids.SIZING]
    return _small(styled(rows, "The probes that sized the book preset (one thread of a shared machine: upper bounds)"))


#: The folded parts of the section on what runs, in the order the page shows them.
SETTING_FOLDS = ("variants", "models", "problems", "notes", "probes", "pub_speed")


def fold_setting(runs: Runs, prefix: str = "ch06_fold") -> list[str]:
    """Glue the configuration detail the page folds (:data:`SETTING_FOLDS`, as ``<prefix>_<name>``):
    the variants' formulas, the two presets' models and problems, the reasons for each reduction,
    the probes that sized the book preset and the first runs at the published speed.  Returns the
    names glued."""
    models, problems = setting_tables()
    shown = dict(zip(SETTING_FOLDS, (variants_table(runs), models, problems, book_notes(), probes_table(),
                                     published_speed_table())))
    for name, value in shown.items():
        fold(f"{prefix}_{name}", value)
    return [f"{prefix}_{name}" for name in shown]


def _published_speed_final(root: Optional[Path] = None) -> pd.DataFrame:
    from ..runs import stored

    records = [r for r in (stored(c, root) for c in grids.published_speed_runs()) if r is not None]
    if not records:
        return pd.DataFrame()
    final = pa.physics_final(records)
    final["train_loss"] = [r["metrics"][-1]["train_loss"] for r in records]
    return final


def published_speed_table(root: Optional[Path] = None):
    """The first book runs, on convection at the published speed: final rMAE and training loss."""
    from IPython.display import Markdown

    from ..book.deliver import styled

    final = _published_speed_final(root)
    if final.empty:
        return Markdown("Their records are not in this checkout.")
    rows = [{"Variant": variant_name(r["variant"]), "Seed": int(r["seed"]), "Final rMAE": f"{r['rMAE']:.3g}",
             "Final training loss": f"{r['train_loss']:.3g}", "Above the failure threshold": "yes" if r["failed"] else "no"}
            for _, r in final.iterrows()]
    return styled(rows, f"Convection at the published speed, {grids.PUBLISHED_SPEED_STEPS} L-BFGS steps, book preset "
                        f"otherwise; failure threshold: rMAE {pa.FAIL_RMAE:g}")


def published_speed_values(root: Optional[Path] = None) -> dict[str, str]:
    """The steps of the first runs, softmax's and the PINN's final rMAE, and how many failed."""
    final = _published_speed_final(root).reindex(columns=["variant", "rMAE", "failed"])
    of = {r["variant"]: f"{r['rMAE']:.3f}" for _, r in final.iterrows()}
    return {"steps": str(grids.PUBLISHED_SPEED_STEPS), "softmax": of.get(SOFTMAX, "not stored"),
            "pinn": of.get(PINN_LABEL, "not stored"),
            "failed": f"{int(final['failed'].sum())} of {len(final)}"}


# --- how the errors are judged, and the errors ---------------------------------------------------


def margin() -> float:
    """The equivalence margin (log10 rMAE) the register fixed for the chapter's claims."""
    from ..claims import claim

    return float(claim("physics_poly").margin)


def judging_values() -> dict[str, str]:
    """The failure threshold, the margin (log10 and as a factor), the test level and power, the
    spread factor, and the published errors the threshold is set against."""
    from .. import analysis

    pub = grids.PUBLISHED_ERRORS
    return {"fail": f"{pa.FAIL_RMAE:g}", "margin": f"{margin():.3f}", "margin_factor": f"{10 ** margin():.3g}",
            "alpha": f"{analysis.ALPHA:g}", "power": f"{analysis.POWER:g}", "spread": f"{pa.SPREAD_FACTOR:g}",
            "pub_former": " and ".join(f"{pub[p]['PINNsFormer'][0]:.3f}" for p in ("convection", "reaction")),
            "pub_pinn": " and ".join(f"{pub[p]['PINN'][0]:.2f}" for p in ("convection", "reaction")),
            "pub_wave": f"{pub['wave']['PINNsFormer'][0]:.2f}"}


def error_table(runs: Runs):
    """Per problem and variant: the median rMAE over the seeds with its quartiles, the best and
    worst seed, the failed seeds with the exact interval of their share, and whether the library's
    rule calls the variant seed-sensitive there."""
    if not runs.trains:
        return _not_run(runs)
    from ..book.deliver import styled
    from .critiques import first_only

    def cell(r):
        if r["n_seeds"] == r["n_diverged"]:
            return "diverged"
        q = f" [{r['q25']:.3f}, {r['q75']:.3f}]" if r["n_seeds"] - r["n_diverged"] > 1 else ""
        return f"{r['median']:.3f}{q}"

    table = runs.table
    rows = [{"PDE": pde, "Variant": variant_name(r["variant"]), "Median rMAE [quartiles]": cell(r),
             "Best / worst seed": f"{r['best']:.3f} / {r['worst']:.3f}" if r["best"] == r["best"] else "–",
             "Failed seeds (95% CI of the share)": (f"{r['n_failed']} of {r['n_seeds']} ({r['fail_ci_low']:.2f}–"
                                                    f"{r['fail_ci_high']:.2f})"
                                                    + (f", {r['n_diverged']} diverged" if r["n_diverged"] else "")),
             "Seed-sensitive": "yes" if r["seed_sensitive"] else "no"}
            for pde, (_, r) in zip(first_only(table["pde"]), table.iterrows())]
    return _small(styled(rows, runs.caption(f"Final test rMAE per problem and variant over the seeds; a seed fails "
                                            f"above rMAE {pa.FAIL_RMAE:g}")))


def error_values(runs: Runs) -> dict[str, str]:
    """What the runs cost, in one line, and per problem the failed seeds of softmax, x³/√N and the
    PINN (``failed_<pde>_<softmax|poly|pinn>``: "0 of 5")."""
    from .. import analysis

    table = runs.table.set_index(["pde", "variant"]) if runs.trains else pd.DataFrame()
    out = {"budget": analysis.budget_text(analysis.compute_budget(runs.records)) if runs.trains else runs.not_run}
    for p in PDES:
        for label, key in ((SOFTMAX, "softmax"), (POLY, "poly"), (PINN_LABEL, "pinn")):
            out[f"failed_{p}_{key}"] = (f"{table.loc[(p, label), 'n_failed']} of {table.loc[(p, label), 'n_seeds']}"
                                        if (p, label) in table.index else runs.not_run)
    return out


# --- paired comparisons with softmax ---------------------------------------------------------------


def differences(runs: Runs) -> pd.DataFrame:
    """Every variant minus softmax PINNsFormer with the same seed, per problem, in log10 rMAE
    (:func:`polyattn.analysis.physics.compare_to_softmax`); empty without runs."""
    if not runs.trains:
        return pd.DataFrame()
    return pa.compare_to_softmax(runs.final, margin=margin())


def registered_rows(poly_claim, preset: str) -> dict:
    """Comparison id -> the row of the registered claim's comparison there (``convection``: x³/√N
    minus softmax; ``ablated_convection``: the positive control), with its ``mean``; empty unless
    the page reads the book preset (the register reads the book's records)."""
    if poly_claim is None or preset != "book":
        return {}
    from ..claims.report import comparison_rows

    v = poly_claim.verdict
    return {r.comparison.id: {**row, "mean": getattr(r, "mean", math.nan)}
            for r, row in zip(v.comparisons, comparison_rows(v))}


#: The positive control's variant, as the page names it.
ABLATED = "attention ablated (uniform 1/N)"
#: The register's columns the page's table shows for a registered comparison.
REGISTER_COLUMNS = ("Holm p", "TOST p", "Result")


def comparison_table(runs: Runs, poly_claim=None, diffs: Optional[pd.DataFrame] = None):
    """One table for the three problems: each variant minus softmax with the same seed, in log10
    rMAE with its 95% interval and as a ratio of errors (description), except the registered
    claim's rows at the book preset: x³/√N and the positive control (attention ablated), with the
    register's difference, Holm and TOST p-values and result, marked ‡."""
    if not runs.trains:
        return _not_run(runs)
    from ..analysis.tables import interval_cell, number_cell
    from ..book.deliver import styled
    from .critiques import first_only

    diffs = differences(runs) if diffs is None else diffs
    reg = registered_rows(poly_claim, runs.preset)
    solved = pa.softmax_solved(runs.final)
    blank = dict.fromkeys(REGISTER_COLUMNS, "") if reg else {}

    def registered(row, cells):
        runs_stored = not str(cells["Pairs"]).startswith("0 of")
        diff = cells["Difference [95% CI]"].removesuffix(" (log10)")
        row.update({"Δ log10 rMAE [95% CI]": diff + (MARK if runs_stored else ""),
                    **{c: cells[c] if runs_stored else "–" for c in REGISTER_COLUMNS}})
        return row

    rows, names = [], []
    for p in dict.fromkeys(diffs["pde"]):
        name = p if solved.get(p) else f"{p} (softmax failed)"
        for _, r in diffs[diffs["pde"] == p].iterrows():
            row = {"Variant": variant_name(r["variant"]), "Seed pairs": int(r["n_pairs"]),
                   "Δ log10 rMAE [95% CI]": interval_cell(r["mean_diff"], r["ci_low"], r["ci_high"]),
                   "Error ratio": number_cell(r["ratio"]), **blank}
            cells = reg.get(p) if r["variant"] == POLY else None
            rows.append(registered(row, cells) if cells is not None else row)
            names.append(name)
        cells = reg.get(f"ablated_{p}")
        if cells is not None:
            mean = cells.get("mean", math.nan)
            rows.append(registered({"Variant": ABLATED, "Seed pairs": cells["Pairs"],
                                    "Error ratio": number_cell(10 ** mean) if mean == mean else "–"}, cells))
            names.append(name)
    rows = [{"PDE": pde, **row} for pde, row in zip(first_only(names), rows)]
    return _nowrap(_small(styled(rows, runs.caption("Each variant minus softmax PINNsFormer with the same seed, log10 of the "
                                            "final test rMAE (negative: smaller error); error ratio: 10 to that mean. "
                                            "Description, not a test" + (f"; {REGISTERED_NOTE}" if reg else "")))),
                   "Δ log10 rMAE [95% CI]")


def comparison_values(runs: Runs, diffs: Optional[pd.DataFrame] = None) -> dict[str, str]:
    """The error ratio of x³/√N to softmax on each problem (``ratio_<pde>``)."""
    if not runs.trains:
        return {f"ratio_{p}": runs.not_run for p in PDES}
    diffs = differences(runs) if diffs is None else diffs
    poly = diffs[diffs["variant"] == POLY].set_index("pde")
    return {f"ratio_{p}": (f"{poly.loc[p, 'ratio']:.3g}" if p in poly.index else "not run") for p in PDES}


# --- predicted fields and loss curves ----------------------------------------------------------------


def field_figure(runs: Runs, shown=(SOFTMAX, POLY)):
    """Per problem: the reference field and the absolute error of the median seed of each variant
    of ``shown``, the errors on one logarithmic colour scale (a linear one leaves an error of 1%
    black beside one of 100%)."""
    if not runs.trains:
        return None
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    from .. import plotting

    by_run = {f"{r['config_hash']}-seed{r['seed']}": r for r in runs.records}
    picks = pa.median_runs(runs.final)
    specs = problem_specs(runs)
    panels = []       # (row, reference, pde, [(title, |error|)])
    for name in runs.pdes:
        sub = picks[picks["pde"] == name].set_index("variant")
        errors, ref, pde = [], None, None
        for label in shown:
            if label not in sub.index or by_run[sub.loc[label, "run"]]["status"] != "ok":
                errors.append((f"{variant_name(label)}: diverged", None))
                continue
            pred = pa.prediction_image(by_run[sub.loc[label, "run"]])
            ref, pde = reference(specs[name], pred.shape[0])
            errors.append((f"{variant_name(label)}: |error|, rMAE {sub.loc[label, 'rMAE']:.3g}", np.abs(pred - ref)))
        panels.append((name, ref, pde, errors))
    errs = [e for _, _, _, es in panels for _, e in es if e is not None]
    top = max((float(e.max()) for e in errs), default=1.0)
    norm = LogNorm(vmin=top * 1e-4, vmax=top)
    fig, axes = plt.subplots(len(panels), 1 + len(shown), figsize=(3.6 * (1 + len(shown)), 2.5 * len(panels)),
                             squeeze=False)
    image = None
    for row, (name, ref, pde, errors) in zip(axes, panels):
        for ax in row:
            ax.set_xticks([])
            ax.set_yticks([])
        if ref is None:
            for ax in row:
                ax.axis("off")
            row[0].set_title(f"{name}: every shown variant diverged", fontsize=FONT)
            continue
        im = _field(row[0], ref, pde, f"{name}: reference", cmap="RdBu_r")
        fig.colorbar(im, ax=row[0], shrink=0.8)
        for ax, (title, err) in zip(row[1:], errors):
            if err is None:
                ax.axis("off")
                ax.set_title(title, fontsize=FONT)
                continue
            image = _field(ax, np.clip(err, norm.vmin, None), pde, title, cmap="magma", norm=norm)
    if image is not None:
        fig.colorbar(image, ax=axes[:, 1:].ravel().tolist(), shrink=0.8, label="|error| (log scale)")
    fig.suptitle("Reference and absolute error of the median seed (t left to right, x bottom to top)", fontsize=10)
    plotting.stamp(fig, runs.preset, "median seed per variant")
    return fig


def field_values(runs: Runs) -> dict[str, str]:
    """The grid on which the records keep each run's predicted field."""
    if not runs.trains:
        return {"field_grid": runs.not_run}
    kept = next((r["final"]["grid"] for r in runs.records if r["status"] == "ok"), None)
    return {"field_grid": " × ".join(map(str, kept)) if kept else "none"}


def curve_figure(runs: Runs, variants=CURVE_VARIANTS):
    """Per problem, the training loss (top) and the test rMAE (bottom) after each evaluated
    L-BFGS step, median over seeds, for ``variants``; the failure threshold dotted."""
    if not runs.trains:
        return None
    import matplotlib.pyplot as plt

    from .. import plotting

    epochs = pa.physics_epochs(runs.records)
    curves = epochs.groupby(["pde", "variant", "step"], sort=False)[["train_loss", "rMAE"]].median().reset_index()
    specs = dict(PINNSFORMER_VARIANTS)
    fig, axes = plt.subplots(2, len(runs.pdes), figsize=(4.0 * len(runs.pdes), 5.2), squeeze=False)
    for j, name in enumerate(runs.pdes):
        for label in variants:
            c = curves[(curves["pde"] == name) & (curves["variant"] == label)]
            style = dict(color=plotting.activation_color(specs[label]) if label in specs else "black", lw=1.4,
                         ls="--" if label == PINN_LABEL else "-", label=variant_name(label))
            axes[0, j].plot(c["step"], c["train_loss"], **style)
            axes[1, j].plot(c["step"], c["rMAE"], **style)
        axes[0, j].set_yscale("log")
        axes[1, j].set_yscale("log")
        axes[0, j].set_title(name, fontsize=FONT + 1)
        axes[1, j].axhline(pa.FAIL_RMAE, color="grey", ls=":", lw=1)
        axes[1, j].set_xlabel("L-BFGS step", fontsize=FONT)
    axes[0, 0].set_ylabel("training loss (median)", fontsize=FONT)
    axes[1, 0].set_ylabel("test rMAE (median)", fontsize=FONT)
    axes[0, -1].legend(fontsize=FONT)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    plotting.stamp(fig, runs.preset, "dotted: the failure threshold")
    return fig


# --- convection at two budgets ---------------------------------------------------------------------


@dataclass
class Budget:
    """Softmax and x³/√N on convection at the book's L-BFGS budget (grid ``physics``) and at the
    longer one (grid ``physics_long``): the records per grid, and one row per run in ``runs`` with
    ``grid``, ``steps`` (the run's budget), ``variant``, ``seed``, ``rMAE`` (final), ``failed``,
    ``first_below`` (the first evaluated step at which the test rMAE was at most the failure
    threshold; NaN if never) and ``cpu`` (the processor it ran on)."""
    records: dict
    runs: pd.DataFrame

    @property
    def empty(self) -> bool:
        return self.runs.empty


BUDGET_GRIDS = ("physics", "physics_long")


def budget_runs(root: Optional[Path] = None) -> Budget:
    """:class:`Budget` from the book's stored records whatever the page's preset (the register
    judges ``physics_long`` from them); kept for the session."""
    return _budget_runs(root)


@lru_cache(maxsize=2)
def _budget_runs(root: Optional[Path]) -> Budget:
    from ..measures.stored import grid_records

    cols = ["grid", "steps", "variant", "seed", "rMAE", "failed", "first_below", "cpu"]
    out, kept = [], {}
    for grid in BUDGET_GRIDS:
        records = [r for r in grid_records(grid, root).records
                   if grids.pde_of(r) == "convection" and grids.variant_label(r) in grids.LONG_VARIANTS]
        if not records:
            continue
        kept[grid] = records
        final = pa.physics_final(records)
        epochs = pa.physics_epochs(records)
        below = epochs[epochs["rMAE"] <= pa.FAIL_RMAE].groupby("run")["step"].min()
        run = {f"{r['config_hash']}-seed{r['seed']}": r for r in records}
        out += [{"grid": grid, "steps": int(run[r["run"]]["config"]["epochs"]), "variant": r["variant"],
                 "seed": int(r["seed"]), "rMAE": float(r["rMAE"]), "failed": bool(r["failed"]),
                 "first_below": float(below.get(r["run"], np.nan)),
                 "cpu": ((run[r["run"]].get("provenance") or {}).get("hardware") or {}).get("cpu", "")}
                for _, r in final.iterrows()]
    return Budget(kept, pd.DataFrame(out, columns=cols))


def _short_steps(budget: Budget) -> int:
    short = budget.runs.loc[budget.runs["grid"] == "physics", "steps"]
    return int(short.max()) if len(short) else int(grids.SCALES["book"]["steps"]["convection"])


def budget_summary(budget: Budget) -> pd.DataFrame:
    """Per grid and variant: the budget, the seeds, how many failed at the end, how many had reached
    the threshold by the book's budget, and the first step below it and the final rMAE (medians,
    ranges)."""
    cols = ["grid", "steps", "variant", "seeds", "failed", "by_short", "first_below", "rMAE"]
    if budget.empty:
        return pd.DataFrame(columns=cols)
    short = _short_steps(budget)
    rows = []
    for (grid, variant), g in budget.runs.groupby(["grid", "variant"], sort=False):
        crossed = g["first_below"].dropna()
        rows.append({"grid": grid, "steps": int(g["steps"].max()), "variant": variant, "seeds": len(g),
                     "failed": int(g["failed"].sum()), "by_short": int((crossed <= short).sum()),
                     "first_below": _range(crossed, ".0f") if len(crossed) else "never",
                     "rMAE": _range(g["rMAE"])})
    return pd.DataFrame(rows, columns=cols)


def budget_table(budget: Budget):
    """:func:`budget_summary` for people."""
    from IPython.display import Markdown

    from ..book.deliver import styled

    if budget.empty:
        return Markdown("No run of either grid is stored in this checkout.")
    short = _short_steps(budget)
    rows = [{"Variant": variant_name(r["variant"]), "L-BFGS steps": r["steps"],
             "Failed at the end": f"{r['failed']} of {r['seeds']}",
             f"Below {pa.FAIL_RMAE:g} by step {short}": f"{r['by_short']} of {r['seeds']}",
             f"First step below {pa.FAIL_RMAE:g}, median [range]": r["first_below"],
             "Final rMAE, median [range]": r["rMAE"]} for _, r in budget_summary(budget).iterrows()]
    book = grids.SCALES["book"]
    setting = (f"PINNsFormer {book['model']} on the {' × '.join(map(str, book['grid']))} grid, "
               f"{parameters_text(grids.pde_spec('book', 'convection'))}")
    return _small(styled(rows, f"Convection at the book's budget (grid physics) and at the published one (grid "
                               f"physics_long): book preset records whatever this page's preset, {setting}; a run "
                               f"fails above rMAE {pa.FAIL_RMAE:g} at its last step. Description, not a test: the "
                               "registered comparison is in the claim's table"))


def budget_values(budget: Budget) -> dict[str, str]:
    """The two budgets, per grid (``short``, ``long``) and variant (``softmax``, ``poly``): the
    failed seeds, the seeds below the threshold by the book's budget, the first step below it and
    the final rMAE (medians and ranges); and the processors each grid ran on."""
    summary = budget_summary(budget)
    out = {"short_steps": str(_short_steps(budget)), "long_steps": str(grids.LONG_STEPS["convection"]),
           "long_seeds": str(budget.runs.loc[budget.runs["grid"] == "physics_long", "seed"].nunique())}
    for grid, key in (("physics", "short"), ("physics_long", "long")):
        for label, short in ((SOFTMAX, "softmax"), (POLY, "poly")):
            r = summary[(summary["grid"] == grid) & (summary["variant"] == label)]
            if r.empty:
                out.update({f"{what}_{key}_{short}": "not stored" for what in ("failed", "by_short", "first", "rmae")})
                continue
            r = r.iloc[0]
            out.update({f"failed_{key}_{short}": f"{r['failed']} of {r['seeds']}",
                        f"by_short_{key}_{short}": f"{r['by_short']} of {r['seeds']}",
                        f"first_{key}_{short}": r["first_below"], f"rmae_{key}_{short}": r["rMAE"]})
        cpus = sorted({c for c in budget.runs.loc[budget.runs["grid"] == grid, "cpu"] if c})
        out[f"cpu_{key}"] = ", ".join(cpus) or "not recorded"
    return out


def claim_comparison(delivered, comparison_id: str) -> dict[str, str]:
    """One comparison of a delivered registered claim: its difference with its interval (log10),
    the ratio of errors it means, the seed pairs and its result."""
    from ..claims.report import comparison_rows

    v = delivered.verdict
    for r, row in zip(v.comparisons, comparison_rows(v)):
        if r.comparison.id == comparison_id:
            mean = getattr(r, "mean", float("nan"))
            return {"difference": row["Difference [95% CI]"].removesuffix(" (log10)"), "pairs": row["Pairs"],
                    "ratio": f"{10 ** mean:.2g}" if mean == mean else "–", "result": row["Result"]}
    raise ValueError(f"claim {v.claim.id!r} has no comparison {comparison_id!r}")


def budget_figure(budget: Budget):
    """Convection's test rMAE over L-BFGS steps: the book grid (median and range over seeds, one band
    per variant) and the longer grid (each seed); the book's budget dashed, the threshold dotted."""
    import matplotlib.pyplot as plt

    from .. import plotting

    if budget.empty:
        return None
    short = _short_steps(budget)
    shown = [g for g in BUDGET_GRIDS if g in budget.records]
    fig, axes = plt.subplots(1, len(shown), figsize=(5.5 * len(shown), 3.6), sharey=True, squeeze=False)
    for ax, grid in zip(axes[0], shown):
        records = budget.records[grid]
        epochs = pa.physics_epochs(records)
        for label in grids.LONG_VARIANTS:
            color = plotting.activation_color(dict(PINNSFORMER_VARIANTS)[label])
            e = epochs[epochs["variant"] == label]
            if grid == "physics":
                g = e.groupby("step")["rMAE"]
                ax.fill_between(g.min().index, g.min(), g.max(), color=color, alpha=0.2, lw=0)
                ax.plot(g.median().index, g.median(), color=color, lw=1.6,
                        label=f"{variant_name(label)}: median, range of {e['seed'].nunique()} seeds")
            else:
                for i, (_, s) in enumerate(e.groupby("seed")):
                    ax.plot(s["step"], s["rMAE"], color=color, lw=1.2, alpha=0.85,
                            label=f"{variant_name(label)}: each seed" if i == 0 else None)
        ax.axhline(pa.FAIL_RMAE, color="grey", ls=":", lw=1)
        ax.axvline(short, color="grey", ls="--", lw=1)
        ax.set_yscale("log")
        ax.set_xlabel("L-BFGS step", fontsize=FONT)
        ax.set_title(f"{'book grid' if grid == 'physics' else 'longer grid'}, "
                     f"{int(records[0]['config']['epochs'])} steps", fontsize=FONT + 1)
        ax.legend(fontsize=FONT, loc="lower left")
    axes[0, 0].set_ylabel("convection: test rMAE", fontsize=FONT)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    plotting.stamp(fig, "book", f"dashed: step {short}; dotted: the failure threshold")
    return fig


# --- attention over the five tokens -------------------------------------------------------------


def attention_rows(runs: Runs) -> pd.DataFrame:
    """Per variant, over every stored map (run, layer, head, query token): the largest difference
    between two weights of one row, and the smallest and largest row sum."""
    cols = ["variant", "maps", "row_spread", "sum_min", "sum_max"]
    if not runs.trains:
        return pd.DataFrame(columns=cols)
    maps = pa.attention_maps(runs.records)
    if maps.empty:
        return pd.DataFrame(columns=cols)
    rows = maps.groupby(["variant", "pde", "seed", "layer", "head", "query"], sort=False)["weight"]
    per_row = pd.DataFrame({"spread": rows.max() - rows.min(), "sum": rows.sum()}).reset_index()
    out = []
    for variant in PHYSICS_VARIANTS:
        g = per_row[per_row["variant"] == variant]
        if len(g):
            out.append({"variant": variant, "maps": len(g.groupby(["pde", "seed", "layer", "head"])),
                        "row_spread": float(g["spread"].max()), "sum_min": float(g["sum"].min()),
                        "sum_max": float(g["sum"].max())})
    return pd.DataFrame(out, columns=cols)


def attention_table(runs: Runs):
    """:func:`attention_rows` for people."""
    if not runs.trains:
        return _not_run(runs)
    from ..analysis.tables import number_cell
    from ..book.deliver import styled

    rows = [{"Activation": variant_name(r["variant"]), "Maps": int(r["maps"]),
             "Largest difference within a row": number_cell(r["row_spread"], ".2g"),
             "Row sums, smallest to largest": f"{number_cell(r['sum_min'])} to {number_cell(r['sum_max'])}"}
            for _, r in attention_rows(runs).iterrows()]
    return styled(rows, runs.caption(f"The stored attention maps (mean weights over {_points()} points of the field), "
                                     "over every run, layer, head and query token"))


def _points() -> int:
    from ..tasks.pde import ATTENTION_POINTS

    return ATTENTION_POINTS


def attention_values(runs: Runs) -> dict[str, str]:
    """The points each stored map averages, and the largest difference between two weights of one
    row over every map of every variant."""
    from ..analysis.tables import number_cell

    rows = attention_rows(runs).set_index("variant")
    if not len(rows):
        return {"points": str(_points()), "row_spread": runs.not_run, "sums_poly": runs.not_run}
    poly = (f"{number_cell(rows.loc[POLY, 'sum_min'])} to {number_cell(rows.loc[POLY, 'sum_max'])}"
            if POLY in rows.index else "not stored")
    return {"points": str(_points()), "row_spread": number_cell(rows["row_spread"].max(), ".1g"), "sums_poly": poly}


# --- what the chapter found ----------------------------------------------------------------------


def scope(runs: Runs) -> str:
    """The setting of the page's runs in words (:func:`polyattn.measures.physics.physics_scope`)."""
    from ..measures.stored import GridRecords

    if not runs.configs:
        return runs.not_run
    return physics_scope(GridRecords(tuple(runs.configs), ()))


def seed_values(numbers: dict) -> dict[str, str]:
    """The measured claim's counts: problems on which softmax is seed-sensitive, of those checked,
    and the other activations' seed-sensitive cases."""
    keys = {"sensitive": "problems where softmax is seed-sensitive", "checked": "problems checked",
            "others": "other activation cases seed-sensitive", "other_cases": "other activation cases"}
    return {k: str(numbers.get(v, "not stored")) for k, v in keys.items()}
