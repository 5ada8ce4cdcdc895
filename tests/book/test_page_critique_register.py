"""Chapter 09's cells and tables of the claim register's comparisons, on planted delivered claims:
one comparison in a cell, a claim with and without clipping, and the alternatives to the factor."""
from types import SimpleNamespace

import pytest
from support.pages import table_rows

from polyattn.studies.critiques import register as page


def _delivered(claim_id, labels=None, **results):
    """A delivered claim with one comparison per keyword: ``id=(pairs, mean, result)``, interval
    mean ± 1; ``labels``: comparison id -> the register's label."""
    labels = labels or {}
    comparisons = [SimpleNamespace(comparison=SimpleNamespace(id=cid, label=labels.get(cid, cid)), n=n, unit="points",
                                   mean=m, ci_low=m - 1, ci_high=m + 1, margin=1.0, result=res, qualifier="")
                   for cid, (n, m, res) in results.items()]
    claim = SimpleNamespace(id=claim_id, margin=1.0, alpha=0.05, scale="micro ViT, planted preset")
    return SimpleNamespace(verdict=SimpleNamespace(claim=claim, comparisons=comparisons), table=None)


def test_a_registered_comparison_is_one_cell_with_its_result_and_pairs():
    d = _delivered("qk_norm", cube_qknorm_vs_scaled=(5, -0.51, "inconclusive"), other=(1, 0.2, "inconclusive"))
    assert page.comparison_cell(d, "cube_qknorm_vs_scaled") == "−0.51 [−1.51, +0.49] points, inconclusive (5 pairs)"
    assert page.comparison_cell(d, "cube_qknorm_vs_scaled", unit=False, pairs=False) == "−0.51 [−1.51, +0.49], inconclusive"
    assert page.comparison_cell(d, "other") == "1 pair stored"
    with pytest.raises(ValueError, match="no comparison 'absent'"):
        page.comparison_cell(d, "absent")


def test_the_alternatives_table_reads_every_cell_from_the_delivered_claims():
    delivered = {
        "qk_controls_unclipped": _delivered("qk_controls_unclipped", **{"qk_decay_0.5": (3, -0.8, "inconclusive"),
                                                                         "qk_decay_5": (3, -2.4, "inconclusive"),
                                                                         "qk_init": (3, -1.6, "inconclusive")}),
        "weight_decay_unclipped": _delivered("weight_decay_unclipped", **{"cube_decay_0.5": (3, 0.7, "inconclusive")}),
        "qk_norm": _delivered("qk_norm", cube_qknorm_vs_scaled=(5, -0.5, "inconclusive")),
        "alternatives_vs_unscaled": _delivered("alternatives_vs_unscaled", **{
            "qk_decay_0.5": (3, 2.0, "inconclusive"), "qk_decay_5": (3, 0.4, "inconclusive"),
            "qk_init": (3, 1.2, "inconclusive"), "decay_0.5": (3, 3.5, "better"), "qk_norm": (5, 1.3, "inconclusive"),
            "clipping": (5, -0.1, "inconclusive")}),
    }
    table = page.alternatives_table(delivered)
    rows = table_rows(table)
    assert len(rows) == len(page.ALTERNATIVES)
    assert rows[2]["alternative"] == "Q/K init ×0.72"
    assert rows[3]["against the unscaled x³"] == "+3.50 [+2.50, +4.50], better"
    assert rows[-1]["against x³/√N"] == "the clipping claim"
    assert [r["pairs"] for r in rows] == ["3", "3", "3", "3", "5", "5"]
    assert "points [95% CI]" in table.caption and 'width: 100%' in table.to_html()


def test_a_claim_with_and_without_clipping_is_laid_out_one_column_per_reading():
    labels = {"a_clipped": "x³ with Q/K decay 0.5 − x³/√N, clipped", "a_unclipped": "x³ with Q/K decay 0.5 − x³/√N, unclipped",
              "b_clipped": "x³ − x³/√N (no control), clipped", "b_unclipped": "x³ − x³/√N (no control), unclipped"}
    d = _delivered("qk_alternatives", labels=labels, a_clipped=(3, -0.4, "inconclusive"),
                   a_unclipped=(3, -0.8, "inconclusive"), b_clipped=(3, -0.5, "inconclusive"),
                   b_unclipped=(3, -2.8, "worse"))
    layout = page.by_clipping(d)
    assert layout == {"x³ with Q/K decay 0.5 − x³/√N": {"clipped at norm 1": "a_clipped", "without clipping": "a_unclipped"},
                      "x³ − x³/√N (no control)": {"clipped at norm 1": "b_clipped", "without clipping": "b_unclipped"}}
    table = page.register_table(d, layout)
    rows = table_rows(table)
    assert rows[1] == {"comparison": "x³ − x³/√N (no control)", "clipped at norm 1": "−0.50 [−1.50, +0.50], inconclusive",
                       "without clipping": "−2.80 [−3.80, −1.80], worse"}
    assert "3 seed pairs each" in table.caption and "margin ±1" in table.caption and "planted preset" in table.caption
    with pytest.raises(ValueError, match="names no clipping"):
        page.by_clipping(_delivered("x", other=(3, 0.1, "inconclusive")))


def test_a_registered_claim_is_one_row_per_comparison_with_the_pairs_in_the_caption_when_they_differ():
    d = _delivered("powers_trained", labels={"p1": "x/√N − x³/√N", "p7": "x⁷/√N − x³/√N"},
                   p1=(3, 0.7, "inconclusive"), p7=(2, -53.7, "did not learn"))
    table = page.register_table(d)
    assert table_rows(table) == [
        {"comparison": "x/√N − x³/√N", "difference [95% CI], result": "+0.70 [−0.30, +1.70], inconclusive"},
        {"comparison": "x⁷/√N − x³/√N", "difference [95% CI], result": "−53.70 [−54.70, −52.70], did not learn"}]
    assert "2 or 3 seed pairs" in table.caption
