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


def test_the_accuracy_table_recovers_planted_differences_without_a_verdict():
    runs = _runs({("swin", arch.FIXED): -0.05, ("deit", arch.OWN): 0.03})
    rows = {(r["Architecture"], r["Variant"]): r for r in page.accuracy_rows(runs)}
    assert rows[("Swin", "x³/14")]["Minus softmax (points) [95% CI]"].startswith("−5.0 [")
    assert rows[("DeiT", "x³/√N")]["Minus softmax (points) [95% CI]"].startswith("+3.0 [")
    assert rows[("ViT", "softmax")]["Minus softmax (points) [95% CI]"] == "reference"
    assert rows[("XCiT", "x³/√N, N = tokens")]["N"] == 64 and rows[("Swin", "softmax")]["N"] == 16
    assert rows[("ViT", "softmax")]["Test accuracy (%)"] == "70.0 ± 0.4"
    table = page.accuracy_table(runs)
    assert "description, not a test" in table.caption and "preset smoke" in table.caption
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


def test_the_positive_control_says_whether_it_has_runs():
    primary = _result("cube_sqrt_n_box_ap", "x³/√N − softmax, box AP", 3, -0.3)
    none = _delivered([primary, _result("ablated_box_ap", "ablated − softmax, box AP", 0, math.nan, role="check",
                                        planned=3)], "detection_segmentation")
    assert page.control_values(none)["state"] == "it has no runs yet (0 of 3 planned)"
    some = _delivered([primary, _result("ablated_box_ap", "ablated", 2, -9.0, role="check", planned=3)],
                      "detection_segmentation")
    assert page.control_values(some)["state"] == "2 of its 3 planned runs are stored"
    done = _delivered([primary, _result("ablated_box_ap", "ablated", 3, -9.0, role="check")], "detection_segmentation")
    assert page.control_values(done)["state"].startswith("all 3 of its planned runs are stored")


def test_the_detection_claim_table_leaves_out_comparisons_without_runs():
    rows = [{"Comparison": "x³/√N − softmax, box AP", "Pairs": "3 of 3", "Result": "equivalent"},
            {"Comparison": "ablated − softmax, box AP", "Pairs": "0 of 3", "Result": "inconclusive"}]
    delivered = SimpleNamespace(table=styled(rows, "the claim"))
    table = page.detection_claim_table(delivered)
    assert list(table.data["Comparison"]) == ["x³/√N − softmax, box AP"] and table.caption == "the claim"


def test_the_readings_claim_shows_the_measures_two_comparisons():
    numbers = {"margin (points)": 1.0, "seeds": 3}
    for prefix, diff in (("Swin x^3/14", 1.7), ("XCiT N = tokens", -0.25)):
        numbers.update({f"{prefix}: difference (points)": diff, f"{prefix}: CI low": diff - 2,
                        f"{prefix}: CI high": diff + 2, f"{prefix}: pairs": 3, f"{prefix}: Holm p": 1.0,
                        f"{prefix}: TOST p": 0.0004, f"{prefix}: detectable effect (points)": 15.08,
                        f"{prefix}: result": "inconclusive"})
    delivered = SimpleNamespace(verdict=Finding("inconclusive at this power", "The two readings.", numbers))
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


def test_the_xcit_check_values_read_as_people_read_numbers():
    check = {"n_channels": 16, "n_tokens": 64, "factor": 0.7937, "max_abs_diff": 1.49e-8,
             "max_abs_diff_without": 0.0193, "output_scale": 0.135}
    assert page.xcit_check_values(check) == {"factor": "0.794", "diff": "1.5 × 10⁻⁸", "without": "0.019",
                                             "scale": "0.14"}
    table = page.xcit_check_table(check).data
    assert list(table[""])[:3] == ["N = channels", "N = tokens", "temperature factor"]
    assert "e-" not in " ".join(map(str, table["value"]))


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
    assert frame.loc["x³/√N", "box AP"] == "29.0 ± 1.0 (median 29.0)"
    assert "synthetic Fashion-MNIST scenes, not COCO" in table.caption and "9 of 9 runs" in table.caption
    fig = page.detection_figure(runs)
    assert len(fig.axes) == 3 and [t.get_text() for t in fig.axes[2].get_legend().get_texts()] == [
        "softmax", "x³/√N", "x³/14"]
    matplotlib.pyplot.close(fig)
