"""The measurements behind chapter 02's measured claims (the paper's theorems checked numerically):
where they are stored, their settings, their loaders, and the fits the chapter shows and the rules
read.

The computations are :mod:`polyattn.theory`'s; the adversarial searches and Monte Carlo surveys
take tens of seconds, so each is a measurement record (:mod:`.measurement_records`) at the book
preset's sizes and seed, computed once and then loaded:

``thm41_softmax_survey``
    :func:`polyattn.theory.softmax_norm_survey`: random, peaked, one-hot and two-halves logits and
    the adversarial searches on the softmax norm and on its Jacobian norm;
``thm42_monte_carlo``
    :func:`polyattn.theory.thm42_monte_carlo` over chapter 02's (N, D) grid;
``thm42_correlated_qk``
    :func:`polyattn.theory.correlated_qk_monte_carlo` at ViT-B sizes (queries and keys sharing X);
``thm44_monte_carlo``
    :func:`polyattn.theory.thm44_monte_carlo`;
``matrix_power_readings``
    :func:`polyattn.theory.matrix_powers.readings_survey` for queries and keys sharing X and for
    independent factors, and the experiments' activation on one score matrix against both readings.

Chapter 02 draws its tables and figures from the same records (the loaders below), so the page
and the verdict read one measurement.  The claims, one module a section of the chapter:
:mod:`.proofs_softmax` (Theorem 4.1), :mod:`.proofs_product_powers` (Theorem 4.2 and
Corollary 4.3), :mod:`.proofs_matrix_powers` (critique 7) and :mod:`.proofs_query_gradient`
(Theorem 4.4 and Corollary 4.5); each decides its claim's form by the thresholds it names (and
:data:`GROWTH_TOLERANCE`, which three of them share) and returns a
:class:`~polyattn.claims.spec.Finding` whose numbers the chapter glues.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import pandas as pd

from .measurement_records import Measurement, measurement, measurements_dir, scratch_dir

#: Bump when a stored computation changes, so that stored records are recomputed.
VERSION = 1
#: The power the paper's experiments use (every preset's grid contains it).
P_MAX = 3
#: A fitted exponent in N "is 1/2" when it lies within this of 1/2 (O(√N) growth).
GROWTH_TOLERANCE = 0.05
#: ViT-B/16 at 224 px, the size the reviewers discuss: N patches, width D, head dimension d.
VIT_B = "ViT-B/16 (224 px)"


# --- where the measurements are ------------------------------------------------------------

def _where(preset: str, seed: Optional[int], root: Optional[Path]):
    """The theory preset, the seed, and the folder of the measurements (``data/measurements`` for
    the book preset at its default seed, a scratch folder otherwise)."""
    from .. import theory

    P = theory.preset(preset)
    s = P.seed if seed is None else int(seed)
    directory = measurements_dir(root) if (preset == "book" and s == P.seed) else scratch_dir(preset, s)
    return P, s, directory


def thm42_sizes(P) -> list[tuple[int, int]]:
    """Chapter 02's (N, D) grid for Theorem 4.2: N at fixed D, D at fixed N, and small D at a large N."""
    return sorted({(n, P.thm42_d_at_n) for n in P.thm42_ns} | {(P.thm42_n_at_d, d) for d in P.thm42_ds}
                  | {(P.thm42_n_large, d) for d in P.thm42_small_d})


def settings(name: str, preset: str = "book", seed: Optional[int] = None) -> tuple[str, dict]:
    """The computing function and the settings (seed included) of the stored measurement ``name``
    at ``preset``: what a stored record must match to be loaded."""
    from ..theory import matrix_powers

    P, s, _ = _where(preset, seed, None)
    if name == "thm41_softmax_survey":
        return "polyattn.theory:softmax_norm_survey", dict(
            version=VERSION, ns=P.softmax_ns, reps=P.softmax_reps, ascent_ns=P.ascent_ns,
            ascent_steps=P.ascent_steps, ascent_restarts=P.ascent_restarts, seed=s)
    if name == "thm42_monte_carlo":
        return "polyattn.theory:thm42_monte_carlo", dict(version=VERSION, sizes=thm42_sizes(P), ps=P.ps,
                                                         reps=P.thm42_reps, seed=s)
    if name == "thm42_correlated_qk":
        return "polyattn.theory:correlated_qk_monte_carlo", dict(version=VERSION, sizes=P.corr_sizes, ps=P.ps,
                                                                 rhos=P.corr_rhos, reps=P.corr_reps, seed=s)
    if name == "thm44_monte_carlo":
        return "polyattn.theory:thm44_monte_carlo", dict(version=VERSION, ns=P.thm44_ns, dims=P.thm44_dims, ps=P.ps,
                                                         reps=P.thm44_reps, seed=s)
    if name == "matrix_power_readings":
        g = matrix_powers.grid(preset)
        return "polyattn.theory.matrix_powers:readings_survey", dict(version=VERSION, ns=g.ns, ps=g.ps, reps=g.reps,
                                                                     D=g.D, d=g.d, seed=s)
    raise ValueError(f"unknown measurement {name!r}; chapter 02 stores {', '.join(MEASUREMENTS)}")


#: The stored measurements of chapter 02, by name.
MEASUREMENTS = ("thm41_softmax_survey", "thm42_monte_carlo", "thm42_correlated_qk", "thm44_monte_carlo",
                "matrix_power_readings")


def _stored(name: str, preset: str, seed: Optional[int], root: Optional[Path], compute) -> Measurement:
    """The measurement ``name``: loaded when stored with these settings, else ``compute(P, seed)``."""
    P, s, directory = _where(preset, seed, root)
    function, values = settings(name, preset, s)
    return measurement(name, function, values, lambda: compute(P, s), directory)


def softmax_survey(preset: str = "book", seed: Optional[int] = None, root: Optional[Path] = None) -> Measurement:
    """The softmax survey of Theorem 4.1, adversarial searches included (one row per matrix)."""
    from .. import theory

    return _stored("thm41_softmax_survey", preset, seed, root, lambda P, s: (theory.softmax_norm_survey(
        P.softmax_ns, P.softmax_reps, s, ascent_ns=P.ascent_ns, ascent_steps=P.ascent_steps,
        ascent_restarts=P.ascent_restarts), {}))


def thm42_grid(preset: str = "book", seed: Optional[int] = None, root: Optional[Path] = None) -> Measurement:
    """Monte Carlo of E‖C^∘p‖_F over chapter 02's (N, D) grid (one row per N, D, p, scaled)."""
    from .. import theory

    return _stored("thm42_monte_carlo", preset, seed, root,
                   lambda P, s: (theory.thm42_monte_carlo(thm42_sizes(P), P.ps, P.thm42_reps, s), {}))


def correlated_qk(preset: str = "book", seed: Optional[int] = None, root: Optional[Path] = None) -> Measurement:
    """Queries and keys sharing X, from independent weights to K = Q, against Theorem 4.2's prediction."""
    from .. import theory

    return _stored("thm42_correlated_qk", preset, seed, root, lambda P, s: (
        theory.correlated_qk_monte_carlo(*P.corr_sizes, P.ps, P.corr_rhos, P.corr_reps, s), {}))


def thm44_grid(preset: str = "book", seed: Optional[int] = None, root: Optional[Path] = None) -> Measurement:
    """Monte Carlo of E‖∂M^∘p/∂Q‖_F (one row per N, D, d, p, scaled)."""
    from .. import theory

    return _stored("thm44_monte_carlo", preset, seed, root,
                   lambda P, s: (theory.thm44_monte_carlo(P.thm44_ns, P.thm44_dims, P.ps, P.thm44_reps, s), {}))


def _readings(mgrid, seed: int) -> tuple[pd.DataFrame, dict]:
    """Both readings of the power for shared and independent factors, and the experiments'
    activation ``poly:p=3`` on one score matrix (N = 64) against both readings."""
    import torch

    from .. import activations, theory
    from ..theory import matrix_powers

    table = pd.concat([matrix_powers.readings_survey(mgrid.ns, mgrid.ps, mgrid.reps, seed, mgrid.D, mgrid.d,
                                                     shared_x=shared) for shared in (True, False)], ignore_index=True)
    a, b = matrix_powers.draw_factors(theory.generator(seed, "matrix-powers-activation"), 1, 64, mgrid.D, mgrid.d)
    scores = (a @ b.transpose(-2, -1) / math.sqrt(mgrid.d))[0]
    with torch.no_grad():
        act = float(activations.get(f"poly:p={P_MAX}")(scores).double().pow(2).sum().sqrt())
    numbers = {"activation_n": 64,
               "activation_vs_elementwise": abs(act / float(matrix_powers.elementwise_power_fro(scores, P_MAX)) - 1),
               "matrix_over_activation": float(matrix_powers.matrix_power_fro(scores, P_MAX)) / act}
    return table, numbers


def matrix_power_readings(preset: str = "book", seed: Optional[int] = None, root: Optional[Path] = None) -> Measurement:
    """Critique 7's survey of both readings of the power (one row per setup, reading, p, N), with
    the activation check in its numbers."""
    from ..theory import matrix_powers

    return _stored("matrix_power_readings", preset, seed, root, lambda P, s: _readings(matrix_powers.grid(preset), s))


# --- fits the chapter shows and the rules read -------------------------------------------------

def thm42_exponents(table: pd.DataFrame, P) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Power-law exponents of Theorem 4.2's Monte Carlo: in N at the grid's fixed D (per p,
    scaled or not; ``expected`` 1 or 1/2) and in D at its fixed N (unscaled; ``expected
    (leading order)`` p/2)."""
    from .. import theory

    fits_n = theory.fit_exponents(table[table.D == P.thm42_d_at_n], "N", ["p", "scaled"])
    fits_n["expected"] = [0.5 if s else 1.0 for s in fits_n.scaled]
    fits_d = theory.fit_exponents(table[(table.N == P.thm42_n_at_d) & ~table.scaled.astype(bool)], "D", ["p", "scaled"])
    fits_d["expected (leading order)"] = fits_d.p / 2
    return fits_n, fits_d


def thm44_exponents(table: pd.DataFrame) -> pd.DataFrame:
    """Power-law exponents in N of Theorem 4.4's Monte Carlo per (D, d, p, scaled)."""
    from .. import theory

    fits = theory.fit_exponents(table, "N", ["D", "d", "p", "scaled"])
    fits["expected"] = [0.5 if s else 1.0 for s in fits.scaled]
    return fits


def matrix_power_exponents(table: pd.DataFrame) -> pd.DataFrame:
    """Exponents in N of both readings per (setup, reading, p), indexed by them."""
    from ..theory import matrix_powers

    return matrix_powers.growth_exponents(table).set_index(["setup", "reading", "p"])


def vit_b_factors(p: int = P_MAX) -> dict:
    """The two factors of Corollary 4.3's bound at ViT-B sizes, with scores scaled by 1/√d (the
    scaling chapter 02 and every model of the book apply) and, for comparison, unscaled.

    With entries of XQ and XK of unit variance and the scores q·k/√d, the entries of the score
    matrix have unit variance and the D factor is √((2p−1)!!), free of D and d; read without the
    1/√d, with unit-variance A, B of inner dimension D = the width, it is √((2p−1)!! Dᵖ).  With the
    exact moment of Theorem 4.2 instead of its leading term, the scaled factor at head dimension d is
    √(E[s^2p]) / d^(p/2) (``vit_b_d_factor_scaled_exact``)."""
    from .. import theory

    size = theory.MODEL_SIZES[VIT_B]
    n, width, d_head = size["N"], size["D"], size["D"] // size["heads"]
    scaled = math.sqrt(theory.double_factorial_odd(p))
    scaled_exact = math.sqrt(theory.sum_product_moment_value(p, d_head) / float(d_head) ** p)
    unscaled = math.sqrt(theory.double_factorial_odd(p) * float(width) ** p)
    return {"vit_b_n": n, "vit_b_width": width, "vit_b_head_dim": d_head, "vit_b_n_factor": math.sqrt(n),
            "vit_b_d_factor_scaled": scaled, "vit_b_d_factor_scaled_over_n_factor": scaled / math.sqrt(n),
            "vit_b_d_factor_scaled_exact": scaled_exact,
            "vit_b_crossover_n_scaled": float(theory.double_factorial_odd(p)),
            "vit_b_d_factor_unscaled": unscaled, "vit_b_d_factor_unscaled_over_n_factor": unscaled / math.sqrt(n),
            "vit_b_crossover_n_unscaled": theory.double_factorial_odd(p) * float(width) ** p}
