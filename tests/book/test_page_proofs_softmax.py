"""Chapter 02's section on Theorem 4.1: planted surveys and findings come back out as its gap
table, its numbers and its Jacobian figure."""
import numpy as np
import pandas as pd
import pytest
from support.pages import table_rows
from support.proofs_pages import check_figure, plant_findings

from polyattn.studies.proofs import softmax as sm


@pytest.fixture
def findings(monkeypatch):
    return plant_findings(monkeypatch)


def test_a_gap_below_float64s_reach_reads_zero_and_a_missing_one_a_dash():
    assert sm.gap_cell(1e-27) == "0"
    assert sm.gap_cell(0.0821) == "0.0821" and sm.gap_cell(float("nan")) == "–"


def test_the_gap_table_keeps_the_smallest_gap_per_n_and_kind():
    survey = pd.DataFrame([
        {"kind": "random", "N": 2, "fro_gap": 0.3}, {"kind": "random", "N": 2, "fro_gap": 0.1},
        {"kind": "peaked", "N": 2, "fro_gap": 2e-6}, {"kind": "one-hot", "N": 2, "fro_gap": 0.0},
        {"kind": "adversarial (norm)", "N": 2, "fro_gap": 7e-28},
        {"kind": "random", "N": 4, "fro_gap": 0.5}, {"kind": "peaked", "N": 4, "fro_gap": 0.01},
        {"kind": "one-hot", "N": 4, "fro_gap": 0.0}, {"kind": "random", "N": 8, "fro_gap": 0.6}])
    rows = table_rows(sm.gap_table(survey, "smoke", every=1))
    assert [r["N"] for r in rows] == [2, 4, 8]
    assert rows[0]["random logits"] == "0.1" and rows[0]["peaked logits"] == "2 × 10⁻⁶"
    assert rows[0]["adversarial ascent"] == "0" and rows[1]["adversarial ascent"] == "–"
    assert [r["N"] for r in table_rows(sm.gap_table(survey, "smoke"))] == [2, 8]


def test_the_jacobian_numbers_add_the_worst_gap_and_the_plain_ascent(findings):
    findings({"thm41_2": {"ascent_restarts": 8, "adversarial_max_ratio": 0.4999999, "adversarial_min_ratio": 0.49,
                          "adversarial_gap_to_half": 1e-7, "random_max_ratio": 0.47, "paper_over_sharp": 4.0,
                          "matrices_above_sharp": 0, "eq42_one_hot_lhs": 1.0, "eq42_one_hot_rhs": 2.0}})
    plain = {"n": 64, "ratio64": 0.4721, "frac_rows_at_max": 0.0, "frac_rows_near_k_uniform": {3: 0.953}}
    out = sm.jacobian_numbers(plain, 2e-5)
    assert out["t41b_worst_gap_to_half"] == "0.01" and out["t41b_plain_k3"] == "95%"
    assert out["t41b_jacrev_difference"] == "2.0 × 10⁻⁵" and out["t41b_paper_over_sharp"] == "4"


def test_the_jacobian_figure_names_its_curves_for_people():
    rows = [{"kind": k, "N": n, "jac_over_sqrt_n": v} for n in (2, 4, 8)
            for k, v in (("random", 0.3), ("peaked", 0.2), ("adversarial (Jacobian)", 0.5), ("two halves", 0.5))]
    plain = {"n": 8, "row_values": np.full(8, 2 / 9)}
    fig = sm.jacobian_figure(pd.DataFrame(rows), plain, "smoke", 0)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "sharp bound 1/2" in labels and "paper's bound 2" in labels and "ascent with restarts" in labels
    check_figure(fig)
