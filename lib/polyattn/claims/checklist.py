"""The reviewers' checklist, item by item: where the book answers each of the 24 critiques of the
paper's reviews, and which verdicts carry the answer.

Each :class:`Item` names the critique in a few words, who raised it, the sections that answer it
(:class:`Place`: a chapter, and in chapter 09 a MyST label; elsewhere the heading the section
carries), the registered claims whose verdict answers it (:data:`polyattn.claims.register.REGISTER`
ids), the chapter verdicts that do (ids of ``polyattn.book.verdict_rows.CLAIMS``), and, where nothing
can be computed, why not.  :func:`table_markdown` renders the list as one MyST table; the verdict
column is the register's form of each claim (:func:`polyattn.claims.evaluate.evaluate`), then the
forms the page itself computed.

    from polyattn.claims import checklist
    checklist.table_markdown(page_forms={"norm_paradox": "not supported"})
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from .evaluate import evaluate
from .register import claim

#: The chapter whose page shows the table: its places link to labels, the others to documents.
HOME = "09_critiques"


@dataclass(frozen=True)
class Place:
    """A section that answers an item: ``section`` is what the reader sees; in :data:`HOME`
    ``label`` is the MyST target above the section, elsewhere ``heading`` is text its heading
    contains (``None``: the chapter as a whole)."""

    doc: str  # "NN_name"
    section: str
    label: Optional[str] = None
    heading: Optional[str] = None


@dataclass(frozen=True)
class Item:
    number: int
    critique: str  # the critique in a few plain words
    reviewers: tuple  # "R25" (ICLR 2025 reviews), "R26-1".."R26-4" (ICLR 2026 reviewers), "AI25" (LLM review)
    places: tuple = ()
    claims: Optional[tuple] = None  # REGISTER ids
    verdicts: tuple = ()  # chapter verdicts (polyattn.book.verdict_rows.CLAIMS ids)
    reason: Optional[str] = None  # why the book does not compute an answer


def _here(label: str, section: str) -> Place:
    return Place(HOME, section, label=label)


def _at(doc: str, section: str, heading: Optional[str] = None) -> Place:
    """A section of another chapter, found by text its heading contains (``section`` itself by default)."""
    return Place(doc, section, heading=section if heading is None else heading)


def _chapter(doc: str, what: str) -> Place:
    """Another chapter as a whole; ``what`` says what it holds on the item."""
    return Place(doc, what)


_PARADOX = _here("critiques-norm-paradox", "norm paradox")
_SCALE = _here("critiques-scale", "scale, on one axis")
_GRADIENTS = _here("critiques-gradients", "powers and gradients")
_OUTLIERS = _here("critiques-extreme-entries", "extreme entries")
_MAPS = _here("critiques-attention-maps", "attention maps")
_TRAINED = _here("critiques-trained", "powers and Q/K, trained")
_DECAY = _here("critiques-weight-decay", "weight decay, trained")
_UNCLIPPED = _here("critiques-unclipped", "without clipping")

#: The 24 critiques of the paper's reviews (the reference notes' checklist), in their order.
CHECKLIST = (
    Item(1, "The factor 2 in the proof of Theorem 4.1's Jacobian bound is doubtful", ("R25",),
         (_at("02_proofs", "Theorem 4.1 (2)"),), verdicts=("thm41_2",)),
    Item(2, "Typos in the appendix's proofs; the order of q, k, v in one line", ("R25", "R26-2"),
         (_at("02_proofs", "Theorem 4.2", "Theorem 4.2 and Corollary 4.3"),),
         reason="a matter of the paper's text, which the book does not reproduce; the proofs are re-derived"),
    Item(3, "The i.i.d. Gaussian assumption: XQ and KX are not independent, and it holds only at "
            "initialisation", ("R25", "R26-1", "R26-2", "AI25"),
         (_at("02_proofs", "shared X", "Queries and keys that share"),
          _at("02_proofs", "after initialisation", "Bounded in expectation at initialisation")),
         verdicts=("thm42_43",)),
    Item(4, "Softmax's bound holds for any input, the polynomial's only in expectation", ("R26-1", "R26-2"),
         (_at("02_proofs", "Theorem 4.1 (1)"), _at("02_proofs", "Theorem 4.2", "Theorem 4.2 and Corollary 4.3")),
         verdicts=("thm41_1", "thm42_43")),
    Item(5, "The bounds mix N and D: O(√N) needs N ≫ D, not so in ViT-B; d is undefined", ("R25",),
         (_at("02_proofs", "N ≫ D", "which factor dominates at ViT sizes"),
          _at("02_proofs", "the undefined d", "The undefined")),
         verdicts=("thm42_43",)),
    Item(6, "The theory is elementary: the bound follows from row-stochasticity", ("R26-3", "AI25"),
         (_at("02_proofs", "Theorem 4.1 (1)"),), verdicts=("thm41_1",)),
    Item(7, "The theory bounds matrix powers, the experiments use elementwise powers", ("AI25",),
         (_at("02_proofs", "matrix or elementwise powers", "Matrix powers or elementwise powers"),),
         verdicts=("critique7_matrix_powers",)),
    Item(8, "No tested link from a bounded norm to accuracy; compare normalisation and clipping",
         ("R25", "R26-3", "AI25"),
         (_at("03_norms", "the mechanism", "The mechanism, by intervention"), _UNCLIPPED),
         claims=("clipping_as_alternative", "qk_norm"), verdicts=("norm_intervention", "norms_predict")),
    Item(9, "Norms and accuracy disagree: x³ below x/16 yet worse; x/14 worse on ViT, best on DeiT", ("R25",),
         (_PARADOX, _chapter("10_architectures", "x/14 on ViT and DeiT")),
         claims=("linear_vit_deit",), verdicts=("norm_paradox",)),
    Item(10, "Softmax itself makes gradients vanish when its rows saturate", ("R25", "R26-1"),
         (_GRADIENTS,), verdicts=("softmax_saturation",)),
    Item(11, "Higher powers fail: the gradient vanishes for small scores and explodes for large ones",
         ("R26-3", "R26-4"), (_GRADIENTS, _TRAINED), claims=("powers_trained",), verdicts=("powers_gradients",)),
    Item(12, "Figure 1's direction: with 1/√N the scale should rise as N falls; define 'scale'", ("R25",),
         (_SCALE, _at("04_vit", "which scale wins", "Which scale wins at which length")),
         verdicts=("fig1_scale",)),
    Item(13, "Accuracy is sensitive to the scale: 1/8 or 1/16, and one 1/14 at every LRA length",
         ("R25", "R26-2", "AI25"), (_SCALE, _chapter("05_lra", "LRA")),
         claims=("lra_fixed_scale",), verdicts=("scale_sensitivity",)),
    Item(14, "Gains are within noise: error bars and several seeds are needed", ("R25", "R26-2", "R26-4", "AI25"),
         (_at("04_vit", "how comparisons are judged", "How the comparisons are judged"),),
         claims=("table_parity", "table2_architectures")),
    Item(15, "The models are small; why probe layers 2, 7 and 12?", ("R26-1", "R26-2"),
         (_at("03_norms", "norms during training", "Figures 2 and 3 analogue"),),
         reason="the book's models are smaller still (CPU budget); every layer is probed, so none is chosen"),
    Item(16, "Weight decay could explain the effect: decay Q and K, or a length-aware initialisation", ("R26-1",),
         (_TRAINED, _DECAY, _UNCLIPPED), claims=("qk_alternatives", "weight_decay_all")),
    Item(17, "No baselines: ReLU, Taylor, periodic, sigmoid", ("R25", "R26-4", "AI25"),
         (_at("04_vit", "Table 1 analogue", "Table 1 analogue: every activation"),), claims=("family",)),
    Item(18, "LRA is not language, and there is no language model", ("R25",),
         (_chapter("05_lra", "LRA"), _at("07_causal", "bits per character", "Bits per character")),
         claims=("lra_fixed_scale", "lm_vs_softmax")),
    Item(19, "Causal masks: N differs per query; length generalisation and recall untested", ("R25", "R26-4"),
         (_at("07_causal", "length generalisation", "Length generalisation"),
          _at("07_causal", "associative recall", "Associative recall")),
         claims=("causal_scaling", "mqar")),
    Item(20, "Only x and x³ were tried: why not other powers?", ("R25",),
         (_TRAINED, _at("04_vit", "the quadratic", "The quadratic with a learned scale")),
         claims=("quadratic", "powers_trained")),
    Item(21, "No analysis of compute, throughput or memory", ("R25", "R26-4"),
         (_at("08_costs", "time", "Time"), _at("08_costs", "memory", "Memory"),
          _at("08_costs", "training throughput", "Training throughput")),
         verdicts=("cost",)),
    Item(22, "The heat maps say little: softmax cannot be negative, heads have no fixed role",
         ("R25", "R26-1", "R26-2"), (_MAPS, _at("03_norms", "attention maps", "Attention maps")),
         verdicts=("attention_maps",)),
    Item(23, "Polynomials amplify extreme entries; ViTs train even without the scale", ("R26-2", "R25"),
         (_OUTLIERS, _at("04_vit", "without clipping", "Without gradient clipping")),
         claims=("unclipped_scale_needed", "converged_scale_needed"), verdicts=("outliers",)),
    Item(24, "Presentation: Figure 4's caption, a typo, no conclusion", ("AI25", "R25"),
         reason="about the paper's text; nothing to compute"),
)

#: Each claim or chapter verdict in a few words, as a statement the verdict word judges.
SHORT = {
    "clipping_as_alternative": "clipping does the scale's job", "qk_norm": "QK-norm does it",
    "linear_vit_deit": "x/14 worse on ViT, better on DeiT", "lra_fixed_scale": "x³/14 on par on LRA",
    "table_parity": "x³ matches softmax (Tables 1/2)", "table2_architectures": "and on four architectures",
    "qk_controls_unclipped": "Q/K decay or init does it", "weight_decay_unclipped": "decay of all does it",
    "family": "the wider family matches softmax", "lm_vs_softmax": "cubic LMs match softmax",
    "mqar": "cubics match softmax on recall", "quadratic": "x² matches softmax",
    "unclipped_scale_needed": "unscaled x³ worse, unclipped", "converged_scale_needed": "unscaled x³ worse, converged",
    "norm_paradox": "the paradox", "softmax_saturation": "saturation starves gradients",
    "powers_gradients": "powers starve gradients", "powers_trained": "accuracy falls with p",
    "scale_sensitivity": "sensitive to the scale", "qk_alternatives": "Q/K decay or init does it (clipped and not)",
    "weight_decay_all": "decay of all does it (clipped and not)", "outliers": "polynomials amplify outliers",
    "attention_maps": "the maps", "thm41_1": "Theorem 4.1 (1)", "thm41_2": "Theorem 4.1 (2)",
    "thm42_43": "Theorems 4.2/4.3", "critique7_matrix_powers": "theory and experiments differ",
    "norm_intervention": "the norm bound is the mechanism", "norms_predict": "norms predict accuracy",
    "fig1_scale": "Figure 1's direction", "causal_scaling": "which N under a causal mask", "cost": "cost",
}

#: What the reviewer codes stand for, in the order they are shown.
REVIEWERS = {"R25": "ICLR 2025", "R26": "ICLR 2026", "AI25": "LLM review"}


def raised_by(codes: tuple) -> str:
    """The reviewers in a few words: "ICLR 2025; ICLR 2026 #1, #2; LLM review"."""
    parts = []
    if "R25" in codes:
        parts.append(REVIEWERS["R25"])
    r26 = sorted(c.split("-", 1)[1] for c in codes if c.startswith("R26-"))
    if r26:
        parts.append(f"{REVIEWERS['R26']} " + ", ".join(f"#{k}" for k in r26))
    if "AI25" in codes:
        parts.append(REVIEWERS["AI25"])
    return "; ".join(parts)


def link(place: Place) -> str:
    """A MyST link to the place: its label in :data:`HOME`, else its chapter (from any page)."""
    if place.label is not None:
        return f"{{ref}}`{place.section} <{place.label}>`"
    return f"{{doc}}`ch. {place.doc.split('_', 1)[0]} </chapters/{place.doc}>`: {place.section}"


def where(places: tuple) -> str:
    """The places as links, one link per chapter for consecutive sections of another chapter."""
    parts, last = [], None
    for p in places:
        if p.label is None and last is not None and last.label is None and last.doc == p.doc:
            parts[-1] += f", {p.section}"
        else:
            parts.append(link(p))
        last = p
    return "; ".join(parts) or "—"


def claim_ids(items=CHECKLIST) -> tuple:
    """Every registered claim the checklist reads, once, in order."""
    return tuple(dict.fromkeys(c for it in items for c in (it.claims or ())))


def grids(items=CHECKLIST) -> tuple:
    """The grids whose records the checklist's claims read."""

    return tuple(sorted({g for cid in claim_ids(items) for g in claim(cid).grids}))


def claim_forms(ids=None) -> dict:
    """claim id -> its form under the register's rule, from the stored records."""

    return {cid: evaluate(cid).form for cid in (claim_ids() if ids is None else ids)}


def verdict_cell(item: Item, forms: Mapping[str, str], page_forms: Mapping[str, str] = ()) -> str:
    """The item's verdict: each claim's form, then each chapter verdict the page computed; the
    reason where nothing is computed; else a pointer to the sections."""
    page_forms = dict(page_forms)
    if item.reason:
        return item.reason
    parts = [f"{SHORT[c]}: **{forms[c]}**" for c in item.claims or ()]
    parts += [f"{SHORT[k]}: **{page_forms[k]}**" for k in item.verdicts if k in page_forms]
    return "; ".join(parts) if parts else "computed, see the section"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def table_markdown(page_forms: Optional[Mapping[str, str]] = None,
                   forms: Optional[Mapping[str, str]] = None) -> str:
    """The checklist as a MyST table: item, critique, who raised it, where it is answered, verdict.

    ``forms``: claim id -> form (evaluated from the records when not given); ``page_forms``:
    chapter verdict id -> form, for the verdicts the page itself computes."""
    forms = claim_forms() if forms is None else dict(forms)
    lines = ["| | critique | raised by | answered in | verdict |", "| --- | --- | --- | --- | --- |"]
    for it in CHECKLIST:
        lines.append(f"| {it.number} | {_cell(it.critique)} | {raised_by(it.reviewers)} | {_cell(where(it.places))} | "
                     f"{_cell(verdict_cell(it, forms, page_forms or {}))} |")
    return "\n".join(lines)


def legend() -> str:
    """What the "raised by" column abbreviates, in one sentence."""
    return ("ICLR 2025: the human reviews of the paper's first submission; ICLR 2026 #k: the k-th of the four "
            "reviews of its second; LLM review: an LLM-written review of the first submission.")
