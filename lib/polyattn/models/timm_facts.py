"""What N is in each adapted timm model, read from the built models (chapter 10).

The adapters (:mod:`polyattn.models.timm_adapters`) give every timm attention a polyattn
activation; which keys a row of that attention runs over, and so the N of x^p/sqrt(N), differs
by architecture.  Here the models are built on the meta device (shapes only) and N is read
from each adapted module:

    attention_layers(model, image_size, patch_size)   # one row per adapted attention: module, heads, width, N
    attention_n_table(configs)                        # N per architecture (and XCiT's N rule) of a grid
    model_text(model, image_size, patch_size, ...)     # its attention layers and parameter count, in words
    xcit_rule_equivalence()                           # XCiT's N rules differ by a temperature factor, checked
"""
from __future__ import annotations

import functools
import math
from typing import Optional

import pandas as pd

from ..labels import architecture
from ..presets import generator
from . import timm_zoo

#: What a row of each adapted attention module runs over (the set softmax sums to one over).
NORMALISES_OVER = {
    "PolyAttention": "a query's row over every token, CLS included",
    "PolyWindowAttention": "a query's row over the tokens of its window (the shift mask hides other regions)",
    "PolyXCA": "a channel's row of the head's d_h x d_h cross-covariance matrix",
    "PolyClassAttn": "the CLS query's row over CLS and every patch token",
}


def _built(model: str, image_size: int, patch_size: int, n_rule: Optional[str], in_chans: int, num_classes: int):
    import torch

    from .timm_adapters import adapt

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
    from .timm_adapters import adapted_modules

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
        rows.append({"architecture": architecture(c), "model": c.model.removeprefix("timm:"),
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

    from .timm_adapters import adapt

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
