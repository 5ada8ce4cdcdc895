"""The compiled path (C++ extension) equals the naive reference, in values and gradients.

The accuracy rule is that of test_kernels: against a float64 naive reference, the float32
error may be at most twice the naive float32 path's error plus a floor.  Tests that need
the built extension are skipped, with the build error as the reason, where it cannot be
built; the fallback and error tests run everywhere.
"""

import pytest
import torch
from support.kernels import assert_matches_reference
from support.kernels import inputs as _inputs

from polyattn import kernels
from polyattn.attention import MultiHeadAttention, attention
from polyattn.kernels import choose_path, compiled, fused_attention
from polyattn.kernels import linear as linear_kernels


def _build_error():
    try:
        compiled.load_extension()
    except compiled.CompiledUnavailable as exc:
        return str(exc)
    return None


BUILD_ERROR = _build_error()
needs_extension = pytest.mark.skipif(BUILD_ERROR is not None, reason=f"C++ extension not built: {BUILD_ERROR}")

SPECS = ["poly:p=3", "poly:p=1", "poly:p=3,c=1/14", "poly:p=2"]
SHAPES = [
    dict(n_q=7, n_k=7, causal=True),                                # odd N
    dict(n_q=1, n_k=1, causal=True),                                # N = 1
    dict(n_q=13, n_k=13, causal=True, padded=True),
    dict(n_q=5, n_k=9, causal=True, padded=True),                   # queries aligned with the end
    dict(n_q=9, n_k=5, causal=True),                                # the first queries see nothing
    dict(n_q=11, n_k=11, causal=False, padded=True),
    dict(n_q=7, n_k=7, causal=False),                               # non-causal: odd N
    dict(n_q=1, n_k=1, causal=False),
    dict(n_q=5, n_k=9, causal=False, padded=True),                  # fewer queries than keys
    dict(n_q=9, n_k=5, causal=False, padded=True),                  # more queries than keys
]


@needs_extension
@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("n_mode", ["row", "fixed"])
@pytest.mark.parametrize("shape", range(len(SHAPES)))
def test_compiled_path_matches_naive(spec, n_mode, shape):
    assert_matches_reference(spec, "compiled", n_mode=n_mode, **SHAPES[shape])


# several query and key blocks: partial edge tiles, tiles the diagonal crosses, skipped tiles
@needs_extension
@pytest.mark.parametrize("spec", ["poly:p=3", "poly:p=1"])
@pytest.mark.parametrize("blocks", [(4, 8), (5, 3), (64, 7), (1, 1)])
@pytest.mark.parametrize("n_mode", ["row", "fixed"])
def test_compiled_tiling_matches_naive(spec, blocks, n_mode, monkeypatch):
    monkeypatch.setattr(compiled, "BLOCK_Q", blocks[0])
    monkeypatch.setattr(compiled, "BLOCK_K", blocks[1])
    assert_matches_reference(spec, "compiled", b=3, h=2, n_q=37, n_k=37, causal=True, n_mode=n_mode)
    assert_matches_reference(spec, "compiled", b=2, h=2, n_q=29, n_k=37, causal=True, padded=True, n_mode=n_mode)
    assert_matches_reference(spec, "compiled", b=3, h=2, n_q=37, n_k=37, causal=False, n_mode=n_mode)
    assert_matches_reference(spec, "compiled", b=2, h=2, n_q=29, n_k=37, causal=False, padded=True, n_mode=n_mode)


# the powers the book uses, with the scale 1/sqrt(N) and a constant, with and without a causal
# mask: padding (several padded keys, one sequence with a padded tail), every way of counting N,
# several tiles, values and the gradients of q, k and v against the naive path
POWERS = ["poly:p=1", "poly:p=2", "poly:p=3", "poly:p=1,c=1/14", "poly:p=2,c=1/14", "poly:p=3,c=1/14"]


@needs_extension
@pytest.mark.parametrize("spec", POWERS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n_mode", ["row", "fixed", "padded"])
def test_compiled_path_with_padding_matches_naive(spec, causal, n_mode, monkeypatch):
    assert_matches_reference(spec, "compiled", b=3, h=2, n_q=21, n_k=21, causal=causal, padded=True, n_mode=n_mode)
    monkeypatch.setattr(compiled, "BLOCK_Q", 8)
    monkeypatch.setattr(compiled, "BLOCK_K", 16)
    assert_matches_reference(spec, "compiled", b=3, h=2, n_q=53, n_k=53, causal=causal, padded=True, n_mode=n_mode,
                             seed=1)
    assert_matches_reference(spec, "compiled", b=2, h=2, n_q=19, n_k=45, causal=causal, padded=True, n_mode=n_mode,
                             seed=2)


@needs_extension
def test_higher_degree_scales_queries_first():
    # p > 4 scales q before the products (as the blocked path does): no float32 overflow
    assert_matches_reference("poly:p=5", "compiled", n_q=11, n_k=11, causal=True, padded=True)
    assert_matches_reference("poly:p=6,c=1/3", "compiled", n_q=11, n_k=11, causal=True)


@needs_extension
@pytest.mark.parametrize("spec", ["poly:p=3", "poly:p=1"])
def test_masked_keys_get_exactly_zero_weight(spec, monkeypatch):
    monkeypatch.setattr(compiled, "BLOCK_Q", 4)
    monkeypatch.setattr(compiled, "BLOCK_K", 6)
    q, k, v, _, kpm = _inputs(2, 3, 23, 23, 8, 5, 1, True)
    q, k, v = q.float(), k.float(), v.float()
    out = fused_attention(q, k, v, spec, key_padding_mask=kpm, causal=True, path="compiled")
    # changing future and padding keys changes no output bit
    k2, v2 = k.clone(), v.clone()
    k2[:, :, 15:] = 1e3 * torch.randn_like(k2[:, :, 15:])
    v2[:, :, 15:] = 1e3 * torch.randn_like(v2[:, :, 15:])
    pad = ~kpm[:, None, :, None]
    k2, v2 = torch.where(pad, -7.0, k2), torch.where(pad, 9.0, v2)
    out2 = fused_attention(q, k2, v2, spec, key_padding_mask=kpm, causal=True, path="compiled")
    assert torch.equal(out[:, :, :15], out2[:, :, :15])
    # and gets exactly zero gradient from the queries that cannot see it
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    fused_attention(*leaves, spec, causal=True, path="compiled")[:, :, :15].sum().backward()
    assert torch.count_nonzero(leaves[1].grad[:, :, 15:]) == 0
    assert torch.count_nonzero(leaves[2].grad[:, :, 15:]) == 0
    assert torch.count_nonzero(leaves[0].grad[:, :, 15:]) == 0
    assert torch.count_nonzero(leaves[1].grad[:, :, :15]) > 0


@needs_extension
@pytest.mark.parametrize("spec", ["poly:p=3", "poly:p=2", "poly:p=1,c=1/14"])
def test_padding_keys_get_exactly_zero_weight_without_a_causal_mask(spec, monkeypatch):
    monkeypatch.setattr(compiled, "BLOCK_Q", 4)
    monkeypatch.setattr(compiled, "BLOCK_K", 6)
    q, k, v, go, kpm = _inputs(2, 3, 23, 23, 8, 5, 1, True)
    q, k, v, go = q.float(), k.float(), v.float(), go.float()
    pad = ~kpm[:, None, :, None]
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    out = fused_attention(*leaves, spec, key_padding_mask=kpm, path="compiled")
    out.backward(go)
    # whatever the padding keys and values hold, no output bit changes
    k2, v2 = torch.where(pad, 1e3 * torch.randn_like(k), k), torch.where(pad, 1e3 * torch.randn_like(v), v)
    again = [t.clone().requires_grad_() for t in (q, k2, v2)]
    out2 = fused_attention(*again, spec, key_padding_mask=kpm, path="compiled")
    out2.backward(go)
    assert torch.equal(out, out2)
    assert torch.equal(leaves[0].grad, again[0].grad)
    # and they get exactly zero gradient, the others not
    for leaf in leaves[1:]:
        assert torch.count_nonzero(torch.where(pad, leaf.grad, 0.0)) == 0
        assert torch.count_nonzero(torch.where(pad, 0.0, leaf.grad)) > 0


@needs_extension
def test_partial_gradients_equal_the_full_ones_and_calls_repeat_exactly():
    q, k, v, go, _ = _inputs(2, 2, 19, 19, 8, 4, 2, False)
    q, k, v, go = q.float(), k.float(), v.float(), go.float()
    full = [t.clone().requires_grad_() for t in (q, k, v)]
    out = fused_attention(*full, "poly:p=3", causal=True, path="compiled")
    out.backward(go)
    for wanted in ("v", "qk", "q"):
        leaves = [t.clone().requires_grad_(name in wanted) for name, t in zip("qkv", (q, k, v))]
        again = fused_attention(*leaves, "poly:p=3", causal=True, path="compiled")
        again.backward(go)
        assert torch.equal(again, out)                    # same inputs, same numbers
        for name, leaf, ref in zip("qkv", leaves, full):
            assert (leaf.grad is None) == (name not in wanted)
            if leaf.grad is not None:
                assert torch.equal(leaf.grad, ref.grad)


# the causal linear form of p = 1 in C++ (taken by path="linear" when the extension builds) and in PyTorch
@needs_extension
@pytest.mark.parametrize("switch", ["1", "0"])
@pytest.mark.parametrize("chunk", [4, 7, 64])
@pytest.mark.parametrize("n_mode", ["row", "fixed"])
def test_causal_linear_form_matches_naive_in_both_implementations(switch, chunk, n_mode, monkeypatch):
    monkeypatch.setenv("POLYATTN_COMPILED", switch)
    monkeypatch.setattr(compiled, "LINEAR_CHUNK", chunk)
    monkeypatch.setitem(linear_kernels.CAUSAL_CHUNK, 1, chunk)
    for shape in SHAPES[:5]:
        assert_matches_reference("poly:p=1", "linear", b=2, h=2, n_mode=n_mode, **shape)
    assert_matches_reference("poly:p=1", "linear", b=3, h=2, n_q=37, n_k=37, causal=True, n_mode=n_mode)
    assert_matches_reference("poly:p=1,c=1/14", "linear", b=2, h=2, n_q=29, n_k=37, causal=True, padded=True)
    assert_matches_reference("poly:p=1", "linear", b=2, h=2, n_q=37, n_k=29, causal=True, padded=True)


@needs_extension
def test_compiled_causal_linear_form_is_taken_and_masks_exactly(monkeypatch):
    calls = []
    real = compiled.CompiledCausalLinear.apply
    monkeypatch.setattr(compiled.CompiledCausalLinear, "apply", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(compiled, "LINEAR_CHUNK", 4)
    q, k, v, _, kpm = _inputs(2, 3, 23, 23, 8, 5, 1, True)
    q, k, v = q.float(), k.float(), v.float()
    out = fused_attention(q, k, v, "poly:p=1", key_padding_mask=kpm, causal=True, path="linear")
    assert calls, "path='linear' did not take the compiled causal form"
    k2, v2 = k.clone(), v.clone()
    k2[:, :, 15:] = 1e3 * torch.randn_like(k2[:, :, 15:])
    v2[:, :, 15:] = 1e3 * torch.randn_like(v2[:, :, 15:])
    pad = ~kpm[:, None, :, None]
    k2, v2 = torch.where(pad, -7.0, k2), torch.where(pad, 9.0, v2)
    out2 = fused_attention(q, k2, v2, "poly:p=1", key_padding_mask=kpm, causal=True, path="linear")
    assert torch.equal(out[:, :, :15], out2[:, :, :15])
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    fused_attention(*leaves, "poly:p=1", causal=True, path="linear")[:, :, :15].sum().backward()
    for leaf in leaves:
        assert torch.count_nonzero(leaf.grad[:, :, 15:]) == 0
    assert torch.count_nonzero(leaves[1].grad[:, :, :15]) > 0
    # only some inputs need gradients: the same numbers for those
    for wanted in ("q", "k", "v"):
        part = [t.clone().requires_grad_(name == wanted) for name, t in zip("qkv", (q, k, v))]
        fused_attention(*part, "poly:p=1", causal=True, path="linear")[:, :, :15].sum().backward()
        got = dict(zip("qkv", part))[wanted].grad
        assert torch.equal(got, dict(zip("qkv", leaves))[wanted].grad)


def test_compiled_causal_linear_form_rejects_bad_input():
    q = torch.randn(1, 2, 5, 4, dtype=torch.float64)
    with pytest.raises(ValueError, match="float32 CPU"):
        compiled.causal_linear_attention(q, q, q, torch.ones(1, 1, 1, 1))
    with pytest.raises(ValueError, match="chunk must be positive"):
        compiled.causal_linear_attention(q.float(), q.float(), q.float(), torch.ones(1, 1, 1, 1), chunk=-1)


@needs_extension
def test_module_takes_the_compiled_path():
    torch.manual_seed(0)
    x = torch.randn(2, 10, 16)
    fast = MultiHeadAttention(16, 4, "poly:p=3", path="compiled")
    ref = MultiHeadAttention(16, 4, "poly:p=3", path="naive")
    ref.load_state_dict(fast.state_dict())
    torch.testing.assert_close(fast(x, causal=True), ref(x, causal=True), rtol=1e-5, atol=1e-6)


# --- choice and errors (no extension needed) ---------------------------------------------------

def test_auto_takes_the_compiled_path_for_powers_where_it_was_measured_faster():
    assert choose_path("poly:p=3", 1024, 1024, 32, causal=True, compiled=True) == "compiled"
    assert choose_path("poly:p=3,c=1/14", 64, 64, 32, causal=True, compiled=True) == "compiled"
    assert choose_path("poly:p=3", 8, 8, 32, causal=True, compiled=True) == "compiled"
    assert choose_path("poly:p=3", 1024, 1024, 32, causal=True, compiled=False) == "blocked"
    assert choose_path("sigmoid", 1024, 1024, 32, causal=True, compiled=True) == "blocked"
    assert choose_path("relu_n", 1024, 1024, 32, causal=False, compiled=True) == "blocked"
    # non-causal: where the blocked path would be taken, from COMPILED_MIN_KEYS keys, p <= 3
    low = kernels.COMPILED_MIN_KEYS
    assert choose_path("poly:p=3", 1024, 1024, 32, causal=False, compiled=True) == "compiled"
    assert choose_path("poly:p=3", 8192, 8192, 32, causal=False, compiled=True) == "compiled"
    assert choose_path("poly:p=3,c=1/14", 50, 50, 16, causal=False, compiled=True) == "compiled"
    assert choose_path("poly:p=3", low, low, 32, causal=False, compiled=True) == "compiled"
    assert choose_path("poly:p=3", 7, low, 32, causal=False, compiled=True) == "compiled"
    assert choose_path("poly:p=3", low - 1, low - 1, 32, causal=False, compiled=True) == "blocked"
    assert choose_path("poly:p=3", 1024, 1024, 32, causal=False, compiled=False) == "blocked"
    assert choose_path("poly:p=2", 1024, 1024, 32, causal=False, compiled=True) == "compiled"
    assert choose_path("poly:p=2", 4096, 4096, 32, causal=False, compiled=True) == "linear"
    assert choose_path("poly:p=1", 64, 64, 32, causal=False, compiled=True) == "linear"
    assert choose_path("poly:p=1", 1024, 1024, 32, causal=False, compiled=True) == "linear"
    assert kernels.COMPILED_MAX_DEGREE == 3
    assert choose_path("poly:p=4", 1024, 1024, 32, causal=False, compiled=True) == "blocked"
    assert choose_path("poly:p=4", 1024, 1024, 32, causal=True, compiled=True) == "compiled"
    assert choose_path("poly:p=1", 128, 128, 32, causal=True, compiled=True) == "compiled"
    assert choose_path("poly:p=1", 256, 256, 32, causal=True, compiled=True) == "linear"
    assert choose_path("poly:p=1", 1024, 1024, 32, causal=True, compiled=True) == "linear"
    assert choose_path("poly:p=2", 8192, 8192, 32, causal=True, compiled=True) == "linear"
    assert choose_path("poly:p=2", 1024, 1024, 32, causal=True, compiled=True) == "compiled"


def test_unsupported_activations_and_devices_raise():
    q = torch.randn(1, 2, 5, 4)
    for spec in ("sigmoid", "relu_n", "softmax"):
        with pytest.raises(ValueError, match="path='compiled' computes the power activations"):
            attention(q, q, q, spec, causal=True, path="compiled")
    with pytest.raises(ValueError, match="CPU only"):
        compiled.check_supported("poly:p=3", torch.device("meta"))
    with pytest.raises(ValueError, match="cannot be used while"):
        attention(q, q, q, "poly:p=3", causal=True, path="compiled", dropout=0.1)


def test_a_failed_build_raises_for_compiled_and_auto_falls_back(monkeypatch):
    monkeypatch.setattr(compiled, "_STATE", {"error": "RuntimeError: Ninja is required to load C++ extensions"})
    q, k, v, _, _ = _inputs(2, 2, 9, 9, 4, 4, 0, False)
    q, k, v = q.float(), k.float(), v.float()
    with pytest.raises(compiled.CompiledUnavailable, match="Ninja is required.*fix: install g\\+\\+ and ninja") as err:
        fused_attention(q, k, v, "poly:p=3", causal=True, path="compiled")
    assert "\n" not in str(err.value)
    assert not compiled.available()
    called = []
    monkeypatch.setattr(compiled, "compiled_attention", lambda *a, **kw: called.append(1))
    out = fused_attention(q, k, v, "poly:p=3", causal=True, path="auto")
    assert not called
    assert torch.equal(out, fused_attention(q, k, v, "poly:p=3", causal=True, path="blocked"))
    q, k, v, _, _ = _inputs(2, 2, kernels.COMPILED_MIN_KEYS, kernels.COMPILED_MIN_KEYS, 4, 4, 0, False)
    q, k, v = q.float(), k.float(), v.float()
    out = fused_attention(q, k, v, "poly:p=3", path="auto")
    assert not called
    assert torch.equal(out, fused_attention(q, k, v, "poly:p=3", path="blocked"))


def test_auto_tries_no_build_when_its_choice_needs_no_extension(monkeypatch):
    monkeypatch.setattr(compiled, "_STATE", {})
    monkeypatch.setattr(compiled, "_build", lambda: pytest.fail("the extension was built"))
    q, k, v, _, _ = _inputs(1, 2, 9, 9, 4, 4, 0, False)
    q, k, v = q.float(), k.float(), v.float()
    fused_attention(q, k, v, "poly:p=3", path="auto")         # fewer keys than COMPILED_MIN_KEYS: blocked
    fused_attention(q, k, v, "poly:p=1", path="auto")         # the linear form
    fused_attention(q, k, v, "relu_n", path="auto", causal=True)
    assert compiled.status() in ("not loaded", "switched off")


@needs_extension
def test_auto_uses_the_compiled_path_unless_switched_off(monkeypatch):
    q, k, v, _, _ = _inputs(2, 2, 9, 9, 4, 4, 0, False)
    q, k, v = q.float(), k.float(), v.float()
    real, called = compiled.compiled_attention, []
    monkeypatch.setattr(compiled, "compiled_attention", lambda *a, **kw: called.append(1) or real(*a, **kw))
    out = fused_attention(q, k, v, "poly:p=3", causal=True, path="auto")
    assert called == [1]
    assert torch.equal(out, fused_attention(q, k, v, "poly:p=3", causal=True, path="compiled"))
    monkeypatch.setenv("POLYATTN_COMPILED", "0")
    fused_attention(q, k, v, "poly:p=3", causal=True, path="auto")
    assert called == [1, 1]                               # only the explicit compiled call
    # without a causal mask, from COMPILED_MIN_KEYS keys: the same switch
    q, k, v, _, _ = _inputs(2, 2, kernels.COMPILED_MIN_KEYS, kernels.COMPILED_MIN_KEYS, 4, 4, 0, False)
    q, k, v = q.float(), k.float(), v.float()
    monkeypatch.delenv("POLYATTN_COMPILED")
    fused_attention(q, k, v, "poly:p=3", path="auto")
    assert called == [1, 1, 1]
    monkeypatch.setenv("POLYATTN_COMPILED", "0")
    out = fused_attention(q, k, v, "poly:p=3", path="auto")
    assert called == [1, 1, 1]
    assert torch.equal(out, fused_attention(q, k, v, "poly:p=3", path="blocked"))


@needs_extension
@pytest.mark.parametrize("spec", ["poly:p=3", "poly:p=3,c=1/14", "poly:p=2"])
@pytest.mark.parametrize("padded", [False, True])
def test_auto_takes_the_compiled_path_without_a_causal_mask_and_agrees_with_blocked(spec, padded, monkeypatch):
    # auto changes no number beyond float rounding: the compiled path against the blocked one
    # (which auto took before) and against the naive reference, values and gradients
    n = kernels.COMPILED_MIN_KEYS + 13
    real, called = compiled.compiled_attention, []
    monkeypatch.setattr(compiled, "compiled_attention", lambda *a, **kw: called.append(1) or real(*a, **kw))
    q, k, v, go, kpm = _inputs(2, 3, n, n, 16, 8, 3, padded)
    q, k, v, go = q.float(), k.float(), v.float(), go.float()
    results = {}
    for path in ("auto", "blocked"):
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        out = fused_attention(*leaves, spec, key_padding_mask=kpm, path=path)
        out.backward(go)
        results[path] = [out.detach()] + [t.grad for t in leaves]
    assert called == [1]                                  # auto took the compiled path, blocked did not
    for name, a, b in zip(("out", "dq", "dk", "dv"), results["auto"], results["blocked"]):
        scale = b.abs().max().item()
        torch.testing.assert_close(a, b, rtol=1e-5, atol=2e-6 * scale, msg=lambda m, name=name: f"{name}: {m}")
    assert_matches_reference(spec, "auto", b=2, h=3, n_q=n, n_k=n, d=16, dv=8, padded=padded, seed=3)
    # fewer keys than COMPILED_MIN_KEYS: the blocked path, bit for bit
    called.clear()
    short = [t[:, :, :kernels.COMPILED_MIN_KEYS - 1] for t in (q, k, v)]
    assert torch.equal(fused_attention(*short, spec, path="auto"), fused_attention(*short, spec, path="blocked"))
    assert called == []


@needs_extension
def test_module_takes_the_compiled_path_without_a_causal_mask_with_padding(monkeypatch):
    torch.manual_seed(0)
    n = kernels.COMPILED_MIN_KEYS + 5
    x = torch.randn(3, n, 32)
    kpm = torch.ones(3, n, dtype=torch.bool)
    kpm[1, n // 2:] = False
    kpm[2, ::3] = False
    real, called = compiled.compiled_attention, []
    monkeypatch.setattr(compiled, "compiled_attention", lambda *a, **kw: called.append(1) or real(*a, **kw))
    fast = MultiHeadAttention(32, 4, "poly:p=3")
    ref = MultiHeadAttention(32, 4, "poly:p=3", path="naive")
    ref.load_state_dict(fast.state_dict())
    torch.testing.assert_close(fast(x, key_padding_mask=kpm), ref(x, key_padding_mask=kpm), rtol=1e-5, atol=1e-6)
    assert called == [1]


@needs_extension
def test_several_threads_give_the_same_numbers():
    q, k, v, go, _ = _inputs(3, 2, 41, 41, 8, 4, 5, False)
    results, before = [], torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            leaves = [t.float().requires_grad_() for t in (q, k, v)]
            out = fused_attention(*leaves, "poly:p=3", causal=True, path="compiled")
            out.backward(go.float())
            results.append([out.detach()] + [t.grad for t in leaves])
    finally:
        torch.set_num_threads(before)
    for a, b in zip(*results):
        assert torch.equal(a, b)


@needs_extension
@pytest.mark.slow
def test_the_aten_route_for_a_torch_without_blas_gives_the_same_numbers():
    # where PyTorch exports no sgemm, the products go through at::mm_out: build that variant once
    import logging

    from torch.utils import cpp_extension

    logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)
    folder = compiled.build_directory().with_name(compiled.build_directory().name + "-aten-mm")
    folder.mkdir(parents=True, exist_ok=True)
    aten = cpp_extension.load(name="polyattn_causal_poly_aten_mm", sources=[str(compiled.SOURCE)],
                              build_directory=str(folder), extra_cflags=["-O3", "-DPOLYATTN_ATEN_MM"])
    blas = compiled.load_extension()
    assert not aten.blas_linked()
    g = torch.Generator().manual_seed(0)
    for n_q, n_k in [(37, 37), (9, 5), (5, 9), (1, 1)]:
        q, k, v = torch.randn(6, n_q, 8, generator=g), torch.randn(6, n_k, 8, generator=g), torch.randn(6, n_k, 5, generator=g)
        go, rs = torch.randn(6, n_q, 5, generator=g), torch.rand(6, n_q, generator=g)
        for p in (1, 3):
            args = (p, True, n_k - n_q, 4, 7)
            a = [blas.forward(q, k, v, rs, *args), *blas.backward(q, k, v, rs, go, *args, True, True)]
            b = [aten.forward(q, k, v, rs, *args), *aten.backward(q, k, v, rs, go, *args, True, True)]
            for x, y in zip(a, b):
                torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-6)


@needs_extension
def test_a_row_scale_that_needs_a_gradient_keeps_the_pytorch_form():
    q, k, v = (torch.randn(1, 2, 9, 4) for _ in range(3))
    rs = torch.full((1, 1, 9, 1), 0.5, requires_grad=True)
    out = linear_kernels.linear_attention(q, k, v, 1, rs, causal=True)
    out.sum().backward()
    assert rs.grad is not None and torch.count_nonzero(rs.grad) > 0
    fixed = linear_kernels.linear_attention(q, k, v, 1, rs.detach(), causal=True)
    torch.testing.assert_close(fixed, out.detach(), rtol=1e-5, atol=1e-6)
