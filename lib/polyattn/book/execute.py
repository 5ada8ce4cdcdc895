"""Executing notebook chapters with papermill (one or several at a time), and naming the failing
cell when one fails."""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator, Optional

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


_SOCKET_DIR: list[Path] = []


def _socket_dir() -> Path:
    """One private folder per process for the kernels' sockets, removed when the process exits."""
    if not _SOCKET_DIR:
        import atexit
        import shutil
        import tempfile

        path = Path(tempfile.mkdtemp(prefix="polyattn-kernels-"))
        atexit.register(shutil.rmtree, path, ignore_errors=True)
        _SOCKET_DIR.append(path)
    return _SOCKET_DIR[0]


def local_kernel_manager():
    """A kernel manager whose kernels talk to papermill over IPC sockets in a private temporary
    folder instead of TCP on the loopback (nothing to eavesdrop on, so the kernel has nothing to
    warn about), and that shuts a kernel down without interrupting it first.

    jupyter_client sends SIGINT to the kernel's process group before every shutdown request, in
    case a cell still runs.  Papermill shuts a kernel down only once its cells have run or one has
    failed, so there is nothing to interrupt; a kernel that the signal finds inside a message
    handler logs "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." into the build log of
    a build that succeeded.  The shutdown request alone stops the kernel (and jupyter_client still
    kills one that does not stop in time)."""
    import uuid

    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class LocalKernelManager(AsyncKernelManager):
        @default("transport")
        def _default_transport(self):
            return "ipc"

        @default("ip")
        def _default_ip(self):
            return str(_socket_dir() / uuid.uuid4().hex[:12])

        async def _async_interrupt_kernel(self) -> None:
            if self.shutting_down:      # the shutdown's own interrupt: the kernel is idle
                return
            await super()._async_interrupt_kernel()

    return LocalKernelManager


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
                                   request_save_on_cell_execute=False, kernel_manager_class=local_kernel_manager())
    except PapermillExecutionError as exc:
        cell_no, code_no = _cell_label(nbformat.read(str(output), as_version=4), exc.cell_index)
        first = (str(exc.source).strip().splitlines() or [""])[0]
        raise BookError(f"chapter {entry.name} failed at cell {cell_no} (code cell {code_no}: {first[:60]!r}): "
                        f"{exc.ename}: {str(exc.evalue).splitlines()[0] if exc.evalue else ''}") from None
    except Exception as exc:  # kernel death, unreadable notebook, ...
        raise BookError(f"chapter {entry.name} could not be executed: {type(exc).__name__}: {exc}") from exc
    return time.perf_counter() - start


#: environment variables that set how many threads a kernel's numerical libraries use
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


@contextmanager
def threads_per_kernel(n: int) -> Iterator[None]:
    """Kernels started inside get ``n`` threads each, unless the caller already set the variables."""
    unset = [v for v in THREAD_VARS if v not in os.environ]
    for v in unset:
        os.environ[v] = str(n)
    try:
        yield
    finally:
        for v in unset:
            os.environ.pop(v, None)


@contextmanager
def kernel_env(name: str, value: str, on: bool = True) -> Iterator[None]:
    """Kernels started inside see ``name=value``, unless ``on`` is false or the caller set ``name``."""
    if not on or name in os.environ:
        yield
        return
    os.environ[name] = value
    try:
        yield
    finally:
        os.environ.pop(name, None)


def stored_only(on: bool):
    """Kernels started inside refuse to train when ``on`` (the book preset reads stored records only;
    see :data:`polyattn.train.STORED_ONLY`)."""
    from ..train import STORED_ONLY

    return kernel_env(STORED_ONLY, "1", on)


#: tqdm takes its defaults from TQDM_* variables; this one turns every progress bar off.
NO_PROGRESS = "TQDM_DISABLE"


def no_progress_bars():
    """Kernels started inside draw no progress bars: an executed chapter's stderr becomes text on
    its page, one line per update of a bar."""
    return kernel_env(NO_PROGRESS, "1")


Finished = Callable[[Entry, Path, Optional[str], str, Optional[float]], None]


def execute_all(todo: list[tuple[Entry, Path, Optional[str], bool]], params: dict, cwd: Path, jobs: int,
                finished: Finished) -> None:
    """Execute every ``(entry, output, key, alone)`` of ``todo``: ``jobs`` at a time, each kernel
    with its share of the cores, then the chapters that run alone, one by one, with all the cores.
    ``finished(entry, output, key, started_at, seconds)`` is called as each ends (``seconds`` None
    when it failed; calls never overlap).  The first failure is raised once the running chapters
    end; chapters not started by then are not started."""
    lock = threading.Lock()

    def one(item: tuple[Entry, Path, Optional[str], bool]) -> None:
        entry, out, key, _ = item
        print(f"[book] {entry.name}: executing with preset {params['preset']} ...", flush=True)
        stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
        try:
            seconds = execute_chapter(entry, params, out, cwd=cwd)
        except BookError:
            with lock:
                finished(entry, out, key, stamp, None)
            raise
        with lock:
            finished(entry, out, key, stamp, seconds)

    shared = [t for t in todo if jobs > 1 and not t[3]]
    if len(shared) > 1:
        with threads_per_kernel(max(1, (os.cpu_count() or 1) // jobs)), ThreadPoolExecutor(jobs) as pool:
            futures = [pool.submit(one, t) for t in shared]
            wait(futures, return_when=FIRST_EXCEPTION)
            for f in futures:
                f.cancel()
        errors = [f.exception() for f in futures if not f.cancelled() and f.exception() is not None]
        if errors:
            raise errors[0]
    else:
        shared = []
    for t in todo:
        if t not in shared:
            one(t)
