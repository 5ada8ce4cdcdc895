"""Q/K-only weight decay and length-aware initialisation (the alternatives to the 1/sqrt(N) scale)."""
import pytest
import torch
from support.toy_tasks import register_toy_tasks

from polyattn import qk_controls
from polyattn.config import TrainConfig
from polyattn.models.blocks import Encoder
from polyattn.train import fit

register_toy_tasks()


def _encoder():
    torch.manual_seed(0)
    return Encoder(dim=16, depth=2, heads=2, activation="poly:p=3")


def _rows(model):
    return [(a.qkv.weight[:32].clone(), a.qkv.weight[32:].clone(), a.proj.weight.clone())
            for a in (blk.attn for blk in model)]


def test_length_aware_gain_gives_the_cube_the_scale_of_one_over_sqrt_n():
    for n, p in ((50, 3), (256, 3), (64, 1)):
        g = qk_controls.length_aware_gain(n, p)
        assert g ** (2 * p) == pytest.approx(n ** -0.5)
    with pytest.raises(ValueError, match="N >= 1 and p >= 1"):
        qk_controls.length_aware_gain(0, 3)


def test_init_scale_touches_the_query_and_key_rows_only():
    model = _encoder()
    before = _rows(model)
    qk_controls.scale_qk_init(model, 0.5)
    for (qk, v, proj), (qk2, v2, proj2) in zip(before, _rows(model)):
        assert torch.equal(qk2, 0.5 * qk) and torch.equal(v2, v) and torch.equal(proj2, proj)


def test_decay_step_turns_adamw_decay_into_the_qk_rate_exactly_when_the_update_is_zero():
    model = _encoder()
    before = _rows(model)
    lr, wd, qk = 0.01, 0.05, 2.0
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": wd}], lr=lr)
    for p in decay:
        p.grad = torch.zeros_like(p)          # Adam's update is zero: only the decay moves the weights
    opt.step()
    qk_controls.qk_decay_step(model, lr, wd, qk)
    for (q0, v0, _), (q1, v1, _) in zip(before, _rows(model)):
        assert torch.allclose(q1, q0 * (1 - lr * qk), rtol=1e-6, atol=0)
        assert torch.allclose(v1, v0 * (1 - lr * wd), rtol=1e-6, atol=0)


def test_a_model_without_library_attention_is_refused():
    with pytest.raises(ValueError, match="has no polyattn MultiHeadAttention"):
        qk_controls.scale_qk_init(torch.nn.Linear(3, 3), 0.5)


def test_config_checks_and_unchanged_hashes():
    base = TrainConfig(experiment="x", activation="poly:p=3,c=1")
    assert TrainConfig(experiment="x", activation="poly:p=3,c=1", qk_init_scale=1.0).hash == base.hash
    assert TrainConfig(experiment="x", activation="poly:p=3,c=1", qk_weight_decay=0.5).hash != base.hash
    with pytest.raises(ValueError, match="qk_init_scale must be positive"):
        TrainConfig(qk_init_scale=0.0)
    with pytest.raises(ValueError, match="qk_weight_decay needs optimizer 'adamw'"):
        TrainConfig(qk_weight_decay=0.5, optimizer="lbfgs")


def test_fit_applies_both_controls():
    kw = dict(experiment="unit_qk", preset="smoke", task="toy_seq", epochs=1, batch_size=32, lr=3e-3,
              warmup_epochs=0.0, threads=1, activation="poly:p=3,c=1")
    plain = fit(TrainConfig(**kw), progress=False, resume=False, return_model=True)["model"]
    decayed = fit(TrainConfig(**kw, qk_weight_decay=20.0), progress=False, resume=False, return_model=True)["model"]
    small = fit(TrainConfig(**kw, qk_init_scale=0.25), progress=False, resume=False, return_model=True)["model"]
    norm = lambda m: torch.stack([w.norm() for w in qk_controls.qk_weights(m)]).sum().item()
    assert norm(decayed) < 0.9 * norm(plain) and norm(small) < 0.5 * norm(plain)
