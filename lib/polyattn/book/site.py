"""The site: the source tree ``_build/src`` (TOC, pages with their tables, executed notebooks,
MathJax), the jupyter-book build, and the Sphinx extension listed in ``_config.yml``."""
from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from .answer import ANSWER_MARKER, RESULT_LEGEND_MARKER, intro_answer, result_legend_markdown
from .common import REPO_ROOT, BookError
from .status import design_markdown, records_markdown, status_markdown
from .toc import Entry, _prune_toc, read_toc
from .verdict_rows import verdict_table

VERDICT_MARKER = "% polyattn:verdict-table"
STATUS_MARKER = "% polyattn:status-table"
ENVIRONMENT_MARKER = "% polyattn:environment-table"
RECORDS_MARKER = "% polyattn:records-table"
DESIGN_MARKER = "% polyattn:design-table"

#: papermill tags the cell it inserts with the parameters of the run; MyST-NB leaves a cell
#: tagged remove-cell out of the page.
INJECTED_TAG = "injected-parameters"
REMOVE_TAG = "remove-cell"

#: MathJax files copied into the site (the rest of the package is not needed for TeX input
#: with CommonHTML output, the menu and the accessibility extensions it loads on demand).
MATHJAX_PARTS = ("tex-chtml.js", "input", "output", "ui", "a11y", "adaptors", "sre")

FAVICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
    '<rect width="32" height="32" rx="6" fill="#1f4e9c"/>'
    '<text x="16" y="23" font-size="18" text-anchor="middle" fill="white" font-family="serif">x³</text></svg>'
)


#: The site's own style: the intro's answer table in compact type, so that its rows stay short and
#: the first screen shows the three answers and the first rows of the table; the tables folded in a
#: dropdown (details for who wants them) compact too, in a body that gives them the column's width.
BOOK_CSS = """\
.answer-table table, .sd-dropdown table { font-size: 0.85rem; line-height: 1.35; }
.answer-table th, .answer-table td { padding: 0.25rem 0.5rem !important; vertical-align: top; }
.sd-dropdown .sd-card-body { padding-left: 0.25rem; padding-right: 0.25rem; }
"""
BOOK_CSS_FILE = "book.css"


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


def copy_executed_notebook(source: Path, target: Path) -> None:
    """Copy an executed chapter into the site's tree with papermill's injected cell removed from the page.

    The chapter's own parameters cell already shows the parameters; the injected cell would
    show them a second time.  The preset each chapter ran with is on the status page.  The
    executed notebook itself keeps the cell as papermill wrote it: failing cells are numbered
    against it.
    """
    import nbformat

    nb = nbformat.read(str(source), as_version=4)
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if INJECTED_TAG in tags and REMOVE_TAG not in tags:
            cell.metadata["tags"] = [*tags, REMOVE_TAG]
    nbformat.write(nb, str(target))


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
    verdicts = verdict_table(executed, root=Path(root))
    status, env = status_markdown(build_root, root)
    for e in entries:
        if e.docname not in keep:
            continue
        if e.kind == "notebook":
            target = src / f"{e.docname}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            copy_executed_notebook(executed[e.name], target)
        else:
            text = e.source.read_text(encoding="utf-8")
            text = _replace_marker(text, VERDICT_MARKER, verdicts)
            if ANSWER_MARKER in text:
                text = _replace_marker(text, ANSWER_MARKER, intro_answer((src / e.docname).parent))
            if RESULT_LEGEND_MARKER in text:
                text = _replace_marker(text, RESULT_LEGEND_MARKER, result_legend_markdown())
            text = _replace_marker(text, STATUS_MARKER, status)
            text = _replace_marker(text, ENVIRONMENT_MARKER, env)
            if RECORDS_MARKER in text:
                text = _replace_marker(text, RECORDS_MARKER, records_markdown(root))
            if DESIGN_MARKER in text:
                text = _replace_marker(text, DESIGN_MARKER, design_markdown())
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
    (src / "_mathjax" / BOOK_CSS_FILE).write_text(BOOK_CSS)
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


def _svg_alt(app, doctree, docname):
    """Give each SVG figure of the page its own description as alt text (the ``<title>`` that
    :func:`polyattn.plotting.column_svg` writes) instead of the image's file path."""
    import re

    from docutils import nodes

    for image in doctree.findall(nodes.image):
        uri = image.get("uri", "")
        if not uri.endswith(".svg"):
            continue
        candidates = [Path(app.srcdir) / uri, Path(app.env.relfn2path(uri, docname)[1])]
        path = next((c for c in candidates if c.is_file()), None)
        if path is None:
            continue
        head = path.read_text(encoding="utf-8", errors="replace")[:4000]
        found = re.search(r"<title>(.*?)</title>", head, re.S)
        if found:
            import html

            image["alt"] = html.unescape(found.group(1)).strip()


def setup(app):
    """Sphinx extension (listed in _config.yml): each script once per page, and each figure's
    description as its alt text.

    sphinx-thebe registers its inline configuration twice under jupyter-book, and the
    second ``const THEBE_JS_URL`` is a console error in every browser.
    """
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    app.connect("doctree-resolved", _svg_alt)
    app.add_css_file(BOOK_CSS_FILE)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

