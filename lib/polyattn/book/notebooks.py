"""Reading notebook chapters: jupytext pairs and their drift, the parameters cell, declared results."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from .common import PARAMETER_NAMES, BookError
from .toc import Entry, is_jupytext_markdown


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


def runs_alone(nb) -> bool:
    """Whether a chapter must not share the machine (notebook metadata ``polyattn.alone``: it times code)."""
    return bool(nb.metadata.get("polyattn", {}).get("alone", False))
