"""Chapter 10's "Pooled over the architectures": planted register results come back out as each
pooled comparison above its four architectures' cells."""
from support.arch_runs import delivered_claim, planted_result
from support.ci import require_module

from polyattn.studies.architectures import table2 as page

require_module("timm", "pip install timm==1.0.29, as in requirements.txt")


CELLS = {("timm:vit_micro",): (-3.98, -16.66, 8.69, 3), ("timm:deit_micro",): (5.38, -4.87, 15.63, 3),
         ("timm:swin_micro",): (1.0, -5.5, 7.5, 3), ("timm:xcit_micro",): (-0.2, -2.19, 1.79, 3)}


def test_the_table2_table_shows_each_pooled_comparison_above_its_four_cells():
    same_sign = {k: (abs(m), 0.1, 9.0, n) for k, (m, _, _, n) in CELLS.items()}
    delivered = delivered_claim([
        planted_result("cube_sqrt_n", "x³/√N − softmax, pooled over ViT, DeiT, Swin, XCiT", 12, 0.55, CELLS),
        planted_result("cube_14", "x³/14 − softmax, pooled over ViT, DeiT, Swin, XCiT", 12, 2.73, same_sign)])
    rows = page.table2_rows(delivered)
    assert [r["Over"] for r in rows[:5]] == ["pooled (the claim)", "ViT", "DeiT", "Swin", "XCiT"]
    assert rows[0]["Comparison"] == "x³/√N − softmax" and rows[0]["Result"] == "inconclusive"
    assert rows[1]["Difference (points) [95% CI]"] == "−3.98 [−16.66, +8.69]" and rows[1]["Result"] == ""
    assert rows[0]["Difference (points) [95% CI]"] == "+0.55 [−1.45, +2.55]" and rows[0]["Pairs"] == "12 of 12"
    v = page.table2_values(delivered)
    assert v["sqrt_n_low"] == "−3.98 (ViT)" and v["sqrt_n_high"] == "+5.38 (DeiT)"
    assert v["sqrt_n_signs"] == "differ in sign" and v["fixed_signs"] == "share a sign"
    assert v["sqrt_n_pooled"] == "+0.55 [−1.45, +2.55]"
    assert "description, not a test" in page.table2_table(delivered).caption
