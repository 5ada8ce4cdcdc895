"""Chapter 07's tables, figures and glued values (causal character language models).

Each section of the chapter loads its runs with one call and shows what this module returns, so
that every section reruns on its own after the chapter's setup cell:

    lm = charlm_runs(page, seeds, recompute)      # Runs: grid, records, frame, stored, budget
    nope_runs(...), sweep_runs(...)       # associative recall: polyattn.pages.recall
    bpc_table(lm, margin, registered)              # one styled table per section
    glue_values(bpc_numbers(lm, margin, registered))   # the numbers its prose glues, as text
    glue_folded("ch07_fold_setup", setup_table(lm))     # secondary material, for a folded block

``page`` is the chapter's :class:`polyattn.presets.Prologue`: its preset, device, whether it
trains, and the phrase that stands for a number it does not compute.  Under the ``book`` preset
the claim register's comparisons of the same runs replace the page's own in the tables (marked
‡, :func:`register_rows`); the register reads the book's records only, so other presets keep
their own numbers.
"""
from __future__ import annotations

import math
from typing import Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ..analysis import causal as ca
from ..analysis import length_sweep as ls
from ..analysis.tables import interval_cell, number_cell
from ..labels import CHARLM_VARIANTS
from .shown import fold, glue_keyed

#: Marks a comparison whose numbers and result are the claim register's.
REGISTERED = "‡"
#: The multiples of the training context every model is evaluated at.
MULTIPLES = tuple(m for _, m in ca.LENGTH_METRICS)


def show(label: str) -> str:
    """A variant's label as the reader sees it (x³/√(i+1), not x^3/sqrt(i+1))."""
    from ..display import label as display_label

    return display_label(label)


#: Glue each value under its key, for the page's ``{glue:text}`` and ``{glue:md}`` references.
glue_values = glue_keyed


#: Smaller type for the page's tables (many columns at the width of the page).
SMALL = [{"selector": "th, td", "props": "font-size: 0.85em"}]


def compact(table, nowrap: Sequence[str] = ()):
    """A styled table in smaller type with the columns ``nowrap`` kept on one line; None stays None."""
    if table is None:
        return None
    table = table.set_table_styles(SMALL, overwrite=False)
    columns = [c for c in nowrap if c in table.data.columns]
    return table.set_properties(subset=columns, **{"white-space": "nowrap"}) if columns else table


def unbroken(text: str) -> str:
    """``text`` with no-break spaces, so that a difference and its interval stay on one line."""
    return text.replace(" ", "\u00a0")


#: Glue a table, figure or Markdown for a folded block of the page (``{glue}`` in a dropdown).
glue_folded = fold


# --- the runs -------------------------------------------------------------------------------------


class Runs:
    """The records of one grid as a page shows them: ``grid`` (the configs), ``records`` (those
    loaded, in grid order), ``frame`` (:func:`polyattn.analysis.causal.variant_frame`, or the
    sweep's frame), ``stored`` ("33 of 33") and ``budget`` (the compute, in words).  False when
    there is no record (a preset that trains nothing, or a grid not yet run)."""

    def __init__(self, grid: Sequence, records: Sequence[dict], preset: str, missing: str = "", loaded: bool = True):
        self.grid, self.records, self.preset, self.missing = list(grid), list(records), preset, missing
        #: whether the preset loads this grid at all (False: every number reads ``missing``)
        self.loaded = loaded
        self._frame = None

    def __bool__(self) -> bool:
        return bool(self.records)

    @property
    def frame(self) -> pd.DataFrame:
        if self._frame is None:
            self._frame = ca.variant_frame(self.records) if self.records else pd.DataFrame()
        return self._frame

    @property
    def stored(self) -> str:
        return f"{len(self.records):,} of {len(self.grid):,}"

    @property
    def seeds(self) -> list[int]:
        return sorted({int(r["seed"]) for r in self.records})

    @property
    def budget(self) -> str:
        from .. import analysis

        return analysis.budget_text(analysis.compute_budget(self.records)) if self.records else self.missing


_TRAINED: dict = {}


def _runs(name: str, grid_fn, page, seeds, recompute: bool, stored_only: bool, desc: str) -> Runs:
    """The grid's records: read (``stored_only`` at the book preset) or loaded and, where missing,
    trained; what a preset trains is kept for the kernel's life, so a section rerun or a second
    section does not train it again."""
    from ..runs import load_or_run_all, page_records

    grid = page.on_device(grid_fn(page.preset, seeds))
    if not page.trains:
        return Runs(grid, [], page.preset, page.not_run, loaded=False)
    key = (name, page.preset, page.device, None if seeds is None else tuple(seeds), bool(recompute))
    trains = recompute or page.preset != "book" or not stored_only
    if key in _TRAINED:
        return _TRAINED[key]
    if stored_only:
        records = page_records(grid, page.preset, recompute=recompute, desc=desc, progress=False)
    else:
        records = load_or_run_all(grid, recompute=recompute, desc=desc, progress=False)
    runs = Runs(grid, records, page.preset, page.not_run)
    if trains:
        _TRAINED[key] = runs
    return runs


def charlm_runs(page, seeds=None, recompute: bool = False) -> Runs:
    """The character language models with sinusoidal positions (grid ``causal_charlm``)."""
    from ..experiments import causal

    return _runs("charlm", causal.charlm, page, seeds, recompute, False, "causal LMs")


def nope_runs(page, seeds=None, recompute: bool = False) -> Runs:
    """The models without position encodings (``causal_charlm_nope``); at the book preset only the
    stored runs."""
    from ..experiments import causal

    return _runs("nope", causal.charlm_nope, page, seeds, recompute, True, "causal LMs without positions")


def sweep_runs(page, seeds=None, recompute: bool = False) -> Runs:
    """The length sweep (``causal_length_sweep``): at the book preset only the stored runs (the grid
    trains for hours), with :func:`polyattn.analysis.length_sweep.sweep_frame` as ``frame``."""
    from ..experiments import causal

    runs = _runs("sweep", causal.length_sweep, page, seeds, recompute, True, "length sweep")
    runs._frame = ls.sweep_frame(runs.records)
    return runs


# --- the register's comparisons in the page's tables ------------------------------------------------


def register_rows(delivered, grid: str, preset: str) -> dict[tuple, dict]:
    """``{(candidate label, baseline label, metric): row}`` of a delivered claim's comparisons on
    ``grid``: the row of :func:`polyattn.claims.report.comparison_rows` with the comparison's result
    under ``"numbers"``; empty unless ``preset`` is the book's, whose records the register reads."""
    from ..claims.report import comparison_rows
    from ..labels import charlm_label

    if preset != "book":
        return {}
    v = delivered.verdict
    return {(charlm_label(dict(r.comparison.candidate.fields)), charlm_label(dict(r.comparison.baseline.fields)),
             r.comparison.metric): {**row, "numbers": r}
            for r, row in zip(v.comparisons, comparison_rows(v)) if r.comparison.candidate.grid == grid}


def _register_cell(row: dict, fmt: str = "+.3f") -> str:
    """A register comparison's difference and interval (blank without pairs), marked ‡."""
    r = row["numbers"]
    return f"{interval_cell(r.mean, r.ci_low, r.ci_high, fmt)} {REGISTERED}" if r.n else ""


def claim_values(prefix: str, delivered) -> dict:
    """What the prose says of a delivered claim beside its verdict: ``<prefix>_notes``, what of it
    was fixed after its runs (the margin, the comparisons, the chance level) in the register's
    words, or a phrase saying nothing was; ``<prefix>_family``, its number of comparisons;
    ``<prefix>_chance_band``, how near the chance level (in the metric's unit) both models of a
    comparison must be for it to count as uninformative."""
    c = delivered.verdict.claim
    notes = list(dict.fromkeys(t for t in (getattr(c, "registered_after", None),
                                           getattr(c, "chance_registered_after", None)) if t))
    return {f"{prefix}_notes": "; ".join(notes) or "nothing (margin, comparisons and chance level were fixed "
                                                   "before the runs)",
            f"{prefix}_family": len(c.comparisons),
            f"{prefix}_chance_band": f"{c.chance_band:g}" if getattr(c, "chance_band", None) else "not set"}


def claims_table(delivered: Sequence, caption: str, min_pairs: int = 1, names: Optional[Mapping[str, str]] = None,
                 roles: Optional[Sequence[str]] = None):
    """The comparisons of delivered claims as one compact table (claim, comparison, role, pairs,
    difference, Holm p, TOST p, result), only those with at least ``min_pairs`` stored pairs; the
    claim column only for several claims (``names``: a short name per claim id, else the id in
    words); the difference without its unit, which the caption states.  None when no comparison has
    stored pairs (the page then shows no table, not rows of placeholders).  ``roles``: only the
    comparisons of these roles (primary, check, description), all by default."""
    from ..book.deliver import styled
    from ..claims.report import comparison_rows

    rows = []
    for d in delivered:
        cid = d.verdict.claim.id
        for r, row in zip(d.verdict.comparisons, comparison_rows(d.verdict)):
            if r.n >= min_pairs and (roles is None or row["Role"] in roles):
                unit = getattr(r, "unit", "") or ""
                diff = row["Difference [95% CI]"]
                rows.append({**({"claim": (names or {}).get(cid, cid.replace("_", " "))} if len(delivered) > 1 else {}),
                             "comparison": row["Comparison"], "role": row["Role"], "pairs": row["Pairs"],
                             "difference [95% CI]": unbroken(diff.removesuffix(" " + unit) if unit else diff),
                             "Holm p": row["Holm p"], "TOST p": row["TOST p"], "result": row["Result"]})
    if not rows:
        return None
    if len({r["pairs"] for r in rows}) == 1:         # the same pairs in every row: said once, in the caption
        caption += f". Pairs: {rows[0]['pairs']} in every row"
        for r in rows:
            del r["pairs"]
    return compact(styled(rows, caption), ["pairs", "Holm p", "TOST p"])


# --- the variants and how comparisons are judged ------------------------------------------------------


def _group(text: str, i: int) -> tuple[str, int]:
    """The braced group of ``text`` that opens at ``i`` and the index after it."""
    depth = 0
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1:j], j + 1
    raise ValueError(f"unbalanced braces in {text!r}")


def _bare(term: str, denominator: bool = False) -> str:
    """``term`` in brackets where an operator outside any bracket would bind wrongly next to a slash:
    a sum or difference on either side, and a quotient or product in a denominator."""
    operators = (" + ", " - ") + ((" / ", " \\cdot ") if denominator else ())
    depth = 0
    for k, ch in enumerate(term):
        depth += {"(": 1, "{": 1, "[": 1, ")": -1, "}": -1, "]": -1}.get(ch, 0)
        if depth == 0 and any(term.startswith(op, k) for op in operators):
            return f"({term})"
    return term


def inline_formula(formula: str) -> str:
    """A LaTeX formula with each ``\\frac{a}{b}`` written ``a / b`` on one line (brackets where they
    are needed), so that a table row stays one line high; ``\\tfrac`` stays as it is."""
    out, i = "", 0
    while (k := formula.find("\\frac{", i)) >= 0:
        numerator, j = _group(formula, k + 5)
        denominator, j = _group(formula, j)
        out += formula[i:k] + f"{_bare(inline_formula(numerator))} / {_bare(inline_formula(denominator), denominator=True)}"
        i = j
    return out + formula[i:]


def _math(latex: str) -> str:
    """Inline maths in a table cell of HTML, as the page typesets it."""
    return f'<span class="math notranslate nohighlight">\\({latex}\\)</span>'


def variants_table():
    """The variants as a compact table read from the activation registry: the reading of N, the
    weights' formula on one line and whether they are non-negative and rows sum to one."""
    from .. import activations
    from ..book.deliver import styled
    from ..formulas import math_formula

    yes_no = {True: "yes", False: "no"}
    rows = []
    for label, spec, mode in CHARLM_VARIANTS:
        act = activations.get(spec)
        formula = math_formula(act.description).strip("$")
        rows.append({"variant": show(label), "N": _math("i + 1" if mode == "row" else "T"),
                     "weights": _math(inline_formula(formula)), "non-negative": yes_no[act.nonnegative],
                     "rows sum to one": yes_no[act.rows_sum_to_one]})
    return compact(styled(rows, "The variants, read from the activation registry (s: a score, N: the keys a row sees)"),
                   ["weights"])


def judging_numbers() -> dict:
    """The margin of the language-model claims with its note and perplexity ratio, α and the power."""
    from .. import analysis
    from ..claims import claim

    c = claim("lm_vs_softmax")
    return {"ch07_n_variants": len(CHARLM_VARIANTS), "ch07_margin": f"±{c.margin:g}",
            "ch07_margin_note": c.registered_after or "fixed before its runs",
            "ch07_margin_ratio": f"{2 ** c.margin:.3f}", "ch07_alpha": f"{analysis.ALPHA:g}",
            "ch07_power": f"{analysis.POWER:g}"}


def margin() -> float:
    """The equivalence margin of every bits/char comparison on the page (the register's)."""
    from ..claims import claim

    return float(claim("lm_vs_softmax").margin)


# --- setup ------------------------------------------------------------------------------------------


def _steps(cfg) -> int:
    return (cfg.options["windows"] // cfg.batch_size) * cfg.epochs


def setup_table(lm: Runs):
    """What the models, data and training are (a two-column table)."""
    from .. import sinks
    from ..book.deliver import styled
    from ..models.char_lm import LM_SIZES
    from ..tasks.charlm import DEFAULTS, MAP_TOKENS, SINK_WINDOWS

    cfg = lm.grid[0]
    opts, size = cfg.options, LM_SIZES[cfg.model]
    sampling = next((r["final"]["sampling"] for r in lm.records if r.get("final")),
                    {"temperature": DEFAULTS["temperature"], "top_k": DEFAULTS["top_k"], "seed": "?"})
    n_params = next((int(r["n_params"]) for r in lm.records if r.get("n_params")), None)
    rows = [
        ("corpus", _corpus(lm)),
        ("model", f"{cfg.model}: {size['depth']} layers, width {size['dim']}, {size['heads']} heads, pre-LN "
                  "blocks, sinusoidal positions (defined at any length), token embeddings at unit scale"
                  + (f"; {n_params:,} parameters" if n_params else "")),
        ("context T (training)", f"{opts['context']} characters"),
        ("evaluation lengths", ", ".join(f"{m}x = {m * opts['context']}" for m in MULTIPLES)
         + f" characters; {opts['eval_windows']} windows at 1x (fewer at longer lengths: the same first "
           f"{opts['eval_windows'] * opts['context']:,} test characters each time)"),
        ("training", f"{_steps(cfg):,} steps of {cfg.batch_size} random windows ({cfg.epochs} epoch(s) of "
                     f"{opts['windows']:,} windows); AdamW lr {cfg.lr:g}, weight decay {cfg.weight_decay:g}, "
                     f"warm-up {cfg.warmup_epochs:g} epoch(s) then cosine to {cfg.min_lr:g}; gradients clipped "
                     f"at norm {cfg.clip_grad:g}"),
        ("seeds", f"{len({c.seed for c in lm.grid})} per variant "
                  f"({', '.join(str(s) for s in sorted({c.seed for c in lm.grid}))}), paired across variants"),
        ("samples", f"{opts['sample_chars']} characters after the prompt {DEFAULTS['prompt']!r}, temperature "
                    f"{sampling['temperature']:g}, top-k {sampling['top_k']}, sampling seed {sampling['seed']}, "
                    "the lowest seed's model"),
        ("sinks and maps", f"{SINK_WINDOWS} test windows of {sinks.SINK_WINDOW} characters after training; "
                           f"threshold {sinks.SINK_EPS:g}; the first layer's map on the first window's first "
                           f"{MAP_TOKENS} characters"),
        ("preset and compute", f"{lm.preset}; {lm.budget}"),
    ]
    return styled([{"": k, "this chapter": v} for k, v in rows])


def _corpus(lm: Runs) -> str:
    """The corpus in words: its split by book and size, when the preset loads it."""
    from ..tasks import get_task

    cfg = lm.grid[0]
    if not lm:
        return f"{cfg.dataset} ({lm.missing})"
    data = get_task("charlm").load(cfg, 1, 0)
    chars = {s: len(data.stream(s)) for s in ("train", "validation", "test")}
    size = (f" ({chars['train']:,} / {chars['validation']:,} / {chars['test']:,} characters; "
            f"{len(data.vocab)} symbols)")
    if cfg.dataset != "bible_kjv":
        return f"generated text ({cfg.dataset}), for the pipeline check only" + size
    return (f"King James Bible (Debian's bible-kjv), split by book: test {', '.join(data.books['test'])}; "
            f"validation {', '.join(data.books['validation'])}; the other {len(data.books['train'])} books "
            "train" + size)


def setup_numbers(lm: Runs) -> dict:
    """The setup's numbers the prose quotes."""
    from .. import sinks
    from ..tasks.charlm import MAP_TOKENS, SINK_WINDOWS

    cfg = lm.grid[0]
    return {"ch07_context": cfg.options["context"], "ch07_steps": f"{_steps(cfg):,}",
            "ch07_n_seeds": len({c.seed for c in lm.grid}), "ch07_eps": f"{sinks.SINK_EPS:g}",
            "ch07_sink_window": sinks.SINK_WINDOW, "ch07_sink_windows": SINK_WINDOWS, "ch07_map_tokens": MAP_TOKENS}


def _scale(runs: Runs) -> str:
    """The scale of a grid's runs for a caption: model, data, context, steps, seeds, preset."""
    cfg = runs.grid[0]
    data = "King James Bible" if cfg.dataset == "bible_kjv" else f"generated text ({cfg.dataset})"
    return (f"{cfg.model} character LM, {data}, T = {cfg.options['context']}, {_steps(cfg):,} steps, "
            f"{len(runs.seeds)} seed(s), preset {runs.preset}")


# --- bits per character --------------------------------------------------------------------------------


def bpc_comparisons(frame: pd.DataFrame, margin: float, baseline: str = "softmax") -> pd.DataFrame:
    """Every variant against ``baseline`` on test bits/char, same seed, Holm over the variants."""
    return ca.compare_variants(frame, baseline, "test_bpc", margin)


def _forms(diffs: pd.DataFrame) -> list[str]:
    from ..analysis.verdicts import comparison_verdict

    return [comparison_verdict(r, name=r["activation"]).form for _, r in diffs.iterrows()]


def _p(x) -> str:
    return number_cell(x, ".2g")


def bpc_rows(runs: Runs, margin: float, registered: Mapping[tuple, dict], metric: str = "test_bpc") -> list[dict]:
    """Per variant: its mean test bits/char over seeds, the paired difference from softmax with its
    interval, Holm p, TOST p, MDE and result; the register's numbers where it holds the comparison
    (marked ‡).  A variant with seeds that did not train to the end says how many did."""
    frame = runs.frame
    diffs = bpc_comparisons(frame, margin).set_index("activation")
    forms = dict(zip(diffs.index, _forms(diffs.reset_index())))
    rows = []
    for variant, g in frame.groupby("activation", sort=False):
        ok = int((g["status"] == "ok").sum())
        row = {"variant": show(variant) + ("" if ok == len(g) else f" ({ok} of {len(g)} seeds)"),
               "test bits/char": number_cell(g[metric].mean(), ".3f", missing="diverged")}
        if variant in diffs.index:
            x = diffs.loc[variant]
            reg = registered.get((variant, "softmax", metric))
            row.update({"Δ vs softmax [95% CI]": unbroken(_register_cell(reg) if reg else interval_cell(
                            x["mean_diff"], x["ci_low"], x["ci_high"], "+.3f", missing="diverged")),
                        "Holm p": reg["Holm p"] if reg else _p(x["p_holm"]),
                        f"TOST p (±{margin:g})": reg["TOST p"] if reg else _p(x["tost_p"]),
                        "MDE": number_cell(x["mde"], ".3f"),
                        "result": (reg["Result"] + " " + REGISTERED) if reg else forms[variant]})
        else:
            row.update({"Δ vs softmax [95% CI]": "baseline", "Holm p": "", f"TOST p (±{margin:g})": "", "MDE": "",
                        "result": ""})
        rows.append(row)
    return rows


def bpc_table(lm: Runs, margin: float, registered: Mapping[tuple, dict]):
    """:func:`bpc_rows` as the section's table, its caption the preset, data, scale and deviations."""
    if not lm:
        return None
    from ..book.deliver import styled

    n = len(bpc_comparisons(lm.frame, margin))
    k = len({key for key in registered if key[2] == "test_bpc"})
    note = (f"; {REGISTERED} the claim register's comparison, Holm over its own {k}" if k else "")
    return compact(styled(bpc_rows(lm, margin, registered), (
        f"Test bits per character (lower is better), mean over seeds, and the same-seed difference from softmax, "
        f"Holm over the table's {n} comparisons{note}. {_scale(lm)}; a decoder on characters, far smaller than "
        "the paper's models")))


def bpc_numbers(lm: Runs, margin: float, registered: Mapping[tuple, dict]) -> dict:
    """The number of comparisons, the results counted by form and the range of detectable effects."""
    keys = ("ch07_family", "ch07_count_text", "ch07_mde_range")
    if not lm:
        return dict.fromkeys(keys, lm.missing)
    rows = bpc_rows(lm, margin, registered)
    results = [r["result"].removesuffix(" " + REGISTERED) for r in rows if r["result"]]
    counts = pd.Series(results).value_counts()
    mdes = bpc_comparisons(lm.frame, margin)["mde"].dropna()
    return {"ch07_family": len(results),
            "ch07_count_text": "; ".join(f"{n} {form}" for form, n in counts.items()),
            "ch07_mde_range": (f"{mdes.min():.3f} to {mdes.max():.3f} bits/char" if len(mdes)
                               else "not defined with a single seed")}


# --- length generalisation ------------------------------------------------------------------------------


def _length_groups(frame: pd.DataFrame) -> list[tuple[str, list[str]]]:
    """The variants in three groups read from the registry: the paper's polynomial with softmax,
    the alternatives whose rows sum to one, those whose rows need not."""
    from .. import activations

    spec_of = dict(zip(frame["variant"], frame["spec"]))
    order = [v for v in ca.variant_order() if v in spec_of]
    cubic = [v for v in order if activations.get(spec_of[v]).family == "poly" or v == "softmax"]
    rest = [v for v in order if v not in cubic]
    return [("softmax and the paper's cubic", cubic),
            ("rows sum to one", [v for v in rest if activations.get(spec_of[v]).rows_sum_to_one]),
            ("rows need not sum to one", [v for v in rest if not activations.get(spec_of[v]).rows_sum_to_one])]


def _length_lines(ax, lengths: pd.DataFrame, variants: Sequence[str], reference: Optional[str] = None) -> None:
    """Test bits/char against the evaluation length, one line per variant (the fixed reading of N
    dashed), ``reference`` thin and grey behind them."""
    from ..plotting import REFERENCE_GREY

    colours = ca.variant_colors()
    for variant, g in lengths[lengths["variant"].isin([*variants, reference])].groupby("variant", sort=False):
        err = np.vstack([g["mean"] - g["ci_low"], g["ci_high"] - g["mean"]])
        grey = variant == reference and variant not in variants
        ax.errorbar(g["multiple"], g["mean"], yerr=None if np.isnan(err).all() else np.nan_to_num(err),
                    color=REFERENCE_GREY if grey else colours[variant], lw=1.2 if grey else 1.8,
                    linestyle="--" if g["n_mode"].iloc[0] == "fixed" else "-", marker="" if grey else "o",
                    capsize=0 if grey else 3, label=show(variant), zorder=1 if grey else 2)
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(MULTIPLES), [f"{m}x" for m in MULTIPLES])
    ax.minorticks_off()
    ax.legend(fontsize=9, frameon=False, loc="upper left", labelspacing=0.3, handlelength=1.6)


def length_figure(lm: Runs, margin: float):
    """Three panels of a few variants each (test bits/char at 1x, 2x, 4x the context; softmax in
    grey where it is not one of them) and the fixed minus the per-row reading of N per seed."""
    if not lm:
        return None
    import matplotlib.pyplot as plt

    from ..plotting import stamp

    frame = lm.frame
    lengths = ca.length_summary(frame)
    rvf = ca.row_vs_fixed(frame, margin)
    context = lm.grid[0].options["context"]
    fig, axes = plt.subplots(2, 2, figsize=(8, 5.0))
    for ax, (title, variants) in zip(axes.flat, _length_groups(frame)):
        _length_lines(ax, lengths, variants, reference="softmax")
        ax.set_title(title)
        ax.set_ylabel("test bits per character")
    for ax in axes[1]:
        ax.set_xlabel(f"evaluation length (T = {context})")
    for ax in axes.flat[1:3]:
        ax.sharey(axes.flat[0])
    ax = axes.flat[3]
    seeds = frame.set_index(["activation", "seed"])
    colour = ca.variant_colors()[ca.FIXED]
    for name, m in ca.LENGTH_METRICS:
        delta = seeds.loc[ca.FIXED, name] - seeds.loc[ca.ROW, name]
        ax.scatter(np.full(len(delta), m), delta, color=colour, s=14, alpha=0.6)
    err = np.vstack([rvf["mean_diff"] - rvf["ci_low"], rvf["ci_high"] - rvf["mean_diff"]])
    ax.errorbar(rvf["multiple"], rvf["mean_diff"], yerr=None if np.isnan(err).all() else np.nan_to_num(err),
                color="black", marker="o", capsize=4)
    ax.axhline(0, color="grey", lw=0.8)
    ax.axhspan(-margin, margin, color="grey", alpha=0.15, lw=0)
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(MULTIPLES), [f"{m}x" for m in MULTIPLES])
    ax.minorticks_off()
    ax.set_ylabel("difference (bits/char)")
    ax.set_title(f"{show(ca.FIXED)} − {show(ca.ROW)}")
    stamp(fig, lm.preset, f"{len(lm.seeds)} seed(s); means, 95% t-intervals; dots: seeds; band: ±margin")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return fig


def _length_cell(row) -> str:
    """A paired difference at one length with its interval and result, or why there is none."""
    from ..analysis.verdicts import comparison_verdict

    if not row["n_pairs"]:
        return "diverged"
    return f"{unbroken(interval_cell(row['mean_diff'], row['ci_low'], row['ci_high'], '+.2f'))}, {comparison_verdict(row).form}"


def length_rows(diffs: pd.DataFrame, label_of, registered: Mapping[tuple, dict] = None) -> list[dict]:
    """One row per compared pair of ``diffs`` (columns ``activation`` and ``multiple`` at least), one
    column per evaluation length; ``label_of(activation)`` names the row; a comparison the register
    holds (``registered`` keyed by the row's (activation, multiple)) shows the register's numbers."""
    registered = registered or {}
    rows = {}
    for _, r in diffs.iterrows():
        row = rows.setdefault(r["activation"], {"comparison": label_of(r["activation"])})
        reg = registered.get((r["activation"], int(r["multiple"])))
        row[f"at {int(r['multiple'])}x"] = (f"{unbroken(_register_cell(reg, '+.2f'))}, {reg['Result']}" if reg
                                            else _length_cell(r))
    return list(rows.values())


def length_table(lm: Runs, margin: float, registered: Mapping[tuple, dict]):
    """Every variant against softmax at 2x and 4x the context (Holm within each length; at 1x the
    table of bits per character holds them), and the fixed minus the per-row reading of N at 2x and
    4x (Holm over its three lengths); ``registered``: the register's rows of the sinusoidal grid
    (:func:`register_rows` of the claim causal_scaling)."""
    if not lm:
        return None
    from ..book.deliver import styled

    frame = lm.frame
    vs_softmax = ca.lengths_vs_softmax(frame, margin)
    reg_soft, reg_rvf = _by_length(registered, set(vs_softmax["activation"]), "softmax"), _by_length(
        registered, {ca.FIXED}, ca.ROW)
    rows = length_rows(vs_softmax[vs_softmax["multiple"] != 1], lambda v: f"{show(v)} − softmax", reg_soft)
    rvf = ca.row_vs_fixed(frame, margin).assign(activation=ca.FIXED)
    rows += length_rows(rvf[rvf["multiple"] != 1], lambda v: f"{show(ca.FIXED)} − {show(ca.ROW)}", reg_rvf)
    note = (f"; {REGISTERED} the claim register's comparison, Holm over its own" if any(
        m != 1 for _, m in (*reg_soft, *reg_rvf)) else "")
    return compact(styled(rows, (
        f"Same-seed difference in test bits/char [95% t-interval] and result past the training length (at 1x: the "
        f"table above and, for the last row, the text), Holm within each length (the last row: over its three "
        f"lengths), margin ±{margin:g}{note}. {_scale(lm)}; sinusoidal positions past T that the models never saw")))


def _by_length(registered: Mapping[tuple, dict], candidates, baseline: str) -> dict[tuple, dict]:
    """The register's rows of ``candidates`` against ``baseline`` keyed by (candidate, multiple)."""
    metric_of = {m: name for name, m in ca.LENGTH_METRICS}
    return {(v, m): registered[(v, baseline, metric_of[m])] for v in candidates for m in MULTIPLES
            if (v, baseline, metric_of[m]) in registered}


def _spread(series: pd.Series) -> str:
    """"+1.300 for Polyak-Sum to +1.906 for sigmoid": the smallest and largest value, each with its variant."""
    s = series.dropna()
    if s.empty:
        return "not measured"
    return (f"{number_cell(s.min(), '+.3f')} for {show(s.idxmin())} to {number_cell(s.max(), '+.3f')} "
            f"for {show(s.idxmax())}")


def _change(lengths: pd.DataFrame, a: int, b: int) -> pd.Series:
    at = {m: lengths[lengths["multiple"] == m].set_index("variant")["mean"] for m in (a, b)}
    return at[b] - at[a]


def length_numbers(lm: Runs, margin: float, registered: Mapping[tuple, dict] = None) -> dict:
    """How the test bits/char change from 1x to 2x and 4x across variants, the lowest at 4x, and the
    fixed minus the per-row reading of N at the training length (the register's numbers where
    ``registered`` holds them, marked ‡)."""
    keys = ("ch07_rise_2x", "ch07_growth_4x", "ch07_best_4x", "ch07_rvf_1x", "ch07_rvf_past", "ch07_past_results")
    if not lm:
        return dict.fromkeys(keys, lm.missing)
    lengths = ca.length_summary(lm.frame)
    x4 = lengths[lengths["multiple"] == 4].set_index("variant")["mean"].dropna()
    rvf = ca.row_vs_fixed(lm.frame, margin).set_index("multiple")
    vs_softmax = ca.lengths_vs_softmax(lm.frame, margin)
    past = vs_softmax[vs_softmax["multiple"] != 1]
    forms = pd.Series(_forms(past)).value_counts() if len(past) else pd.Series(dtype=int)
    rvf_past = ca.row_vs_fixed(lm.frame, margin)
    rvf_past = "; ".join(f"{_length_cell(r)} at {int(r['multiple'])}x" for _, r in rvf_past.iterrows()
                         if r["multiple"] != 1)
    reg = (registered or {}).get((ca.FIXED, ca.ROW, "test_bpc"))
    at_1x = (f"{_register_cell(reg)} bits/char ({reg['numbers'].n} pairs)" if reg and reg["numbers"].n
             else _with_pairs(rvf.loc[1]))
    return {"ch07_rise_2x": _spread(_change(lengths, 1, 2)), "ch07_growth_4x": _spread(_change(lengths, 1, 4)),
            "ch07_best_4x": f"{show(x4.idxmin())}, {x4.min():.3f} bits/char" if len(x4) else "none",
            "ch07_rvf_1x": at_1x, "ch07_rvf_past": rvf_past.replace("\u00a0", " ") or "not measured",
            "ch07_past_results": "; ".join(f"{n} {f}" for f, n in forms.items()) + f" (of {len(past)})"
            if len(past) else "not measured"}


def _with_pairs(row) -> str:
    """"+0.066 [+0.010, +0.121] bits/char (3 pairs)"."""
    if not row["n_pairs"]:
        return "no pair (diverged)"
    n = int(row["n_pairs"])
    return (f"{interval_cell(row['mean_diff'], row['ci_low'], row['ci_high'], '+.3f')} bits/char "
            f"({n} pair{'s' if n != 1 else ''})")


# --- without position encodings ----------------------------------------------------------------------------


def nope_figure(lm: Runs, nope: Runs):
    """Test bits/char at 1x, 2x and 4x of the variants trained without positions, beside the same
    variants with sinusoidal positions."""
    if not (lm and nope):
        return None
    import matplotlib.pyplot as plt

    from ..plotting import stamp

    shown = list(dict.fromkeys(nope.frame["variant"]))
    context = lm.grid[0].options["context"]
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.6), sharey=True)
    for ax, runs, title in ((axes[0], lm, "sinusoidal positions"), (axes[1], nope, "no positions (NoPE)")):
        _length_lines(ax, ca.length_summary(runs.frame), shown)
        ax.set_xlabel(f"evaluation length (T = {context})")
        ax.set_title(title)
    axes[0].set_ylabel("test bits per character")
    axes[0].get_legend().remove()
    stamp(axes[1], nope.preset, f"sinusoidal: {len(lm.seeds)} seed(s); NoPE: {len(nope.seeds)} seed(s)",
          loc="lower right")
    fig.tight_layout()
    return fig


def nope_table(lm: Runs, nope: Runs, margin: float, registered: Mapping[tuple, dict]):
    """The section's comparisons at 1x, 2x and 4x: each variant without positions against softmax
    without positions (Holm within each length) and the fixed minus the per-row reading of N (Holm
    over the lengths)."""
    if not (lm and nope):
        return None
    from ..book.deliver import styled

    frame = nope.frame
    vs_softmax = pd.concat([ca.compare_variants(frame, "softmax", name, margin).assign(multiple=m)
                            for name, m in ca.LENGTH_METRICS], ignore_index=True)
    reg_soft = _by_length(registered, set(vs_softmax["activation"]), "softmax")
    rows = length_rows(vs_softmax, lambda v: f"{show(v)} − softmax", reg_soft)
    rvf = ca.row_vs_fixed(frame, margin).assign(activation=ca.FIXED)
    reg_rvf = _by_length(registered, {ca.FIXED}, ca.ROW)
    rows += length_rows(rvf, lambda v: f"{show(ca.FIXED)} − {show(ca.ROW)}", reg_rvf)
    note = (f"; {REGISTERED} the claim register's comparison (claims nope lm and causal scaling, Holm over each "
            "claim's own)" if reg_soft or reg_rvf else "")
    return compact(styled(rows, (
        f"Without position encodings: same-seed differences in test bits/char [95% t-interval] and result; against "
        f"softmax Holm within each length, {show(ca.FIXED)} − {show(ca.ROW)} over its lengths; margin "
        f"±{margin:g}{note}. {nope.stored} runs without positions stored ({len(nope.seeds)} seeds), everything "
        "else as above")))


def positions_table(lm: Runs, nope: Runs, margin: float):
    """Each variant of the grid without positions minus the same variant with sinusoidal positions,
    same seed, at 1x, 2x and 4x (Holm over all of them)."""
    if not (lm and nope):
        return None
    from ..book.deliver import styled

    effect = ca.positions_effect(lm.frame, nope.frame, margin).assign(activation=lambda d: d["variant"])
    rows = length_rows(effect, lambda v: f"{show(v)}: none − sinusoidal")
    return compact(styled(rows, (
        f"No positions minus sinusoidal positions: same-seed differences in test bits/char [95% t-interval] and "
        f"result, Holm over the {len(effect)} comparisons, margin ±{margin:g}; seeds trained both ways only")))


def nope_numbers(lm: Runs, nope: Runs, margin: float) -> dict:
    """How much the variants without positions change from 1x to 4x, what dropping the positions costs
    at the training length."""
    keys = ("ch07_nope_found", "ch07_nope_growth_4x", "ch07_sin_growth_4x", "ch07_nope_cost_1x")
    if not (lm and nope):
        return dict.fromkeys(keys, nope.missing or "no run of this grid is stored yet")
    shown = list(dict.fromkeys(nope.frame["variant"]))
    effect = ca.positions_effect(lm.frame, nope.frame, margin)
    at1 = effect[effect["multiple"] == 1].set_index("variant")["mean_diff"]
    sin = _change(ca.length_summary(lm.frame), 1, 4).reindex(shown)
    return {"ch07_nope_found": f"{nope.stored} planned runs ({len(nope.seeds)} of "
                               f"{len({c.seed for c in nope.grid})} seeds)",
            "ch07_nope_growth_4x": _spread(_change(ca.length_summary(nope.frame), 1, 4)),
            "ch07_sin_growth_4x": _spread(sin), "ch07_nope_cost_1x": _spread(at1)}


# --- the sqrt(N) scaling across training lengths ------------------------------------------------------------


def sweep_figure(sweep: Runs, margin: float):
    """:func:`polyattn.analysis.length_sweep.sweep_figure` for the page, stamped; None while no run
    of the grid has trained."""
    from ..claims import claim
    from ..plotting import stamp

    lengths = sorted({int(c.options["context"]) for c in sweep.grid})
    fig = ls.sweep_figure(sweep.frame, lengths=lengths, margin=margin, chance=claim("length_scale_needed").chance)
    if fig is not None:
        if len(fig.axes) > 1:                # the page's width, so that its type is not scaled down
            fig.set_size_inches(8, 3.9)
        stamp(fig, sweep.preset, "position-free micro character LM, no clipping; dots: seeds")
        fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def sweep_numbers(sweep: Runs) -> dict:
    """How many planned runs are stored (and which diverged), and the growth of x³ − x³/√(i+1) per
    doubling of T: each seed's slope, then their mean with its 95% t-interval."""
    keys = ("ch07_sweep_stored", "ch07_sweep_slope")
    lengths = sorted({int(c.options["context"]) for c in sweep.grid})
    design = {"ch07_sweep_lengths": ", ".join(map(str, lengths[:-1])) + f" and {lengths[-1]}" if len(lengths) > 1
              else ", ".join(map(str, lengths)),
              "ch07_sweep_seeds": len({c.seed for c in sweep.grid})}
    if not sweep.loaded:
        return {**design, **dict.fromkeys(keys, sweep.missing)}
    p = ls.progress(sweep.frame, len(sweep.grid))
    stored = f"{p['stored']} of the {p['planned']}"
    if p["diverged"]:
        stored += f" ({p['diverged']} diverged: {'; '.join(p['diverged_runs'])})"
    s = ls.slope_over_log_length(sweep.frame, "x³", "x³/√(i+1)")
    if not s["seeds"]:
        slope = ("none yet: no seed has both x³ and x³/√(i+1) stored at two training lengths"
                 + ("" if len(ls.paired_by_length(sweep.frame, "x³", "x³/√(i+1)")) else
                    ", nor at one (so the figure has no panel of differences)"))
    else:
        per_seed = ", ".join(f"seed {k}: {number_cell(v, '+.3f')}" for k, v in s["per_seed"].items())
        slope = (f"{interval_cell(s['slope'], s['ci_low'], s['ci_high'], '+.3f')} bits/char per doubling over "
                 f"{s['seeds']} seed(s) ({per_seed})")
    return {**design, "ch07_sweep_stored": stored, "ch07_sweep_slope": slope}


#: The two claims of the length sweep by short names in its table.
SWEEP_CLAIMS = {"length_scale_needed": "scale needed", "length_scale_follows_n": "follows N"}


def sweep_table(delivered: Sequence, preset: str, roles: Optional[Sequence[str]] = ("primary", "check")):
    """The two sweep claims' comparisons of ``roles`` that have stored pairs, as one table; None while
    none has, or when ``preset`` is not the book's (the register reads the book's records only)."""
    if not delivered or preset != "book":
        return None
    scale = delivered[0].verdict.claim.scale
    controls = sorted({c.margin for d in delivered for c in getattr(d.verdict.claim, "comparisons", ())
                       if c.role == "check" and getattr(c, "margin", None)})
    control = f" (the control ±{', ±'.join(f'{m:g}' for m in controls)})" if controls else ""
    which = f"{' and '.join(roles)} comparisons" if roles else "comparisons"
    return claims_table(delivered, (
        f"The claim register's {which} of the length sweep that have stored pairs: same-seed difference in "
        f"bits/char, margin ±{delivered[0].verdict.claim.margin:g}{control}, Holm within each claim. {scale}"),
        names=SWEEP_CLAIMS, roles=roles)


# --- attention sinks ---------------------------------------------------------------------------------------

SINK_TITLES = {"alpha_mean": "first-token\nweight α", "share_mean": "first-token\nshare",
               "negative_fraction": "share of\nnegative weights", "row_sum_mean": "mean\nrow sum"}


def sink_figure(lm: Runs):
    """Per variant the mean over seeds (bars) and each seed (dots) of the first-token weight and share
    (against the threshold, dotted), the fraction of negative weights and the mean row sum."""
    if not lm:
        return None
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from .. import sinks as sink_metrics
    from ..plotting import stamp
    from ..tasks.charlm import SINK_WINDOWS

    final = lm.frame
    table = ca.sink_table(final)
    colours = ca.variant_colors()
    fig, axes = plt.subplots(1, 4, figsize=(8, 0.24 * len(table) + 1.5), sharey=True, squeeze=False)
    ys = np.arange(len(table))[::-1]
    for ax, name in zip(axes.flat, SINK_TITLES):
        ax.barh(ys, table[f"{name}_mean"].fillna(0), color=[colours[v] for v in table["variant"]], alpha=0.75)
        for y, variant in zip(ys, table["variant"]):
            vals = final.loc[final["activation"] == variant, name].dropna()
            ax.scatter(vals, np.full(len(vals), y), color="black", s=8, zorder=3)
        if name in ("alpha_mean", "share_mean"):
            ax.axvline(sink_metrics.SINK_EPS, color="grey", ls=":", lw=1)
        ax.axvline(0, color="grey", lw=0.6)
        ax.set_title(SINK_TITLES[name], fontsize=10)
        ax.xaxis.set_major_locator(MaxNLocator(3))
        ax.tick_params(labelsize=9)
    axes[0, 0].set_yticks(ys, [show(v) for v in table["variant"]])
    stamp(fig, lm.preset, f"bars: mean over seeds, dots: seeds; {SINK_WINDOWS} test windows of "
                          f"{sink_metrics.SINK_WINDOW} characters")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def sink_table(lm: Runs):
    """Per variant: whether its rows sum to one and the sink rate with raw weights and with the
    normalised share (mean over seeds, largest seed)."""
    if not lm:
        return None
    from ..book.deliver import styled

    table = ca.sink_table(lm.frame)
    final = lm.frame
    rows = []
    for _, r in table.iterrows():
        g = final[final["activation"] == r["variant"]]
        rows.append({"variant": show(r["variant"]), "rows sum to one": "yes" if r["rows_sum_to_one"] else "no",
                     "sink rate, raw (max)": f"{number_cell(r['sink_rate_mean'], '.2f')} "
                                             f"({number_cell(g['sink_rate'].max(), '.2f')})",
                     "sink rate, normalised (max)": f"{number_cell(r['sink_rate_normalised_mean'], '.2f')} "
                                                    f"({number_cell(g['sink_rate_normalised'].max(), '.2f')})"})
    return compact(styled(rows, f"Sink rate: share of layer-head pairs whose mean first-token weight (raw) or "
                                f"share (normalised) exceeds the threshold, mean over seeds (largest seed). "
                                f"{_scale(lm)}"))


def register_summary(registered: Mapping[tuple, dict], preset: str = "book") -> str:
    """A section's register comparisons (:func:`register_rows`) in one phrase, equal ones together:
    "all 7 (x³/√(i+1), ...): +0.000 [+0.000, +0.000] share (3 of 3 pairs), uninformative"; "none"
    without any; under another preset than the book's, a phrase saying the register reads the book's."""
    if preset != "book":
        return "not shown at this preset (the register reads the book preset's records only)"
    groups: dict = {}
    for (candidate, _, _), row in registered.items():
        groups.setdefault((row["Difference [95% CI]"], row["Pairs"], row["Result"]), []).append(show(candidate))
    parts = [f"{', '.join(names)}: {diff} ({pairs} pairs), {result}" for (diff, pairs, result), names in groups.items()]
    if len(groups) == 1 and len(registered) > 1:
        return f"all {len(registered)} ({parts[0].replace(': ', '): ', 1)}"
    return "; ".join(parts) or "none"


def sink_numbers(lm: Runs) -> dict:
    """Softmax's sink rate and first-token weight, its seeds with a sink, and the mean sink rate of the
    variants whose rows sum to one and of those whose rows need not; the model's layers × heads."""
    from ..models.char_lm import LM_SIZES

    size = LM_SIZES[lm.grid[0].model] if lm.grid else None
    design = {"ch07_layer_heads": f"{size['depth']} × {size['heads']}" if size else lm.missing}
    keys = ("ch07_softmax_sink_rate", "ch07_softmax_alpha", "ch07_softmax_sink_seeds", "ch07_sum_one_rate",
            "ch07_free_rate", "ch07_largest_rate")
    if not lm:
        return {**design, **dict.fromkeys(keys, lm.missing)}
    final = lm.frame
    table = ca.sink_table(final).set_index("variant")
    by_group = table.groupby("rows_sum_to_one")["sink_rate_mean"].mean()
    soft = final[final["activation"] == "softmax"]["sink_rate"].dropna()
    top = final.loc[final["sink_rate"].idxmax()] if final["sink_rate"].notna().any() else None
    return {**design, "ch07_softmax_sink_rate": number_cell(table.loc["softmax", "sink_rate_mean"], ".2f"),
            "ch07_softmax_alpha": number_cell(table.loc["softmax", "alpha_mean_mean"], ".2f"),
            "ch07_softmax_sink_seeds": f"{int((soft > 0).sum())} of {len(soft)}",
            "ch07_sum_one_rate": number_cell(by_group.get(True, math.nan), ".2f", missing="none"),
            "ch07_free_rate": number_cell(by_group.get(False, math.nan), ".2f", missing="none"),
            "ch07_largest_rate": ("not measured" if top is None else
                                  f"{number_cell(top['sink_rate'], '.2f')} ({show(top['variant'])}, seed "
                                  f"{int(top['seed'])})")}


# --- generated text -----------------------------------------------------------------------------------------


def _samples(lm: Runs) -> tuple[dict, list, str]:
    """The lowest seed's samples by variant, the variants without one (diverged) and the prompt."""
    from ..tasks.charlm import DEFAULTS

    final = lm.frame
    first = final[final["seed"] == final["seed"].min()].set_index("activation")
    samples = {v: first.loc[v, "sample"] for v in first.index if first.loc[v, "status"] == "ok"}
    prompt = next((r["final"]["prompt"] for r in lm.records if r.get("final")), DEFAULTS["prompt"])
    return samples, [v for v in first.index if v not in samples], prompt


def samples_markdown(lm: Runs) -> str:
    """The samples as a fenced text block, one line per variant after the prompt."""
    if not lm:
        return ""
    samples, _, prompt = _samples(lm)
    width = max(len(show(v)) for v in samples)
    lines = [f"{show(v):<{width}}  {prompt}" + s.replace("\n", "⏎").replace("`", "'") for v, s in samples.items()]
    return "```text\n" + "\n".join(lines) + "\n```"


def _test_text(lm: Runs) -> str:
    from ..tasks import get_task

    data = get_task("charlm").load(lm.grid[0], 1, 0)
    return data.vocab.decode(data.stream("test"))


def collapse(lm: Runs) -> tuple[pd.DataFrame, dict]:
    """:func:`polyattn.analysis.causal.collapse_check` of the lowest seed's samples against windows
    of real test text of the same length, and that reference."""
    samples, _, _ = _samples(lm)
    reference = ca.reference_ranges(_test_text(lm), lm.grid[0].options["sample_chars"])
    return ca.collapse_check(samples, reference), reference


def collapse_table(lm: Runs):
    """Per sample: distinct characters, repeated 4-grams, longest run and whether it collapsed."""
    if not lm:
        return None
    from ..book.deliver import styled

    check, reference = collapse(lm)
    rows = [{"variant": show(r["variant"]), "distinct characters": int(r["distinct_chars"]),
             "repeated 4-grams (share)": number_cell(r["repeated_ngram_share"], ".3g"),
             "longest run of one character": int(r["longest_run"]),
             "collapsed": ("yes: " + r["reasons"]) if r["collapsed"] else "no"} for _, r in check.iterrows()]
    return styled(rows, (
        f"Samples of {reference['length']} characters from the lowest seed's models against "
        f"{reference['windows']} windows of real test text of that length: at least {reference['min_distinct_chars']} "
        f"distinct characters, at most {reference['max_repeated_ngram_share']:.2f} of 4-grams repeated, runs of at most "
        f"{reference['max_longest_run']} equal characters. {_scale(lm)}"))


def collapse_numbers(lm: Runs) -> dict:
    """How many samples collapsed (and which), which variants produced none, and the reference windows."""
    keys = ("ch07_ref_windows", "ch07_collapsed", "ch07_collapsed_which", "ch07_no_sample")
    if not lm:
        return dict.fromkeys(keys, lm.missing)
    check, reference = collapse(lm)
    _, missing, _ = _samples(lm)
    bad = check[check["collapsed"]]
    return {"ch07_ref_windows": reference["windows"], "ch07_collapsed": f"{len(bad)} of {len(check)}",
            "ch07_collapsed_which": "; ".join(f"{show(r.variant)} ({r.reasons})" for r in bad.itertuples()) or "none",
            "ch07_no_sample": ", ".join(show(v) for v in missing) or "none"}


# --- attention maps -----------------------------------------------------------------------------------------


def attention_maps(lm: Runs) -> dict:
    """Per variant the first layer's map of the lowest seed whose record holds one, as ``maps``
    (variant -> [heads, t, t]), with ``source`` (variant -> where it comes from), ``window`` (the
    text), ``diverged`` and ``missing`` (variants without a map).  Under the smoke preset a record
    written before records kept maps is retrained from its configuration (seconds)."""
    if not lm:
        return {"maps": {}, "source": {}, "window": "", "diverged": [], "missing": []}
    from ..labels import charlm_label

    by_variant: dict = {}
    for r, c in sorted(zip(lm.records, lm.grid), key=lambda rc: rc[0]["seed"]):
        by_variant.setdefault(charlm_label(r["config"]), []).append((r, c))
    maps, source, window = {}, {}, ""
    chosen = {v: next(((r, c) for r, c in rcs if (r.get("final") or {}).get("attention_map")), rcs[0])
              for v, rcs in by_variant.items()}
    for variant in [v for v in ca.variant_order() if v in chosen]:
        rec, config = chosen[variant]
        amap = (rec.get("final") or {}).get("attention_map")
        where = f"the seed-{rec['seed']} record"
        if amap is None and rec["status"] == "ok" and lm.preset == "smoke":
            from ..attention_maps import train_with_model

            amap = train_with_model(config)[0]["final"]["attention_map"]
            where = "retrained from its record's configuration and seed"
        if amap is not None:
            maps[variant], source[variant], window = np.asarray(amap["weights"]), where, amap["text"]
    diverged = [v for v in chosen if chosen[v][0]["status"] != "ok"]
    missing = [v for v in chosen if v not in maps and v not in diverged]
    return {"maps": maps, "source": source, "window": window, "diverged": diverged, "missing": missing}


#: A head whose share of non-zero weights (below the diagonal, on the map's window) is under this is
#: drawn as its count, not as a near-blank map.
MAP_SPARSE = 0.05


def _nonzero(head) -> tuple[int, int]:
    """How many of a head's visible (causal) weights are non-zero, and how many there are."""
    visible = np.tril(np.ones(head.shape, dtype=bool))
    return int((np.abs(head[visible]) > 0).sum()), int(visible.sum())


def sparse_heads(found: dict) -> dict[str, list[tuple[int, int, int]]]:
    """Per variant the heads (numbered from 1) whose share of non-zero weights is under
    :data:`MAP_SPARSE`, each as (head, non-zero weights, weights)."""
    out: dict = {}
    for variant, m in found["maps"].items():
        for h in range(m.shape[0]):
            k, n = _nonzero(m[h])
            if k < MAP_SPARSE * n:
                out.setdefault(variant, []).append((h + 1, k, n))
    return out


def map_figure(found: dict, preset: str):
    """One row per variant, one column per head; each head's weights divided by its largest absolute
    weight (so that no panel is blank where a head's weights are small), one colour scale centred at
    zero for all; a head with almost no non-zero weight (:func:`sparse_heads`) shows their count."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    from ..plotting import stamp

    maps = found["maps"]
    if not maps:
        return None
    sparse = {(v, h - 1): (k, n) for v, heads in sparse_heads(found).items() for h, k, n in heads}
    heads = next(iter(maps.values())).shape[0]
    fig, axes = plt.subplots(len(maps), heads, figsize=(1.25 * heads + 2.6, 1.25 * len(maps) + 0.9), squeeze=False,
                             layout="constrained")
    norm = TwoSlopeNorm(vmin=-1.0, vcenter=0.0, vmax=1.0)
    im = None
    for i, (variant, m) in enumerate(maps.items()):
        for h in range(heads):
            ax = axes[i, h]
            if (variant, h) in sparse:
                k, n = sparse[(variant, h)]
                ax.text(0.5, 0.5, f"{k} of {n}\nweights\nnot zero", ha="center", va="center", fontsize=9,
                        transform=ax.transAxes)
            else:
                peak = float(np.abs(m[h]).max()) or 1.0
                im = ax.imshow(m[h] / peak, cmap="RdBu_r", norm=norm, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if i == 0:
                ax.set_title(f"head {h + 1}", fontsize=10)
        axes[i, 0].set_ylabel(show(variant).replace(" (", "\n("), fontsize=10, rotation=0, ha="right", va="center")
    if im is not None:
        cbar = fig.colorbar(im, ax=list(axes.flat), fraction=0.03, pad=0.02, shrink=0.4)
        cbar.set_label("weight ÷ the head's largest |weight|", fontsize=9)
        cbar.ax.tick_params(labelsize=9)
    fig.supxlabel(" ")                       # room for the stamp below the last row
    stamp(fig, preset, "layer 1, lowest seed with a stored map")
    return fig


def map_numbers(lm: Runs, found: dict) -> dict:
    """The window's text, where the maps come from (:func:`attention_maps` of ``lm``), which variants
    have none, each map's share of negative entries, and the heads drawn as a count of their non-zero
    weights (:func:`sparse_heads`, under ``ch07_map_sparse_share`` of them)."""
    share = {"ch07_map_sparse_share": f"{MAP_SPARSE:.0%}"}
    if not lm:
        return {**share, **dict.fromkeys(("ch07_map_window", "ch07_map_source", "ch07_map_absent", "ch07_map_neg",
                                          "ch07_map_sparse"), lm.missing)}
    by_source: dict = {}
    for v, src in found["source"].items():
        by_source.setdefault(src, []).append(show(v))
    everyone = len(by_source) == 1
    source = "; ".join(("every variant: " if everyone else ", ".join(vs) + ": ") + src for src, vs in by_source.items())
    absent = [f"{show(v)} (diverged)" for v in found["diverged"]] + [
        f"{show(v)} (its record was written before records kept a map)" for v in found["missing"]]
    neg = ", ".join(f"{show(v)} {float((m < 0).mean()):.2f}" for v, m in found["maps"].items())
    sparse = "; ".join(f"{show(v)} head{'s' if len(hs) > 1 else ''} "
                       + ", ".join(str(h) for h, _, _ in hs) + " (" + ", ".join(f"{k}" for _, k, _ in hs)
                       + f" of {hs[0][2]} weights not zero)" for v, hs in sparse_heads(found).items())
    return {**share, "ch07_map_window": repr(found["window"]).replace("`", "'") if found["window"] else "none",
            "ch07_map_source": source or "no map is stored", "ch07_map_absent": "; ".join(absent) or "none",
            "ch07_map_neg": neg or "no map is available at this preset", "ch07_map_sparse": sparse or "none"}


# --- associative recall --------------------------------------------------------------------------------------


# --- the survey article's table ---------------------------------------------------------------------------

#: The survey article's table, in its own words with a translation.
SURVEY_TABLE_NAME = "语言建模任务 (language-modelling task)"


def survey_table(lm: Runs):
    """The article's perplexity and sink strength per method beside this chapter's perplexity per
    character and sink rate, with ranks (1 = lowest) and each perplexity's ratio to softmax's."""
    if not lm:
        return None
    from ..book.deliver import styled

    survey = ca.survey_comparison(lm.frame)

    def ranked(r, col, fmt):
        return "" if r[col] != r[col] else f"{number_cell(r[col], fmt)} ({r['rank: ' + col]})"

    rows = [{"method": r["method"], "article: perplexity (rank)": ranked(r, "survey perplexity", ".4g"),
             "ratio to softmax": number_cell(r["survey ratio to softmax"], ".3f"),
             "sink strength (rank)": ranked(r, "survey sink strength", ".2f"),
             "here: perplexity per char (rank)": ranked(r, "book perplexity per char", ".3f"),
             "ratio to softmax ": number_cell(r["book ratio to softmax"], ".3f"),
             "sink rate (rank)": ranked(r, "book sink rate", ".2f")} for _, r in survey.iterrows()]
    return compact(styled(rows, (
        f"The article's table {SURVEY_TABLE_NAME} (no model, data or source given) beside this chapter's runs of "
        f"the same formulas (rank 1 = lowest; perplexity here per character). {_scale(lm)}")))


def survey_numbers(lm: Runs) -> dict:
    """How far the article's orderings agree with this chapter's (pairs of methods in the same order,
    reversed, tied), and SA-Softmax's rank at 4x the context."""
    keys = ("ch07_survey_ppl", "ch07_survey_sinks", "ch07_sa_rank")
    out = {"ch07_survey_methods": len(ca.SURVEY_TABLE),
           "ch07_survey_pairs": len(ca.SURVEY_TABLE) * (len(ca.SURVEY_TABLE) - 1) // 2}
    if not lm:
        return {**out, **dict.fromkeys(keys, lm.missing)}
    survey = ca.survey_comparison(lm.frame)

    def agreement(a, b):
        x = ca.rank_agreement(survey[a], survey[b])
        rho = f", Spearman ρ = {number_cell(x['rho'], '+.2f')}" if x["rho"] == x["rho"] else ""
        return f"{x['concordant']} in the same order, {x['discordant']} reversed, {x['ties']} tied{rho}"

    x4 = lm.frame.groupby("activation", sort=False)["test_bpc_x4"].mean().sort_values()
    return {**out, "ch07_survey_ppl": agreement("survey perplexity", "book perplexity per char"),
            "ch07_survey_sinks": agreement("survey sink strength", "book sink rate"),
            "ch07_sa_rank": f"{list(x4.index).index('SA-Softmax') + 1} of {len(x4)}"
            if "SA-Softmax" in x4.index else "not measured"}

