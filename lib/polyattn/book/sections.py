"""Rerun one section of a chapter on its own: ``python -m polyattn section 04 "Figure 1"``.

A chapter is a MyST jupytext notebook whose sections start at ``## `` headings.  Its *setup* is
everything before the first such heading (the parameters cell and the cell that imports and sets up
the page); a section depends on the setup alone, so the setup followed by one section is a notebook
that runs by itself.  This module cuts that notebook out of a chapter and executes it with papermill
(the chapter's parameters ``preset``, ``recompute``, ``seeds`` and ``device`` apply).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .common import REPO_ROOT, BookError
from .execute import local_kernel_manager, no_progress_bars

_HEADING = re.compile(r"^## +(.+?)\s*$", re.M)


@dataclass(frozen=True)
class Section:
    title: str
    cells: tuple  # the notebook cells from its heading to the next ``## `` heading


def _read(path: Path):
    import jupytext

    return jupytext.read(str(path), fmt="md:myst") if path.suffix == ".md" else jupytext.read(str(path))


def split(path: Path) -> tuple[list, list[Section]]:
    """A chapter's setup cells and its sections, in order."""
    nb = _read(Path(path))
    setup, sections, current, title = [], [], None, None
    for cell in nb.cells:
        m = _HEADING.search(cell.source) if cell.cell_type == "markdown" else None
        if m:
            if current is not None:
                sections.append(Section(title, tuple(current)))
            title, current = m.group(1), [cell]
        elif current is None:
            setup.append(cell)
        else:
            current.append(cell)
    if current is not None:
        sections.append(Section(title, tuple(current)))
    return setup, sections


def chapter_path(chapter: str, root: Path = REPO_ROOT) -> Path:
    """``chapters/NN_name.md`` from ``NN``, ``NN_name`` or a path."""
    p = Path(chapter)
    if p.suffix in (".md", ".ipynb") and (p.exists() or (root / p).exists()):
        return p if p.exists() else root / p
    hits = sorted((root / "chapters").glob(f"{chapter}*.md"))
    if len(hits) != 1:
        found = ", ".join(h.stem for h in sorted((root / "chapters").glob("[0-9][0-9]_*.md")))
        raise BookError(f"no single chapter matches {chapter!r}; chapters: {found}")
    return hits[0]


def find(sections: list[Section], title: str) -> Section:
    """The section whose heading starts with ``title`` (case-insensitive), or a clear error."""
    hits = [s for s in sections if s.title.lower().startswith(title.lower())]
    if len(hits) != 1:
        raise BookError(f"{'no' if not hits else 'more than one'} section starts with {title!r}; sections: "
                        + "; ".join(repr(s.title) for s in sections))
    return hits[0]


def section_notebook(path: Path, title: str):
    """The notebook of the chapter's setup followed by one section."""
    import nbformat

    setup, sections = split(path)
    nb = _read(Path(path))
    nb.cells = [*setup, *find(sections, title).cells]
    return nbformat.from_dict(nb)


def run_section(chapter: str, title: str, params: Optional[dict] = None, output: Optional[Path] = None,
                root: Path = REPO_ROOT) -> Path:
    """Execute the chapter's setup and one section; returns the executed notebook's path."""
    import nbformat
    import papermill


    path = chapter_path(chapter, root)
    nb = section_notebook(path, title)
    out = Path(output) if output else root / "_build" / "sections" / f"{path.stem}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.with_name(out.stem + ".src.ipynb")
    nbformat.write(nb, str(src))
    try:
        with no_progress_bars():
            papermill.execute_notebook(str(src), str(out), parameters=params or {}, kernel_name="python3",
                                       progress_bar=False, log_output=False, cwd=str(root),
                                       kernel_manager_class=local_kernel_manager())
    except papermill.exceptions.PapermillExecutionError as exc:
        raise BookError(f"section {title!r} of {path.stem} failed: {exc.ename}: {exc.evalue}") from None
    return out


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m polyattn section",
                                description="Execute one section of a chapter on its own (its setup, then the section).")
    p.add_argument("chapter", help="NN, NN_name or a path to the chapter's .md")
    p.add_argument("section", nargs="?", help="the start of the section's heading; omit to list the sections")
    p.add_argument("--preset", default="smoke", choices=("smoke", "book", "paper"))
    p.add_argument("--recompute", action="store_true")
    p.add_argument("--output", type=Path, help="where the executed notebook goes (default _build/sections/)")
    args = p.parse_args(argv)
    try:
        path = chapter_path(args.chapter)
        if not args.section:
            for s in split(path)[1]:
                print(s.title)
            return 0
        out = run_section(args.chapter, args.section, {"preset": args.preset, "recompute": args.recompute},
                          args.output)
    except BookError as e:
        print(f"error: {e}")
        return 1
    print(f"section executed: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
