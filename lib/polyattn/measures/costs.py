"""The cost of polynomial attention on the machine that builds the book (chapter 08).

Timings depend on the machine, so this claim is never written into the README or the committed
verdicts: chapter 08 measures, stores what it measured with :func:`save` under
``_build/measurements/`` (never under ``data/``), and :func:`cost` reads it back and states it.
The claim (a reviewer: "the cost is not analysed") is answered by measuring, so its form is
always "measured".
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Optional

from ..claims.spec import Finding
from ..results import REPO_ROOT, provenance, write_atomic

COSTS_FILE = Path("_build") / "measurements" / "costs.json"
#: What :func:`save` needs: ratios to SDPA softmax (time, peak memory) and to softmax's training step.
FIELDS = ("threads", "auto_paths", "attention_time_min", "attention_time_max", "n_min", "n_max", "peak_memory",
          "peak_memory_n", "linear_time_max", "linear_from_n", "vit_throughput", "causal_path", "causal_time_min",
          "causal_time_max", "causal_linear_max", "causal_linear_from_n", "lra_n", "lra_cubic_step",
          "lra_linear_step")


def save(numbers: Mapping[str, object], repo: Path = REPO_ROOT) -> Path:
    """Store chapter 08's measurements (every key of :data:`FIELDS`) with their provenance."""
    missing = [k for k in FIELDS if k not in numbers]
    if missing:
        raise ValueError(f"cost measurements lack {', '.join(missing)}; pass every key of polyattn.measures.costs.FIELDS")
    path = repo / COSTS_FILE
    write_atomic(path, {"numbers": {k: numbers[k] for k in FIELDS}, "provenance": provenance()})
    return path


def summary(n: Mapping[str, object]) -> str:
    """The sentence that states the measurements (Markdown with maths)."""
    return (
        f"On this CPU ({n['threads']} thread) $x^3/\\sqrt{{N}}$ runs tile by tile, on the path `auto` takes "
        f"({n['auto_paths']}), at {n['attention_time_min']:.2f}–{n['attention_time_max']:.2f}$\\times$ SDPA softmax's "
        f"time for $N = {n['n_min']}$ to ${n['n_max']}$ and, on the blocked path, {n['peak_memory']:.2f}$\\times$ its "
        f"peak memory at $N = {n['peak_memory_n']}$; $x$ and $x^2$ have exact linear-time forms ($x$: at most "
        f"{n['linear_time_max']:.3f}$\\times$ SDPA from $N = {n['linear_from_n']}$); a micro ViT trains at "
        f"{n['vit_throughput']:.2f}$\\times$ softmax's throughput; under causal masks the cubic ({n['causal_path']} "
        f"path) takes {n['causal_time_min']:.2f}–{n['causal_time_max']:.2f}$\\times$ SDPA's causal time and the "
        f"causal linear form of $x$ at most {n['causal_linear_max']:.3f}$\\times$ from $N = {n['causal_linear_from_n']}$; "
        f"the LRA classifier's training step at $N = {n['lra_n']:,}$ takes {n['lra_cubic_step']:.2f}$\\times$ "
        f"softmax's with $x^3$ and {n['lra_linear_step']:.2f}$\\times$ with $x$.")


def cost(root: Optional[Path] = None, repo: Path = REPO_ROOT) -> Finding:
    """The cost claim's finding from the measurements chapter 08 stored on this machine."""
    path = repo / COSTS_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: the cost is measured on the machine that builds the book; "
                                "execute chapter 08 (python -m polyattn.book --chapters 08) first")
    numbers = json.loads(path.read_text())["numbers"]
    return Finding("measured", summary(numbers), numbers)
