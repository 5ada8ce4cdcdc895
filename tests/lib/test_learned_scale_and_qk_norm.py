"""The learned-scale quadratic (g_h x^2 / sqrt(N), g_h per head) and QK-norm (LayerNorm on each
head's queries and keys): what they compute, that masks hold, and that their parameters train."""
import dataclasses
import math

import pytest
import torch

from polyattn.attention import Attend, MultiHeadAttention, attention
from polyattn.config import TrainConfig
from polyattn.models import build_vit
from polyattn.results import config_hash
from polyattn.train import make_optimizer


def test_the_head_factor_multiplies_each_heads_weights_and_outputs_on_every_path():
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 6, 4) for _ in range(3))
    pad = torch.ones(2, 6, dtype=torch.bool)
    pad[1, 4:] = False
    attend = Attend("poly_learned:p=2", heads=3)
    with torch.no_grad():
        attend.head_scale.copy_(torch.tensor([0.5, 1.0, 3.0]))
    ref = attention(q, k, v, "poly:p=2", key_padding_mask=pad, causal=True, path="naive")
    want = ref * torch.tensor([0.5, 1.0, 3.0]).view(1, 3, 1, 1)
    for path in ("naive", "auto", "blocked"):
        got = attention(q, k, v, attend, key_padding_mask=pad, causal=True, path=path)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    scores = q @ k.transpose(-1, -2) / 2
    w = attend(scores, pad[:, None, None, :])
    assert torch.all(w[1, :, :, 4:] == 0)
    n = pad.sum(-1).float().view(2, 1, 1)     # N = the visible keys of each sequence
    torch.testing.assert_close(w[:, 2], 3.0 * scores[:, 2] ** 2 / n.sqrt() * pad[:, None, :], rtol=1e-5,
                               atol=1e-6)


def test_the_head_factor_starts_at_one_so_the_scale_starts_at_one_over_sqrt_n():
    attend = Attend("poly_learned:p=2", heads=4)
    assert torch.equal(attend.head_scale.detach(), torch.ones(4))
    s = torch.randn(2, 4, 5, 5)
    torch.testing.assert_close(attend(s), s ** 2 / math.sqrt(5))


def test_a_learned_scale_without_the_number_of_heads_is_a_clear_error():
    with pytest.raises(ValueError, match="learns a scale per head"):
        Attend("poly_learned:p=2")


def test_the_head_factor_is_a_parameter_the_optimiser_trains_without_weight_decay():
    torch.manual_seed(0)
    cfg = TrainConfig(activation="poly_learned:p=2", weight_decay=0.5, lr=1e-2)
    model = build_vit("micro", activation=cfg.activation)
    opt = make_optimizer(model, cfg, "adamw")
    scales = [m.attend.head_scale for m in model.modules() if isinstance(m, MultiHeadAttention)]
    assert len(scales) == 4 and all(s.shape == (4,) for s in scales)
    ids = {id(s) for s in scales}
    groups = [(g["weight_decay"], {id(p) for p in g["params"]}) for g in opt.param_groups]
    assert any(ids <= params for wd, params in groups if wd == 0.0)
    assert not any(ids & params for wd, params in groups if wd > 0)
    before = [s.detach().clone() for s in scales]
    x, y = torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,))
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    assert all(not torch.equal(b, s.detach()) for b, s in zip(before, scales))


def test_the_probed_jacobian_carries_the_head_factor():
    from polyattn.probes import Recorder

    torch.manual_seed(0)
    model = build_vit("micro", activation="poly_learned:p=2")
    x = torch.randn(4, 1, 28, 28)

    def probe():
        with Recorder(model, metrics=("act_jac_fro",)) as rec:
            model(x)
        return {(r["layer"], r["head"]): r["value"] for r in rec.collect(0) if r["metric"] == "act_jac_fro"}

    base = probe()
    for m in model.modules():
        if isinstance(m, MultiHeadAttention):
            with torch.no_grad():
                m.attend.head_scale.fill_(2.0)
    doubled = probe()
    assert base and set(base) == set(doubled)
    for key, value in base.items():
        assert doubled[key] == pytest.approx(2 * value, rel=1e-4)


@pytest.mark.parametrize("spec", ["softmax", "poly:p=3", "poly:p=3,c=1", "poly_learned:p=2", "softpick"])
def test_qk_norm_normalises_each_heads_queries_and_keys_and_keeps_masks(spec):
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 2, spec, qk_norm=True)
    x = torch.randn(2, 5, 16) * 30
    pad = torch.ones(2, 5, dtype=torch.bool)
    pad[1, 3:] = False
    seen = {}

    def keep_scores(mod, args, out):
        seen.setdefault("scores", args[0])

    mha.attend.register_forward_hook(keep_scores)
    mha.attend.probed = True   # the naive path, so the scores are visible
    out = mha(x, key_padding_mask=pad)
    d = 8
    # unit-variance queries and keys (LayerNorm at init): |score| <= d / sqrt(d) = sqrt(d)
    assert seen["scores"].abs().max() <= math.sqrt(d) + 1e-4
    x2 = x.clone()
    x2[1, 3:] = 1e3       # padded tokens change: nothing visible may change
    out2 = mha(x2, key_padding_mask=pad)
    torch.testing.assert_close(out[:, :3], out2[:, :3])
    torch.testing.assert_close(out[0], out2[0])
    assert torch.isfinite(out).all()


def test_qk_norm_is_hashed_only_when_set_and_refused_where_it_is_not_implemented():
    base = TrainConfig()
    assert config_hash(base) == config_hash(dataclasses.replace(base, qk_norm=False))
    assert config_hash(base) != config_hash(base.replace(qk_norm=True))
    with pytest.raises(ValueError, match="qk_norm is implemented for the book's own ViTs"):
        TrainConfig(model="vit_tiny_patch16_224", qk_norm=True)
    model = build_vit("micro", qk_norm=True)
    names = [n for n, _ in model.named_parameters() if "q_norm" in n or "k_norm" in n]
    assert len(names) == 4 * 2 * 2   # 4 blocks, q and k, weight and bias


def test_a_record_keeps_where_each_learned_head_factor_ended():
    from polyattn.train import fit

    cfg = TrainConfig(activation="poly_learned:p=2", train_subset=64, test_subset=32, epochs=1, batch_size=32,
                      warmup_epochs=0.5, preset="smoke", threads=1)
    rec = fit(cfg, progress=False)
    scales = rec["learned_head_scales"]
    assert len(scales) == 4 and all(len(layer) == 4 for layer in scales)
    assert any(v != 1.0 for layer in scales for v in layer)
    plain = fit(cfg.replace(activation="poly:p=2"), progress=False)
    assert "learned_head_scales" not in plain
