"""Where generated and converted data are kept between runs: ``data/cache`` beside the
book (gitignored), or ``$POLYATTN_CACHE``.  Writes go through a temporary file of the
writing process's own, so processes filling the cache at once never see half a file."""
from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("POLYATTN_CACHE", Path(__file__).resolve().parents[3] / "data" / "cache"))


def cache_key(params: dict) -> str:
    """A short, stable name for a parameter set (sorted JSON, hashed)."""
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:16]


def atomic_write(path: Path, write) -> None:
    """Call ``write(tmp_path)`` and move the result to ``path`` in one step."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
