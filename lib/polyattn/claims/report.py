"""What the register's verdicts look like on a page: the answer table, one sentence per claim, a
table per claim, and the forest plot of every polynomial-against-softmax comparison.

Numbers follow the book's one policy (:mod:`polyattn.numbers`): about three significant figures,
signs on differences, intervals in brackets in one cell, "n/a" for a missing number.
"""
from __future__ import annotations

import math
from typing import Iterable, Optional

from ..numbers import fixed, p_relation, p_value, percent, significant
from ..numbers import interval as bracket
from .design import MAX_SEEDS, UNREACHABLE, pairs_needed
from .evaluate import ClaimVerdict, ComparisonResult
from .register import HEADLINE, HEADLINES, TOPIC_NAMES, answer_ids  # noqa: F401  (HEADLINE(S) read from here)
from .rule import exact_interval

#: ``HEADLINE`` and ``HEADLINES``, the answer table's claims in order and their short names, are read from
#: the claims themselves (``answer_row`` and ``headline``, :class:`polyattn.claims.spec.Claim`).

#: The chapter each claim's section lives in, for links.
CHAPTER_TITLES = {"03_norms": "chapter 03", "04_vit": "chapter 04", "05_lra": "chapter 05", "06_physics": "chapter 06",
                  "07_causal": "chapter 07", "09_critiques": "chapter 09", "10_architectures": "chapter 10"}


def _decimals(r: ComparisonResult) -> int:
    """Decimals for a comparison's numbers: two for margins of a fifth of a unit or more, else three."""
    margin = getattr(r, "margin", 1.0)
    return 2 if margin >= 0.2 else 3


_PLAIN = ((r"\lVert A \rVert_F", "‖A‖_F"), (r"\lVert A\rVert_F", "‖A‖_F"), (r"\sqrt{N}", "√N"), (r"\sqrt{T}", "√T"),
          ("^3", "³"), ("^2", "²"), (r"\cdot", "·"), (r"\mathrm{softmax}", "softmax"), (r"\le ", "≤ "),
          (r"\pm", "±"), ("$", ""))


def plain(text: str) -> str:
    """Markdown maths made plain Unicode, for places that do not render maths (captions, legends)."""
    import re

    for a, b in _PLAIN:
        text = text.replace(a, b)
    # any other square root: √x for one symbol, √(i+1) for more
    return re.sub(r"\\sqrt\{([^}]*)\}", lambda m: "√" + (m.group(1) if len(m.group(1)) == 1 else f"({m.group(1)})"),
                  text)


def interval(r: ComparisonResult, level: int = 95) -> str:
    """A comparison's 95% (or 90%) interval, "[−0.49, +0.01]"; "n/a" without one."""
    lo, hi = (r.ci_low, r.ci_high) if level == 95 else (r.ci90_low, r.ci90_high)
    return bracket(lo, hi, f"+.{_decimals(r)}f")


def estimate_cell(r: ComparisonResult) -> str:
    """"−0.24 [−0.49, +0.01] points": the difference and its 95% interval in one cell."""
    if r.n == 0:
        return "no runs yet"
    unit = f" {r.unit}" if r.unit and r.unit != "log10" else (" (log10)" if r.unit == "log10" else "")
    d = _decimals(r)
    if r.n < 2:
        return f"{fixed(r.mean, d, True)}{unit} (1 pair)"
    return f"{fixed(r.mean, d, True)} {interval(r)}{unit}"


def read_as_counts(r: ComparisonResult) -> bool:
    """Whether a comparison is read as counts of seeds that learned, not as a mean difference: an
    arm's seeds fall on both sides of the chance band (a bimodal outcome, whose mean and interval
    describe no seed), whatever the result (split, did not learn, uninformative)."""
    return bool(r.learned_counts) and (r.result == "split" or r.split)


def key_cell(r: ComparisonResult) -> str:
    """A comparison's key number in one cell: :func:`estimate_cell`, except for a comparison read as
    counts (:func:`read_as_counts`): "seeds that learned: 1 of 2 against 1 of 2"."""
    if read_as_counts(r):
        kc, kb, n = r.learned_counts
        return f"seeds that learned: {kc} of {n} against {kb} of {n}"
    return estimate_cell(r)


def _key(v: ClaimVerdict) -> Optional[ComparisonResult]:
    """The comparison that carries a claim's verdict, always a primary when one has runs (a claim
    not testable as designed is keyed by its primary, and its failed check is named in the
    summary): a contradicting primary for one not supported, else the first informative primary of
    the deciding tier that has runs, else its first primary."""
    has = [r for r in v.comparisons if r.n >= 2]
    if not has:
        return None
    primary = [r for r in has if r.comparison.role == "primary"]
    if v.form == "not supported":
        con = [r for r in primary if r.outcome == "contradicts"]
        if con:
            return con[0]
    tier = v.claim.deciding_tier
    first = [r for r in primary if tier is None or r.comparison.tier == tier]
    informative = [r for r in first if r.outcome != "uninformative"]
    return (informative or first or primary or has)[0]


def sentence(v: ClaimVerdict) -> str:
    """The claim's verdict in one Markdown sentence: its form in bold, then :func:`summary`."""
    return f"**{v.form}**. {summary(v)}"


def _counts(r: ComparisonResult) -> str:
    """"2 of 3 seeds learned the task against 3 of 3": a split comparison's counts with exact intervals."""

    kc, kb, n = r.learned_counts
    lo, hi = exact_interval(kc, n)
    return (f"{kc} of {n} seeds of the candidate learned the task (95% exact interval {percent(lo)} to {percent(hi)}) "
            f"against {kb} of {n} of the baseline")


def _status(r: ComparisonResult) -> str:
    """Why a comparison says nothing, or what its checks leave open ("" when neither)."""
    if r.voided_why:
        return f" ({r.voided_why})"
    if r.voided_by is not None:
        why = "its positive control failed" if r.result == "cannot see attention" else "its control moved"
        return f" ({why}: {r.voided_by})"
    if r.gate_failed:
        return f" (the models did not learn beyond {r.gate})"
    return f" ({r.check_note})" if r.check_note else ""


def _comparison_text(r: ComparisonResult, decides: bool = True) -> str:
    """One comparison in words; ``decides=False`` for a tier that describes (no detectable effect,
    no pairs needed: more seeds there would decide nothing)."""
    res = r.result + r.qualifier
    if read_as_counts(r):
        test = f", Fisher exact p {p_relation(r.counts_p)}" if math.isfinite(r.counts_p) else ""
        if math.isfinite(r.counts_p) and r.family_size > 1 and math.isfinite(r.holm_p):
            test += f" (Holm p {p_relation(r.holm_p)})"
        return f"{r.comparison.label}: {_counts(r)}{test}, {res}{_status(r)}"
    word = "Holm p" if r.comparison.role == "primary" else "p"
    # a 95% interval that excludes 0 beside "inconclusive": the Holm correction is what kept it open
    excludes = r.n >= 2 and (r.ci_low > 0 or r.ci_high < 0)
    extra = (f", {word} {p_relation(r.holm_p)}" if r.result.startswith(("worse", "better")) or r.qualifier
             or (r.result == "inconclusive" and excludes and math.isfinite(r.holm_p)) else "")
    if r.result == "equivalent":
        extra += f", 90% interval {interval(r, 90)} inside ±{r.margin:.3g}"
    if r.result.startswith(("worse", "better")) and r.family_size > 1 and math.isfinite(r.adj_low):
        extra += (f", Bonferroni-adjusted interval for {r.family_size} comparisons "
                  f"{bracket(r.adj_low, r.adj_high, f'+.{_decimals(r)}f')}")
    interim = f"{r.n} of {r.planned} planned pairs" if r.n < r.planned else f"{r.n} pairs"
    text = f"{r.comparison.label}: {estimate_cell(r)} ({interim}{extra}), {res}{_status(r)}"
    cells = r.cell_estimates
    if cells and len(cells) > 1:
        means = [m for m, *_ in cells.values()]
        text += (f"; its cells run from {fixed(min(means), _decimals(r), True)} to {fixed(max(means), _decimals(r), True)}"
                 + (", in opposite directions beyond their intervals, so no pooled number stands for them"
                    if r.cells_disagree else ""))
    if decides and r.outcome == "open" and r.comparison.role == "primary" and r.mde is not None \
            and math.isfinite(r.mde):
        text += f"; these seeds detect about ±{significant(r.mde)}"

        need = pairs_needed(r.sd, r.margin, r.comparison.expect, r.mean)
        if need == UNREACHABLE:
            text += "; at the observed difference no number of seeds decides it"
        elif need is not None and need > r.n:
            text += (f"; deciding needs about {need} pairs" if need <= MAX_SEEDS else
                     f"; deciding needs {'over 1,000' if need > 1000 else f'about {need}'} pairs, more than this "
                     "book can run")
    return text


def direction_text(d: dict, decimals: int = 2) -> str:
    """A comparison measured at several tiers in words: how many tiers point each way, and the
    pooled (inverse-variance) estimate of the deciding tiers."""
    k = len(d["tiers"])
    unit = f" {d['unit']}" if d["unit"] and d["unit"] != "log10" else ""
    name = short_label(d["label"]).split(",")[0]
    text = (f"across {k} tiers ({', '.join(d['tiers'])}) {name} favours the candidate in "
            f"{d['favour_candidate']} and the baseline in {d['favour_baseline']}")
    if math.isfinite(d["pooled"]):
        which = ("the deciding tier alone" if len(d["pooled_tiers"]) == 1 else
                 f"pooled over {len(d['pooled_tiers'])} tiers by inverse variance")
        text += (f"; {which}: {fixed(d['pooled'], decimals, True)} "
                 f"{bracket(d['pooled_low'], d['pooled_high'], f'+.{decimals}f')}{unit}")
    return text


def summary(v: ClaimVerdict) -> str:
    """The primary comparisons with runs (what is missing, the detectable effect of each open one at
    the claim's Holm level), those of the deciding tier first and the other tiers' after them as
    description, a description registered to be shown beside a primary right after it, the parts
    that could not be tested, the checks (open ones said to be open), the direction across tiers,
    the multiplicity rule, the margin and scale, and any note on when the margin, the rule, the
    chance level, the gate or the deciding tier was fixed (the sentence without its form)."""
    primary = [r for r in v.comparisons if r.n >= 2 and r.comparison.role == "primary"]
    checks = [r for r in v.comparisons if r.comparison.role == "check"]
    beside = {}
    for r in v.comparisons:
        if r.comparison.role == "description" and r.comparison.shown_with and r.n >= 2:
            beside.setdefault(r.comparison.shown_with, []).append(r)
    tier = v.claim.deciding_tier
    deciding = [r for r in primary if tier is None or r.comparison.tier == tier]
    others = [r for r in primary if r not in deciding]

    def with_beside(r):
        text = _comparison_text(r)
        for b in beside.get(r.comparison.id, []):
            text += f"; beside it, {_comparison_text(b, decides=False)}"
        return text

    text = ("; ".join(with_beside(r) for r in deciding) if deciding else
            f"No primary comparison of the {tier} tier has two paired runs yet" if tier else
            "No primary comparison has two paired runs yet")
    if v.untestable and v.form == "partly testable":
        text += (f". Partly testable: {len(v.untestable)} of {len(deciding)} parts could not be tested ("
                 + "; ".join(v.untestable) + ")")
        if v.parts_form:
            text += f"; the testable parts read *{v.parts_form}*"
    elif v.untestable and v.form not in ("not testable as designed", "inconclusive at this scale"):
        text += ". Not tested: " + "; ".join(v.untestable)
    if others:
        text += ". As description, the other tiers: " + "; ".join(_comparison_text(r, decides=False) for r in others)
    ran = [r for r in checks if r.n >= 2]
    if ran:
        text += ". Checks of the design: " + "; ".join(
            _comparison_text(r) + (" (failed)" if r.outcome == "contradicts" else
                                   "" if r.outcome == "supports" else " (open)") for r in ran)
    waiting = [r for r in checks if r.n < 2]
    if waiting:
        text += ". Checks with no runs yet (open): " + "; ".join(r.comparison.label for r in waiting)
    if v.directions:
        text += ". Direction: " + "; ".join(direction_text(d, 2 if v.claim.margin >= 0.2 else 3)
                                             for d in v.directions)
    stored = sum(r.n for r in v.comparisons if r.comparison.role == "primary")
    planned = sum(r.planned for r in v.comparisons if r.comparison.role == "primary")
    if stored < planned:
        text += f" (interim: {stored} of {planned} planned pairs stored)"
    text += f". Margin ±{v.claim.margin:.3g}"
    own = [c for c in v.claim.comparisons if c.margin is not None and c.margin != v.claim.margin]
    if own:
        text += " (" + "; ".join(f"{c.label}: ±{c.margin:.3g}" for c in own) + ")"
    if v.family and len(deciding) > 1:
        text += f"; {v.family}"
        if any(r.comparison.cited_from for r in deciding):
            text += " (a cited comparison keeps the adjustment of the claim that owns it)"
    if v.claim.deciding_tier:
        text += f"; the {v.claim.deciding_tier} tier decides, the others are description"
        if v.claim.deciding_tier_after:
            text += f" (chosen after the data: {v.claim.deciding_tier_after})"
    if v.claim.scale:
        text += f"; {v.claim.scale}"
    text += "."
    if v.claim.registered_after:
        text += f" *Registered late: {v.claim.registered_after}.*"
    if v.claim.chance_registered_after:
        text += f" *Chance level registered late: {v.claim.chance_registered_after}.*"
    if v.claim.gate_registered_after:
        text += f" *Gate registered late: {v.claim.gate_registered_after}.*"
    return text


def comparison_rows(v: ClaimVerdict) -> list[dict]:
    """One row per comparison, with readable column names, for a chapter's table.  A comparison
    read as counts (:func:`read_as_counts`: some seeds learned, some did not) gives them
    (:func:`key_cell`) without the intervals and p-values of a mean difference, which describe no
    seed of a bimodal outcome."""
    rows = []
    for r in v.comparisons:
        split = read_as_counts(r)
        rows.append({"Comparison": r.comparison.label, "Role": r.comparison.role, "Expects": r.comparison.expect,
                     "Pairs": f"{r.n} of {r.planned}", "Difference [95% CI]": key_cell(r),
                     "90% CI": interval(r, 90) if r.n >= 2 and not split else "",
                     "Holm p": "" if split else p_value(r.holm_p), "TOST p": "" if split else p_value(r.tost_p),
                     "Result": r.result + r.qualifier + _status(r), "Outcome": r.outcome})
    return rows


def answer_rows(verdicts: dict[str, ClaimVerdict], ids: Optional[Iterable[str]] = None,
                pending: bool = False) -> list[dict]:
    """The answer table (``ids``; default the claims with an ``answer_row``): one line per claim with stored
    runs, its short name (its ``headline``) and
    statement, its verdict word and key number, with its comparison (``key number``) and in short
    (``short key``: the comparison is named only when the claim has several primary comparisons and
    no deciding tier, so that a reader knows which one it is).  With ``pending``, a claim whose planned
    runs are none of them stored is a row too, its verdict "pending" (else it is left out)."""
    rows = []
    for cid in answer_ids() if ids is None else ids:
        v = verdicts.get(cid)
        if v is None:
            continue
        key = _key(v)
        if key is None:
            if pending and v.form == "pending":
                planned = sum(r.planned for r in v.comparisons if r.comparison.role == "primary")
                rows.append({"id": cid, "claim": v.claim.headline or v.claim.statement, "statement": v.claim.statement,
                             "verdict": "pending", "key number": f"0 of {planned} planned pairs stored",
                             "short key": f"0 of {planned} planned pairs stored", "chapter": v.claim.chapter,
                             "late": False, "interim": False})
            continue
        primaries = {r.comparison.label for r in v.comparisons if r.comparison.role == "primary"}
        named = len(primaries) > 1 and not v.claim.deciding_tier or key.comparison.role != "primary"
        number_ = key_cell(key)
        rows.append({"id": cid, "claim": v.claim.headline or v.claim.statement, "statement": v.claim.statement,
                     "verdict": v.form, "key number": f"{key.comparison.label}: {number_}",
                     "short key": f"{short_label(key.comparison.label)}: {number_}" if named else number_,
                     "chapter": v.claim.chapter, "late": bool(v.claim.registered_after or v.claim.chance_registered_after
                                 or v.claim.gate_registered_after),
                     "interim": key.n < key.planned})
    return rows


def section_label(claim_id: str) -> str:
    """The MyST target of the section that computes a registered claim: ``claim-`` and the id
    with hyphens for underscores (``table_parity`` -> ``claim-table-parity``).  The claim's
    chapter puts ``(claim-table-parity)=`` on the line before that section's heading."""
    return "claim-" + claim_id.replace("_", "-")


def section_link(claim_id: str, text: str) -> str:
    """A MyST reference to the section that computes ``claim_id`` (:func:`section_label`), shown
    as ``text``; it resolves from any page of the book."""
    return f"{{ref}}`{text} <{section_label(claim_id)}>`"


def answer_markdown(verdicts: dict[str, ClaimVerdict], ids: Optional[Iterable[str]] = None, links: bool = True,
                    short: bool = True) -> str:
    """The answer table as Markdown, one row per claim: its short name (:data:`HEADLINES`; with
    ``short=False`` its full statement), verdict and key number.  With ``links`` the claim links to the
    section that computes it (:func:`section_link`); without them a short name also names the chapter."""
    lines = ["| claim | verdict | key number |", "| --- | --- | --- |"]
    for row in answer_rows(verdicts, ids, pending=True):
        number_ = row["chapter"].split("_", 1)[0]
        claim = row["claim"] if short else row["statement"]
        if links:
            claim = section_link(row["id"], claim)
        elif short:
            claim = f"{claim} (chapter {number_})"
        mark = "†" if row["late"] else ""
        interim = " (interim)" if row["interim"] else ""
        key = row["short key"] if short else row["key number"]
        lines.append(f"| {claim} | **{row['verdict']}**{mark}{interim} | {key} |")
    return "\n".join(lines).replace("\u2212", "−")


def polynomial_vs_softmax(verdicts: dict[str, ClaimVerdict]) -> list[tuple[ClaimVerdict, ComparisonResult]]:
    """Every comparison of a polynomial candidate against a softmax baseline, with runs."""
    out = []
    seen = set()
    for v in verdicts.values():
        for r in v.comparisons:
            cand = str(r.comparison.candidate.fields.get("activation", ""))
            base = str(r.comparison.baseline.fields.get("activation", ""))
            key = (r.comparison.candidate, r.comparison.baseline, r.comparison.metric)
            if base == "softmax" and cand.startswith("poly") and r.n >= 2 and repr(key) not in seen:
                seen.add(repr(key))
                out.append((v, r))
    return out


RESULT_COLOURS = {"equivalent": "#1b9e77", "worse": "#d95f02", "worse, size unclear": "#fdae61",
                  "did not learn": "#17becf", "better": "#7570b3", "better, size unclear": "#b2abd2",
                  "split": "#e7298a", "fewer seeds learned": "#a6761d", "more seeds learned": "#66a61e",
                  "inconclusive": "#7f7f7f", "uninformative": "#d9d9d9", "cannot see attention": "#9e9e9e",
                  "control failed": "#d9b38c"}


def forest_plot(verdicts: dict[str, ClaimVerdict], ax=None):
    """Each polynomial-against-softmax difference in units of its margin, with its 95% interval,
    oriented so that right means the polynomial did better, coloured by its result, grouped by the
    experiment it comes from (labels at 9 pt, the margin shaded)."""
    import matplotlib.pyplot as plt

    pairs = polynomial_vs_softmax(verdicts)
    order = list(dict.fromkeys(TOPICS.values()))
    topic = {id(r): topic_of(v.claim) for v, r in pairs}
    pairs = sorted(pairs, key=lambda vr: (order.index(topic[id(vr[1])]) if topic[id(vr[1])] in order else len(order)))
    if ax is None:
        fig, ax = plt.subplots(figsize=(9.0, 0.32 * len(pairs) + 1.9))
    else:
        fig = ax.figure
    labels = []
    previous = None
    for i, (v, r) in enumerate(reversed(pairs)):
        sign = 1 if r.higher_is_better else -1
        m = r.margin
        x, lo, hi = (sign * r.mean / m, sign * r.ci_low / m, sign * r.ci_high / m)
        lo, hi = min(lo, hi), max(lo, hi)
        colour = RESULT_COLOURS.get(r.result, "#7f7f7f")
        ax.plot([lo, hi], [i, i], color=colour, lw=2.2)
        ax.plot([x], [i], "o", color=colour, ms=5.5)
        t = topic[id(r)]
        if previous is not None and t != previous:
            ax.axhline(i - 0.5, color="#cccccc", lw=0.6)
        previous = t
        label = short_label(r.comparison.label)
        if v.claim.id.endswith("_long") and "longer" not in label:
            label += ", longer training"
        labels.append(f"{t}: {label} ({r.n})")
    ax.axvspan(-1, 1, color="#1b9e77", alpha=0.08, lw=0)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(labels)), labels, fontsize=9)
    ax.tick_params(axis="x", labelsize=9)
    ax.set_xlabel("polynomial minus softmax, in units of each claim's margin\n(right: polynomial better; "
                  "shaded: within the margin;\nbars: 95% intervals; paired seeds in brackets)", fontsize=9)
    lim = max(3.0, min(12.0, max((abs(t) for t in ax.get_xlim()), default=3.0)))
    ax.set_xlim(-lim, lim)
    handles = [plt.Line2D([], [], color=c, marker="o", lw=2, label=k) for k, c in RESULT_COLOURS.items()
               if any(r.result == k for _, r in pairs)]
    fig.legend(handles=handles, fontsize=9, loc="upper center", ncol=4, frameon=False)
    rows = -(-len(handles) // 4)
    fig.tight_layout(rect=(0, 0, 1, 1 - (0.3 * rows + 0.1) / fig.get_figheight()))
    return fig


def short_label(label: str) -> str:
    """A comparison's label without its parenthesised scale, for axis labels."""
    import re

    return re.sub(r"\s*\([^)]* [^)]*\)", "", label).strip()


#: A short name of each claim's experiment, for the forest plot's rows (the claims' ``topic``).
TOPICS = TOPIC_NAMES

#: The experiment of a claim not named in :data:`TOPICS`, by the chapter that checks it.
CHAPTER_TOPICS = {"03_norms": "ViT", "04_vit": "ViT", "05_lra": "LRA", "06_physics": "PINN", "07_causal": "char LM",
                  "09_critiques": "ViT", "10_architectures": "timm"}


def topic_of(claim) -> str:
    """The short name of the experiment a claim's comparisons come from, for the forest plot's rows."""
    return claim.topic or CHAPTER_TOPICS.get(claim.chapter) or claim.chapter.split("_", 1)[-1]
