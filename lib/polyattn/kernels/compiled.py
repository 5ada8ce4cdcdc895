"""The compiled path: attention with a power activation ``c * s^p`` in C++, tile by tile.

``csrc/causal_poly.cpp`` computes ``out_i = r_i * sum_{j visible} (q_i . k_j)^p v_j`` and
its backward pass with the loops of a flash-attention kernel: query blocks x key blocks
at or below the causal diagonal, score tiles in buffers kept between calls, the power,
its derivative and the mask in one pass over a tile, matrix products straight to BLAS.
Every scale is folded into the row scale ``r_i``: the activation's 1/sqrt(N_i) or c, and
the score scale 1/sqrt(d) as (1/sqrt(d))^p (for p <= 4; a higher power scales q first, as
the blocked path does, so that unscaled scores cannot overflow float32).

The same extension holds the causal linear form of p = 1 (:func:`causal_linear_attention`,
which :func:`polyattn.kernels.linear.linear_attention` takes on the CPU): chunks of queries,
the running state ``sum_j k_j v_j^T`` carried from chunk to chunk, the diagonal tile of each
chunk masked in place; the backward pass sweeps forward for dQ and backward for dK and dV.

The extension is compiled on first use with ``torch.utils.cpp_extension.load`` (g++ and
ninja, for this processor) into ``data/cache/torch_extensions`` (or
``$POLYATTN_CACHE/torch_extensions``); a later process loads the built library (a rebuild
follows a change of the source).  When
the build fails, ``path="compiled"`` raises an error naming the cause and ``auto`` keeps
the blocked path.  ``POLYATTN_COMPILED=0`` keeps ``auto`` off the compiled path.
"""
from __future__ import annotations

import hashlib
import logging
import os
import platform
import threading
from pathlib import Path
from typing import Optional

import torch

from .. import activations as _acts
from ..data.cache import cache_root
from ._common import elementwise_kernel

Tensor = torch.Tensor

SOURCE = Path(__file__).resolve().parent / "csrc" / "causal_poly.cpp"
EXTENSION_NAME = "polyattn_causal_poly"
#: Query rows and keys per tile (measured on a 2-core x86 CPU, one thread, d = 32).
BLOCK_Q = 64
BLOCK_K = 256
#: Queries per chunk of the causal linear form of p = 1.
LINEAR_CHUNK = 64

_LOCK = threading.Lock()
_STATE: dict = {}


class CompiledUnavailable(RuntimeError):
    """The C++ extension of the compiled path could not be built or loaded."""


def _cpu_tag() -> str:
    """A short hash of the processor's model and flags: the library is built with -march=native,
    so a cache shared by different machines keeps one build per kind of processor."""
    info = platform.machine()
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
        info += "".join(sorted({ln for ln in lines if ln.startswith(("model name", "flags"))}))
    except OSError:
        info += platform.processor()
    return hashlib.sha256(info.encode()).hexdigest()[:12]


def build_directory() -> Path:
    return cache_root() / "torch_extensions" / f"{EXTENSION_NAME}-{_cpu_tag()}"


def _build():
    # importing cpp_extension warns that no CUDA runtime was found: irrelevant for a CPU extension
    log = logging.getLogger("torch.utils.cpp_extension")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        from torch.utils import cpp_extension
    finally:
        log.setLevel(level)

    if not SOURCE.is_file():
        raise FileNotFoundError(f"the source {SOURCE} is missing from the installed package")
    folder = build_directory()
    folder.mkdir(parents=True, exist_ok=True)
    return cpp_extension.load(name=EXTENSION_NAME, sources=[str(SOURCE)], build_directory=str(folder),
                              extra_cflags=["-O3", "-march=native"], verbose=False)


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:300]


def load_extension():
    """The built extension module; raises :class:`CompiledUnavailable` (one line) when it cannot be built.

    The build is tried once per process; a failure is remembered.
    """
    with _LOCK:
        if "module" not in _STATE and "error" not in _STATE:
            try:
                _STATE["module"] = _build()
            except Exception as exc:  # any failure of the toolchain means: no compiled path
                _STATE["error"] = _first_line(exc)
    if "error" in _STATE:
        raise CompiledUnavailable(
            f"path='compiled' needs the C++ extension {SOURCE.name}, which could not be built ({_STATE['error']}); "
            f"fix: install g++ and ninja (pip install ninja) and PyTorch's headers, or use path='blocked'")
    return _STATE["module"]


def available() -> bool:
    """Whether the extension is built (building it now if it was not tried yet)."""
    try:
        load_extension()
    except CompiledUnavailable:
        return False
    return True


def switched_off() -> bool:
    """Whether ``POLYATTN_COMPILED=0`` keeps ``auto`` (and the linear form) off the extension."""
    return os.environ.get("POLYATTN_COMPILED", "1") == "0"


def status() -> str:
    """What this process did with the extension, for a record's provenance (builds nothing):
    ``switched off`` (``POLYATTN_COMPILED=0``), ``loaded``, ``failed: <cause>`` or ``not loaded``
    (nothing asked for it)."""
    if switched_off():
        return "switched off"
    if "module" in _STATE:
        return "loaded"
    if "error" in _STATE:
        return f"failed: {_STATE['error']}"
    return "not loaded"


def auto_enabled() -> bool:
    """Whether ``auto`` may take the compiled path (``POLYATTN_COMPILED=0`` says no)."""
    return not switched_off() and available()


def power_degree(act) -> Optional[int]:
    """p when ``act`` is a power activation ``c * s^p`` the compiled path computes (poly), else None."""
    act = _acts.get(act)
    if act.family == "poly":
        return int(act.params["p"])
    return None


def check_supported(act, device: torch.device) -> None:
    """Raise ValueError unless the compiled path computes ``act`` on ``device``."""
    act = _acts.get(act)
    if power_degree(act) is None:
        raise ValueError(f"path='compiled' computes the power activations poly:p=P (integer P >= 1, scale 1/sqrt(N) "
                         f"or a constant c) only; activation is {act.spec!r}: use path='blocked' or 'auto'")
    if device.type != "cpu":
        raise ValueError(f"path='compiled' runs on the CPU only; the inputs are on {device}: use path='blocked' or 'auto'")


class CompiledPowerAttention(torch.autograd.Function):
    """``out = rs * (masked (Q K^T)^p) V`` on ``[B*H, N, d]`` float32 (the C++ kernel)."""

    @staticmethod
    def forward(ctx, q, k, v, rs, p, causal, offset, block_q, block_k):
        ext = load_extension()
        q, k, v, rs = q.contiguous(), k.contiguous(), v.contiguous(), rs.contiguous()
        ctx.save_for_backward(q, k, v, rs)
        ctx.args = (p, causal, offset, block_q, block_k)
        return ext.forward(q, k, v, rs, p, causal, offset, block_q, block_k)

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, rs = ctx.saved_tensors
        nq, nk, nv = ctx.needs_input_grad[:3]
        p, causal, offset, block_q, block_k = ctx.args
        dq, dk, dv = load_extension().backward(q, k, v, rs, grad_out.contiguous(), p, causal, offset, block_q,
                                               block_k, nq or nk, nv)
        return (dq if nq else None, dk if nk else None, dv if nv else None) + (None,) * 6


class CompiledCausalLinear(torch.autograd.Function):
    """``out = rs * (causal Q K^T) V`` on ``[B*H, N, d]`` float32 in time linear in N (the C++ kernel)."""

    @staticmethod
    def forward(ctx, q, k, v, rs, offset, chunk):
        ext = load_extension()
        q, k, v, rs = q.contiguous(), k.contiguous(), v.contiguous(), rs.contiguous()
        ctx.save_for_backward(q, k, v, rs)
        ctx.args = (offset, chunk)
        return ext.linear_forward(q, k, v, rs, offset, chunk)

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, rs = ctx.saved_tensors
        nq, nk, nv = ctx.needs_input_grad[:3]
        offset, chunk = ctx.args
        dq, dk, dv = load_extension().linear_backward(q, k, v, rs, grad_out.contiguous(), offset, chunk, nq, nk, nv)
        return (dq if nq else None, dk if nk else None, dv if nv else None) + (None,) * 3


def causal_linear_attention(q: Tensor, k: Tensor, v: Tensor, row_scale: Tensor, chunk: Optional[int] = None) -> Tensor:
    """Causal ``out_i = r_i * sum_{j <= i + Nk - Nq} (q_i . k_j) v_j`` on ``[B, H, N, d]`` float32 CPU tensors.

    The compiled form of :func:`polyattn.kernels.linear.linear_attention` for p = 1: ``row_scale``
    ``[B or 1, 1, Nq or 1, 1]`` is the whole scale of a row (the caller folds 1/sqrt(d) into it).
    """
    if q.device.type != "cpu" or q.dtype != torch.float32:
        raise ValueError(f"the compiled causal linear form takes float32 CPU tensors, got {q.dtype} on {q.device}")
    b, h, n_q, d = q.shape
    n_k, dv = k.shape[2], v.shape[3]
    chunk = int(chunk or LINEAR_CHUNK)
    if chunk < 1:
        raise ValueError(f"chunk must be positive, got {chunk}")
    rs = row_scale.to(torch.float32)
    rows = rs.shape[0]
    rs = rs.expand(rows, h, n_q, 1) if rows > 1 else rs.expand(1, 1, n_q, 1)
    rs = rs.reshape(-1, n_q)
    out = CompiledCausalLinear.apply(q.reshape(b * h, n_q, d), k.reshape(b * h, n_k, d), v.reshape(b * h, n_k, dv),
                                     rs, n_k - n_q, chunk)
    return out.view(b, h, n_q, dv)


def compiled_attention(q: Tensor, k: Tensor, v: Tensor, act, n: Tensor, causal: bool = True, offset: int = 0,
                       blocks: Optional[tuple[int, int]] = None) -> Tensor:
    """Attention on ``[B*H, N, d]`` float32 CPU tensors for a power activation ``act``.

    ``n``: N per row ``[B*H or 1, Nq or 1, 1]`` (as the blocked path takes it); padding keys
    must arrive with zeroed k and v rows (their scores are 0, and so are their weights).
    ``blocks``: (query rows, keys) per tile instead of (``BLOCK_Q``, ``BLOCK_K``).
    """
    act = _acts.get(act)
    check_supported(act, q.device)
    p = power_degree(act)
    bh, n_q, d = q.shape
    block_q, block_k = blocks if blocks is not None else (BLOCK_Q, BLOCK_K)
    if min(block_q, block_k) < 1:
        raise ValueError(f"blocks must be positive (query rows, keys), got {blocks}")
    kernel = elementwise_kernel(act)
    scale = d ** -0.5
    rs = kernel.row_scale(n).to(torch.float32)
    if kernel.degree:                     # unscaled scores stay far from overflow: scale after the power
        rs = rs * scale ** kernel.degree
    else:
        q = q * scale
    rs = rs.reshape(rs.shape[0], -1).expand(rs.shape[0], n_q)
    return CompiledPowerAttention.apply(q, k, v, rs, p, causal, offset, int(block_q), int(block_k))
