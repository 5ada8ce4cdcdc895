"""Chapter 05's "With more steps": the longer runs' curve and the cube's catch-up, and each
comparison at both budgets with the counts of what more steps did to the gaps."""
import math

import pandas as pd
from support.patching import patch_everywhere

from polyattn.claims.budget import BudgetPair
from polyattn.claims.evaluate import ComparisonResult
from polyattn.claims.spec import Arm, Comparison
from polyattn.studies.lra import long as page


def _curve(cube, fixed_last=(0.15, 0.31, 0.32), softmax=0.32, steps=(800, 1600, 2400, 3200)):
    rows = []
    for i, step in enumerate(steps):
        for variant, mean, values in (("softmax", softmax, (softmax,) * 3), ("x^3/sqrt(N), N valid", cube[i], (cube[i],) * 3),
                                      ("x^3/14", sum(fixed_last) / 3, fixed_last)):
            rows.append({"variant": variant, "step": step, "mean": mean, "min": min(values), "max": max(values),
                         "seeds": 3, "values": values})
    return pd.DataFrame(rows)


def test_the_catch_up_of_the_cube(monkeypatch):
    patch_everywhere(monkeypatch, page, "book_chance", lambda tasks=("listops",): {t: 0.15 for t in tasks})
    v = page.catch_up_values(_curve([0.15, 0.25, 0.31, 0.315]))
    assert v["caught_up"] == "step 2,400" and v["first_step"] == "800" and v["long_steps"] == "3,200"
    assert v["first_softmax"] == "32.0%" and v["first_cube"] == "15.0%" and v["chance"] == "15.0%"
    assert v["fixed_at_chance"] == "1" and v["fixed_seeds"] == "3" and v["book_steps"] == "800"
    # a cube that comes close once and falls back has not caught up
    assert page.catch_up_values(_curve([0.15, 0.31, 0.25, 0.26]))["caught_up"] == "no step of the longer runs"
    assert page.catch_up_values(pd.DataFrame())["caught_up"] == "not stored"
    table = page.long_curve_table(_curve([0.15, 0.25, 0.31, 0.315])).data
    assert list(table.columns) == ["Variant", "step 800", "step 1,600", "step 2,400", "step 3,200"]
    assert table.iloc[2]["step 800"] == "26.0 (15.0 to 32.0)"


def _result(candidate, task, n, mean, result, cand_mean, base_mean, grid="lra_long"):
    comparison = Comparison(f"{candidate}_{task}", f"{candidate} − softmax, {task} (longer)",
                            Arm(grid, {"activation": candidate, "dataset": task}),
                            Arm(grid, {"activation": "softmax", "dataset": task}), "equivalent")
    return ComparisonResult(comparison, n, 3, 0, "points", True, cand_mean, base_mean, mean, mean - 1.0, mean + 1.0,
                            mean - 0.8, mean + 0.8, 0.5, 0.5, False, 3.0, result=result, margin=2.0)


def test_pair_values_and_the_counts_of_what_more_steps_did(monkeypatch):
    patch_everywhere(monkeypatch, page, "book_chance", lambda tasks=("listops",): {t: 0.15 for t in tasks})
    pairs = [BudgetPair(_result("poly:p=3", "listops", 3, -15.0, "worse", 16.0, 31.0, "lra"),
                        _result("poly:p=3", "listops", 3, -0.5, "equivalent", 31.5, 32.0)),
             BudgetPair(_result("poly:p=3,c=1/14", "listops", 3, -15.0, "worse", 16.0, 31.0, "lra"),
                        _result("poly:p=3,c=1/14", "listops", 3, -14.0, "worse", 17.0, 31.0)),
             BudgetPair(_result("poly:p=3", "retrieval", 3, -6.0, "worse", 51.0, 57.0, "lra"),
                        _result("poly:p=3", "retrieval", 1, math.nan, "inconclusive", 50.0, 58.0))]
    v = page.pair_values(pairs, "poly:p=3", "listops")
    assert v["short_diff"] == "−15.00 [−16.00, −14.00] points" and v["long_diff"] == "−0.50 [−1.50, +0.50] points"
    assert (v["short_candidate"], v["long_candidate"], v["long_softmax"]) == ("16.0%", "31.5%", "32.0%")
    assert v["result"] == "equivalent" and v["change"] == "closes" and v["factor"] == "5" and v["chance"] == "15.0%"
    assert page.pair_values(pairs, "poly:p=3", "retrieval")["long_diff"] == "not stored"
    assert page.budget_counts(pairs) == {"holds": "1", "closes": "1", "narrows": "0", "reverses": "0", "open": "0",
                                         "uninformative": "0", "total": "3"}
