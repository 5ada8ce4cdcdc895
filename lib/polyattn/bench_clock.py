"""The clock and the pairing of rounds that both benchmarks (:mod:`polyattn.bench`,
:mod:`polyattn.bench_train`) measure with, so that their ratios are read alike."""
from __future__ import annotations

import statistics
import time
from typing import Callable, Sequence


def clock(threads: int) -> tuple[str, Callable[[], float]]:
    """``(name, clock)``: with one thread the process CPU time, which is what the computation costs
    whatever else the machine runs; with more threads wall time."""
    return ("cpu", time.process_time) if threads == 1 else ("wall", time.perf_counter)


def paired_ratio(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """The median over rounds of ``numerators[r] / denominators[r]``: samples of one round
    are paired, so a slow phase of a shared machine that hits the round cancels."""
    return statistics.median(a / b for a, b in zip(numerators, denominators, strict=True))
