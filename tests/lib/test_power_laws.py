"""Power-law fits as readers see them."""
import pandas as pd

from polyattn.theory import exponent_rows


def test_exponent_rows_put_the_interval_in_one_cell_and_name_the_columns_for_readers():
    fits = pd.DataFrame([{"p": 3, "scaled": True, "exponent": 0.5049, "se": 0.01, "ci_lo": -0.01, "ci_hi": 0.52,
                          "prefactor": 1.0, "chi2_red": float("nan"), "n_points": 7, "expected": 0.5}])
    (row,) = exponent_rows(fits)
    assert row == {"p": 3, "scaled by 1/√N": "yes", "exponent [95% CI]": "0.505 [−0.010, 0.520]",
                   "expected": "0.5", "χ²/dof": "n/a", "points": 7}
