"""What the sections of chapter 02 (the paper's theorems, checked) share: the page's setup and glue,
the findings the sections' sentences quote, the table style that keeps numbers on one line, the
figures' font, legend, stamp and colours of the powers, and the closing summary.

The computations are :mod:`polyattn.theory`'s and :mod:`polyattn.model_norms`'; the verdicts and
the numbers of their sentences come from chapter 02's measure modules
(``polyattn.measures.proofs_*``), whose stored measurements
(:mod:`polyattn.measures.proofs_measurements`) the page's tables and figures read as well.  The
page's modules shape what the page shows:

    seed_of(seeds, preset); setting_values(preset, seed); glue_all(numbers)   # the page's setup
    claim_numbers("thm41_1")                                                  # a finding's numbers
    findings_table()                                                          # the closing summary

The sections' tables, figures and values: :mod:`polyattn.studies.proofs.softmax` (Theorem 4.1, the
softmax norm and its Jacobian), :mod:`polyattn.studies.proofs.product_powers` (Theorem 4.2 and
Corollary 4.3, and what 1/sqrt(N) buys), :mod:`polyattn.studies.proofs.matrix_powers` (critique 7:
matrix or elementwise powers), :mod:`polyattn.studies.proofs.query_gradient` (Theorem 4.4 and
Corollary 4.5) and :mod:`polyattn.studies.proofs.assumptions` (where the assumptions fail).

Each section of the page asks for its data again (the loaders keep their frames for the session),
so no section reads another section's variables.  Every ``*_numbers`` function returns the
section's glued values as text, formatted as the prose reads them.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Mapping

from ... import theory
from ...analysis.tables import number_cell
from ...book.deliver import deliver, glue, styled
from ...measures import proofs_measurements
from ...numbers import scientific

#: Labels of the figures (points): at least the book's minimum.
FONT = 9
#: The paper's power (every preset's grid contains it).
P_MAX = proofs_measurements.P_MAX
#: The claims this chapter delivers, in the page's order, with the evidence each rests on.
CLAIMS = (
    ("thm41_1", "Thm 4.1 (1)", "proof; adversarial ascent"),
    ("thm41_2", "Thm 4.1 (2)", "sharp constant proved; ascent with restarts"),
    ("thm42_43", "Thm 4.2 and Cor 4.3", "exact moments; Monte Carlo; fits in N"),
    ("critique7_matrix_powers", "Critique 7 (matrix powers)", "the proofs; Monte Carlo of both readings"),
    ("thm44_45", "Thm 4.4 and Cor 4.5", "exact p = 1 norm; Monte Carlo; fits in N"),
)
#: The unscaled cube, which the growth in N and the micro ViT's norms add to the scaled powers.
UNSCALED_CUBE = "poly:p=3,c=1"


# --- setup and glued values ---------------------------------------------------------------------


def seed_of(seeds, preset: str) -> int:
    """The page's seed: the theory preset's default for ``None``, else the first of ``seeds``."""
    return theory.resolve_seed(seeds, theory.preset(preset))


def setting_values(preset: str, seed: int) -> dict[str, str]:
    """The preset and seed the page states."""
    return {"preset": preset, "seed": str(seed)}


def formatted(numbers: Mapping[str, object], formats: Mapping[str, str], prefix: str = "") -> dict[str, str]:
    """``{prefix + key: numbers[key] formatted by its spec}`` for each key of ``formats``; a string
    is kept as it is, an integer spec (``d``) reads with thousands separators and ``sci`` in
    scientific notation with two digits (1.0 × 10⁻⁵)."""
    out = {}
    for key, spec in formats.items():
        if key not in numbers:
            raise KeyError(f"no number {key!r} to format; there are {', '.join(sorted(numbers))}")
        value = numbers[key]
        if isinstance(value, str):
            out[prefix + key] = value
        elif spec == "d":
            out[prefix + key] = f"{int(value):,}"
        elif spec == "sci":
            out[prefix + key] = scientific(float(value))
        else:
            out[prefix + key] = format(float(value), spec)
    return out


def glue_all(values: Mapping[str, str], prefix: str = "ch02_") -> None:
    """Glue each value as ``<prefix><key>`` for the page's ``{glue:text}`` references (the glue
    writes powers of ten and minus signs as a reader reads them)."""
    for key, value in values.items():
        glue(f"{prefix}{key}", value, display=False)


@lru_cache(maxsize=None)
def finding(claim_id: str):
    """The finding of a delivered claim (its stored measurement at the book preset); kept for the
    session."""
    return deliver(claim_id, glue_it=False).verdict


def claim_numbers(claim_id: str) -> dict:
    """The numbers of a delivered claim's finding (the stored measurement at the book preset)."""
    return dict(finding(claim_id).numbers)


# --- tables and figures -------------------------------------------------------------------------


def nowrap_table(rows: list[dict], caption: str, nowrap: str = "td"):
    """:func:`polyattn.book.deliver.styled` with the cells ``nowrap`` selects kept on one line, so
    that a number and its interval or power of ten never break across lines."""
    return styled(rows, caption).set_table_styles([{"selector": nowrap, "props": "white-space: nowrap"}],
                                                  overwrite=False)


def legend(ax, outside: bool = False, **kw):
    """A legend without a frame in the figures' font, beside the axes when ``outside``."""
    where = dict(loc="upper left", bbox_to_anchor=(1.02, 1.0)) if outside else {}
    return ax.legend(frameon=False, fontsize=FONT, **{**where, **kw})


def stamp(target, preset: str, text: str, loc: str = "lower right"):
    """:func:`polyattn.plotting.stamp` in the figures' font."""
    from ... import plotting

    plotting.stamp(target, preset, text, loc=loc).set_fontsize(FONT)


def power_color(p: int) -> str:
    """Powers p are drawn in the colours of the scaled polynomials x^p/sqrt(N)."""
    from ... import plotting

    return plotting.activation_color(f"poly:p={p}")


def pm_cell(estimate: float, low: float, high: float, fmt: str = ".3f") -> str:
    """An estimate with the half-width of its symmetric 95% interval to as many decimals, "0.505 ±
    0.009", "12.0 ± 0.3" (the page's intervals are normal or Student-t intervals, symmetric about
    the estimate)."""
    shown = number_cell(estimate, fmt)
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    return f"{shown} ± {(high - low) / 2:.{decimals}f}"


# --- what the chapter found ---------------------------------------------------------------------


def findings_table():
    """Each result of the paper's section 4 with the form its finding takes and the evidence."""
    return styled([{"result": label, "verdict": finding(cid).form, "evidence": evidence}
                   for cid, label, evidence in CLAIMS],
                  "Each result of the paper's section 4, as this chapter's computations judge it (book preset)")
