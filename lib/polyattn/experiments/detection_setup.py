"""What the detection proxy runs against what the paper preset would run on COCO, read from the
grids and from the models they build.

    detector_facts(config)                  # the built Mask R-CNN: N, parameters, pyramid, anchors
    setup_table(book_grid, paper_grid)      # field by field, the paper preset's setting and the book's

Every cell comes from a config of :func:`polyattn.experiments.detection.detection_proxy`, from
the task's options (:func:`polyattn.tasks.detection.options`) or from the untrained model that
config builds, so the table cannot drift from what ran.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Iterable

import pandas as pd

from ..data.coco import NUM_CLASSES
from ..model_sizes import VIT_SIZES
from ..tasks.detection import DATASETS, Detection, options
from .detection import variant_label


def _data_shape(config) -> SimpleNamespace:
    """What :meth:`Detection.build_model` reads of the data, without loading any: classes
    (with the background), input channels and a neutral normalisation."""
    if config.dataset not in DATASETS:
        raise ValueError(f"detector_facts takes configs of the detection task (datasets {DATASETS}), "
                         f"got dataset {config.dataset!r}")
    if config.dataset == "coco":
        return SimpleNamespace(num_classes=NUM_CLASSES, in_chans=3, mean=(0.0,) * 3, std=(1.0,) * 3)
    return SimpleNamespace(num_classes=11, in_chans=1, mean=0.0, std=1.0)


def detector_facts(config) -> dict:
    """The Mask R-CNN that ``config`` builds (untrained, on the CPU), as numbers: ``N`` (the
    backbone's token count, the theory's N), ``vit_params`` (patch embedding, positions, blocks
    and final norm), ``pyramid_params``, ``head_params`` (RPN and RoI heads), ``n_params``;
    ``strides``, ``anchors`` (pixels per level), ``out_channels``, ``heads``, ``in_chans``,
    ``num_classes`` and the ViT's ``width``, ``depth`` and ``attn_heads``."""
    if getattr(config, "task", None) != "detection":
        raise ValueError(f"detector_facts takes a detection config, got task {getattr(config, 'task', None)!r}")
    data = _data_shape(config)
    o = options(config)
    model = Detection().build_model(config, data)
    backbone = model.backbone

    def count(module) -> int:
        return sum(p.numel() for p in module.parameters())

    vit = (count(backbone.patch_embed) + backbone.pos_embed.numel() + count(backbone.blocks)
           + count(backbone.norm))
    pyramid = count(backbone.levels)
    total = count(model)
    size = VIT_SIZES[config.model]
    return {"N": int(model.seq_len), "grid": backbone.grid, "vit_params": vit, "pyramid_params": pyramid,
            "head_params": total - vit - pyramid, "n_params": total, "strides": tuple(backbone.strides),
            "anchors": tuple(o["anchor_scale"] * s for s in backbone.strides), "out_channels": o["out_channels"],
            "heads": o["heads"], "in_chans": data.in_chans, "num_classes": data.num_classes,
            "width": size["dim"], "depth": size["depth"], "attn_heads": size["heads"]}


def _millions(n: int) -> str:
    return f"{n / 1e6:.2f}M"


def _joined(values) -> str:
    return ", ".join(f"{v:g}" for v in values)


def _data_text(config) -> str:
    if config.dataset == "coco":
        subset = ("all images" if config.train_subset is None and config.test_subset is None else
                  f"first {config.train_subset or 'all'} / {config.test_subset or 'all'} images")
        return f"COCO 2017 photographs, train2017 / val2017 ({subset}), category ids 1-{NUM_CLASSES - 1}"
    spec = options(config)["spec"]
    return (f"synthetic scenes: {spec.min_items}-{spec.max_items} Fashion-MNIST items of {spec.min_side}-"
            f"{spec.max_side} px on a black {spec.canvas} x {spec.canvas} canvas, 10 classes; "
            f"{config.train_subset:,} training / {config.test_subset:,} test scenes, the same for every run")


def _schedule_text(config) -> str:
    text = f"{config.epochs} epoch(s) of batch {config.batch_size}"
    if config.train_subset:
        steps = config.train_subset // config.batch_size * config.epochs
        text += f" ({steps:,} steps, {steps * config.batch_size:,} scenes seen)"
    return text


def setup_table(book_configs: Iterable, paper_configs: Iterable) -> pd.DataFrame:
    """The paper preset's Mask R-CNN (COCO, not run) against the book preset's, field by field;
    each column read from the first config of its grid and from the model it builds (the
    grids' configs differ only in the activation and the seed)."""
    book, paper = list(book_configs), list(paper_configs)
    if not book or not paper:
        raise ValueError("setup_table needs both grids; build them with detection_proxy('book') and "
                         "detection_proxy('paper')")

    def column(configs):
        c = configs[0]
        f = detector_facts(c)
        o = options(c)
        seeds = sorted({x.seed for x in configs})
        return [
            _data_text(c),
            f"{c.image_size} x {c.image_size} px (longest side resized to it, zero-padded to a square), "
            f"{f['in_chans']} channel{'s' if f['in_chans'] > 1 else ''}",
            f"ViT {c.model} (width {f['width']}, {f['depth']} blocks, {f['attn_heads']} heads), patch {c.patch_size}, "
            f"global attention over N = {f['N']:,} tokens ({f['grid']} x {f['grid']}); {_millions(f['vit_params'])} "
            "parameters, untrained (no pre-training)",
            f"simple feature pyramid, strides {_joined(f['strides'])}, {f['out_channels']} channels "
            f"({_millions(f['pyramid_params'])} parameters)",
            f"{_joined(f['anchors'])} px, aspect ratios 0.5, 1, 2",
            f"{f['heads']} ({_millions(f['head_params'])} parameters); {_millions(f['n_params'])} in all",
            _schedule_text(c),
            f"AdamW, learning rate {c.lr:g} (cosine decay after {c.warmup_epochs:g} epoch(s) of warm-up), "
            f"weight decay {c.weight_decay:g}",
            f"{c.clip_grad:g}" if c.clip_grad else "off",
            f"{c.drop_path:g}",
            c.augment,
            f"COCO box and mask AP, at most {o['detections_per_img']} detections per image, "
            f"after every {c.eval_every} epoch(s)" if c.eval_every else "COCO box and mask AP, at the end",
            ", ".join(dict.fromkeys(variant_label(x) for x in configs)),
            f"{len(seeds)} ({', '.join(str(s) for s in seeds)})",
        ]

    fields = ["data", "input", "backbone", "feature pyramid", "anchor sizes (per level)", "Mask R-CNN heads",
              "schedule", "optimiser", "gradient clipping (max norm)", "drop path", "augmentation", "evaluation",
              "activations", "seeds"]
    return pd.DataFrame({"": fields, "paper preset (COCO, not run)": column(paper), "book preset": column(book)})


__all__ = ["detector_facts", "setup_table"]
