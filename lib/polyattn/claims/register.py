"""The register of claims: every conclusion the book draws from trained runs, with its margin,
alpha, Holm family and the comparisons that test it, fixed before the runs it reads or saying
that it was not (``registered_after``, ``chance_registered_after``).

The claims live by topic, one module per chapter (:mod:`polyattn.claims.topics`); what the topics
share, the arms and the tasks' chance levels, in :mod:`polyattn.claims.constants`.  Each claim
carries the day it was registered (``registered``).  Chapters read their margins and comparisons
from here and never set them in their own cells.  The verdict of each claim is computed by the one
rule of :mod:`polyattn.claims.rule`; the claims decided by a measurement rather than by comparisons
of runs are :data:`MEASURED`.
"""
from __future__ import annotations

from .register_measured import MEASURED
from .spec import MeasuredClaim, RegisteredClaim
from .topics import TOPICS


def _by_id(claims) -> dict[str, RegisteredClaim]:
    out = {}
    for c in claims:
        if c.id in out:
            raise ValueError(f"claim id {c.id!r} is registered twice")
        out[c.id] = c
    return out


#: Every claim decided by comparisons of runs, by id, in the book's chapter order.
REGISTER = _by_id(c for topic in TOPICS for c in topic.CLAIMS)


def claim(claim_id: str) -> RegisteredClaim:
    """The registered claim ``claim_id``, with a clear error for an unknown id."""
    try:
        return REGISTER[claim_id]
    except KeyError:
        raise ValueError(f"unknown claim {claim_id!r}; registered: {sorted(REGISTER)}") from None


def any_claim(claim_id: str) -> "RegisteredClaim | MeasuredClaim":
    """The claim ``claim_id``, decided by comparisons of runs (:data:`REGISTER`) or by a measurement
    (:data:`MEASURED`), with a clear error for an unknown id."""
    found = REGISTER.get(claim_id) or MEASURED.get(claim_id)
    if found is None:
        raise ValueError(f"unknown claim {claim_id!r}; registered: {sorted({*REGISTER, *MEASURED})}")
    return found


__all__ = ["MEASURED", "REGISTER", "any_claim", "claim"]
