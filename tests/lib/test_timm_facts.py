"""What N is in each adapted timm model, read from the built models, and the setup table of the
architectures grid that reads them."""
from __future__ import annotations

import numpy as np
import pytest
from support.ci import require_module

from polyattn.experiments.architectures import setup_table, table2
from polyattn.labels import ARCHITECTURE_VARIANTS, architecture
from polyattn.models import timm_facts

require_module("timm", "pip install timm==1.0.29, as in requirements.txt")

TOKENS = ARCHITECTURE_VARIANTS[-1]


def test_n_per_architecture_is_read_from_the_models():
    book = timm_facts.attention_n_table(table2("book"), in_chans=1).set_index(["architecture", "n_rule"])
    assert book.loc[("vit", ""), "N"] == 50 and book.loc[("vit", ""), "module"] == "Attention"
    assert book.loc[("swin", ""), "N"] == 16 and book.loc[("swin", ""), "N per layer"] == "16"
    assert book.loc[("swin", ""), "tokens"] == 256
    assert book.loc[("xcit", "channels"), "N"] == 16 and book.loc[("xcit", "tokens"), "N"] == 64
    assert book.loc[("xcit", "channels"), "other layers"] == "1 x ClassAttn (N = 65)"
    assert book.loc[("swin", ""), "fixed / own"] == pytest.approx(4 / 14)
    # the first layer's N and tokens are those the grid's configs (and so the records) carry
    for c in table2("book", seeds=[0]):
        row = book.loc[(architecture(c), (c.options or {}).get("n_rule") or
                        ("channels" if "xcit" in c.model else ""))]
        assert (row["N"], row["tokens"]) == (c.seq_lens["seq_len"], c.seq_lens["tokens"])
    paper = timm_facts.attention_n_table(table2("paper")).set_index(["architecture", "n_rule"])
    assert paper.loc[("swin", ""), "N"] == 49 and paper.loc[("swin", ""), "1/sqrt(N)"] == pytest.approx(1 / 7)
    assert paper.loc[("xcit", "channels"), "N"] == 48 and paper.loc[("xcit", "tokens"), "N"] == 196
    assert paper.loc[("vit", ""), "N"] == 197 and paper.loc[("swin", ""), "fixed / own"] == pytest.approx(0.5)


def test_model_text_counts_the_parameters_of_the_built_model():
    from polyattn.models.timm_zoo import build_timm

    real = sum(p.numel() for p in build_timm("timm:swin_micro", 32, 2, in_chans=1, num_classes=10).parameters())
    text = timm_facts.model_text("timm:swin_micro", 32, 2, in_chans=1, num_classes=10)
    assert text.startswith("swin_micro: 4 WindowAttention (width 32/64, heads 2/4)")
    assert text.endswith(f"; {real / 1e3:.0f}k parameters")


def test_setup_table_states_every_deviation_from_the_grids():
    t = setup_table(table2("book"), table2("paper")).set_index("")
    assert t.loc["data", "book preset"] == "fashion_mnist, 2,000 training / 2,000 test images (fixed subsets)"
    assert "imagenet" in t.loc["data", "paper preset (not run)"]
    assert t.loc["model input", "book preset"] == "28 px, 1 channel (vit, deit); 32 px, 1 channel (swin); 64 px, 1 channel (xcit)"
    assert t.loc["epochs", "book preset"] == "5" and t.loc["epochs", "paper preset (not run)"] == "300"
    assert t.loc["augmentation", "book preset"].startswith("none (vit, swin, xcit); DeiT's: RandAugment")
    assert t.loc["drop path", "book preset"] == "0 (vit, swin, xcit); 0.1 (deit)"
    assert t.loc["gradient clipping (max norm; 0 = off)", "book preset"] == "1"
    assert t.loc["seeds per configuration", "book preset"] == "3"
    assert TOKENS in t.loc["activations", "book preset"]


def test_xcit_n_rules_differ_by_a_temperature_factor():
    out = timm_facts.xcit_rule_equivalence(dim=32, heads=4, tokens=50)
    assert out["n_channels"] == 8 and out["n_tokens"] == 50
    assert out["factor"] == pytest.approx((8 / 50) ** (1 / 6))
    assert out["max_abs_diff"] < 1e-5 * max(1.0, out["output_scale"])
    assert out["max_abs_diff_without"] > 1e-3 * out["output_scale"]
    assert np.isfinite(out["output_scale"])
