"""Attention maps of a trained model (its CLS weights on the patches), and the measurements a
short retraining takes of its model at the end of training (training a configuration for its
model is :func:`polyattn.train.train_with_model`).

These helpers train or run models, so they live apart from :mod:`polyattn.analysis`, which only
reads result records.  A record keeps no weights, so what a chapter needs of a trained model is
measured when the run ends and stored in the record: an images config asks for it with
``options["measure"]`` (:data:`MEASURES`, :func:`measure`; the images task's ``summarise``
calls it), and :mod:`polyattn.analysis.critiques` reads it back.
"""
from __future__ import annotations

import math

from .analysis.critiques import mean_attention_distance, negative_mass_share
from .task_declarations import IN_MEMORY, is_timm


def cls_attention(model, images, layer: int):
    """The CLS query's weights on the patches in ``layer``, as ``[B, H, g, g]`` patch grids.

    ``images`` are the model's (normalised) input; the CLS token is token 0.  Weights keep
    their sign (the polynomial's are negative for negative scores).
    """
    from .probes import record_attention_maps

    maps = record_attention_maps(model, images, layers=[layer])[0]     # [B, H, N, N]
    n = maps.shape[-1] - 1
    g = int(round(math.sqrt(n)))
    if g * g != n:
        raise ValueError(f"cls_attention: {n} patch tokens do not form a square grid; the model must pool "
                         "with a CLS token (pool='cls') on square images")
    return maps[:, :, 0, 1:].reshape(maps.shape[0], maps.shape[1], g, g)


# --- measurements at the end of a short retraining, stored in its record -----------------------

#: What ``options["measure"]`` of an images config may ask for at the end of training (book ViTs
#: pooled by a CLS token, in-memory data), each stored under ``record["final"]``:
#:
#: ``gradients: n``: :func:`polyattn.model_checks.activation_gradients` on the first ``n`` test
#: images, for the model the run started from and for the trained one;
#: ``outliers: [factors]``: :func:`polyattn.model_checks.outlier_sweep` of the centre patch
#: (:func:`centre_token`) in every place of ``model_checks.WHERE``, on every test image, with
#: each image's correctness per factor (factor 1, the clean model, must be among them);
#: ``maps: n``: the CLS token's weights on the patches for the first ``n`` test images, and over
#: every test image the share of negative mass per layer and the mean attention distance per
#: head (:mod:`polyattn.analysis.critiques`);
#: ``layers: [i, ...]``: the layers the outliers and the maps are read in (default ``[0, -1]``,
#: the first and the last; negative indices count from the last).
MEASURES = ("gradients", "outliers", "maps", "layers")
#: Significant digits of the stored CLS maps (float32 holds about 7).
MAP_DIGITS = 7


def check_measure(config) -> dict:
    """The validated ``options["measure"]`` of ``config`` (``{}`` when it asks for nothing);
    raises ValueError for an unknown measurement, a malformed value, or a model or dataset the
    measurements cannot run on."""
    spec = (config.options or {}).get("measure") or {}
    if not spec:
        return {}
    if not isinstance(spec, dict):
        raise ValueError(f"options['measure'] must be a mapping of {MEASURES}, got {spec!r}")
    unknown = sorted(set(spec) - set(MEASURES))
    if unknown:
        raise ValueError(f"options['measure']: unknown measurement(s) {unknown}; known: {list(MEASURES)}")
    if config.task != "images" or is_timm(config.model) or config.pool != "cls" or config.dataset not in IN_MEMORY:
        raise ValueError(f"options['measure'] needs the images task with a book ViT pooled by CLS on an in-memory "
                         f"dataset {IN_MEMORY}; got task {config.task!r}, model {config.model!r}, pool "
                         f"{config.pool!r}, dataset {config.dataset!r}")
    for key in ("gradients", "maps"):
        if key in spec and not (isinstance(spec[key], int) and not isinstance(spec[key], bool) and spec[key] > 0):
            raise ValueError(f"options['measure']['{key}'] must be a positive number of test images, got {spec[key]!r}")
    if "outliers" in spec:
        f = spec["outliers"]
        if not (isinstance(f, (list, tuple)) and f and all(isinstance(v, (int, float)) and v > 0 for v in f)
                and 1 in f):
            raise ValueError(f"options['measure']['outliers'] must list positive factors including 1 (the clean "
                             f"model), got {f!r}")
    if "layers" in spec and not (isinstance(spec["layers"], (list, tuple)) and spec["layers"]
                                 and all(isinstance(v, int) for v in spec["layers"])):
        raise ValueError(f"options['measure']['layers'] must list layer indices, got {spec['layers']!r}")
    return dict(spec)


def centre_token(grid: int, n_prefix: int = 1) -> int:
    """The sequence index of the centre patch of a ``grid x grid`` patch grid (row-major, after
    ``n_prefix`` tokens such as CLS); for an even grid, the patch right and below the centre."""
    return n_prefix + (grid // 2) * grid + grid // 2


def _digits(x, digits: int = MAP_DIGITS):
    """A nested list of ``x``'s values rounded to ``digits`` significant digits."""
    import numpy as np

    a = np.asarray(x, dtype=float)
    return np.vectorize(lambda v: float(f"{v:.{digits}g}"), otypes=[float])(a).tolist() if a.size else a.tolist()


def measure(model, config, data, device, task) -> dict:
    """The end-of-run measurements ``config.options["measure"]`` asks for (:data:`MEASURES`), as a
    JSON-ready dict for ``record["final"]``; ``{}`` when it asks for none.

    ``model`` is the trained model, ``data`` the run's in-memory images, ``task`` the images task
    that builds the initial model (needed for ``gradients``); the model is left in eval mode.
    What is stored: ``gradients`` (``n_images``, ``rows``: one per state, the
    ``"initialisation"`` and the ``"trained"`` model, and layer, with the columns of
    :func:`polyattn.model_checks.activation_gradients`); ``outliers`` (``token``, ``factors``,
    ``layers``, ``n_images``, ``table``: one row per place, factor and layer, and ``correct``:
    per place, per factor, each test image's correctness as a string of 0 and 1); ``maps``
    (``layers``, ``grid``, ``n_images``, ``cls`` ``[L][B][H][grid][grid]``, ``n_test``,
    ``negative_mass_share`` ``[L]`` and ``attention_distance`` ``[L][H]``).
    """
    import torch

    from . import model_checks

    spec = check_measure(config)
    if not spec:
        return {}
    device = torch.device(device)
    model.eval()
    n_layers = len(model.blocks)
    layers = sorted({int(i) % n_layers for i in spec.get("layers", (0, -1))})
    grid = config.image_size // config.patch_size
    x_all, y_all = data.normalise(data.test_x).to(device), data.test_y.to(device)
    out: dict = {}
    if "gradients" in spec:
        from .qk_controls import scale_out_init, scale_qk_init

        n = int(spec["gradients"])
        init = model_checks.initial_model(config, data, task).to(device)
        if config.qk_init_scale != 1.0:
            scale_qk_init(init, config.qk_init_scale)
        if config.out_init_scale != 1.0:
            scale_out_init(init, config.out_init_scale)
        frames = [model_checks.activation_gradients(m, x_all[:n], y_all[:n]).assign(state=state)
                  for state, m in (("initialisation", init), ("trained", model))]
        rows = [r for f in frames for r in f.to_dict("records")]
        out["gradients"] = {"n_images": min(n, len(y_all)), "rows": rows}
    if "outliers" in spec:
        factors = [float(f) for f in spec["outliers"]]
        token = centre_token(grid)
        table, correct = [], {}
        for where in model_checks.WHERE:
            res = model_checks.outlier_sweep(model, x_all, y_all, token, factors, where, layers=layers)
            table += res.table.to_dict("records")
            correct[where] = ["".join("1" if c else "0" for c in res.correct[f]) for f in factors]
        out["outliers"] = {"token": token, "factors": factors, "layers": layers, "n_images": len(y_all),
                           "table": table, "correct": correct}
    if "maps" in spec:
        n = min(int(spec["maps"]), len(y_all))
        w = model_checks.attention_weights(model, x_all[:n], layers)                      # [L, n, H, N, N]
        cls = w[:, :, :, 0, 1:].reshape(w.shape[0], n, w.shape[2], grid, grid)
        w_all = model_checks.attention_weights(model, x_all, layers)                      # [L, B, H, N, N]
        out["maps"] = {"layers": layers, "grid": grid, "n_images": n, "cls": _digits(cls),
                       "n_test": len(y_all),
                       "negative_mass_share": [float(v) for v in negative_mass_share(w_all, dims=[1, 2, 3, 4])],
                       "attention_distance": mean_attention_distance(w_all, grid).mean(1).tolist()}
    model.eval()
    return out
