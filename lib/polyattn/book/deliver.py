"""A chapter's verdict on a registered claim, computed by the one rule and glued for the page.

    v = deliver("lra_fixed_scale")      # glues claim_lra_fixed_scale (a Markdown sentence) and
    v.table                              # ..._form; a styled table of the claim's comparisons
    registered_rows("vit_table1", [v])   # activation -> the claim's row, for a grid's own table
    registered_text(v, "table1")         # one comparison of the claim in words

When the claim also has a row in the intro's verdict table (``polyattn.book.verdict_rows.CLAIMS``), the
same sentence and form are delivered there, so the chapter, the intro and the README agree.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import pandas as pd

from ..claims.evaluate import evaluate
from ..claims.register import MEASURED, REGISTER
from ..claims.report import comparison_rows, plain, summary
from ..display import typographic
from ..numbers import readable_numbers
from ..runs import stored
from .answer_rows import answer_rows as book_answer_rows
from .answer_rows import legend_line, table_markdown
from .common import register_grids
from .verdict_rows import CLAIM_IDS, verdict


@dataclass
class Delivered:
    verdict: object  # polyattn.claims.evaluate.ClaimVerdict, or a Finding for a measured claim
    sentence: str
    table: object    # a pandas Styler


TABLE_STYLE = [{"selector": "th, td", "props": "padding: 0.25em 0.6em; text-align: left; vertical-align: top"},
               {"selector": "th", "props": "font-weight: 600"}]


def styled(rows: list[dict], caption: str = "") -> "pd.io.formats.style.Styler":
    """A table for people: no index, padding between cells, an optional caption; the numbers of
    its text cells and caption as a reader reads them (:func:`~polyattn.numbers.readable_numbers`)."""
    frame = pd.DataFrame([{k: readable_numbers(v) if isinstance(v, str) else v for k, v in row.items()}
                          for row in rows])
    sty = frame.style.hide(axis="index").set_table_styles(TABLE_STYLE)
    return sty.set_caption(readable_numbers(caption)) if caption else sty


def glue(name: str, value, display: bool = True):
    """``myst_nb.glue`` with the numbers of a text or Markdown value as a reader reads them
    (:func:`~polyattn.numbers.readable_numbers`: 2.6 × 10⁻⁹, not 2.6e-09); other values are glued
    as they are (a page that formats a glued float, ``{glue:text}`name:.2f```, gets the float)."""
    from IPython.display import Markdown
    from myst_nb import glue as myst_glue


    if isinstance(value, str):
        value = readable_numbers(value)
    elif isinstance(value, Markdown):
        value = Markdown(readable_numbers(value.data))
    return myst_glue(name, value, display=display)


def deliver(claim_id: str, glue_it: bool = True) -> Delivered:
    """Evaluate a registered claim from the stored records, glue its sentence and form, and
    deliver them to the intro's verdict row of the same id when there is one."""

    register_grids()
    if claim_id in MEASURED:
        return _deliver_measured(claim_id, glue_it)
    v = evaluate(claim_id)
    body = summary(v)
    # the sentence stands alone on the page (after a heading in bold or a colon): its verdict opens it
    text = f"**{v.form[:1].upper()}{v.form[1:]}**. {body}"
    if glue_it:
        from IPython.display import Markdown
        from myst_nb import glue

        glue(f"claim_{claim_id}", Markdown(text), display=False)
        glue(f"claim_{claim_id}_form", v.form, display=False)
        glue(f"claim_{claim_id}_terms", Markdown(beside_table(text)), display=False)
        if claim_id in CLAIM_IDS:
            verdict(claim_id, body, form=v.form)
    rows = [{k: r[k] for k in ("Comparison", "Pairs", "Difference [95% CI]", "90% CI", "Holm p", "TOST p", "Result")}
            for r in comparison_rows(v)]
    caption = (f"{plain(v.claim.statement)}: margin ±{v.claim.margin:g}, α = {v.claim.alpha:g}, "
               "Holm over the claim's informative primary comparisons; "
               f"{v.claim.scale}")
    return Delivered(v, text, styled(rows, caption))


def beside_table(text: str) -> str:
    """A claim's sentence (:func:`deliver`) for a place where the table of its comparisons is shown: its
    verdict and its terms (margin, deciding tier, scale, notes) without the comparisons, which would
    repeat the table's rows in one sentence shape each."""
    head, sep, _ = text.partition(". ")
    _, margin, terms = text.rpartition(". Margin ±")
    if not margin:  # no terms to keep: the verdict alone
        return head + "."
    return f"{head}{sep}Its comparisons are the table's rows. Margin ±{terms}"


def _deliver_measured(claim_id: str, glue_it: bool) -> Delivered:
    """A measured claim's finding (its measure function), glued like a register verdict; its table
    holds the finding's numbers."""

    register_grids()
    c = MEASURED[claim_id]
    finding = c.evaluate()
    text = typographic(f"**{finding.form[:1].upper()}{finding.form[1:]}**. {finding.summary.strip()}")
    if glue_it:
        from IPython.display import Markdown
        from myst_nb import glue

        glue(f"claim_{claim_id}", Markdown(text), display=False)
        glue(f"claim_{claim_id}_form", finding.form, display=False)
        if claim_id in CLAIM_IDS:
            verdict(claim_id, finding.summary, form=finding.form)
    rows = [{"Quantity": k, "Value": v} for k, v in finding.numbers.items() if not isinstance(v, (list, dict, tuple))]
    return Delivered(finding, text, styled(rows, f"{c.rule} {c.scale}".strip()))


def registered_rows(grid: str, delivered: Iterable[Delivered], pooled: bool = False,
                    preset: str = "book") -> dict[str, dict]:
    """Activation -> the row (:func:`polyattn.claims.report.comparison_rows`, with its ``claim``)
    of each registered comparison of an activation of ``grid`` against softmax in the same grid,
    from the ``delivered`` claims; the comparisons pooled over cells (model, recipe) when
    ``pooled``, else the unpooled ones.

    The register reads the book preset's records, so at any other ``preset`` this is empty and
    that preset's tables keep their own numbers."""
    out = {}
    if preset != "book":
        return out
    for d in delivered:
        for r, row in zip(d.verdict.comparisons, comparison_rows(d.verdict)):
            c = r.comparison
            if (c.candidate.grid == c.baseline.grid == grid and dict(c.baseline.fields) == {"activation": "softmax"}
                    and set(c.candidate.fields) == {"activation"} and bool(c.pool_over) == pooled):
                out[c.candidate.fields["activation"]] = {**row, "claim": d.verdict.claim.id}
    return out


def registered_text(delivered: Delivered, comparison_id: str) -> str:
    """One comparison of a delivered claim in words: its difference with its interval, the seed
    pairs, Holm p over the claim's comparisons, TOST p against the claim's margin, and its result."""
    v = delivered.verdict
    rows = {r.comparison.id: row for r, row in zip(v.comparisons, comparison_rows(v))}
    if comparison_id not in rows:
        raise ValueError(f"claim {v.claim.id!r} has no comparison {comparison_id!r}; its comparisons: "
                         f"{', '.join(rows)}")
    row = rows[comparison_id]
    return (f"{row['Comparison']}: {row['Difference [95% CI]']} ({row['Pairs']} seed pairs, Holm p {row['Holm p']} "
            f"over the claim's comparisons, TOST p {row['TOST p']} against ±{v.claim.margin:g}), {row['Result']}")


def findings(chapter: str, glue_it: bool = True) -> str:
    """The opening table of ``chapter`` ("What this chapter found"): one line per claim the chapter
    computes (comparisons of runs and measured claims), with its verdict word and key number, as
    MyST Markdown; each compared claim links to the section that computes it.

    Glued as ``findings_<chapter>``; paste it with the block directive (the inline role parses
    inline Markdown only, so a table pasted with it does not render as a table)::

        ```{glue:md} findings_<chapter>
        :format: myst
        ```

    The same rows as the intro's answer table (each keyed by its deciding comparison), restricted to
    this chapter, with full statements linked to the sections that compute them.
    """
    register_grids()
    ids = [cid for cid, c in REGISTER.items() if c.chapter == chapter]
    measured = [c for c in MEASURED.values() if c.chapter == chapter and not c.machine_dependent]
    if not ids and not measured:
        raise ValueError(f"no registered claim names chapter {chapter!r}; chapters with claims: "
                         f"{sorted({c.chapter for c in (*REGISTER.values(), *MEASURED.values())})}")
    verdicts = {cid: evaluate(cid) for cid in ids}
    answer = book_answer_rows(verdicts, ids)
    rows = table_markdown(answer, links=True, statements=True).splitlines()
    for c in measured:  # measured claims: the form and the first sentence of the finding
        finding = c.evaluate()
        first = typographic(finding.summary.strip().split(". ")[0].rstrip(".")).replace("|", "\\|")
        rows.append(f"| {c.statement} | **{finding.form}** | {first} |")
    text = "\n".join(rows)
    if legend_line(answer):
        text += f"\n\n{legend_line(answer)}"
    if glue_it:
        from IPython.display import Markdown
        from myst_nb import glue

        glue(f"findings_{chapter}", Markdown(text), display=False)
    return text


def stored_of(configs) -> str:
    """"3 of 36": how many of ``configs`` have a valid stored record (clean-tree evidence only)."""
    configs = list(configs)
    return f"{len(stored_records(configs)):,} of {len(configs):,}"


def stored_records(configs) -> list[dict]:
    """The valid stored records of ``configs`` (clean-tree evidence only), in the configs' order."""
    return [r for r in (stored(c) for c in configs) if r is not None]
