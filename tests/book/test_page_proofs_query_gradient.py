"""Chapter 02's section on Theorem 4.4 and Corollary 4.5: the closed-form gradient norm against
autograd, and the table of a planted Monte Carlo."""
import math

import pandas as pd
from support.pages import table_rows

from polyattn.studies.proofs import query_gradient as qg


def test_the_closed_form_gradient_norm_matches_autograd():
    assert qg.qgrad_difference(0) < 1e-10


def _thm44_planted(dims=((64, 16), (64, 64))) -> pd.DataFrame:
    rows = []
    for D, d in dims:
        for n in (8, 16, 32):
            for p in (1, 2, 3):
                for scaled in (False, True):
                    mean = (math.sqrt(n) if scaled else n) * p
                    rows.append({"N": n, "D": D, "d": d, "p": p, "scaled": scaled, "mean": mean, "se": 1e-3 * mean,
                                 "ratio_to_bound": 1.0 + 0.1 * (p - 1)})
    return pd.DataFrame(rows)


def test_the_gradient_tables_name_each_cell_by_its_sizes():
    mc = _thm44_planted()
    rows = {r["cell"]: r for r in table_rows(qg.thm44_ratio_table(mc, "smoke", 0))}
    assert rows["d = 16, p = 3"]["N = 8"] == "1.200" and rows["d = 64, p = 1"]["N = 32"] == "1.000"
    both = pd.concat([mc, _thm44_planted(((32, 16),))])
    assert "D = 32, d = 16, p = 1" in {r["cell"] for r in table_rows(qg.thm44_ratio_table(both, "smoke", 0))}
