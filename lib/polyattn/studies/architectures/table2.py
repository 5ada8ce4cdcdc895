"""Chapter 10's "Pooled over the architectures": the register's comparisons of
``table2_architectures``, each pooled over the four architectures and followed by its cells, each
architecture's own difference:

    table2_table(deliver("table2_architectures")); table2_values(delivered)
"""
from __future__ import annotations

from ...analysis import architectures as arch
from ...book.deliver import styled
from ...claims.report import comparison_rows, estimate_cell, plain
from ...numbers import fixed
from .page import ARCHITECTURE_NAMES, DESCRIPTION, SMALL, architecture_name


def _cell_name(key) -> str:
    """A pooled comparison's cell key (``("timm:vit_micro",)``) as its architecture's name."""
    model = key[0] if isinstance(key, tuple) else key
    return architecture_name(arch.architecture_of({"model": model}))


def table2_rows(delivered) -> list[dict]:
    """Each registered comparison of ``table2_architectures`` pooled over the architectures (with
    the register's pairs, interval, p-values and result), followed by its cells: each
    architecture's own difference and 95% interval (description: the register pools them)."""
    out = []
    for r, row in zip(delivered.verdict.comparisons, comparison_rows(delivered.verdict)):
        name = row["Comparison"].split(",")[0]
        out.append({"Comparison": name, "Over": "pooled (the claim)", "Pairs": row["Pairs"],
                    "Difference (points) [95% CI]": row["Difference [95% CI]"].removesuffix(" points"),
                    "90% CI": row["90% CI"], "Holm p": row["Holm p"], "TOST p": row["TOST p"], "Result": row["Result"]})
        for key, (mean, lo, hi, n) in sorted((r.cell_estimates or {}).items(), key=lambda kv: _cell_order(kv[0])):
            out.append({"Comparison": "", "Over": _cell_name(key), "Pairs": str(n),
                        "Difference (points) [95% CI]": f"{fixed(mean, 2, True)} [{fixed(lo, 2, True)}, {fixed(hi, 2, True)}]",
                        "90% CI": "", "Holm p": "", "TOST p": "", "Result": ""})
    return out


def _cell_order(key) -> int:
    names = list(ARCHITECTURE_NAMES.values())
    name = _cell_name(key)
    return names.index(name) if name in names else len(names)


def table2_table(delivered):
    """:func:`table2_rows`, styled, with the claim's margin, scale and what the cell rows are."""
    c = delivered.verdict.claim
    # eight columns: the intervals may break at their comma, or the table is wider than the page's column
    return styled(table2_rows(delivered), (
        f"{plain(c.statement)}: the claim register's pooled comparisons (margin ±{c.margin:g}, α = {c.alpha:g}, Holm "
        f"over the claim's comparisons) and, below each, its four architectures' own differences ({DESCRIPTION}); "
        f"{c.scale}")).set_table_styles(SMALL, overwrite=False)


def table2_values(delivered) -> dict[str, str]:
    """Per registered comparison (``sqrt_n``, ``fixed``): the pooled difference with its interval,
    the lowest and the highest architecture's difference, and whether the cells ``differ in sign``
    or ``share a sign``."""
    keys = {"cube_sqrt_n": "sqrt_n", "cube_14": "fixed"}
    out = {}
    for r in delivered.verdict.comparisons:
        k = keys.get(r.comparison.id, r.comparison.id)
        out[f"{k}_pooled"] = estimate_cell(r).removesuffix(" points")
        cells = sorted((m, _cell_name(key)) for key, (m, *_) in (r.cell_estimates or {}).items())
        if not cells:
            out[f"{k}_low"] = out[f"{k}_high"] = out[f"{k}_signs"] = "no cells stored"
            continue
        out[f"{k}_low"] = f"{fixed(cells[0][0], 2, True)} ({cells[0][1]})"
        out[f"{k}_high"] = f"{fixed(cells[-1][0], 2, True)} ({cells[-1][1]})"
        out[f"{k}_signs"] = "differ in sign" if cells[0][0] < 0 < cells[-1][0] else "share a sign"
    return out

