"""timm's ViT, DeiT, Swin and XCiT with polyattn activations: softmax reproduces timm, masked
keys of Swin's shifted windows get zero weight, probes see one call per block, N per
architecture is the documented one, and one config of each architecture trains."""
import copy
import subprocess
import sys

import pytest
import torch
from support.ci import require_module

timm = require_module("timm", "pip install timm==1.0.29, as in requirements.txt")

from polyattn import probes  # noqa: E402
from polyattn.models.timm_adapters import (  # noqa: E402
    PolyClassAttn,
    PolyWindowAttention,
    PolyXCA,
    adapt,
    adapted_modules,
)
from polyattn.models.timm_zoo import attention_lengths, build_timm  # noqa: E402

# Tiny configurations: (timm name, overrides, image size, attention blocks).
TINY = {
    "vit": ("vit_tiny_patch16_224", dict(img_size=16, patch_size=4, embed_dim=32, depth=2, num_heads=4), 16, 2),
    "vit_qknorm_reg": ("vit_tiny_patch16_224", dict(img_size=16, patch_size=4, embed_dim=32, depth=2, num_heads=4,
                                                    qk_norm=True, reg_tokens=2), 16, 2),
    "deit": ("deit_tiny_distilled_patch16_224", dict(img_size=16, patch_size=4, embed_dim=32, depth=2, num_heads=4),
             16, 2),
    "swin": ("swin_tiny_patch4_window7_224", dict(img_size=32, patch_size=2, embed_dim=16, depths=(2, 2),
                                                  num_heads=(2, 4), window_size=4), 32, 4),
    "xcit": ("xcit_nano_12_p8_224", dict(img_size=32, embed_dim=32, depth=2, num_heads=4, cls_attn_layers=1), 32, 3),
}


def _tiny(name):
    timm_name, kw, size, blocks = TINY[name]
    torch.manual_seed(0)
    net = timm.create_model(timm_name, pretrained=False, num_classes=5, in_chans=3, drop_path_rate=0.0, **kw)
    # non-trivial relative position biases, temperatures and norms (timm initialises some to 0 or 1)
    with torch.no_grad():
        for n, p in net.named_parameters():
            if "relative_position_bias_table" in n or "temperature" in n:
                p.normal_(0.5, 0.5)
    return net.eval(), torch.randn(3, 3, size, size, generator=torch.Generator().manual_seed(1)), blocks


@pytest.mark.parametrize("fused", [True, False], ids=["timm_sdpa", "timm_explicit"])
@pytest.mark.parametrize("name", list(TINY))
def test_softmax_reproduces_timm(name, fused):
    ref, x, _ = _tiny(name)
    for m in ref.modules():
        if hasattr(m, "fused_attn"):
            m.fused_attn = fused                        # timm's two code paths
    net = adapt(copy.deepcopy(ref), "softmax")
    assert adapted_modules(net) and not adapted_modules(ref)
    with torch.no_grad():
        want = ref(x)
        fast = net(x)                                   # nothing probes: SDPA
        with probes.capture(net, lambda *a: None):      # probed: the weights materialised
            probed = net(x)
    torch.testing.assert_close(fast, want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(probed, want, rtol=1e-5, atol=1e-5)
    # and so do the gradients
    ref(x).square().sum().backward()
    net(x).square().sum().backward()
    for (n, p), (_, q) in zip(ref.named_parameters(), net.named_parameters()):
        torch.testing.assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-6, msg=n)
    # the state dict is timm's: it loads into an unmodified model and back
    fresh = _tiny(name)[0]
    fresh.load_state_dict(net.state_dict())
    net.load_state_dict(ref.state_dict())


@pytest.mark.parametrize("name", list(TINY))
def test_polynomial_fast_and_probed_paths_agree_and_differ_from_softmax(name):
    ref, x, _ = _tiny(name)
    net = adapt(copy.deepcopy(ref), "poly:p=3")
    with torch.no_grad():
        fast = net(x)
        with probes.capture(net, lambda *a: None):
            probed = net(x)
        soft = ref(x)
    torch.testing.assert_close(fast, probed, rtol=1e-4, atol=1e-5)
    assert torch.isfinite(fast).all() and not torch.allclose(fast, soft, atol=1e-3)


@pytest.mark.parametrize("name", list(TINY))
def test_capture_sees_one_call_per_block(name):
    net, x, blocks = _tiny(name)
    adapt(net, "poly:p=3")
    calls = {}
    with probes.capture(net, lambda i, seen, out: calls.setdefault(i, []).append(seen.weights.shape)), torch.no_grad():
        net(x)
    assert sorted(calls) == list(range(blocks))
    assert all(len(v) == 1 for v in calls.values())
    maps = probes.record_attention_maps(net, x, layers=[0])
    assert maps.shape[0] == 1 and maps.shape[-1] == calls[0][0][-1]


def test_swin_shift_mask_gives_exactly_zero_weight():
    net, x, _ = _tiny("swin")
    adapt(net, "poly:p=3")
    seen_by_layer = {}
    with probes.capture(net, lambda i, seen, out: seen_by_layer.__setitem__(i, seen)), torch.no_grad():
        net(x)
    blocks = [b for stage in net.layers for b in stage.blocks]
    shifted = [i for i, b in enumerate(blocks) if b.attn_mask is not None]
    assert shifted == [1, 3]                                   # the second block of each stage
    for i in shifted:
        seen = seen_by_layer[i]
        w, vis = seen.weights, seen.mask.expand_as(seen.weights)
        assert (~vis).any() and vis.any()
        assert torch.equal(w[~vis], torch.zeros_like(w[~vis]))   # exactly zero, not -100 through x^3
        assert (w[vis] != 0).float().mean() > 0.99
        # the visibility is timm's own mask (0 = same region), window by window
        timm_mask = blocks[i].attn_mask                          # [nW, N, N]
        n_win = timm_mask.shape[0]
        torch.testing.assert_close(seen.mask[:n_win, 0], timm_mask == 0)
        torch.testing.assert_close(seen.mask[n_win:2 * n_win, 0], timm_mask == 0)


def _first_n(net, x, layer):
    out = {}
    with probes.capture(net, lambda i, seen, o: out.setdefault(i, seen), layers=[layer]), torch.no_grad():
        net(x)
    return out[layer]


def test_n_per_architecture():
    # ViT (16 patches + CLS), DeiT (+ CLS + distillation token), ViT with 2 registers
    for name, tokens in (("vit", 17), ("deit", 18), ("vit_qknorm_reg", 19)):
        net, x, _ = _tiny(name)
        adapt(net, "poly:p=3")
        assert float(_first_n(net, x, 0).n) == tokens
    # Swin: 4 x 4 windows hold 16 tokens; under the shift mask N counts the keys each row sees
    net, x, _ = _tiny("swin")
    adapt(net, "poly:p=3")
    assert all(isinstance(m, PolyWindowAttention) for m in adapted_modules(net))
    assert float(_first_n(net, x, 0).n) == 16
    seen = _first_n(net, x, 1)
    counts = seen.mask.sum(-1, keepdim=True).float()
    assert torch.equal(seen.n.expand_as(counts), counts) and counts.min() < 16 and counts.max() == 16
    assert sorted(set(counts.flatten().tolist())) == [4.0, 8.0, 16.0]     # region sizes within a window
    adapt(net, "poly:p=3", n_mode="fixed")
    assert float(_first_n(net, x, 1).n) == 16
    # XCiT: d_h = 32 / 4 = 8 channels, or (32 / 8)^2 = 16 patch tokens; class attention sees 16 + CLS
    net, x, _ = _tiny("xcit")
    adapt(net, "poly:p=3")
    assert isinstance(adapted_modules(net)[0], PolyXCA) and isinstance(adapted_modules(net)[-1], PolyClassAttn)
    seen = _first_n(net, x, 0)
    assert seen.weights.shape[-2:] == (8, 8) and float(seen.n) == 8
    assert float(_first_n(net, x, 2).n) == 17
    adapt(net, "poly:p=3", n_rule="tokens")
    assert float(_first_n(net, x, 0).n) == 16
    # the fixed 1/14 ignores N: the weights are the scores cubed over 14
    adapt(net, "poly:p=3,c=1/14")
    seen = _first_n(net, x, 0)
    torch.testing.assert_close(seen.weights, seen.scores.float() ** 3 / 14)


def test_attention_lengths_match_what_the_activation_sees():
    assert attention_lengths("timm:vit_micro", 28, 4) == {"seq_len": 50, "tokens": 50}
    assert attention_lengths("timm:swin_micro", 32, 2) == {"seq_len": 16, "tokens": 256}
    assert attention_lengths("timm:xcit_micro", 64, 8) == {"seq_len": 16, "tokens": 64}
    assert attention_lengths("timm:xcit_micro", 64, 8, "tokens") == {"seq_len": 64, "tokens": 64}
    assert attention_lengths("timm:swin_tiny_patch4_window7_224", 224, 4)["seq_len"] == 49
    model = build_timm("timm:xcit_micro", 64, 8, in_chans=1, num_classes=10, activation="poly:p=3").eval()
    seen = _first_n(model, torch.randn(2, 1, 28, 28), 0)        # 28 px images upsampled to 64
    assert float(seen.n) == 16 and seen.weights.shape[-1] == 16


def test_bad_arguments_are_clear_errors():
    net, _, _ = _tiny("vit")
    with pytest.raises(ValueError, match="no XCA module"):
        adapt(net, "poly:p=3", n_rule="tokens")
    with pytest.raises(ValueError, match="n_rule must be one of"):
        adapt(net, "poly:p=3", n_rule="heads")
    with pytest.raises(ValueError, match="no attention module"):
        adapt(torch.nn.Linear(2, 2), "poly:p=3")


def test_the_library_imports_without_timm():
    code = ("import sys; import polyattn, polyattn.models, polyattn.tasks, polyattn.experiments, polyattn.train; "
            "from polyattn.experiments import GRIDS; [c.hash for c in GRIDS['architectures_table2']('book')]; "
            "print('timm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_grid_and_one_training_step_per_architecture(tmp_path, monkeypatch):
    from polyattn.experiments import GRIDS, architectures
    from polyattn.train import fit

    book = GRIDS["architectures_table2"]("book")
    assert len(book) == 13 * 3 and len({c.hash for c in book}) == 13
    paper = GRIDS["architectures_table2"]("paper")
    assert {c.model for c in paper} == {s["model"] for s in architectures.PAPER_ARCHITECTURES.values()}
    assert {c.seq_len for c in paper} == {197, 49, 48, 196}
    smoke = GRIDS["architectures_table2"]("smoke")
    monkeypatch.setenv("POLYATTN_RESULTS", str(tmp_path))
    for arch in architectures.BOOK_ARCHITECTURES:
        cfg = next(c for c in smoke if architectures.architecture(c) == arch and c.activation == "poly:p=3")
        cfg = cfg.replace(train_subset=16, test_subset=16, batch_size=16, warmup_epochs=0.0, experiment="unit_timm")
        rec = fit(cfg, progress=False)
        assert rec["status"] == "ok" and rec["metrics"][0]["step"] == 1, arch
        assert rec["seq_lens"] == cfg.seq_lens
