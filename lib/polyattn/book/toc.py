"""The chapters from ``_toc.yml``: each entry's kind and source, and the TOC pruned to what exists."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .common import REPO_ROOT, BookError


@dataclass
class Entry:
    """One file entry of the TOC."""

    docname: str                 # e.g. "chapters/01_activations"
    kind: str                    # "notebook" | "page" | "missing"
    source: Optional[Path] = None

    @property
    def name(self) -> str:
        return Path(self.docname).name


def _toc_files(node) -> list[str]:
    """Every ``file`` (and the ``root``) of a TOC, in reading order."""
    out = []
    if isinstance(node, dict):
        if "root" in node:
            out.append(str(node["root"]))
        if "file" in node:
            out.append(str(node["file"]))
        for key in ("parts", "chapters", "sections"):
            for child in node.get(key, []) or []:
                out.extend(_toc_files(child))
    elif isinstance(node, list):
        for child in node:
            out.extend(_toc_files(child))
    return out


def _strip_suffix(docname: str) -> str:
    for suffix in (".ipynb", ".md"):
        if docname.endswith(suffix):
            return docname[: -len(suffix)]
    return docname


def is_jupytext_markdown(path: Path) -> bool:
    """True when a markdown file carries a jupytext header (so it is a notebook chapter)."""
    text = Path(path).read_text(encoding="utf-8")
    if not text.startswith("---"):
        return False
    end = text.find("\n---", 3)
    return end > 0 and re.search(r"^jupytext:", text[:end], flags=re.M) is not None


def read_toc(root: Path = REPO_ROOT) -> dict:
    import yaml

    path = Path(root) / "_toc.yml"
    if not path.exists():
        raise BookError(f"no _toc.yml in {root}: the book's chapters are listed there")
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def discover(root: Path = REPO_ROOT) -> list[Entry]:
    """The TOC's entries with their kind and source file."""
    root = Path(root)
    entries = []
    for docname in _toc_files(read_toc(root)):
        docname = _strip_suffix(docname)
        ipynb, md = root / f"{docname}.ipynb", root / f"{docname}.md"
        if ipynb.exists():
            entries.append(Entry(docname, "notebook", ipynb))
        elif md.exists():
            entries.append(Entry(docname, "notebook" if is_jupytext_markdown(md) else "page", md))
        else:
            entries.append(Entry(docname, "missing"))
    return entries


def _prune_toc(node, keep: set[str]):
    """The TOC without the entries whose docname is not in ``keep``."""
    if isinstance(node, list):
        out = []
        for child in node:
            pruned = _prune_toc(child, keep)
            if pruned is not None:
                out.append(pruned)
        return out
    if isinstance(node, dict):
        if "file" in node and _strip_suffix(str(node["file"])) not in keep:
            return None
        new = {}
        for key, value in node.items():
            if key in ("parts", "chapters", "sections"):
                value = _prune_toc(value, keep)
                if not value:
                    continue
            new[key] = value
        if "caption" in new and not any(k in new for k in ("chapters", "sections", "file")):
            return None
        return new
    return node

