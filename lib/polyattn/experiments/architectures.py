"""Table 2 across architectures: ViT, DeiT, Swin and XCiT (timm models), softmax against x^3.

The paper's ImageNet table compares softmax with x^3 on four architectures.  Here each
architecture is a timm model (:mod:`polyattn.models.timm_zoo`) whose attention computes its
weights with a polyattn activation (:mod:`polyattn.models.timm_adapters`); each trains with

* ``softmax``;
* ``poly:p=3``: x^3 / sqrt(N) with the architecture's own N: every token for ViT and DeiT,
  the window's tokens for Swin (the keys a row sees under the shift mask), the channels per
  head d_h for XCiT; XCiT also runs with N = its patch tokens (``options["n_rule"] = "tokens"``);
* ``poly:p=3,c=1/14``: the paper's fixed x^3 / 14, the same for every architecture.

``smoke``: seconds per run, for CI; never evidence.
``book``: Fashion-MNIST subsets at Table 2's scale (2,000 training images, 5 epochs), 3 seeds.
ViT and DeiT are the book's micro ViT (patch 4, 50 tokens) as timm builds it, the DeiT row
with DeiT's augmentation and drop-path 0.1; Swin sees the images upsampled to 32 px (patch 2,
a 16 x 16 map in 4 x 4 windows, then 8 x 8); XCiT sees them upsampled to 64 px (patch 8,
64 tokens, d_h = 16).
``paper``: the paper's ImageNet models by timm names at 224 px with DeiT's recipe (AdamW,
lr 1e-3 at batch 1,024, weight decay 0.05, 5 warmup epochs, label smoothing 0.1, drop-path
0.1, 300 epochs); the ViT row without DeiT's augmentation, as in
:func:`polyattn.experiments.vit.paper_configs`, the others with it.  Swin's and XCiT's own
recipes differ (Swin-T trains with drop-path 0.2, XCiT for 400 epochs); one recipe keeps the
comparison to the activation.  Listed for GPUs, not run here.

:func:`setup_table` sets the two presets side by side, read from the grids and from the models
they build; the variants' labels and :func:`architecture` are in :mod:`polyattn.labels`.
"""
from __future__ import annotations

from ..config import TrainConfig
from ..labels import architecture, architecture_label
from ..presets import seeds_for

#: Architecture -> its book-sized model and how it sees Fashion-MNIST.
BOOK_ARCHITECTURES = {
    "vit": dict(model="timm:vit_micro", image_size=28, patch_size=4),
    "deit": dict(model="timm:deit_micro", image_size=28, patch_size=4, augment="deit", drop_path=0.1),
    "swin": dict(model="timm:swin_micro", image_size=32, patch_size=2),
    "xcit": dict(model="timm:xcit_micro", image_size=64, patch_size=8),
}
#: Architecture -> the paper's ImageNet model (timm name) and its recipe's augmentation.
PAPER_ARCHITECTURES = {
    "vit": dict(model="timm:vit_small_patch16_224", patch_size=16, augment="none"),
    "deit": dict(model="timm:deit_small_patch16_224", patch_size=16, augment="deit"),
    "swin": dict(model="timm:swin_tiny_patch4_window7_224", patch_size=4, augment="deit"),
    "xcit": dict(model="timm:xcit_small_12_p16_224", patch_size=16, augment="deit"),
}
#: (activation, options) per row; the XCiT-only row reads N as its token count.
VARIANTS = (("softmax", {}), ("poly:p=3", {}), ("poly:p=3,c=1/14", {}))
XCIT_TOKENS = ("poly:p=3", {"n_rule": "tokens"})

_SCALE = {
    "smoke": dict(train_subset=512, test_subset=256, epochs=1, batch_size=64, warmup_epochs=0.5),
    "book": dict(train_subset=2000, test_subset=2000, epochs=5, batch_size=32, warmup_epochs=1.0),
}
_COMMON = dict(dataset="fashion_mnist", lr=2e-3, weight_decay=0.05, clip_grad=1.0, threads=1)
_PAPER = dict(dataset="imagenet", image_size=224, epochs=300, batch_size=1024, lr=1e-3, weight_decay=0.05,
              warmup_epochs=5.0, label_smoothing=0.1, drop_path=0.1, num_workers=8)


def variants(arch: str) -> tuple:
    """The (activation, options) rows of one architecture."""
    return VARIANTS + ((XCIT_TOKENS,) if arch == "xcit" else ())


def table2(preset: str = "book", seeds=None, device: str = "cuda") -> list[TrainConfig]:
    """Every architecture x its activation rows x seeds (``device`` only for the paper preset)."""
    out = []
    for arch in BOOK_ARCHITECTURES:
        for act, options in variants(arch):
            for s in seeds_for(preset, seeds):
                if preset == "paper":
                    kw = {**_PAPER, **PAPER_ARCHITECTURES[arch], "device": device}
                else:
                    kw = {**_COMMON, **_SCALE[preset], **BOOK_ARCHITECTURES[arch]}
                out.append(TrainConfig(experiment="architectures_table2", preset=preset, activation=act,
                                       options=options, seed=s, **kw))
    return out


#: Critique 9: on ImageNet x/14 is below x^3/14 for ViT but best for DeiT.  The same linear row
#: on the book's ViT and DeiT, as its own experiment (Table 2's family of comparisons is unchanged).
LINEAR_ARCHITECTURES = ("vit", "deit")
LINEAR_FIXED = "poly:p=1,c=1/14"


def table2_linear(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """x/14 on the book's ViT and DeiT at Table 2's scale and seeds (book and smoke presets)."""
    if preset == "paper":
        return []
    return [TrainConfig(experiment="architectures_linear", preset=preset, activation=LINEAR_FIXED, seed=s,
                        **{**_COMMON, **_SCALE[preset], **BOOK_ARCHITECTURES[arch]})
            for arch in LINEAR_ARCHITECTURES for s in seeds_for(preset, seeds)]


# --- the setup, read from the grids ---------------------------------------------------------

def _by_architecture(configs, value) -> str:
    """One value per architecture, collapsed: "v" when all agree, else "v1 (vit, deit); v2 (swin)"."""
    groups: dict = {}
    for c in configs:
        groups.setdefault(str(value(c)), [])
        arch = architecture(c)
        if arch not in groups[str(value(c))]:
            groups[str(value(c))].append(arch)
    if len(groups) == 1:
        return next(iter(groups))
    return "; ".join(f"{v} ({', '.join(a)})" for v, a in groups.items())


def augmentation_text(augment: str) -> str:
    """What an ``augment`` value does, read from the augmentation's own defaults."""
    if augment != "deit":
        return "none"
    import inspect

    from ..data.augment import DeiTAugment

    d = {k: p.default for k, p in inspect.signature(DeiTAugment.__init__).parameters.items()
         if p.default is not inspect.Parameter.empty}
    return (f"DeiT's: RandAugment (2 ops, magnitude {d['rand_magnitude']}), random erasing p = {d['erase_prob']:g}, "
            f"MixUp alpha {d['mixup_alpha']:g} or CutMix alpha {d['cutmix_alpha']:g}")


def setup_table(book_configs, paper_configs, book_chans: int = 1, book_classes: int = 10,
                paper_chans: int = 3, paper_classes: int = 1000):
    """The paper preset's setting against the book preset's, field by field, per architecture
    where they differ; every cell read from the two grids (and the models they build, through
    :func:`polyattn.models.timm_facts.model_text`).  A DataFrame."""
    import pandas as pd

    from ..models.timm_facts import model_text

    book, paper = list(book_configs), list(paper_configs)

    def subset(c):
        if c.train_subset is None and c.test_subset is None:
            return f"{c.dataset}, full training and validation sets"
        return f"{c.dataset}, {c.train_subset:,} training / {c.test_subset:,} test images (fixed subsets)"

    def size(chans):
        def text(c):
            return f"{c.image_size} px, {chans} channel{'s' if chans > 1 else ''}"
        return text

    def model(chans, classes):
        cache = {}

        def text(c):
            key = (c.model, c.image_size, c.patch_size)
            if key not in cache:
                cache[key] = model_text(c.model, c.image_size, c.patch_size, chans, classes)
            return cache[key]
        return text

    def seeds(configs):
        counts: dict = {}
        for c in configs:
            counts.setdefault(c.hash, set()).add(c.seed)
        return "/".join(str(n) for n in sorted({len(s) for s in counts.values()}))

    fields = [
        ("data", subset, subset),
        ("model input", size(paper_chans), size(book_chans)),
        ("patch", lambda c: c.patch_size, lambda c: c.patch_size),
        ("model", model(paper_chans, paper_classes), model(book_chans, book_classes)),
        ("epochs", lambda c: c.epochs, lambda c: c.epochs),
        ("batch", lambda c: c.batch_size, lambda c: c.batch_size),
        ("AdamW learning rate", lambda c: f"{c.lr:g}", lambda c: f"{c.lr:g}"),
        ("weight decay", lambda c: f"{c.weight_decay:g}", lambda c: f"{c.weight_decay:g}"),
        ("warm-up epochs", lambda c: f"{c.warmup_epochs:g}", lambda c: f"{c.warmup_epochs:g}"),
        ("label smoothing", lambda c: f"{c.label_smoothing:g}", lambda c: f"{c.label_smoothing:g}"),
        ("augmentation", lambda c: augmentation_text(c.augment), lambda c: augmentation_text(c.augment)),
        ("drop path", lambda c: f"{c.drop_path:g}", lambda c: f"{c.drop_path:g}"),
        ("gradient clipping (max norm; 0 = off)", lambda c: f"{c.clip_grad:g}", lambda c: f"{c.clip_grad:g}"),
    ]
    rows = [(name, _by_architecture(paper, p_value), _by_architecture(book, b_value))
            for name, p_value, b_value in fields]
    rows.append(("activations", ", ".join(dict.fromkeys(architecture_label(c) for c in paper)),
                 ", ".join(dict.fromkeys(architecture_label(c) for c in book))))
    rows.append(("seeds per configuration", seeds(paper), seeds(book)))
    return pd.DataFrame(rows, columns=["", "paper preset (not run)", "book preset"])
