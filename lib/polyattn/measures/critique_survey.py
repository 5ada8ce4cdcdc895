"""The random-score survey of the activations' Jacobians that chapter 09's gradient claims read
(:mod:`.critique_gradients`): ``||d phi(S)/dS||_F / sqrt(N)`` on random scores for softmax and
x^p/sqrt(N), p = 1..7, and softmax's saturated rows.  It is a measurement record
(``critique_jacobian_survey``, beside the results directory:
:mod:`polyattn.measures.measurement_records`), computed once when missing.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import pandas as pd

from .critique_common import PLAIN_POWERS, POWERS, listed
from .measurement_records import measurement, measurements_dir

SURVEY_NAME = "critique_jacobian_survey"
SURVEY_FUNCTION = "polyattn.theory:jacobian_scale_survey"
#: The score spreads beyond the theory preset's grid at which softmax's rows saturate.
SATURATION_SIGMAS = (5.0, 10.0, 20.0)


def survey_settings() -> dict:
    """The survey's settings: the theory preset ``book``'s score spreads (and
    :data:`SATURATION_SIGMAS`), N, draws and seed, for softmax and x^p/sqrt(N), p = 1..7."""
    from ..theory import preset

    tp = preset("book")
    return {"specs": ["softmax", *PLAIN_POWERS], "sigmas": sorted(set(tp.sigma_grid) | set(SATURATION_SIGMAS)),
            "n": tp.sigma_n, "reps": tp.sigma_reps, "seed": tp.seed, "D": 64, "saturation": 0.99,
            "init_sigmas": sorted(tp.sigma_grid)}


def jacobian_survey(root: Optional[Path] = None):
    """``||d phi(S)/dS||_F / sqrt(N)`` on random scores of each spread, softmax's saturated rows and
    their Jacobian (:func:`polyattn.theory.jacobian_scale_survey`): the measurement record
    ``critique_jacobian_survey`` when valid, else computed (seconds) and stored."""
    settings = survey_settings()

    def compute():
        from ..theory import jacobian_scale_survey

        table = jacobian_scale_survey(settings["specs"], settings["sigmas"], settings["n"], settings["reps"],
                                      settings["seed"], D=settings["D"], saturation=settings["saturation"])
        return table, {}

    return measurement(SURVEY_NAME, SURVEY_FUNCTION, settings, compute, measurements_dir(root))


def crossing_sigmas() -> dict:
    """For p = 2..7, the score spread at which the Gaussian prediction of x^p/sqrt(N)'s Jacobian,
    ``p sigma^(p-1) sqrt((2p-3)!!)``, equals the linear map's 1."""
    from ..theory import double_factorial_odd

    return {p: (1 / (p * math.sqrt(double_factorial_odd(p - 1)))) ** (1 / (p - 1)) for p in POWERS[1:]}


def random_power_numbers(survey: pd.DataFrame, init_sigmas) -> dict:
    """The survey's Jacobian of x^p/sqrt(N) for p = 1, 3, 7 at the smallest spread and at spread 1,
    and the crossing spreads of :func:`crossing_sigmas`."""
    jt = survey.set_index(["activation", "sigma"])["mean"]
    small = min(init_sigmas)
    one = 1.0 if 1.0 in init_sigmas else max(init_sigmas)
    cross = crossing_sigmas()
    out = {"random_small_sigma": small, "random_unit_sigma": one,
           "crossing_sigmas": listed(cross.values(), ".2f"),
           "crossing_sigma_min": min(cross.values()), "crossing_sigma_max": max(cross.values())}
    for p in (1, 3, 7):
        out[f"random_p{p}_small_sigma"] = float(jt[(f"poly:p={p}", small)])
        out[f"random_p{p}_unit_sigma"] = float(jt[(f"poly:p={p}", one)])
    return out


def random_softmax_numbers(survey: pd.DataFrame) -> dict:
    """Softmax on random scores: its Jacobian's range over the spreads, the spread at which its
    rows first saturate and at which half of them do, and a saturated row's largest Jacobian."""
    soft = survey[survey["activation"] == "softmax"]
    any_sat, half_sat = soft[soft["saturated_share"] > 0], soft[soft["saturated_share"] >= 0.5]
    return {"random_softmax_min": float(soft["mean"].min()), "random_softmax_max": float(soft["mean"].max()),
            "random_sigma_min": float(soft["sigma"].min()), "random_sigma_max": float(soft["sigma"].max()),
            "random_first_saturated_sigma": float(any_sat["sigma"].min()) if len(any_sat) else float("nan"),
            "random_half_saturated_sigma": float(half_sat["sigma"].min()) if len(half_sat) else float("nan"),
            "random_saturated_row_jacobian_max": float(soft["row_jac_saturated"].max())}
