"""Bounds, exact moments and Monte Carlo estimators for the paper's theorems (Thm 4.1-4.5).

Everything chapter 02 shows about the theorems is computed here:

* Thm 4.1 (softmax, deterministic), :mod:`.softmax_bounds`: ``||softmax(A)||_F <= sqrt(N)``
  and the Jacobian bound, with the sharp constant ``sqrt(N)/2`` (:func:`softmax_fro_norm`,
  :func:`softmax_jacobian_fro`, :func:`softmax_row_bound_chain`, the adversarial searches
  :func:`adversarial_softmax_norm` / :func:`adversarial_softmax_jacobian`).
* Thm 4.2 / Cor 4.3 (elementwise powers of ``C = A B``, Gaussian ``A, B``), :mod:`.moments`:
  the exact even moments of a sum of products of Gaussians, derived with sympy in two
  independent ways (:func:`sum_product_moment`), the paper's leading-order bound and Monte
  Carlo estimates (:func:`thm42_monte_carlo`); power-law fits (:func:`fit_power_law`) are in
  :mod:`.power_laws`, surveys over the score scale in :mod:`.score_scale`.
* Thm 4.4 / Cor 4.5 (gradient of ``M^p`` with respect to ``Q``, ``M = X Q K^T X^T``),
  :mod:`.qgrad`: the exact gradient norm in closed form (:func:`qgrad_fro_norm`), the bounds
  and Monte Carlo.
* Where the assumptions fail, :mod:`.assumptions`: queries and keys that share ``X``
  (:func:`correlated_qk_monte_carlo`) and the sizes of the bound's factors at ViT sizes
  (:func:`bound_factors_table`).

Measurements on a model (``attention_norms``, ``init_model_norms``,
``trained_norms_from_records``) are in :mod:`polyattn.model_norms`, which builds on this package
(this package imports no model).

Randomness: every estimator takes an integer ``seed``; each computation draws from its own
generator derived from ``(seed, label, ...)`` (:func:`generator`), so results do not depend on
the order in which they are computed and the same seed gives the same numbers.  The grid
sizes of chapter 02 per preset are in :mod:`.presets`.
"""
from __future__ import annotations

from .assumptions import (
    MODEL_SIZES,
    bound_factors_table,
    correlated_qk_monte_carlo,
    head_dim_table,
    qk_equal_prediction,
    sigma_at_softmax_bound,
)
from .moments import (
    D_SYMBOL,
    double_factorial_odd,
    leading_moment,
    min_d_within,
    moment_product_form,
    moment_ratio_table,
    product_moment,
    sum_product_moment,
    sum_product_moment_value,
    thm42_bound,
    thm42_exact_rms,
    thm42_monte_carlo,
)
from .power_laws import PowerLawFit, exponent_rows, fit_exponents, fit_power_law
from .presets import PRESETS, TheoryPreset, generator, preset, resolve_seed
from .qgrad import (
    qgrad_fro_norm,
    qgrad_fro_norm_autograd,
    thm44_bound_p1,
    thm44_exact_second_moment_p1,
    thm44_leading,
    thm44_monte_carlo,
)
from .score_scale import (
    gaussian_elementwise_fro,
    gaussian_elementwise_jacobian,
    jacobian_scale_survey,
    norm_vs_n_survey,
    scaled_power_jacobian,
    score_scale_survey,
)
from .softmax_bounds import (
    adversarial_softmax_jacobian,
    adversarial_softmax_norm,
    eq42_as_quoted,
    jacobian_fro_sq_autodiff,
    k_uniform_row_value,
    plain_ascent_softmax_jacobian,
    softmax_fro_gap,
    softmax_fro_norm,
    softmax_jacobian_fro,
    softmax_jacobian_fro_sq,
    softmax_jacobian_fro_sq_rows64,
    softmax_norm_survey,
    softmax_row_bound_chain,
    two_halves_logits,
)

__all__ = [
    "MODEL_SIZES", "bound_factors_table", "correlated_qk_monte_carlo", "head_dim_table", "qk_equal_prediction",
    "sigma_at_softmax_bound",
    "D_SYMBOL", "double_factorial_odd", "leading_moment", "min_d_within", "moment_product_form",
    "moment_ratio_table", "product_moment", "sum_product_moment", "sum_product_moment_value", "thm42_bound",
    "thm42_exact_rms", "thm42_monte_carlo",
    "PowerLawFit", "exponent_rows", "fit_exponents", "fit_power_law",
    "PRESETS", "TheoryPreset", "generator", "preset", "resolve_seed",
    "qgrad_fro_norm", "qgrad_fro_norm_autograd", "thm44_bound_p1", "thm44_exact_second_moment_p1",
    "thm44_leading", "thm44_monte_carlo",
    "gaussian_elementwise_fro", "gaussian_elementwise_jacobian", "jacobian_scale_survey", "norm_vs_n_survey",
    "scaled_power_jacobian", "score_scale_survey",
    "adversarial_softmax_jacobian", "adversarial_softmax_norm", "eq42_as_quoted", "jacobian_fro_sq_autodiff",
    "k_uniform_row_value", "plain_ascent_softmax_jacobian", "softmax_fro_gap", "softmax_fro_norm",
    "softmax_jacobian_fro", "softmax_jacobian_fro_sq", "softmax_jacobian_fro_sq_rows64", "softmax_norm_survey",
    "softmax_row_bound_chain", "two_halves_logits",
]
