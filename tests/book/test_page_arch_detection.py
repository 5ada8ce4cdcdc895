"""Chapter 10's "Detection and instance segmentation": planted runs of the detection grid come
back out as the AP table and the curves, and the proxy's scale against the paper preset's."""
import matplotlib

matplotlib.use("Agg")

from support.arch_runs import arch_record  # noqa: E402
from support.ci import require_module  # noqa: E402

from polyattn.studies.architectures import detection as page

require_module("timm", "pip install timm==1.0.29, as in requirements.txt")


def test_the_ap_table_shows_each_variant_and_metric():
    from polyattn.experiments.detection import detection_proxy
    from polyattn.metric_specs import DETECTION_METRICS

    configs = detection_proxy("smoke", seeds=[0, 1, 2])
    records = []
    for cfg in configs:
        ap = {"softmax": 0.30, "poly:p=3": 0.28, "poly:p=3,c=1/14": 0.31}[cfg.activation] + 0.01 * cfg.seed
        metrics = [{"epoch": 1, "step": 2, "train_loss": 1.0, "box_ap": ap, "box_ap50": ap, "mask_ap": ap,
                    "mask_ap50": ap, "wall_s": 1.0}]
        records.append({**arch_record(cfg, 0.0), "task": "detection", "metrics": metrics,
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
