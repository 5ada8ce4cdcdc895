"""The register of claims: every conclusion the book draws from trained runs, with its margin,
alpha, Holm family and the comparisons that test it, fixed here before the runs it reads.

Chapters read their margins and comparisons from here and never set them in their own cells.
The verdict of each claim is computed by the one rule of :mod:`polyattn.claims.rule`.

Activation specs name the arms (``poly:p=3`` is x^3/sqrt(N), ``poly:p=3,c=1`` the unscaled
cube, ``poly:p=3,c=1/14`` the paper's fixed 1/14, ``poly:p=1`` x/sqrt(N)).
"""
from __future__ import annotations

from .spec import Arm, Comparison, RegisteredClaim

_SOFTMAX = {"activation": "softmax"}
_CUBE_SQRT_N = {"activation": "poly:p=3"}
_CUBE = {"activation": "poly:p=3,c=1"}
_CUBE_14 = {"activation": "poly:p=3,c=1/14"}
_LINEAR_SQRT_N = {"activation": "poly:p=1"}


def _vs(grid: str, candidate: dict, baseline: dict, cid: str, label: str, expect: str, *,
        baseline_grid: str | None = None, tier: str = "main") -> Comparison:
    return Comparison(cid, label, Arm(grid, candidate), Arm(baseline_grid or grid, baseline), expect, tier=tier)


# --- gradient clipping: Table 1's recipe with clip_grad = 0 (the paper does not clip) -------------
_U = "vit_table1_unclipped"

UNCLIPPED_PARITY = RegisteredClaim(
    "unclipped_parity",
    "Without gradient clipping, the paper's scaled polynomials match softmax at Table 1's scale",
    "paper, Table 1 (which does not clip)", "04_vit",
    comparisons=(
        _vs(_U, _CUBE_SQRT_N, _SOFTMAX, "cube_sqrt_n", "x³/√N − softmax, unclipped", "equivalent"),
        _vs(_U, _CUBE_14, _SOFTMAX, "cube_14", "x³/14 − softmax, unclipped", "equivalent"),
        _vs(_U, _LINEAR_SQRT_N, _SOFTMAX, "linear_sqrt_n", "x/√N − softmax, unclipped", "equivalent"),
    ),
    margin=1.0,
)

UNCLIPPED_SCALE_NEEDED = RegisteredClaim(
    "unclipped_scale_needed",
    "Without gradient clipping, the unscaled $x^3$ trains worse than $x^3/\\sqrt{N}$ (the factor is needed)",
    "paper, Table 1", "04_vit",
    comparisons=(
        _vs(_U, _CUBE, _CUBE_SQRT_N, "cube_vs_scaled", "x³ − x³/√N, unclipped", "worse"),
        _vs(_U, _CUBE, _SOFTMAX, "cube_vs_softmax", "x³ − softmax, unclipped", "worse"),
    ),
    margin=1.0,
)

CLIPPING_DOES_THE_SCALES_JOB = RegisteredClaim(
    "clipping_as_alternative",
    "Gradient clipping at norm 1 is what keeps the unscaled $x^3$ trainable: without it, the unscaled cube "
    "is worse than with it, while $x^3/\\sqrt{N}$ does not need it",
    "review ICLR 2025 (compare the factor with gradient clipping)", "09_critiques",
    comparisons=(
        _vs(_U, _CUBE, _CUBE, "cube_unclipped_vs_clipped", "x³ without − with clipping", "worse",
            baseline_grid="vit_table1"),
        _vs(_U, _CUBE_SQRT_N, _CUBE_SQRT_N, "scaled_unclipped_vs_clipped", "x³/√N without − with clipping",
            "equivalent", baseline_grid="vit_table1"),
        _vs(_U, _SOFTMAX, _SOFTMAX, "softmax_unclipped_vs_clipped", "softmax without − with clipping (control)",
            "equivalent", baseline_grid="vit_table1"),
    ),
    margin=1.0,
)

# --- the alternatives to the factor of chapter 09, without clipping -----------------------------
_QK = "critique_qk_controls_unclipped"
QK_CONTROLS_UNCLIPPED = RegisteredClaim(
    "qk_controls_unclipped",
    "Without gradient clipping, a weight decay on the query and key projections, or a length-aware "
    "initialisation, makes the unscaled $x^3$ as good as $x^3/\\sqrt{N}$",
    "review ICLR 2025", "09_critiques",
    comparisons=(
        _vs(_QK, {**_CUBE, "qk_weight_decay": 0.5}, _CUBE_SQRT_N, "qk_decay_0.5", "x³ with Q/K decay 0.5 − x³/√N",
            "equivalent"),
        _vs(_QK, {**_CUBE, "qk_weight_decay": 5.0}, _CUBE_SQRT_N, "qk_decay_5", "x³ with Q/K decay 5 − x³/√N",
            "equivalent"),
        _vs(_QK, {**_CUBE, "qk_init_scale": 0.7218}, _CUBE_SQRT_N, "qk_init", "x³ with Q/K init ×0.72 − x³/√N",
            "equivalent"),
        _vs(_QK, {**_CUBE, "qk_weight_decay": None, "qk_init_scale": 1.0}, _CUBE_SQRT_N, "plain_cube",
            "x³ − x³/√N (no control)", "worse"),
    ),
    margin=1.0,
)

_WD = "critique_weight_decay_unclipped"
WEIGHT_DECAY_UNCLIPPED = RegisteredClaim(
    "weight_decay_unclipped",
    "Without gradient clipping, a stronger weight decay of every matrix makes the unscaled $x^3$ as good "
    "as $x^3/\\sqrt{N}$",
    "review ICLR 2025", "09_critiques",
    comparisons=(
        _vs(_WD, {**_CUBE, "weight_decay": 0.5}, {**_CUBE_SQRT_N, "weight_decay": 0.05}, "cube_decay_0.5",
            "x³ at decay 0.5 − x³/√N at 0.05", "equivalent"),
        _vs(_WD, {**_CUBE, "weight_decay": 0.05}, {**_CUBE_SQRT_N, "weight_decay": 0.05}, "cube_decay_0.05",
            "x³ − x³/√N, both at decay 0.05", "worse"),
        _vs(_WD, {**_CUBE, "weight_decay": 0.0}, {**_CUBE_SQRT_N, "weight_decay": 0.05}, "cube_decay_0",
            "x³ at decay 0 − x³/√N at 0.05", "worse"),
    ),
    margin=1.0,
)

#: Every registered claim, by id.
REGISTER = {c.id: c for c in (
    UNCLIPPED_PARITY, UNCLIPPED_SCALE_NEEDED, CLIPPING_DOES_THE_SCALES_JOB, QK_CONTROLS_UNCLIPPED,
    WEIGHT_DECAY_UNCLIPPED,
)}


def claim(claim_id: str) -> RegisteredClaim:
    """The registered claim ``claim_id``, with a clear error for an unknown id."""
    try:
        return REGISTER[claim_id]
    except KeyError:
        raise ValueError(f"unknown claim {claim_id!r}; registered: {sorted(REGISTER)}") from None
