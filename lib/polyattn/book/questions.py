"""The paper's three questions, each answered in one sentence a reader can take away.

A sentence opens with its answer in a word or two and its margin ("Yes, within ±1 point",
"No, not at N = 50", "No, at a margin of ±1 point"), then its scope (model, experiment, data,
N, seeds), the key numbers of the comparisons it rests on, and, named in words, what failed or
could not decide.  Everything in it is read from the claim verdicts' fields (form, result,
qualifier, outcome, the comparisons' numbers and records), so a form or a result that the rule
adds later flows through: a form without an answer word is stated as it is, and a comparison
whose result is ``uninformative`` is never cited for its numbers, only said to be untested.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..analysis.frames import record_seq_len
from ..claims.evaluate import arm_runs
from ..claims.report import key_cell, read_as_counts, section_link, short_label
from ..claims.rule import claim_form
from ..claims.scope import DATA_NAMES, GRID_TITLES

#: The answer a claim's form gives to the question the claim asks (the question is phrased as the
#: claim: "is the factor needed?" is answered by "unscaled x³ is worse").  A form not listed is
#: stated as it is, so a form the rule adds later still reads.
ANSWER_WORDS = {
    "holds": "Yes", "equivalent within the margin": "Yes", "holds, smaller than the margin":
    "Yes, but smaller than the margin", "holds with a corrected constant": "Yes, with another constant",
    "holds only under its assumptions": "Only under its assumptions", "not supported": "No", "fails": "No",
    "detectable, size unclear": "Probably, of unclear size", "inconclusive at this power": "Undecided",
    "inconclusive at this scale": "Untested at this scale", "not testable as designed": "Not testable here",
    "partly testable": "Partly testable", "mixed": "Mixed", "pending": "Pending",
}
#: Results that make a comparison say nothing about its claim: never cited for their numbers.
UNINFORMATIVE = ("uninformative", "cannot see attention", "not testable", "pending")


@dataclass(frozen=True)
class Part:
    """One comparison a question's sentence cites: the claim and comparison ids of the register, and
    how the sentence names it (words only; its numbers come from the verdict)."""
    claim: str
    comparison: str
    words: str


@dataclass(frozen=True)
class Question:
    ask: str  # the question, Markdown with maths
    claim: str  # the claim whose form answers it
    parts: tuple  # Parts whose numbers the sentence gives, the deciding one first
    #: claims that test whether the answer reaches longer sequences (cited only where informative)
    reach: tuple = ()
    #: answer "No, not at N = ..." when equivalence contradicts a predicted difference
    per_length: bool = False
    #: answer from the first cited comparison alone (the claim's other primaries answer another question)
    by_key: bool = False


#: The first two questions are answered where attention is needed (the marked garment): on plain
#: Fashion-MNIST uniform attention trails softmax by less than the margin can resolve, so agreement
#: there within the margin is cited only as untested, with the ablated arm's number.
QUESTIONS = (
    Question(r"Does $x^3/\sqrt{N}$ match softmax?", "marked_garment",
             (Part("marked_garment", "cube_sqrt_n", "x³/√N − softmax"),
              Part("table_parity", "converged", "on plain Fashion-MNIST (N = 50)")), by_key=True),
    Question(r"Is the $1/\sqrt{N}$ factor needed?", "marked_garment",
             (Part("marked_garment", "cube_vs_scaled", "x³ − x³/√N"),
              Part("converged_scale_needed", "cube_vs_scaled_converged", "on plain Fashion-MNIST (N = 50)")),
             reach=("length_scale_needed", "rope_scale_needed"), per_length=True, by_key=True),
    Question("Does the norm bound explain softmax?", "norm_dose_response",
             (Part("norm_dose_response", "asymmetry", "softmax ×8 − softmax/8"),
              Part("norm_intervention", "sufficiency_contrast", "capping x³/√N on plain Fashion-MNIST")),
             by_key=True),
)


def informative(r) -> bool:
    """Whether a comparison says anything about its claim: it has a paired test's two pairs and
    neither its result nor its outcome is one that the rule counts and never judges (a gate or a
    floor it failed, a check that voids it)."""
    if r is None or r.n < 2:
        return False
    if r.result in UNINFORMATIVE or r.outcome in UNINFORMATIVE:
        return False
    return not getattr(r, "gate_failed", False)


def unit_words(unit: str, value: float) -> str:
    """"±1 point", "±2 points", "±0.05 bits/char", "±0.301 (log10)": a margin in its unit."""
    v = f"{value:.3g}"
    if unit == "points":
        return f"±{v} point{'' if v == '1' else 's'}"
    if unit == "log10":
        return f"±{v} in log10"
    return f"±{v} {unit}".rstrip()


def number(r) -> str:
    """A comparison's key number: counts for a comparison read as counts, else the difference and
    its 95% interval in its unit."""

    return key_cell(r).replace("seeds that learned: ", "").replace(" against ", " vs ") \
        + (" learned" if _as_counts(r) else "")


def _as_counts(r) -> bool:

    return read_as_counts(r)


def result_words(r) -> str:
    """What a comparison found, in a few words, against its own margin."""
    m = unit_words(r.unit, r.margin)
    res, qual = r.result, r.qualifier.strip(", ").replace("and ", "").replace("slightly ", "")
    if res == "equivalent":
        return f"{qual}, within {m}" if qual else f"within {m}"
    if res in ("worse", "better"):
        return f"{res} beyond {m}"
    if res == "inconclusive":
        return "undecided"
    return f"{res}{r.qualifier}"


def records_of(r) -> list[dict]:
    """The stored records of a comparison's candidate arm."""

    return list(arm_runs(r.comparison.candidate, pool_over=r.comparison.pool_over).records.values())


def sequence_length(r) -> Optional[int]:
    """The N a comparison's runs trained at (the largest, when they differ)."""

    lengths = [record_seq_len(rec) for rec in records_of(r)]
    lengths = [n for n in lengths if n]
    return max(lengths) if lengths else None


#: The model family of a grid, by the start of its name, for a sentence's scope.
FAMILIES = (("vit_", "ViT"), ("critique_", "ViT"), ("architectures_", "timm models"), ("causal_charlm", "character LM"),
            ("causal_length", "character LM"), ("causal_dose", "character LM"), ("causal_mqar", "MQAR model"),
            ("lra", "LRA model"), ("physics", "PINNsFormer"), ("detection", "Mask R-CNN proxy"))


def scope_words(r, grid_title: bool = True) -> str:
    """"the converged tier (micro ViT, Fashion-MNIST, N = 50, 5 seeds)": where a comparison's runs come
    from; without ``grid_title``, "the micro ViT (Fashion-MNIST, N = 50, 5 seeds)"."""

    recs = records_of(r)
    grid = r.comparison.candidate.grid
    family = next((f for prefix, f in FAMILIES if grid.startswith(prefix)), "model")
    model = str(recs[0]["config"].get("model", "")) if recs else ""
    data = ", ".join(dict.fromkeys(DATA_NAMES.get(str(x["config"]["dataset"]), str(x["config"]["dataset"]))
                                   for x in recs))
    n = sequence_length(r)
    what = f"{model} {family}".strip()
    inside = [what] if grid_title else []
    inside += [p for p in (data, f"N = {n:,}" if n else "", f"{r.n} seeds") if p]
    head = GRID_TITLES.get(grid, grid.replace("_", " ")) if grid_title else what
    return f"the {head} ({', '.join(inside)})"


def _model(r) -> str:
    """"micro character LM": the model a comparison's runs train."""
    return scope_words(r, grid_title=False)[len("the "):].split(" (")[0]


def _find(verdicts: dict, part: Part):
    v = verdicts.get(part.claim)
    if v is None:
        return None
    return next((r for r in v.comparisons if r.comparison.id == part.comparison), None)


def _floor_words(r) -> str:
    """Why an uninformative comparison says nothing: the floor or gate the rule names, else the
    arms' learning as the result records it."""
    reason = getattr(r, "gate_reason", "")
    if isinstance(reason, str) and reason:
        return reason
    check = getattr(r, "voided_check", None)
    if check is not None and r.result == "cannot see attention":  # what the ablated arm showed
        return f"{_short(check)} {number(check)}, not beyond {unit_words(check.unit, check.margin)}"
    if check is not None and r.result == "control failed":  # a control that must not move, and moved
        return f"its control moved ({_short(check)} {number(check)})"
    gate = getattr(r, "gate", None)
    if isinstance(gate, str) and gate and (getattr(r, "gate_failed", False) or r.result == "uninformative"):
        return f"no model beat {gate.split(' (')[0]}"
    for name in ("gate_reason", "floor_name", "floor"):
        said = getattr(r, name, None) or getattr(r.comparison, name, None)
        if isinstance(said, str) and said:  # a reason is said as it is, a floor is named
            return said if name == "gate_reason" else f"every model stayed at the {said}"
    if r.candidate_learned is False and r.baseline_learned is False:
        return "no model learned the task"
    return f"the comparison is {r.result}"


def _reach(verdicts: dict, q: Question, n_lead: Optional[int], brief: bool = False) -> str:
    """How far the answer reaches in N: informative comparisons at a longer N with their numbers;
    from the first N where the claims' comparisons are uninformative, "untested beyond N = ...",
    with the reason, unless another reach claim's primary comparison is informative at that N or
    longer (a later design that learned supersedes one that did not); of several untested designs,
    the latest (the last in ``q.reach``) speaks; ``brief`` gives the reason as "(gate failed)";
    "" without reach claims."""
    found, untested = [], []
    for cid in q.reach:
        v = verdicts.get(cid)
        if v is None:
            continue
        rows = [(sequence_length(r), r) for r in v.comparisons
                if r.comparison.role != "check" and r.n >= 2]
        rows = sorted(((n, r) for n, r in rows if n), key=lambda nr: nr[0])
        good = [(n, r) for n, r in rows if informative(r)]
        bad = [(n, r) for n, r in rows if not informative(r)]
        found += [(n, r) for n, r in good if r.comparison.role == "primary"]
        if bad:
            tested = max([n for n, _ in good if n < min(b for b, _ in bad)] + [n_lead or 0]) or None
            untested.append((min(b for b, _ in bad), tested, bad[0][1]))
    clauses = [f"at N = {n:,} ({_model(r).removeprefix('micro ')}) {number(r)}, {result_words(r)}" for n, r in found]
    for first_bad, tested, r in untested[-1:]:
        if any(n >= first_bad for n, _ in found):
            continue
        beyond = f"beyond N = {tested:,}" if tested else f"at N = {first_bad:,}"
        clauses.append(f"untested {beyond} (gate failed)" if brief else f"untested {beyond}: {_floor_words(r)}")
    return "; ".join(clauses)


def _reach_row(verdicts: dict, q: Question):
    """A primary comparison with runs of the last reach claim (whose model the reach speaks of)."""
    for cid in reversed(q.reach):
        v = verdicts.get(cid)
        rows = [r for r in (v.comparisons if v is not None else ()) if r.comparison.role == "primary" and r.n >= 2]
        if rows:
            return rows[0]
    return None


def _failed(verdicts: dict, q: Question) -> list[str]:
    """What failed or could not decide in the answering claim, in words: failed checks, open
    checks with runs, and the other tiers' primary comparisons that cannot decide."""

    v = verdicts.get(q.claim)
    if v is None:
        return []
    out = []
    for r in v.comparisons:
        if r.comparison.role != "check" or r.n < 2:
            continue
        if r.outcome == "contradicts":
            out.append(f"its control failed ({_short(r)} {number(r)})")
        elif r.outcome == "open":
            out.append(f"its control is open ({_short(r)} {number(r)})")
        elif r.outcome == "size unclear":  # the control shows attention matters, by about the margin
            out.append(f"its control is of unclear size ({_short(r)} {number(r)})")
    cited = {p.comparison for p in q.parts if p.claim == q.claim}
    tier = v.claim.deciding_tier
    others = [r for r in v.comparisons if r.comparison.role == "primary" and r.comparison.id not in cited
              and tier is not None and r.comparison.tier != tier and r.n >= 2]
    undecided = [GRID_TITLES.get(r.comparison.candidate.grid, r.comparison.tier) for r in others
                 if r.outcome in ("open", "uninformative") or not informative(r)]
    if undecided:
        out.append(f"the {' and '.join(dict.fromkeys(undecided))} cannot decide")
    against = [r for r in others if r.outcome == "contradicts"]
    if against:
        out.append("; ".join(f"{_short(r)} reads {r.result}" for r in against))
    return out


def _short(r) -> str:

    return short_label(r.comparison.label).split(",")[0]


#: The most words an answer sentence may have (the question before it not counted).
MAX_WORDS = 45


def answer_form(v, q: Question, key=None) -> str:
    """The form that answers ``q``: its claim's, or with ``q.by_key`` that of the key comparison alone
    (by the same rule)."""
    if not q.by_key or key is None:
        return v.form

    return claim_form([key.outcome], [key.comparison.expect], enough_runs=key.n >= 2)


def _opening(v, key, q: Question, n_lead: Optional[int]) -> str:
    """The answer in a word or two, and its margin."""
    form = answer_form(v, q, key)
    word = ANSWER_WORDS.get(form, form[:1].upper() + form[1:])
    margin = unit_words(key.unit, key.margin)
    if word == "Yes" and key.result == "equivalent":
        return f"{word}, within {margin}"
    if word == "No" and q.per_length and key.result == "equivalent" and n_lead:
        return f"{word}, not at N = {n_lead:,}"
    return f"{word} (margin {margin})"


def _sentence(verdicts: dict, q: Question, found: list, detail: int) -> str:
    """The sentence at a level of detail: 0 names the experiment's tier, 1 only the model, 2 also
    drops the parts after the first two, 3 also states only the first failure, without its numbers,
    4 without its name either, 5 cites the first part alone, 6 says why the reach stops in two
    words (a shorter sentence for a longer register)."""
    v = verdicts[q.claim]
    cited = [(p, r) for p, r in found if informative(r)]
    if detail >= 2:
        cited = cited[:1 if detail >= 5 else 2]
    key = cited[0][1]
    n_lead = sequence_length(key)
    opening = _opening(v, key, q, n_lead)
    within = f"within {unit_words(key.unit, key.margin)}"
    stated = opening.endswith(within) or "(margin " in opening
    all_within = opening.startswith("No, not at") and all(result_words(r) == within for _, r in cited)
    numbers = []
    for i, (p, r) in enumerate(cited):
        said = result_words(r)
        if stated and said.endswith(within):
            said = said[: -len(within)] + f"within ±{key.margin:.3g}" if said != within \
                or not opening.endswith(within) else ""
        said = "" if all_within or not said else f", {said}"
        numbers.append(f"{p.words} {number(r) if i == 0 else _bare(r)}{said}")
    if all_within:
        numbers[-1] += f", all {within}" if len(numbers) > 1 else f", {within}"
    # a part still waiting for its pairs is not news; one whose pairs say nothing is
    missing = [f"{p.words} untested: {_floor_words(r)}" for p, r in found
               if r is not None and r.n >= 2 and not informative(r)]
    tail = _failed(verdicts, q)
    if detail >= 3:  # the shortest level: each failure in its first words, the first one only
        tail = [re.sub(r" [−+-]?[\d.,]+ \[[^\]]*\][^)]*\)$", ")", t) for t in tail][:1]
        missing = [m.split(", not beyond")[0].removesuffix(" points") for m in missing]
    if detail >= 4:  # ... and without naming it
        tail = [t.split(" (")[0] for t in tail]
    reach = _reach(verdicts, q, None if q.by_key else n_lead, brief=detail >= 6)
    if reach and q.by_key:  # the reach is another model's: say which
        model = _model(_reach_row(verdicts, q)).removeprefix("micro ")
        reach = f"{model.replace('character LM', 'LM')}s {reach}" if detail >= 6 else f"in {model}s, {reach}"
    tail = missing + ([reach] if reach else []) + tail
    reach = ""
    scope = scope_words(key, grid_title=detail == 0)
    if n_lead and f"N = {n_lead:,}" in opening:  # said once: the opening names the N already
        scope = scope.replace(f", N = {n_lead:,}", "").replace(f"N = {n_lead:,}, ", "")
    text = f"**{opening}**, on {scope}: " + "; ".join(numbers)
    for extra in ([reach] if reach else []) + tail:
        text += "; " + extra
    return text + "."


def answer_sentence(verdicts: dict, q: Question) -> str:
    """One question's answer: its answer and margin in bold, its scope, its key numbers, and what
    failed or could not decide (Markdown; numbers read from the verdicts), in at most
    :data:`MAX_WORDS` words where a shorter level of detail allows it."""
    v = verdicts.get(q.claim)
    if v is None:
        return "**Not registered.**"
    found = [(p, _find(verdicts, p)) for p in q.parts]
    if not any(informative(r) for _, r in found):
        return f"**{ANSWER_WORDS.get(v.form, v.form)}**: no comparison it rests on has two informative pairs yet."
    text = ""
    for detail in range(7):
        text = _sentence(verdicts, q, found, detail)
        if word_count(text) <= MAX_WORDS:
            break
    return text


def _bare(r) -> str:
    """A comparison's number without its unit when the sentence has already named it."""
    text = number(r)
    return re.sub(r" (points|bits/char|\(log10\))$", "", text)


def questions_markdown(verdicts: dict, links: bool = False) -> str:
    """The three questions, numbered, each with its answer sentence; with ``links`` each ends with a
    link to the section of the claim that answers it."""

    lines = []
    for i, q in enumerate(QUESTIONS, 1):
        ask = f"**{q.ask}**"
        v = verdicts.get(q.claim)
        chapter = f"chapter {v.claim.chapter.split('_', 1)[0]}" if v is not None else ""
        where = f" ({section_link(q.claim, chapter)})" if links and v is not None else ""
        lines.append(f"{i}. {ask} {answer_sentence(verdicts, q)}{where}")
    return "\n".join(lines)


def word_count(sentence: str) -> int:
    """The words a reader reads in an answer sentence: Markdown markup, links' targets and maths
    delimiters left out; a number with its interval counts as its three tokens."""
    text = re.sub(r"\{ref\}`([^<`]*)<[^>]*>`", r"\1", sentence)
    text = text.replace("**", "").replace("$", "")
    return len(text.split())
