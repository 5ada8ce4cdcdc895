"""Object detection and instance segmentation with Mask R-CNN on a polyattn ViT backbone.

Data (``config.dataset``):

* ``"scenes"``: the synthetic scenes of :mod:`polyattn.data.scenes` (Fashion-MNIST items on a
  ``image_size`` x ``image_size`` canvas); ``train_subset`` training scenes from Fashion-MNIST's
  training split and ``test_subset`` test scenes from its test split, generated from
  ``options["data_seed"]`` (the same for every run seed; the run seed sets the initialisation and
  the batch order); 10 classes plus the background;
* ``"coco"``: COCO 2017 from ``config.data_root`` (:mod:`polyattn.data.coco`; train2017 to train,
  val2017 to evaluate; ``train_subset``/``test_subset`` keep the first images when set), read
  through DataLoaders sharded across ranks; 90 category ids plus the background.

Model: :func:`polyattn.models.detector.build_detector` (``config.model`` names the backbone's
ViT size, ``config.patch_size`` its patch; the theory's N is the backbone's token count
``(image_size / patch_size)^2``, declared as ``seq_len``).

Loss: the sum of Mask R-CNN's five training losses (RPN objectness and box regression, RoI
classification and box regression, mask); each is also logged (``train_loss_classifier``, ...).

Metrics: the COCO metrics of boxes and masks on the test scenes (or val2017): AP averaged over
IoU 0.5:0.95 and AP at IoU 0.5, at most 100 detections per image, computed by torchmetrics'
``MeanAveragePrecision`` with the pycocotools backend; stored as fractions, shown in per cent.

Options (``config.options``):

    scenes              SceneSpec fields except the canvas (the canvas is ``image_size``)
    data_seed           seed of the generated scenes (default 0)
    pyramid             the simple feature pyramid's scale factors (default (1, 0.5, 0.25))
    out_channels        channels of the pyramid levels (default 64)
    anchor_scale        anchor size / level stride (default 3; FPN's is 8)
    heads               "light" (default) or "standard" (torchvision's Mask R-CNN heads)
    detections_per_img  at most this many detections per image (default 100, COCO's limit)
    eval_batch          images per evaluation forward pass (default 50)
"""
from __future__ import annotations

import torch

from ..data.coco import NUM_CLASSES, CocoInstances
from ..data.scenes import SceneSpec, load_scenes
from ..metric_specs import DETECTION_METRICS
from ..presets import generator
from ..task_declarations import detection_metrics, detection_seq_lens
from .base import Batch

DATASETS = ("scenes", "coco")
DEFAULTS = dict(scenes={}, data_seed=0, pyramid=(1.0, 0.5, 0.25), out_channels=64, anchor_scale=3.0,
                heads="light", detections_per_img=100, eval_batch=50)
#: The declared metrics: COCO AP (IoU 0.5:0.95) and AP50, of boxes and of masks.
METRICS = DETECTION_METRICS
#: torchmetrics' result keys of each declared metric.
METRIC_KEYS = {"box_ap": "bbox_map", "box_ap50": "bbox_map_50", "mask_ap": "segm_map", "mask_ap50": "segm_map_50"}
INSTALL_HINT = "pip install torchmetrics pycocotools (pinned in requirements.txt)"


def mean_average_precision():
    """A fresh torchmetrics ``MeanAveragePrecision`` for boxes and masks (pycocotools backend), or
    an ImportError naming the install command."""
    try:
        import pycocotools  # noqa: F401  (the backend below)
        from torchmetrics.detection import MeanAveragePrecision
    except ImportError:
        raise ImportError(f"the detection metrics need torchmetrics and pycocotools: {INSTALL_HINT}") from None
    return MeanAveragePrecision(iou_type=("bbox", "segm"), backend="pycocotools")


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"detection option {name!r} must be a positive integer, got {value!r}")


def options(config) -> dict:
    """The task's options with defaults filled in, validated (a one-line ``ValueError`` otherwise)."""
    from ..models.detector import HEADS

    unknown = sorted(set(config.options) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown detection option(s) {unknown}; valid options: {sorted(DEFAULTS)}")
    o = {**DEFAULTS, **config.options}
    if config.dataset not in DATASETS:
        raise ValueError(f"the detection task reads dataset 'scenes' (generated) or 'coco' (supplied), "
                         f"got {config.dataset!r}")
    if config.image_size % config.patch_size:
        raise ValueError(f"image_size {config.image_size} is not divisible by patch_size {config.patch_size}")
    if not isinstance(o["scenes"], dict) or "canvas" in o["scenes"]:
        raise ValueError("detection option 'scenes' must be a mapping of SceneSpec fields without 'canvas' "
                         "(the canvas is the config's image_size)")
    o["spec"] = SceneSpec(canvas=config.image_size, **o["scenes"])
    for k in ("detections_per_img", "eval_batch", "out_channels"):
        _positive_int(k, o[k])
    if isinstance(o["data_seed"], bool) or not isinstance(o["data_seed"], int) or o["data_seed"] < 0:
        raise ValueError(f"detection option 'data_seed' must be an integer >= 0, got {o['data_seed']!r}")
    if o["heads"] not in HEADS:
        raise ValueError(f"detection option 'heads' must be one of {sorted(HEADS)}, got {o['heads']!r}")
    o["pyramid"] = tuple(float(f) for f in o["pyramid"])
    if config.dataset == "scenes" and not (config.train_subset and config.test_subset):
        raise ValueError("the scenes dataset needs train_subset and test_subset (the numbers of training and test "
                         f"scenes), got {config.train_subset!r} and {config.test_subset!r}")
    return o


class SceneData:
    """Training and test scenes with the input normalisation (the training pixels' mean and std)."""

    def __init__(self, train, test, mean: float, std: float):
        self.train, self.test, self.mean, self.std = train, test, mean, std
        self.num_classes, self.in_chans = 11, 1

    @staticmethod
    def targets(scenes, idx) -> list[dict]:
        """Mask R-CNN targets of scenes ``idx``: labels shifted by one (0 is the background)."""
        out = []
        for i in idx:
            t = scenes.target(int(i))
            out.append({"boxes": t["boxes"], "labels": t["labels"] + 1, "masks": t["masks"].to(torch.uint8)})
        return out


def _collate(items):
    """(images, targets) of a COCO batch, as tuples (images differ in size)."""
    return tuple(zip(*items))


class CocoData:
    def __init__(self, config, world, rank):
        self.train = CocoInstances(config.data_root, "train", config.train_subset)
        self.test = CocoInstances(config.data_root, "val", config.test_subset)
        self.num_classes, self.in_chans = NUM_CLASSES, 3
        self.mean, self.std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)   # ImageNet's, as torchvision's models
        self.config, self.world, self.rank = config, world, rank

    def loader(self, dataset, batch, sampler=None):
        from torch.utils.data import DataLoader

        return DataLoader(dataset, batch_size=batch, sampler=sampler, num_workers=self.config.num_workers,
                          collate_fn=_collate, drop_last=sampler is not None)


class Detection:
    name = "detection"

    def metrics(self, config):
        return detection_metrics(config)

    def seq_lens(self, config) -> dict:
        return detection_seq_lens(config)

    def load(self, config, world, rank):
        o = options(config)
        if config.dataset == "coco":
            return CocoData(config, world, rank)

        train = load_scenes("train", config.train_subset, o["spec"], seed=o["data_seed"])
        test = load_scenes("test", config.test_subset, o["spec"], seed=o["data_seed"])
        pixels = train.images.float() / 255
        return SceneData(train, test, float(pixels.mean()), float(pixels.std()))

    def build_model(self, config, data):
        from ..models.detector import build_detector

        o = options(config)
        mean = data.mean if isinstance(data.mean, tuple) else (data.mean,)
        std = data.std if isinstance(data.std, tuple) else (data.std,)
        return build_detector(config.model, num_classes=data.num_classes, image_size=config.image_size,
                              patch_size=config.patch_size, in_chans=data.in_chans, activation=config.activation,
                              n_mode=config.n_mode, pyramid=o["pyramid"], out_channels=o["out_channels"],
                              anchor_scale=o["anchor_scale"], heads=o["heads"], image_mean=mean, image_std=std,
                              detections_per_img=o["detections_per_img"], drop_path=config.drop_path)

    def steps_per_epoch(self, config, data) -> int:
        return len(data.train) // config.batch_size

    def batches(self, config, data, epoch, world, rank, state=None):
        """One epoch: scenes in a seeded order, each global batch split into equal shards, one per rank
        (COCO: a DistributedSampler seeded by the run seed)."""
        shard = config.batch_size // world
        if isinstance(data, CocoData):
            from torch.utils.data import DistributedSampler

            sampler = DistributedSampler(data.train, world, rank, shuffle=True, seed=config.seed, drop_last=True)
            sampler.set_epoch(epoch)
            for images, targets in data.loader(data.train, shard, sampler):
                yield Batch(list(images), list(targets), size=len(images))
            return
        order = torch.randperm(len(data.train), generator=generator(config.seed, "detection_batches", epoch))
        for b in range(len(data.train) // config.batch_size):
            idx = order[b * config.batch_size:(b + 1) * config.batch_size][rank * shard:(rank + 1) * shard]
            images = data.train.images[idx].float() / 255
            yield Batch(images, SceneData.targets(data.train, idx), size=len(idx))

    def loss(self, model, batch, config):
        """The sum of Mask R-CNN's training losses; statistics are sums over the batch."""
        losses = model(batch.inputs, batch.target)
        loss = sum(losses.values())
        stats = {"train_loss": loss.item() * batch.size}
        stats.update({f"train_{k}": v.item() * batch.size for k, v in losses.items()})
        return loss, stats

    def _test_batches(self, config, data):
        step = options(config)["eval_batch"]
        if isinstance(data, CocoData):
            yield from ((list(x), list(t)) for x, t in data.loader(data.test, step))
            return
        for i in range(0, len(data.test), step):
            idx = range(i, min(i + step, len(data.test)))
            yield data.test.images[i:i + step].float() / 255, SceneData.targets(data.test, idx)

    @torch.no_grad()
    def evaluate(self, model, config, data, device) -> dict:
        """COCO box and mask AP / AP50 on the test scenes (or val2017)."""
        metric = mean_average_precision()
        model.eval()
        for images, targets in self._test_batches(config, data):
            images = images.to(device) if hasattr(images, "to") else [x.to(device) for x in images]
            outputs = model(images)
            preds = [{"boxes": o["boxes"].cpu(), "scores": o["scores"].cpu(), "labels": o["labels"].cpu(),
                      "masks": (o["masks"][:, 0] > 0.5).cpu()} for o in outputs]
            gts = [{"boxes": t["boxes"], "labels": t["labels"], "masks": t["masks"].bool()} for t in targets]
            metric.update(preds, gts)
        result = metric.compute()
        model.train()
        if float(result["bbox_map"]) < 0:      # torchmetrics' -1: nothing to score against
            raise ValueError("the detection test set holds no ground-truth object; use more test scenes or images")
        return {name: float(result[key]) for name, key in METRIC_KEYS.items()}


__all__ = ["DATASETS", "DEFAULTS", "Detection", "METRICS", "METRIC_KEYS", "mean_average_precision", "options"]
