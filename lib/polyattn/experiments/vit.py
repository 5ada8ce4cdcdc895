"""The ViT experiments of chapters 03 and 04 as config grids, per preset.

``smoke``: seconds per run, for CI; never evidence.
``book``: Fashion-MNIST subsets sized to CPU hours, 3 seeds (5 for Table 1); the results
are committed.
``paper``: the paper's own configurations as data (ViT-Tiny on Tiny-ImageNet, ViT-S/B and
DeiT-S/B on ImageNet-1k with the DeiT recipe, 300 epochs, x^3/14); they need the datasets
and GPUs, and are listed, not run, here.
"""
from __future__ import annotations

from ..config import TrainConfig
from ..presets import DEFAULT_SEEDS, PRESETS, seeds_for  # noqa: F401  (re-exported for chapters)

#: Table 1 carries the book's paired comparisons, so its book preset has more seeds.
TABLE1_SEEDS = {**DEFAULT_SEEDS, "book": (0, 1, 2, 3, 4)}

#: Table 1 analogue: the activations compared on one small ViT: the paper's, then the wider
#: family of softmax alternatives (second-order Taylor softmax, the periodic sin^2 form,
#: Power-Softmax with p = 2, squared ReLU over N) under the same harness and seeds.
TABLE1_ACTIVATIONS = ("softmax", "poly:p=3", "poly:p=3,c=1/14", "poly:p=3,c=1", "poly:p=1", "poly:p=2",
                      "relu_n", "sigmoid", "softpick", "taylor_softmax", "periodic", "power_softmax:p=2",
                      "relu2_n")
#: The members of the wider family in TABLE1_ACTIVATIONS (the rest are the paper's and its neighbours').
FAMILY_ACTIVATIONS = ("taylor_softmax", "periodic", "power_softmax:p=2", "relu2_n")
#: The three activations whose norms chapter 03 follows during training.
NORM_ACTIVATIONS = ("softmax", "poly:p=3", "poly:p=3,c=1")
#: Figure 1 analogue: the constant c in c*x^3 (a factor 4 apart), for three sequence lengths.
SCALE_CONSTANTS = ("1/32", "1/8", "1/2", "2", "8")
SCALE_PATCHES = (2, 4, 7)  # 28x28 images: 196, 49 and 16 patches (+ CLS)

# Per-preset training scale (Fashion-MNIST subsets; the test subset is the same for every run).
_SCALE = {
    "smoke": dict(train_subset=512, test_subset=256, epochs=1, batch_size=64, warmup_epochs=0.5),
    "book": dict(train_subset=5000, test_subset=2000, epochs=6, batch_size=32, warmup_epochs=1.0),
}
_TABLE2_SCALE = {
    "smoke": _SCALE["smoke"],
    "book": dict(train_subset=2000, test_subset=2000, epochs=5, batch_size=32, warmup_epochs=1.0),
}
_SWEEP_SCALE = {
    "smoke": dict(train_subset=256, test_subset=256, epochs=1, batch_size=64, warmup_epochs=0.5),
    "book": dict(train_subset=1000, test_subset=2000, epochs=5, batch_size=32, warmup_epochs=1.0),
}
_COMMON = dict(dataset="fashion_mnist", image_size=28, lr=2e-3, weight_decay=0.05, clip_grad=1.0, threads=1)


def _cfg(preset, experiment, scale=_SCALE, **kw) -> TrainConfig:
    scale = scale[preset]
    return TrainConfig(experiment=experiment, preset=preset, **{**_COMMON, **scale, **kw})


def table1(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """One micro ViT (patch 4: 49 tokens + CLS) per activation and seed, with norm probes."""
    if preset == "paper":
        return paper_configs()
    out = []
    steps = _SCALE[preset]["train_subset"] // _SCALE[preset]["batch_size"] * _SCALE[preset]["epochs"]
    for act in TABLE1_ACTIVATIONS:
        for s in seeds_for(preset, seeds, TABLE1_SEEDS):
            out.append(_cfg(preset, "vit_table1", activation=act, patch_size=4, model="micro", seed=s,
                            probe_every=max(1, steps // 8), param_probes=2,
                            probe_metrics=("attn_fro", "act_jac_fro", "grad_attn_fro", "param_jac_fro")))
    return out


def table2(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """Two model sizes x two recipes (plain, DeiT-style augmentation), softmax vs poly:p=3."""
    if preset == "paper":
        return paper_configs()
    out = []
    for model in ("micro", "mini"):
        for augment in ("none", "deit"):
            for act in ("softmax", "poly:p=3"):
                for s in seeds_for(preset, seeds):
                    out.append(_cfg(preset, "vit_table2", _TABLE2_SCALE, activation=act, model=model, augment=augment,
                                    patch_size=7, seed=s, drop_path=0.1 if augment == "deit" else 0.0))
    return out


def scale_sweep(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """c * x^3 for each constant c and sequence length (Figure 1 analogue)."""
    if preset == "paper":
        return paper_configs()
    consts = SCALE_CONSTANTS if preset != "smoke" else SCALE_CONSTANTS[1:3]
    out = []
    for patch in SCALE_PATCHES:
        for c in consts:
            for s in seeds_for(preset, seeds):
                out.append(_cfg(preset, "vit_scale", _SWEEP_SCALE, activation=f"poly:p=3,c={c}", patch_size=patch,
                                model="micro", seed=s))
    return out


#: Table 1's recipe without gradient clipping (``clip_grad=0``; the paper does not clip): the
#: activations whose verdicts ask whether the 1/sqrt(N) factor is needed.
TABLE1_UNCLIPPED_ACTIVATIONS = ("softmax", "poly:p=3", "poly:p=3,c=1", "poly:p=3,c=1/14", "poly:p=1")


def table1_unclipped(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """Table 1's model, recipe, probes and seeds with gradient clipping off."""
    if preset == "paper":
        return paper_configs()
    keep = set(TABLE1_UNCLIPPED_ACTIVATIONS)
    return [c.replace(experiment="vit_table1_unclipped", clip_grad=0.0)
            for c in table1(preset, seeds) if c.activation in keep]


#: The quadratic of the paper's latest version, with a learned scale: g_h x^2 / sqrt(N), g_h learned
#: per head from 1 (the book's parametrisation; the paper's is unpublished), at Table 1's recipe and
#: seeds, beside Table 1's own x^2/sqrt(N), x^3/sqrt(N) and softmax.
QUADRATIC_LEARNED = "poly_learned:p=2"


def table1_quadratic(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """Table 1's model, recipe, probes and seeds for the learned-scale quadratic."""
    if preset == "paper":
        return paper_configs()
    return [c.replace(experiment="vit_table1_quadratic", activation=QUADRATIC_LEARNED)
            for c in table1(preset, seeds) if c.activation == "softmax"]


#: The converged tier of Table 1: full Fashion-MNIST, trained until softmax's test accuracy
#: levels off (every epoch's test accuracy is recorded, so the plateau is shown, not assumed).
CONVERGED_ACTIVATIONS = ("softmax", "poly:p=3", "poly:p=3,c=1/14", "poly:p=3,c=1", "poly:p=1", "poly:p=2",
                         QUADRATIC_LEARNED)
CONVERGED_SEEDS = {**DEFAULT_SEEDS, "book": (0, 1, 2, 3, 4)}
#: The same tier without gradient clipping (the paper's own recipe: it does not clip), at the converged
#: tier's five seeds: does anything diverge, and does x^3/sqrt(N) match softmax without the clipping caveat?
UNCLIPPED_ACTIVATIONS = ("softmax", "poly:p=3", "poly:p=3,c=1")
_CONVERGED_SCALE = {
    "smoke": dict(train_subset=512, test_subset=256, epochs=1, batch_size=64, warmup_epochs=0.5),
    "book": dict(train_subset=None, test_subset=None, epochs=20, batch_size=128, warmup_epochs=1.0),
}
_CONVERGED_PROBES = dict(probe_metrics=("attn_fro", "act_jac_fro", "grad_attn_fro"), param_probes=0)


def _converged_probe_every(preset) -> int:
    sc = _CONVERGED_SCALE[preset]
    steps = (sc["train_subset"] or 60000) // sc["batch_size"] * sc["epochs"]
    return max(1, steps // 10)


def converged(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """Table 1's model (micro ViT, patch 4) on all 60,000 training images, 20 epochs, clipped at 1."""
    if preset == "paper":
        return paper_configs()
    return [_cfg(preset, "vit_converged", _CONVERGED_SCALE, activation=act, patch_size=4, model="micro", seed=s,
                 probe_every=_converged_probe_every(preset), **_CONVERGED_PROBES)
            for act in CONVERGED_ACTIVATIONS for s in seeds_for(preset, seeds, CONVERGED_SEEDS)]


def unclipped(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """The converged tier without gradient clipping (``clip_grad=0``), for three activations."""
    if preset == "paper":
        return paper_configs()
    return [_cfg(preset, "vit_unclipped", _CONVERGED_SCALE, activation=act, patch_size=4, model="micro", seed=s,
                 clip_grad=0.0, probe_every=_converged_probe_every(preset), **_CONVERGED_PROBES)
            for act in UNCLIPPED_ACTIVATIONS for s in seeds_for(preset, seeds, CONVERGED_SEEDS)]


#: The attention-ablated control of the converged tier: every query spreads its weight uniformly, 1/N on
#: each key, at the unclipped recipe and the converged tier's seeds. A benchmark that sees attention puts it
#: measurably behind softmax; one that does not leaves every activation's comparison there uninformative.
ABLATED = "uniform"


def unclipped_ablated(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """:func:`unclipped`'s recipe with attention ablated (uniform weights over the keys)."""
    if preset == "paper":
        return paper_configs()
    return [_cfg(preset, "vit_unclipped_ablated", _CONVERGED_SCALE, activation=ABLATED, patch_size=4, model="micro",
                 seed=s, clip_grad=0.0, probe_every=0)
            for s in seeds_for(preset, seeds, CONVERGED_SEEDS)]


def table1_ablated(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """Table 1's model, recipe, probes and seeds with attention ablated (uniform weights over the keys): the
    positive control of the Table 1 analogue's comparisons."""
    if preset == "paper":
        return paper_configs()
    return [c.replace(experiment="vit_table1_ablated", activation=ABLATED)
            for c in table1(preset, seeds) if c.activation == "softmax"]


#: Table 2's question at the converged tier's scale: the DeiT-style recipe (augmentation with
#: mixing, drop path 0.1, as in :func:`table2`) on the converged tier's model, data and schedule,
#: softmax against x^3/sqrt(N), five seeds.
TABLE2_CONVERGED_ACTIVATIONS = ("softmax", "poly:p=3")


def table2_converged(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """:func:`converged` for :data:`TABLE2_CONVERGED_ACTIVATIONS` with the DeiT-style recipe."""
    if preset == "paper":
        return paper_configs()
    return [c.replace(experiment="vit_table2_converged", augment="deit", drop_path=0.1)
            for c in converged(preset, seeds) if c.activation in TABLE2_CONVERGED_ACTIVATIONS]


#: The norm intervention: softmax times k (positivity, normalisation and sparsity kept, but
#: ||A||_F can reach k sqrt(N)), and x^3/sqrt(N) with each row rescaled to norm at most 1 (so
#: ||A||_F <= sqrt(N) without any of softmax's three properties).
INTERVENTION_ACTIVATIONS = ("softmax:k=2", "softmax:k=4", "softmax:k=8", "poly_cap:p=3")
#: The two tested predictions (8·softmax and the capped cubic) pair with all five of the converged
#: tier's softmax seeds; k = 2 and 4, which only place the slope in log k, keep the default three.
INTERVENTION_SEEDS = {"softmax:k=8": CONVERGED_SEEDS, "poly_cap:p=3": CONVERGED_SEEDS}


def intervention(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """The converged tier's recipe with the norm changed by construction (softmax and x^3/sqrt(N)
    themselves are the converged tier's records)."""
    if preset == "paper":
        return paper_configs()
    return [_cfg(preset, "vit_norm_intervention", _CONVERGED_SCALE, activation=act, patch_size=4, model="micro",
                 seed=s, probe_every=_converged_probe_every(preset), **_CONVERGED_PROBES)
            for act in INTERVENTION_ACTIVATIONS
            for s in seeds_for(preset, seeds, INTERVENTION_SEEDS.get(act, DEFAULT_SEEDS))]


#: The norm intervention without its confounds, at the paper's own recipe (no clipping) and the converged
#: tier's scale and seeds. k * softmax also multiplies the attention branch's output by k, which the
#: output projection could absorb; with the projection started k times smaller the network starts as
#: the same function as softmax while ||A||_F may reach k sqrt(N). softmax/8 tightens the bound; the
#: capped x^3/sqrt(N) is compared with the uncapped one (softmax and x^3/sqrt(N) themselves are the
#: records of :func:`unclipped`).
INTERVENTION_UNCLIPPED = (("softmax:k=8", 0.125), ("softmax:k=1/8", 1.0), ("poly_cap:p=3", 1.0))


def intervention_unclipped(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """:func:`intervention` without clipping, the output-compensated 8·softmax, softmax/8 and the capped cube."""
    if preset == "paper":
        return paper_configs()
    return [_cfg(preset, "vit_intervention_unclipped", _CONVERGED_SCALE, activation=act, patch_size=4,
                 model="micro", seed=s, clip_grad=0.0, out_init_scale=out, probe_every=_converged_probe_every(preset),
                 **_CONVERGED_PROBES)
            for act, out in INTERVENTION_UNCLIPPED for s in seeds_for(preset, seeds, CONVERGED_SEEDS)]


#: The scale sweep trained longer: a grid of c wide enough to put the best constant inside it
#: at each length, more images and epochs (the 197-token setting costs about seven times the
#: 50-token one, so it gets half the images).
SWEEP_LONG_CONSTANTS = ("1/8", "1/2", "2", "8", "32")
_SWEEP_LONG_SCALE = {
    "smoke": dict(train_subset=256, test_subset=256, epochs=1, batch_size=64, warmup_epochs=0.5),
    "book": dict(train_subset=20000, test_subset=10000, epochs=10, batch_size=128, warmup_epochs=1.0),
}
_SWEEP_LONG_IMAGES = {2: 10000}


def scale_sweep_long(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """c * x^3 at N = 17, 50 and 197 tokens, trained far longer than :func:`scale_sweep`."""
    if preset == "paper":
        return paper_configs()
    consts = SWEEP_LONG_CONSTANTS if preset != "smoke" else SWEEP_LONG_CONSTANTS[1:3]
    out = []
    for patch in SCALE_PATCHES:
        extra = {"train_subset": _SWEEP_LONG_IMAGES[patch]} if preset == "book" and patch in _SWEEP_LONG_IMAGES else {}
        for c in consts:
            for s in seeds_for(preset, seeds):
                out.append(_cfg(preset, "vit_scale_long", _SWEEP_LONG_SCALE, activation=f"poly:p=3,c={c}",
                                patch_size=patch, model="micro", seed=s, **extra))
    return out


#: How much the attention-map models train, per preset (a short retraining; records keep no weights).
ATTENTION_MAP_SCALE = {
    "smoke": dict(train_subset=256, test_subset=64, epochs=1, batch_size=64, warmup_epochs=0.5),
    "book": dict(train_subset=2000, test_subset=500, epochs=2, batch_size=32, warmup_epochs=0.5),
}


def attention_map_config(activation: str, preset: str = "book", seed: int = 0):
    """The configuration of a short retraining of table 1's model with ``activation``, for
    attention maps: table 1's recipe (model, patch, optimiser) at :data:`ATTENTION_MAP_SCALE`."""
    if preset not in ATTENTION_MAP_SCALE:
        raise ValueError(f"attention maps are retrained for the presets {sorted(ATTENTION_MAP_SCALE)}, "
                         f"not {preset!r} (the paper's models need ImageNet and GPUs)")
    base = table1(preset, seeds=[seed])[0]
    return base.replace(experiment="vit_attention_maps", activation=activation, probe_every=0, param_probes=0,
                        **ATTENTION_MAP_SCALE[preset])


def paper_configs(device: str = "cuda") -> list[TrainConfig]:
    """The paper's ViT configurations as runnable configs (Tables 1-2).

    They stream the data from disk (``--data-root``) and run under ``torchrun``.  What the
    paper does not state is filled from DeiT's published recipe: AdamW, lr 5e-4 x batch/512,
    weight decay 0.05, 5 warmup epochs, label smoothing 0.1, drop-path 0.1, 300 epochs;
    "ViT" rows use no RandAugment/MixUp/CutMix/erasing, "DeiT" rows use them.  Swin and
    XCiT (also in the paper's Table 2) are timm models, in :mod:`polyattn.experiments.architectures`.
    """
    common = dict(preset="paper", device=device, epochs=300, batch_size=1024, lr=1e-3, weight_decay=0.05,
                  warmup_epochs=5.0, label_smoothing=0.1, drop_path=0.1, num_workers=8, seed=0)
    out = []
    for recipe, augment in (("vit", "none"), ("deit", "deit")):
        for model in ("small", "base"):
            for act in ("softmax", "poly:p=3,c=1/14", "poly:p=1,c=1/14"):
                out.append(TrainConfig(experiment=f"paper_imagenet_{recipe}", dataset="imagenet", image_size=224,
                                       patch_size=16, model=model, activation=act, augment=augment, **common))
    for act in ("softmax", "poly:p=3,c=1/16", "poly:p=3,c=1", "poly:p=1,c=1/16"):
        out.append(TrainConfig(experiment="paper_tiny_imagenet", dataset="tiny_imagenet", image_size=64,
                               patch_size=4, model="tiny", activation=act, augment="deit",
                               **{**common, "batch_size": 256, "lr": 2.5e-4}))
    return out


def paper_table():
    """One row per paper configuration: what would run, on what, for how long."""
    return [{"experiment": c.experiment, "dataset": c.dataset, "model": f"ViT-{c.model}", "tokens": c.seq_len,
             "activation": c.activation, "epochs": c.epochs, "batch": c.batch_size, "recipe": c.augment}
            for c in paper_configs()]
