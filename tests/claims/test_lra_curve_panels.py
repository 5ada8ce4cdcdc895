"""Which LRA tasks get a learning-curve panel: none of one epoch, none whose curves are flat."""
from __future__ import annotations

import pandas as pd

from polyattn.analysis.lra import FLAT_CURVE_POINTS, curve_panels


def _epochs(task, values):
    """values: variant -> per-epoch accuracies (fractions), two seeds each with the same curve."""
    return [{"lra_task": task, "variant": v, "seed": s, "epoch": e + 1, "test_acc": a}
            for v, accs in values.items() for s in (0, 1) for e, a in enumerate(accs)]


def test_a_single_epoch_and_a_flat_task_are_left_out_and_a_moving_one_kept():
    rows = (_epochs("listops", {"softmax": [0.31], "x^3/14": [0.16]})
            + _epochs("pathfinder", {"softmax": [0.500, 0.500], "x^3/14": [0.499, 0.501]})
            + _epochs("text", {"softmax": [0.25, 0.33], "x^3/14": [0.24, 0.27]}))
    assert curve_panels(pd.DataFrame(rows)) == {"listops": "one epoch", "pathfinder": "flat", "text": None}


def test_the_flat_rule_reads_the_span_of_the_mean_curves_in_points():
    just_flat = FLAT_CURVE_POINTS / 100
    rows = _epochs("image", {"softmax": [0.5, 0.5 + 0.9 * just_flat]})
    assert curve_panels(pd.DataFrame(rows))["image"] == "flat"
    rows = _epochs("image", {"softmax": [0.5, 0.5 + 2 * just_flat]})
    assert curve_panels(pd.DataFrame(rows))["image"] is None
    # two seeds moving in opposite directions average to a flat mean curve
    rows = [{"lra_task": "image", "variant": "softmax", "seed": s, "epoch": e, "test_acc": 0.5 + d * (e - 1) * 0.1}
            for s, d in ((0, 1), (1, -1)) for e in (1, 2)]
    assert curve_panels(pd.DataFrame(rows))["image"] == "flat"
