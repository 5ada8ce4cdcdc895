"""Blocked attention for elementwise activations: no N x N matrix is ever stored.

An elementwise activation needs no row statistics (no max, no normaliser), so
``out = (g(Q K^T) * mask) V`` can be accumulated tile by tile.  The backward pass
recomputes each score tile (as FlashAttention does) and accumulates dQ, dK and dV:

    dP = dO V^T,   dS = dP * g'(S),   dQ = dS K,   dK = dS^T Q,   dV = P^T dO

A tile is (a group of batch-heads) x (a query block) x (a key block): either whole
score matrices of several batch-heads (short sequences: the loop runs a few times) or
a block of one head (long sequences).  Why these choices (measured on a 2-core CPU,
one thread):

* every slice of the ``[B*H, N, d]`` tensors a tile touches is contiguous, so the
  matrix products read and write in place, without copies;
* a tile (0.5-1 MiB) lives in scratch buffers kept between calls and filled with
  ``out=`` and in-place operations: a fresh tensor per tile costs page faults, and
  a tile that stays in cache is cheap to pass over between the products;
* long query blocks make the transposed products (dV = P^T dO, dK = dS^T Q)
  efficient; causal masks use square blocks so tiles above the diagonal are skipped;
* when every score fits in one tile (short sequences, at most ``KEEP_ELEMENTS``
  scores in all) and a gradient is needed, the forward pass keeps the weights P and
  the derivative g'(S) instead of the backward pass recomputing them: one product
  and the activation's elementwise passes fewer, for two tensors of the size of the
  scores (measured: about 0.8x the time of recomputing at N = 64, batch-heads 32).

Conventions: tensors are ``[B*H, N, d]`` float32.  The score scale 1/sqrt(d) is
applied to q, or, for a homogeneous activation (g(c s) = c^k g(s): poly, relu_n),
to the outputs as (1/sqrt(d))^k.  A row scale shared by all rows (1/sqrt(N) without
masks) becomes a number folded into the final scalings.  Padding keys arrive with
zeroed k and v rows (their scores are 0 and their values contribute exactly nothing);
causal masking zeroes the invisible part of the tiles the diagonal crosses: the scores
before the activation when g(0) = 0 (so weights and, when g'(0) = 0, dS are exactly 0
there), else the weights after it (:class:`_Cut`).
"""
from __future__ import annotations

import threading
from typing import Optional

import torch

from ._common import ElementwiseKernel

Tensor = torch.Tensor

#: Scores per tile, all batch-heads of the tile together (512 KiB of float32).
TILE_ELEMENTS = 1 << 17
#: Query rows and keys per tile when whole score matrices do not fit one tile: long
#: query blocks make the transposed products (dV = P^T dO, dK = dS^T Q) efficient.
BLOCK_Q = 1024
BLOCK_K = 256
#: Square blocks for causal masks, so that tiles above the diagonal can be skipped
#: (the short side for sequences up to ``CAUSAL_SHORT``), for several batch-heads at once
#: (up to ``CAUSAL_TILE_ELEMENTS`` scores per tile): fewer, larger tiles cut the per-tile
#: Python work, which dominates short sequences (measured at N = 256, 32 batch-heads: 1.98x
#: SDPA's causal time with one head per tile, 1.08x with 16).
CAUSAL_BLOCK = 256
CAUSAL_BLOCK_SHORT = 128
CAUSAL_SHORT = 512
CAUSAL_TILE_ELEMENTS = 1 << 18
#: At most this many scores in all (a single tile) for the forward pass to keep the
#: weights and the derivative for the backward pass instead of recomputing them.
KEEP_ELEMENTS = TILE_ELEMENTS


def block_sizes(bh: int, n_q: int, n_k: int, causal: bool = False,
                tile_elements: Optional[int] = None) -> tuple[int, int, int]:
    """(batch-heads per tile, query block, key block) for a ``[bh, n_q, n_k]`` score tensor.

    Either whole score matrices of several batch-heads, or blocks of a single head: in
    both cases every slice of ``[B*H, N, d]`` a tile touches is contiguous, so the
    matrix products read and write memory in place, without copies.  (Block sizes
    measured on a 2-core x86 CPU with one thread, N = 64..4096, d = 32.)
    """
    tile_elements = tile_elements or TILE_ELEMENTS
    if causal and n_q > CAUSAL_BLOCK_SHORT:
        b = CAUSAL_BLOCK_SHORT if max(n_q, n_k) <= CAUSAL_SHORT else CAUSAL_BLOCK
        bq, bk = min(n_q, b), min(n_k, b)
        return max(1, min(bh, CAUSAL_TILE_ELEMENTS // (bq * bk))), bq, bk
    if n_q * n_k <= tile_elements:
        return max(1, min(bh, tile_elements // (n_q * n_k))), n_q, n_k
    return 1, min(n_q, BLOCK_Q), min(n_k, BLOCK_K)


class _Cut:
    """Where the causal mask crosses a tile: from column ``c0`` on, ``invisible`` (bool) and
    ``keep`` (its float complement) of shape ``[rows, cols - c0]``.

    For an activation with g(0) = 0 the invisible scores are multiplied by 0 before g, so
    their weights are exactly 0 (scores are finite products of finite inputs); filling the
    weights after g is kept for the others.  A multiplication by a float mask costs about a
    fifth of ``masked_fill_`` with a broadcast boolean mask (measured, one thread).
    """

    __slots__ = ("c0", "invisible", "keep")

    def __init__(self, c0: int, invisible: Tensor, keep: Tensor):
        self.c0, self.invisible, self.keep = c0, invisible, keep

    def scores(self, s: Tensor, kernel: ElementwiseKernel) -> None:
        """Zero the invisible scores in place (before g), when g(0) = 0."""
        if kernel.zero_at_zero:
            s[..., self.c0:].mul_(self.keep)

    def weights(self, w: Tensor, gp: Optional[Tensor], kernel: ElementwiseKernel) -> Tensor:
        """Zero the invisible weights (after g) when g(0) != 0; a fresh tensor when ``w`` is ``gp``."""
        if kernel.zero_at_zero:
            return w
        if w is gp:
            w = w.clone()
        w[..., self.c0:].masked_fill_(self.invisible, 0.0)
        return w

    def grads(self, ds: Tensor, kernel: ElementwiseKernel) -> None:
        """Zero dS at the invisible entries, unless g'(0) = 0 has already made it zero."""
        if not kernel.grad_zero_at_zero:
            ds[..., self.c0:].masked_fill_(self.invisible, 0.0)


class _Plan:
    """The tiling of one call, and everything else that is not a differentiable tensor."""

    def __init__(self, kernel: ElementwiseKernel, causal: bool, offset: int, group: int,
                 block_q: int, block_k: int, scale: float, bh: int, n_q: int, n_k: int):
        self.kernel, self.causal, self.offset, self.scale = kernel, causal, offset, scale
        # q is scaled by 1/sqrt(d) before the products, unless the activation is
        # homogeneous: then the scale is applied afterwards, to the outputs, as scale^k
        self.q_scale = None if kernel.degree else scale
        self.out_factor = scale ** kernel.degree if kernel.degree else 1.0
        self.bh, self.n_q, self.n_k = bh, n_q, n_k
        self.group = min(group, bh)
        self.block_q, self.block_k = min(block_q, n_q), min(block_k, n_k)
        self._cuts = {}
        #: the forward pass keeps P and g'(S) for the backward pass (set by the caller when
        #: a gradient will be needed; honoured for a single tile of at most KEEP_ELEMENTS)
        self.keep = False

    def single_tile(self) -> bool:
        return self.group >= self.bh and self.block_q >= self.n_q and self.block_k >= self.n_k

    def tiles(self):
        """Yields (b0, b1, i0, i1, [(j0, j1, cut or None), ...]) per row of tiles; a :class:`_Cut`
        marks a tile that the causal mask crosses."""
        bq, bk, off = self.block_q, self.block_k, self.offset
        for b0 in range(0, self.bh, self.group):
            b1 = min(self.bh, b0 + self.group)
            for i0 in range(0, self.n_q, bq):
                i1 = min(self.n_q, i0 + bq)
                k_end = self.n_k if not self.causal else max(0, min(self.n_k, i1 + off))
                row = []
                for j0 in range(0, k_end, bk):
                    j1 = min(k_end, j0 + bk)
                    cut = None
                    if self.causal and j1 - 1 > i0 + off:
                        cut = self.cut(i1 - i0, j1 - j0, i0 + off - j0)
                    row.append((j0, j1, cut))
                yield b0, b1, i0, i1, row

    def cut(self, rows: int, cols: int, diag: int) -> "_Cut":
        key = (rows, cols, diag)
        if key not in self._cuts:
            # entry (r, c) is invisible when key j0 + c > query i0 + r + offset, i.e. c > r + diag;
            # columns before diag + 1 are visible to every row and are left alone
            c0 = max(0, diag + 1)
            invisible = torch.ones(rows, cols - c0, dtype=torch.bool).triu(diag + 1 - c0)
            self._cuts[key] = _Cut(c0, invisible, (~invisible).float())
        return self._cuts[key]

    def workspace(self, like: Tensor, count: int) -> list[Tensor]:
        return workspace(self.group * self.block_q * self.block_k, like, count)


_WORKSPACE = threading.local()


def clear_workspace() -> None:
    """Release this thread's scratch buffers (the next call allocates them again)."""
    _WORKSPACE.buffers = {}


def workspace(size: int, like: Tensor, count: int) -> list[Tensor]:
    """``count`` flat scratch buffers of ``size`` elements, kept between calls.

    A fresh multi-hundred-kilobyte tensor per call is mapped anew by the allocator and
    page-faults on first touch; reusing the tile buffers (at most ``3 * TILE_ELEMENTS``
    floats per thread, whatever N is) avoids that.
    """
    cache = getattr(_WORKSPACE, "buffers", None)
    if cache is None:
        cache = _WORKSPACE.buffers = {}
    key = (like.dtype, like.device)
    bufs = cache.setdefault(key, [])
    if bufs and bufs[0].numel() < size:
        bufs.clear()                              # free the small ones before allocating
    size = max(size, bufs[0].numel() if bufs else 0)
    while len(bufs) < count:
        bufs.append(like.new_empty(size))
    return bufs[:count]


def _tile(buf: Tensor, b0: int, b1: int, i0: int, i1: int, j0: int, j1: int) -> Tensor:
    """A contiguous ``[b1 - b0, i1 - i0, j1 - j0]`` view at the start of a workspace buffer."""
    shape = (b1 - b0, i1 - i0, j1 - j0)
    return buf[:shape[0] * shape[1] * shape[2]].view(shape)


def _rows(t: Optional[Tensor], b0: int, b1: int, i0: int, i1: int) -> Optional[Tensor]:
    """The part of a per-row tensor ``[BH or 1, Nq or 1, 1]`` that a tile needs."""
    if t is None:
        return None
    if t.shape[0] > 1:
        t = t[b0:b1]
    if t.shape[1] > 1:
        t = t[:, i0:i1]
    return t


def _split_row_scale(rs: Optional[Tensor]):
    """A row scale shared by all rows becomes a Python number (folded into final scalings)."""
    if rs is not None and rs.numel() == 1:
        return None, float(rs)
    return rs, 1.0


def blocked_forward(plan: _Plan, q: Tensor, k: Tensor, v: Tensor, n: Tensor, rs: Optional[Tensor]):
    """``(out, kept)``: ``kept`` is ``(P, g'(S))`` when ``plan.keep`` (one tile), else None."""
    kern = plan.kernel
    qs = q if plan.q_scale is None else q * plan.q_scale
    kt = k.transpose(1, 2)
    rs, rs_scalar = _split_row_scale(rs)
    mult = rs_scalar * plan.out_factor
    out = q.new_empty(plan.bh, plan.n_q, v.shape[2])
    if plan.keep:
        return _forward_keep(plan, qs, kt, v, n, rs, mult, out)
    (sbuf,) = plan.workspace(q, 1)
    for b0, b1, i0, i1, row in plan.tiles():
        acc = out[b0:b1, i0:i1]
        if not row:                                   # a causal block that sees no key
            acc.zero_()
            continue
        qt = qs[b0:b1, i0:i1]
        nt = _rows(n, b0, b1, i0, i1) if kern.needs_n else None
        for t, (j0, j1, cut) in enumerate(row):
            s = torch.bmm(qt, kt[b0:b1, :, j0:j1], out=_tile(sbuf, b0, b1, i0, i1, j0, j1))
            if cut is not None:
                cut.scores(s, kern)
            w = kern.forward(s, nt)
            if cut is not None:
                w = cut.weights(w, None, kern)
            if t == 0:
                torch.bmm(w, v[b0:b1, j0:j1], out=acc)
            else:
                acc.baddbmm_(w, v[b0:b1, j0:j1])
    return _scale_out(out, rs, mult), None


def _scale_out(out: Tensor, rs: Optional[Tensor], mult: float) -> Tensor:
    if rs is not None:
        out.mul_(rs)
    if mult != 1.0:
        out.mul_(mult)
    return out


def _forward_keep(plan: _Plan, qs, kt, v, n, rs, mult, out):
    """The single-tile forward pass that keeps P and g'(S) in fresh tensors."""
    ((b0, b1, i0, i1, row),) = plan.tiles()
    ((j0, j1, cut),) = row
    s = torch.bmm(qs, kt)
    if cut is not None:
        cut.scores(s, plan.kernel)
    w, gp = plan.kernel.value_and_grad(s, n if plan.kernel.needs_n else None, torch.empty_like(s))
    if cut is not None:
        w = cut.weights(w, gp, plan.kernel)
    torch.bmm(w, v, out=out)
    return _scale_out(out, rs, mult), (w, gp)


def blocked_backward(plan: _Plan, q, k, v, n, rs, grad_out, need_q=True, need_k=True, need_v=True,
                     kept: Optional[tuple] = None):
    """dQ, dK, dV (None where not needed); ``kept``: ``(P, g'(S))`` of a keeping forward pass."""
    kern = plan.kernel
    need_s = need_q or need_k
    qs = q if plan.q_scale is None else q * plan.q_scale
    kt, vt = k.transpose(1, 2), v.transpose(1, 2)
    rs, rs_scalar = _split_row_scale(rs)
    mult = rs_scalar * plan.out_factor
    go_all = grad_out * rs if rs is not None else grad_out
    # the first product into a gradient block overwrites it (no zero fill beforehand)
    dq = torch.empty_like(q) if need_q else None
    dk = torch.empty_like(k) if need_k else None
    dv = torch.empty_like(v) if need_v else None
    touched = set()
    if kept is not None:
        sbuf, gbuf, pbuf = None, None, plan.workspace(q, 1)[0]
    elif need_s:
        sbuf, gbuf, pbuf = plan.workspace(q, 3)
    else:
        sbuf, gbuf, pbuf = plan.workspace(q, 1) + [None, None]
    for b0, b1, i0, i1, row in plan.tiles():
        if not row:
            if need_q:
                dq[b0:b1, i0:i1].zero_()
            continue
        qt, go = qs[b0:b1, i0:i1], go_all[b0:b1, i0:i1]
        nt = _rows(n, b0, b1, i0, i1) if kern.needs_n else None
        dqt = dq[b0:b1, i0:i1] if need_q else None
        for t, (j0, j1, cut) in enumerate(row):
            first_k = (b0, j0) not in touched
            if first_k:
                touched.add((b0, j0))
                j_end = min(plan.n_k, j0 + plan.block_k)
                for grad in (dk, dv):
                    if grad is not None and j1 < j_end:
                        grad[b0:b1, j1:j_end].zero_()     # the part of the block this tile misses
            tile = (b0, b1, i0, i1, j0, j1)
            if kept is not None:                          # the single tile of a keeping forward pass
                w, gp = kept
            else:
                s = torch.bmm(qt, kt[b0:b1, :, j0:j1], out=_tile(sbuf, *tile))
                if cut is not None:
                    cut.scores(s, kern)
                if need_s:
                    w, gp = kern.value_and_grad(s, nt, _tile(gbuf, *tile))
                else:
                    w, gp = kern.forward(s, nt), None
                if cut is not None:
                    w = cut.weights(w, gp, kern)
            if need_v:
                _accumulate(dv[b0:b1, j0:j1], w.transpose(1, 2), go, first_k)
            if not need_s:
                continue
            ds = torch.bmm(go, vt[b0:b1, :, j0:j1], out=_tile(pbuf, *tile))
            if gp is not None:
                ds.mul_(gp)
            if cut is not None:
                cut.grads(ds, kern)
            if need_q:
                _accumulate(dqt, ds, k[b0:b1, j0:j1], t == 0)
            if need_k:
                _accumulate(dk[b0:b1, j0:j1], ds.transpose(1, 2), qt, first_k)
    for b0 in range(0, plan.bh, plan.group):          # key blocks no query sees (none in practice)
        for j0 in range(0, plan.n_k, plan.block_k):
            if (b0, j0) not in touched:
                for grad in (dk, dv):
                    if grad is not None:
                        grad[b0:b0 + plan.group, j0:j0 + plan.block_k].zero_()
    gf = kern.grad_factor * mult
    if need_q:
        dq.mul_(gf * (plan.q_scale or 1.0))
    if need_k and gf != 1.0:
        dk.mul_(gf)
    if need_v and mult != 1.0:
        dv.mul_(mult)
    return dq, dk, dv


def _accumulate(dst: Tensor, a: Tensor, b: Tensor, first: bool) -> None:
    if first:
        torch.bmm(a, b, out=dst)
    else:
        dst.baddbmm_(a, b)


class BlockedAttention(torch.autograd.Function):
    """``out = rowscale * (g(scale * Q K^T) masked) V`` without storing the score matrix."""

    @staticmethod
    def forward(ctx, q, k, v, n, plan):
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        rs = plan.kernel.row_scale(n)
        ctx.plan = plan
        plan.keep = plan.keep and plan.single_tile() and plan.bh * plan.n_q * plan.n_k <= KEEP_ELEMENTS
        out, kept = blocked_forward(plan, q, k, v, n, rs)
        w, gp = kept if kept is not None else (None, None)
        ctx.save_for_backward(q, k, v, n, rs, w, gp)
        ctx.kept = kept is not None
        return out

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, n, rs, w, gp = ctx.saved_tensors
        nq, nk, nv = ctx.needs_input_grad[:3]
        dq, dk, dv = blocked_backward(ctx.plan, q, k, v, n, rs, grad_out.contiguous(), nq, nk, nv,
                                      kept=(w, gp) if ctx.kept else None)
        return dq, dk, dv, None, None


def per_head_rows(n: Tensor, batch: int, heads: int) -> Tensor:
    """``[B or 1, 1, Nq or 1, 1]`` -> ``[B*H or 1, Nq or 1, 1]`` (to index tiles of ``[B*H, ...]``)."""
    b, _, r, _ = n.shape
    if b == 1:
        return n.reshape(1, r, 1)
    return n.expand(batch, heads, r, 1).reshape(batch * heads, r, 1)


def blocked_attention(q: Tensor, k: Tensor, v: Tensor, kernel: ElementwiseKernel, n: Tensor,
                      causal: bool = False, offset: int = 0,
                      blocks: Optional[tuple[int, int, int]] = None) -> Tensor:
    """Attention on ``[B*H, N, d]`` float32 tensors; ``n``: N per row ``[B*H or 1, Nq or 1, 1]``.

    ``blocks``: (batch-heads, query rows, keys) per tile; default :func:`block_sizes`.
    """
    bh, n_q, d = q.shape
    n_k = k.shape[1]
    g, bq, bk = blocks if blocks is not None else block_sizes(bh, n_q, n_k, causal)
    if min(g, bq, bk) < 1:
        raise ValueError(f"blocks must be positive (batch-heads, query rows, keys), got {blocks}")
    plan = _Plan(kernel, causal, offset, g, bq, bk, d ** -0.5, bh, n_q, n_k)
    plan.keep = torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad)
    return BlockedAttention.apply(q, k, v, n, plan)
