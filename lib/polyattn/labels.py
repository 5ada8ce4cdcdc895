"""What a run is called, read from its config without building anything: the variants each grid
compares and their labels, the LRA task, the PDE, the architecture, the MQAR test sets.

Every function takes a :class:`polyattn.config.TrainConfig`, a record's config dict or the
whole record, so that the analysis names a run from what its record carries.  The grids
(:mod:`polyattn.experiments`) build their configs from the same tables, so a label cannot drift
from the runs it names.  This module imports neither the grids, the tasks, the models nor the
training loop.
"""
from __future__ import annotations

from . import specs


def _getter(record_or_config):
    """``get(field, default=None)`` over a TrainConfig, a record's config dict or a record."""
    if isinstance(record_or_config, dict):
        cfg = record_or_config.get("config", record_or_config)
        return lambda k, d=None: cfg.get(k, d)
    return lambda k, d=None: getattr(record_or_config, k, d)


def _mode_label(variants, record_or_config) -> str:
    """The label in ``variants`` ((label, activation spec, n_mode) rows) of a run's activation and
    n_mode; the two themselves when no row matches."""
    get = _getter(record_or_config)
    for label, act, mode in variants:
        if act == get("activation") and mode == get("n_mode"):
            return label
    return f"{get('activation')} (N: {get('n_mode')})"


# --- chapter 05: the Long Range Arena ---------------------------------------------------------

#: (label, activation spec, n_mode): the variants chapter 05 compares, softmax first.
LRA_VARIANTS = (
    ("softmax", "softmax", "row"),
    ("x^3/sqrt(N), N valid", "poly:p=3", "row"),
    ("x^3/sqrt(N), N padded", "poly:p=3", "padded"),
    ("x^3/14", "poly:p=3,c=1/14", "row"),
    ("x/sqrt(N)", "poly:p=1", "row"),
    ("sigmoid", "sigmoid", "row"),
)
#: The tasks in the chapter's order.
LRA_TASKS = ("listops", "text", "retrieval", "image", "pathfinder")


def lra_label(record_or_config) -> str:
    """Chapter 05's label of a run's variant (:data:`LRA_VARIANTS`)."""
    return _mode_label(LRA_VARIANTS, record_or_config)


def lra_task(record_or_config) -> str:
    """The chapter's task name of a run: its dataset, ``pathfinder_6`` read as Pathfinder."""
    ds = _getter(record_or_config)("dataset")
    for t in LRA_TASKS:
        if ds == t or ds.startswith(t + "_"):
            return t
    return ds


#: Pathfinder's budget check: (label, model, extra generator options).  The book's softmax
#: transformer trained on more images, on the book's images and on images without distractor
#: snakes, beside the attention-free :class:`~polyattn.models.seq_classifier.PixelCNN` on the
#: book's images: can the labels be learned from these images at all, and does the transformer
#: leave chance when given more data or an easier task?
PATHFINDER_BUDGET = (
    ("transformer (softmax)", "nystromformer", {}),
    ("transformer (softmax), no distractors", "nystromformer", {"num_distractors": 0}),
    ("CNN reference", "pixel_cnn", {}),
)


def pathfinder_budget_label(record_or_config) -> str:
    """The label in :data:`PATHFINDER_BUDGET` of a run of the budget check."""
    get = _getter(record_or_config)
    data = dict((get("options") or {}).get("data", {}))
    for label, model, extra in PATHFINDER_BUDGET:
        if (get("model") == "pixel_cnn") == (model == "pixel_cnn") and all(data.get(k) == v for k, v in extra.items()) \
                and (extra or "num_distractors" not in data):
            return label
    raise ValueError(f"not a config of the Pathfinder budget check: model {get('model')!r}, data {data}")


# --- chapter 06: physics-informed transformers ------------------------------------------------

PDES = ("convection", "reaction", "wave")
#: (label, activation spec) of the PINNsFormer variants, softmax first.
PINNSFORMER_VARIANTS = (
    ("softmax", "softmax"),
    ("x^3/sqrt(N)", "poly:p=3"),
    ("x^3/14", "poly:p=3,c=1/14"),
    ("x/sqrt(N)", "poly:p=1"),
    ("relu/N", "relu_n"),
    ("sigmoid", "sigmoid"),
)
PINN_LABEL = "PINN (tanh MLP)"
#: Every variant's label in the chapter's order.
PHYSICS_VARIANTS = tuple(label for label, _ in PINNSFORMER_VARIANTS) + (PINN_LABEL,)


def physics_label(record_or_config) -> str:
    """Chapter 06's label of a run's variant: :data:`PINN_LABEL` for a PINN, else the label of its
    activation in :data:`PINNSFORMER_VARIANTS` (the spec itself when it has none)."""
    get = _getter(record_or_config)
    if str(get("model")).startswith("pinn_"):
        return PINN_LABEL
    spec = get("activation")
    for label, s in PINNSFORMER_VARIANTS:
        if s == spec:
            return label
    return spec


def pde_of(record_or_config) -> str:
    """The PDE's name (``convection``, ...) of a run: its dataset without parameters."""
    return _getter(record_or_config)("dataset").split(":", 1)[0]


# --- chapter 07: causal models ----------------------------------------------------------------

#: (label, activation spec, n_mode): the variants chapter 07 compares.  Labels name a variant
#: in tables; ``Poly2`` and ``InvSqrt`` and ``Polyak-Sum`` are the seed article's names.
CHARLM_VARIANTS = (
    ("softmax", "softmax", "row"),
    ("x^3/sqrt(i+1)", "poly:p=3", "row"),
    ("x^3/sqrt(T)", "poly:p=3", "fixed"),
    ("x^3/14", "poly:p=3,c=1/14", "row"),
    ("sigmoid", "sigmoid", "row"),
    ("Softpick", "softpick", "row"),
    ("SSMax", "ssmax:s=0.43", "row"),
    ("Poly2 (ReLU^2 / row sum)", "relu2_norm", "row"),
    ("SA-Softmax", "sa_softmax", "row"),
    ("InvSqrt", "invsqrt", "row"),
    ("Polyak-Sum", "polyak_sum", "row"),
)


def charlm_label(record_or_config) -> str:
    """Chapter 07's label of a run's variant (:data:`CHARLM_VARIANTS`)."""
    return _mode_label(CHARLM_VARIANTS, record_or_config)


#: The MQAR task's options where a config leaves them out (:func:`polyattn.tasks.mqar.options`
#: fills them in and validates them).
MQAR_DEFAULTS = dict(vocab_size=512, train_mix=((64, 4, 4096), (128, 8, 1024), (256, 16, 512)),
                     test_sets=((64, 4), (128, 8), (256, 16)), test_examples=256, power_a=0.01, data_seed=0,
                     resample=False, eval_batch=64, positions="sinusoidal")


def mqar_set_names(test_sets) -> list[str]:
    """``L64`` per test set, or ``L64_K8`` where two test sets share a length."""
    lengths = [L for L, _ in test_sets]
    return [f"L{L}" if lengths.count(L) == 1 else f"L{L}_K{K}" for L, K in test_sets]


# --- chapter 09: the critiques' grids ---------------------------------------------------------

#: The activations of the ``critique_weight_decay`` grid.
WEIGHT_DECAY_ACTIVATIONS = ("softmax", "poly:p=3", "poly:p=3,c=1")
#: Q/K weight decays of the ``qk_controls`` grid (Table 1's decay is 0.05).
QK_WEIGHT_DECAYS = (0.5, 5.0)
#: Tokens of Table 1's model (7 x 7 patches and the class token): the N of the length-aware gain.
TABLE1_TOKENS = 50


def length_aware_gain(n: int, p: int) -> float:
    """The Q/K gain g with g^(2p) = N^(-1/2): unscaled x^p then starts at x^p/sqrt(N)'s scale."""
    if n < 1 or p < 1:
        raise ValueError(f"length_aware_gain needs N >= 1 and p >= 1, got N={n}, p={p}")
    return float(n) ** (-1.0 / (4 * p))


def qk_variants() -> tuple:
    """(label, activation, config fields) of the ``qk_controls`` grid, baselines first."""
    gain = round(length_aware_gain(TABLE1_TOKENS, 3), 4)
    return (("x^3/sqrt(N)", "poly:p=3", {}),
            ("x^3", "poly:p=3,c=1", {}),
            *((f"x^3, Q/K decay {wd:g}", "poly:p=3,c=1", {"qk_weight_decay": wd}) for wd in QK_WEIGHT_DECAYS),
            (f"x^3, Q/K init x{gain:g}", "poly:p=3,c=1", {"qk_init_scale": gain}))


def qk_label(record_or_config) -> str:
    """The ``qk_controls`` variant a run belongs to."""
    get = _getter(record_or_config)
    for label, act, fields in qk_variants():
        if get("activation") == act and all(get(k) == v for k, v in fields.items()) and (
                fields or (get("qk_weight_decay") is None and get("qk_init_scale") in (None, 1.0))):
            return label
    return f"{get('activation')} (qk_weight_decay {get('qk_weight_decay')}, qk_init_scale {get('qk_init_scale')})"


# --- chapter 10: architectures and the detection proxy ----------------------------------------

#: The architectures of Table 2, each a family of timm models (``timm:deit_micro`` is DeiT).
ARCHITECTURES = ("vit", "deit", "swin", "xcit")
#: The variants of the architectures grid, in its order: softmax, x^3/sqrt(N) with the
#: architecture's own N, x^3/14, and XCiT's x^3/sqrt(N) with N its patch tokens.
ARCHITECTURE_VARIANTS = ("softmax", "x^3/sqrt(N)", "x^3/14", "x^3/sqrt(N), N = tokens")
#: (canonical activation, XCiT's n_rule) -> the variant's label; the grid's rows and no others.
ARCHITECTURE_LABELS = {
    ("softmax", None): ARCHITECTURE_VARIANTS[0],
    (specs.canonical("poly:p=3"), None): ARCHITECTURE_VARIANTS[1],
    (specs.canonical("poly:p=3,c=1/14"), None): ARCHITECTURE_VARIANTS[2],
    (specs.canonical("poly:p=3"), "tokens"): ARCHITECTURE_VARIANTS[3],
}


def architecture(record_or_config) -> str:
    """"vit", "deit", "swin" or "xcit": the family of a run's timm model."""
    model = _getter(record_or_config)("model")
    family = model.removeprefix("timm:").split("_", 1)[0] if isinstance(model, str) and model.startswith("timm:") \
        else None
    if family not in ARCHITECTURES:
        raise ValueError(f"{model!r} is not a model of the architectures grid")
    return family


def architecture_label(record_or_config) -> str:
    """The variant (:data:`ARCHITECTURE_VARIANTS`) of a run of the architectures grid."""
    get = _getter(record_or_config)
    spec = specs.canonical(get("activation"))
    n_rule = (get("options") or {}).get("n_rule")
    n_rule = None if n_rule == "channels" and "xcit" in str(get("model")) else n_rule
    try:
        return ARCHITECTURE_LABELS[(spec, n_rule)]
    except KeyError:
        raise ValueError(f"{spec!r} with n_rule={n_rule!r} is not a variant of the architectures grid "
                         f"(its variants: {', '.join(ARCHITECTURE_VARIANTS)})") from None


#: (label, activation spec): the variants the detection proxy compares, softmax first.
DETECTION_VARIANTS = (
    ("softmax", "softmax"),
    ("x^3/sqrt(N)", "poly:p=3"),
    ("x^3/14", "poly:p=3,c=1/14"),
)


def detection_label(spec_or_record) -> str:
    """The detection proxy's label of an activation spec (or of a run's activation); the
    canonical spec when it has none."""
    if not isinstance(spec_or_record, str):
        spec_or_record = _getter(spec_or_record)("activation")
    spec = specs.canonical(spec_or_record)
    for label, act in DETECTION_VARIANTS:
        if specs.canonical(act) == spec:
            return label
    return spec
