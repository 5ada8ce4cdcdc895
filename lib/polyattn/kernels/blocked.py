"""Blocked attention for elementwise activations: no N x N matrix is ever stored.

An elementwise activation needs no row statistics (no max, no normaliser), so
``out = (g(Q K^T) * mask) V`` can be accumulated tile by tile over (query block, key
block).  The backward pass recomputes each score tile (as FlashAttention does) and
accumulates dQ, dK and dV from it:

    dP = dO V^T,   dS = dP * g'(S),   dQ = dS K,   dK = dS^T Q,   dV = P^T dO

Tiles are large (up to ``TILE_ELEMENTS`` scores across all batch-heads): on a CPU the
matrix products are fastest on big operands and the per-tile Python overhead must stay
small; for short sequences the whole score matrix is one tile.

Conventions: tensors are ``[B*H, N, d]`` float32; ``q`` is scaled by 1/sqrt(d) one
block at a time; padding keys arrive with zeroed k and v rows (so their scores are 0
and their values contribute exactly nothing); causal masking zeroes the invisible part
of the diagonal tiles with ``masked_fill`` after the activation, and tiles wholly above
the diagonal are skipped.
"""
from __future__ import annotations

from typing import Optional

import torch

from ._common import ElementwiseKernel

Tensor = torch.Tensor

#: Scores per tile (all batch-heads together).  4 MiB of float32.
TILE_ELEMENTS = 1 << 20
#: Smallest query block worth a tile of its own.
MIN_BLOCK_Q = 16
#: Smallest key block when the full key range does not fit one tile.
MIN_BLOCK_K = 256


def block_sizes(bh: int, n_q: int, n_k: int, tile_elements: int = TILE_ELEMENTS) -> tuple[int, int]:
    """(query block, key block): whole key rows when they fit, else square-ish tiles."""
    if bh * n_q * n_k <= tile_elements:
        return n_q, n_k
    per_bh = max(1, tile_elements // bh)
    if MIN_BLOCK_Q * n_k <= per_bh:
        return max(MIN_BLOCK_Q, min(n_q, per_bh // n_k)), n_k
    bk = min(n_k, max(MIN_BLOCK_K, per_bh // MIN_BLOCK_Q))
    bq = max(1, min(n_q, per_bh // bk))
    return bq, bk


class _Plan:
    """Everything about one call that is not a differentiable tensor."""

    def __init__(self, kernel: ElementwiseKernel, batch: int, heads: int, causal: bool, offset: int,
                 block_q: int, block_k: int, scale: float):
        self.kernel, self.batch, self.heads = kernel, batch, heads
        self.causal, self.offset = causal, offset
        self.block_q, self.block_k, self.scale = block_q, block_k, scale
        self._invisible = {}

    def tiles(self, n_q: int, n_k: int):
        """Yields (i0, i1, [(j0, j1, invisible-mask or None), ...]) per query block."""
        for i0 in range(0, n_q, self.block_q):
            i1 = min(n_q, i0 + self.block_q)
            k_end = n_k if not self.causal else max(0, min(n_k, i1 + self.offset))
            row = []
            for j0 in range(0, k_end, self.block_k):
                j1 = min(k_end, j0 + self.block_k)
                inv = None
                if self.causal and j1 - 1 > i0 + self.offset:
                    inv = self.invisible(i1 - i0, j1 - j0, i0 + self.offset - j0)
                row.append((j0, j1, inv))
            yield i0, i1, row

    def invisible(self, rows: int, cols: int, diag: int) -> Tensor:
        key = (rows, cols, diag)
        if key not in self._invisible:
            # entry (r, c) is invisible when key j0 + c > query i0 + r + offset
            self._invisible[key] = torch.ones(rows, cols, dtype=torch.bool).triu(diag + 1)
        return self._invisible[key]

    def rows(self, t: Optional[Tensor], i0: int, i1: int) -> Optional[Tensor]:
        """Rows i0:i1 of a per-row tensor ``[B or 1, 1, Nq or 1, 1]`` (or itself if shared)."""
        if t is None or t.shape[2] == 1:
            return t
        return t[:, :, i0:i1]

    def as4d(self, t: Tensor) -> Tensor:
        return t.view(self.batch, self.heads, t.shape[1], t.shape[2])


def _apply_row_scale(plan: _Plan, acc: Tensor, rs: Optional[Tensor], i0: int, i1: int) -> Tensor:
    if rs is not None:
        plan.as4d(acc).mul_(plan.rows(rs, i0, i1))
    return acc


def _scores(plan: _Plan, qb: Tensor, kt: Tensor, j0: int, j1: int) -> Tensor:
    return torch.bmm(qb, kt[:, :, j0:j1])


def blocked_forward(plan: _Plan, q: Tensor, k: Tensor, v: Tensor, n: Tensor, rs: Optional[Tensor]) -> Tensor:
    bh, n_q, _ = q.shape
    n_k, dv = k.shape[1], v.shape[2]
    kern = plan.kernel
    kt = k.transpose(1, 2)
    single = plan.block_q >= n_q
    out = None if single else q.new_empty(bh, n_q, dv)
    for i0, i1, row in plan.tiles(n_q, n_k):
        qb = q[:, i0:i1] * plan.scale
        nb = plan.rows(n, i0, i1) if kern.needs_n else None
        acc = None
        for j0, j1, inv in row:
            s = _scores(plan, qb, kt, j0, j1)
            w = kern.forward(plan.as4d(s), nb).view_as(s) if kern.needs_n else kern.forward(s, None)
            if inv is not None:
                w.masked_fill_(inv, 0.0)
            acc = torch.bmm(w, v[:, j0:j1]) if acc is None else acc.baddbmm_(w, v[:, j0:j1])
        if acc is None:                                   # a causal block that sees no key
            acc = q.new_zeros(bh, i1 - i0, dv)
        _apply_row_scale(plan, acc, rs, i0, i1)
        if single:
            return acc
        out[:, i0:i1] = acc
    if out is None:
        out = q.new_zeros(bh, n_q, dv)
    return out


def blocked_backward(plan: _Plan, q, k, v, n, rs, grad_out, need_q=True, need_k=True, need_v=True):
    bh, n_q, _ = q.shape
    n_k = k.shape[1]
    kern = plan.kernel
    kt, vt = k.transpose(1, 2), v.transpose(1, 2)
    need_s = need_q or need_k
    dq = torch.zeros_like(q) if need_q else None
    dk = torch.zeros_like(k) if need_k else None
    dv = torch.zeros_like(v) if need_v else None
    for i0, i1, row in plan.tiles(n_q, n_k):
        if not row:
            continue
        qb = q[:, i0:i1] * plan.scale
        go = grad_out[:, i0:i1]
        go = _apply_row_scale(plan, go.clone(), rs, i0, i1) if rs is not None else go
        nb = plan.rows(n, i0, i1) if kern.needs_n else None
        dqb = None
        for j0, j1, inv in row:
            s = _scores(plan, qb, kt, j0, j1)
            if need_s:
                if kern.needs_n:
                    w, gp = kern.value_and_grad(plan.as4d(s), nb)
                    w = w.reshape(s.shape)
                    gp = None if gp is None else gp.reshape(s.shape)
                else:
                    w, gp = kern.value_and_grad(s, None)
            else:
                w = kern.forward(plan.as4d(s), nb).view_as(s) if kern.needs_n else kern.forward(s, None)
                gp = None
            if inv is not None:
                w = w.masked_fill(inv, 0.0) if w is gp else w.masked_fill_(inv, 0.0)
            if need_v:
                dv[:, j0:j1].baddbmm_(w.transpose(1, 2), go)
            if not need_s:
                continue
            ds = torch.bmm(go, vt[:, :, j0:j1])
            if gp is not None:
                ds.mul_(gp)
            if inv is not None:
                ds.masked_fill_(inv, 0.0)
            if need_q:
                dqb = torch.bmm(ds, k[:, j0:j1]) if dqb is None else dqb.baddbmm_(ds, k[:, j0:j1])
            if need_k:
                dk[:, j0:j1].baddbmm_(ds.transpose(1, 2), qb)
        if need_q and dqb is not None:
            dq[:, i0:i1] = dqb
    gf = kern.grad_factor
    if need_q:
        dq.mul_(plan.scale * gf)
    if need_k and gf != 1.0:
        dk.mul_(gf)
    return dq, dk, dv


class BlockedAttention(torch.autograd.Function):
    """``out = rowscale * (g(scale * Q K^T) masked) V`` without storing the score matrix."""

    @staticmethod
    def forward(ctx, q, k, v, n, plan):
        rs = plan.kernel.row_scale(n)
        ctx.plan = plan
        ctx.save_for_backward(q, k, v, n, rs)
        return blocked_forward(plan, q, k, v, n, rs)

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, n, rs = ctx.saved_tensors
        nq, nk, nv = ctx.needs_input_grad[:3]
        dq, dk, dv = blocked_backward(ctx.plan, q, k, v, n, rs, grad_out.contiguous(), nq, nk, nv)
        return dq, dk, dv, None, None


def blocked_attention(q: Tensor, k: Tensor, v: Tensor, kernel: ElementwiseKernel, n: Tensor, batch: int,
                      heads: int, causal: bool = False, offset: int = 0,
                      block_q: Optional[int] = None, block_k: Optional[int] = None) -> Tensor:
    """Attention on ``[B*H, N, d]`` float32 tensors; ``n`` is N per row (``row_counts``)."""
    bh, n_q, d = q.shape
    n_k = k.shape[1]
    bq, bk = block_sizes(bh, n_q, n_k)
    plan = _Plan(kernel, batch, heads, causal, offset, block_q or bq, block_k or bk, d ** -0.5)
    return BlockedAttention.apply(q, k, v, n, plan)
