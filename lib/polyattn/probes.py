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
    attn_entropy          entropy (nats) of each row's |weights| normalised to sum 1, averaged
                          over rows (for a distribution, its entropy).
    attn_first_token      weight on the first key, averaged over rows (attention-sink mass).

A forward metric is one function of what one call shows (:class:`Seen`) in the table
:data:`FORWARD_METRICS`; adding a metric is adding one function there and one line in
:data:`METRIC_ROWS`.  :func:`capture` is the one way to see the weights: the recorder,
:func:`record_attention_maps` and the model-norm measurements all go through it.

Memory: hooks reduce immediately to one float per head and keep detached results only;
the gradient hooks are removed by ``collect()``/``clear()``, so no graph is kept alive.

Also here: :func:`record_attention_maps` (the weights of every layer stacked
``[L, B, H, N_q, N_k]`` for heat maps).  The parameter-Jacobian estimator and its exact
value live in :mod:`polyattn.param_jacobian` (re-exported here).
"""
from __future__ import annotations

import contextlib
import inspect
from typing import Callable, Iterable, Optional, Sequence

import torch
from torch import nn

from .attention import Attend
from .param_jacobian import (  # noqa: F401
    PROBE_DISTRIBUTIONS,
    attention_weights_from_query_weight,
    check_attention_module,
    param_jacobian_fro,
    param_jacobian_fro_exact,
)

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
    "attn_entropy": ("attn_entropy",),
    "attn_first_token": ("attn_first_token",),
}
METRICS = tuple(METRIC_ROWS)
DEFAULT_METRICS = ("attn_fro", "act_jac_fro", "grad_attn_fro")


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


# --- what one attention call shows: the forward metrics, one function each ---------------------

class Seen:
    """One call of an ``Attend`` module: its scores, mask, N per row, weights and activation."""

    def __init__(self, module: Attend, scores: Tensor, mask: Optional[Tensor], n, weights: Tensor):
        self.module, self.scores, self.mask, self.n = module, scores, mask, n
        self.weights = weights.detach().float()

    @property
    def visible(self) -> Tensor:
        """1.0 where a query sees a key, broadcast to the weights' shape."""
        w = self.weights
        return torch.ones_like(w) if self.mask is None else self.mask.expand_as(w).float()

    def per_head_mean(self, per_row: Tensor) -> Tensor:
        """A ``[B, H, Nq]`` quantity averaged over the query rows and the batch: ``[H]``."""
        return per_row.mean(-1).mean(0)


def _attn_fro(seen: Seen) -> Tensor:
    return seen.weights.pow(2).sum((-2, -1)).sqrt().mean(0)


def _attn_fro_over_sqrt_n(seen: Seen) -> Tensor:
    w = seen.weights
    fro = w.pow(2).sum((-2, -1)).sqrt()
    n_mean = _rows_n(seen.mask, seen.n, w.shape, w.device).mean((-2, -1))
    return (fro / n_mean.sqrt()).mean(0)


def _act_jac_fro(seen: Seen) -> Tensor:
    jsq = seen.module.activation.jacobian_fro_sq(seen.scores.detach(), seen.mask, seen.n)   # [B, H, Nq]
    if seen.module.head_scale is not None:   # a learned factor g_h per head: the Jacobian is g_h times
        jsq = jsq * seen.module.head_scale.detach().pow(2).view(1, -1, 1)
    return jsq.sum(-1).clamp_min(0).sqrt().mean(0)


def _attn_neg_frac(seen: Seen) -> Tensor:
    vis = seen.visible
    return ((seen.weights < 0).float() * vis).sum((-2, -1)).div(vis.sum((-2, -1)).clamp_min(1)).mean(0)


def _attn_row_sum(seen: Seen) -> Tensor:
    return seen.per_head_mean(seen.weights.sum(-1))


def _attn_entropy(seen: Seen) -> Tensor:
    """Entropy (nats) of each row's |weights| normalised to sum 1 (for a distribution, its entropy)."""
    a = seen.weights.abs() * seen.visible
    p = a / a.sum(-1, keepdim=True).clamp_min(1e-30)
    ent = -(p * p.clamp_min(1e-30).log()).sum(-1)
    return seen.per_head_mean(ent)


def _attn_first_token(seen: Seen) -> Tensor:
    """Weight on the first key, averaged over rows (the attention-sink mass)."""
    return seen.per_head_mean(seen.weights[..., 0])


#: Forward metric -> function of what one call shows, returning one value per head ``[H]``.
FORWARD_METRICS: dict[str, Callable[[Seen], Tensor]] = {
    "attn_fro": _attn_fro,
    "attn_fro_over_sqrt_n": _attn_fro_over_sqrt_n,
    "act_jac_fro": _act_jac_fro,
    "attn_neg_frac": _attn_neg_frac,
    "attn_row_sum": _attn_row_sum,
    "attn_entropy": _attn_entropy,
    "attn_first_token": _attn_first_token,
}


# --- capturing the weights: one context manager ------------------------------------------------

@contextlib.contextmanager
def capture(model: nn.Module, on_call: Callable[[int, Seen, Tensor], None],
            layers: Optional[Iterable[int]] = None):
    """Within the block, every chosen ``Attend`` of ``model`` materialises its weights and calls
    ``on_call(layer, seen, output)`` (``output``: the weights as they enter the model, with their
    graph, for gradient hooks).  ``probed`` flags and hooks are restored on exit, even on error.
    Yields the chosen layer indices."""
    attends = find_attends(model)
    chosen = _select_layers(attends, layers)
    handles, saved = [], {}

    def make_hook(i):
        def hook(module, args, kwargs, output):
            params = inspect.signature(module.forward).bind(*args, **kwargs).arguments
            with torch.no_grad():
                seen = Seen(module, params["scores"], params.get("mask"), params.get("n"), output)
            on_call(i, seen, output)
        return hook

    try:
        for i in chosen:
            saved[i] = attends[i].probed
            attends[i].probed = True
            handles.append(attends[i].register_forward_hook(make_hook(i), with_kwargs=True))
        yield chosen
    finally:
        for hd in handles:
            hd.remove()
        for i, was in saved.items():
            attends[i].probed = was


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
                check_attention_module(parent)
                self._parents[i] = parent
        self._handles: list = []
        self._tensor_handles: list = []
        self._capture = None
        self._buf: dict[tuple[int, str], list[Tensor]] = {}
        self.attached = False

    # context manager
    def __enter__(self) -> "Recorder":
        return self.attach()

    def __exit__(self, *exc):
        self.detach()
        return False

    def attach(self) -> "Recorder":
        """Capture the chosen Attend modules (``probed`` set) and register the input hooks."""
        if self.attached:
            return self
        self._capture = capture(self.model, self._on_call, self.layers)
        self._capture.__enter__()
        for i in self.layers:
            if i in self._parents:
                self._handles.append(self._parents[i].register_forward_pre_hook(self._input_hook(i), with_kwargs=True))
        self.attached = True
        return self

    def detach(self) -> "Recorder":
        """Remove the hooks and restore each ``probed`` flag (recorded values are kept)."""
        for hd in self._handles:
            hd.remove()
        self._handles.clear()
        if self._capture is not None:
            self._capture.__exit__(None, None, None)
            self._capture = None
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
    def _on_call(self, layer: int, seen: Seen, output: Tensor):
        for metric in self._rows_wanted:
            fn = FORWARD_METRICS.get(metric)
            if fn is not None:
                with torch.no_grad():
                    self._put(layer, metric, fn(seen))
        if "grad_attn_fro" in self._rows_wanted and output.requires_grad:
            def grad_hook(g):
                self._put(layer, "grad_attn_fro", _fro_per_head(g.detach()))
            self._tensor_handles.append(output.register_hook(grad_hook))

    def _input_hook(self, layer: int):
        def hook(module, args, kwargs):
            params = inspect.signature(module.forward).bind(*args, **kwargs).arguments
            x = params.get("x", args[0] if args else None)
            if params.get("context") is not None:
                raise ValueError(f"param_jac_fro is defined for self-attention; layer {layer} attends to a context "
                                 f"(cross-attention): leave it out with layers=")
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
    maps: dict[int, Tensor] = {}

    def keep(i, seen, output):
        if i in maps:
            raise ValueError(f"attention layer {i} ran twice in one forward pass; record_attention_maps "
                             f"stores one map per layer (use Recorder for shared layers)")
        maps[i] = seen.weights.cpu()

    with capture(model, keep, layers) as chosen, torch.no_grad():
        model(*inputs) if isinstance(inputs, (tuple, list)) else model(inputs)
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
