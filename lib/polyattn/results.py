"""Result records: schema, config hashing, provenance, atomic writes, validation.

Storage only: this module never trains.  :mod:`polyattn.runs` pairs it with the task's runner
(``load_or_run``).

A record is a small JSON file ``<root>/<experiment>/<config-hash>-seed<k>.json``::

    {"schema": 1, "experiment", "config", "config_hash", "seed", "preset",
     "status": "ok" | "diverged", "diverged_step", "task", "seq_lens", "metrics_spec":
     [{name, unit, higher_is_better, scale, label}], "metrics": [...per evaluation...],
     "probes": [...rows...], "provenance": {"git_commit", "git_dirty", "packages",
     "hardware", "started", "wall_s", "compiled_extension"}}

(``compiled_extension``: whether the C++ attention extension ran, see
:func:`polyattn.kernels.compiled.status`; records written before it existed lack it.)

The hash covers every field of the config that changes the computation (see
:func:`polyattn.config.hash_fields`: fields added to the config enter it only where they
differ from their default, so old hashes stay valid); the seed is in the file name; the
device, thread count, data location, loader workers and preset label are not hashed.
Records written before ``task``, ``seq_lens`` and ``metrics_spec`` existed get them from
their task's declarations when they are loaded (:func:`describe`, through
:mod:`polyattn.task_declarations`, without torch), so every loaded record describes itself.

Book and paper records live in ``data/results`` (committed) and are evidence only when they
were computed from a clean tree: :func:`load` refuses a book or paper record with
``git_dirty`` set from that folder, and such records are written to ``_build/dirty-results``
instead.  Smoke records go to ``_build/smoke-results`` so that they can never be mistaken
for evidence.
"""
from __future__ import annotations

import dataclasses
import json
import os
import platform
import subprocess
import sys
import tempfile
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import task_declarations
from .config import NOT_HASHED, TrainConfig, config_hash, hash_fields  # noqa: F401  (NOT_HASHED, config_hash, hash_fields re-exported)
from .presets import EVIDENCE_PRESETS

SCHEMA = 1
REPO_ROOT = Path(__file__).resolve().parents[2]
#: Where the floors of each task are stored (:mod:`polyattn.task_floors` writes them, the register reads them).
FLOORS_PATH = REPO_ROOT / "data" / "floors.json"
REQUIRED = ("schema", "experiment", "config", "config_hash", "seed", "preset", "status", "metrics", "provenance")


def results_root(preset: str) -> Path:
    """Where records of ``preset`` are kept (``POLYATTN_RESULTS`` overrides)."""
    env = os.environ.get("POLYATTN_RESULTS")
    if env:
        return Path(env)
    return REPO_ROOT / ("_build/smoke-results" if preset == "smoke" else "data/results")


def dirty_root() -> Path:
    """Where book/paper records computed from a modified tree go: usable, never evidence."""
    return REPO_ROOT / "_build" / "dirty-results"


def is_evidence_root(root: Path | None) -> bool:
    """Whether ``root`` (None: the default) is the committed evidence folder ``data/results``."""
    if root is None:
        root = results_root("book")
    return Path(root).resolve() == (REPO_ROOT / "data" / "results").resolve()


def config_dict(config) -> dict:
    return dataclasses.asdict(config) if dataclasses.is_dataclass(config) else dict(config)


def record_path(config, root: Path | None = None) -> Path:
    c = config_dict(config)
    root = Path(root) if root is not None else results_root(c.get("preset", "book"))
    return root / c["experiment"] / f"{config_hash(config)}-seed{c['seed']}.json"


# --- provenance ---------------------------------------------------------------------------

def git(*args, root: Path = REPO_ROOT) -> str | None:
    """A git command's output in ``root``; None where git or the repository is missing."""
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def hardware(device: str = "cpu") -> dict:
    import torch

    # the instruction set torch's CPU kernels use (e.g. AVX2, AVX512): float results of one program
    # differ in their last digits between instruction sets, even under one CPU model name
    info = {"cpu": cpu_model(), "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "device": device, "platform": platform.platform()}
    if device.startswith("cuda") and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(device)
    return info


def packages() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for name in ("torch", "torchvision", "numpy", "polyattn", "torchmetrics", "pycocotools"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def provenance(device: str = "cpu") -> dict:
    status = git("status", "--porcelain", "--", "lib", "pyproject.toml", "requirements.txt")
    return {"git_commit": git("rev-parse", "HEAD"), "git_dirty": bool(status) if status is not None else None,
            "packages": packages(), "hardware": hardware(device),
            "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}


# --- reading and writing ------------------------------------------------------------------

def write_atomic(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(record, f, indent=1, sort_keys=True, default=str)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class InvalidRecord(ValueError):
    pass


def validate(record: Any, config=None, evidence: bool = False) -> dict:
    """The record if it is well-formed (and belongs to ``config``); raises InvalidRecord otherwise.

    ``evidence=True`` also refuses a book or paper record computed from a dirty tree.
    """
    if not isinstance(record, dict):
        raise InvalidRecord("not a JSON object")
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise InvalidRecord(f"missing fields {missing}")
    if record["schema"] != SCHEMA:
        raise InvalidRecord(f"schema {record['schema']} != {SCHEMA}")
    if record["status"] not in ("ok", "diverged"):
        raise InvalidRecord(f"status {record['status']!r}")
    if not isinstance(record["metrics"], list) or (record["status"] == "ok" and not record["metrics"]):
        raise InvalidRecord("no metrics")
    if config is not None:
        if record["config_hash"] != config_hash(config) or record["seed"] != config_dict(config)["seed"]:
            raise InvalidRecord("config hash or seed does not match")
    if evidence and record["preset"] in EVIDENCE_PRESETS and record["provenance"].get("git_dirty") is not False:
        raise InvalidRecord(f"a {record['preset']} record computed from a dirty tree (or without git) is not "
                            f"evidence; recompute it from a clean, committed tree")
    return describe(record)


def describe(record: dict) -> dict:
    """Fill ``task``, ``seq_lens`` and ``metrics_spec`` of a record written before they existed,
    from what its task declares (:mod:`polyattn.task_declarations`)."""
    if "task" in record and "seq_lens" in record and "metrics_spec" in record:
        return record

    name = record.get("task", "images")
    config = TrainConfig.from_dict(record["config"])
    lens = task_declarations.seq_lens(name, config) if "seq_lens" not in record else record["seq_lens"]
    metrics = task_declarations.metrics(name, config) if "metrics_spec" not in record else []
    if lens is None or metrics is None:
        # only the task knows these (it reads its data or measures its model; or it is not declared
        # there): the task, and with it torch, is imported for such a record alone
        from .tasks import get_task

        task = get_task(name)
        lens = task.seq_lens(config) if lens is None else lens
        metrics = task.metrics(config) if metrics is None else metrics
    record.setdefault("task", name)
    record.setdefault("seq_lens", lens)
    record.setdefault("metrics_spec", [m.as_dict() for m in metrics])
    return record


def load(path: Path, config=None, evidence: bool = False) -> dict:
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:  # unreadable, not UTF-8, or not JSON
        raise InvalidRecord(f"unreadable ({exc})") from None
    return validate(record, config, evidence)


def load_records(experiment: str, preset: str = "book", root: Path | None = None) -> list[dict]:
    """Every valid record of an experiment (invalid ones are skipped with a warning)."""
    base = (Path(root) if root is not None else results_root(preset)) / experiment
    evidence = is_evidence_root(base.parent)
    out = []
    for path in sorted(base.glob("*.json")):
        try:
            out.append(load(path, evidence=evidence))
        except InvalidRecord as exc:
            warnings.warn(f"skipping invalid result file {path}: {exc}", stacklevel=2)
    return out
