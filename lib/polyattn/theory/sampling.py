"""Monte Carlo bookkeeping shared by the estimators: a mean with its interval, draws in chunks."""
from __future__ import annotations

import math

import numpy as np
from scipy import stats


def _mean_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float, float]:
    values = np.asarray(values, dtype=np.float64)
    mean = float(values.mean())
    se = float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else float("nan")
    z = stats.norm.ppf(0.5 + level / 2)
    return mean, se, mean - z * se, mean + z * se


def _chunks(total: int, size: int):
    done = 0
    while done < total:
        k = min(size, total - done)
        yield k
        done += k


def _chunk_for(n: int, inner: int, budget: float = 2e7) -> int:
    return max(1, int(budget // max(1, n * max(n, inner))))

