"""Content keys (what a chapter's execution depends on) and the manifest that stores them."""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Iterable, Optional, Sequence

from ..results import results_root as root_of
from . import common
from .common import REPO_ROOT

MANIFEST_SCHEMA = 1


def _sha_files(paths: Iterable[Path], base: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p.relative_to(base)).encode())
        h.update(b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


#: Modules that load others by name (``importlib``), which static imports do not show: the measured
#: claims name their measure functions as ``"measures.<topic>:<function>"``.  A chapter that
#: reaches such a module depends on the measure modules of the claims it can deliver: those registered for it
#: and those whose id appears as a string in its code or in its page module (:func:`_named_measures`).
#: Without a register of measured claims every module of the folder counts.
LOADED_BY_NAME = {"claims/spec.py": ("measures",)}
MEASURED_REGISTER = "claims/register_measured.py"
#: Folders of modules that belong to one chapter (its page module), whose strings name claims as the
#: chapter's own code does.
PAGE_FOLDERS = ("pages", "studies")


def _measured_claims(package_dir: Path) -> list[tuple[str, str, str]]:
    """``(id, chapter, module)`` of every measured claim, read from the register's source without
    importing it: each ``MeasuredClaim(id, statement, source, chapter, measure="module:function")``."""
    import ast

    path = package_dir / MEASURED_REGISTER
    if not path.is_file():
        return []
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "MeasuredClaim"):
            continue
        args = [a.value if isinstance(a, ast.Constant) else None for a in node.args]
        kw = {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
        claim_id, chapter = kw.get("id", args[0] if args else None), kw.get("chapter", args[3] if len(args) > 3 else None)
        measure = kw.get("measure")
        if isinstance(claim_id, str) and isinstance(measure, str):
            out.append((claim_id, chapter or "", measure.split(":")[0]))
    return out


def _strings(tree) -> set[str]:
    import ast

    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _named_measures(package_dir: Path, chapter: Optional[str], strings: set[str]) -> Optional[list[str]]:
    """The measure modules a chapter can reach by name, or None when the library has no register of
    measured claims (then every module of the folder counts)."""
    claims = _measured_claims(package_dir)
    if not claims:
        return None
    return sorted({module for claim_id, home, module in claims if claim_id in strings or (chapter and home == chapter)})


def _module_file(name: str, package_dir: Path) -> Optional[Path]:
    """The file of module ``polyattn.<name>`` (dotted, without the package), or None."""
    base = package_dir.joinpath(*name.split(".")) if name else package_dir
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if name and candidate.is_file() or not name and candidate.name == "__init__.py" and candidate.is_file():
            return candidate
    return None


def _imports(tree, module: str, is_package: bool) -> set[str]:
    """Dotted names (relative to polyattn) of the polyattn modules a parsed module imports anywhere,
    at module level or inside functions."""
    import ast

    out = set()
    here = module.split(".") if module else []
    package = here if is_package else here[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name[len("polyattn."):] if a.name != "polyattn" else "" for a in node.names
                    if a.name == "polyattn" or a.name.startswith("polyattn.")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1] if node.level > 1 else package
                target = ".".join(base + (node.module.split(".") if node.module else []))
            elif node.module and (node.module == "polyattn" or node.module.startswith("polyattn.")):
                target = node.module[len("polyattn."):] if node.module != "polyattn" else ""
            else:
                continue
            out.add(target)
            out |= {f"{target}.{a.name}" if target else a.name for a in node.names}  # submodules imported by name
    return out


def imported_files(code: str, package_dir: Optional[Path] = None, chapter: Optional[str] = None) -> set[Path]:
    """The files of the polyattn package that ``code`` (the code of chapter ``chapter``, e.g.
    ``"07_causal"``) imports, transitively: each module, the ``__init__`` of every package above it,
    what they import in turn, and the modules loaded by name (:data:`LOADED_BY_NAME`)."""
    import ast

    if package_dir is None:
        package_dir = common.PACKAGE_DIR  # read at call time: the tests point it at a stand-in
    package_dir = Path(package_dir)
    tree = ast.parse(code)
    todo = [n for n in _imports(tree, "", True) if n is not None]
    strings = _strings(tree)
    seen: set[Path] = set()
    by_name: set[str] = set()  # folders of LOADED_BY_NAME that the code reaches
    while True:
        while todo:
            name = todo.pop()
            parts = name.split(".") if name else []
            for depth in range(len(parts) + 1):  # importing a.b.c runs polyattn, a and a.b first
                path = _module_file(".".join(parts[:depth]), package_dir)
                if path is None or path in seen:
                    continue
                seen.add(path)
                rel = path.relative_to(package_dir)
                mod = ".".join(rel.with_suffix("").parts[:-1] if rel.name == "__init__.py" else rel.with_suffix("").parts)
                module_tree = ast.parse(path.read_text())
                if rel.parts[0] in PAGE_FOLDERS:
                    strings |= _strings(module_tree)
                todo += list(_imports(module_tree, mod, rel.name == "__init__.py"))
                by_name |= set(LOADED_BY_NAME.get(rel.as_posix(), ()))
        named = _named_measures(package_dir, chapter, strings) if by_name else []
        if named is None:  # no register to read: the whole folder
            named = [".".join((sub, p.stem)) for sub in by_name for p in (package_dir / sub).glob("*.py")]
        todo = [m for m in named if _module_file(m, package_dir) not in seen]
        if not todo:
            return seen


def chapter_code(source: Path) -> str:
    """The code of a chapter's cells (an ``.ipynb`` or a MyST jupytext ``.md``)."""
    import nbformat

    source = Path(source)
    if source.suffix == ".ipynb":
        nb = nbformat.read(str(source), as_version=4)
    else:
        import jupytext

        nb = jupytext.read(str(source), fmt="md:myst")
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code"
                     if not c.source.lstrip().startswith(("%", "!")))


def chapter_library_hash(source: Path, package_dir: Optional[Path] = None) -> str:
    """sha256 over the library files a chapter imports, transitively (:func:`imported_files`): a
    chapter re-executes when one of them changes, not when any file of the library does."""
    if package_dir is None:
        package_dir = common.PACKAGE_DIR  # read at call time: the tests point it at a stand-in
    package_dir = Path(package_dir)
    source = Path(source)
    return _sha_files(imported_files(chapter_code(source), package_dir, source.stem), package_dir)


def results_root(preset: str) -> Path:
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
    """Everything a chapter's key covers except its stored results: its source, the library files
    it imports (transitively), its parameters and the requirements."""
    req = Path(root) / "requirements.txt"
    return {
        "source": hashlib.sha256(Path(source).read_bytes()).hexdigest(),
        "library": chapter_library_hash(source),
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

