"""Norms measured on a model: per head on a batch, at initialisation, and from training records."""
import json
import math

import torch

from polyattn import model_norms, theory
from polyattn.models.vit import build_vit

torch.set_num_threads(1)


def test_attention_norms_on_a_vit_restores_state_and_respects_softmax_bound():
    torch.manual_seed(0)
    model = build_vit("micro", activation="softmax", depth=2)
    model.train()
    x = torch.randn(3, 1, 28, 28)
    df = model_norms.attention_norms(model, x)
    assert len(df) == 2 * 4 and set(df.N) == {50}
    assert (df.fro_over_sqrt_n <= 1 + 1e-6).all() and (df.jac_over_sqrt_n <= 0.5 + 1e-6).all()
    assert model.training and not any(m.probed for m in model.modules() if hasattr(m, "probed"))
    poly = model_norms.init_model_norms(["poly:p=1"], seed=0, batch=2, depth=1)
    assert len(poly) == 4 and poly.gaussian_over_sqrt_n.notna().all()
    again = model_norms.init_model_norms(["poly:p=1"], seed=0, batch=2, depth=1)
    assert poly.equals(again)


def test_trained_norms_from_records(tmp_path):
    assert model_norms.trained_norms_from_records(str(tmp_path)).empty
    rec = {"schema": 1, "status": "ok", "seed": 0,
           "config": {"activation": "softmax", "image_size": 28, "patch_size": 4, "pool": "cls"},
           "probes": [{"step": 0, "layer": 0, "head": 0, "metric": "act_jac_fro", "value": 1.0},
                      {"step": 9, "layer": 0, "head": 0, "metric": "act_jac_fro", "value": 2.0},
                      {"step": 9, "layer": 0, "head": 0, "metric": "attn_fro_over_sqrt_n", "value": 0.3}]}
    (tmp_path / "a-seed0.json").write_text(json.dumps(rec))
    (tmp_path / "b-seed0.json").write_text(json.dumps({**rec, "status": "diverged"}))
    df = model_norms.trained_norms_from_records(str(tmp_path))
    assert set(df.metric) == {"act_jac_fro", "act_jac_fro_over_sqrt_n", "attn_fro_over_sqrt_n"}
    assert (df.step == 9).all() and (df.record == "a-seed0.json").all()
    assert math.isclose(df.set_index("metric").value["act_jac_fro_over_sqrt_n"], 2 / math.sqrt(50))


def test_the_measurements_live_in_model_norms_alone_which_builds_on_theory():
    for name in ("attention_norms", "init_model_norms", "trained_norms_from_records"):
        assert callable(getattr(model_norms, name)) and not hasattr(theory, name)
    assert model_norms.gaussian_elementwise_fro is theory.gaussian_elementwise_fro
