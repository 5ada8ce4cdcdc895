"""Chapter 09: the reviewers' critiques.  Higher powers in training, and the alternatives to the
$1/\\sqrt{N}$ factor (weight decay on the query and key projections, a length-aware initialisation,
a stronger weight decay, QK-norm, gradient clipping), each judged against $x^3/\\sqrt{N}$ and against
the unscaled $x^3$ it is meant to rescue, at Table 1's recipe with gradient clipping and without."""
from __future__ import annotations

from ..constants import CHANCE_ADDED_LATE, CHANCE_LATE, CUBE, CUBE_SQRT_N, FASHION_MNIST_CHANCE, SOFTMAX, TABLE1_UNCLIPPED_GRID
from ..spec import RegisteredClaim, vs

_VIT_SCALE = "micro ViT, 5,000 Fashion-MNIST images, 6 epochs, book preset"
_UNCLIPPED_SCALE = "micro ViT, 5,000 Fashion-MNIST images, 6 epochs, no gradient clipping, book preset"
_PLAIN_CUBE = {**CUBE, "qk_weight_decay": None, "qk_init_scale": 1.0}
_QK_CLIP, _QK_FREE = "critique_qk_controls", "critique_qk_controls_unclipped"
_WD_CLIP, _WD_FREE = "critique_weight_decay", "critique_weight_decay_unclipped"
_QKN = "critique_qk_norm"

# --- higher powers ---------------------------------------------------------------------------------------
POWERS_TRAINED = RegisteredClaim(
    "powers_trained",
    "Higher powers $p$ fail in training: $x^p/\\sqrt{N}$ is worse than $x^3/\\sqrt{N}$ for $p > 3$ and "
    "better for $p < 3$",
    "review ICLR 2025; review ICLR 2026", "09_critiques",
    registered="2026-12-02",
    comparisons=tuple(
        vs("critique_powers", {"activation": f"poly:p={p}"}, CUBE_SQRT_N, f"p{p}",
           f"x^{p}/√N − x³/√N".replace("x^1", "x").replace("x^2", "x²").replace("x^4", "x⁴").replace(
               "x^5", "x⁵").replace("x^6", "x⁶").replace("x^7", "x⁷"), "better" if p < 3 else "worse")
        for p in (1, 2, 4, 5, 6, 7)),
    margin=1.0, chance=FASHION_MNIST_CHANCE, chance_registered_after=CHANCE_LATE,
    registered_after="the powers runs were stored before this claim was registered (the chapter first read "
                     "them as a slope)",
    scale=_VIT_SCALE + ", gradient clipping at norm 1",
    verdict_row=22,
)


# --- the alternatives to the factor, with gradient clipping (every book ViT run) and without ---------------
def _qk(grid: str, tier: str, what: str):
    # the unclipped runs' comparisons are owned by qk_controls_unclipped (registered first), and cited here
    own = {"qk_decay_0.5": "qk_decay_0.5", "qk_decay_5": "qk_decay_5", "qk_init": "qk_init",
           "plain_cube": "plain_cube"}
    cite = (lambda name: f"qk_controls_unclipped:{own[name]}") if tier == "unclipped" else (lambda name: None)
    return (
        vs(grid, {**CUBE, "qk_weight_decay": 0.5}, CUBE_SQRT_N, f"qk_decay_0.5_{tier}",
           f"x³ with Q/K decay 0.5 − x³/√N, {what}", "equivalent", tier=tier, cited_from=cite("qk_decay_0.5")),
        vs(grid, {**CUBE, "qk_weight_decay": 5.0}, CUBE_SQRT_N, f"qk_decay_5_{tier}",
           f"x³ with Q/K decay 5 − x³/√N, {what}", "equivalent", tier=tier, cited_from=cite("qk_decay_5")),
        vs(grid, {**CUBE, "qk_init_scale": 0.7218}, CUBE_SQRT_N, f"qk_init_{tier}",
           f"x³ with Q/K init ×0.72 − x³/√N, {what}", "equivalent", tier=tier, cited_from=cite("qk_init")),
        vs(grid, _PLAIN_CUBE, CUBE_SQRT_N, f"plain_cube_{tier}", f"x³ − x³/√N (no control), {what}", "worse",
           tier=tier, cited_from=cite("plain_cube")),
    )


def _wd(grid: str, tier: str, what: str):
    base = {**CUBE_SQRT_N, "weight_decay": 0.05}
    # the unclipped runs' comparisons are owned by weight_decay_unclipped (registered first), and cited here
    cite = (lambda name: f"weight_decay_unclipped:{name}") if tier == "unclipped" else (lambda name: None)
    return (
        vs(grid, {**CUBE, "weight_decay": 0.5}, base, f"cube_decay_0.5_{tier}",
           f"x³ at decay 0.5 − x³/√N at 0.05, {what}", "equivalent", tier=tier, cited_from=cite("cube_decay_0.5")),
        vs(grid, {**CUBE, "weight_decay": 0.05}, base, f"cube_decay_0.05_{tier}",
           f"x³ − x³/√N, both at decay 0.05, {what}", "worse", tier=tier, cited_from=cite("cube_decay_0.05")),
    )


def _clipped_and_not(cid: str, statement: str, comparisons: tuple, runs: str, registered: str,
                     **shown) -> RegisteredClaim:
    """An alternative to the factor judged on both readings of Table 1's recipe, every tier counting
    (``shown``: where the book shows it, :class:`polyattn.claims.spec.Claim`'s fields)."""
    return RegisteredClaim(
        cid, statement, "review ICLR 2026", "09_critiques", comparisons=comparisons, registered=registered, **shown,
        margin=1.0, chance=FASHION_MNIST_CHANCE, chance_registered_after=CHANCE_LATE,
        registered_after=f"the clipped and unclipped {runs} runs were stored before this claim was registered; "
                         "both readings count",
        scale=_VIT_SCALE + ", with gradient clipping at norm 1 and without",
    )


QK_ALTERNATIVES = _clipped_and_not(
    "qk_alternatives",
    "Weight decay on the query and key projections, or a length-aware initialisation, does what the "
    "$1/\\sqrt{N}$ factor does: with it the unscaled $x^3$ matches $x^3/\\sqrt{N}$",
    (*_qk(_QK_CLIP, "clipped", "clipped"), *_qk(_QK_FREE, "unclipped", "unclipped")), "Q/K-control",
    registered="2026-12-02", verdict_row=23)

WEIGHT_DECAY_ALL = _clipped_and_not(
    "weight_decay_all",
    "A stronger weight decay of every weight matrix does for the unscaled $x^3$ what the $1/\\sqrt{N}$ "
    "factor does: at decay 0.5 it matches $x^3/\\sqrt{N}$",
    (*_wd(_WD_CLIP, "clipped", "clipped"), *_wd(_WD_FREE, "unclipped", "unclipped")), "weight-decay",
    registered="2026-12-02", verdict_row=24)

# --- the alternatives without gradient clipping (the paper does not clip) ----------------------------------
CLIPPING_AS_ALTERNATIVE = RegisteredClaim(
    "clipping_as_alternative",
    "Gradient clipping at norm 1 is what keeps the unscaled $x^3$ trainable: without it, the unscaled cube "
    "is worse than with it, while $x^3/\\sqrt{N}$ does not need it",
    "review ICLR 2025 (compare the factor with gradient clipping)", "09_critiques",
    registered="2026-12-02",
    comparisons=(
        vs(TABLE1_UNCLIPPED_GRID, CUBE, CUBE, "cube_unclipped_vs_clipped", "x³ without − with clipping", "worse",
           baseline_grid="vit_table1"),
        vs(TABLE1_UNCLIPPED_GRID, CUBE_SQRT_N, CUBE_SQRT_N, "scaled_unclipped_vs_clipped",
           "x³/√N without − with clipping", "equivalent", baseline_grid="vit_table1"),
        vs(TABLE1_UNCLIPPED_GRID, SOFTMAX, SOFTMAX, "softmax_unclipped_vs_clipped",
           "softmax without − with clipping (control)", "equivalent", baseline_grid="vit_table1", role="check"),
    ),
    margin=1.0, chance=FASHION_MNIST_CHANCE, chance_registered_after=CHANCE_ADDED_LATE,
    scale=_VIT_SCALE,
    headline="Clipping is what keeps x³ trainable", answer_row=10,
)

QK_CONTROLS_UNCLIPPED = RegisteredClaim(
    "qk_controls_unclipped",
    "Without gradient clipping, a weight decay on the query and key projections, or a length-aware "
    "initialisation, makes the unscaled $x^3$ as good as $x^3/\\sqrt{N}$",
    "review ICLR 2025", "09_critiques",
    registered="2026-12-02",
    comparisons=(
        vs(_QK_FREE, {**CUBE, "qk_weight_decay": 0.5}, CUBE_SQRT_N, "qk_decay_0.5", "x³ with Q/K decay 0.5 − x³/√N",
           "equivalent"),
        vs(_QK_FREE, {**CUBE, "qk_weight_decay": 5.0}, CUBE_SQRT_N, "qk_decay_5", "x³ with Q/K decay 5 − x³/√N",
           "equivalent"),
        vs(_QK_FREE, {**CUBE, "qk_init_scale": 0.7218}, CUBE_SQRT_N, "qk_init", "x³ with Q/K init ×0.72 − x³/√N",
           "equivalent"),
        vs(_QK_FREE, _PLAIN_CUBE, CUBE_SQRT_N, "plain_cube", "x³ − x³/√N (no control)", "worse"),
    ),
    margin=1.0, chance=FASHION_MNIST_CHANCE, chance_registered_after=CHANCE_ADDED_LATE,
    scale=_UNCLIPPED_SCALE,
)

WEIGHT_DECAY_UNCLIPPED = RegisteredClaim(
    "weight_decay_unclipped",
    "Without gradient clipping, a stronger weight decay of every matrix makes the unscaled $x^3$ as good "
    "as $x^3/\\sqrt{N}$",
    "review ICLR 2025", "09_critiques",
    registered="2026-12-02",
    comparisons=(
        vs(_WD_FREE, {**CUBE, "weight_decay": 0.5}, {**CUBE_SQRT_N, "weight_decay": 0.05}, "cube_decay_0.5",
           "x³ at decay 0.5 − x³/√N at 0.05", "equivalent"),
        vs(_WD_FREE, {**CUBE, "weight_decay": 0.05}, {**CUBE_SQRT_N, "weight_decay": 0.05}, "cube_decay_0.05",
           "x³ − x³/√N, both at decay 0.05", "worse"),
        vs(_WD_FREE, {**CUBE, "weight_decay": 0.0}, {**CUBE_SQRT_N, "weight_decay": 0.05}, "cube_decay_0",
           "x³ at decay 0 − x³/√N at 0.05", "worse"),
    ),
    margin=1.0, chance=FASHION_MNIST_CHANCE, chance_registered_after=CHANCE_ADDED_LATE,
    scale=_UNCLIPPED_SCALE,
)

# QK-norm, unclipped, Table 1's recipe, 5 seeds
QK_NORM = RegisteredClaim(
    "qk_norm",
    "QK-norm (a LayerNorm on each head's queries and keys) does the $1/\\sqrt{N}$ factor's job: with it the "
    "unscaled $x^3$ matches $x^3/\\sqrt{N}$ without clipping",
    "review ICLR 2025 (compare the factor with normalisation); Wortsman et al. 2023", "09_critiques",
    registered="2026-12-02",
    comparisons=(
        vs(_QKN, CUBE, CUBE_SQRT_N, "cube_qknorm_vs_scaled", "x³ with QK-norm − x³/√N", "equivalent",
           baseline_grid=TABLE1_UNCLIPPED_GRID),
        vs(_QKN, CUBE_SQRT_N, CUBE_SQRT_N, "scaled_qknorm_vs_scaled", "x³/√N with − without QK-norm",
           "equivalent", baseline_grid=TABLE1_UNCLIPPED_GRID, role="description"),
        vs(_QKN, SOFTMAX, SOFTMAX, "softmax_qknorm_vs_softmax", "softmax with − without QK-norm (control)",
           "equivalent", baseline_grid=TABLE1_UNCLIPPED_GRID, role="check"),
        vs(_QKN, CUBE, CUBE, "cube_qknorm_vs_cube", "x³ with − without QK-norm", "better",
           baseline_grid=TABLE1_UNCLIPPED_GRID, role="description", cited_from="alternatives_vs_unscaled:qk_norm"),
    ),
    margin=1.0, chance=FASHION_MNIST_CHANCE, chance_registered_after=CHANCE_ADDED_LATE,
    scale=_UNCLIPPED_SCALE,
    headline="QK-norm does the 1/√N factor's job", answer_row=11,
)

# --- each alternative against the unscaled cube it is meant to rescue (unclipped) ----------------------------
ALTERNATIVES_VS_UNSCALED = RegisteredClaim(
    "alternatives_vs_unscaled",
    "Each alternative to the $1/\\sqrt{N}$ factor makes the unscaled $x^3$ better than it is without it "
    "(Table 1's recipe, no gradient clipping unless the alternative is clipping)",
    "review ICLR 2025; review ICLR 2026", "09_critiques",
    registered="2026-12-02",
    comparisons=(
        vs(_QK_FREE, {**CUBE, "qk_weight_decay": 0.5}, _PLAIN_CUBE, "qk_decay_0.5", "x³ with Q/K decay 0.5 − x³",
           "better"),
        vs(_QK_FREE, {**CUBE, "qk_weight_decay": 5.0}, _PLAIN_CUBE, "qk_decay_5", "x³ with Q/K decay 5 − x³", "better"),
        vs(_QK_FREE, {**CUBE, "qk_init_scale": 0.7218}, _PLAIN_CUBE, "qk_init", "x³ with Q/K init ×0.72 − x³",
           "better"),
        vs(_WD_FREE, {**CUBE, "weight_decay": 0.5}, {**CUBE, "weight_decay": 0.05}, "decay_0.5",
           "x³ at weight decay 0.5 − x³ at 0.05", "better"),
        vs(_QKN, CUBE, CUBE, "qk_norm", "x³ with QK-norm − x³", "better", baseline_grid=TABLE1_UNCLIPPED_GRID),
        vs("vit_table1", CUBE, CUBE, "clipping", "x³ with clipping − x³ without", "better",
           baseline_grid=TABLE1_UNCLIPPED_GRID),
    ),
    margin=1.0, chance=FASHION_MNIST_CHANCE, chance_registered_after=CHANCE_ADDED_LATE,
    registered_after="the unclipped Q/K-control runs and part of the unclipped weight-decay runs were stored "
                     "before this claim was registered; the QK-norm runs after",
    scale=_VIT_SCALE,
)

#: In the order chapter 09 takes them up.
CLAIMS = (POWERS_TRAINED, QK_ALTERNATIVES, WEIGHT_DECAY_ALL, CLIPPING_AS_ALTERNATIVE, QK_CONTROLS_UNCLIPPED,
          WEIGHT_DECAY_UNCLIPPED, QK_NORM, ALTERNATIVES_VS_UNSCALED)
