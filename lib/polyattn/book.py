"""Execute the book's chapters with papermill under a content key, then build the site.

    python -m polyattn.book                      # preset book, every chapter of _toc.yml
    python -m polyattn.book --preset smoke       # the fast pipeline check
    python -m polyattn.book --chapters 01,04 --force

The flow, in one direction:

1. The chapters are read from ``_toc.yml``.  An entry ``chapters/NN_name`` is a notebook
   chapter when ``chapters/NN_name.ipynb`` exists (the jupytext pair of
   ``chapters/NN_name.md``) and a plain page when only a markdown file without a jupytext
   header exists.  Entries with no source yet are left out, with a warning.
2. Each notebook chapter is executed by papermill (kernel ``python3``, parameters
   ``preset``, ``recompute``, ``seeds``, ``device``) into ``_build/executed/NN_name.ipynb``,
   unless its content key is unchanged.  The key is a sha256 over the chapter's source, every
   ``*.py`` file of the polyattn package, the parameters, ``requirements.txt`` and, for the
   experiments a chapter declares in its metadata (``polyattn: {results: [name, ...]}``),
   the content of their stored result records.  Keys, seconds, preset and state go to
   ``_build/executed/manifest.json``.
3. The source tree ``_build/src`` is assembled from ``_config.yml``, the TOC (pruned to
   what exists), ``intro.md`` with its verdict table, ``references.bib``, the plain pages
   (the status page gets its tables), the executed notebooks and a local copy of MathJax.
4. ``jupyter-book build _build/src --path-output . --all -W -n --keep-going`` writes
   ``_build/html``; any warning fails the build.

Chapters report a verdict on one of the claims in :data:`CLAIMS` with :func:`verdict`;
the intro's table pastes it by cross-document glue, or says "pending: chapter NN".
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Optional, Sequence

from .results import cpu_model, git

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIR = Path(__file__).resolve().parent
PRESETS = ("smoke", "book", "paper")
PARAMETER_NAMES = ("preset", "recompute", "seeds", "device")
MANIFEST_SCHEMA = 1

VERDICT_MARKER = "% polyattn:verdict-table"
STATUS_MARKER = "% polyattn:status-table"
ENVIRONMENT_MARKER = "% polyattn:environment-table"

#: MathJax files copied into the site (the rest of the package is not needed for TeX input
#: with CommonHTML output, the menu and the accessibility extensions it loads on demand).
MATHJAX_PARTS = ("tex-chtml.js", "input", "output", "ui", "a11y", "adaptors", "sre")

FAVICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
    '<rect width="32" height="32" rx="6" fill="#1f4e9c"/>'
    '<text x="16" y="23" font-size="18" text-anchor="middle" fill="white" font-family="serif">x³</text></svg>'
)


@dataclass(frozen=True)
class Claim:
    """A claim of the paper or a critique of its reviewers, and the chapter that checks it."""

    id: str
    claim: str
    source: str
    chapter: str  # "NN_name" of the chapter expected to deliver the verdict


#: One row of the intro's verdict table per claim.  A chapter delivers a verdict with
#: ``polyattn.book.verdict(id, text)``.
CLAIMS = (
    Claim("thm41_1", "Thm 4.1(1): for softmax, $\\lVert \\mathrm{softmax}(A) \\rVert_F \\le \\sqrt{N}$ for any $A$",
          "paper", "02_proofs"),
    Claim("thm41_2", "Thm 4.1(2): the Jacobian bound of softmax and its constant (a reviewer doubts the factor 2)",
          "paper; review ICLR 2025", "02_proofs"),
    Claim("thm42_43", "Thm 4.2/4.3: the $O(\\sqrt{N})$ growth of the polynomial's norms rests on i.i.d. $X, Q, K$ and needs $N \\gg D$",
          "paper; review ICLR 2025", "02_proofs"),
    Claim("thm44_45", "Thm 4.4/4.5: the Jacobian norms of $x^p/\\sqrt{N}$ grow like those of softmax",
          "paper", "02_proofs"),
    Claim("fig1_scale", "Figure 1: in which direction the best scale moves as the sequence length changes",
          "paper; review ICLR 2025", "04_vit"),
    Claim("table_parity", "Tables 1/2: scaled $x^3$ matches or beats softmax on image classification",
          "paper", "04_vit"),
    Claim("norms_predict", "Attention and Jacobian norms predict which activation trains best",
          "paper; review ICLR 2025", "03_norms"),
    Claim("cost", "The cost of polynomial attention (time, memory) is not analysed",
          "review ICLR 2025", "08_costs"),
    Claim("causal_scaling", "Causal masks and variable lengths: which $N$ scales each row",
          "review ICLR 2025", "07_critiques"),
)
CLAIM_IDS = tuple(c.id for c in CLAIMS)


class BookError(RuntimeError):
    """A chapter could not be executed or the site could not be built; the message says which."""


# --- chapters from the TOC ------------------------------------------------------------------

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


# --- notebooks ------------------------------------------------------------------------------

def read_notebook(path: Path):
    """A notebook from an .ipynb, or from a jupytext markdown file."""
    import jupytext

    return jupytext.read(str(path))


def cells_of(nb) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source.strip()) for c in nb.cells]


def pair_drift(md_path: Path) -> list[str]:
    """How a jupytext .md and its paired .ipynb differ (an empty list when they agree)."""
    md_path = Path(md_path)
    ipynb = md_path.with_suffix(".ipynb")
    if not ipynb.exists():
        return [f"{ipynb.name} is missing: run jupytext --sync {md_path}"]
    a, b = cells_of(read_notebook(md_path)), cells_of(read_notebook(ipynb))
    problems = []
    if len(a) != len(b):
        problems.append(f"{md_path.name} has {len(a)} cells, {ipynb.name} has {len(b)}")
    for i, (ca, cb) in enumerate(zip(a, b)):
        if ca != cb:
            first = (ca[1].splitlines() or [""])[0][:60]
            problems.append(f"cell {i + 1} differs ({ca[0]} cell starting {first!r})")
            break
    return problems


def has_outputs(nb) -> bool:
    return any(c.cell_type == "code" and (c.get("outputs") or c.get("execution_count")) for c in nb.cells)


def parameter_names(nb) -> Optional[list[str]]:
    """Names assigned in the cell tagged ``parameters`` (None when there is no such cell)."""
    import ast

    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            names = []
            for node in ast.parse(cell.source).body:
                targets = node.targets if isinstance(node, ast.Assign) else (
                    [node.target] if isinstance(node, ast.AnnAssign) else [])
                names.extend(t.id for t in targets if isinstance(t, ast.Name))
            return names
    return None


def check_chapter(entry: Entry) -> None:
    """Raise BookError when a notebook chapter cannot be executed as it stands."""
    path = entry.source
    md = path.with_suffix(".md")
    if md.exists() and is_jupytext_markdown(md) and path.suffix == ".ipynb":
        drift = pair_drift(md)
        if drift:
            raise BookError(f"chapter {entry.name}: {md.name} and {path.name} differ ({drift[0]}); "
                            f"run: jupytext --sync {md}")
    names = parameter_names(read_notebook(path))
    if names is None:
        raise BookError(f"chapter {entry.name} has no code cell tagged 'parameters'; "
                        f"its first code cell must be tagged parameters and set {', '.join(PARAMETER_NAMES)}")
    missing = [n for n in PARAMETER_NAMES if n not in names]
    if missing:
        raise BookError(f"chapter {entry.name}: the parameters cell does not set {', '.join(missing)}")


def declared_results(nb) -> list[str]:
    """The experiments whose stored records a chapter reads (notebook metadata ``polyattn.results``)."""
    value = nb.metadata.get("polyattn", {}).get("results", [])
    if isinstance(value, str):
        value = [value]
    return [str(v) for v in value]


# --- content keys and the manifest ----------------------------------------------------------

def _sha_files(paths: Iterable[Path], base: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p.relative_to(base)).encode())
        h.update(b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def library_hash(package_dir: Optional[Path] = None) -> str:
    """sha256 over every ``*.py`` file of the polyattn package (the code the chapters import)."""
    package_dir = Path(package_dir if package_dir is not None else PACKAGE_DIR)
    return _sha_files(package_dir.rglob("*.py"), package_dir)


def results_root(preset: str) -> Path:
    try:
        from .results import results_root as root_of
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


# --- executing one chapter ------------------------------------------------------------------

def _cell_label(nb, cell_index: int) -> tuple[int, int]:
    """(cell number, code cell number) of the failing cell in the chapter as written, 1-based.

    ``cell_index`` is papermill's index into the executed notebook, which has one extra cell
    (tagged injected-parameters) after the parameters cell; the error-marker cells papermill
    adds when it writes the failed notebook are removed first.
    """
    from papermill.execute import ERROR_MARKER_TAG

    cells = [c for c in nb.cells if ERROR_MARKER_TAG not in c.get("metadata", {}).get("tags", [])]
    injected = {i for i, c in enumerate(cells) if "injected-parameters" in c.get("metadata", {}).get("tags", [])}
    shift = sum(1 for i in injected if i < cell_index)
    code_no = sum(1 for i, c in enumerate(cells[:cell_index + 1]) if c.cell_type == "code" and i not in injected)
    return cell_index - shift + 1, code_no


def execute_chapter(entry: Entry, params: dict, output: Path, cwd: Path = REPO_ROOT) -> float:
    """Execute one notebook chapter into ``output``; returns seconds, raises BookError on failure."""
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    source = entry.source
    if source.suffix == ".md":  # a jupytext chapter without a paired .ipynb
        tmp = output.parent / ".src" / f"{entry.name}.ipynb"
        tmp.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(read_notebook(source), str(tmp))
        source = tmp
    start = time.perf_counter()
    try:
        papermill.execute_notebook(str(source), str(output), parameters=params, kernel_name="python3",
                                   progress_bar=False, log_output=False, cwd=str(cwd),
                                   request_save_on_cell_execute=False)
    except PapermillExecutionError as exc:
        cell_no, code_no = _cell_label(nbformat.read(str(output), as_version=4), exc.cell_index)
        first = (str(exc.source).strip().splitlines() or [""])[0]
        raise BookError(f"chapter {entry.name} failed at cell {cell_no} (code cell {code_no}: {first[:60]!r}): "
                        f"{exc.ename}: {str(exc.evalue).splitlines()[0] if exc.evalue else ''}") from None
    except Exception as exc:  # kernel death, unreadable notebook, ...
        raise BookError(f"chapter {entry.name} could not be executed: {type(exc).__name__}: {exc}") from exc
    return time.perf_counter() - start


# --- glue: verdicts -------------------------------------------------------------------------

def verdict(claim_id: str, text: str) -> str:
    """Deliver a chapter's verdict on a claim of :data:`CLAIMS` to the intro's table.

    Call it in a chapter with a short sentence built from computed numbers; the intro pastes
    it through the glue key ``verdict_<claim_id>``.  Returns the text (so the chapter can
    also show it).
    """
    if claim_id not in CLAIM_IDS:
        raise ValueError(f"unknown claim {claim_id!r}; the claims of the verdict table are {', '.join(CLAIM_IDS)}")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"the verdict on {claim_id!r} must be a non-empty sentence, got {text!r}")
    from myst_nb import glue

    glue(f"verdict_{claim_id}", text.strip(), display=False)
    return text.strip()


def glued_keys(nb) -> set[str]:
    """The glue keys stored in an executed notebook's outputs."""
    keys = set()
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                keys.add(name)
    return keys


def verdict_table(executed: dict[str, Path]) -> str:
    """The intro's verdict table as MyST markdown.

    ``executed`` maps chapter names (``NN_name``) to executed notebooks in the source tree.
    A verdict glued by the expected chapter is pasted by cross-document glue; any other
    row reads "pending: chapter NN".
    """
    import nbformat

    keys = {name: glued_keys(nbformat.read(str(p), as_version=4)) for name, p in executed.items()}
    lines = ["| claim | raised by | checked in | verdict |", "| --- | --- | --- | --- |"]
    for c in CLAIMS:
        number = c.chapter.split("_", 1)[0]
        key = f"verdict_{c.id}"
        if c.chapter in executed and key in keys[c.chapter]:
            where = f"{{doc}}`chapter {number} </chapters/{c.chapter}>`"
            cell = f"{{glue:text}}`chapters/{c.chapter}.ipynb::{key}:s`"
        else:
            where = (f"{{doc}}`chapter {number} </chapters/{c.chapter}>`" if c.chapter in executed
                     else f"chapter {number}")
            cell = f"pending: chapter {number}"
        lines.append(f"| {c.claim} | {c.source} | {where} | {cell} |")
    return "\n".join(lines)


# --- status ---------------------------------------------------------------------------------

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
        rows.append({"chapter": name, "docname": rec.get("docname", f"chapters/{name}"), "preset": rec.get("preset"), "state": rec.get("state"),
                     "seconds": rec.get("seconds"), "executed at (UTC)": rec.get("executed_at"),
                     "status": rec.get("status")})
    return pd.DataFrame(rows, columns=["chapter", "docname", "preset", "state", "seconds", "executed at (UTC)", "status"])


def _markdown_table(header: Sequence[str], rows: Iterable[Sequence]) -> str:
    def esc(v):
        return str(v).replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(esc(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def status_markdown(build_root: Path, root: Path = REPO_ROOT) -> tuple[str, str]:
    df = status_table(build_root)
    rows = []
    for r in df.itertuples(index=False):
        secs = "" if r.seconds is None else f"{r.seconds:.1f}"
        rows.append([f"{{doc}}`{r.chapter} </{r.docname}>`" if r.status == "ok" else r.chapter,
                     r.preset, r.state, secs, r[5], r.status])
    status = _markdown_table(["chapter", "preset", "cache state", "execution seconds", "executed at (UTC)", "status"], rows)
    env = _markdown_table(["item", "value"], environment(root).items())
    return status, env


# --- assembling and building ----------------------------------------------------------------

def _replace_marker(text: str, marker: str, replacement: str) -> str:
    lines = text.splitlines()
    hits = [i for i, line in enumerate(lines) if line.strip() == marker]
    if not hits:
        return text
    for i in hits:
        lines[i] = replacement
    return "\n".join(lines) + "\n"


def mathjax_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        raise BookError("MathJax is missing: pip install django-static-mathjax (listed in requirements.txt)")
    d = Path(list(spec.submodule_search_locations)[0]) / "static" / "mathjax" / "es5"
    if not (d / "tex-chtml.js").exists():
        raise BookError(f"MathJax files not found in {d}: reinstall django-static-mathjax")
    return d


def assemble(entries: list[Entry], executed: dict[str, Path], build_root: Path, root: Path = REPO_ROOT) -> Path:
    """Lay out ``_build/src`` for jupyter-book; returns its path."""
    import yaml

    src = Path(build_root) / "_build" / "src"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    for name in ("_config.yml", "references.bib"):
        if (Path(root) / name).exists():
            shutil.copy2(Path(root) / name, src / name)
    keep = {e.docname for e in entries if (e.kind == "page") or (e.kind == "notebook" and e.name in executed)}
    (src / "_toc.yml").write_text(yaml.safe_dump(_prune_toc(read_toc(root), keep), sort_keys=False))
    verdicts = verdict_table(executed)
    status, env = status_markdown(build_root, root)
    for e in entries:
        if e.docname not in keep:
            continue
        if e.kind == "notebook":
            target = src / f"{e.docname}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(executed[e.name], target)
        else:
            text = e.source.read_text(encoding="utf-8")
            text = _replace_marker(text, VERDICT_MARKER, verdicts)
            text = _replace_marker(text, STATUS_MARKER, status)
            text = _replace_marker(text, ENVIRONMENT_MARKER, env)
            target = src / f"{e.docname}.md"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    # images and other files next to the chapters (referenced from markdown)
    for folder in {Path(e.docname).parent for e in entries}:
        for p in (Path(root) / folder).glob("*"):
            if p.is_file() and p.suffix.lower() in (".png", ".svg", ".jpg", ".jpeg", ".gif", ".csv"):
                (src / folder).mkdir(parents=True, exist_ok=True)
                shutil.copy2(p, src / folder / p.name)
    # not under _static: jupyter-book would add every .js file there to every page
    (src / "_mathjax").mkdir()
    (src / "_mathjax" / "favicon.svg").write_text(FAVICON_SVG)
    mj = mathjax_dir()
    for part in MATHJAX_PARTS:
        p = mj / part
        dest = src / "_mathjax" / "mathjax" / part
        dest.parent.mkdir(parents=True, exist_ok=True)
        if p.is_dir():
            shutil.copytree(p, dest)
        elif p.exists():
            shutil.copy2(p, dest)
    return src


def build_html(src: Path, build_root: Path, strict: bool = True) -> Path:
    """Run jupyter-book on the assembled tree; returns ``_build/html``; raises BookError on warnings."""
    exe = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(exe) if exe.exists() else "jupyter-book", "build", str(src), "--path-output", str(build_root),
           "--all", "--keep-going"]
    if strict:
        cmd += ["-W", "-n"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    log = Path(build_root) / "_build" / "jupyter-book.log"
    log.write_text(proc.stdout + "\n" + proc.stderr)
    warnings = [line for line in (proc.stdout + proc.stderr).splitlines() if "WARNING" in line or "ERROR" in line]
    if proc.returncode != 0:
        shown = "\n".join(warnings[:20]) or (proc.stdout + proc.stderr)[-3000:]
        raise BookError(f"the site build failed (jupyter-book exit {proc.returncode}, full log in {log}):\n{shown}")
    html = Path(build_root) / "_build" / "html"
    print(f"[book] site built in {time.perf_counter() - start:.1f} s: {html / 'index.html'}", flush=True)
    return html


# --- the whole run --------------------------------------------------------------------------

@dataclass
class RunReport:
    executed: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    html: Optional[Path] = None


def _select(entries: list[Entry], chapters: Optional[Sequence[str]]) -> set[str]:
    names = [e.name for e in entries if e.kind == "notebook"]
    if not chapters:
        return set(names)
    chosen = set()
    for want in chapters:
        hits = [n for n in names if n == want or n.split("_", 1)[0] == want or n.startswith(want)]
        if not hits:
            raise BookError(f"--chapters: no notebook chapter matches {want!r}; chapters are {', '.join(names)}")
        chosen.update(hits)
    return chosen


def run(preset: str = "book", chapters: Optional[Sequence[str]] = None, force: bool = False,
        recompute: bool = False, seeds: Optional[list[int]] = None, device: str = "cpu",
        html: bool = True, root: Path = REPO_ROOT, build_root: Optional[Path] = None,
        strict: bool = True) -> RunReport:
    """Execute what changed, then build the site.  Raises BookError naming the failing chapter."""
    if preset not in PRESETS:
        raise BookError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    root = Path(root).resolve()
    build_root = Path(build_root).resolve() if build_root is not None else root
    executed_dir = build_root / "_build" / "executed"
    entries = discover(root)
    for e in entries:
        if e.kind == "missing":
            print(f"[book] WARNING: {e.docname} is in _toc.yml but has no source yet; left out of this build",
                  file=sys.stderr, flush=True)
    selected = _select(entries, chapters)
    params = {"preset": preset, "recompute": bool(recompute), "seeds": seeds, "device": device}
    manifest = load_manifest(build_root)
    report = RunReport()
    executed: dict[str, Path] = {}
    done: dict[str, tuple[dict, list[str]]] = {}
    for e in entries:
        if e.kind != "notebook":
            continue
        out = executed_dir / f"{e.name}.ipynb"
        rec = manifest["chapters"].get(e.name, {})
        if e.name not in selected:
            if out.exists() and rec.get("status") == "ok":
                executed[e.name] = out
                rec["state"] = "not selected (earlier output)"
                print(f"[book] {e.name}: not selected, earlier output kept", flush=True)
            else:
                report.skipped.append(e.name)
                print(f"[book] WARNING: {e.name}: not selected and never executed; left out", file=sys.stderr, flush=True)
            continue
        check_chapter(e)
        nb = read_notebook(e.source)
        experiments = declared_results(nb)
        parts = key_parts(e.source, params, root)
        key = key_of(parts, results_hash(experiments, preset))
        done[e.name] = (parts, experiments)
        if (not force and not recompute and out.exists() and rec.get("key") == key and rec.get("status") == "ok"):
            rec["state"] = "cached"
            manifest["chapters"][e.name] = rec
            executed[e.name] = out
            report.cached.append(e.name)
            print(f"[book] {e.name}: cached (executed {rec.get('executed_at')} in {rec.get('seconds', 0):.1f} s)", flush=True)
            continue
        print(f"[book] {e.name}: executing with preset {preset} ...", flush=True)
        stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
        try:
            seconds = execute_chapter(e, params, out, cwd=root)
        except BookError:
            manifest["chapters"][e.name] = {"key": None, "status": "failed", "preset": preset, "params": params,
                                            "state": "failed", "seconds": None, "executed_at": stamp,
                                            "source": str(e.source.relative_to(root)), "docname": e.docname}
            save_manifest(manifest, build_root)
            raise
        manifest["chapters"][e.name] = {"key": key, "status": "ok", "preset": preset, "params": params,
                                        "state": "executed", "seconds": round(seconds, 2), "executed_at": stamp,
                                        "source": str(e.source.relative_to(root)), "docname": e.docname,
                                        "results": experiments}
        save_manifest(manifest, build_root)
        executed[e.name] = out
        report.executed.append(e.name)
        print(f"[book] {e.name}: executed in {seconds:.1f} s", flush=True)
    # Records written during this run by the chapters themselves (a chapter creates the records
    # it misses, and two chapters may share an experiment) belong to the keys, so that a rerun
    # finds every chapter cached.  Records that appear between runs still execute again.
    for name, (parts, experiments) in done.items():
        if experiments and manifest["chapters"].get(name, {}).get("status") == "ok":
            manifest["chapters"][name]["key"] = key_of(parts, results_hash(experiments, preset))
    # chapters that left the TOC leave the manifest
    names = {e.name for e in entries if e.kind == "notebook"}
    manifest["chapters"] = {k: v for k, v in manifest["chapters"].items() if k in names}
    save_manifest(manifest, build_root)
    print(f"[book] {len(report.executed)} executed, {len(report.cached)} cached", flush=True)
    if html:
        src = assemble(entries, executed, build_root, root)
        report.html = build_html(src, build_root, strict=strict)
    return report


def _parse_seeds(text: Optional[str]) -> Optional[list[int]]:
    if text is None or text.strip() == "":
        return None
    try:
        return [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seeds takes comma-separated integers, e.g. 0,1,2; got {text!r}") from None


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m polyattn.book", description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="book", choices=PRESETS, help="experiment size (default: book)")
    parser.add_argument("--chapters", default=None,
                        help="comma-separated chapters to execute (names or numbers, e.g. 01,04_vit); default all")
    parser.add_argument("--force", action="store_true", help="execute even when the content key is unchanged")
    parser.add_argument("--recompute", action="store_true",
                        help="pass recompute=True to the chapters (rerun experiments instead of loading records)")
    parser.add_argument("--seeds", type=_parse_seeds, default=None, help="comma-separated seeds passed to the chapters")
    parser.add_argument("--device", default="cpu", help="device passed to the chapters (default: cpu)")
    parser.add_argument("--no-html", action="store_true", help="execute only; do not build the site")
    parser.add_argument("--root", type=Path, default=REPO_ROOT, help="the book's source folder (holds _toc.yml)")
    parser.add_argument("--build-root", type=Path, default=None,
                        help="folder that receives _build/ (default: the source folder)")
    args = parser.parse_args(argv)
    chapters = [c.strip() for c in args.chapters.split(",") if c.strip()] if args.chapters else None
    start = time.perf_counter()
    try:
        run(preset=args.preset, chapters=chapters, force=args.force, recompute=args.recompute, seeds=args.seeds,
            device=args.device, html=not args.no_html, root=args.root, build_root=args.build_root)
    except BookError as exc:
        print(f"[book] FAILED: {exc}", file=sys.stderr, flush=True)
        return 1
    print(f"[book] done in {time.perf_counter() - start:.1f} s", flush=True)
    return 0


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        key = (str(getattr(js, "filename", js) or ""), tuple(sorted((getattr(js, "attributes", None) or {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    context["script_files"][:] = unique


def setup(app):
    """Sphinx extension (listed in _config.yml): each script once per page.

    sphinx-thebe registers its inline configuration twice under jupyter-book, and the
    second ``const THEBE_JS_URL`` is a console error in every browser.
    """
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    sys.exit(main())
