"""Chapter 10: other architectures.  The paper's Table 2 on timm's ViT, DeiT, Swin and XCiT, the
linear $x/14$ against $x^3/14$ on ViT and DeiT, and detection and instance segmentation with
Mask R-CNN on a polynomial-attention ViT backbone."""
from __future__ import annotations

from ..constants import CHANCE_ADDED_LATE, CHANCE_LATE, CUBE_14, CUBE_SQRT_N, DETECTION_FLOOR, FASHION_MNIST_CHANCE, SOFTMAX
from ..spec import RegisteredClaim, vs

# XCiT also runs with N read as its patch tokens (options n_rule = tokens): those rows are left out
_NOT_XCIT_TOKENS = {"options": {}}
TABLE2_ARCHITECTURES = RegisteredClaim(
    "table2_architectures",
    "Table 2 across architectures: $x^3$ matches softmax on ViT, DeiT, Swin and XCiT",
    "paper, Table 2", "10_architectures",
    registered="2026-11-30",
    comparisons=(
        vs("architectures_table2", {**CUBE_SQRT_N, **_NOT_XCIT_TOKENS}, {**SOFTMAX, **_NOT_XCIT_TOKENS}, "cube_sqrt_n",
           "x³/√N − softmax, pooled over ViT, DeiT, Swin, XCiT", "equivalent", pool_over=("model",)),
        vs("architectures_table2", {**CUBE_14, **_NOT_XCIT_TOKENS}, {**SOFTMAX, **_NOT_XCIT_TOKENS}, "cube_14",
           "x³/14 − softmax, pooled over ViT, DeiT, Swin, XCiT", "equivalent", pool_over=("model",)),
    ),
    margin=1.0, chance=FASHION_MNIST_CHANCE, margin_commit="7db8a69", chance_registered_after=CHANCE_LATE,
    registered_after="the margin was committed after all the runs of this grid were stored",
    scale="timm ViT, DeiT, Swin and XCiT at micro size, 2,000 Fashion-MNIST images, book preset",
    headline="x³ matches on ViT, DeiT, Swin, XCiT", answer_row=13, verdict_row=29, topic="timm",
)

DETECTION = RegisteredClaim(
    "detection_segmentation",
    "Detection and instance segmentation: $x^3$ attention is near-identical to softmax",
    "paper; review ICLR 2026", "10_architectures",
    registered="2026-11-30",
    comparisons=tuple(
        vs("detection_proxy", act, SOFTMAX, f"{name}_{m}", f"{label} − softmax, {m.replace('_ap', ' AP')}",
           "equivalent", metric=m)
        for name, act, label in (("cube_sqrt_n", CUBE_SQRT_N, "x³/√N"), ("cube_14", CUBE_14, "x³/14"))
        for m in ("box_ap", "mask_ap")) + (
        # the positive control, registered before its runs: with attention ablated the proxy must score worse
        vs("detection_ablated", {"activation": "uniform"}, SOFTMAX, "ablated_box_ap",
           "attention ablated (uniform 1/N) − softmax, box AP (positive control)", "worse",
           baseline_grid="detection_proxy", metric="box_ap", role="check"),
    ),
    margin=2.0, margin_commit="811a576",
    chance=DETECTION_FLOOR,
    chance_registered_after="the floor of a detector that finds nothing (AP 0) was added to this claim on 3 December, "
                            "after its runs",
    notes=("chance: AP has no guessing rate like a class prior, but it has a floor: a detector that finds nothing "
           "scores 0.  A run within the 2-point band of it found no objects; the floor keeps two such runs from "
           "reading as equivalent within ±2 AP, and makes an ablated control that finds nothing read as not having "
           "learned",),
    scale="Mask R-CNN on synthetic Fashion-MNIST scenes, book preset",
    headline="x³ matches on detection, segmentation", answer_row=14, verdict_row=31, topic="Mask R-CNN",
)

# critique 9: x/14 against x^3/14 on ViT (the paper: worse) and DeiT (the paper: best)
_LIN14 = {"activation": "poly:p=1,c=1/14"}
LINEAR_ON_DEIT = RegisteredClaim(
    "linear_vit_deit",
    "$x/14$ is worse than $x^3/14$ on ViT but better on DeiT (the pattern of the paper's ImageNet table)",
    "review ICLR 2025 (critique 9)", "10_architectures",
    registered="2026-12-02",
    comparisons=(
        vs("architectures_linear", {**_LIN14, "model": "timm:vit_micro"}, {**CUBE_14, "model": "timm:vit_micro"},
           "vit", "x/14 − x³/14, ViT", "worse", baseline_grid="architectures_table2"),
        vs("architectures_linear", {**_LIN14, "model": "timm:deit_micro"}, {**CUBE_14, "model": "timm:deit_micro"},
           "deit", "x/14 − x³/14, DeiT", "better", baseline_grid="architectures_table2"),
    ),
    margin=1.0, chance=FASHION_MNIST_CHANCE, chance_registered_after=CHANCE_ADDED_LATE,
    scale="timm ViT and DeiT at micro size, 2,000 Fashion-MNIST images, book preset",
)

#: In the order chapter 10 takes them up.
CLAIMS = (TABLE2_ARCHITECTURES, DETECTION, LINEAR_ON_DEIT)
