"""Chapter 10's "What each architecture's attention normalises over, and its N": N read from the
built models, the book preset's and the paper preset's, and XCiT's two readings of N as one layer
with two temperatures:

    n_table(); n_tables(); n_values(); xca_layer(); xcit_check_values(check)

:func:`n_facts` keeps what it reads while the page runs.
"""
from __future__ import annotations

from functools import lru_cache

import pandas as pd

from ...analysis import architectures as arch
from ...book.deliver import styled
from ...numbers import scientific, square_root
from .page import SMALL, architecture_name, readable


@lru_cache(maxsize=1)
def n_facts() -> tuple[pd.DataFrame, pd.DataFrame]:
    """N per architecture read from the built models (:func:`polyattn.models.timm_facts.attention_n_table`):
    the book preset's models (Fashion-MNIST: one channel, ten classes) and the paper preset's."""
    from ...experiments import architectures as grids
    from ...models import timm_facts

    return (timm_facts.attention_n_table(grids.table2("book"), in_chans=1),
            timm_facts.attention_n_table(grids.table2("paper"), num_classes=1000))


def n_tables() -> list:
    """The N tables of :func:`n_facts`, one column per architecture (and XCiT's reading of N)."""
    book, paper = n_facts()
    captions = ("N in the book's models (Fashion-MNIST, one channel; input in px after resizing)",
                "N in the paper preset's ImageNet models (224 px, three channels; built, not trained)")
    return [styled([{k: readable(v) for k, v in row.items()} for row in arch.architecture_rows(t, arch.N_FIELDS,
                                                                                                  arch.N_NAMES)],
                   caption).set_table_styles(SMALL, overwrite=False) for t, caption in zip((book, paper), captions)]


def _rule(value) -> str:
    """XCiT's reading of N ("channels", "tokens"), "" for the other architectures."""
    return value if isinstance(value, str) else ""


def n_table():
    """One row per architecture (and XCiT's reading of N): what a row of its attention runs over,
    its N in the book's model and in the paper preset's, and the paper's 1/14 over 1/√N in each
    (√N/14: below 1, x³/14 makes the weights smaller than x³/√N does)."""
    book, paper = n_facts()
    rows = []
    for _, b in book.iterrows():
        rule = _rule(b.get("n_rule"))
        p = paper[(paper["architecture"] == b["architecture"]) & (paper["n_rule"].map(_rule) == rule)].iloc[0]
        rows.append({"Architecture": architecture_name(b["architecture"]) + (f", N = {rule}" if rule else ""),
                     "A row of attention runs over": readable(b["runs over"]).replace("d_h", "dₕ"),
                     "N here": int(b["N"]),
                     "N, paper's model": int(p["N"]), "√N/14 here": f"{b['fixed / own']:.2f}",
                     "√N/14, paper's model": f"{p['fixed / own']:.2f}"})
    return styled(rows, "N read from the built models: the book's (Fashion-MNIST, one channel) and the paper preset's "
                        "ImageNet models (224 px, built, not trained); √N/14 is the paper's 1/14 over 1/√N. The folded "
                        "tables give every field").set_table_styles(SMALL, overwrite=False)


def n_values() -> dict:
    """N of each architecture in the book's and the paper's models, the square roots and ratios
    the text quotes, the paper's image and patch sizes, how much larger its models are and the
    book's models' parameters."""
    from ...experiments import architectures as grids
    book, paper = n_facts()
    vit_n, _ = arch.attention_n(book, "vit")
    vit_n_paper, _ = arch.attention_n(paper, "vit")
    swin_n, swin = arch.attention_n(book, "swin")
    swin_n_paper, swin_paper = arch.attention_n(paper, "swin")
    xcit_ch, xcit = arch.attention_n(book, "xcit", "channels")
    p0 = next(c for c in grids.table2("paper") if arch.architecture_of(c) == "vit")
    side = square_root(swin_n_paper)
    ratio = paper.groupby("architecture")["n_params"].max() / book.groupby("architecture")["n_params"].max()
    return {"vit_n": vit_n, "vit_n_paper": vit_n_paper, "vit_root_paper": square_root(vit_n_paper),
            "swin_n": swin_n, "swin_tokens": int(swin["tokens"]), "swin_input": int(swin["input"]),
            "swin_n_paper": swin_n_paper, "swin_root_paper": square_root(swin_n_paper),
            "swin_window_paper": f"{side} × {side}" if "." not in side else f"{swin_n_paper}-token",
            "swin_fixed_ratio": f"{swin['fixed / own']:.2f}", "swin_fixed_ratio_paper": f"{swin_paper['fixed / own']:.2f}",
            "xcit_ch": xcit_ch, "xcit_tok": arch.attention_n(book, "xcit", "tokens")[0],
            "xcit_ch_paper": arch.attention_n(paper, "xcit", "channels")[0],
            "xcit_tok_paper": arch.attention_n(paper, "xcit", "tokens")[0],
            "xcit_other": str(xcit["other layers"]).replace(" x ", " × "),
            "paper_px": p0.image_size, "paper_patch": p0.patch_size,
            "paper_patches": (p0.image_size // p0.patch_size) ** 2,
            "param_ratio": f"{ratio.min():.0f} to {ratio.max():.0f}",
            "book_params": f"{book['n_params'].min() / 1e3:.0f} to {book['n_params'].max() / 1e3:.0f} thousand"}


def xca_layer() -> dict:
    """Width, heads and patch tokens of the book's XCiT's first cross-covariance layer."""
    from ...models import timm_facts

    book, _ = n_facts()
    _, row = arch.attention_n(book, "xcit", "channels")
    layers = timm_facts.attention_layers(f"timm:{row['model']}", row["input"], row["patch"], in_chans=1)
    xca = layers[layers["module"] == "PolyXCA"].iloc[0]
    return {"width": int(xca["width"]), "heads": int(xca["heads"]), "tokens": arch.attention_n(book, "xcit", "tokens")[0]}


def xcit_check_values(check: dict) -> dict[str, str]:
    return {"factor": f"{check['factor']:.3f}", "diff": scientific(check["max_abs_diff"]),
            "without": f"{check['max_abs_diff_without']:.2g}", "scale": f"{check['output_scale']:.2g}"}

