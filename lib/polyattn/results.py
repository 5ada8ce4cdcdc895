"""Result records: schema, config hashing, provenance, atomic writes, load_or_run.

A record is a small JSON file ``<root>/<experiment>/<config-hash>-seed<k>.json``::

    {"schema": 1, "experiment", "config", "config_hash", "seed", "preset",
     "status": "ok" | "diverged", "diverged_step", "metrics": [...per epoch...],
     "probes": [...rows...], "provenance": {"git_commit", "git_dirty", "packages",
     "hardware", "started", "wall_s"}}

The hash covers every field of the config that changes the computation; the seed is in the
file name; the device, thread count, data location, loader workers and preset label are not
hashed (they are recorded).
Book and paper records live in ``data/results`` (committed); smoke records go to
``_build/smoke-results`` so that they can never be mistaken for evidence.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

SCHEMA = 1
REPO_ROOT = Path(__file__).resolve().parents[2]
NOT_HASHED = ("seed", "device", "threads", "preset", "data_root", "num_workers")
REQUIRED = ("schema", "experiment", "config", "config_hash", "seed", "preset", "status", "metrics", "provenance")


def results_root(preset: str) -> Path:
    env = os.environ.get("POLYATTN_RESULTS")
    if env:
        return Path(env)
    return REPO_ROOT / ("_build/smoke-results" if preset == "smoke" else "data/results")


def config_dict(config) -> dict:
    return dataclasses.asdict(config) if dataclasses.is_dataclass(config) else dict(config)


def config_hash(config) -> str:
    d = {k: v for k, v in config_dict(config).items() if k not in NOT_HASHED}
    blob = json.dumps(d, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


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

    info = {"cpu": cpu_model(), "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "device": device, "platform": platform.platform()}
    if device.startswith("cuda") and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(device)
    return info


def packages() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for name in ("torch", "torchvision", "numpy", "polyattn"):
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


def validate(record: Any, config=None) -> dict:
    """The record if it is well-formed (and belongs to ``config``); raises InvalidRecord otherwise."""
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
    return record


def load(path: Path, config=None) -> dict:
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:  # unreadable, not UTF-8, or not JSON
        raise InvalidRecord(f"unreadable ({exc})") from None
    return validate(record, config)


def load_or_run(config, recompute: bool = False, root: Path | None = None,
                runner: Callable | None = None, **run_kwargs) -> dict:
    """The stored record for ``config`` when present and valid, otherwise computed and stored."""
    path = record_path(config, root)
    if path.exists() and not recompute:
        try:
            return load(path, config)
        except InvalidRecord as exc:
            warnings.warn(f"result file {path} is invalid ({exc}); recomputing it", stacklevel=2)
    if runner is None:
        from .train import run as runner
    record = runner(config, **run_kwargs)
    if record.get("rank", 0) == 0:
        write_atomic(path, record)
    return record


def load_or_run_all(configs: Iterable, recompute: bool = False, root: Path | None = None, desc: str = "runs",
                    **run_kwargs) -> list[dict]:
    """``load_or_run`` over a grid, with a progress bar over the runs that must be computed."""
    from tqdm.auto import tqdm

    configs = list(configs)
    todo = [c for c in configs if recompute or not _valid_on_disk(c, root)]
    records = {}
    if todo:
        for c in tqdm(todo, desc=f"{desc}: computing {len(todo)} of {len(configs)}", unit="run"):
            # another process may have written this record meanwhile
            fresh = recompute or not _valid_on_disk(c, root)
            records[id(c)] = load_or_run(c, recompute=fresh, root=root, **run_kwargs)
    return [records.get(id(c)) or load_or_run(c, root=root) for c in configs]


def _valid_on_disk(config, root) -> bool:
    path = record_path(config, root)
    if not path.exists():
        return False
    try:
        load(path, config)
        return True
    except InvalidRecord:
        return False


def load_records(experiment: str, preset: str = "book", root: Path | None = None) -> list[dict]:
    """Every valid record of an experiment (invalid ones are skipped with a warning)."""
    base = (Path(root) if root is not None else results_root(preset)) / experiment
    out = []
    for path in sorted(base.glob("*.json")):
        try:
            out.append(load(path))
        except InvalidRecord as exc:
            warnings.warn(f"skipping invalid result file {path}: {exc}")
    return out
