"""What each task declares from a run's config alone: the sequence lengths its model attends over
and the metrics its records hold.

The tasks (:mod:`polyattn.tasks`) answer ``seq_lens(config)`` and ``metrics(config)`` with these
functions, and :func:`polyattn.results.describe` fills the records written before they stored
them from here too, so both read one declaration.  A few lengths are known only to the task
itself (:func:`seq_lens` returns None): an LRA config without ``max_len`` reads its data, a timm
model's N is measured on the model, and PINNsFormer's window is a constant of its model.  This
module imports neither torch, the tasks, the models nor the data.
"""
from __future__ import annotations

from typing import Callable, Optional

from .labels import MQAR_DEFAULTS, mqar_set_names
from .metric_specs import ACCURACY, DETECTION_METRICS, PDE_METRICS, TEST_LOSS, VAL_ACCURACY, Metric
from .model_sizes import image_seq_len

#: The charlm task's options where a config leaves them out (the prompt and the sampling settings
#: are fixed, the same for every run).
CHARLM_DEFAULTS = dict(context=128, windows=6400, eval_windows=64, eval_multiples=(1, 2, 4), sample_chars=200,
                       prompt="And God said, ", temperature=0.8, top_k=20,
                       positions="sinusoidal")


def _options(config) -> dict:
    opts = config.get("options") if isinstance(config, dict) else getattr(config, "options", None)
    return dict(opts or {})


# --- images --------------------------------------------------------------------------------------

#: The image datasets held in memory whole (the others stream from disk).
IN_MEMORY = ("fashion_mnist", "fashion_marked")


def is_timm(model) -> bool:
    """Whether a config's ``model`` names a timm model (``polyattn.models.timm_zoo.PREFIX``)."""
    return isinstance(model, str) and model.startswith("timm:")

def image_metrics(config) -> list[Metric]:
    return [ACCURACY, TEST_LOSS]


def image_seq_lens(config) -> Optional[dict]:
    """The book's ViT's tokens; None for a timm model (its N is measured on the model)."""
    model = config.get("model") if isinstance(config, dict) else config.model
    if isinstance(model, str) and model.startswith("timm:"):
        return None
    return {"seq_len": image_seq_len(config)}


# --- character language models ---------------------------------------------------------------------

def charlm_option(config, key: str):
    """The charlm option ``key`` of a config, or its default (:data:`CHARLM_DEFAULTS`)."""
    return _options(config).get(key, CHARLM_DEFAULTS[key])


def charlm_metrics(config) -> list[Metric]:
    out = [Metric("val_bpc", "bits/char", False, 1.0, "validation bits per character")]
    for m in charlm_option(config, "eval_multiples"):
        suffix = "" if m == 1 else f"_x{m}"
        out.append(Metric(f"test_bpc{suffix}", "bits/char", False, 1.0,
                          "test bits per character" + ("" if m == 1 else f" at {m}x the context")))
    return out


def charlm_seq_lens(config) -> dict:
    context = charlm_option(config, "context")
    return {"seq_len": context, **{f"eval_len_x{m}": m * context for m in charlm_option(config, "eval_multiples")}}


# --- the Long Range Arena ------------------------------------------------------------------------------

def lra_metrics(config) -> list[Metric]:
    return [ACCURACY, VAL_ACCURACY, TEST_LOSS]


def lra_seq_lens(config) -> Optional[dict]:
    """``max_len`` when the config sets it; None otherwise (the task reads it from its data)."""
    max_len = _options(config).get("max_len")
    return None if max_len is None else {"seq_len": int(max_len)}


# --- associative recall ----------------------------------------------------------------------------------

def mqar_metrics(options: dict) -> list[Metric]:
    """The MQAR metrics of a config's options with the defaults filled in (:data:`polyattn.labels.MQAR_DEFAULTS`)."""
    out = [Metric("acc", "%", True, 100.0, "recall accuracy over all test queries")]
    for name, (L, K) in zip(mqar_set_names(options["test_sets"]), options["test_sets"]):
        out.append(Metric(f"acc_{name}", "%", True, 100.0, f"recall accuracy at length {L}, {K} pairs"))
    out.append(Metric("test_loss", "nats", False, 1.0, "test cross-entropy at the query positions"))
    return out


def mqar_seq_lens(options: dict) -> dict:
    """The longest training length and each test set's length, from options with the defaults filled in."""
    return {"seq_len": max(L for L, _, _ in options["train_mix"]),
            **{f"eval_len_{n}": L for n, (L, _) in zip(mqar_set_names(options["test_sets"]), options["test_sets"])}}


def _mqar_options(config) -> dict:
    o = {**MQAR_DEFAULTS, **_options(config)}
    return {**o, "train_mix": tuple(tuple(e) for e in o["train_mix"]),
            "test_sets": tuple(tuple(e) for e in o["test_sets"])}


# --- detection and PDEs ----------------------------------------------------------------------------------

def detection_metrics(config) -> list[Metric]:
    return list(DETECTION_METRICS)


def detection_seq_lens(config) -> dict:
    get = config.get if isinstance(config, dict) else (lambda k: getattr(config, k))
    return {"seq_len": (get("image_size") // get("patch_size")) ** 2}


def pde_metrics(config) -> list[Metric]:
    return list(PDE_METRICS)


_METRICS: dict[str, Callable] = {
    "images": image_metrics, "charlm": charlm_metrics, "lra": lra_metrics,
    "mqar": lambda config: mqar_metrics(_mqar_options(config)), "detection": detection_metrics, "pde": pde_metrics,
}
_SEQ_LENS: dict[str, Callable] = {
    "images": image_seq_lens, "charlm": charlm_seq_lens, "lra": lra_seq_lens,
    "mqar": lambda config: mqar_seq_lens(_mqar_options(config)), "detection": detection_seq_lens,
}


def metrics(task: str, config) -> Optional[list[Metric]]:
    """The metrics task ``task`` declares for ``config``; None for a task not declared here."""
    fn = _METRICS.get(task)
    return None if fn is None else fn(config)


def seq_lens(task: str, config) -> Optional[dict]:
    """The sequence lengths task ``task`` declares for ``config``; None where only the task can tell
    (see the module's docstring) or for a task not declared here."""
    fn = _SEQ_LENS.get(task)
    return None if fn is None else fn(config)
