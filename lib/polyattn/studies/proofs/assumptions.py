"""Chapter 02's section on where the theorems' assumptions fail, quantified: queries and keys that
share X, which factor dominates at ViT sizes, the undefined d, and the norms of a micro ViT at
initialisation and after training.

    correlated(preset, seed); correlated_table(...); correlated_numbers(...)  # shared X
    factors_table(); factor_numbers()                                         # N against D
    head_dim_numbers()                                                        # the undefined d
    init_norms(...); trained_norms(...); model_norms_table(...)               # at init and trained
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional, Sequence

import pandas as pd

from ... import model_norms, theory
from ...analysis.tables import number_cell
from ...book.deliver import styled
from ...display import name
from ...measures import proofs_measurements
from ...results import results_root
from .page import P_MAX, UNSCALED_CUBE, claim_numbers, formatted, nowrap_table, pm_cell

#: The activations whose norms the page measures on a micro ViT at initialisation (and trained).
MODEL_SPECS = ("softmax", "poly:p=1", "poly:p=3", "poly:p=3,c=1/14", UNSCALED_CUBE)


# --- queries and keys that share X --------------------------------------------------------------


@lru_cache(maxsize=8)
def correlated(preset: str, seed: int) -> pd.DataFrame:
    """The stored survey of queries and keys sharing X (:func:`polyattn.measures.proofs_measurements.correlated_qk`);
    kept for the session (do not modify the frame)."""
    return proofs_measurements.correlated_qk(preset, seed).table


def middle_rho(rhos: Sequence[float]) -> float:
    """The correlation the page quotes between 0 and 1: 0.5 when the grid has it, else its first
    value strictly between, else 1."""
    inner = [r for r in rhos if 0 < r < 1]
    return 0.5 if 0.5 in inner else (inner[0] if inner else 1.0)


def correlated_table(corr: pd.DataFrame, preset: str, seed: int):
    """Per p: the norm over Theorem 4.2's prediction for independent A and B, for queries and keys
    sharing X at ρ = 0, at :func:`middle_rho` and at K = Q, and the diagonal model at K = Q."""

    P = theory.preset(preset)
    n, D, d = P.corr_sizes
    mid = middle_rho(P.corr_rhos)
    shared = corr[corr.setup == "shared X"].set_index(["rho", "p"])
    independent = corr[corr.setup == "independent A, B"].set_index("p")

    def cell(r):
        return pm_cell(r.ratio, r.ratio_ci_lo, r.ratio_ci_hi, "#.3g")

    rows = [{"p": p, "independent A, B": cell(independent.loc[p]), "shared X, ρ = 0": cell(shared.loc[(0.0, p)]),
             **({f"ρ = {mid:g}": cell(shared.loc[(mid, p)])} if mid < 1 else {}),
             "K = Q (ρ = 1)": cell(shared.loc[(1.0, p)]),
             "K = Q, diagonal model": f"{theory.qk_equal_prediction(n, d, p):.3g}"} for p in P.ps]
    return nowrap_table(rows, f"E‖C∘ᵖ‖_F over Theorem 4.2's prediction ± 95% CI (N = {n}, D = {D}, d = {d}; "
                             f"{P.corr_reps} draws per cell; preset {preset}, seed {seed})")


def correlated_numbers(corr: pd.DataFrame, preset: str) -> dict[str, str]:
    """The glued numbers of the correlation section: the sizes, and for p = 3 the ratios at ρ = 0, at
    the middle ρ and at K = Q, and the diagonal model's."""
    P = theory.preset(preset)
    n, D, d = P.corr_sizes
    ratio = corr[corr.setup == "shared X"].set_index(["rho", "p"]).ratio
    mid = middle_rho(P.corr_rhos)
    out = {"corr_sizes": f"({n}, {D}, {d})", "corr_rho_mid": f"{mid:g}", "corr_mid_p3": f"{ratio[(mid, P_MAX)]:.2f}",
           "corr_k_eq_q_p3": f"{ratio[(1.0, P_MAX)]:.1f}",
           "corr_model_p3": f"{theory.qk_equal_prediction(n, d, P_MAX):.1f}"}
    out["corr_rho0_p3"] = f"{ratio[(0.0, P_MAX)]:.3f}"
    return out


# --- which factor dominates at ViT sizes; the undefined d ---------------------------------------


#: The sizes of :data:`polyattn.theory.MODEL_SIZES` the factors table shows.
FACTOR_MODELS = (proofs_measurements.VIT_B, "ViT-Ti (Tiny-ImageNet, patch 4)", "micro ViT (this book)")


def factors_table(p: int = P_MAX, models: Sequence[str] = FACTOR_MODELS):
    """The two factors of Corollary 4.3's bound at the sizes ``models`` of
    :data:`polyattn.theory.MODEL_SIZES`, with the scores scaled by 1/√d and read without it."""
    factors = theory.bound_factors_table([p], {m: theory.MODEL_SIZES[m] for m in models})
    rows = [{"model": r.model.split(" (")[0] if "micro" not in r.model else "micro ViT", "N, D, d": f"{r.N}, {r.D}, {r.d_head}",
             "√N": f"{r.n_factor:.3g}", "D factor, ÷ √d": f"{r.dfactor_scaled_scores:.3g}",
             "unscaled, D = width | d": f"{number_cell(r.dfactor_model)} | {number_cell(r.dfactor_head)}",
             "√N reaches it at N =": f"{number_cell(r.n_crossover_model, '.2g')} | {number_cell(r.n_crossover_head, '.2g')}"}
            for r in factors.itertuples()]
    # single numbers stay on one line; the two-number cells ("a | b") may break at their bar
    table = styled(rows, f"The two factors of Corollary 4.3's bound for p = {p} (unit-variance factors, exact "
                         "arithmetic): the D factor with the scores divided by √d, and without it, D the width | d")
    return table.set_properties(subset=["N, D, d", "√N", "D factor, ÷ √d"], **{"white-space": "nowrap"})


def factor_numbers() -> dict[str, str]:
    """The glued ViT-B factors, from the finding on Theorem 4.2."""
    n = claim_numbers("thm42_43")
    return formatted(n, {"vit_b_n_factor": ".0f", "vit_b_d_factor_scaled": ".2f", "vit_b_d_factor_scaled_exact": ".2f",
                         "vit_b_crossover_n_scaled": ".0f", "vit_b_d_factor_unscaled_over_n_factor": ".3g",
                         "vit_b_crossover_n_unscaled": ".2g"})


def head_dim_numbers(n: int = 196, D: int = 768, ds: tuple[int, int] = (64, 768)) -> dict[str, str]:
    """The factor by which reading d as the model width instead of the head dimension moves the bound."""
    heads = theory.head_dim_table((1, P_MAX), n=n, D=D, ds=ds).set_index(["p", "d"]).relative_to_first_d
    return {"head_factor_p1": f"{heads[(1, ds[1])]:.2f}", "head_factor_p3": f"{heads[(P_MAX, ds[1])]:.1f}"}


# --- at initialisation and after training -------------------------------------------------------


@lru_cache(maxsize=8)
def init_norms(preset: str, seed: int) -> pd.DataFrame:
    """:func:`polyattn.model_norms.init_model_norms` of :data:`MODEL_SPECS` on the micro ViT; kept
    for the session."""
    return model_norms.init_model_norms(list(MODEL_SPECS), seed, size="micro", batch=theory.preset(preset).vit_batch)


def trained_norms(preset: str, results: Optional[str] = None) -> pd.DataFrame:
    """The norms at the last probed step of the finished Table 1 training records stored at
    ``preset`` (:func:`polyattn.model_norms.trained_norms_from_records`); empty when none is stored."""
    directory = results if results is not None else str(results_root(preset) / "vit_table1")
    return model_norms.trained_norms_from_records(directory)


def model_norms_table(init: pd.DataFrame, trained: pd.DataFrame, preset: str):
    """Per activation: ‖A‖_F/√N of the micro ViT at initialisation, the std of its scores and the
    i.i.d.-Gaussian prediction from it; and, when trained records are stored, the same norm at their
    last probed step (mean and largest over records, layers and heads)."""
    at_init = init.groupby("activation", sort=False)[["fro_over_sqrt_n", "score_std", "gaussian_over_sqrt_n"]].mean()
    trained_stats = None
    if not trained.empty:
        t = trained[trained.metric == "attn_fro_over_sqrt_n"]
        trained_stats = t.groupby("activation")["value"].agg(["mean", "max"])
    rows = []
    for a, r in at_init.iterrows():
        row = {"activation": name(a), "at init": number_cell(r.fro_over_sqrt_n),
               "score std at init": number_cell(r.score_std),
               "Gaussian prediction": number_cell(r.gaussian_over_sqrt_n)}
        if trained_stats is not None:
            row["trained, mean (largest)"] = (
                f"{number_cell(trained_stats.loc[a, 'mean'])} ({number_cell(trained_stats.loc[a, 'max'])})"
                if a in trained_stats.index else "no stored run")
        rows.append(row)
    n = int(init.N.iloc[0])
    caption = (f"‖A‖_F/√N of a micro ViT (N = {n}; mean over 4 layers × 4 heads) at initialisation on "
               f"{theory.preset(preset).vit_batch} standard-normal images, beside its prediction for Gaussian scores of "
               "the measured std")
    if trained_stats is not None:
        caption += f"; trained: {trained.record.nunique()} finished Table 1 records (preset {preset}), last probed step"
    return nowrap_table(rows, caption)


def model_norms_numbers(init: pd.DataFrame, trained: pd.DataFrame) -> dict[str, str]:
    """The glued numbers of the initialisation section: the score scale, the norms of softmax and
    x³/√N, the measured x³/√N norm over its Gaussian prediction, and the number of trained records
    read."""
    mean = init.groupby("activation")[["fro_over_sqrt_n", "score_std"]].mean()
    cube = init[init.activation == f"poly:p={P_MAX}"]
    return {"init_n": f"{int(init.N.iloc[0])}", "init_score_std": f"{init.score_std.mean():.2g}",
            "init_softmax": f"{mean.loc['softmax', 'fro_over_sqrt_n']:.3f}",
            "init_poly3": number_cell(float(mean.loc[f"poly:p={P_MAX}", "fro_over_sqrt_n"]), ".2g"),
            "init_poly3_over_prediction": f"{(cube.fro_over_sqrt_n / cube.gaussian_over_sqrt_n).mean():.2f}",
            "trained_records": f"{trained.record.nunique() if not trained.empty else 0:,}"}
