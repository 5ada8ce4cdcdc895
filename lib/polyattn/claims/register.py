"""The register of claims: every conclusion the book draws from trained runs, with its margin,
alpha, Holm family and the comparisons that test it, fixed here before the runs it reads.

Chapters read their margins and comparisons from here and never set them in their own cells.
The verdict of each claim is computed by the one rule of :mod:`polyattn.claims.rule`.

Activation specs name the arms (``poly:p=3`` is x^3/sqrt(N), ``poly:p=3,c=1`` the unscaled
cube, ``poly:p=3,c=1/14`` the paper's fixed 1/14, ``poly:p=1`` x/sqrt(N)).
"""
from __future__ import annotations

from .register_book import (
    _CUBE_14,
    _CUBE_SQRT_N,
    _LRA_CHANCE,
    BOOK_CLAIMS,
    CLIPPED,
    FASHION_MNIST_CHANCE,
    KJV_UNIGRAM_BPC,
    UNIGRAM_BAND,
)
from .register_book import _SM as _SOFTMAX
from .register_late import LATE_CLAIMS
from .spec import RegisteredClaim, vs

_CUBE = {"activation": "poly:p=3,c=1"}
_LINEAR_SQRT_N = {"activation": "poly:p=1"}


_vs = vs


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
    scale="micro ViT, 5,000 Fashion-MNIST images, 6 epochs, no gradient clipping, book preset",
)

UNCLIPPED_SCALE_NEEDED = RegisteredClaim(
    "unclipped_scale_needed",
    "Without gradient clipping, the unscaled $x^3$ trains worse than $x^3/\\sqrt{N}$ (the factor is needed)",
    "paper, Table 1", "04_vit",
    comparisons=(
        _vs(_U, _CUBE, _CUBE_SQRT_N, "cube_vs_scaled", "x³ − x³/√N, unclipped", "worse"),
        _vs(_U, _CUBE, _SOFTMAX, "cube_vs_softmax", "x³ − softmax, unclipped", "worse", role="description"),
    ),
    margin=1.0,
    scale="micro ViT, 5,000 Fashion-MNIST images, 6 epochs, no gradient clipping, book preset",
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
            "equivalent", baseline_grid="vit_table1", role="check"),
    ),
    margin=1.0,
    scale="micro ViT, 5,000 Fashion-MNIST images, 6 epochs, book preset",
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
    scale="micro ViT, 5,000 Fashion-MNIST images, 6 epochs, no gradient clipping, book preset",
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
    scale="micro ViT, 5,000 Fashion-MNIST images, 6 epochs, no gradient clipping, book preset",
)

# --- QK-norm as an alternative to the factor (unclipped, Table 1's recipe, 5 seeds) ---------------
_QKN = "critique_qk_norm"
QK_NORM = RegisteredClaim(
    "qk_norm",
    "QK-norm (a LayerNorm on each head's queries and keys) does the $1/\\sqrt{N}$ factor's job: with it the "
    "unscaled $x^3$ matches $x^3/\\sqrt{N}$ without clipping",
    "review ICLR 2025 (compare the factor with normalisation); Wortsman et al. 2023", "09_critiques",
    comparisons=(
        _vs(_QKN, _CUBE, _CUBE_SQRT_N, "cube_qknorm_vs_scaled", "x³ with QK-norm − x³/√N", "equivalent",
            baseline_grid=_U),
        _vs(_QKN, _CUBE_SQRT_N, _CUBE_SQRT_N, "scaled_qknorm_vs_scaled", "x³/√N with − without QK-norm",
            "equivalent", baseline_grid=_U, role="description"),
        _vs(_QKN, _SOFTMAX, _SOFTMAX, "softmax_qknorm_vs_softmax", "softmax with − without QK-norm (control)",
            "equivalent", baseline_grid=_U, role="check"),
        _vs(_QKN, _CUBE, _CUBE, "cube_qknorm_vs_cube", "x³ with − without QK-norm", "better", baseline_grid=_U,
            role="description", cited_from="alternatives_vs_unscaled:qk_norm"),
    ),
    margin=1.0,
    scale="micro ViT, 5,000 Fashion-MNIST images, 6 epochs, no gradient clipping, book preset",
)

# --- the quadratic of the paper's latest version, fixed and learned scale -------------------------
_LEARNED = {"activation": "poly_learned:p=2"}
_QUAD = {"activation": "poly:p=2"}
QUADRATIC = RegisteredClaim(
    "quadratic",
    "The quadratic, with a fixed scale $x^2/\\sqrt{N}$ or a learned one, matches softmax",
    "paper, ICLR 2026 version", "04_vit",
    comparisons=(
        _vs("vit_table1_quadratic", _LEARNED, _SOFTMAX, "learned_vs_softmax", "learned-scale x² − softmax",
            "equivalent", baseline_grid="vit_table1"),
        _vs("vit_table1", _QUAD, _SOFTMAX, "fixed_vs_softmax", "x²/√N − softmax", "equivalent"),
        _vs("vit_converged", _LEARNED, _SOFTMAX, "learned_vs_softmax_converged",
            "learned-scale x² − softmax, converged", "equivalent", tier="converged"),
        _vs("vit_converged", _QUAD, _SOFTMAX, "fixed_vs_softmax_converged", "x²/√N − softmax, converged",
            "equivalent", tier="converged"),
    ),
    margin=1.0,
    deciding_tier="converged",
    registered_after="the Table 1 analogue's x²/√N and softmax runs were stored before this claim was registered; "
                     "the learned-scale and converged comparisons were registered before their runs",
    scale="micro ViT on Fashion-MNIST: 5,000 images for 6 epochs, and all 60,000 for 20; " + CLIPPED + "; book preset",
)

CONVERGED_SCALE_NEEDED = RegisteredClaim(
    "converged_scale_needed",
    "At convergence the unscaled $x^3$ is worse than $x^3/\\sqrt{N}$ (Table 1's 'significantly worse')",
    "paper, Table 1", "04_vit",
    comparisons=(
        _vs("vit_converged", _CUBE, _CUBE_SQRT_N, "cube_vs_scaled_converged", "x³ − x³/√N, converged", "worse",
            tier="converged"),
        _vs("vit_converged", _CUBE_14, _SOFTMAX, "cube_14_vs_softmax_converged", "x³/14 − softmax, converged",
            "equivalent", tier="converged", role="description"),
        _vs("vit_converged", _LINEAR_SQRT_N, _SOFTMAX, "linear_vs_softmax_converged", "x/√N − softmax, converged",
            "equivalent", tier="converged", role="description"),
    ),
    margin=1.0,
    scale="micro ViT, all 60,000 Fashion-MNIST images, 20 epochs, " + CLIPPED + ", book preset",
)

# --- critique 9: x/14 against x^3/14 on ViT (the paper: worse) and DeiT (the paper: best) ------------
_LIN14 = {"activation": "poly:p=1,c=1/14"}
LINEAR_ON_DEIT = RegisteredClaim(
    "linear_vit_deit",
    "$x/14$ is worse than $x^3/14$ on ViT but better on DeiT (the pattern of the paper's ImageNet table)",
    "review ICLR 2025 (critique 9)", "10_architectures",
    comparisons=(
        _vs("architectures_linear", {**_LIN14, "model": "timm:vit_micro"}, {**_CUBE_14, "model": "timm:vit_micro"},
            "vit", "x/14 − x³/14, ViT", "worse", baseline_grid="architectures_table2"),
        _vs("architectures_linear", {**_LIN14, "model": "timm:deit_micro"},
            {**_CUBE_14, "model": "timm:deit_micro"}, "deit", "x/14 − x³/14, DeiT", "better",
            baseline_grid="architectures_table2"),
    ),
    margin=1.0,
    scale="timm ViT and DeiT at micro size, 2,000 Fashion-MNIST images, book preset",
)

# --- the negative results, given more budget --------------------------------------------------------
_ROW = {"n_mode": "row"}
MQAR_LONG = RegisteredClaim(
    "mqar_long",
    "On associative recall (MQAR) the $\\sqrt{N}$-scaled cubic stays behind softmax even with ten times the "
    "training",
    "the book's MQAR result (chapter 07)", "07_causal",
    comparisons=(
        _vs("causal_mqar_long", {**_CUBE_SQRT_N, **_ROW}, {**_SOFTMAX, **_ROW}, "cube_sqrt_i", "x³/√(i+1) − softmax",
            "worse", metric="acc"),
        _vs("causal_mqar_long", {**_CUBE_14, **_ROW}, {**_SOFTMAX, **_ROW}, "cube_14", "x³/14 − softmax", "worse",
            metric="acc"),
    ),
    margin=2.0,
    scale="MQAR, micro model, 60 epochs (ten times the book's budget), book preset",
)

NOPE_LM = RegisteredClaim(
    "nope_lm",
    "Without position encodings the cubic language models are worse than softmax",
    "the book's language models (chapter 07)", "07_causal",
    comparisons=(
        _vs("causal_charlm_nope", {**_CUBE_SQRT_N, "n_mode": "row"}, {**_SOFTMAX, **_ROW}, "per_row_n",
            "x³/√(i+1) − softmax, no positions", "worse", metric="test_bpc"),
        _vs("causal_charlm_nope", {**_CUBE_SQRT_N, "n_mode": "fixed"}, {**_SOFTMAX, **_ROW}, "fixed_n",
            "x³/√T − softmax, no positions", "worse", metric="test_bpc"),
    ),
    margin=0.05, chance=KJV_UNIGRAM_BPC, chance_band=UNIGRAM_BAND,
    chance_registered_after="the unigram level was added to this claim on 3 December, after its runs",
    registered_after="the first 3 seeds of each model were stored before this claim was registered; seeds 3 "
                     "and 4 were added after",
    scale="micro character LM without positions, King James Bible, T = 128, 2,000 steps, book preset",
)

LRA_LONG = RegisteredClaim(
    "lra_long",
    "With more training steps, $x^3/14$ and $x^3/\\sqrt{N}$ match softmax on ListOps and Retrieval",
    "paper (LRA table)", "05_lra",
    comparisons=tuple(
        _vs("lra_long", {**act, "dataset": task}, {**_SOFTMAX, "dataset": task}, f"{name}_{task}",
            f"{label} − softmax, {task} (longer)", "equivalent", chance=_LRA_CHANCE[task])
        for task in ("listops", "retrieval")
        for name, act, label in (("cube_14", _CUBE_14, "x³/14"), ("cube_sqrt_n", _CUBE_SQRT_N, "x³/√N"))
    ),
    margin=2.0,
    chance_registered_after="the tasks' chance levels were added to this claim on 3 December, after its runs",
    scale="shortened LRA, ListOps at 5 and Retrieval at 2 times the book's steps, book preset",
)

PHYSICS_LONG = RegisteredClaim(
    "physics_long",
    "With 500 L-BFGS steps, $x^3/\\sqrt{N}$ PINNsFormer matches softmax on convection",
    "paper (v2/v3)", "06_physics",
    comparisons=(
        _vs("physics_long", _CUBE_SQRT_N, _SOFTMAX, "convection", "x³/√N − softmax, convection, 500 steps",
            "equivalent", metric="rMAE", transform="log10"),
    ),
    margin=0.30103,  # log10(2): a factor 2 in the error
    # a run whose error is within a factor 10 of predicting zero everywhere (rMAE > 0.1) did not solve it
    chance=0.0, chance_band=1.0,
    chance_registered_after="the level at which a run did not solve the problem was added to this claim on "
                            "3 December, after its runs",
    scale="PINNsFormer small, 31 × 31 grid, 500 L-BFGS steps, book preset",
)

# --- each alternative against the unscaled cube it is meant to rescue (unclipped) -------------------
ALTERNATIVES_VS_UNSCALED = RegisteredClaim(
    "alternatives_vs_unscaled",
    "Each alternative to the $1/\\sqrt{N}$ factor makes the unscaled $x^3$ better than it is without it "
    "(Table 1's recipe, no gradient clipping unless the alternative is clipping)",
    "review ICLR 2025; review ICLR 2026", "09_critiques",
    comparisons=(
        _vs(_QK, {**_CUBE, "qk_weight_decay": 0.5}, {**_CUBE, "qk_weight_decay": None, "qk_init_scale": 1.0},
            "qk_decay_0.5", "x³ with Q/K decay 0.5 − x³", "better"),
        _vs(_QK, {**_CUBE, "qk_weight_decay": 5.0}, {**_CUBE, "qk_weight_decay": None, "qk_init_scale": 1.0},
            "qk_decay_5", "x³ with Q/K decay 5 − x³", "better"),
        _vs(_QK, {**_CUBE, "qk_init_scale": 0.7218}, {**_CUBE, "qk_weight_decay": None, "qk_init_scale": 1.0},
            "qk_init", "x³ with Q/K init ×0.72 − x³", "better"),
        _vs(_WD, {**_CUBE, "weight_decay": 0.5}, {**_CUBE, "weight_decay": 0.05}, "decay_0.5",
            "x³ at weight decay 0.5 − x³ at 0.05", "better"),
        _vs(_QKN, _CUBE, _CUBE, "qk_norm", "x³ with QK-norm − x³", "better", baseline_grid=_U),
        _vs("vit_table1", _CUBE, _CUBE, "clipping", "x³ with clipping − x³ without", "better", baseline_grid=_U),
    ),
    margin=1.0,
    registered_after="the unclipped Q/K-control runs and part of the unclipped weight-decay runs were stored "
                     "before this claim was registered; the QK-norm runs after",
    scale="micro ViT, 5,000 Fashion-MNIST images, 6 epochs, book preset",
)

# --- the converged tier without clipping: does the factor matter where nothing else stabilises? ----
_CU = "vit_unclipped"

CONVERGED_UNCLIPPED = RegisteredClaim(
    "converged_unclipped",
    "Without gradient clipping, at convergence, $x^3/\\sqrt{N}$ matches softmax and the unscaled $x^3$ is worse "
    "than $x^3/\\sqrt{N}$",
    "paper, Table 1 (which does not clip)", "04_vit",
    comparisons=(
        _vs(_CU, _CUBE_SQRT_N, _SOFTMAX, "cube_sqrt_n", "x³/√N − softmax, converged, unclipped", "equivalent"),
        _vs(_CU, _CUBE, _CUBE_SQRT_N, "cube_vs_scaled", "x³ − x³/√N, converged, unclipped", "worse"),
    ),
    margin=1.0,
    scale="micro ViT, all 60,000 Fashion-MNIST images, 20 epochs, no gradient clipping, book preset",
)

# --- Table 2's DeiT-style recipe at the converged tier's scale -------------------------------------
TABLE2_CONVERGED = RegisteredClaim(
    "table2_converged",
    "With the DeiT-style recipe, at convergence, $x^3/\\sqrt{N}$ matches softmax (the question of the paper's Table 2 "
    "at the converged tier's scale)",
    "paper, Table 2", "04_vit",
    comparisons=(
        _vs("vit_table2_converged", _CUBE_SQRT_N, _SOFTMAX, "cube_sqrt_n", "x³/√N − softmax, DeiT recipe, converged",
            "equivalent"),
    ),
    margin=1.0,
    scale="micro ViT, all 60,000 Fashion-MNIST images, 20 epochs, DeiT-style augmentation and drop path 0.1, "
          + CLIPPED + ", book preset",
)

# --- the sqrt(N) scaling across training lengths: registered before the first run of its grid ---------
_LS = "causal_length_sweep"
_LS_ROW = {"activation": "poly:p=3", "n_mode": "row"}
_LS_FIXED = {"activation": "poly:p=3", "n_mode": "fixed"}
_LS_CUBE = {"activation": "poly:p=3,c=1", "n_mode": "row"}
_LS_SCALE = ("position-free micro character LM, King James Bible, trained at T = 64, 256 and 1024 with 4,096 "
             "characters a step, 2,000 steps, no gradient clipping, book preset")


def _at(context: int) -> dict:
    return {"options": {"context": context, "windows": (4096 // context) * 500, "eval_windows": 64,
                        "sample_chars": 200, "positions": "none"}}


LENGTH_SCALE_NEEDED = RegisteredClaim(
    "length_scale_needed",
    "The unscaled $x^3$ falls behind $x^3/\\sqrt{i+1}$ at long training lengths, and its deficit grows with $T$ "
    "(the theory's prediction: the unscaled cube's norms grow with $N$)",
    "paper, Section 4 (the factor must depend on N)", "07_causal",
    comparisons=(
        _vs(_LS, {**_LS_CUBE, **_at(1024)}, {**_LS_ROW, **_at(1024)}, "cube_vs_row_1024",
            "x³ − x³/√(i+1), T = 1024", "worse", metric="test_bpc", tier="T = 1024"),
        _vs(_LS, {**_LS_CUBE, **_at(256)}, {**_LS_ROW, **_at(256)}, "cube_vs_row_256",
            "x³ − x³/√(i+1), T = 256", "worse", metric="test_bpc", role="description", tier="T = 256"),
        _vs(_LS, {**_LS_CUBE, **_at(64)}, {**_LS_ROW, **_at(64)}, "cube_vs_row_64",
            "x³ − x³/√(i+1), T = 64", "worse", metric="test_bpc", role="description", tier="T = 64"),
        _vs(_LS, {**_LS_ROW, **_at(1024)}, {"activation": "softmax", "n_mode": "row", **_at(1024)},
            "row_vs_softmax_1024", "x³/√(i+1) − softmax, T = 1024 (control: the scaled cube trains)", "equivalent",
            metric="test_bpc", role="check", tier="T = 1024", margin=0.5),
    ),
    margin=0.05, chance=KJV_UNIGRAM_BPC, chance_band=UNIGRAM_BAND,
    notes=("the growth with T is stated as the slope of the paired difference over log2 T with its interval "
           "(chapter 07); the claim's verdict rests on the longest length, where the theory says the factor "
           "matters most", "3 seeds planned from the measured pair spread of the position-free models at T = 128 "
                             "(the design table on the status page)"),
    scale=_LS_SCALE,
)

LENGTH_SCALE_FOLLOWS_N = RegisteredClaim(
    "length_scale_follows_n",
    "A scale fixed for the training length ($x^3/\\sqrt{T}$) falls behind one that follows each row's $N$ "
    "($x^3/\\sqrt{i+1}$) beyond the training length (at 2 times it; 4 times is shown as description)",
    "paper (the factor depends on N); review ICLR 2025 (which N under a causal mask)", "07_causal",
    comparisons=tuple(
        _vs(_LS, {**_LS_FIXED, **_at(t)}, {**_LS_ROW, **_at(t)}, f"fixed_vs_row_x2_{t}",
            f"x³/√T − x³/√(i+1), T = {t}, at 2T", "worse", metric="test_bpc_x2", tier="2T")
        for t in (64, 256, 1024)
    ) + tuple(
        _vs(_LS, {**_LS_FIXED, **_at(t)}, {**_LS_ROW, **_at(t)}, f"fixed_vs_row_x4_{t}",
            f"x³/√T − x³/√(i+1), T = {t}, at 4T", "worse", metric="test_bpc_x4", tier="4T", role="description")
        for t in (64, 256, 1024)
    ),
    margin=0.05, chance=KJV_UNIGRAM_BPC, chance_band=UNIGRAM_BAND, logic="all",
    notes=("3 seeds planned; 2T decides and 4T is description, because at T = 128 the position-free models' "
           "paired differences at 4T spread too widely to decide with the seeds this book can run (the design "
           "table on the status page: causal_scaling at 4T)",),
    scale=_LS_SCALE + "; evaluated at 2 and 4 times the training length",
)

# --- the norm intervention without its confounds: registered before the first run of its grid ------------
_IU = "vit_intervention_unclipped"
NORM_INTERVENTION_UNCLIPPED = RegisteredClaim(
    "norm_intervention_unclipped",
    "Without gradient clipping and with the output scale compensated, lifting softmax's bound ($8\\cdot$softmax, "
    "output projection started 8 times smaller) hurts, and capping the rows of $x^3/\\sqrt{N}$ at norm 1 helps it",
    "paper, Section 4 (the mechanism); review ICLR 2025 (clamp or scale softmax's norm)", "03_norms",
    comparisons=(
        _vs(_IU, {"activation": "softmax:k=8", "out_init_scale": 0.125}, _SOFTMAX, "necessity",
            "8·softmax, output compensated − softmax, unclipped", "worse", baseline_grid="vit_unclipped"),
        _vs(_IU, {"activation": "poly_cap:p=3"}, _CUBE_SQRT_N, "sufficiency_contrast",
            "capped − uncapped x³/√N, unclipped", "better", baseline_grid="vit_unclipped"),
        _vs(_IU, {"activation": "softmax:k=1/8"}, _SOFTMAX, "tightened", "softmax/8 − softmax, unclipped",
            "equivalent", baseline_grid="vit_unclipped", role="description"),
        _vs(_IU, {"activation": "poly_cap:p=3"}, _SOFTMAX, "capped_vs_softmax", "capped x³/√N − softmax, unclipped",
            "equivalent", baseline_grid="vit_unclipped", role="description"),
    ),
    margin=1.0, chance=FASHION_MNIST_CHANCE, chance_band=2.0,
    notes=("5 seeds planned: the clipped intervention's pair spread at this scale decides with 4 or 5 (the design "
           "table on the status page: norm_intervention)",),
    scale="micro ViT, all 60,000 Fashion-MNIST images, 20 epochs, no gradient clipping, book preset",
)

#: Every registered claim, by id: the book's earlier claims first, then those registered before their runs.
REGISTER = {c.id: c for c in (
    *BOOK_CLAIMS,
    UNCLIPPED_PARITY, UNCLIPPED_SCALE_NEEDED, CLIPPING_DOES_THE_SCALES_JOB, QK_CONTROLS_UNCLIPPED,
    WEIGHT_DECAY_UNCLIPPED, QK_NORM, QUADRATIC, CONVERGED_SCALE_NEEDED, LINEAR_ON_DEIT, MQAR_LONG, NOPE_LM,
    LRA_LONG, PHYSICS_LONG, ALTERNATIVES_VS_UNSCALED, CONVERGED_UNCLIPPED, TABLE2_CONVERGED, *LATE_CLAIMS,
    LENGTH_SCALE_NEEDED, LENGTH_SCALE_FOLLOWS_N, NORM_INTERVENTION_UNCLIPPED,
)}


def claim(claim_id: str) -> RegisteredClaim:
    """The registered claim ``claim_id``, with a clear error for an unknown id."""
    try:
        return REGISTER[claim_id]
    except KeyError:
        raise ValueError(f"unknown claim {claim_id!r}; registered: {sorted(REGISTER)}") from None
