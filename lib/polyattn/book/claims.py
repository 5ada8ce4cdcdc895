"""The claims of the intro's verdict table, the glue that carries a chapter's verdict, and the table."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Claim:
    """A claim of the paper or a critique of its reviewers, and the chapter that checks it."""

    id: str
    claim: str
    source: str
    chapter: str  # "NN_name" of the chapter expected to deliver the verdict


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
    Claim("thm44_45", "Thm 4.4/4.5: the Jacobian norms of $x^p/\\sqrt{N}$ grow like those of softmax",
          "paper", "02_proofs"),
    Claim("fig1_scale", "Figure 1: in which direction the best scale moves as the sequence length changes",
          "paper; review ICLR 2025", "04_vit"),
    Claim("table_parity", "Tables 1/2: scaled $x^3$ matches or beats softmax on image classification",
          "paper", "04_vit"),
    Claim("norms_predict", "Attention and Jacobian norms predict which activation trains best",
          "paper; review ICLR 2025", "03_norms"),
    Claim("cost", "The cost of polynomial attention (time, memory) is not analysed",
          "review ICLR 2025", "08_costs"),
    Claim("causal_scaling", "Causal masks and variable lengths: which $N$ scales each row",
          "review ICLR 2025", "07_critiques"),
)
CLAIM_IDS = tuple(c.id for c in CLAIMS)



def verdict(claim_id: str, text: str) -> str:
    """Deliver a chapter's verdict on a claim of :data:`CLAIMS` to the intro's table.

    Call it in a chapter with a short sentence built from computed numbers; the intro pastes
    it through the glue key ``verdict_<claim_id>``.  Returns the text (so the chapter can
    also show it).
    """
    if claim_id not in CLAIM_IDS:
        raise ValueError(f"unknown claim {claim_id!r}; the claims of the verdict table are {', '.join(CLAIM_IDS)}")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"the verdict on {claim_id!r} must be a non-empty sentence, got {text!r}")
    from myst_nb import glue

    glue(f"verdict_{claim_id}", text.strip(), display=False)
    return text.strip()


def glued_keys(nb) -> set[str]:
    """The glue keys stored in an executed notebook's outputs."""
    keys = set()
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                keys.add(name)
    return keys


def verdict_table(executed: dict[str, Path]) -> str:
    """The intro's verdict table as MyST markdown.

    ``executed`` maps chapter names (``NN_name``) to executed notebooks in the source tree.
    A verdict glued by the expected chapter is pasted by cross-document glue; any other
    row reads "pending: chapter NN".
    """
    import nbformat

    keys = {name: glued_keys(nbformat.read(str(p), as_version=4)) for name, p in executed.items()}
    lines = ["| claim | raised by | checked in | verdict |", "| --- | --- | --- | --- |"]
    for c in CLAIMS:
        number = c.chapter.split("_", 1)[0]
        key = f"verdict_{c.id}"
        if c.chapter in executed and key in keys[c.chapter]:
            where = f"{{doc}}`chapter {number} </chapters/{c.chapter}>`"
            cell = f"{{glue:text}}`chapters/{c.chapter}.ipynb::{key}:s`"
        else:
            where = (f"{{doc}}`chapter {number} </chapters/{c.chapter}>`" if c.chapter in executed
                     else f"chapter {number}")
            cell = f"pending: chapter {number}"
        lines.append(f"| {c.claim} | {c.source} | {where} | {cell} |")
    return "\n".join(lines)

