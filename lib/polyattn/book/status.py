"""The status page: one row per executed chapter from the manifest, the book grids' stored
records, and the build's environment."""
from __future__ import annotations

import os
import platform
from pathlib import Path

from ..display import markdown_table
from ..results import cpu_model, git
from .common import REPO_ROOT
from .keys import load_manifest


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def environment(root: Path = REPO_ROOT) -> dict:
    """Commit, package versions, Python and hardware of this build."""
    commit = git("rev-parse", "HEAD", root=root)
    dirty = git("status", "--porcelain", "--", "lib", "chapters", "requirements.txt", root=root)
    info = {
        "git commit": (commit or "unknown") + (" (uncommitted changes)" if dirty else ""),
        "python": platform.python_version(),
    }
    for dist in ("torch", "numpy", "jupyter-book", "myst-nb", "papermill", "polyattn"):
        info[dist] = _version(dist)
    info["CPU"] = cpu_model()
    info["cores"] = str(os.cpu_count())
    info["platform"] = platform.platform()
    return info


def status_table(build_root: Path = REPO_ROOT):
    """One row per executed chapter from the manifest: seconds, preset, state, time of execution."""
    import pandas as pd

    rows = []
    for name, rec in sorted(load_manifest(build_root)["chapters"].items()):
        rows.append({"chapter": name, "docname": rec.get("docname", f"chapters/{name}"), "preset": rec.get("preset"),
                     "state": rec.get("state"),
                     "seconds": rec.get("seconds"), "executed at (UTC)": rec.get("executed_at"),
                     "status": rec.get("status")})
    return pd.DataFrame(rows, columns=["chapter", "docname", "preset", "state", "seconds", "executed at (UTC)", "status"])


def _cost_class(config) -> tuple:
    """What sets a run's cost, roughly: its configuration but the activation and the seed."""
    from ..results import config_dict

    return tuple(sorted((k, repr(v)) for k, v in config_dict(config).items() if k not in ("activation", "seed")))


#: Fields that change how long a run takes only through how much it trains (or not at all): two
#: configs that differ only in these share a *shape*, whose cost per unit of training is one rate.
_RATE_FREE = ("activation", "seed", "experiment", "epochs", "train_subset", "probe_every", "clip_grad",
              "weight_decay", "qk_weight_decay", "qk_init_scale", "qk_norm", "n_mode", "eval_every", "warmup_epochs",
              "lr", "min_lr", "label_smoothing", "drop_path")


def _shape(config) -> tuple:
    from ..results import config_dict

    return tuple(sorted((k, repr(v)) for k, v in config_dict(config).items() if k not in _RATE_FREE))


def _work(config) -> float:
    """How much a run trains, in the unit its shape's rate is measured in (epochs x examples)."""
    return float(config.epochs) * float(config.train_subset or 1)


def measured_rates(root: Path = REPO_ROOT) -> dict:
    """Per shape, the seconds per unit of work of every stored evidence record (all grids)."""
    from ..claims.scope import wall_seconds
    from ..experiments import GRIDS
    from ..results import InvalidRecord, load, record_path

    rates: dict[tuple, list[float]] = {}
    for name in sorted(GRIDS):
        for c in GRIDS[name]("book", None):
            path = record_path(c, Path(root) / "data" / "results")
            if not path.exists():
                continue
            try:
                rec = load(path, c, evidence=True)
            except InvalidRecord:
                continue
            wall = wall_seconds(rec)
            if wall > 0:
                rates.setdefault(_shape(c), []).append(wall / _work(c))
    return {k: sum(v) / len(v) for k, v in rates.items()}


def _core_hours(stored: float, missing_costs: list) -> tuple[str, str]:
    """The two cost columns: core-hours of the stored runs, and an estimate for the missing ones
    (each at the mean of the stored runs of its cost class; a lower bound when some have none)."""
    known = [c for c in missing_costs if c is not None]
    unknown = len(missing_costs) - len(known)
    todo = "" if not missing_costs else f"{sum(known) / 3600:.1f}"
    if unknown:
        runs = f"{unknown} run{'s' if unknown > 1 else ''} of unknown cost"
        todo = f">= {todo} ({runs})" if known else f"unknown ({runs})"
    return f"{stored / 3600:.1f}", todo


def records_table(root: Path = REPO_ROOT) -> list[dict]:
    """One row per grid: its book runs, how many have a valid record from a clean tree in
    ``data/results`` (records of a modified tree do not count), the core-hours the stored runs
    took (their wall time on one thread) and an estimate for the rest, and the chapters that
    read it."""
    from ..claims.scope import wall_seconds
    from ..experiments import GRIDS
    from ..results import InvalidRecord, load, record_path
    from .notebooks import declared_results, read_notebook
    from .toc import discover

    readers: dict[str, list[str]] = {}
    for e in discover(root):
        if e.kind == "notebook":
            for grid in declared_results(read_notebook(e.source)):
                readers.setdefault(grid, []).append(e.name)
    rates = measured_rates(root)
    rows = []
    for name in sorted(GRIDS):
        configs = GRIDS[name]("book", None)
        walls: dict[tuple, list[float]] = {}
        missing = []
        for c in configs:
            path = record_path(c, Path(root) / "data" / "results")
            rec = None
            try:
                rec = load(path, c, evidence=True) if path.exists() else None
            except InvalidRecord:
                pass
            if rec is None:
                missing.append(c)
            else:
                walls.setdefault(_cost_class(c), []).append(wall_seconds(rec))
        found = len(configs) - len(missing)
        per_class = {k: sum(v) / len(v) for k, v in walls.items()}
        # a missing run costs what stored runs of its class took; without one, its shape's measured
        # rate (seconds per epoch and example, from any grid's runs of the same model and data) times its work
        costs = [per_class.get(_cost_class(c)) if _cost_class(c) in per_class
                 else (rates[_shape(c)] * _work(c) if _shape(c) in rates else None) for c in missing]
        stored_h, todo_h = _core_hours(sum(map(sum, walls.values())), costs)
        rows.append({"grid": name, "book runs": len(configs), "stored": found,
                     "state": "complete" if found == len(configs) else f"{len(configs) - found} to run",
                     "core-hours stored": stored_h, "core-hours to run (est.)": todo_h,
                     "read by": ", ".join(readers.get(name, [])) or "no chapter yet"})
    return rows


def unread_records(root: Path = REPO_ROOT) -> list[Path]:
    """Stored records in ``data/results`` that no book grid names (a superseded setting whose
    configuration no grid produces any more): no chapter reads them, so they only mislead a
    reader who counts files."""
    from ..experiments import GRIDS
    from ..results import record_path

    results = Path(root) / "data" / "results"
    named = {record_path(c, results) for grid in GRIDS.values() for c in grid("book", None)}
    return sorted(p for p in results.glob("*/*.json") if p not in named)


def records_markdown(root: Path = REPO_ROOT) -> str:
    """The records table for the status page: the counts and the state share one cell, so that
    the table fits the page's column."""
    rows = records_table(root)
    header = ["grid", "stored of book runs", "core-hours: stored; to run (est.)", "read by"]
    return markdown_table(header, [[r["grid"], f"{r['stored']} of {r['book runs']} ({r['state']})",
                                     f"{r['core-hours stored']}; {r['core-hours to run (est.)']}", r["read by"]]
                                    for r in rows])


def status_markdown(build_root: Path, root: Path = REPO_ROOT) -> tuple[str, str]:
    df = status_table(build_root)
    rows = []
    for r in df.itertuples(index=False):
        secs = "" if r.seconds is None else f"{r.seconds:.1f}"
        rows.append([f"{{doc}}`{r.chapter} </{r.docname}>`" if r.status == "ok" else r.chapter,
                     r.preset, r.state, secs, r[5], r.status])
    status = markdown_table(["chapter", "preset", "cache state", "execution seconds", "executed at (UTC)", "status"], rows)
    env = markdown_table(["item", "value"], environment(root).items())
    return status, env

