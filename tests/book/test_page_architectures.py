"""Chapter 10's page module: planted runs of the architectures and detection grids, and planted
register results, come back out as the page's tables, figures and glued values."""
import math
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from polyattn.analysis import architectures as arch  # noqa: E402
from polyattn.book.deliver import styled  # noqa: E402
from polyattn.claims.evaluate import ClaimVerdict, ComparisonResult  # noqa: E402
from polyattn.claims.spec import Arm, Comparison, Finding  # noqa: E402
from polyattn.experiments.architectures import table2  # noqa: E402
from polyattn.pages import architectures as page  # noqa: E402
from polyattn.results import config_dict  # noqa: E402
from polyattn.tasks.base import ACCURACY, TEST_LOSS  # noqa: E402

pytest.importorskip("timm")

NOISE = {0: 0.0, 1: 0.004, 2: -0.004}     # shared by every variant of a seed: cancels in the pairs
#: Words that decide a comparison; the page's own tables are description and carry none of them.
VERDICT_WORDS = ("equivalent", "worse", "better", "inconclusive", "verdict")


def _record(cfg, acc):
    metrics = [{"epoch": 1, "step": 10, "train_loss": 1.0, "train_acc": acc, "test_loss": 1.0, "test_acc": acc,
                "lr": 1e-3, "wall_s": 5.0}]
    return {"schema": 1, "experiment": cfg.experiment, "config": config_dict(cfg), "config_hash": cfg.hash,
            "seed": cfg.seed, "preset": cfg.preset, "status": "ok", "diverged_step": None, "task": "images",
            "seq_lens": cfg.seq_lens, "metrics_spec": [m.as_dict() for m in (ACCURACY, TEST_LOSS)],
            "metrics": metrics, "probes": [], "n_params": 1000,
            "provenance": {"git_commit": "abc", "git_dirty": False, "wall_s": 5.0}}


def _runs(diff=None, softmax=None, base=0.7, seeds=(0, 1, 2)) -> page.Runs:
    """Runs of the smoke grid: each variant at its architecture's softmax (``softmax[arch]`` or
    ``base``) plus ``diff[(arch, variant)]`` and a small per-seed jitter."""
    diff, softmax = diff or {}, softmax or {}
    configs, records = table2("smoke", seeds=list(seeds)), []
    for cfg in configs:
        a, v = arch.architecture_of(cfg), arch.variant_label(cfg)
        jitter = 0.0 if v == arch.SOFTMAX else 0.0005 * (cfg.seed - 1)
        records.append(_record(cfg, softmax.get(a, base) + NOISE[cfg.seed] + diff.get((a, v), 0.0) + jitter))
    return page.Runs("smoke", True, "", configs, records, arch.architecture_final(records))


def _cells(table) -> list[str]:
    frame = table.data
    return [str(c) for c in frame.columns] + [str(v) for v in frame.to_numpy().ravel()]


def test_cells_read_from_grids_name_data_and_architectures_as_readers_do():
    assert page.readable("fashion_mnist, 4 (vit, deit); 2 (swin)") == "Fashion-MNIST, 4 (ViT, DeiT); 2 (Swin)"
    assert page.readable("64 x 64 canvas") == "64 × 64 canvas" and page.readable("x^3/sqrt(N)") == "x³/√N"
    assert page.readable("vitamins") == "vitamins"


def test_the_accuracy_table_has_a_row_per_architecture_and_a_column_per_variant():
    runs = _runs({("swin", arch.FIXED): -0.05, ("deit", arch.OWN): 0.03})
    rows = {r["Architecture"]: r for r in page.accuracy_rows(runs)}
    assert list(rows) == ["ViT", "DeiT", "Swin", "XCiT"]
    assert list(rows["ViT"]) == ["Architecture", "N", "softmax", "x³/√N", "x³/14", "x³/√N, N = tokens"]
    assert rows["ViT"]["softmax"] == "70.0 ± 0.4" and rows["Swin"]["x³/14"].startswith("65.0 ± ")
    assert rows["DeiT"]["x³/√N"].startswith("73.0 ± ")
    assert rows["Swin"]["N"] == 16 and rows["XCiT"]["x³/√N, N = tokens"].endswith("(N = 64)")
    assert rows["ViT"]["x³/√N, N = tokens"] == ""
    table = page.accuracy_table(runs)
    assert "preset smoke" in table.caption and "mean ± sd" in table.caption
    cells = _cells(table)
    assert not any(w in c.lower() for c in cells for w in VERDICT_WORDS)
    assert not any("sqrt" in c or "^" in c for c in cells)


def test_the_readings_table_recovers_a_planted_reading_without_a_verdict():
    runs = _runs({("swin", arch.FIXED): 0.02, ("xcit", arch.TOKENS): -0.01})
    table = page.readings_table(runs)
    frame = table.data.set_index(["Architecture", "Reading"])
    column = "Minus x³/√N, own N (points) [95% CI]"
    assert frame.loc[("Swin", "x³/14"), column].startswith("+2.0 [")
    assert frame.loc[("XCiT", "x³/√N, N = tokens"), column].startswith("−1.0 [")
    assert len(frame) == 5 and set(frame["Seed pairs"]) == {3}
    assert not any(w in c.lower() for c in _cells(table) for w in VERDICT_WORDS)
    # at the book preset the measure's two rows carry its difference, p-values and result
    delivered = SimpleNamespace(verdict=Finding("inconclusive at this power", "The readings.", _measure_numbers()))
    assert "Result" not in page.readings_table(runs, delivered).data.columns   # not at the smoke preset
    runs.preset = "book"
    merged = page.readings_table(runs, delivered).data.set_index(["Architecture", "Reading"])
    assert merged.loc[("Swin", "x³/14"), column] == "+1.7 [−0.3, +3.7]" + page.MARK
    assert merged.loc[("Swin", "x³/14"), "Result"] == "inconclusive" and merged.loc[("ViT", "x³/14"), "Result"] == ""
    assert merged.loc[("XCiT", "x³/√N, N = tokens"), "TOST p"] == "< 0.001"


@pytest.mark.parametrize("deit, direction", [(0.3, "below"), (0.9, "above")])
def test_deits_gap_from_vit_carries_its_direction(deit, direction):
    v = page.deit_values(_runs(softmax={"vit": 0.6, "deit": deit}))
    assert v["direction"] == direction and v["gap"] == f"{abs(deit - 0.6) * 100:.1f}" and v["vit"] == "60.0%"


def test_the_accuracy_figure_has_two_labelled_panels():
    fig = page.accuracy_figure(_runs({("vit", arch.OWN): -0.02}))
    assert len(fig.axes) == 2
    labels = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert labels == ["softmax", "x³/√N", "x³/14", "x³/√N, N = tokens"]
    assert all(t.get_fontsize() >= page.FONT for ax in fig.axes for t in ax.get_xticklabels())
    matplotlib.pyplot.close(fig)


def test_where_the_preset_runs_nothing_the_page_says_so():
    runs = page.Runs("paper", False, "not run under preset paper", table2("book"))
    assert page.accuracy_table(runs).data == "not run under preset paper"
    assert page.readings_table(runs).data == "not run under preset paper"
    assert page.accuracy_figure(runs) is None and page.deit_values(runs)["gap"] == "not run under preset paper"


# --- the register's results, planted ------------------------------------------------------------------


def _result(cid, label, n, mean, cells=None, role="primary", result="inconclusive", planned=None):
    comparison = Comparison(cid, label, Arm("architectures_table2", {"activation": "poly:p=3"}),
                            Arm("architectures_table2", {"activation": "softmax"}), "equivalent", role=role)
    return ComparisonResult(comparison, n, planned if planned is not None else n, 0, "points", True, 50.0, 50.0, mean,
                            mean - 2.0, mean + 2.0, mean - 1.5, mean + 1.5, 0.5, 0.4, False, 3.0, holm_p=0.6,
                            result=result, margin=1.0, cell_estimates=cells)


def _delivered(results, claim_id="table2_architectures"):
    from polyattn.claims import claim

    verdict = ClaimVerdict(claim(claim_id), list(results), "inconclusive at this power", {}, None)
    return SimpleNamespace(verdict=verdict, table=None)


CELLS = {("timm:vit_micro",): (-3.98, -16.66, 8.69, 3), ("timm:deit_micro",): (5.38, -4.87, 15.63, 3),
         ("timm:swin_micro",): (1.0, -5.5, 7.5, 3), ("timm:xcit_micro",): (-0.2, -2.19, 1.79, 3)}


def test_the_table2_table_shows_each_pooled_comparison_above_its_four_cells():
    same_sign = {k: (abs(m), 0.1, 9.0, n) for k, (m, _, _, n) in CELLS.items()}
    delivered = _delivered([_result("cube_sqrt_n", "x³/√N − softmax, pooled over ViT, DeiT, Swin, XCiT", 12, 0.55, CELLS),
                            _result("cube_14", "x³/14 − softmax, pooled over ViT, DeiT, Swin, XCiT", 12, 2.73,
                                    same_sign)])
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


def _check(n, mean, result, outcome, cid="ablated_box_ap", planned=3):
    import dataclasses

    r = _result(cid, "attention ablated (uniform 1/N) − softmax", n, mean, role="check", result=result,
                planned=planned)
    return dataclasses.replace(r, outcome=outcome)


def test_the_positive_control_says_what_the_ablated_arm_shows():
    primary = _result("cube_sqrt_n_box_ap", "x³/√N − softmax, box AP", 3, -0.3)
    claim = "detection_segmentation"
    none = page.control_values(_delivered([primary, _check(0, math.nan, "inconclusive", "open")], claim))
    assert none == {"stored": "0 of 3", "shows": "its runs are not stored yet (0 of 3 planned seed pairs), so whether "
                                                 "the benchmark can see attention is still open"}
    blind = page.control_values(_delivered([primary, _check(3, 0.2, "equivalent", "contradicts")], claim))["shows"]
    assert blind.startswith("on box AP (+0.20 [−1.80, +2.20] points, equivalent) the ablated arm lands within the "
                            "margin of softmax: there the benchmark cannot see attention")
    sees = page.control_values(_delivered([primary, _check(3, -9.0, "worse", "supports")], claim))["shows"]
    assert sees.startswith("on box AP (−9.00") and "does worse than softmax, as it must" in sees
    # several checks, some without enough pairs
    mixed = page.control_values(_delivered([primary, _check(3, 0.5, "uninformative", "uninformative", "ablated_wave"),
                                            _check(2, 1.0, "inconclusive", "open", "ablated_convection"),
                                            _check(1, 1.0, "inconclusive", "open", "ablated_reaction")], claim))
    assert mixed["stored"] == "6 of 9" and "on wave (" in mixed["shows"] and "neither arm learned" in mixed["shows"]
    assert "on convection (" in mixed["shows"] and "cannot yet tell" in mixed["shows"]
    assert "reaction" not in mixed["shows"] and mixed["shows"].endswith("6 of 9 planned seed pairs are stored")
    with pytest.raises(ValueError, match="no positive control"):
        page.control_values(_delivered([primary], claim))


def test_a_registered_comparisons_difference_is_read_by_its_id():
    delivered = _delivered([_result("vit", "x/14 − x³/14, ViT", 3, -1.1), _result("deit", "x/14 − x³/14, DeiT", 3, 0.5)],
                           "linear_vit_deit")
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


def _measure_numbers() -> dict:
    numbers = {"margin (points)": 1.0, "seeds": 3}
    for prefix, diff in (("Swin x^3/14", 1.7), ("XCiT N = tokens", -0.25)):
        numbers.update({f"{prefix}: difference (points)": diff, f"{prefix}: CI low": diff - 2,
                        f"{prefix}: CI high": diff + 2, f"{prefix}: pairs": 3, f"{prefix}: Holm p": 1.0,
                        f"{prefix}: TOST p": 0.0004, f"{prefix}: detectable effect (points)": 15.08,
                        f"{prefix}: result": "inconclusive"})
    return numbers


def test_the_readings_claim_shows_the_measures_two_comparisons():
    delivered = SimpleNamespace(verdict=Finding("inconclusive at this power", "The two readings.", _measure_numbers()))
    rows = page.readings_claim_rows(delivered)
    assert [r["Comparison"].split(":")[0] for r in rows] == ["Swin", "XCiT"]
    assert rows[0]["Difference (points) [95% CI]"] == "+1.7 [−0.3, +3.7]" and rows[0]["TOST p"] == "< 0.001"
    assert rows[1]["Detectable effect (points)"] == "15.1"
    assert page.readings_values(delivered) == {"swin_diff": "+1.7", "swin_ci": "−0.3 to +3.7",
                                               "xcit_diff": "−0.2", "xcit_ci": "−2.2 to +1.8"}
    empty = SimpleNamespace(verdict=Finding("inconclusive at this scale", "No pair.", {"margin (points)": 1.0, "seeds": 3}))
    assert page.readings_claim_rows(empty) == [] and page.readings_values(empty)["swin_diff"] == "no pair stored"


# --- N read from the built models -------------------------------------------------------------------


def test_n_is_read_from_the_models_for_each_architecture():
    v = page.n_values()
    assert (v["vit_n"], v["swin_n"], v["xcit_ch"], v["xcit_tok"]) == (50, 16, 16, 64)
    assert (v["vit_n_paper"], v["swin_n_paper"], v["xcit_ch_paper"], v["xcit_tok_paper"]) == (197, 49, 48, 196)
    assert v["swin_window_paper"] == "7 × 7" and v["swin_root_paper"] == "7" and v["swin_fixed_ratio_paper"] == "0.50"
    assert page.xca_layer() == {"width": 64, "heads": 4, "tokens": 64}
    for table in page.n_tables():
        assert not any(" x " in c for c in _cells(table))
    rows = {r["Architecture"]: r for r in page.n_table().data.to_dict("records")}
    assert list(rows) == ["ViT", "DeiT", "Swin", "XCiT, N = channels", "XCiT, N = tokens"]
    assert (rows["Swin"]["N here"], rows["Swin"]["N, paper's model"], rows["Swin"]["√N/14, paper's model"]) == (16, 49,
                                                                                                          "0.50")
    assert rows["XCiT, N = tokens"]["N, paper's model"] == 196 and "dₕ × dₕ" in rows["XCiT, N = channels"][
        "A row of attention runs over"]


def test_the_xcit_check_values_read_as_people_read_numbers():
    check = {"n_channels": 16, "n_tokens": 64, "factor": 0.7937, "max_abs_diff": 1.49e-8,
             "max_abs_diff_without": 0.0193, "output_scale": 0.135}
    assert page.xcit_check_values(check) == {"factor": "0.794", "diff": "1.5 × 10⁻⁸", "without": "0.019",
                                             "scale": "0.14"}


def test_the_ap_table_shows_each_variant_and_metric():
    from polyattn.experiments.detection import detection_proxy
    from polyattn.metric_specs import DETECTION_METRICS

    configs = detection_proxy("smoke", seeds=[0, 1, 2])
    records = []
    for cfg in configs:
        ap = {"softmax": 0.30, "poly:p=3": 0.28, "poly:p=3,c=1/14": 0.31}[cfg.activation] + 0.01 * cfg.seed
        metrics = [{"epoch": 1, "step": 2, "train_loss": 1.0, "box_ap": ap, "box_ap50": ap, "mask_ap": ap,
                    "mask_ap50": ap, "wall_s": 1.0}]
        records.append({**_record(cfg, 0.0), "task": "detection", "metrics": metrics,
                        "metrics_spec": [m.as_dict() for m in DETECTION_METRICS]})
    from polyattn.analysis.detection import detection_final

    runs = page.DetectionRuns("smoke", True, "", configs, records, detection_final(records))
    table = page.ap_table(runs)
    frame = table.data.set_index("Variant")
    assert list(frame.index) == ["softmax", "x³/√N", "x³/14"]
    assert frame.loc["x³/√N", "box AP"] == "29.0 ± 1.0"
    assert "synthetic Fashion-MNIST scenes, not COCO" in table.caption and "9 of 9 runs" in table.caption
    fig = page.detection_figure(runs)
    assert len(fig.axes) == 3 and [t.get_text() for t in fig.axes[2].get_legend().get_texts()] == [
        "softmax", "x³/√N", "x³/14"]
    matplotlib.pyplot.close(fig)


def test_the_detection_proxy_departs_from_the_paper_presets_mask_rcnn_in_scale():
    v = page.detector_deviation_values()
    assert (v["px_book"], v["px_paper"], v["n_book"], v["n_paper"]) == ("64", "1,024", "256", "4,096")
    assert (v["width_book"], v["depth_book"], v["width_paper"], v["depth_paper"]) == ("64", "4", "384", "12")
    assert v["params_book"].endswith(" million") and float(v["params_paper"].split()[0]) > 10 * float(
        v["params_book"].split()[0])
    assert (v["seeds_book"], v["seeds_paper"]) == ("3", "1") and v["epochs_paper"] == "36"
