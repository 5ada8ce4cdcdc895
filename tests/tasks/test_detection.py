"""Mask R-CNN on a polyattn ViT backbone: the model, the detection task, COCO input and the grid."""
from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
import torch
from support.scene_fixtures import blob_items, fake_fashion_mnist

from polyattn import probes
from polyattn.config import TrainConfig
from polyattn.data import DatasetMissing
from polyattn.data.scenes import SceneSpec, compose_scenes
from polyattn.experiments import GRIDS
from polyattn.experiments.detection import DETECTION_VARIANTS, detection_proxy, variant_label
from polyattn.models.detector import ViTBackbone, build_detector
from polyattn.tasks import get_task
from polyattn.tasks.detection import METRIC_KEYS, SceneData, options


def small_detector(activation="softmax", **kw):
    torch.manual_seed(0)
    return build_detector("micro", num_classes=11, image_size=32, patch_size=4, activation=activation, **kw)


def scene_batch(n=2, canvas=32):
    items, classes = blob_items(20)
    spec = SceneSpec(canvas=canvas, max_items=2, min_side=12, max_side=16, min_area=8)
    scenes = compose_scenes(items, classes, n, spec, seed=1)
    return scenes.images.float() / 255, SceneData.targets(scenes, range(n)), scenes


def test_backbone_levels_strides_and_token_count():
    bb = ViTBackbone(image_size=32, patch_size=4, dim=16, depth=1, heads=2, pyramid=(2.0, 1.0, 0.5), out_channels=8)
    out = bb(torch.zeros(2, 1, 32, 32))
    assert list(out) == ["0", "1", "2"] and bb.strides == (2, 4, 8) and bb.seq_len == 64
    assert [tuple(v.shape) for v in out.values()] == [(2, 8, 16, 16), (2, 8, 8, 8), (2, 8, 4, 4)]
    with pytest.raises(ValueError, match="inputs up to 32x32"):
        bb(torch.zeros(1, 1, 64, 32))
    with pytest.raises(ValueError, match="finest to coarsest"):
        ViTBackbone(image_size=32, pyramid=(0.5, 1.0))
    with pytest.raises(ValueError, match="powers of 2"):
        ViTBackbone(image_size=32, pyramid=(3.0,))
    with pytest.raises(ValueError, match="empty"):
        ViTBackbone(image_size=32, patch_size=8, pyramid=(1.0, 0.125))


def test_smaller_inputs_are_padded_to_the_fixed_token_grid():
    bb = ViTBackbone(image_size=32, patch_size=4, dim=16, depth=1, heads=2, out_channels=8).eval()
    small = torch.rand(1, 1, 24, 32)
    padded = torch.zeros(1, 1, 32, 32)
    padded[..., :24, :] = small
    assert torch.allclose(bb(small)["0"], bb(padded)["0"])


def test_activation_is_the_only_difference_and_every_block_is_a_probe_point():
    soft, poly = small_detector("softmax"), small_detector("poly:p=3,c=1/14")
    a, b = soft.state_dict(), poly.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert [m.activation.spec for m in probes.find_attends(poly)] == ["poly:p=3,c=1/14"] * 4
    assert soft.seq_len == 64
    images, targets, _ = scene_batch()
    poly.train()
    with probes.Recorder(poly, metrics=("attn_fro",)) as rec:
        sum(poly(images, targets).values()).backward()
    rows = rec.collect(0)
    assert {r["layer"] for r in rows} == {0, 1, 2, 3} and {r["head"] for r in rows} == {0, 1, 2, 3}
    assert all(math.isfinite(r["value"]) for r in rows)


def test_training_losses_and_inference_outputs():
    model = small_detector("poly:p=3")
    images, targets, _ = scene_batch()
    losses = model(images, targets)
    assert set(losses) == {"loss_classifier", "loss_box_reg", "loss_mask", "loss_objectness", "loss_rpn_box_reg"}
    assert all(torch.isfinite(v) for v in losses.values())
    model.eval()
    with torch.no_grad():
        out = model(images)
    assert len(out) == 2 and out[0]["masks"].shape[1:] == (1, 32, 32) and len(out[0]["boxes"]) <= 100
    decay, keep = model.decay_groups()
    names = {id(p): n for n, p in model.named_parameters()}
    assert "backbone.pos_embed" in {names[id(p)] for p in keep}
    assert len(decay) + len(keep) == len(list(model.parameters()))


def test_build_errors():
    with pytest.raises(ValueError, match="unknown backbone size"):
        build_detector("huge")
    with pytest.raises(ValueError, match="unknown detector heads"):
        build_detector(heads="heavy")
    with pytest.raises(ValueError, match="num_classes counts the background"):
        build_detector(num_classes=1)


def config(**kw):
    base = dict(experiment="test_detection", task="detection", dataset="scenes", image_size=32, patch_size=4,
                train_subset=16, test_subset=8, epochs=1, batch_size=8, warmup_epochs=0.5, threads=1,
                options=dict(scenes=dict(max_items=2, min_side=12, max_side=16, min_area=8), eval_batch=8))
    return TrainConfig(**{**base, **kw})


@pytest.mark.parametrize("kw,match", [
    (dict(options=dict(anchors=3)), "unknown detection option"),
    (dict(dataset="fashion_mnist"), "dataset 'scenes'"),
    (dict(patch_size=5), "not divisible"),
    (dict(train_subset=None), "needs train_subset and test_subset"),
    (dict(options=dict(scenes=dict(canvas=64))), "without 'canvas'"),
    (dict(options=dict(scenes=dict(max_side=40))), "exceeds the canvas"),
    (dict(options=dict(heads="heavy")), "'heads' must be one of"),
    (dict(options=dict(eval_batch=0)), "'eval_batch' must be a positive integer"),
])
def test_task_options_are_checked(kw, match):
    with pytest.raises(ValueError, match=match):
        options(config(**kw))


def test_evaluate_scores_perfect_predictions_as_ap_one():
    task = get_task("detection")
    _, targets, scenes = scene_batch(6)

    class Oracle(torch.nn.Module):
        """Returns the ground truth of the scenes it is shown, in order."""

        def __init__(self):
            super().__init__()
            self.at = 0

        def forward(self, images):
            out = []
            for _ in range(len(images)):
                t = targets[self.at]
                self.at += 1
                out.append({"boxes": t["boxes"], "labels": t["labels"], "scores": torch.ones(len(t["labels"])),
                            "masks": t["masks"][:, None].float()})
            return out

    data = SceneData(scenes, scenes, 0.1, 0.2)
    result = task.evaluate(Oracle(), config(test_subset=6), data, "cpu")
    assert set(result) == set(METRIC_KEYS) and all(v == pytest.approx(1.0) for v in result.values())


def test_missing_metrics_package_names_the_install_command(monkeypatch):
    from polyattn.tasks.detection import mean_average_precision

    monkeypatch.setitem(sys.modules, "torchmetrics.detection", None)
    with pytest.raises(ImportError, match="pip install torchmetrics pycocotools"):
        mean_average_precision()


@pytest.fixture
def fake_data(tmp_path, monkeypatch):
    src, _, _ = fake_fashion_mnist(tmp_path)
    monkeypatch.setenv("POLYATTN_DATA", str(tmp_path / "root"))
    monkeypatch.setenv("POLYATTN_FASHION_MNIST_SOURCE", str(src))
    monkeypatch.setenv("POLYATTN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLYATTN_RESULTS", str(tmp_path / "results"))
    return tmp_path


def test_the_smoke_grid_trains_through_fit_and_repeats_itself(fake_data):
    from polyattn.runs import load_or_run
    from polyattn.train import fit

    cfg = detection_proxy("smoke", seeds=[0])[1]
    assert cfg.activation == "poly:p=3" and cfg.seq_len == 64
    rec = load_or_run(cfg, progress=False)
    assert rec["status"] == "ok" and rec["task"] == "detection" and rec["seq_lens"] == {"seq_len": 64}
    assert [m["name"] for m in rec["metrics_spec"]] == ["box_ap", "box_ap50", "mask_ap", "mask_ap50"]
    last = rec["metrics"][-1]
    assert all(0.0 <= last[k] <= 1.0 for k in METRIC_KEYS)
    assert {"train_loss", "train_loss_mask", "train_loss_objectness"} <= set(last)
    assert math.isclose(last["train_loss"], sum(last[f"train_{k}"] for k in
                        ("loss_classifier", "loss_box_reg", "loss_mask", "loss_objectness", "loss_rpn_box_reg")),
                        rel_tol=1e-6)
    again = fit(cfg, progress=False, resume=False)
    assert [m["train_loss"] for m in again["metrics"]] == [m["train_loss"] for m in rec["metrics"]]
    assert all(again["metrics"][-1][k] == last[k] for k in METRIC_KEYS)


def test_grids_per_preset():
    book = GRIDS["detection_proxy"]("book")
    assert len(book) == 9 and len({c.hash for c in book}) == 3 and len({(c.hash, c.seed) for c in book}) == 9
    assert [variant_label(c) for c in book[:3]] == [label for label, _ in DETECTION_VARIANTS]
    assert all(c.preset == "book" and c.threads == 1 and c.device == "cpu" and c.task == "detection" for c in book)
    assert {c.seed for c in book} == {0, 1, 2} and {c.seq_len for c in book} == {256}
    paper = GRIDS["detection_proxy"]("paper")
    assert {c.dataset for c in paper} == {"coco"} and {c.device for c in paper} == {"cuda"}
    assert paper[0].seq_len == 4096 and paper[0].model == "small"
    with pytest.raises(ValueError, match="unknown preset"):
        detection_proxy("huge")


def test_paper_preset_without_coco_says_where_to_put_it(tmp_path):
    cfg = detection_proxy("paper", seeds=[0])[0]
    task = get_task("detection")
    with pytest.raises(DatasetMissing, match="data_root"):
        task.load(cfg.replace(device="cpu"), 1, 0)
    with pytest.raises(DatasetMissing, match="instances_train2017.json"):
        task.load(cfg.replace(device="cpu", data_root=str(tmp_path)), 1, 0)


def tiny_coco(root):
    """A COCO copy of one 20 x 30 image per split: a car (a polygon) and a crowd region."""
    from PIL import Image

    for split in ("train", "val"):
        (root / f"{split}2017").mkdir()
        Image.fromarray(np.full((20, 30, 3), 128, dtype=np.uint8)).save(root / f"{split}2017" / "a.png")
    (root / "annotations").mkdir()
    ann = {"images": [{"id": 1, "file_name": "a.png", "height": 20, "width": 30}],
           "categories": [{"id": 3, "name": "car"}, {"id": 7, "name": "train"}],
           "annotations": [
               {"id": 1, "image_id": 1, "category_id": 3, "iscrowd": 0, "area": 40.0, "bbox": [2, 4, 10, 4],
                "segmentation": [[2, 4, 12, 4, 12, 8, 2, 8]]},
               {"id": 2, "image_id": 1, "category_id": 7, "iscrowd": 1, "area": 10.0, "bbox": [20, 10, 5, 2],
                "segmentation": [[20, 10, 25, 10, 25, 12, 20, 12]]}]}
    for split in ("train", "val"):
        (root / "annotations" / f"instances_{split}2017.json").write_text(json.dumps(ann))
    return root


def test_coco_instances_from_a_tiny_copy(tmp_path):
    from polyattn.data.coco import CocoInstances

    ds = CocoInstances(tiny_coco(tmp_path), "train")
    image, target = ds[0]
    assert len(ds) == 1 and image.shape == (3, 20, 30) and image.max() <= 1.0
    assert target["labels"].tolist() == [3]                           # the crowd region is left out
    assert target["boxes"].tolist() == [[2.0, 4.0, 12.0, 8.0]]
    m = target["masks"][0]
    assert m.shape == (20, 30) and m[5, 5] == 1 and m[15, 22] == 0


def test_the_paper_settings_train_on_a_tiny_coco_copy(tmp_path):
    from polyattn.train import fit

    paper = detection_proxy("paper", seeds=[0])[0]
    cfg = paper.replace(data_root=str(tiny_coco(tmp_path)), device="cpu", image_size=64, patch_size=16, model="micro",
                        batch_size=1, epochs=1, warmup_epochs=0.0, num_workers=0, threads=1,
                        options={**paper.options, "out_channels": 32})
    rec = fit(cfg, progress=False, resume=False)
    assert rec["status"] == "ok" and rec["seq_lens"] == {"seq_len": 16}
    assert all(0.0 <= rec["metrics"][-1][k] <= 1.0 for k in METRIC_KEYS)
