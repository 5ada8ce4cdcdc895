"""Figure 1's verdict form, decided by the library from the best-constant sweep."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from polyattn.analysis.sweep import BestConstant, scale_form


def _bc(ci, resolved=(True, True, True)):
    table = pd.DataFrame({"seq_len": [17, 50, 197], "resolved": list(resolved)})
    return BestConstant(table=table, cells=pd.DataFrame(), slope=-0.5, slope_ci=ci, slope_grid=-0.5,
                        direction="falls")


@pytest.mark.parametrize("ci, form", [
    ((-0.8, -0.2), "holds"),                         # holds -1/2, excludes 0
    ((-0.3, -0.1), "not supported"),                 # excludes -1/2
    ((0.1, 0.6), "not supported"),
    ((-0.9, 0.4), "inconclusive at this scale"),     # holds both -1/2 and 0
    ((math.nan, math.nan), "inconclusive at this scale"),  # no interval
    ((-0.4, -0.4), "inconclusive at this scale"),    # every resample the same: no interval
])
def test_the_slope_interval_decides_the_form(ci, form):
    assert scale_form(_bc(ci)) == form


def test_an_unresolved_winner_leaves_the_form_open_whatever_the_slope():
    assert scale_form(_bc((-0.8, -0.2), resolved=(True, False, True))) == "inconclusive at this scale"
    assert scale_form(_bc((-0.8, -0.2), resolved=(True, None, True))) == "inconclusive at this scale"


def test_numpy_booleans_count_as_resolved():
    import numpy as np

    bc = _bc((-0.8, -0.2))
    bc.table["resolved"] = np.array([True, True, True])
    assert scale_form(bc) == "holds"
    bc.table["resolved"] = [True, math.nan, True]
    assert scale_form(bc) == "inconclusive at this scale"
