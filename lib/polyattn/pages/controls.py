"""What a registered claim's positive control shows, in words a page can glue.

A positive control is a ``check`` comparison of a registered claim: the same model with attention
ablated (every visible token weighted 1/N) against softmax, which must do worse if the benchmark
can see what attention does at all.  The register decides each comparison's result and outcome;
this module only says them:

    control_values(deliver("physics_poly"))    # {"stored": "0 of 9", "shows": "its runs are not ..."}
"""
from __future__ import annotations

from ..claims.report import estimate_cell


def _name(comparison_id: str) -> str:
    """The part of the benchmark a check covers: ``ablated_convection`` -> "convection",
    ``ablated_box_ap`` -> "box AP"."""
    return comparison_id.removeprefix("ablated_").replace("_ap", " AP").replace("_", " ")


def _and(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def control_values(delivered) -> dict[str, str]:
    """The claim's ``check`` comparisons (the positive control) as the page says them:

    - ``stored``: the control's seed pairs stored, of those planned ("0 of 9");
    - ``shows``: what the ablated arm shows, from the register's result and outcome of each
      comparison with at least two pairs: where it lands within the margin of softmax (or is
      otherwise not worse), the benchmark cannot see attention there; where it is worse, as it
      must be, the benchmark sees attention; where neither arm learned, or the pairs cannot tell,
      the question stays open.  Without two pairs anywhere, that its runs are not stored yet.
    """
    checks = [r for r in delivered.verdict.comparisons if r.comparison.role == "check"]
    if not checks:
        raise ValueError(f"claim {delivered.verdict.claim.id!r} has no positive control (no check comparison)")
    stored, planned = sum(r.n for r in checks), sum(r.planned for r in checks)
    out = {"stored": f"{stored} of {planned}"}
    judged = [r for r in checks if r.n >= 2]
    if not judged:
        out["shows"] = (f"its runs are not stored yet ({stored} of {planned} planned seed pairs), so whether the "
                        "benchmark can see attention is still open")
        return out

    def each(rs) -> str:
        return _and(f"{_name(r.comparison.id)} ({estimate_cell(r)}, {r.result})" for r in rs)

    blind = [r for r in judged if r.outcome == "contradicts"]
    sees = [r for r in judged if r.outcome in ("supports", "size unclear")]
    empty = [r for r in judged if r.outcome == "uninformative"]
    open_ = [r for r in judged if r.outcome == "open"]
    parts = []
    if blind:
        within = all(r.result.startswith("equivalent") for r in blind)
        parts.append(f"on {each(blind)} the ablated arm {'lands within the margin of' if within else 'is not worse than'} "
                     "softmax: there the benchmark cannot see attention, and a match between activations says nothing "
                     "about attention")
    if sees:
        parts.append(f"on {each(sees)} it does worse than softmax, as it must: there the benchmark sees attention")
    if empty:
        parts.append(f"on {each(empty)} neither arm learned the task, so the control cannot tell")
    if open_:
        parts.append(f"on {each(open_)} these pairs cannot yet tell whether it does worse")
    if stored < planned:
        parts.append(f"{stored} of {planned} planned seed pairs are stored")
    out["shows"] = "; ".join(parts)
    return out
