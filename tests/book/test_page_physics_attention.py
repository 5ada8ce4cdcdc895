"""Chapter 06's "Attention over the five pseudo-time tokens": planted uniform maps show as their
row sums, and a row that weights one key more shows its spread."""
import pytest
from support.physics_runs import planted_runs

from polyattn.labels import PINN_LABEL
from polyattn.studies.physics import attention as page


def test_uniform_attention_shows_as_its_row_sums():
    runs = planted_runs()
    rows = page.attention_rows(runs).set_index("variant")
    assert rows.loc["softmax", "row_spread"] == pytest.approx(0.0)
    assert rows.loc["softmax", "sum_min"] == pytest.approx(1.0) and rows.loc["x^3/sqrt(N)", "sum_max"] == pytest.approx(2.5)
    assert PINN_LABEL not in rows.index and rows.loc["softmax", "maps"] == 3 * 3 * 2 * 2
    v = page.attention_values(runs)
    assert v["sums_poly"] == "2.5 to 2.5" and v["row_spread"] == "0"
    # a row that weights one key more shows its spread
    runs.records[0]["final"]["attention"][0][0][0][1] = 0.7
    assert page.attention_rows(runs)["row_spread"].max() == pytest.approx(0.5)
