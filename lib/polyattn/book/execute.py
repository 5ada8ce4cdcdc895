"""Executing one notebook chapter with papermill, and naming the failing cell when it fails."""
from __future__ import annotations

import time
from pathlib import Path

from .common import REPO_ROOT, BookError
from .notebooks import read_notebook
from .toc import Entry


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

