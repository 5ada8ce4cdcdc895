"""Content keys (what a chapter's execution depends on) and the manifest that stores them."""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Iterable, Optional, Sequence

from .common import REPO_ROOT

MANIFEST_SCHEMA = 1


def _sha_files(paths: Iterable[Path], base: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p.relative_to(base)).encode())
        h.update(b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def library_hash(package_dir: Optional[Path] = None) -> str:
    """sha256 over every ``*.py`` file of the polyattn package (the code the chapters import)."""
    if package_dir is None:
        # looked up on the package at call time, so that setting polyattn.book.PACKAGE_DIR
        # (as the tests do, to watch a small stand-in library) changes what is hashed
        from . import PACKAGE_DIR as package_dir
    package_dir = Path(package_dir)
    return _sha_files(package_dir.rglob("*.py"), package_dir)


def results_root(preset: str) -> Path:
    try:
        from ..results import results_root as root_of
    except ImportError:  # the results module is optional for building pages
        env = os.environ.get("POLYATTN_RESULTS")
        return Path(env) if env else REPO_ROOT / ("_build/smoke-results" if preset == "smoke" else "data/results")
    return Path(root_of(preset))


def results_hash(experiments: Sequence[str], preset: str) -> str:
    if not experiments:
        return ""
    root = results_root(preset)
    h = hashlib.sha256()
    for exp in sorted(experiments):
        d = root / exp
        files = [p for p in d.rglob("*") if p.is_file()] if d.exists() else []
        h.update(exp.encode() + b"\0" + _sha_files(files, root).encode())
    return h.hexdigest()


def key_parts(source: Path, params: dict, root: Path = REPO_ROOT) -> dict:
    """Everything a chapter's key covers except its stored results."""
    req = Path(root) / "requirements.txt"
    return {
        "source": hashlib.sha256(Path(source).read_bytes()).hexdigest(),
        "library": library_hash(),
        "params": json.dumps(params, sort_keys=True),
        "requirements": hashlib.sha256(req.read_bytes()).hexdigest() if req.exists() else "",
    }


def key_of(parts: dict, results: str = "") -> str:
    return hashlib.sha256(json.dumps({**parts, "results": results}, sort_keys=True).encode()).hexdigest()


def content_key(source: Path, params: dict, root: Path = REPO_ROOT, results: str = "") -> str:
    """sha256 over the chapter source, the library, the parameters, requirements.txt and ``results``."""
    return key_of(key_parts(source, params, root), results)


def manifest_path(build_root: Path) -> Path:
    return Path(build_root) / "_build" / "executed" / "manifest.json"


def load_manifest(build_root: Path = REPO_ROOT) -> dict:
    path = manifest_path(build_root)
    if path.exists():
        try:
            data = json.loads(path.read_text())
            if data.get("schema") == MANIFEST_SCHEMA and isinstance(data.get("chapters"), dict):
                return data
        except (OSError, ValueError):
            pass
        print(f"[book] {path} is unreadable; every chapter will be executed", file=sys.stderr)
    return {"schema": MANIFEST_SCHEMA, "chapters": {}}


def save_manifest(manifest: dict, build_root: Path) -> None:
    path = manifest_path(build_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    os.replace(tmp, path)

