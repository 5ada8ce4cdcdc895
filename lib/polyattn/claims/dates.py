"""When each claim was registered, read from the repository history, against when its runs started.

A claim is registered by the commit that first wrote its id into the register: the topic modules
of :mod:`polyattn.claims.topics` now, ``register.py``, ``register_book.py`` and ``register_late.py``
before them (the history search keeps their paths, so it still finds that first commit).  The
claim's ``registered`` field holds that commit's day (:func:`registered_day`).  A claim registered
after some of its runs were seen must say so (``registered_after``), and its verdict row carries
that note.
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Optional

from ..results import REPO_ROOT, git
from .evaluate import arm_runs
from .register import REGISTER

#: Every file that has held the register's claims, the present ones and those of its history.
REGISTER_FILES = ("lib/polyattn/claims/topics", "lib/polyattn/claims/register.py",
                  "lib/polyattn/claims/register_book.py", "lib/polyattn/claims/register_late.py")


def registered_at(claim_id: str, root: Path = REPO_ROOT) -> Optional[datetime]:
    """The commit time of the first commit that wrote ``"claim_id"`` into the register, or of the
    claim's ``margin_commit`` when its margin predates the register (None without git or history;
    a claim not yet committed has none either)."""

    claim = REGISTER.get(claim_id)
    if claim is not None and claim.margin_commit:
        out = git("show", "-s", "--format=%cI", claim.margin_commit, root=root)
        return datetime.fromisoformat(out.strip()) if out else None
    out = git("log", "--reverse", "--format=%cI", "-S", f'"{claim_id}"', "--", *REGISTER_FILES, root=root)
    if not out:
        return None
    return datetime.fromisoformat(out.splitlines()[0].strip())


def registered_day(claim_id: str, root: Path = REPO_ROOT) -> Optional[str]:
    """The day of :func:`registered_at` as an ISO date (what a claim's ``registered`` field holds),
    in the commit's own time zone; None where :func:`registered_at` is."""
    when = registered_at(claim_id, root)
    return when.date().isoformat() if when is not None else None


def _first_start(runs) -> Optional[datetime]:
    times = [datetime.fromisoformat(r["provenance"]["started"]) for r in runs.records.values()
             if r.get("provenance", {}).get("started")]
    return min(times) if times else None


def first_observable(claim) -> Optional[datetime]:
    """When the first of a claim's comparisons could first be seen: for each comparison, the time
    both of its arms had a run started (the later of the two arms' first starts); the earliest
    of these over the claim.  None when no comparison has runs in both arms."""

    seen = []
    for comp in claim.comparisons:
        a = _first_start(arm_runs(comp.candidate, pool_over=comp.pool_over))
        b = _first_start(arm_runs(comp.baseline, pool_over=comp.pool_over))
        if a is not None and b is not None:
            seen.append(max(a, b))
    return min(seen) if seen else None
