"""The book's answer on one screen: the register's verdicts as a compact table, the forest plot of
every polynomial-against-softmax comparison, the findings the book's own data show most clearly,
what each claim rests on (in a collapsed block on the intro) and the legend of every verdict word.
The intro page and the README lead with it; both are written from the stored records through
:mod:`polyattn.claims`, never by hand.
"""
from __future__ import annotations

import math
from pathlib import Path

from .common import REPO_ROOT

ANSWER_MARKER = "% polyattn:answer"
ANSWER_START = "<!-- answer: written by `python -m polyattn verdicts` from the claim register; do not edit -->"
ANSWER_END = "<!-- end of answer -->"
FOREST_FILE = "answer_forest.png"

#: Verdict words the chapters use besides those of the register's rule.
CHAPTER_FORMS = {
    "holds with a corrected constant": "the statement is true, but with a different constant from the paper's",
    "holds only under its assumptions": "true where the paper's assumptions hold, and shown to fail or change "
                                        "outside them",
    "fails": "the statement is false on the book's data",
    "worse": "the candidate is worse than the baseline (an interval that excludes zero, Holm-corrected)",
    "better": "the candidate is better than the baseline (likewise)",
    "measured": "a quantity measured and reported, with no claim to accept or reject",
    "mixed": "a measured row whose parts point different ways: some support the statement, some contradict it",
}


def legend_markdown() -> str:
    from ..claims.rule import LEGEND

    items = {**LEGEND, **CHAPTER_FORMS}
    return "\n".join(f"- **{k}**: {v}." for k, v in items.items())


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
    from ..claims.evaluate import arm_runs
    from ..claims.spec import Arm

    out = {}
    for act in ("softmax", "poly:p=3"):
        runs = arm_runs(Arm(grid, {"activation": act})).records
        out[act] = [last_probe(r, "attn_fro_over_sqrt_n") for r in runs.values() if r["status"] == "ok"]
    return out


def _row(v, cid: str):
    return next((r for r in v.comparisons if r.comparison.id == cid), None) if v is not None else None


def _said(v, r, what: str) -> str:
    """"x³/√N − softmax: −0.24 [−0.49, +0.01] points, equivalent within ±1 (5 pairs)", or how many pairs
    are stored when fewer than two are."""
    from ..claims.report import estimate_cell

    if r is None:
        return f"{what}: not registered"
    if r.n < 2:
        return f"{what}: {r.n} of {r.planned} planned pairs stored so far"
    result = r.result + r.qualifier
    within = f" within ±{r.margin:g}" if r.result == "equivalent" else ""
    return f"{what}: {estimate_cell(r)}, {result}{within} ({r.n} of {r.planned} planned pairs)"


def questions_markdown(verdicts: dict, links: bool = False) -> str:
    """The paper's three questions, each answered in one sentence from the register's verdicts, with
    the claims it rests on (and, with ``links``, links to their sections)."""
    from ..claims.report import section_link

    def where(cid: str) -> str:
        v = verdicts.get(cid)
        if v is None:
            return ""
        return f" ({section_link(cid, 'chapter ' + v.claim.chapter[:2])})" if links else f" (chapter {v.claim.chapter[:2]})"

    parity, conv_un = verdicts.get("table_parity"), verdicts.get("converged_unclipped")
    needed, length = verdicts.get("converged_scale_needed"), verdicts.get("length_scale_needed")
    mech, mech_un = verdicts.get("norm_intervention"), verdicts.get("norm_intervention_unclipped")
    first = (f"1. **Does $x^3/\\sqrt{{N}}$ match softmax?** On Fashion-MNIST with the micro ViT trained to "
             f"convergence, the verdict is **{parity.form if parity else 'not registered'}**: "
             f"{_said(parity, _row(parity, 'converged'), 'x³/√N − softmax, gradients clipped')}{where('table_parity')}; "
             f"without clipping, the paper's own recipe, "
             f"{_said(conv_un, _row(conv_un, 'cube_sqrt_n'), 'x³/√N − softmax')}{where('converged_unclipped')}. "
             "On the other tasks the answer differs by task: see the table.")
    second = (f"2. **Is the $1/\\sqrt{{N}}$ factor needed?** At convergence with clipping the verdict on \"the "
              f"unscaled $x^3$ is worse\" is **{needed.form if needed else 'not registered'}**: "
              f"{_said(needed, _row(needed, 'cube_vs_scaled_converged'), 'x³ − x³/√N')}{where('converged_scale_needed')}; "
              f"without clipping, {_said(conv_un, _row(conv_un, 'cube_vs_scaled'), 'x³ − x³/√N')}; "
              f"varying the length $N$ itself (character model at $T$ = 1024), "
              f"{_said(length, _row(length, 'cube_vs_row_1024'), 'x³ − x³/√(i+1)')}{where('length_scale_needed')}.")
    third = (f"3. **Does the norm bound explain why softmax works?** The intervention reads "
             f"**{mech.form if mech else 'not registered'}**: "
             f"{_said(mech, _row(mech, 'necessity'), 'lifting the bound (8·softmax − softmax)')}; "
             f"{_said(mech, _row(mech, 'sufficiency_contrast'), 'imposing it (capped − uncapped x³/√N)')}"
             f"{where('norm_intervention')}; without clipping and with the output scale compensated, "
             f"{_said(mech_un, _row(mech_un, 'necessity'), '8·softmax − softmax')}{where('norm_intervention_unclipped')}. "
             "Trained $x^3/\\sqrt{N}$ also leaves $\\lVert A\\rVert_F$ far above softmax's (the first finding below).")
    return "\n".join((first, second, third))


def findings_markdown(verdicts: dict) -> str:
    """The findings the book's data show most clearly, as Markdown bullets with their numbers."""
    from ..claims.report import estimate_cell, fixed

    lines = []
    conv, t1 = norm_regime("vit_converged"), norm_regime("vit_table1")
    parity = verdicts.get("table_parity")
    conv_cmp = next((r for r in parity.comparisons if r.comparison.tier == "converged"), None) if parity else None
    if conv["poly:p=3"] and conv["softmax"] and conv_cmp is not None and conv_cmp.n >= 2:
        above = sum(v > 1 for v in conv["poly:p=3"])
        lines.append(
            f"- **Trained $x^3/\\sqrt{{N}}$ does not keep $\\lVert A \\rVert_F$ where softmax keeps it.** At the last "
            f"probe of the converged tier $\\lVert A\\rVert_F/\\sqrt{{N}}$ is {fixed(min(conv['poly:p=3']), 2)} to "
            f"{fixed(max(conv['poly:p=3']), 2)} over its {len(conv['poly:p=3'])} runs (above softmax's bound of 1 in "
            f"{above}) against {fixed(min(conv['softmax']), 2)} to {fixed(max(conv['softmax']), 2)} for softmax, and "
            f"{fixed(sum(t1['poly:p=3']) / max(1, len(t1['poly:p=3'])), 2)} on average in the Table 1 analogue; yet "
            f"its converged accuracy differs from softmax's by {estimate_cell(conv_cmp)}. Similar accuracy does "
            f"not come from a similar norm.")
    for cid, text in (("mqar", "**At the book's budget, on associative recall (MQAR) every cubic variant stays behind "
                               "softmax.**"),
                      ("nope_lm", "**Without position encodings the cubic language models are worse than "
                                  "softmax.**")):
        v = verdicts.get(cid)
        if v is None:
            continue
        done = [r for r in v.comparisons if r.n >= 2]
        if not done:
            continue
        parts = "; ".join(f"{r.comparison.label}: {estimate_cell(r)} ({r.n} pairs, Holm p {_p(r.holm_p)})"
                          for r in done)
        lines.append(f"- {text} {parts} ({v.claim.scale}).")
        longer = verdicts.get(LONGER_BUDGET.get(cid, ""))
        done_longer = [r for r in longer.comparisons if r.n >= 2] if longer is not None else []
        if done_longer:
            lines[-1] += (f" With more training ({longer.claim.scale}) the comparisons read "
                          f"**{longer.form}**: "
                          + "; ".join(f"{r.comparison.label}: {estimate_cell(r)} ({r.n} pairs)" for r in done_longer)
                          + f"; chapter {longer.claim.chapter[:2]} says which seeds learn the task.")
    lra = _lra_longer(verdicts.get("lra_long"))
    if lra:
        lines.append(lra)
    return "\n".join(lines)


def _lra_longer(longer) -> str:
    """The LRA finding: each longer-budget comparison with two pairs beside the same comparison at
    the book's steps, and what the longer runs did to the gaps; "" before such a pair exists."""
    from ..claims.budget import budget_summary, shorter_pairs
    from ..claims.report import estimate_cell

    if longer is None or not any(r.n >= 2 for r in longer.comparisons):
        return ""
    pairs = [p for p in shorter_pairs(longer) if p.longer.n >= 2]
    parts = "; ".join(f"{p.label}: {estimate_cell(p.shorter)} at the book's steps, {estimate_cell(p.longer)} with "
                      f"more ({p.longer.n} pairs, {p.longer.result}{p.longer.qualifier})" for p in pairs)
    return (f"- **Long Range Arena with more training steps: did the cubic variants' gaps to softmax survive?** "
            f"{parts} ({longer.claim.scale}). {budget_summary(pairs)}")


#: The claim that retests a finding with a larger training budget.
LONGER_BUDGET = {"mqar": "mqar_long"}


def _p(p: float) -> str:
    from ..claims.report import p_relation

    return p_relation(p)


def answer_block(verdicts: dict | None = None, links: bool = False) -> str:
    """The README's answer block (and, with ``links``, the intro's table part)."""
    from ..claims.evaluate import evaluate_all
    from ..claims.report import answer_markdown

    verdicts = evaluate_all() if verdicts is None else verdicts
    table = answer_markdown(verdicts, links=links)
    note = ("Each row is a claim of the paper or of its reviewers, computed from the stored `book`-preset records "
            "by one rule over the comparisons the claim is about (the legend below); † marks a claim whose margin, "
            "rule or chance level was fixed after some of its runs were seen; (interim) marks a key comparison "
            "with fewer pairs than planned.")
    return (f"{questions_markdown(verdicts, links=links)}\n\n{note}\n\n{table}\n\n{legend_markdown()}\n\n"
            f"{findings_markdown(verdicts)}")


def intro_answer(src: Path, verdicts: dict | None = None) -> str:
    """The intro's answer (table with links, forest plot written next to the page, findings, legend)."""
    import matplotlib

    matplotlib.use("Agg")
    from ..claims.evaluate import evaluate_all
    from ..claims.report import forest_plot

    verdicts = evaluate_all() if verdicts is None else verdicts
    fig = forest_plot(verdicts)
    fig.savefig(Path(src) / FOREST_FILE, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    figure = ("```{figure} " + FOREST_FILE + "\n:name: answer-forest\n:width: 100%\n\n"
              "Every comparison of a polynomial with softmax that the book has stored, in units of its claim's "
              "margin (right: the polynomial did better).  Green bars sit inside the margin; orange ones show "
              "the polynomial worse; grey ones cannot tell at these seeds.\n```")
    return (f"{answer_block(verdicts, links=True)}\n\n{figure}\n\n{scope_dropdown(verdicts)}\n\n"
            f"**What the verdict words mean.**\n\n{legend_markdown()}\n")


SCOPE_TITLE = "What each claim rests on: data, length, steps, seeds and compute"


def scope_dropdown(verdicts: dict) -> str:
    """A collapsed block under the forest plot: per claim, the experiments and data its comparisons
    read, N, training length, paired seeds and the CPU-hours of those runs."""
    from ..claims.scope import scope_markdown

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
