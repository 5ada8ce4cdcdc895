"""The status page: one row per executed chapter from the manifest, the book grids' stored
records, and the build's environment."""
from __future__ import annotations

import os
import platform
from pathlib import Path

from ..claims.checklist import SHORT
from ..claims.design import MAX_SEEDS, design_table
from ..claims.register import MEASURED, REGISTER
from ..claims.scope import GRID_TITLES, wall_seconds
from ..config import hash_fields
from ..display import markdown_table
from ..results import InvalidRecord, cpu_model, git, load, record_path
from ..step_cost import cost_class_key, estimate_seconds, load_ratios
from .common import REPO_ROOT
from .keys import load_manifest
from .notebooks import declared_results, read_notebook
from .toc import discover


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


def _cost_class(config) -> str:
    """What sets a run's cost, roughly: its configuration but the activation and the seed."""
    return cost_class_key(config)


#: Fields that change how long a run takes only through how much it trains (or not at all): two
#: configs that differ only in these share a *shape*, whose cost per unit of training is one rate.
_RATE_FREE = ("activation", "seed", "experiment", "epochs", "train_subset", "probe_every", "clip_grad",
              "weight_decay", "qk_weight_decay", "qk_init_scale", "out_init_scale", "qk_norm", "n_mode", "eval_every",
              "warmup_epochs", "lr", "min_lr", "label_smoothing", "drop_path")


def _shape(config) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in hash_fields(config).items() if k not in _RATE_FREE))


def _work(config) -> float:
    """How much a run trains, in the unit its shape's rate is measured in (epochs x examples)."""
    return float(config.epochs) * float(config.train_subset or 1)


def stored_evidence(root: Path = REPO_ROOT) -> tuple[list, list]:
    """(stored, missing): ``stored`` holds ``(grid, config, record)`` for every book run of every
    grid with a valid record from a clean tree in ``data/results``; ``missing`` holds
    ``(grid, config)`` for the others (a grid may name runs of another experiment)."""
    from ..experiments import GRIDS

    stored, missing = [], []
    for name in sorted(GRIDS):
        for c in GRIDS[name]("book", None):
            path = record_path(c, Path(root) / "data" / "results")
            rec = None
            try:
                rec = load(path, c, evidence=True) if path.exists() else None
            except InvalidRecord:
                pass
            if rec is None:
                missing.append((name, c))
            else:
                stored.append((name, c, rec))
    return stored, missing


def measured_rates(root: Path = REPO_ROOT, stored: list | None = None) -> dict:
    """Per shape, the seconds per unit of work of every stored evidence record (all grids)."""
    rates: dict[tuple, list[float]] = {}
    for _, c, rec in (stored_evidence(root)[0] if stored is None else stored):
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


def unpriced(stored: list, missing: list) -> list:
    """The missing configs that neither a stored run of their cost class nor their shape's rate
    prices: the ones a step ratio must price (both as :func:`stored_evidence` returns them)."""
    classes = {_cost_class(c) for _, c, _ in stored}
    rates = measured_rates(stored=stored)
    return [c for _, c in missing if _cost_class(c) not in classes and _shape(c) not in rates]


#: Marks an estimate that rests (in part) on a measured step ratio.
RATIO_MARK = "†"


def records_table(root: Path = REPO_ROOT, evidence: tuple | None = None) -> list[dict]:
    """One row per grid: its book runs, how many have a valid record from a clean tree in
    ``data/results`` (records of a modified tree do not count), the core-hours the stored runs
    took (their wall time on one thread) and an estimate for the rest, and the chapters that
    read it.

    A missing run costs the mean wall time of the stored runs of its cost class; without one,
    its shape's rate (seconds per epoch and example, from any grid's runs of the same model and
    data) times its work; without that, a step ratio measured against the nearest stored class
    (:mod:`polyattn.step_cost`; such estimates are marked :data:`RATIO_MARK`).  ``evidence``:
    :func:`stored_evidence`'s answer when the caller has it already."""
    from ..experiments import GRIDS

    readers: dict[str, list[str]] = {}
    for e in discover(root):
        if e.kind == "notebook":
            for grid in declared_results(read_notebook(e.source)):
                readers.setdefault(grid, []).append(e.name)
    stored, missing = stored_evidence(root) if evidence is None else evidence
    rates = measured_rates(root, stored)
    ratios = load_ratios(root)
    class_walls: dict[str, list[float]] = {}
    for _, c, rec in stored:
        class_walls.setdefault(_cost_class(c), []).append(wall_seconds(rec))
    rows = []
    for name in sorted(GRIDS):
        mine = [rec for grid, _, rec in stored if grid == name]
        lacking = [c for grid, c in missing if grid == name]
        costs, by_ratio = [], False
        for c in lacking:
            key = _cost_class(c)
            if key in class_walls:
                costs.append(sum(class_walls[key]) / len(class_walls[key]))
            elif _shape(c) in rates:
                costs.append(rates[_shape(c)] * _work(c))
            else:
                est = estimate_seconds(key, ratios, class_walls)
                by_ratio |= est is not None
                costs.append(est)
        stored_h, todo_h = _core_hours(sum(wall_seconds(rec) for rec in mine), costs)
        n = len(mine) + len(lacking)
        rows.append({"grid": name, "book runs": n, "stored": len(mine),
                     "state": "complete" if not lacking else f"{len(lacking)} to run",
                     "core-hours stored": stored_h,
                     "core-hours to run (est.)": todo_h + (RATIO_MARK if by_ratio else ""),
                     "read by": ", ".join(readers.get(name, [])) or "no chapter yet"})
    return rows


def rates_note(root: Path = REPO_ROOT, stored: list | None = None) -> str:
    """What the estimates assume, for under the table: the machines the stored runs ran on (their
    wall times set every rate) and, for estimates marked with :data:`RATIO_MARK`, where the step
    ratios were measured (``stored``: :func:`stored_evidence`'s first part, when at hand)."""
    from collections import Counter


    stored = stored_evidence(root)[0] if stored is None else stored
    cpus = Counter((rec.get("provenance", {}).get("hardware") or {}).get("cpu") or "unknown CPU" for _, _, rec in stored)
    text = ("Estimates are one-thread wall times at the rates of the stored runs, which ran on "
            + "; ".join(f"{cpu} ({n} run{'' if n == 1 else 's'})" for cpu, n in cpus.most_common())
            + ".  The same configuration has taken two to three times longer on one machine than on another, "
              "so read them as orders of magnitude.")
    ratios = load_ratios(root)
    if ratios:
        where = sorted({f"{r['cpu']}, {r['measured'][:10]}" for r in ratios.values()})
        text += (f"  {RATIO_MARK} Priced from a step-time ratio to the nearest stored configuration, measured side "
                 f"by side ({'; '.join(where)}); they assume evaluation and probes grow as a step does.")
    return text


def unread_records(root: Path = REPO_ROOT) -> list[Path]:
    """Stored records in ``data/results`` that no book grid names (a superseded setting whose
    configuration no grid produces any more): no chapter reads them, so they only mislead a
    reader who counts files."""
    from ..experiments import GRIDS

    results = Path(root) / "data" / "results"
    named = {record_path(c, results) for grid in GRIDS.values() for c in grid("book", None)}
    return sorted(p for p in results.glob("*/*.json") if p not in named)


def chapter_names(readers: str) -> str:
    """``"04_vit, 09_critiques"`` as a reader names them: ``"chapters 04, 09"`` (other text as it is)."""
    names = [n.strip() for n in readers.split(",")]
    if not all(n[:2].isdigit() and n[2:3] == "_" for n in names):
        return readers
    numbers = [n[:2] for n in names]
    return ("chapter " if len(numbers) == 1 else "chapters ") + ", ".join(numbers)


def grid_name(grid: str) -> str:
    """A grid as the chapters call it, with the name ``python -m polyattn grid`` takes after it."""

    title = GRID_TITLES.get(grid, grid.replace("_", " "))
    return f"{title} (grid {grid})"


def claim_name(claim_id: str) -> str:
    """A claim in a few words (the answer table's short name, else the checklist's, else its statement)."""

    headline = getattr(REGISTER.get(claim_id) or MEASURED.get(claim_id), "headline", None)
    if headline:
        return headline
    if claim_id in SHORT:
        return SHORT[claim_id]
    return REGISTER[claim_id].statement if claim_id in REGISTER else claim_id.replace("_", " ")


def comparison_name(claim_id: str, comparison_id: str) -> str:
    """A registered comparison in words (its label), not its id."""

    claim = REGISTER.get(claim_id)
    for c in (claim.comparisons if claim is not None else ()):
        if c.id == comparison_id:
            return c.label
    return comparison_id.replace("_", " ")


def records_markdown(root: Path = REPO_ROOT) -> str:
    """The records table for the status page: the counts and the state share one cell, so that
    the table fits the page's column; under it, what its estimates assume."""
    evidence = stored_evidence(root)
    rows = records_table(root, evidence)
    header = ["runs (grid)", "stored of book runs", "core-hours (to run: estimated)", "read by"]
    table = markdown_table(header, [[grid_name(r["grid"]), f"{r['stored']} of {r['book runs']} ({r['state']})",
                                     f"{r['core-hours stored']} stored" + (f", {r['core-hours to run (est.)']} to run"
                                                                          if r["core-hours to run (est.)"] else ""),
                                     chapter_names(r["read by"])]
                                    for r in rows])
    return table + "\n\n" + rates_note(root, evidence[0])


def design_markdown() -> str:
    """The design table for the status page: each registered primary comparison's measured pair spread,
    the pairs it needs to decide at its margin, and what is planned and stored (five columns, to fit
    the page's column)."""
    rows = [r for r in design_table() if r["role"] == "primary"]
    plan = {f"cannot decide with about {MAX_SEEDS} seeds per arm: description only": "description only",
            "cannot decide at any seed count: the observed difference is on the margin's edge": "never decides"}
    header = ["claim: comparison (margin)", "pair SD", "pairs needed", "stored of planned", "plan"]
    table = markdown_table(header, [[f"{claim_name(r['claim'])}: {comparison_name(r['claim'], r['comparison'])} "
                                     f"({r['margin']})", r["pair SD"],
                                     r["pairs needed"], f"{r['stored']} of {r['planned']}",
                                     plan.get(r["plan"], r["plan"])] for r in rows])
    return (table + "\n\nPairs needed, with power 0.8 when the true difference is the one observed: inside the "
            "margin, equivalence by two one-sided tests at α = 0.05; beyond it, the family-adjusted (Bonferroni) "
            "95% interval beyond the margin. A comparison that needs more than "
            f"{MAX_SEEDS} seeds per arm cannot decide here: it is shown as description and no further seeds are "
            "spent on it; one whose difference sits on the margin's edge never decides; a grid with no runs is "
            "pending.")


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

