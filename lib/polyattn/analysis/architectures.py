"""Chapter 10's tables: the paper's Table 2 across architectures, and what N is in each.

The grid :func:`polyattn.experiments.architectures.table2` trains ViT, DeiT, Swin and XCiT
(timm models with a polyattn activation) with softmax, x^3/sqrt(N) (N the architecture's own)
and x^3/14, and XCiT once more with N its patch tokens.  Every row here is keyed by
``architecture`` and ``variant`` (:func:`variant_label`), and the statistics are those of
:mod:`polyattn.analysis.stats`:

    final = architecture_final(records)       # one row per run: architecture, variant, n_rule, seq_len, tokens
    accuracy_summary(final)                   # mean, sd, seeds per architecture and variant
    vs_softmax(final, margin=1)               # paired by seed within each architecture; Holm over the table
    pooled_vs_softmax(final, margin=1)        # the variants every architecture runs, architecture fixed effects
    n_readings(final, margin=1)               # x^3/14 and N = tokens against each architecture's own N
    table2_form(pooled, per_architecture)     # the claim's form from those two tables
    attention_n_table(configs)                # N per architecture, read from the built models
    setup_table(book_configs, paper_configs)  # what the book changes, read from both grids
    xcit_rule_equivalence()                   # XCiT's N rules differ by a temperature factor, checked
"""
from __future__ import annotations

import functools
import math
from typing import Iterable, Optional

import numpy as np
import pandas as pd

from .. import activations
from ._common import _check_records, _pm
from .frames import final_metrics
from .lra import BOOK_FORMS, combined_form
from .stats import ALPHA, POWER, paired_difference, pooled_difference
from .tables import _diff_cells, summary_table
from .verdicts import comparison_verdict

SOFTMAX, OWN, FIXED, TOKENS = "softmax", "x^3/sqrt(N)", "x^3/14", "x^3/sqrt(N), N = tokens"
#: (canonical activation, XCiT's n_rule) -> the variant's label; the grid's rows and no others.
VARIANT_LABELS = {
    ("softmax", None): SOFTMAX,
    (activations.canonical("poly:p=3"), None): OWN,
    (activations.canonical("poly:p=3,c=1/14"), None): FIXED,
    (activations.canonical("poly:p=3"), "tokens"): TOKENS,
}
VARIANTS = (SOFTMAX, OWN, FIXED, TOKENS)

#: What a row of each adapted attention module runs over (the set softmax sums to one over).
NORMALISES_OVER = {
    "PolyAttention": "a query's row over every token, CLS included",
    "PolyWindowAttention": "a query's row over the tokens of its window (the shift mask hides other regions)",
    "PolyXCA": "a channel's row of the head's d_h x d_h cross-covariance matrix",
    "PolyClassAttn": "the CLS query's row over CLS and every patch token",
}


def _config_value(config, name, default=None):
    return config.get(name, default) if isinstance(config, dict) else getattr(config, name, default)


def variant_label(config) -> str:
    """The variant of a config (a TrainConfig or a record's config dict) of the architectures grid."""
    spec = activations.canonical(_config_value(config, "activation"))
    n_rule = (_config_value(config, "options") or {}).get("n_rule")
    n_rule = None if n_rule == "channels" and "xcit" in str(_config_value(config, "model")) else n_rule
    try:
        return VARIANT_LABELS[(spec, n_rule)]
    except KeyError:
        raise ValueError(f"{spec!r} with n_rule={n_rule!r} is not a variant of the architectures grid "
                         f"(its variants: {', '.join(VARIANTS)})") from None


def architecture_of(config) -> str:
    """"vit", "deit", "swin" or "xcit" for a config or a record's config dict."""
    from ..experiments.architectures import architecture

    return architecture(config)


def architecture_final(records: Iterable[dict]) -> pd.DataFrame:
    """:func:`~polyattn.analysis.final_metrics` with ``architecture``, ``variant``, ``n_rule`` and
    ``tokens`` (the first attention layer's tokens, from the record's ``seq_lens``); ``seq_len``
    is N as the activation saw it."""
    records = _check_records(records)
    frame = final_metrics(records)
    by_run = {f"{r['config_hash']}-seed{r['seed']}": r for r in records}
    rec = [by_run[k] for k in frame["run"]]
    frame.insert(0, "variant", [variant_label(r["config"]) for r in rec])
    frame.insert(0, "architecture", [architecture_of(r["config"]) for r in rec])
    frame["n_rule"] = [(r["config"].get("options") or {}).get("n_rule") for r in rec]
    frame["tokens"] = [(r.get("seq_lens") or {}).get("tokens", np.nan) for r in rec]
    return frame


def accuracy_summary(final: pd.DataFrame, metric=None) -> pd.DataFrame:
    """Mean, sd, min, max, runs and diverged runs per architecture and variant (ranked within each
    architecture), in the metric's display unit."""
    return summary_table(final, by=["architecture", "variant"], metric=metric, rank_within=["architecture"])


def vs_softmax(final: pd.DataFrame, margin: Optional[float] = None, metric=None, alpha: float = ALPHA,
               power: float = POWER) -> pd.DataFrame:
    """Every variant minus softmax, paired by seed within each architecture: the columns of
    :func:`~polyattn.analysis.paired_difference` keyed by ``variant`` (``p_holm`` over every row)."""
    return paired_difference(final, baseline=SOFTMAX, by=["architecture"], key="variant", metric=metric,
                             margin=margin, alpha=alpha, power=power)


def common_variants(final: pd.DataFrame) -> list[str]:
    """The variants other than softmax that every architecture of ``final`` ran, in grid order."""
    archs = list(dict.fromkeys(final["architecture"]))
    return [v for v in VARIANTS if v != SOFTMAX
            and all(((final["architecture"] == a) & (final["variant"] == v)).any() for a in archs)]


def pooled_vs_softmax(final: pd.DataFrame, margin: Optional[float] = None, metric=None, alpha: float = ALPHA,
                      power: float = POWER) -> pd.DataFrame:
    """Each variant that every architecture ran, minus softmax, pooled over the architectures with
    architecture fixed effects (:func:`~polyattn.analysis.pooled_difference` with one cell per
    architecture); ``variant`` names the row, ``p_holm`` corrects over the rows."""
    keep = common_variants(final)
    frame = final[final["variant"].isin([SOFTMAX] + keep)].assign(activation=lambda f: f["variant"])
    out = pooled_difference(frame, baseline=SOFTMAX, cells=("architecture",), metric=metric, margin=margin,
                            alpha=alpha, power=power)
    out.insert(0, "variant", out["activation"])
    return out


def n_readings(final: pd.DataFrame, margin: Optional[float] = None, metric=None, alpha: float = ALPHA,
               power: float = POWER) -> pd.DataFrame:
    """The other readings of N against each architecture's own: x^3/14 minus x^3/sqrt(N) per
    architecture, and XCiT's N = tokens minus N = channels, paired by seed (Holm over the rows)."""
    return paired_difference(final, baseline=OWN, by=["architecture"], key="variant", compare=[FIXED, TOKENS],
                             metric=metric, margin=margin, alpha=alpha, power=power)


def table2_form(pooled: pd.DataFrame, per_architecture: pd.DataFrame, alpha: float = ALPHA) -> tuple[str, dict]:
    """The book form (:data:`polyattn.book.claims.FORMS`) of "x^3 matches softmax across
    architectures", and the form per variant.

    Per variant of ``pooled`` (:func:`pooled_vs_softmax`): when the architectures disagree (the
    pooled row's F-test p < ``alpha``) the pooled number averages unlike effects, so the
    variant's form combines the per-architecture verdicts of ``per_architecture``
    (:func:`vs_softmax`), which gives "mixed" when they point different ways; otherwise it is the
    pooled verdict's form.  The claim's form is the variants' shared form (see
    :func:`polyattn.analysis.lra.combined_form`)."""
    per_variant = {}
    for _, row in pooled.iterrows():
        het = row.get("heterogeneity_p", np.nan)
        if het == het and het < alpha:
            rows = per_architecture[per_architecture["variant"] == row["variant"]]
            per_variant[row["variant"]] = combined_form([comparison_verdict(r, alpha=alpha).form
                                                         for _, r in rows.iterrows()])
        else:
            per_variant[row["variant"]] = BOOK_FORMS[comparison_verdict(row, alpha=alpha).form]
    return combined_form(list(per_variant.values())), per_variant


def accuracy_table(summary: pd.DataFrame, diffs: pd.DataFrame, final: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """The display table of :func:`accuracy_summary` and :func:`vs_softmax`: per architecture and
    variant, N (when ``final`` is given), 'mean ± sd' in per cent, seeds, status, and against
    softmax the paired difference, its CI, p, Holm p, TOST p, MDE and the verdict's form."""
    d = diffs.set_index(["architecture", "variant"]) if len(diffs) else None
    n = (final.groupby(["architecture", "variant"], sort=False)["seq_len"].first() if final is not None else None)
    rows = []
    for _, r in summary.iterrows():
        k = (r["architecture"], r["variant"])
        row = {"architecture": k[0], "variant": k[1]}
        if n is not None:
            row["N"] = int(n.get(k, np.nan))
        row.update({"test acc. (%)": _pm(r["mean"], r["std"]), "seeds": int(r["n_runs"]), "status": r["status"]})
        cells = _diff_cells(d.loc[k]) if d is not None and k in d.index else {"diff": "baseline" if k[1] == SOFTMAX else ""}
        for field, title in (("diff", "minus softmax (points)"), ("ci", "95% CI"), ("p", "paired t p"),
                             ("p_holm", "Holm p"), ("tost_p", "TOST p"), ("mde", "MDE"), ("verdict", "verdict")):
            row[title] = cells.get(field, "")
        rows.append(row)
    return pd.DataFrame(rows)


# --- what N is, read from the models --------------------------------------------------------

def _built(model: str, image_size: int, patch_size: int, n_rule: Optional[str], in_chans: int, num_classes: int):
    import torch

    from ..models import timm_zoo
    from ..models.timm_adapters import adapt

    with torch.device("meta"):        # shapes only: no memory, no weights
        return adapt(timm_zoo.create(model, int(image_size), int(patch_size), in_chans, num_classes), n_rule=n_rule)


def _patch_tokens(net, image_size: int, patch_size: int) -> int:
    pe = net.patch_embed
    grid = pe.grid_size if hasattr(pe, "grid_size") else (image_size // patch_size, image_size // patch_size)
    return int(grid[0] * grid[1])


def attention_layers(model: str, image_size: int, patch_size: int, n_rule: Optional[str] = None,
                     in_chans: int = 3, num_classes: int = 10) -> pd.DataFrame:
    """One row per adapted attention module of the timm model ``"timm:NAME"``: ``layer``,
    ``module`` (the adapted class), ``heads``, ``width`` and ``n``, the N that the module's
    x^p/sqrt(N) uses, read from the module (the window's token count for Swin, under the shift
    mask the largest a row sees; d_h or the patch tokens for XCiT's XCA; every token, prefix
    tokens included, for ViT/DeiT; patch tokens + CLS for class attention)."""
    rows, n_params, patches, tokens = _layers(model, int(image_size), int(patch_size), n_rule, int(in_chans), int(num_classes))
    out = pd.DataFrame(list(rows), columns=["layer", "module", "heads", "width", "n"])
    out.attrs["n_params"] = n_params
    out.attrs["patch_tokens"] = patches
    out.attrs["tokens"] = tokens
    return out


@functools.lru_cache(maxsize=32)
def _layers(model: str, image_size: int, patch_size: int, n_rule: Optional[str], in_chans: int,
            num_classes: int) -> tuple[tuple, int, int, int]:
    from ..models.timm_adapters import adapted_modules

    net = _built(model, image_size, patch_size, n_rule, in_chans, num_classes)
    patches = _patch_tokens(net, image_size, patch_size)
    tokens = patches + int(getattr(net, "num_prefix_tokens", 0))     # what the first layer's input holds
    rows = []
    for i, m in enumerate(adapted_modules(net)):
        kind = type(m).__name__
        width = m.qkv.in_features if hasattr(m, "qkv") else m.q.in_features
        if kind == "PolyWindowAttention":
            n = int(m.window_area)
        elif kind == "PolyXCA":
            n = width // m.num_heads if m.n_rule == "channels" else patches
        elif kind == "PolyClassAttn":
            n = patches + 1
        else:
            n = tokens
        rows.append((i, kind, int(m.num_heads), int(width), n))
    return tuple(rows), int(sum(p.numel() for p in net.parameters())), patches, tokens


def _join(values) -> str:
    return "/".join(str(v) for v in dict.fromkeys(values))


def attention_n_table(configs, fixed_c: float = 1 / 14, in_chans: int = 3, num_classes: int = 10) -> pd.DataFrame:
    """N per architecture (and XCiT's N rule) of a grid's configs, read from the built models.

    Columns: ``architecture``, ``model``, ``input`` (px), ``patch``, ``n_rule``, ``tokens`` (of
    the first attention layer, from :func:`polyattn.models.timm_zoo.attention_lengths`),
    ``module`` (the attention of the main layers), ``runs over`` (what a row normalises over),
    ``N`` (the first layer's, as the grid's records store it in ``seq_lens``), ``N per layer`` (every distinct N
    of the main layers), ``other layers`` (class attention and its N), ``1/sqrt(N)`` and
    ``fixed / own`` (the fixed constant ``fixed_c`` over 1/sqrt(N): how much smaller the paper's
    x^3/14 makes the weights than x^3/sqrt(N)), ``n_params`` (with ``in_chans`` and ``num_classes``)."""
    rows, seen = [], set()
    for c in configs:
        n_rule = (c.options or {}).get("n_rule")
        key = (c.model, c.image_size, c.patch_size, n_rule)
        if key in seen:
            continue
        seen.add(key)
        layers = attention_layers(c.model, c.image_size, c.patch_size, n_rule, in_chans, num_classes)
        main = layers[layers["module"] == layers["module"].iloc[0]]
        other = layers[layers["module"] != layers["module"].iloc[0]]
        n = int(main["n"].iloc[0])
        other_text = "; ".join(f"{len(g)} x {kind.removeprefix('Poly')} (N = {_join(g['n'])})"
                               for kind, g in other.groupby("module", sort=False)) or "none"
        rows.append({"architecture": architecture_of(c), "model": c.model.removeprefix("timm:"),
                     "input": c.image_size, "patch": c.patch_size,
                     "n_rule": n_rule or ("channels" if main["module"].iloc[0] == "PolyXCA" else ""),
                     "tokens": layers.attrs["tokens"], "module": main["module"].iloc[0].removeprefix("Poly"),
                     "runs over": NORMALISES_OVER[main["module"].iloc[0]], "N": n, "N per layer": _join(main["n"]),
                     "other layers": other_text, "1/sqrt(N)": 1 / math.sqrt(n), "fixed / own": fixed_c * math.sqrt(n),
                     "n_params": layers.attrs["n_params"]})
    return pd.DataFrame(rows)


def model_text(model: str, image_size: int, patch_size: int, in_chans: int, num_classes: int) -> str:
    """The attention layers and parameter count of a timm model, read from the built model."""
    layers = attention_layers(model, image_size, patch_size, None, in_chans, num_classes)
    parts = [f"{len(g)} {kind.removeprefix('Poly')} (width {_join(g['width'])}, heads {_join(g['heads'])})"
             for kind, g in layers.groupby("module", sort=False)]
    n = layers.attrs["n_params"]
    size = f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.0f}k"
    return f"{model.removeprefix('timm:')}: " + ", ".join(parts) + f"; {size} parameters"


# --- the setup, read from the grids ---------------------------------------------------------

def _by_architecture(configs, value) -> str:
    """One value per architecture, collapsed: "v" when all agree, else "v1 (vit, deit); v2 (swin)"."""
    groups: dict = {}
    for c in configs:
        groups.setdefault(str(value(c)), [])
        arch = architecture_of(c)
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
                paper_chans: int = 3, paper_classes: int = 1000) -> pd.DataFrame:
    """The paper preset's setting against the book preset's, field by field, per architecture
    where they differ; every cell read from the two grids (and the models they build)."""
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
        return _join(sorted({len(s) for s in counts.values()}))

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
        ("activations", lambda c: variant_label(c), lambda c: variant_label(c)),
    ]
    rows = []
    for name, p_value, b_value in fields:
        if name == "activations":
            rows.append((name, ", ".join(dict.fromkeys(variant_label(c) for c in paper)),
                         ", ".join(dict.fromkeys(variant_label(c) for c in book))))
            continue
        rows.append((name, _by_architecture(paper, p_value), _by_architecture(book, b_value)))
    rows.append(("seeds per configuration", seeds(paper), seeds(book)))
    return pd.DataFrame(rows, columns=["", "paper preset (not run)", "book preset"])


def paper_recipe_table(paper_configs) -> pd.DataFrame:
    """One row per architecture of the paper preset: timm model, input, patch, N and the recipe."""
    rows, seen = [], set()
    for c in paper_configs:
        if c.model in seen:
            continue
        seen.add(c.model)
        rows.append({"architecture": architecture_of(c), "timm model": c.model.removeprefix("timm:"),
                     "input (px)": c.image_size, "patch": c.patch_size, "N": c.seq_len, "epochs": c.epochs,
                     "batch": c.batch_size, "lr": c.lr, "weight decay": c.weight_decay, "warm-up": c.warmup_epochs,
                     "label smoothing": c.label_smoothing, "drop path": c.drop_path, "augmentation": c.augment,
                     "dataset": c.dataset})
    return pd.DataFrame(rows)


# --- XCiT's two readings of N ---------------------------------------------------------------

def xcit_rule_equivalence(dim: int = 64, heads: int = 4, tokens: int = 64, seed: int = 0) -> dict:
    """XCiT's N = tokens is N = channels with the learned temperature times (N_tok / N_ch)^(1/6).

    XCA's weights are c (t S)^3 with S the cosine similarities of the head's channels, t the
    head's temperature and c = 1/sqrt(N); so c_tok (t S)^3 = c_ch (t' S)^3 for
    t' = t (c_tok / c_ch)^(1/3) = t (N_ch / N_tok)^(1/6).  Two XCA modules with the same weights,
    one per rule, the channel one with its temperature multiplied by that factor, are run on
    the same random tokens.  Returns ``n_channels``, ``n_tokens``, ``factor``, ``max_abs_diff``
    (with the factor) and ``max_abs_diff_without`` (without it), and ``output_scale`` (the
    largest output entry)."""
    import copy

    import torch
    from timm.models.xcit import XCA

    from ..models.timm_adapters import adapt
    from ..presets import generator

    gen = generator(seed, "xcit_rule_equivalence")
    torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    base = XCA(dim, num_heads=heads).eval()
    with torch.no_grad():
        base.temperature.uniform_(0.5, 1.5)
    x = torch.randn(2, tokens, dim, generator=gen)
    tok = adapt(torch.nn.Sequential(copy.deepcopy(base)), "poly:p=3", n_rule="tokens")
    chan = adapt(torch.nn.Sequential(copy.deepcopy(base)), "poly:p=3", n_rule="channels")
    n_ch, n_tok = dim // heads, tokens
    factor = (n_ch / n_tok) ** (1 / 6)
    with torch.no_grad():
        y_tok, y_plain = tok(x), chan(x)
        chan[0].temperature.mul_(factor)
        y_chan = chan(x)
    return {"n_channels": n_ch, "n_tokens": n_tok, "factor": factor,
            "max_abs_diff": float((y_tok - y_chan).abs().max()),
            "max_abs_diff_without": float((y_tok - y_plain).abs().max()),
            "output_scale": float(y_tok.abs().max())}
