"""Chapter 10's shared page module: the names a reader reads, what each section shows without
runs, and a delivered claim's table, comparisons and positive control."""
import math
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from support.arch_runs import delivered_claim, planted_result  # noqa: E402
from support.ci import require_module  # noqa: E402

from polyattn.book.deliver import styled  # noqa: E402
from polyattn.experiments.architectures import table2  # noqa: E402
from polyattn.studies.architectures import accuracy as arch_accuracy
from polyattn.studies.architectures import page
from polyattn.studies.architectures import readings as arch_readings

require_module("timm", "pip install timm==1.0.29, as in requirements.txt")


def test_cells_read_from_grids_name_data_and_architectures_as_readers_do():
    assert page.readable("fashion_mnist, 4 (vit, deit); 2 (swin)") == "Fashion-MNIST, 4 (ViT, DeiT); 2 (Swin)"
    assert page.readable("64 x 64 canvas") == "64 × 64 canvas" and page.readable("x^3/sqrt(N)") == "x³/√N"
    assert page.readable("vitamins") == "vitamins"


def test_where_the_preset_runs_nothing_the_page_says_so():
    runs = page.Runs("paper", False, "not run under preset paper", table2("book"))
    assert arch_accuracy.accuracy_table(runs).data == "not run under preset paper"
    assert arch_readings.readings_table(runs).data == "not run under preset paper"
    assert arch_accuracy.accuracy_figure(runs) is None and arch_accuracy.deit_values(runs)["gap"] == "not run under preset paper"


def _check(n, mean, result, outcome, cid="ablated_box_ap", planned=3):
    import dataclasses

    r = planted_result(cid, "attention ablated (uniform 1/N) − softmax", n, mean, role="check", result=result,
                planned=planned)
    return dataclasses.replace(r, outcome=outcome)


def test_the_positive_control_says_what_the_ablated_arm_shows():
    primary = planted_result("cube_sqrt_n_box_ap", "x³/√N − softmax, box AP", 3, -0.3)
    claim = "detection_segmentation"
    none = page.control_values(delivered_claim([primary, _check(0, math.nan, "inconclusive", "open")], claim))
    assert none == {"stored": "0 of 3", "shows": "its runs are not stored yet (0 of 3 planned seed pairs), so whether "
                                                 "the benchmark can see attention is still open"}
    blind = page.control_values(delivered_claim([primary, _check(3, 0.2, "equivalent", "contradicts")], claim))["shows"]
    assert blind.startswith("on box AP (+0.20 [−1.80, +2.20] points, equivalent) the ablated arm lands within the "
                            "margin of softmax: there the benchmark cannot see attention")
    sees = page.control_values(delivered_claim([primary, _check(3, -9.0, "worse", "supports")], claim))["shows"]
    assert sees.startswith("on box AP (−9.00") and "does worse than softmax, as it must" in sees
    # several checks, some without enough pairs
    mixed = page.control_values(delivered_claim([primary, _check(3, 0.5, "uninformative", "uninformative", "ablated_wave"),
                                                 _check(2, 1.0, "inconclusive", "open", "ablated_convection"),
                                                 _check(1, 1.0, "inconclusive", "open", "ablated_reaction")], claim))
    assert mixed["stored"] == "6 of 9" and "on wave (" in mixed["shows"] and "neither arm learned" in mixed["shows"]
    assert "on convection (" in mixed["shows"] and "cannot yet tell" in mixed["shows"]
    assert "reaction" not in mixed["shows"] and mixed["shows"].endswith("6 of 9 planned seed pairs are stored")
    with pytest.raises(ValueError, match="no positive control"):
        page.control_values(delivered_claim([primary], claim))


def test_a_registered_comparisons_difference_is_read_by_its_id():
    delivered = delivered_claim([planted_result("vit", "x/14 − x³/14, ViT", 3, -1.1),
                                 planted_result("deit", "x/14 − x³/14, DeiT", 3, 0.5)], "linear_vit_deit")
    assert page.key_difference(delivered, "deit") == "+0.50 [−1.50, +2.50] points"
    with pytest.raises(ValueError, match="no comparison"):
        page.key_difference(delivered, "swin")


def test_the_claim_table_leaves_out_comparisons_without_runs():
    rows = [{"Comparison": "x³/√N − softmax, box AP", "Pairs": "3 of 3", "Result": "equivalent"},
            {"Comparison": "ablated − softmax, box AP", "Pairs": "0 of 3", "Result": "inconclusive"}]
    delivered = SimpleNamespace(table=styled(rows, "the claim"))
    table = page.claim_table(delivered)
    assert list(table.data["Comparison"]) == ["x³/√N − softmax, box AP"] and table.caption == "the claim"
    # a unit all the differences share moves into the column's name
    rows = [{"Comparison": "a", "Pairs": "3 of 3", "Difference [95% CI]": "−0.34 [−1.41, +0.73] points"},
            {"Comparison": "b", "Pairs": "3 of 3", "Difference [95% CI]": "+0.10 [−0.27, +0.47] points"}]
    table = page.claim_table(SimpleNamespace(table=styled(rows, "c"))).data
    assert list(table["Difference (points) [95% CI]"]) == ["−0.34 [−1.41, +0.73]", "+0.10 [−0.27, +0.47]"]
    rows[1]["Difference [95% CI]"] = "+0.10 [−0.27, +0.47] (log10)"
    assert "Difference [95% CI]" in page.claim_table(SimpleNamespace(table=styled(rows, "c"))).data.columns
