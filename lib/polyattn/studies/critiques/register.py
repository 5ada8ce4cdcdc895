"""Chapter 09, the claim register's comparisons as the page shows them: one comparison in a table
cell, a claim's comparisons in a compact table (one column per reading of the recipe where it is
made with gradient clipping and without), and each alternative to the 1/sqrt(N) factor without
clipping ("Without gradient clipping: what else could do the factor's job?").  The comparisons come
from :func:`polyattn.book.deliver.deliver`.
"""
from __future__ import annotations

import re
from typing import Mapping, Optional

from ...book.deliver import styled
from ...claims.report import estimate_cell
from ...labels import length_aware_gain
from .page import compact


def _comparison(delivered, comparison_id: str):
    v = delivered.verdict
    r = next((r for r in v.comparisons if r.comparison.id == comparison_id), None)
    if r is None:
        raise ValueError(f"claim {v.claim.id!r} has no comparison {comparison_id!r}; its comparisons: "
                         f"{', '.join(x.comparison.id for x in v.comparisons)}")
    return r


def comparison_cell(delivered, comparison_id: str, unit: bool = True, pairs: bool = True) -> str:
    """One comparison of a delivered claim in a table cell: its difference and interval, the
    register's result and the pairs ("−0.78 [−4.02, +2.46] points, inconclusive (3 pairs)");
    without ``unit`` and ``pairs`` when the table's caption gives them ("−0.78 [−4.02, +2.46],
    inconclusive")."""
    r = _comparison(delivered, comparison_id)
    if r.n < 2:
        return f"{r.n} pair{'s' if r.n != 1 else ''} stored"
    estimate = estimate_cell(r)
    if not unit and r.unit:
        estimate = estimate.replace(f" {r.unit}", "")
    return f"{estimate}, {r.result}{r.qualifier}" + (f" ({r.n} pairs)" if pairs else "")


def _pairs_and_unit(delivered, ids) -> tuple[str, str]:
    """The seed pairs and the unit of the comparisons ``ids`` of a delivered claim, for a caption:
    ("3 seed pairs each" or "3 or 5 seed pairs", "points")."""
    found = [_comparison(delivered, cid) for cid in ids]
    ns = sorted({r.n for r in found})
    units = sorted({r.unit for r in found if r.unit})
    pairs = f"{ns[0]} seed pairs each" if len(ns) == 1 else f"{' or '.join(map(str, ns))} seed pairs"
    return pairs, " or ".join(units) or "points"


def by_clipping(delivered) -> dict[str, dict[str, str]]:
    """The layout of :func:`register_table` for a claim that makes each comparison with gradient
    clipping and without (comparison ids ending ``_clipped`` and ``_unclipped``): one row per
    comparison, one column per reading of the recipe."""
    layout: dict = {}
    columns = {"_clipped": "clipped at norm 1", "_unclipped": "without clipping"}
    for r in delivered.verdict.comparisons:
        suffix = next((x for x in columns if r.comparison.id.endswith(x)), None)
        if suffix is None:
            raise ValueError(f"comparison {r.comparison.id!r} of claim {delivered.verdict.claim.id!r} names no clipping")
        label = re.sub(r",? (un)?clipped$", "", r.comparison.label)
        layout.setdefault(label, {})[columns[suffix]] = r.comparison.id
    return layout


def register_table(delivered, layout: Optional[Mapping[str, Mapping[str, str]]] = None):
    """A registered claim's comparisons in a compact table, each cell its difference [95% CI] and
    result (:func:`comparison_cell`; the unit and the seed pairs in the caption): one row per
    comparison by default, or ``layout`` (row label -> {column label: comparison id}, e.g.
    :func:`by_clipping`).  The register's full table, with Holm and TOST p, is ``delivered.table``."""
    v = delivered.verdict
    if layout is None:
        layout = {r.comparison.label: {"difference [95% CI], result": r.comparison.id} for r in v.comparisons}
    pairs, unit = _pairs_and_unit(delivered, [cid for cells in layout.values() for cid in cells.values()])
    rows = [{"comparison": label, **{col: comparison_cell(delivered, cid, unit=False, pairs=False)
                                     for col, cid in cells.items()}}
            for label, cells in layout.items()]
    return compact(styled(rows, f"The claim register's comparisons: difference in test-accuracy {unit}, {pairs}; "
                                f"margin ±{v.claim.margin:g}, α = {v.claim.alpha:g}, Holm over the claim's informative "
                                f"primary comparisons (Holm and TOST p in its full table, folded below); {v.claim.scale}"))


#: The alternatives to the 1/sqrt(N) factor without clipping: (name, (claim, comparison) against
#: x^3/sqrt(N) or None, (claim, comparison) against the unscaled x^3).
ALTERNATIVES = (
    ("Q/K decay 0.5", ("qk_controls_unclipped", "qk_decay_0.5"), ("alternatives_vs_unscaled", "qk_decay_0.5")),
    ("Q/K decay 5", ("qk_controls_unclipped", "qk_decay_5"), ("alternatives_vs_unscaled", "qk_decay_5")),
    ("Q/K init ×{gain:.2f}", ("qk_controls_unclipped", "qk_init"), ("alternatives_vs_unscaled", "qk_init")),
    ("all matrices decay 0.5", ("weight_decay_unclipped", "cube_decay_0.5"), ("alternatives_vs_unscaled", "decay_0.5")),
    ("QK-norm", ("qk_norm", "cube_qknorm_vs_scaled"), ("alternatives_vs_unscaled", "qk_norm")),
    ("clipping at norm 1", None, ("alternatives_vs_unscaled", "clipping")),
)


def alternatives_table(delivered: Mapping[str, object]):
    """Each alternative to the 1/sqrt(N) factor (:data:`ALTERNATIVES`) against x^3/sqrt(N) and
    against the unscaled x^3, each cell the register's comparison (:func:`comparison_cell`) from
    the ``delivered`` claims (claim id -> :class:`polyattn.book.deliver.Delivered`)."""
    from ...experiments import critiques as grids
    gain = length_aware_gain(grids.TABLE1_TOKENS, 3)
    rows = [{"alternative": label.format(gain=gain),
             "pairs": " / ".join(str(n) for n in dict.fromkeys(
                 _comparison(delivered[pair[0]], pair[1]).n for pair in (vs_scaled, vs_cube) if pair)),
             "against x³/√N": comparison_cell(delivered[vs_scaled[0]], vs_scaled[1], unit=False, pairs=False)
             if vs_scaled else "the clipping claim",
             "against the unscaled x³": comparison_cell(delivered[vs_cube[0]], vs_cube[1], unit=False, pairs=False)}
            for label, vs_scaled, vs_cube in ALTERNATIVES]
    margins = sorted({f"{d.verdict.claim.margin:g}" for d in delivered.values()})
    return compact(styled(rows, "Each alternative to the 1/√N factor, applied to the unscaled x³, Table 1's recipe "
                                "without gradient clipping (clipping itself: with against without): the claim register's "
                                "comparisons, difference in test-accuracy points [95% CI] and result over the seed pairs, "
                                f"margin ±{' or ±'.join(margins)}, Holm within each claim; micro ViT on Fashion-MNIST, "
                                "book preset"))
