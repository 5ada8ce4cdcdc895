"""Chapter 02's section on critique 7: planted readings of the power come back out as each
reading's exponent, their ratio and the figure."""
import pandas as pd
from support.pages import table_rows
from support.proofs_pages import check_figure

from polyattn.measures import proofs_measurements
from polyattn.studies.proofs import matrix_powers as mp


def _readings_planted() -> pd.DataFrame:
    """Elementwise norms grow like N^(1/2); matrix ones like N^(p - 1/2) with shared X, N^(p/2) without."""
    rows = []
    for setup, shared in (("shared X", True), ("independent A, B", False)):
        for n in (16, 32, 64, 128):
            for p in (1, 2, 3):
                for reading in ("elementwise", "matrix"):
                    e = 0.5 if reading == "elementwise" or p == 1 else (p - 0.5 if shared else p / 2)
                    rows.append({"setup": setup, "reading": reading, "p": p, "N": n, "D": 64, "d": 16,
                                 "mean": n ** e, "se": 1e-3 * n ** e, "ci_lo": 0, "ci_hi": 0, "reps": 8})
    return pd.DataFrame(rows)


def test_the_readings_table_gives_each_readings_exponent_and_their_ratio():
    survey = _readings_planted()
    rows = {r["p"]: r for r in table_rows(mp.readings_table(survey, proofs_measurements.matrix_power_exponents(survey)))}
    assert rows[3]["elementwise"] == "0.50 ± 0.00" and rows[3]["matrix"] == "2.50 ± 0.00"
    assert rows[3]["matrix, independent A, B"] == "1.50 ± 0.00"
    assert rows[3]["matrix, last slope (prediction)"] == "2.50 (2.5)"
    assert rows[3]["matrix ÷ elementwise"] == f"{128 ** 2:,}" and rows[1]["matrix ÷ elementwise"] == "1"


def test_the_readings_figure_draws_p_one_once():
    fig = mp.readings_figure(_readings_planted(), "smoke", 0)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels.count("p = 1, both readings") == 1 and len(labels) == 5
    check_figure(fig)
