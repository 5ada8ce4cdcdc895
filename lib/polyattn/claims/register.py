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


# --- where the book shows each claim: read from the claims' own fields (:class:`polyattn.claims.spec.Claim`) ---

def _every_claim() -> tuple:
    return (*REGISTER.values(), *MEASURED.values())


def _ordered(field_name: str, claims=None) -> tuple[str, ...]:
    """The ids of the claims with ``field_name`` set, in its order (a place taken twice is an error)."""
    placed = [(getattr(c, field_name), c.id) for c in (claims if claims is not None else _every_claim())
              if getattr(c, field_name) is not None]
    places = [p for p, _ in placed]
    if len(set(places)) != len(places):
        twice = sorted({p for p in places if places.count(p) > 1})
        raise ValueError(f"{field_name} {twice} is given to more than one claim: "
                         f"{sorted(cid for p, cid in placed if p in twice)}")
    return tuple(cid for _, cid in sorted(placed))


def answer_ids(claims=None) -> tuple[str, ...]:
    """The claims of the answer table, in the order a reader asks them (their ``answer_row``)."""
    return _ordered("answer_row", claims)


def verdict_ids(claims=None) -> tuple[str, ...]:
    """The claims of the intro's verdict table, in order (their ``verdict_row``)."""
    return _ordered("verdict_row", claims)


#: The answer table's claims, in order, and the short name each is shown by.
HEADLINE = answer_ids()
HEADLINES = {cid: any_claim(cid).headline for cid in HEADLINE}
#: The verdict table's claims, in order.
VERDICT_ROWS = verdict_ids()
#: The forest plot's group of each claim that names one (the others take their chapter's).
TOPIC_NAMES = {c.id: c.topic for c in _every_claim() if c.topic is not None}
