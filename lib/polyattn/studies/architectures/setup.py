"""Chapter 10's "What runs here, and what the paper ran": the book preset's setting in words and
the paper preset's, field by field, with its timm model and recipe per architecture:

    setup_values(preset); setup_table(preset); recipe_table()
"""
from __future__ import annotations

from typing import Optional

from ...analysis import architectures as arch
from ...book.deliver import styled
from ...presets import prologue
from .page import PAPER_NOTE, SMALL, readable


def _book_shape(preset: str) -> Optional[tuple]:
    """The image shape of the book's data set (a small subset is loaded: only its shape is read);
    None where the preset trains nothing."""
    from ...data import load_dataset
    from ...experiments import architectures as grids
    if not prologue(preset).trains:
        return None
    b0 = grids.table2("book")[0]
    return tuple(load_dataset(b0.dataset, 8, 8).train_x.shape)


def setup_values(preset: str) -> dict[str, str]:
    """The book's image size, epochs, training images and clipping; the paper preset's epochs."""
    from ...experiments import architectures as grids
    b0, p0 = grids.table2("book")[0], grids.table2("paper")[0]
    shape = _book_shape(preset)
    return {"book_px": f"{shape[-2]} × {shape[-1]}" if shape else prologue(preset, paper_note=PAPER_NOTE).not_run,
            "book_epochs": str(b0.epochs), "book_train": f"{b0.train_subset:,}", "book_clip": f"{b0.clip_grad:g}",
            "paper_epochs": str(p0.epochs)}


def setup_table(preset: str):
    """The paper preset's setting against the book preset's, field by field
    (:func:`polyattn.experiments.architectures.setup_table`), names as a reader knows them."""
    from ...experiments import architectures as grids

    shape = _book_shape(preset)
    table = grids.setup_table(grids.table2("book"), grids.table2("paper"), book_chans=int(shape[1]) if shape else 1)
    rows = [{k: readable(v) for k, v in r.items()} for r in table.to_dict("records")]
    return styled(rows, "The paper preset (ImageNet, listed for GPUs, not run) against the book preset, read from "
                        "the two grids and the models they build; a cell names the architectures where they differ")


def recipe_table():
    """The paper preset's timm model and recipe per architecture."""
    from ...experiments import architectures as grids

    recipe = arch.paper_recipe_table(grids.table2("paper"))
    recipe["augmentation"] = recipe["augmentation"].map(lambda a: "DeiT's" if a == "deit" else a)
    recipe["dataset"] = recipe["dataset"].map(readable)
    rows = arch.architecture_rows(recipe, [f for f in recipe.columns if f != "architecture"],
                                  {"lr": "AdamW learning rate", "warm-up": "warm-up epochs"})
    return styled(rows, "The paper preset per architecture: timm model and recipe (one recipe, DeiT's, for all four; "
                        "listed, not run)").set_table_styles(SMALL, overwrite=False)

