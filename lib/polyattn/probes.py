"""Probes of the attention matrix: norms of A, of its Jacobians and of its gradient.

A :class:`Recorder` hooks every :class:`polyattn.attention.Attend` submodule of any
``nn.Module`` (no change to model code), in the spirit of vit-pytorch's ``Recorder``,
and returns tidy rows::

    rec = Recorder(model, metrics=("attn_fro", "act_jac_fro", "grad_attn_fro", "param_jac_fro"),
                   param_probes=4, layers=None)        # layers=None: every Attend module
    with rec:                                          # attach: hooks on, attend.probed = True
        logits = model(x); loss = ...; loss.backward()
    rows = rec.collect(step)                           # [{"step", "layer", "head", "metric", "value"}, ...]
    frame = rows_to_frame(rows)                        # pandas DataFrame with those five columns

``attach()`` / ``detach()`` do what the ``with`` block does; ``clear()`` drops what was
recorded.  While attached, every hooked ``Attend`` has ``probed = True``, so the attention
module takes the naive path that materialises the weights (a model built with
``path="blocked"`` or ``"linear"`` refuses to be probed; build it with ``"auto"``).
Detaching restores each flag's previous value and removes every module hook.

Rows.  ``layer`` is the index of the Attend module in ``model.modules()`` order (block order
for the ViT), ``head`` the head index, ``value`` a Python float.  Unless stated otherwise a
value is computed per sample and then averaged over the batch; when the model is called
several times between two ``collect()`` calls (gradient accumulation), the per-call values
are averaged.  Metrics (``metrics=`` names what to compute; some names add companion rows):

    attn_fro              ||A||_F of one sample's N_q x N_k weight matrix for that head.
                          Adds "attn_fro_over_sqrt_n": ||A||_F / sqrt(N), N the number of
                          keys a query sees, averaged over the query rows (N = N_k without a
                          mask).  Thm 4.1 bounds softmax's ||A||_F^2 by the number of *rows*,
                          so under a causal mask (mean N = (N_q + 1)/2) softmax's ratio may
                          reach about sqrt(2); without a mask it is at most 1.
    act_jac_fro           ||d phi(S) / d S||_F, the Jacobian of the activation with respect to
                          the scores S, exact and in closed form
                          (:meth:`Activation.jacobian_fro_sq`, summed over rows, square root).
    grad_attn_fro         ||dL/dA||_F, from a tensor hook on the weights; available after
                          ``loss.backward()`` (collect after backward).
    param_jac_fro         ||dA/dW_Q||_F, W_Q the head's rows of the query block of ``attn.qkv``
                          (rows h*d:(h+1)*d of ``qkv.weight[:dim]``), estimated with
                          ``param_probes`` Hutchinson probes on the first ``param_samples``
                          samples of the batch (see :func:`param_jacobian_fro`).  Adds
                          "param_jac_fro_sq" (the unbiased estimate of the square) and
                          "param_jac_fro_sq_se" (its standard error over the probes; NaN
                          for a single probe).  The value is averaged over those samples.
    attn_neg_frac         fraction of the visible weights that are negative.
    attn_row_sum          mean over the query rows of the row sum of A.

Memory: hooks reduce immediately to one float per head and keep detached results only;
the gradient hooks are removed by ``collect()``/``clear()``, so no graph is kept alive.

Also here: :func:`record_attention_maps` (the weights of every layer stacked
``[L, B, H, N_q, N_k]`` for heat maps), :func:`param_jacobian_fro` (the estimator) and
:func:`param_jacobian_fro_exact` (the full Jacobian, for small sizes and tests).
"""
from __future__ import annotations

import inspect
import math
from typing import Iterable, Optional, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .attention import Attend, attention_mask, visible_counts

Tensor = torch.Tensor

#: The columns of a probe row.
ROW_KEYS = ("step", "layer", "head", "metric", "value")

#: Requested metric -> the metrics its rows carry.
METRIC_ROWS = {
    "attn_fro": ("attn_fro", "attn_fro_over_sqrt_n"),
    "attn_fro_over_sqrt_n": ("attn_fro_over_sqrt_n",),
    "act_jac_fro": ("act_jac_fro",),
    "grad_attn_fro": ("grad_attn_fro",),
    "param_jac_fro": ("param_jac_fro", "param_jac_fro_sq", "param_jac_fro_sq_se"),
    "attn_neg_frac": ("attn_neg_frac",),
    "attn_row_sum": ("attn_row_sum",),
}
METRICS = tuple(METRIC_ROWS)
DEFAULT_METRICS = ("attn_fro", "act_jac_fro", "grad_attn_fro")
PROBE_DISTRIBUTIONS = ("rademacher", "normal")


def find_attends(model: nn.Module) -> list[Attend]:
    """Every distinct ``Attend`` submodule of ``model``, in ``model.modules()`` order."""
    seen, out = set(), []
    for m in model.modules():
        if isinstance(m, Attend) and id(m) not in seen:
            seen.add(id(m))
            out.append(m)
    return out


def _attention_parents(model: nn.Module) -> dict[int, nn.Module]:
    """id(attend) -> the module that owns it as ``.attend`` (a MultiHeadAttention)."""
    parents = {}
    for m in model.modules():
        a = getattr(m, "attend", None)
        if isinstance(a, Attend):
            parents.setdefault(id(a), m)
    return parents


def _select_layers(attends: Sequence[Attend], layers) -> list[int]:
    if not attends:
        raise ValueError("the model has no polyattn.attention.Attend submodule to probe; "
                         "build its attention with polyattn.attention.MultiHeadAttention")
    if layers is None:
        return list(range(len(attends)))
    chosen = sorted({int(i) for i in layers})
    bad = [i for i in chosen if not 0 <= i < len(attends)]
    if bad:
        raise ValueError(f"layers {bad} do not exist: the model has {len(attends)} attention layers "
                         f"(valid indices 0..{len(attends) - 1}, or layers=None for all)")
    return chosen


# --- per-head reductions (inputs [B, H, Nq, Nk], outputs [H]) ---------------------------------

def _rows_n(mask: Optional[Tensor], n, shape, device) -> Tensor:
    """N per query row as float32 ``[B, H, Nq, 1]``."""
    b, h, nq, nk = shape
    if n is None:
        n = (torch.tensor(float(nk)) if mask is None
             else mask.expand(b, h, nq, nk).sum(-1, keepdim=True).clamp_min(1))
    elif not torch.is_tensor(n):
        n = torch.tensor(float(n))
    return n.float().to(device).expand(b, h, nq, 1)


def _fro_per_head(t: Tensor) -> Tensor:
    return t.float().pow(2).sum((-2, -1)).sqrt().mean(0)


# --- the parameter Jacobian -------------------------------------------------------------------

def _check_attention_module(attn: nn.Module):
    needed = ("qkv", "attend", "heads", "head_dim", "n_mode")
    missing = [a for a in needed if not hasattr(attn, a)]
    if missing:
        raise ValueError(f"param_jacobian_fro needs a polyattn.attention.MultiHeadAttention (attributes "
                         f"{needed}); {type(attn).__name__} lacks {missing}")


def attention_weights_from_query_weight(attn: nn.Module, x: Tensor, w_q: Tensor,
                                        key_padding_mask: Optional[Tensor] = None,
                                        causal: bool = False) -> Tensor:
    """The weights ``[B, H, N, N]`` of ``attn`` on input ``x`` as a function of its query block ``w_q``.

    Recomputes exactly what ``MultiHeadAttention.forward`` computes before the values (in
    float32, without dropout), with the key projection held fixed, and calls the activation
    directly so that no ``Attend`` hook fires.
    """
    _check_attention_module(attn)
    b, n, dim = x.shape
    h, d = attn.heads, attn.head_dim
    weight, bias = attn.qkv.weight.detach().float(), attn.qkv.bias
    bias = None if bias is None else bias.detach().float()
    q = F.linear(x, w_q, None if bias is None else bias[:dim])
    k = F.linear(x, weight[dim:2 * dim], None if bias is None else bias[dim:2 * dim])
    q = q.reshape(b, n, h, d).transpose(1, 2)
    k = k.reshape(b, n, h, d).transpose(1, 2)
    mask = attention_mask(b, n, n, key_padding_mask, causal, x.device)
    n_rows = visible_counts(mask, n, attn.n_mode, key_padding_mask, x.device)
    scores = (q @ k.transpose(-2, -1)) * (d ** -0.5)
    return attn.attend.activation(scores.float(), mask, n_rows).float()


def _query_weight_and_function(attn, x, key_padding_mask, causal):
    _check_attention_module(attn)
    x = x.detach().float()
    dim = x.shape[-1]
    w_q = attn.qkv.weight.detach().float()[:dim].clone()
    if key_padding_mask is not None:
        key_padding_mask = key_padding_mask.detach()

    def weights(wq):
        return attention_weights_from_query_weight(attn, x, wq, key_padding_mask, causal)

    return w_q, weights


def param_jacobian_fro(attn: nn.Module, x: Tensor, n_probes: int = 16,
                       generator: Optional[torch.Generator] = None,
                       key_padding_mask: Optional[Tensor] = None, causal: bool = False,
                       distribution: str = "rademacher") -> dict[str, Tensor]:
    """Hutchinson estimate of ||dA_h/dW_Q,h||_F per head, averaged over the samples of ``x``.

    ``attn`` is a ``MultiHeadAttention`` and ``x`` its input hidden states ``[B, N, dim]``.
    For one sample, J_h = dA_h/dW_Q,h maps the head's query rows (d x dim) to its N x N
    weights.  With v of i.i.d. Rademacher (or standard normal) entries in the output space,
    E ||J^T v||^2 = ||J||_F^2, and J^T v is one vector-Jacobian product
    (``autograd.grad`` of <A, v> with respect to W_Q).  One product serves every head and
    sample at once: A_h depends on W_Q,h only, and the samples' Jacobians add up, so the
    head's rows of the product estimate sum_b ||J_{b,h}||_F^2 (divided by B here).

    Returns float32 CPU tensors ``[H]``: ``fro_sq`` (unbiased mean over the probes),
    ``fro_sq_se`` (standard error of that mean; NaN when ``n_probes == 1``) and ``fro``
    (= sqrt(fro_sq), slightly biased low by the square root).  The probe vectors are drawn on
    the CPU from ``generator`` (a fresh ``torch.Generator`` seeded 0 when None), so the
    same generator state gives the same numbers on every device.
    """
    if n_probes < 1:
        raise ValueError(f"n_probes must be a positive number of probe vectors, got {n_probes}")
    if distribution not in PROBE_DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {PROBE_DISTRIBUTIONS}, got {distribution!r}")
    if generator is None:
        generator = torch.Generator().manual_seed(0)
    w_q, weights = _query_weight_and_function(attn, x, key_padding_mask, causal)
    b = x.shape[0]
    h, d = attn.heads, attn.head_dim
    with torch.enable_grad(), torch.autocast(device_type=w_q.device.type, enabled=False):
        w_q.requires_grad_(True)
        a = weights(w_q)
        per_probe = []
        for i in range(n_probes):
            if distribution == "rademacher":
                v = torch.randint(0, 2, a.shape, generator=generator, dtype=torch.float32) * 2 - 1
            else:
                v = torch.randn(a.shape, generator=generator, dtype=torch.float32)
            (g,) = torch.autograd.grad(a, w_q, grad_outputs=v.to(a.device), retain_graph=i + 1 < n_probes)
            per_probe.append(g.reshape(h, d, -1).pow(2).sum((1, 2)) / b)
    z = torch.stack(per_probe).detach().cpu()              # [K, H]
    fro_sq = z.mean(0)
    se = z.std(0, unbiased=True) / math.sqrt(n_probes) if n_probes > 1 else torch.full_like(fro_sq, float("nan"))
    return {"fro": fro_sq.clamp_min(0).sqrt(), "fro_sq": fro_sq, "fro_sq_se": se}


def param_jacobian_fro_exact(attn: nn.Module, x: Tensor, key_padding_mask: Optional[Tensor] = None,
                             causal: bool = False) -> dict[str, Tensor]:
    """The exact ||dA_h/dW_Q,h||_F per head (mean of the squares over the samples of ``x``).

    Materialises the full Jacobian ``[B, H, N, N, dim, dim]`` with ``torch.func.jacrev``:
    for small sizes and tests only.  Returns float32 CPU tensors ``fro`` and ``fro_sq`` ``[H]``.
    """
    w_q, weights = _query_weight_and_function(attn, x, key_padding_mask, causal)
    b, _, dim = x.shape
    h, d = attn.heads, attn.head_dim
    with torch.enable_grad(), torch.autocast(device_type=w_q.device.type, enabled=False):
        jac = torch.func.jacrev(weights)(w_q)                # [B, H, N, N, dim, dim]
    blocks = jac.reshape(b, h, *jac.shape[2:4], h, d, dim)
    fro_sq = torch.stack([blocks[:, i, :, :, i].pow(2).sum() for i in range(h)]) / b
    fro_sq = fro_sq.detach().float().cpu()
    return {"fro": fro_sq.sqrt(), "fro_sq": fro_sq}


# --- the recorder ------------------------------------------------------------------------------

class Recorder:
    """Hooks the ``Attend`` modules of ``model`` and turns what they see into tidy rows.

    Parameters: ``metrics`` (names from :data:`METRICS`), ``layers`` (Attend indices, None
    for all), ``param_probes`` (Hutchinson probes per layer and forward call for
    "param_jac_fro"), ``param_samples`` (how many leading samples of the batch the parameter
    Jacobian uses; 1 by default), ``seed`` (of the probe vectors: the same seed and inputs give
    the same numbers), ``probe_distribution`` ("rademacher" or "normal").  See the module
    docstring for the metrics and the API.
    """

    def __init__(self, model: nn.Module, metrics: Iterable[str] = DEFAULT_METRICS, param_probes: int = 4,
                 layers: Optional[Iterable[int]] = None, param_samples: int = 1, seed: int = 0,
                 probe_distribution: str = "rademacher"):
        metrics = (metrics,) if isinstance(metrics, str) else tuple(metrics)
        unknown = [m for m in metrics if m not in METRIC_ROWS]
        if unknown or not metrics:
            raise ValueError(f"unknown probe metric(s) {unknown or metrics}; choose from {METRICS}")
        if "param_jac_fro" in metrics and param_probes < 1:
            raise ValueError(f"param_probes must be a positive number of probe vectors, got {param_probes}")
        if param_samples < 1:
            raise ValueError(f"param_samples must be a positive number of samples, got {param_samples}")
        if probe_distribution not in PROBE_DISTRIBUTIONS:
            raise ValueError(f"probe_distribution must be one of {PROBE_DISTRIBUTIONS}, got {probe_distribution!r}")
        self.model = model
        self.metrics = metrics
        self.param_probes, self.param_samples = int(param_probes), int(param_samples)
        self.probe_distribution = probe_distribution
        self.generator = torch.Generator().manual_seed(seed)
        self.attends = find_attends(model)
        self.layers = _select_layers(self.attends, layers)
        self._rows_wanted = [r for m in METRICS if m in metrics for r in METRIC_ROWS[m]]
        self._parents = {}
        if "param_jac_fro" in metrics:
            parents = _attention_parents(model)
            for i in self.layers:
                parent = parents.get(id(self.attends[i]))
                if parent is None:
                    raise ValueError(f"param_jac_fro needs the attention module that owns layer {i}'s Attend "
                                     f"(as its .attend attribute); none was found in the model")
                _check_attention_module(parent)
                self._parents[i] = parent
        self._handles: list = []
        self._tensor_handles: list = []
        self._saved_probed: dict[int, bool] = {}
        self._buf: dict[tuple[int, str], list[Tensor]] = {}
        self.attached = False

    # context manager
    def __enter__(self) -> "Recorder":
        return self.attach()

    def __exit__(self, *exc):
        self.detach()
        return False

    def attach(self) -> "Recorder":
        """Set ``probed`` on the chosen Attend modules and register the hooks."""
        if self.attached:
            return self
        for i in self.layers:
            attend = self.attends[i]
            self._saved_probed[i] = attend.probed
            attend.probed = True
            self._handles.append(attend.register_forward_hook(self._attend_hook(i), with_kwargs=True))
            if i in self._parents:
                self._handles.append(self._parents[i].register_forward_pre_hook(self._input_hook(i), with_kwargs=True))
        self.attached = True
        return self

    def detach(self) -> "Recorder":
        """Remove the module hooks and restore each ``probed`` flag (recorded values are kept)."""
        for hd in self._handles:
            hd.remove()
        self._handles.clear()
        for i, was in self._saved_probed.items():
            self.attends[i].probed = was
        self._saved_probed.clear()
        self.attached = False
        return self

    eject = detach

    def clear(self):
        """Forget what was recorded and drop pending gradient hooks."""
        for hd in self._tensor_handles:
            hd.remove()
        self._tensor_handles.clear()
        self._buf.clear()

    def collect(self, step: int) -> list[dict]:
        """The rows recorded since the last ``collect``/``clear`` (call it after ``backward``), then clear."""
        rows = []
        for layer in self.layers:
            for metric in self._rows_wanted:
                vals = self._buf.get((layer, metric))
                if not vals:
                    continue
                v = self._combine(metric, vals).tolist()
                rows.extend({"step": step, "layer": layer, "head": h, "metric": metric, "value": float(x)}
                            for h, x in enumerate(v))
        self.clear()
        return rows

    @staticmethod
    def _combine(metric: str, vals: list[Tensor]) -> Tensor:
        t = torch.stack([v.detach().float().cpu() for v in vals])
        if metric == "param_jac_fro_sq_se":       # the standard error of a mean of independent means
            return t.pow(2).sum(0).sqrt() / len(vals)
        return t.mean(0)

    def _put(self, layer: int, metric: str, value: Tensor):
        self._buf.setdefault((layer, metric), []).append(value.detach())

    # hooks
    def _attend_hook(self, layer: int):
        wanted = set(self._rows_wanted)

        def hook(module, args, kwargs, output):
            params = inspect.signature(module.forward).bind(*args, **kwargs).arguments
            scores, mask, n = params["scores"], params.get("mask"), params.get("n")
            with torch.no_grad():
                w = output.detach().float()
                if wanted & {"attn_fro", "attn_fro_over_sqrt_n"}:
                    fro = w.pow(2).sum((-2, -1)).sqrt()                          # [B, H]
                    if "attn_fro" in wanted:
                        self._put(layer, "attn_fro", fro.mean(0))
                    if "attn_fro_over_sqrt_n" in wanted:
                        n_mean = _rows_n(mask, n, w.shape, w.device).mean((-2, -1))
                        self._put(layer, "attn_fro_over_sqrt_n", (fro / n_mean.sqrt()).mean(0))
                if "act_jac_fro" in wanted:
                    jsq = module.activation.jacobian_fro_sq(scores.detach(), mask, n)   # [B, H, Nq]
                    self._put(layer, "act_jac_fro", jsq.sum(-1).clamp_min(0).sqrt().mean(0))
                if "attn_neg_frac" in wanted:
                    neg = (w < 0).float()
                    if mask is None:
                        frac = neg.mean((-2, -1))
                    else:
                        vis = mask.expand_as(w).float()
                        frac = (neg * vis).sum((-2, -1)) / vis.sum((-2, -1)).clamp_min(1)
                    self._put(layer, "attn_neg_frac", frac.mean(0))
                if "attn_row_sum" in wanted:
                    self._put(layer, "attn_row_sum", w.sum(-1).mean(-1).mean(0))
            if "grad_attn_fro" in wanted and output.requires_grad:
                def grad_hook(g):
                    self._put(layer, "grad_attn_fro", _fro_per_head(g.detach()))
                self._tensor_handles.append(output.register_hook(grad_hook))

        return hook

    def _input_hook(self, layer: int):
        def hook(module, args, kwargs):
            params = inspect.signature(module.forward).bind(*args, **kwargs).arguments
            x = params.get("x", args[0] if args else None)
            kpm, causal = params.get("key_padding_mask"), bool(params.get("causal", False))
            k = self.param_samples
            est = param_jacobian_fro(module, x[:k], n_probes=self.param_probes, generator=self.generator,
                                     key_padding_mask=None if kpm is None else kpm[:k], causal=causal,
                                     distribution=self.probe_distribution)
            self._put(layer, "param_jac_fro_sq", est["fro_sq"])
            self._put(layer, "param_jac_fro_sq_se", est["fro_sq_se"])
            self._put(layer, "param_jac_fro", est["fro"])
            return None

        return hook


# --- attention maps and frames -----------------------------------------------------------------

def record_attention_maps(model: nn.Module, inputs, layers: Optional[Iterable[int]] = None) -> Tensor:
    """The attention weights of every (chosen) layer, stacked ``[L, B, H, N_q, N_k]`` (float32, CPU).

    ``inputs`` is the model's input tensor, or a tuple of its positional arguments.  Runs one
    forward pass without gradients, in the model's current train/eval mode (call
    ``model.eval()`` first for figures), probing as the :class:`Recorder` does.
    """
    attends = find_attends(model)
    chosen = _select_layers(attends, layers)
    maps: dict[int, Tensor] = {}
    handles, saved = [], {}

    def make_hook(i):
        def hook(module, args, output):
            if i in maps:
                raise ValueError(f"attention layer {i} ran twice in one forward pass; record_attention_maps "
                                 f"stores one map per layer (use Recorder for shared layers)")
            maps[i] = output.detach().float().cpu()
        return hook

    try:
        for i in chosen:
            saved[i] = attends[i].probed
            attends[i].probed = True
            handles.append(attends[i].register_forward_hook(make_hook(i)))
        with torch.no_grad():
            model(*inputs) if isinstance(inputs, (tuple, list)) else model(inputs)
    finally:
        for hd in handles:
            hd.remove()
        for i, was in saved.items():
            attends[i].probed = was
    missing = [i for i in chosen if i not in maps]
    if missing:
        raise ValueError(f"attention layers {missing} did not run in the forward pass")
    shapes = {tuple(maps[i].shape) for i in chosen}
    if len(shapes) > 1:
        raise ValueError(f"the layers' attention maps have different shapes {sorted(shapes)} and cannot be "
                         f"stacked; choose layers of one shape with layers=")
    return torch.stack([maps[i] for i in chosen])


def rows_to_frame(rows: Iterable[dict]):
    """Probe rows as a pandas DataFrame with the columns step, layer, head, metric, value."""
    import pandas as pd

    return pd.DataFrame(list(rows), columns=list(ROW_KEYS))
