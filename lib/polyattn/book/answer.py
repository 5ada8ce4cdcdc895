"""The book's answer on one screen: the three questions answered in a sentence each
(:mod:`polyattn.book.questions`), the register's verdicts as a compact table keyed by each claim's
deciding comparison (:mod:`polyattn.book.answer_rows`), its forest plot (:mod:`polyattn.book.forest`),
the findings the book's own data show most clearly,
what each claim rests on (in a collapsed block on the intro) and the legend of every verdict word.
The intro page and the README lead with it; both are written from the stored records through
:mod:`polyattn.claims`, never by hand.
"""
from __future__ import annotations

import math
from pathlib import Path

from ..analysis.results import RESULT_LEGEND
from ..claims.budget import budget_summary, shorter_pairs
from ..claims.evaluate import arm_runs, evaluate_all
from ..claims.report import estimate_cell, key_cell
from ..claims.rule import LEGEND
from ..claims.scope import scope_markdown
from ..claims.spec import Arm
from ..numbers import fixed, p_relation
from .answer_rows import answer_rows, legend_line, table_markdown
from .common import REPO_ROOT, register_grids
from .forest import save_forest
from .questions import questions_markdown

ANSWER_MARKER = "% polyattn:answer"
ANSWER_START = "<!-- answer: written by `python -m polyattn verdicts` from the claim register; do not edit -->"
ANSWER_END = "<!-- end of answer -->"
FOREST_FILE = "answer_forest.svg"

#: Where the intro shows what a comparison's result means (filled by :func:`result_legend_markdown`).
RESULT_LEGEND_MARKER = "% polyattn:result-legend"


def legend_markdown() -> str:
    """What each verdict word means: one line per form of :data:`polyattn.claims.rule.LEGEND`."""

    return "\n".join(f"- **{k}**: {v}." for k, v in LEGEND.items())


def result_legend_markdown() -> str:
    """What each comparison's result means: one line per result of
    :data:`polyattn.analysis.results.RESULT_LEGEND`, as :func:`~polyattn.analysis.results.comparison_result`
    decides it."""

    return "\n".join(f"- *{k}*: {v}." for k, v in RESULT_LEGEND.items())


def last_probe(record: dict, metric: str) -> float:
    """A probe metric at a run's last probe step, averaged over layers and heads."""
    rows = [p for p in record.get("probes") or [] if p["metric"] == metric]
    if not rows:
        return math.nan
    last = max(p["step"] for p in rows)
    vals = [p["value"] for p in rows if p["step"] == last]
    return sum(vals) / len(vals)


def norm_regime(grid: str = "vit_converged") -> dict[str, list[float]]:
    """||A||_F / sqrt(N) at the last probe, per stored run of softmax and x^3/sqrt(N) in ``grid``."""

    register_grids()

    out = {}
    for act in ("softmax", "poly:p=3"):
        runs = arm_runs(Arm(grid, {"activation": act})).records
        out[act] = [last_probe(r, "attn_fro_over_sqrt_n") for r in runs.values() if r["status"] == "ok"]
    return out


def findings_markdown(verdicts: dict) -> str:
    """The findings the book's data show most clearly, as Markdown bullets with their numbers."""

    lines = []
    conv, t1 = norm_regime("vit_converged"), norm_regime("vit_table1")
    parity = verdicts.get("table_parity")
    conv_cmp = next((r for r in parity.comparisons if r.comparison.tier == "converged"), None) if parity else None
    if conv["poly:p=3"] and conv["softmax"] and conv_cmp is not None and conv_cmp.n >= 2:
        above = sum(v > 1 for v in conv["poly:p=3"])
        head = ("Trained $x^3/\\sqrt{N}$ does not keep $\\lVert A \\rVert_F$ where softmax keeps it." if above else
                "Does trained $x^3/\\sqrt{N}$ keep $\\lVert A \\rVert_F$ where softmax keeps it?")
        lines.append(
            f"- **{head}** At the last "
            f"probe of the converged tier $\\lVert A\\rVert_F/\\sqrt{{N}}$ is {fixed(min(conv['poly:p=3']), 2)} to "
            f"{fixed(max(conv['poly:p=3']), 2)} over its {len(conv['poly:p=3'])} runs (above softmax's bound of 1 in "
            f"{above}) against {fixed(min(conv['softmax']), 2)} to {fixed(max(conv['softmax']), 2)} for softmax, and "
            f"{fixed(sum(t1['poly:p=3']) / max(1, len(t1['poly:p=3'])), 2)} on average in the Table 1 analogue; yet "
            f"its converged accuracy differs from softmax's by {estimate_cell(conv_cmp)}."
            + (" Similar accuracy does not come from a similar norm." if above else ""))
    recall = _recall_finding(verdicts.get("mqar_recall"), verdicts.get("mqar"), verdicts.get("mqar_long"))
    if recall:
        lines.append(recall)
    nope = verdicts.get("nope_lm")
    done = [r for r in nope.comparisons if r.n >= 2] if nope is not None else []
    if done:
        lines.append(f"- **Without position encodings, are the cubic language models worse than softmax?** "
                     f"The claim reads **{nope.form}**: "
                     + "; ".join(f"{r.comparison.label}: {estimate_cell(r)} ({r.n} pairs, Holm p {_p(r.holm_p)})"
                                 for r in done)
                     + f" ({nope.claim.scale}).")
    lra = _lra_longer(verdicts.get("lra_long"))
    if lra:
        lines.append(lra)
    physics = _physics_longer(verdicts.get("physics_poly"), verdicts.get("physics_long"))
    if physics:
        lines.append(physics)
    return "\n".join(lines)


def _physics_longer(short, longer) -> str:
    """The convection finding: how many of x^3/sqrt(N)'s seeds solve it (rMAE below the registered
    failure level) at the book's L-BFGS budget and at the longer one; "" before both have runs."""
    if short is None or longer is None:
        return ""
    at = lambda v: next((r for r in v.comparisons if "convection" in r.comparison.label and r.learned_counts), None)
    a, b = at(short), at(longer)
    if a is None or b is None or a.n < 2 or b.n < 2:
        return ""
    closes = a.learned_counts[0] < a.n and b.learned_counts[0] == b.n
    head = ("On convection the cubic's gap is training speed." if closes else
            "On convection, does more training close the cubic's gap?")
    return (f"- **{head}** $x^3/\\sqrt{{N}}$ solves it in "
            f"{a.learned_counts[0]} of {a.n} seeds at the book's L-BFGS budget (softmax {a.learned_counts[1]} of "
            f"{a.n}; {short.claim.scale}) and in {b.learned_counts[0]} of {b.n} with more steps (softmax "
            f"{b.learned_counts[1]} of {b.n}; {longer.claim.scale}), where the comparison reads "
            f"**{b.result}**.")


def _lra_longer(longer) -> str:
    """The LRA finding: each longer-budget comparison with two pairs beside the same comparison at
    the book's steps, and what the longer runs did to the gaps; "" before such a pair exists."""

    if longer is None or not any(r.n >= 2 for r in longer.comparisons):
        return ""
    pairs = [p for p in shorter_pairs(longer) if p.longer.n >= 2]
    parts = "; ".join(f"{p.label}: {key_cell(p.shorter)} at the book's steps, {key_cell(p.longer)} with "
                      f"more ({p.longer.n} pairs, {p.longer.result}{p.longer.qualifier})" for p in pairs)
    return (f"- **Long Range Arena with more training steps: did the cubic variants' gaps to softmax survive?** "
            f"{parts} ({longer.claim.scale}). {budget_summary(pairs)}")


def _recall_finding(recall, short, longer) -> str:
    """The recall finding: first the setting where softmax learns recall (the tier designed to
    decide), per variant the seeds that learned it and the claim's verdict; then the book's budget
    and ten times it (description); "" before any pair."""

    parts = []
    done = [r for r in recall.comparisons if r.comparison.role == "primary" and r.n and r.learned_counts] \
        if recall is not None else []
    if done:
        soft = done[0].learned_counts
        counts = "; ".join(f"{r.comparison.label.split(' − ')[0]} {r.learned_counts[0]} of {r.learned_counts[2]}"
                           for r in done)
        parts.append(f"Where softmax learns it ({recall.claim.scale}), the seeds that learned recall: softmax "
                     f"{soft[1]} of {soft[2]}; {counts}. The claim that the cubic variants match softmax there "
                     f"reads **{recall.form}**.")
    done = [r for r in short.comparisons if r.n >= 2] if short is not None else []
    if done:
        means = "; ".join(f"{r.comparison.label.split(' − ')[0]} {fixed(r.candidate_mean, 2)}%" for r in done)
        parts.append(f"At the book's budget ({short.claim.scale}) softmax scores {fixed(done[0].baseline_mean, 1)}% "
                     f"on average; {means}; {sum(r.learned_counts[0] for r in done)} of {sum(r.n for r in done)} "
                     f"cubic runs are above chance ({fixed(short.claim.chance, 2)}%) by the registered band.")
    done = [r for r in longer.comparisons if r.n >= 2] if longer is not None else []
    if done:
        parts.append(f"With more training ({longer.claim.scale}) the comparisons read **{longer.form}**: "
                     + "; ".join(f"{r.comparison.label}: {key_cell(r)} ({r.n} pairs)" for r in done)
                     + f"; chapter {longer.claim.chapter[:2]} says which seeds learn the task.")
    return "- **Associative recall (MQAR).** " + " ".join(parts) if parts else ""


def _p(p: float) -> str:

    return p_relation(p)


def answer_block(verdicts: dict | None = None, links: bool = False) -> str:
    """The README's answer block (and, with ``links``, the intro's table part)."""

    register_grids()
    verdicts = evaluate_all() if verdicts is None else verdicts
    rows = answer_rows(verdicts)
    table = table_markdown(rows, links=links)
    if links:  # on the site: in the compact type of the site's answer-table class
        table = f":::{{container}} answer-table\n{table}\n:::"
    note = ("Every claim's verdict, computed from the stored `book` records by one rule over the comparisons it is "
            "about (legend below); its key number is its deciding comparison.")
    marks = legend_line(rows)
    return (f"{questions_markdown(verdicts, links=links)}\n\n" + (f"{marks}\n\n" if marks else "")
            + f"{table}\n\n{note}\n\n**What the verdict words mean.**\n\n{legend_markdown()}\n\n"
            f"{findings_markdown(verdicts)}")


def intro_answer(src: Path, verdicts: dict | None = None) -> str:
    """The intro's answer (table with links, forest plot written next to the page, findings, legend)."""
    import matplotlib

    matplotlib.use("Agg")

    register_grids()
    verdicts = evaluate_all() if verdicts is None else verdicts
    save_forest(answer_rows(verdicts), Path(src) / FOREST_FILE)
    figure = ("```{figure} " + FOREST_FILE + "\n:name: answer-forest\n:width: 100%\n"
              ":alt: One row per claim of the answer table, in its order: the deciding comparison's difference "
              "and 95% interval in its own unit, each row's margin shaded, grey rows untested\n\n"
              "The answer table as a forest plot: each claim's deciding comparison, candidate minus baseline with "
              "its 95% interval, in its own unit (one panel per unit; the shaded band is that row's margin, fixed "
              "before the runs).  Colours give the comparison's result (legend); grey rows test nothing (a gate or "
              "a check failed); an arrow marks an interval that runs past the frame, its estimate written beside "
              "it.  Each chapter shows every comparison of its claims.\n```")
    return f"{answer_block(verdicts, links=True)}\n\n{figure}\n\n{scope_dropdown(verdicts)}\n"


SCOPE_TITLE = "What each claim rests on: data, length, steps, seeds and compute"


def scope_dropdown(verdicts: dict) -> str:
    """A collapsed block under the forest plot: per claim, the experiments and data its comparisons
    read, N, training length, paired seeds and the CPU-hours of those runs."""

    note = ("One row per claim with stored runs: the experiments its comparisons read and their data; *N*, "
            "the sequence length the attention trained at; how long each run trained, and how many seeds each "
            "comparison pairs; the *CPU-hours* of every run the claim reads (wall time on one thread, each run "
            "counted once).")
    return f"```{{dropdown}} {SCOPE_TITLE}\n{note}\n\n{scope_markdown(verdicts, links=True)}\n```"


def replace_answer(readme_text: str, block: str) -> str:
    if ANSWER_START not in readme_text or ANSWER_END not in readme_text:
        raise ValueError(f"README.md has no answer markers; add the lines {ANSWER_START!r} and {ANSWER_END!r}")
    head, rest = readme_text.split(ANSWER_START, 1)
    _, tail = rest.split(ANSWER_END, 1)
    return f"{head}{ANSWER_START}\n{block}\n{ANSWER_END}{tail}"


def write_answer(root: Path = REPO_ROOT) -> bool:
    """Write the README's answer block from the stored records; True when it changed (a tree
    whose README has no answer markers is left alone)."""
    readme = Path(root) / "README.md"
    if not readme.exists() or ANSWER_START not in readme.read_text():
        return False
    text = readme.read_text()
    new = replace_answer(text, answer_block())
    if new != text:
        readme.write_text(new)
        return True
    return False
