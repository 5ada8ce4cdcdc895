"""Exact linear-time attention for the polynomial activations of degree 1, 2 and 3.

For ``poly:p=1`` the weights are ``r_i * s_ij`` with ``s = q.k / sqrt(d)`` and a row
scale ``r_i`` (1/sqrt(N_i) or c), so

    out_i = r_i * sum_j (q_i . k_j) v_j = r_i * q_i (K^T V)

For ``poly:p=2``, ``(q.k)^2 = <phi(q), phi(k)>`` with the degree-2 feature map on the
symmetric half of ``q q^T``: ``phi(x) = (x_a x_b * c_ab)_{a <= b}``, ``c_aa = 1`` and
``c_ab = sqrt(2)`` off the diagonal, so ``d (d + 1) / 2`` features replace the N keys.
For ``poly:p=3`` the map runs over the monomials ``x_a x_b x_c`` (a <= b <= c, built as x_a times
a run of the row-major pairs x_b x_c, no gathers) with the square
root of their multinomial coefficient, ``C(d + 2, 3)`` features (5,984 at d = 32): by operation
count it pays off only for N in the thousands, so ``auto`` never takes it.

Causal masks (and the per-row N that comes with them) use chunked linear attention:
inside a chunk of ``C`` queries the weights are computed directly (``C x C``), across
chunks a running state ``sum_j phi(k_j) v_j^T`` is carried by a cumulative sum over
chunk states (for p = 1 on the CPU, the C++ extension of the compiled path carries the
state from chunk to chunk instead, when it builds).  Padding keys are zeroed
(``phi(0) = 0``), so they contribute exactly nothing.  The non-causal degree-2 form is an
autograd Function that builds the features chunk by chunk (and rebuilds them in backward);
the other forms are matrix products
differentiated by autograd, with a hand-written backward for the feature map.
"""
from __future__ import annotations

import functools
import math
from typing import Optional

import torch
import torch.nn.functional as F

from . import compiled as _compiled

Tensor = torch.Tensor

#: Degrees with an exact linear-time form.
LINEAR_DEGREES = (1, 2, 3)
#: Chunk length of the causal form, per degree (the intra-chunk C x C work against the
#: d_phi x d_v state per chunk).
CAUSAL_CHUNK = {1: 64, 2: 128, 3: 256}
#: Feature elements per chunk of the non-causal degree-2 form (all batch-heads).
FEATURE_CHUNK_ELEMENTS = 1 << 21

_QUARTIC_ROOT_2 = 2.0 ** 0.25


def monomial_count(d: int, p: int) -> int:
    """Features an exact degree-p map needs in d dimensions: the monomials of degree p,
    C(d + p - 1, p) (d for p = 1, d (d + 1) / 2 for p = 2, 5984 for p = 3 and d = 32)."""
    if d < 1 or p < 1:
        raise ValueError(f"monomial_count needs d >= 1 and p >= 1, got d={d}, p={p}")
    return math.comb(d + p - 1, p)


def feature_dim(d: int, p: int) -> int:
    """Number of features of the exact degree-p map (p = 1: d; p = 2: d (d + 1) / 2;
    p = 3: C(d + 2, 3))."""
    if p not in LINEAR_DEGREES:
        raise ValueError(f"no exact linear-time form for degree p={p}; degrees with one: {LINEAR_DEGREES}")
    return monomial_count(d, p)


@functools.lru_cache(maxsize=16)
def _degree3_layout(d: int) -> tuple[tuple[int, ...], Tensor]:
    """The layout of the degree-3 features: the pairs b <= c in row-major order start at
    ``pair_start[b]``; the triples a <= b <= c are, for each a, the pairs from ``pair_start[a]``
    on; ``coef`` (float64) holds the square roots of their multinomial coefficients in that
    order, so that ``sum_f phi_f(x) phi_f(y) = (x . y)^3``."""
    pair_start = tuple(sum(d - b for b in range(a)) for a in range(d + 1))
    coef = [math.sqrt(6 / math.prod(math.factorial(t.count(i)) for i in set(t)))
            for a in range(d) for b in range(a, d) for t in ((a, b, c) for c in range(b, d))]
    return pair_start, torch.tensor(coef, dtype=torch.float64)


def degree2_features(x: Tensor) -> Tensor:
    """``phi(x)`` with ``<phi(x), phi(y)> = (x . y)^2``; last dim d -> d (d + 1) / 2.

    The pairs a <= b are laid out diagonal by diagonal: first x_a^2, then for each
    offset t = 1..d-1 the products sqrt(2) x_a x_{a+t}.  Each diagonal is one product
    of two shifted slices (of x scaled by 2^(1/4), so the off-diagonal terms carry
    sqrt(2)); no gathers.  Differentiable.
    """
    d = x.shape[-1]
    y = x * _QUARTIC_ROOT_2
    return torch.cat([x * x] + [y[..., :d - t] * y[..., t:] for t in range(1, d)], dim=-1)


def _features_t(xt: Tensor, out: Tensor) -> Tensor:
    """:func:`degree2_features` in the transposed layout ``[g, d, c] -> [g, F, c]``.

    Each diagonal is a product of two row blocks whose rows run along the sequence,
    so every operation is long and contiguous.
    """
    d = xt.shape[1]
    torch.mul(xt, xt, out=out[:, :d])
    yt = xt * _QUARTIC_ROOT_2
    off = d
    for t in range(1, d):
        torch.mul(yt[:, :d - t], yt[:, t:], out=out[:, off:off + d - t])
        off += d - t
    return out


def _features_t_backward(xt: Tensor, grad_t: Tensor) -> Tensor:
    """d(loss)/dx ``[g, d, c]`` from d(loss)/d(phi) ``[g, F, c]`` (transposed layout)."""
    d = xt.shape[1]
    yt = xt * _QUARTIC_ROOT_2
    dyt = torch.zeros_like(xt)
    off = d
    for t in range(1, d):
        g = grad_t[:, off:off + d - t]
        dyt[:, :d - t].addcmul_(g, yt[:, t:])
        dyt[:, t:].addcmul_(g, yt[:, :d - t])
        off += d - t
    dxt = grad_t[:, :d] * xt
    dxt.mul_(2.0)
    return dxt.add_(dyt, alpha=_QUARTIC_ROOT_2)


def _pairs_t(xt: Tensor, pair_start) -> Tensor:
    """``x_b x_c`` for the pairs b <= c in row-major order: ``[g, d, c] -> [g, d (d + 1) / 2, c]``."""
    d = xt.shape[1]
    pairs = xt.new_empty(xt.shape[0], pair_start[d], xt.shape[2])
    for b in range(d):
        torch.mul(xt[:, b:], xt[:, b:b + 1], out=pairs[:, pair_start[b]:pair_start[b + 1]])
    return pairs


def _degree3_features_t(xt: Tensor, out: Tensor) -> Tensor:
    """The degree-3 features in the transposed layout ``[g, d, c] -> [g, F, c]``: each block of
    triples a <= b <= c is ``x_a`` times a contiguous run of the pairs, so every operation is one
    long product (no gathers)."""
    d = xt.shape[1]
    pair_start, coef = _degree3_layout(d)
    pairs = _pairs_t(xt, pair_start)
    off = 0
    for a in range(d):
        block = pairs[:, pair_start[a]:]
        torch.mul(block, xt[:, a:a + 1], out=out[:, off:off + block.shape[1]])
        off += block.shape[1]
    return out.mul_(coef.to(xt)[None, :, None])


def _degree3_features_t_backward(xt: Tensor, grad_t: Tensor) -> Tensor:
    """d(loss)/dx ``[g, d, c]`` from d(loss)/d(phi) ``[g, F, c]`` for :func:`_degree3_features_t`."""
    d = xt.shape[1]
    pair_start, coef = _degree3_layout(d)
    pairs = _pairs_t(xt, pair_start)
    g = grad_t * coef.to(xt)[None, :, None]
    dxt = torch.zeros_like(xt)
    dpairs = torch.zeros_like(pairs)
    off = 0
    for a in range(d):
        block, n = pairs[:, pair_start[a]:], pairs.shape[1] - pair_start[a]
        ga = g[:, off:off + n]
        dxt[:, a] += (ga * block).sum(1)
        dpairs[:, pair_start[a]:].addcmul_(ga, xt[:, a:a + 1])
        off += n
    for b in range(d):
        rows = dpairs[:, pair_start[b]:pair_start[b + 1]]          # d(loss)/d(x_b x_c), c >= b
        dxt[:, b] += (rows * xt[:, b:]).sum(1)
        dxt[:, b:].addcmul_(rows, xt[:, b:b + 1])
    return dxt


def _feature_map_t(xt: Tensor, p: int, out: Tensor) -> Tensor:
    return _features_t(xt, out) if p == 2 else _degree3_features_t(xt, out)


def _feature_map_t_backward(xt: Tensor, grad_t: Tensor, p: int) -> Tensor:
    return _features_t_backward(xt, grad_t) if p == 2 else _degree3_features_t_backward(xt, grad_t)


def features(x: Tensor, p: int) -> Tensor:
    """The exact degree-p feature map of ``[..., N, d]`` (p = 1: identity), differentiable."""
    if p == 1:
        return x
    feature_dim(x.shape[-1], p)   # raises for degrees without an exact form
    return _Features.apply(x, p)


#: Sequence positions per chunk of the non-causal degree-2 form.
FEATURE_CHUNK_POSITIONS = 1024


def _tiles(bh: int, n: int, f: int):
    """(b0, b1, i0, i1) chunks with at most ``FEATURE_CHUNK_ELEMENTS`` features each."""
    c = min(n, FEATURE_CHUNK_POSITIONS)
    g = max(1, min(bh, FEATURE_CHUNK_ELEMENTS // (f * c)))
    for b0 in range(0, bh, g):
        for i0 in range(0, n, c):
            yield b0, min(bh, b0 + g), i0, min(n, i0 + c)


class _Features(torch.autograd.Function):
    """``[..., N, d] -> [..., N, F]``: the degree-p features (p = 2 or 3), computed in the
    transposed layout (long contiguous rows) and with a hand-written backward."""

    @staticmethod
    def forward(ctx, x, p):
        lead, (n, d) = x.shape[:-2], x.shape[-2:]
        xt = x.reshape(-1, n, d).transpose(1, 2).contiguous()
        ctx.save_for_backward(xt)
        ctx.p = p
        out_t = _feature_map_t(xt, p, x.new_empty(xt.shape[0], feature_dim(d, p), n))
        return out_t.transpose(1, 2).reshape(*lead, n, out_t.shape[1])

    @staticmethod
    def backward(ctx, grad):
        (xt,) = ctx.saved_tensors
        g = grad.reshape(xt.shape[0], xt.shape[2], -1).transpose(1, 2).contiguous()
        dxt = _feature_map_t_backward(xt, g, ctx.p)
        return dxt.transpose(1, 2).reshape(*grad.shape[:-1], xt.shape[1]), None


def _rows_t(x: Tensor, b0: int, b1: int, i0: int, i1: int) -> Tensor:
    """Rows i0:i1 of heads b0:b1 as a contiguous ``[g, d, c]`` block."""
    return x[b0:b1, i0:i1].transpose(1, 2).contiguous()


class FeatureMapAttention(torch.autograd.Function):
    """Non-causal ``out = phi(Q) (phi(K)^T V)`` on ``[BH, N, d]`` float32, for the degree-p
    feature map (p = 2 or 3).

    Features are built chunk by chunk in the transposed layout ``[g, F, c]`` (and
    rebuilt in backward), so memory stays O(N d + chunk + F d_v) with F features
    and every elementwise operation runs along the sequence.
    """

    @staticmethod
    def forward(ctx, q, k, v, p):
        bh, n_q, d = q.shape
        n_k, dv = k.shape[1], v.shape[2]
        f = feature_dim(d, p)
        state = q.new_zeros(bh, f, dv)
        for b0, b1, i0, i1 in _tiles(bh, n_k, f):
            phi_t = _feature_map_t(_rows_t(k, b0, b1, i0, i1), p, q.new_empty(b1 - b0, f, i1 - i0))
            state[b0:b1].baddbmm_(phi_t, v[b0:b1, i0:i1])
        out = q.new_empty(bh, n_q, dv)
        for b0, b1, i0, i1 in _tiles(bh, n_q, f):
            phi_t = _feature_map_t(_rows_t(q, b0, b1, i0, i1), p, q.new_empty(b1 - b0, f, i1 - i0))
            torch.bmm(phi_t.transpose(1, 2), state[b0:b1], out=out[b0:b1, i0:i1])
        ctx.save_for_backward(q, k, v, state)
        ctx.p = p
        return out

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, state = ctx.saved_tensors
        p = ctx.p
        bh, n_q, d = q.shape
        n_k = k.shape[1]
        f = feature_dim(d, p)
        grad_out = grad_out.contiguous()
        need_q, need_k, need_v = ctx.needs_input_grad[:3]
        dq = torch.empty_like(q) if need_q else None
        dk = torch.empty_like(k) if need_k else None
        dv = torch.empty_like(v) if need_v else None
        dstate = torch.zeros_like(state)
        for b0, b1, i0, i1 in _tiles(bh, n_q, f):
            qt = _rows_t(q, b0, b1, i0, i1)
            go = grad_out[b0:b1, i0:i1]
            phi_t = _feature_map_t(qt, p, q.new_empty(b1 - b0, f, i1 - i0))
            dstate[b0:b1].baddbmm_(phi_t, go)
            if need_q:
                gphi_t = torch.bmm(state[b0:b1], go.transpose(1, 2), out=phi_t)
                dq[b0:b1, i0:i1] = _feature_map_t_backward(qt, gphi_t, p).transpose(1, 2)
        for b0, b1, i0, i1 in _tiles(bh, n_k, f):
            kt = _rows_t(k, b0, b1, i0, i1)
            if need_v:
                phi_t = _feature_map_t(kt, p, q.new_empty(b1 - b0, f, i1 - i0))
                torch.bmm(phi_t.transpose(1, 2), dstate[b0:b1], out=dv[b0:b1, i0:i1])
            if need_k:
                gphi_t = torch.bmm(dstate[b0:b1], v[b0:b1, i0:i1].transpose(1, 2))
                dk[b0:b1, i0:i1] = _feature_map_t_backward(kt, gphi_t, p).transpose(1, 2)
        return dq, dk, dv, None


def _noncausal(q: Tensor, k: Tensor, v: Tensor, p: int) -> Tensor:
    if p == 1:
        return q @ (k.transpose(-2, -1) @ v)
    b, h, n_q, d = q.shape
    n_k, dv = k.shape[2], v.shape[3]
    out = FeatureMapAttention.apply(q.reshape(b * h, n_q, d).contiguous(), k.reshape(b * h, n_k, d).contiguous(),
                                    v.reshape(b * h, n_k, dv).contiguous(), p)
    return out.view(b, h, n_q, dv)


def _causal_aligned(q: Tensor, k: Tensor, v: Tensor, p: int, chunk: int, state0: Optional[Tensor]) -> Tensor:
    """Causal attention where query i sees keys 0..i (plus a prefix folded into ``state0``)."""
    b, h, n, d = q.shape
    dv = v.shape[-1]
    c = max(1, min(chunk, n))
    pad = (-n) % c
    if pad:
        q, k, v = (F.pad(t, (0, 0, 0, pad)) for t in (q, k, v))
    nc = (n + pad) // c
    qc = q.reshape(b, h, nc, c, d)
    kc = k.reshape(b, h, nc, c, d)
    vc = v.reshape(b, h, nc, c, dv)
    # inside each chunk: the weights themselves, lower triangle
    s = qc @ kc.transpose(-2, -1)
    w = s if p == 1 else s.pow(p)
    # keys after the query weigh exactly 0: scores are finite, and a product with a 0/1 mask is a
    # fifth of the cost of ``torch.where`` here, forward and backward (measured, one thread)
    w = w * torch.ones(c, c, device=s.device).tril()
    out = w @ vc
    if nc > 1 or state0 is not None:
        fk = features(kc, p)                                            # [B, H, nc, c, F]
        chunk_states = fk.transpose(-2, -1) @ vc                        # [B, H, nc, F, dv]
        before = chunk_states[:, :, :-1].cumsum(2)                     # states of chunks 0..c-1
        before = torch.cat([torch.zeros_like(chunk_states[:, :, :1]), before], dim=2)
        if state0 is not None:
            before = before + state0.unsqueeze(2)
        out = out + features(qc, p) @ before
    return out.reshape(b, h, nc * c, dv)[:, :, :n]


def _use_compiled(compiled: Optional[bool], q: Tensor) -> bool:
    if compiled is False:
        return False
    if q.device.type != "cpu":
        if compiled:
            raise ValueError(f"compiled=True runs on the CPU only; the inputs are on {q.device}")
        return False
    if compiled:
        _compiled.load_extension()          # raises CompiledUnavailable with its cause
        return True
    return _compiled.auto_enabled()


def linear_attention(q: Tensor, k: Tensor, v: Tensor, p: int, row_scale: Tensor, causal: bool = False,
                     chunk: Optional[int] = None, compiled: Optional[bool] = None) -> Tensor:
    """``out_i = r_i * sum_{j visible} (q_i . k_j / sqrt(d))^p v_j`` in time linear in N.

    ``q, k, v``: ``[B, H, N, d]`` float32, padding keys already zeroed in ``k``;
    ``row_scale``: ``[B or 1, 1, Nq or 1, 1]``.  Causal masks align the queries with the
    end of the keys (query i sees keys j <= i + Nk - Nq), as ``attention_mask``.  The
    score scale 1/sqrt(d) is applied to the output as (1/sqrt(d))^p.  ``compiled``: the causal
    form of p = 1 on the CPU runs in the C++ extension (:func:`polyattn.kernels.compiled.causal_linear_attention`,
    the same chunked products without PyTorch's temporaries) when True, or when None and
    :func:`~polyattn.kernels.compiled.auto_enabled`; False keeps the PyTorch form.
    """
    feature_dim(q.shape[-1], p)
    scale = row_scale * (q.shape[-1] ** (-0.5 * p))
    if not causal:
        return _noncausal(q, k, v, p) * scale
    # the compiled form returns no gradient for the row scale: keep PyTorch's when one is needed
    if p == 1 and not row_scale.requires_grad and _use_compiled(compiled, q):
        return _compiled.causal_linear_attention(q, k, v, scale, chunk)
    n_q, n_k = q.shape[2], k.shape[2]
    off = n_k - n_q
    chunk = chunk or CAUSAL_CHUNK[p]
    if off >= 0:
        state0 = None
        if off > 0:                     # keys every query sees
            state0 = features(k[:, :, :off], p).transpose(-2, -1) @ v[:, :, :off]
        out = _causal_aligned(q, k[:, :, off:], v[:, :, off:], p, chunk, state0)
    else:                               # the first -off queries see no key
        seen = _causal_aligned(q[:, :, -off:], k, v, p, chunk, None)
        out = torch.cat([seen.new_zeros(*seen.shape[:2], -off, seen.shape[-1]), seen], dim=2)
    return out * scale
