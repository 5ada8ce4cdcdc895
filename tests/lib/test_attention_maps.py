"""Training a configuration for its attention maps, and the CLS token's weights on the patches."""
import pytest
import torch

from polyattn.attention_maps import cls_attention
from polyattn.experiments import vit
from polyattn.train import train_with_model


def test_cls_attention_shapes_and_softmax_mass():
    from polyattn.models import build_vit

    torch.manual_seed(0)
    model = build_vit("micro", image_size=28, patch_size=7, in_chans=1, num_classes=10, activation="softmax").eval()
    x = torch.randn(2, 1, 28, 28)
    grid = cls_attention(model, x, layer=1)
    assert grid.shape == (2, 4, 4, 4)
    assert (grid >= 0).all() and (grid.sum((-2, -1)) <= 1 + 1e-5).all()
    poly = build_vit("micro", image_size=28, patch_size=7, in_chans=1, num_classes=10, activation="poly:p=3").eval()
    assert (cls_attention(poly, x, layer=0) < 0).any()     # negative weights are kept


def test_attention_map_config_uses_table1_recipe():
    cfg = vit.attention_map_config("poly:p=3", "smoke")
    base = vit.table1("smoke")[0]
    assert cfg.activation == "poly:p=3" and cfg.patch_size == base.patch_size and cfg.lr == base.lr
    assert cfg.probe_every == 0 and cfg.experiment == "vit_attention_maps"
    with pytest.raises(ValueError, match="paper"):
        vit.attention_map_config("softmax", "paper")


def test_train_with_model_returns_the_trained_model_in_eval_mode():
    cfg = vit.attention_map_config("poly:p=3", "smoke").replace(train_subset=64, test_subset=32, batch_size=32)
    rec, model = train_with_model(cfg)
    assert "model" not in rec and rec["status"] == "ok"
    assert not model.training
    rec2, model2 = train_with_model(cfg)                    # same seed, same weights
    for a, b in zip(model.parameters(), model2.parameters()):
        assert torch.equal(a, b)
    grid = cls_attention(model, torch.randn(3, 1, 28, 28), layer=3)
    assert grid.shape == (3, 4, 7, 7)
