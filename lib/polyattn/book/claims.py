"""The claims of the intro's verdict table, the glue that carries a chapter's verdict, and the table.

A verdict has a *form* from :data:`FORMS` (what the statistics support, decided by the
chapter's numbers) and a one-sentence *summary* with the key number, in Markdown with
maths; the chapter keeps the details.  The intro's table and the README's findings block
are both written from these two glued values (:func:`collect_verdicts`), so there is one
source.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

#: The forms a verdict may take: the register's (:data:`polyattn.claims.rule.FORMS`) and the forms of
#: the rows that are measurements rather than comparisons of runs.
MEASURED_FORMS = ("holds with a corrected constant", "holds only under its assumptions", "fails", "worse", "better",
                  "mixed", "measured")


def _forms() -> tuple:
    from ..claims.rule import FORMS as REGISTER_FORMS

    return tuple(dict.fromkeys(REGISTER_FORMS + MEASURED_FORMS))


FORMS = _forms()


@dataclass(frozen=True)
class Claim:
    """A claim of the paper or a critique of its reviewers, and the chapter that checks it."""

    id: str
    claim: str
    source: str
    chapter: str  # "NN_name" of the chapter expected to deliver the verdict
    #: measured on the machine that builds the book (timings): never written into the README
    machine_dependent: bool = False


#: One row of the intro's verdict table per claim.  A chapter delivers a verdict with
#: ``polyattn.book.verdict(id, text)``.
CLAIMS = (
    Claim("thm41_1", "Thm 4.1(1): for softmax, $\\lVert \\mathrm{softmax}(A) \\rVert_F \\le \\sqrt{N}$ for any $A$",
          "paper", "02_proofs"),
    Claim("thm41_2", "Thm 4.1(2): the Jacobian bound of softmax and its constant (a reviewer doubts the factor 2)",
          "paper; review ICLR 2025", "02_proofs"),
    Claim("thm42_43",
          "Thm 4.2/4.3: the $O(\\sqrt{N})$ growth of the polynomial's norms rests on i.i.d. $X, Q, K$ and needs $N \\gg D$",
          "paper; review ICLR 2025", "02_proofs"),
    Claim("critique7_matrix_powers",
          "Critique 7: the theory bounds matrix powers $(XQK^\\top X^\\top)^p$ while the experiments run elementwise "
          "powers, so theory and experiments differ", "LLM-written review of the ICLR 2025 version", "02_proofs"),
    Claim("thm44_45", "Thm 4.4/4.5: the Jacobian norms of $x^p/\\sqrt{N}$ grow like those of softmax",
          "paper", "02_proofs"),
    Claim("fig1_scale", "Figure 1: in which direction the best scale moves as the sequence length changes",
          "paper; review ICLR 2025", "04_vit"),
    Claim("table_parity", "Tables 1/2: scaled $x^3$ matches softmax on image classification",
          "paper", "04_vit"),
    Claim("family", "The wider family of softmax alternatives (Taylor, periodic, Power-Softmax, ReLU$^2/N$) "
          "against softmax under one harness", "review ICLR 2025; neighbouring work", "04_vit"),
    Claim("lra_fixed_scale", "Long Range Arena: $x^3/14$, the fixed scale the paper ran, performs on par with softmax",
          "paper", "05_lra"),
    Claim("n_under_padding", "Under padding, what $N$ is in $x^p/\\sqrt{N}$ (the valid keys or the padded length), "
          "and whether it matters", "review ICLR 2025", "05_lra"),
    Claim("physics_poly", "Physics-informed models: $x^3/\\sqrt{N}$ attention ($N = 5$ pseudo-time tokens) can replace "
          "softmax in PINNsFormer on convection, reaction and the wave", "paper (v2/v3)", "06_physics"),
    Claim("seed_sensitivity", "PINNsFormer's outcome depends strongly on the seed: some seeds solve a problem that "
          "others fail", "PINNsFormer repository, user reports", "06_physics"),
    Claim("norms_predict", "Attention and Jacobian norms predict which activation trains best",
          "paper; review ICLR 2025", "03_norms"),
    Claim("norm_mechanism", "Softmax trains well *because* it bounds $\\lVert A \\rVert_F \\le \\sqrt{N}$: tested by "
          "intervention ($k\\cdot\\mathrm{softmax}$ lifts the bound, $x^3/\\sqrt{N}$ with capped rows imposes it)",
          "paper; review ICLR 2025", "03_norms"),
    Claim("cost", "The cost of polynomial attention (time, memory) is not analysed",
          "review ICLR 2025", "08_costs", machine_dependent=True),
    Claim("causal_scaling", "Causal masks and variable lengths: which $N$ scales each row",
          "review ICLR 2025", "07_causal"),
    Claim("attention_sinks", "Attention sinks come from softmax's sum-to-one constraint: activations without it "
          "(sigmoid, Softpick, polynomials) form fewer", "attention-sink literature", "07_causal"),
    Claim("seed_article_table", "A survey article's language-model table (perplexity and sink strength of softmax, "
          "Poly2, InvSqrt, Softpick, SA-Softmax) and its three findings", "survey article, no source given",
          "07_causal"),
    Claim("norm_paradox", "Unscaled $x^3$ has lower attention and Jacobian norms than $x/16$ yet trains worse, "
          "so the norms do not explain accuracy", "review ICLR 2025", "09_critiques"),
    Claim("scale_sensitivity", "Accuracy is highly sensitive to the scale constant, and the paper's $1/8$ and "
          "$1/16$ for Tiny-ImageNet disagree", "review ICLR 2025; review ICLR 2026", "09_critiques"),
    Claim("powers_gradients", "Higher powers starve the gradient through the activation: $x^p/\\sqrt{N}$ vanishes "
          "for small scores and explodes for large ones", "review ICLR 2026", "09_critiques"),
    Claim("powers_trained", "Higher powers $p$ fail in training: accuracy falls as $p$ grows",
          "review ICLR 2025; review ICLR 2026", "09_critiques"),
    Claim("qk_alternatives", "Weight decay on the query and key projections, or a length-aware initialisation, "
          "could do what the $1/\\sqrt{N}$ factor does", "review ICLR 2026", "09_critiques"),
    Claim("weight_decay_all", "A stronger weight decay of every weight matrix could do for the unscaled $x^3$ what "
          "the $1/\\sqrt{N}$ factor does", "review ICLR 2026", "09_critiques"),
    Claim("softmax_saturation", "Softmax itself makes gradients vanish when its rows saturate",
          "review ICLR 2025", "09_critiques"),
    Claim("outliers", "Polynomials amplify extreme entries; softmax is more robust to them",
          "review ICLR 2026", "09_critiques"),
    Claim("attention_maps", "The heat maps show only that the activations differ (softmax cannot be negative, "
          "heads have no pre-ordained role)", "review ICLR 2025; review ICLR 2026", "09_critiques"),
    Claim("table2_architectures", "Table 2 across architectures: $x^3$ matches softmax on ViT, DeiT, Swin "
          "and XCiT", "paper", "10_architectures"),
    Claim("n_windows_channels", "What $N$ is where attention runs over windows (Swin) or channels (XCiT), where the "
          "paper's $1/14$ is not $1/\\sqrt{N}$, and whether the reading matters", "paper (not stated)",
          "10_architectures"),
    Claim("detection_segmentation", "Detection and instance segmentation (the paper: Mask R-CNN on COCO; the book: "
          "Mask R-CNN on synthetic Fashion-MNIST scenes): $x^3$ is near-identical to softmax",
          "paper; review ICLR 2026", "10_architectures"),
)
CLAIM_IDS = tuple(c.id for c in CLAIMS)


def statement(c: Claim) -> str:
    """What a row of the verdict table claims: the register's statement when a register claim
    decides the row (one statement per claim), else the row's own."""
    from .verdicts import register_id

    cid = register_id(c.id)
    if cid is None:
        return c.claim
    from ..claims.register import REGISTER

    return REGISTER[cid].statement



def verdict(claim_id: str, summary: str, form: str) -> str:
    """Deliver a chapter's verdict on a claim of :data:`CLAIMS` to the intro's table.

    ``form``: one of :data:`FORMS`, chosen by the chapter's numbers; ``summary``: one sentence
    with the key number, Markdown with ``$...$`` maths.  Glued as ``verdict_<id>`` (the
    summary, as Markdown) and ``verdict_<id>_form``.  Returns the summary.
    """
    if claim_id not in CLAIM_IDS:
        raise ValueError(f"unknown claim {claim_id!r}; the claims of the verdict table are {', '.join(CLAIM_IDS)}")
    if form not in FORMS:
        raise ValueError(f"unknown verdict form {form!r}; choose one of {', '.join(FORMS)}")
    if not isinstance(summary, str) or not summary.strip():
        raise ValueError(f"the verdict on {claim_id!r} must be a non-empty sentence, got {summary!r}")
    from IPython.display import Markdown
    from myst_nb import glue

    from ..display import typographic

    summary = typographic(summary.strip())
    glue(f"verdict_{claim_id}", Markdown(summary), display=False)
    glue(f"verdict_{claim_id}_form", form, display=False)
    return summary


def glued_keys(nb) -> set[str]:
    """The glue keys stored in an executed notebook's outputs."""
    keys = set()
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                keys.add(name)
    return keys


def _glued_values(nb) -> dict[str, str]:
    """Glue key -> its stored text (Markdown source for Markdown values)."""
    out = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []) if cell.cell_type == "code" else []:
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if not name:
                continue
            data = o.get("data", {})
            for mime in ("application/papermill.record/text/markdown", "text/markdown",
                         "application/papermill.record/text/plain", "text/plain"):
                if mime in data:
                    value = data[mime]
                    value = "".join(value) if isinstance(value, list) else value
                    if "plain" in mime and len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                        value = value[1:-1]
                    out[name] = value
                    break
    return out


def collect_verdicts(executed: dict[str, Path]) -> dict[str, dict]:
    """claim id -> {"form", "summary", "chapter", "preset"} for every verdict the executed chapters glued."""
    import nbformat

    out = {}
    for c in CLAIMS:
        path = executed.get(c.chapter)
        if path is None:
            continue
        nb = nbformat.read(str(path), as_version=4)
        values = _glued_values(nb)
        if f"verdict_{c.id}" in values and f"verdict_{c.id}_form" in values:
            params = nb.metadata.get("papermill", {}).get("parameters", {})
            out[c.id] = {"form": values[f"verdict_{c.id}_form"], "summary": values[f"verdict_{c.id}"],
                         "chapter": c.chapter, "preset": params.get("preset")}
    return out


def findings_markdown(verdicts: dict[str, dict]) -> str:
    """The README's findings block: one bullet per claim with a record-derived verdict."""
    lines = []
    for c in CLAIMS:
        v = verdicts.get(c.id)
        if c.machine_dependent:
            lines.append(f"- {statement(c)}: measured on the machine that builds the book (chapter "
                         f"{c.chapter.split('_', 1)[0]}).")
        elif v is None:
            lines.append(f"- {statement(c)}: pending (chapter {c.chapter.split('_', 1)[0]}).")
        else:
            lines.append(f"- {statement(c)}: **{v['form']}**. {v['summary']}")
    return "\n".join(lines)


FINDINGS_START = "<!-- findings: written by `python -m polyattn verdicts` from the verdicts; do not edit -->"
FINDINGS_END = "<!-- end of findings -->"


def replace_findings(readme_text: str, block: str) -> str:
    """``readme_text`` with the text between the findings markers replaced by ``block``."""
    if FINDINGS_START not in readme_text or FINDINGS_END not in readme_text:
        raise ValueError("README.md has no findings markers; add the lines "
                         f"{FINDINGS_START!r} and {FINDINGS_END!r} where the findings go")
    head, rest = readme_text.split(FINDINGS_START, 1)
    _, tail = rest.split(FINDINGS_END, 1)
    return f"{head}{FINDINGS_START}\n{block}\n{FINDINGS_END}{tail}"


def write_findings(executed: dict[str, Path], root: Path, verdicts_path: Path) -> bool:
    """Write the verdicts file and the README's findings block (book preset only); True when written."""
    from .verdicts import with_register_rows

    verdicts = collect_verdicts(executed)
    if not verdicts or any(v["preset"] != "book" for v in verdicts.values()):
        return False
    # the rows a register claim decides come from the records, whatever a chapter glued
    stable = {k: v for k, v in with_register_rows(verdicts).items()
              if not next(c for c in CLAIMS if c.id == k).machine_dependent}
    verdicts_path.parent.mkdir(parents=True, exist_ok=True)
    verdicts_path.write_text(json.dumps(stable, indent=1, sort_keys=True) + "\n")
    readme = root / "README.md"
    readme.write_text(replace_findings(readme.read_text(), findings_markdown(stable)))
    return True


def verdict_table(executed: dict[str, Path]) -> str:
    """The intro's verdict table as MyST markdown.

    ``executed`` maps chapter names (``NN_name``) to executed notebooks in the source tree.
    A verdict glued by the expected chapter is written into its row (the form in bold, then
    the one-sentence summary as Markdown, so its maths renders); any other row reads
    "pending: chapter NN".
    """
    from ..claims.register import REGISTER
    from ..claims.report import section_link

    verdicts = collect_verdicts(executed)
    lines = ["| claim | raised by | checked in | verdict |", "| --- | --- | --- | --- |"]
    for c in CLAIMS:
        number = c.chapter.split("_", 1)[0]
        v = verdicts.get(c.id)
        if v is not None:
            where = (section_link(c.id, f"chapter {number}") if c.id in REGISTER
                     else f"{{doc}}`chapter {number} </chapters/{c.chapter}>`")
            summary = " ".join(v["summary"].split()).replace("|", "\\|")
            cell = f"**{v['form']}**: {summary}"
        else:
            where = (f"{{doc}}`chapter {number} </chapters/{c.chapter}>`" if c.chapter in executed
                     else f"chapter {number}")
            cell = f"pending: chapter {number}"
        lines.append(f"| {statement(c)} | {c.source} | {where} | {cell} |")
    return "\n".join(lines)

