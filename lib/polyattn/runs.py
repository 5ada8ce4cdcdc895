"""Stored record if valid, otherwise train: the one place that joins storage and training.

``load_or_run(config)`` reads ``<root>/<experiment>/<hash>-seed<k>.json`` through
:mod:`polyattn.results`; when it is missing, corrupt or ``recompute`` is set, it runs the
config's task with :func:`polyattn.train.fit` and writes the record atomically.

Book and paper records go to ``data/results`` only when computed from a clean tree; from a
modified tree they go to ``_build/dirty-results`` (loaded from there with a warning, never
evidence), so the committed folder only ever holds reproducible records.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Callable, Iterable

from . import results


def _default_runner(config, **kw):
    from .train import fit

    return fit(config, **kw)


def _load_valid(path: Path, config, evidence: bool):
    if not path.exists():
        return None
    try:
        return results.load(path, config, evidence=evidence)
    except results.InvalidRecord as exc:
        warnings.warn(f"result file {path} is invalid ({exc}); recomputing it", stacklevel=3)
        return None


def stored(config, root: Path | None = None) -> dict | None:
    """The stored record of ``config`` if one is valid (evidence root first, then dirty results)."""
    path = results.record_path(config, root)
    evidence = results.is_evidence_root(path.parents[1])
    rec = _load_valid(path, config, evidence)
    if rec is None and evidence and root is None:
        dirty = results.record_path(config, results.dirty_root())
        if dirty.exists():
            rec = _load_valid(dirty, config, False)
            if rec is not None:
                warnings.warn(f"using {dirty}, computed from a modified tree: not evidence", stacklevel=2)
    return rec


def load_or_run(config, recompute: bool = False, root: Path | None = None,
                runner: Callable | None = None, **run_kwargs) -> dict:
    """The stored record for ``config`` when present and valid, otherwise computed and stored."""
    if not recompute:
        rec = stored(config, root)
        if rec is not None:
            return rec
    record = (runner or _default_runner)(config, **run_kwargs)
    if record.get("rank", 0) == 0:
        path = results.record_path(config, root)
        if (root is None and results.is_evidence_root(path.parents[1])
                and record["preset"] in results.EVIDENCE_PRESETS and record["provenance"].get("git_dirty")):
            path = results.record_path(config, results.dirty_root())
            warnings.warn(f"the tree has uncommitted changes under lib/: the record goes to {path}, not to "
                          f"data/results (commit, then recompute, to make it evidence)", stacklevel=2)
        results.write_atomic(path, record)
    return results.describe(record)


def load_or_run_all(configs: Iterable, recompute: bool = False, root: Path | None = None, desc: str = "runs",
                    **run_kwargs) -> list[dict]:
    """``load_or_run`` over a grid, with a progress bar over the runs that must be computed."""
    from tqdm.auto import tqdm

    configs = list(configs)
    todo = [c for c in configs if recompute or stored(c, root) is None]
    records = {}
    if todo:
        for c in tqdm(todo, desc=f"{desc}: computing {len(todo)} of {len(configs)}", unit="run"):
            # another process may have written this record meanwhile
            fresh = recompute or stored(c, root) is None
            records[id(c)] = load_or_run(c, recompute=fresh, root=root, **run_kwargs)
    return [records.get(id(c)) or load_or_run(c, root=root) for c in configs]


def page_records(configs: Iterable, preset: str, recompute: bool = False, root: Path | None = None,
                 **run_kwargs) -> list[dict]:
    """A chapter's records of ``configs``: at the ``book`` preset only the valid stored records
    are read, in grid order, so that building the book never starts hours of training (fewer
    records than configs means the rest are pending); under any other preset, or with
    ``recompute``, the grid is run (:func:`load_or_run_all`)."""
    configs = list(configs)
    if preset != "book" or recompute:
        return load_or_run_all(configs, recompute=recompute, root=root, **run_kwargs)
    return [r for r in (stored(c, root) for c in configs) if r is not None]
