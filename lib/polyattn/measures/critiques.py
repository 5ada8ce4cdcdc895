"""Chapter 09's measured claims: the reviewers' objections that a measurement decides.

``norm_paradox``
    the conclusion "the norms do not explain accuracy", from Spearman's rho of the attention
    and Jacobian norms with final accuracy over every Table 1 run (chapter 03's numbers,
    :func:`polyattn.measures.norms.correlations`); the premise (the unscaled x^3's norms below
    x/sqrt(N)'s, probe by probe) and the accuracy difference are reported beside it;
``scale_sensitivity``
    a factor of 2 in the scale constant, read off the scale sweep (grid ``vit_scale``);
``powers_gradients`` / ``softmax_saturation`` / ``outliers`` / ``attention_maps``
    what the short retrainings of Table 1's model (grid ``critique_short_retrain``) stored of
    their models: the gradient through x^p/sqrt(N), softmax's saturated rows, one token's column
    of the scores multiplied, and the maps' negative mass and attention distance.

Each reads stored records, never trains, and decides its form by the rules of
:mod:`polyattn.analysis.critique_verdicts` (thresholds named there).  The random-score survey of
the activations' Jacobians is a measurement record (``critique_jacobian_survey``, beside the
results directory: :mod:`polyattn.measures.measurement_records`), computed once when missing.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from ..analysis import critique_verdicts as rules
from ..claims.spec import Finding
from .stored import grid_records

TABLE1_GRID, SWEEP_GRID, SHORT_GRID = "vit_table1", "vit_scale", "critique_short_retrain"

# --- the norm paradox ------------------------------------------------------------------------

#: The reviewer's pair: the unscaled cube against the linear map with the paper's scale (the
#: paper's x/16 on Tiny-ImageNet, where 16 = sqrt(256), is x/sqrt(N) here).
UNSCALED_CUBE, LINEAR = "poly:p=3,c=1", "poly:p=1"
#: The activations whose accuracy the chapter compares with x/sqrt(N), one Holm family.
PARADOX_ACTIVATIONS = ("poly:p=1", "poly:p=3,c=1", "poly:p=3", "poly:p=3,c=1/14", "softmax")
#: The norms compared probe by probe (the premise).
PREMISE_NORMS = ("attn_fro", "act_jac_fro", "grad_attn_fro")
#: The claim's two norms, as chapter 03 correlates them with accuracy (the conclusion).
EXPLAINING_NORMS = {"attn_fro_over_sqrt_n_mean": "attention", "act_jac_fro_mean": "jacobian"}
#: Fewer activations with runs than this give no interval that resamples activations.
MIN_ACTIVATIONS = 3

# --- scale sensitivity ------------------------------------------------------------------------

#: The factor between the paper's 1/16 and 1/8, on the axis k = c sqrt(N).
K_LOW, K_HIGH = 1.0, 2.0

# --- the short retrainings ----------------------------------------------------------------------

#: The plain powers x^p/sqrt(N) and, for even p, the sign-keeping x|x|^(p-1)/sqrt(N).
POWERS = tuple(range(1, 8))
PLAIN_POWERS = tuple(f"poly:p={p}" for p in POWERS)
POWER_SPECS = PLAIN_POWERS + tuple(f"poly_odd:p={p}" for p in POWERS if p % 2 == 0)
#: The activations whose outlier sweeps and maps are compared, softmax first.
MAP_SPECS = ("softmax", "poly:p=3", "poly:p=3,c=1/14", "poly:p=1")
#: The place the outlier verdict is read from: the token's column of the score matrix.
OUTLIER_PLACE = "scores"
#: Bootstrap draws over test images, and their seed, for the paired accuracy drops.
N_BOOT, BOOT_SEED = 2000, 0

# --- the random-score survey (a measurement record) ---------------------------------------------

SURVEY_NAME = "critique_jacobian_survey"
SURVEY_FUNCTION = "polyattn.theory:jacobian_scale_survey"
#: The score spreads beyond the theory preset's grid at which softmax's rows saturate.
SATURATION_SIGMAS = (5.0, 10.0, 20.0)


def _finding(form: str, summary: str, numbers: dict) -> Finding:
    """A finding whose sentence writes its numbers as a reader reads them (minus signs, powers of ten)."""
    from ..numbers import readable_numbers

    return Finding(form, readable_numbers(summary), numbers)


def _name(spec: str) -> str:
    from ..display import name

    return name(spec)


def _margin() -> float:
    """The chapter's equivalence margin in accuracy points: the register's for Table 1's recipe."""
    from ..claims.register import claim

    return float(claim("table_parity").margin)


# --- the norm paradox ------------------------------------------------------------------------


def premise_numbers(records) -> dict:
    """The unscaled cube against x/sqrt(N), cell by cell (seed, layer, probed step; mean over
    heads): the share of cells where each norm is below, at the first probe and at every later
    one, the median ratio, and the first step at which the cube's mean ``||A||_F`` is above."""
    from .. import analysis
    from ..analysis import critiques as crit

    pair = [r for r in records if r["config"]["activation"] in (UNSCALED_CUBE, LINEAR)]
    probes = analysis.probe_frame(pair, list(PREMISE_NORMS))
    order = crit.norm_order(probes, UNSCALED_CUBE, LINEAR, PREMISE_NORMS).set_index("metric")
    attn, jac, grad = (order.loc[m] for m in PREMISE_NORMS)
    mean_attn = (probes[probes["metric"] == "attn_fro"].groupby(["step", "activation"])["value"].mean()
                 .unstack())
    above = mean_attn.index[mean_attn[UNSCALED_CUBE] > mean_attn[LINEAR]]
    return {
        "attention_below_first_probe": float(attn["share_lower_first"]),
        "attention_below_later_probes": float(attn["share_lower_rest"]),
        "jacobian_below_first_probe": float(jac["share_lower_first"]),
        "jacobian_below_later_probes": float(jac["share_lower_rest"]),
        "gradient_below_later_probes": float(grad["share_lower_rest"]),
        "attention_median_ratio": float(attn["median_ratio"]),
        "jacobian_median_ratio": float(jac["median_ratio"]),
        "premise_first_probe": rules.norm_premise(attn["share_lower_first"], jac["share_lower_first"]),
        "premise_later_probes": rules.norm_premise(attn["share_lower_rest"], jac["share_lower_rest"]),
        "attention_above_from_step": int(above.min()) if len(above) else "no probed step",
        "last_probed_step": int(mean_attn.index.max()),
    }


def paradox_accuracy(records, margin: Optional[float] = None) -> pd.DataFrame:
    """Final accuracy of each activation of :data:`PARADOX_ACTIVATIONS` against x/sqrt(N), paired
    by seed (:func:`polyattn.analysis.paired_difference`, Holm over the comparisons, TOST against
    the chapter's margin)."""
    from .. import analysis

    final = analysis.final_accuracy(records)
    present = set(final["activation"])
    return analysis.paired_difference(final, baseline=LINEAR, margin=_margin() if margin is None else margin,
                                      compare=[a for a in PARADOX_ACTIVATIONS if a != LINEAR and a in present])


def accuracy_numbers(records) -> dict:
    """The unscaled cube's final accuracy minus x/sqrt(N)'s, paired by seed, and its result."""
    from .. import analysis

    diffs = paradox_accuracy(records)
    row = diffs.set_index("activation").loc[UNSCALED_CUBE]
    v = analysis.comparison_verdict(row, name="the unscaled x³", baseline="x/√N")
    return {"accuracy_difference": float(row["mean_diff"]), "accuracy_ci_low": float(row["ci_low"]),
            "accuracy_ci_high": float(row["ci_high"]), "accuracy_pairs": int(row["n_pairs"]),
            "accuracy_holm_p": float(row["p_holm"]), "accuracy_comparisons": int(row["family_size"]),
            "accuracy_detectable": float(row["mde"]), "accuracy_tost_p": float(row["tost_p"]),
            "accuracy_result": v.form, "margin": float(row["margin"])}


def explanation_numbers(corr: pd.DataFrame) -> dict:
    """Each of the claim's two norms against accuracy over every run (a row of
    :func:`polyattn.analysis.correlation_table`): rho, its intervals over runs, over whole
    activations and within an activation, and what the rule reads from it."""
    out = {}
    rows = corr.set_index("norm")
    for column, key in EXPLAINING_NORMS.items():
        r = rows.loc[column]
        out.update({f"{key}_rho": float(r["rho"]), f"{key}_ci_low": float(r["ci_low"]),
                    f"{key}_ci_high": float(r["ci_high"]),
                    f"{key}_activations_ci_low": float(r["cluster_ci_low"]),
                    f"{key}_activations_ci_high": float(r["cluster_ci_high"]),
                    f"{key}_within_rho": float(r["within_rho"]), f"{key}_within_ci_low": float(r["within_ci_low"]),
                    f"{key}_within_ci_high": float(r["within_ci_high"]),
                    f"{key}_reading": rules.norm_explains(r["cluster_ci_low"], r["cluster_ci_high"])})
    return out


def _conclusion_text(form: str, n: dict) -> str:
    """The clause that says what the correlations decide."""
    s = f"{rules.STRONG_RHO:g}"
    which = [label for key, label in (("attention", "the attention norm"), ("jacobian", "the Jacobian"))
             if n[f"{key}_reading"] == ("explains" if form == "not supported" else "undecided")]
    if form == "inconclusive at this scale":
        return (f"{n['activations']} activations are too few to resample whole activations (at least "
                f"{MIN_ACTIVATIONS} are needed)")
    if form == "holds":
        return f"neither orders the activations by accuracy (both intervals inside $\\pm {s}$)"
    if form == "not supported":
        return f"{' and '.join(which)} {'orders' if len(which) == 1 else 'order'} the activations by accuracy"
    return (f"neither orders the activations detectably, but the interval of {' and of '.join(which)} reaches "
            f"$|\\rho| \\ge {s}$, so {n['activations']} activations cannot show that the norms do not explain accuracy")


def _premise_text(n: dict) -> str:
    if n["premise_later_probes"] == "lower":
        return "holds through training"
    if n["premise_first_probe"] == "lower":
        return "holds at the first probe only"
    return "does not hold"


def norm_paradox(root: Optional[Path] = None) -> Finding:
    """Do the attention and Jacobian norms explain which activation trains best?  Spearman's rho
    of each with final accuracy over every stored Table 1 run (resampling whole activations);
    beside it the reviewer's premise and the unscaled cube's accuracy against x/sqrt(N)."""
    from .norms import correlations

    grid, norms, corr = correlations(root)
    cfg = grid.configs[0]
    scale = (f"Table 1 analogue, $N = {cfg.seq_len}$, {cfg.train_subset:,} images, {cfg.epochs} epochs, "
             f"{len({c.seed for c in grid.configs})} seeds")
    stored_acts = {r["config"]["activation"] for r in grid.records}
    if corr is None or not {UNSCALED_CUBE, LINEAR} <= stored_acts:
        return _finding("inconclusive at this scale",
                        f"{grid.stored} of the {grid.planned} runs of the Table 1 analogue are stored, without both "
                        f"the unscaled $x^3$ and $x/\\sqrt{{N}}$ ({scale}).",
                        {"runs": grid.stored, "runs_planned": grid.planned})
    n_activations = int(norms.loc[norms["test_acc"].notna(), "activation"].nunique())
    numbers = {"runs": int(corr.iloc[0]["n"]), "runs_planned": grid.planned, "activations": n_activations,
               "seq_len": int(cfg.seq_len), "training_images": int(cfg.train_subset), "epochs": int(cfg.epochs),
               "strong_rho": rules.STRONG_RHO, **explanation_numbers(corr), **premise_numbers(grid.records),
               **accuracy_numbers(grid.records)}
    form = ("inconclusive at this scale" if n_activations < MIN_ACTIVATIONS else
            rules.norms_explain_form(numbers[f"{k}_reading"] for k in EXPLAINING_NORMS.values()))
    n = numbers
    result = "detectably worse" if n["accuracy_result"].startswith("worse") else "not shown worse"
    summary = (f"Across {n['runs']} Table 1 runs of {n_activations} activations, Spearman $\\rho$ of final accuracy "
               f"with $\\lVert A\\rVert_F/\\sqrt{{N}}$ is {n['attention_rho']:+.2f} (95% CI resampling whole "
               f"activations {n['attention_activations_ci_low']:+.2f} to {n['attention_activations_ci_high']:+.2f}) "
               f"and with $\\lVert\\partial\\phi(S)/\\partial S\\rVert_F$ {n['jacobian_rho']:+.2f} "
               f"({n['jacobian_activations_ci_low']:+.2f} to {n['jacobian_activations_ci_high']:+.2f}): "
               f"{_conclusion_text(form, n)}; the premise {_premise_text(n)} (the unscaled $x^3$'s "
               f"$\\lVert A\\rVert_F$ and Jacobian are below $x/\\sqrt{{N}}$'s in "
               f"{n['attention_below_first_probe']:.0%} and {n['jacobian_below_first_probe']:.0%} of first-probe "
               f"cells, {n['attention_below_later_probes']:.0%} and {n['jacobian_below_later_probes']:.0%} of later "
               f"ones), and its accuracy differs by {n['accuracy_difference']:+.2f} points (95% CI "
               f"{n['accuracy_ci_low']:+.2f} to {n['accuracy_ci_high']:+.2f}), {result} ({scale}).")
    return _finding(form, summary, numbers)


# --- scale sensitivity ------------------------------------------------------------------------


def sweep_final(records) -> pd.DataFrame:
    """One row per scale-sweep run with its final accuracy and its multiplier ``k = c sqrt(N)``."""
    from .. import analysis

    final = analysis.final_accuracy(records)
    return final.assign(k=final["c"] * np.sqrt(final["seq_len"]))


def constants_test(final: pd.DataFrame) -> dict:
    """Per sequence length, the p-value of a one-way F-test that the grid's constants give the same
    accuracy (constants with fewer than two trained runs left out; NaN with fewer than two)."""
    from scipy import stats

    out = {}
    for n, g in final[final["status"] == "ok"].groupby("seq_len"):
        groups = [v["test_acc"].to_numpy() * 100 for _, v in g.groupby("c") if len(v) > 1]
        out[int(n)] = float(stats.f_oneway(*groups).pvalue) if len(groups) > 1 else float("nan")
    return out


def factor_effects(final: pd.DataFrame) -> pd.DataFrame:
    """A factor of 2 in k at each length (k = 1 -> 2, the paper's 1/16 -> 1/8, and k = 1/2 -> 1),
    read off each seed's curve (:func:`polyattn.analysis.critiques.factor_effect`), with the
    whole grid's best constant, range and F-test p."""
    from ..analysis import critiques as crit

    effects = pd.concat([crit.factor_effect(final, K_LOW, K_HIGH), crit.factor_effect(final, K_LOW / 2, K_LOW)],
                        ignore_index=True)
    return effects.assign(f_test_p=effects["seq_len"].map(constants_test(final)))


def paper_k_values() -> list:
    """The paper's constants on the axis k = c sqrt(N) (patch tokens), rounded and without repeats."""
    from ..analysis import critiques as crit

    return sorted(set(np.round(crit.paper_constants()["k_patches"], 3)))


def _listed(values, fmt: str, sep: str = ", ") -> str:
    return sep.join(format(v, fmt) for v in values)


def scale_sensitivity(root: Optional[Path] = None) -> Finding:
    """Accuracy at k = 2 minus at k = 1 (the paper's 1/8 against its 1/16) at each length of the
    scale sweep, with 95% t-intervals over seeds, against the chapter's margin."""
    grid = grid_records(SWEEP_GRID, root)
    cfg = grid.configs[0]
    k_values = paper_k_values()
    numbers = {"paper_k": _listed(k_values, "g"), "runs": grid.stored, "runs_planned": grid.planned,
               "training_images": int(cfg.train_subset), "epochs": int(cfg.epochs)}
    if not grid.records:
        return _finding("inconclusive at this scale", f"No run of the scale sweep is stored ({cfg.train_subset:,} "
                       f"images, {cfg.epochs} epochs).", numbers)
    final = sweep_final(grid.records)
    effects = factor_effects(final)
    e12 = effects[effects["k_low"] == K_LOW].set_index("seq_len")
    cells = final[final["status"] == "ok"].groupby(["seq_len", "k"])["test_acc"].std()
    half = (e12["ci_high"] - e12["ci_low"]) / 2
    margin = _margin()
    form = rules.scale_sensitivity_form(zip(e12["ci_low"], e12["ci_high"]), margin)
    if e12[["ci_low", "ci_high"]].isna().all().all():
        form = "inconclusive at this scale"
    numbers.update({
        "lengths": _listed(e12.index, "d"), "seeds": int(e12["n_seeds"].max()), "margin": margin,
        "k_1_to_2_by_length": "; ".join(f"{r['diff']:+.1f} points at N = {n} (95% CI {r['ci_low']:+.1f} to "
                                        f"{r['ci_high']:+.1f})" for n, r in e12.iterrows()),
        "half_width_min": float(half.min()), "half_width_max": float(half.max()),
        "range_by_length": "; ".join(f"{r['range']:.1f} points at N = {n} (F-test p = {r['f_test_p']:.2g})"
                                     for n, r in e12.iterrows()),
        "seed_sd_mean": float(100 * cells.mean()),
    })
    for n, r in e12.iterrows():
        numbers.update({f"k_1_to_2_at_{n}": float(r["diff"]), f"k_1_to_2_at_{n}_ci_low": float(r["ci_low"]),
                        f"k_1_to_2_at_{n}_ci_high": float(r["ci_high"]), f"range_at_{n}": float(r["range"]),
                        f"f_test_p_at_{n}": float(r["f_test_p"])})
    summary = (f"On the axis $k = c\\sqrt{{N}}$ the paper's constants lie at $k \\in \\{{{numbers['paper_k']}\\}}$; "
               f"$k = 1 \\to 2$ (its $1/16$ vs $1/8$) changes accuracy by "
               + ", ".join(f"{r['diff']:+.1f} ({r['ci_low']:+.1f} to {r['ci_high']:+.1f})" for _, r in e12.iterrows())
               + f" points at $N = {', '.join(str(n) for n in e12.index)}$; best minus worst over a factor 256: "
               + ", ".join(f"{r['range']:.1f}" for _, r in e12.iterrows())
               + f" points ({cfg.train_subset:,} images, {cfg.epochs} epochs, {numbers['seeds']} seeds).")
    return _finding(form, summary, numbers)


# --- the random-score survey ----------------------------------------------------------------------


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
    from .measurement_records import measurement, measurements_dir

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
           "crossing_sigmas": _listed(cross.values(), ".2f"),
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


# --- the short retrainings ---------------------------------------------------------------------------


def short_records(root: Optional[Path] = None):
    """The stored short retrainings (:func:`polyattn.measures.stored.grid_records`) and whether
    every planned run is stored with its measurements (each question compares activations, so it
    waits for all of them)."""
    grid = grid_records(SHORT_GRID, root)
    measured = [r for r in grid.records if r["status"] == "ok" and r.get("final")]
    return grid, grid.complete and len(measured) == grid.planned


def _short_pending(grid) -> Finding:
    measured = sum(1 for r in grid.records if r["status"] == "ok" and r.get("final"))
    diverged = [_name(r["config"]["activation"]) for r in grid.records if r["status"] != "ok"]
    return _finding("inconclusive at this scale",
                    f"{measured} of the {grid.planned} short retrainings of Table 1's model are stored with their "
                    f"measurements (diverged: {', '.join(diverged) or 'none'}); every question compares activations, "
                    "so it waits for all of them.",
                    {"short_runs_measured": measured, "short_runs_planned": grid.planned})


def gradient_numbers(records) -> dict:
    """The gradient through the activation, ``||dL/dS||_F`` (mean over layers, samples and heads),
    at initialisation and after the short retraining, for p = 1..7; which powers the retraining left
    trapped (scores within :data:`~polyattn.analysis.critique_verdicts.TRAPPED_GROWTH` times their
    initial spread) and which, their scores grown, have a Jacobian above
    :data:`~polyattn.analysis.critique_verdicts.EXPLODED_FACTOR` times the linear map's."""
    from scipy import stats

    from ..analysis import critiques as crit

    grads = crit.short_gradients(records)
    acc = crit.short_accuracy(records)
    by = grads.groupby(["activation", "state"])
    gmean, std_of, jac_of = by["grad_scores_fro"].mean(), by["score_std"].mean(), by["act_jac_fro"].mean()
    init = np.array([gmean[(a, "initialisation")] for a in PLAIN_POWERS])
    trained = np.array([gmean[(a, "trained")] for a in PLAIN_POWERS])
    odd = max(abs(gmean[(f"poly_odd:p={p}", "initialisation")] / gmean[(f"poly:p={p}", "initialisation")] - 1)
              for p in POWERS if p % 2 == 0)
    trapped = [a for a in POWER_SPECS if rules.trapped(std_of[(a, "initialisation")], std_of[(a, "trained")])]
    escaped = [a for a in PLAIN_POWERS[1:] if a not in trapped]
    jac_lin = float(jac_of[(LINEAR, "trained")])
    exploded = [a for a in escaped if rules.exploded(jac_of[(a, "trained")], jac_lin)]
    return {
        "gradient_p1_initial": float(init[0]), "gradient_p7_initial": float(init[-1]),
        "gradient_p1_trained": float(trained[0]), "gradient_p7_trained": float(trained[-1]),
        "gradient_ratio_initial": float(init[-1] / init[0]), "gradient_ratio_trained": float(trained[-1] / trained[0]),
        "gradient_rank_correlation_initial": float(stats.spearmanr(POWERS, init).statistic),
        "gradient_rank_correlation_trained": float(stats.spearmanr(POWERS, trained).statistic),
        "sign_kept_change_initial": float(odd),
        "score_std_initial": float(grads.loc[grads["state"] == "initialisation", "score_std"].mean()),
        "accuracy_by_power": ", ".join(f"p = {a.split('=')[1]} {acc[a]:.1f}%" for a in PLAIN_POWERS),
        "accuracy_p1": float(acc[PLAIN_POWERS[0]]), "accuracy_p7": float(acc[PLAIN_POWERS[-1]]),
        "training_seconds": float(sum(r["provenance"]["wall_s"] for r in records)), "short_runs": len(records),
        "powers": len(POWER_SPECS), "trapped": len(trapped),
        "trapped_powers": ", ".join(map(_name, trapped)) or "none",
        "exploded": len(exploded), "exploded_powers": ", ".join(map(_name, exploded)) or "none",
        "linear_jacobian_trained": jac_lin,
        "exploded_jacobian_max": max((float(jac_of[(a, "trained")]) for a in exploded), default=float("nan")),
        "trapped_growth": rules.TRAPPED_GROWTH, "exploded_factor": rules.EXPLODED_FACTOR,
        "vanish_rho": rules.VANISH_RHO, "vanish_ratio": rules.VANISH_RATIO,
    }


def powers_gradients(root: Optional[Path] = None) -> Finding:
    """Does the gradient through x^p/sqrt(N) vanish for small scores (at initialisation it falls
    with p: rank correlation at most VANISH_RHO, p = 7 below VANISH_RATIO of p = 1) and explode for
    large ones (a power whose scores grew has a Jacobian above EXPLODED_FACTOR times the linear
    map's)?  Both halves -> holds, one -> mixed, neither -> not supported."""
    grid, complete = short_records(root)
    if not complete:
        return _short_pending(grid)
    survey = jacobian_survey(root)
    n = {**gradient_numbers(list(grid.records)),
         **random_power_numbers(survey.table, survey_settings()["init_sigmas"])}
    form = rules.powers_gradient_form(n["gradient_rank_correlation_initial"], n["gradient_ratio_initial"],
                                      n["exploded"] > 0)
    summary = (f"$\\lVert\\partial L/\\partial S\\rVert_F$ through $x^p/\\sqrt{{N}}$ in Table 1's micro ViT falls "
               f"from {n['gradient_p1_initial']:.2g} ($p = 1$) to {n['gradient_p7_initial']:.2g} ($p = 7$) at "
               f"initialisation; after a short retraining (seed 0) {n['trapped']} of {n['powers']} powers are still "
               f"trapped there ({n['trapped_powers']}), while {n['exploded']} powers whose scores grew have a Jacobian "
               f"above {rules.EXPLODED_FACTOR:g} times the linear map's; short-retraining accuracy "
               f"{n['accuracy_p1']:.0f}% at $p = 1$, {n['accuracy_p7']:.0f}% at $p = 7$; on random scores it vanishes "
               f"below $\\sigma \\approx$ {n['crossing_sigma_min']:.2f} to {n['crossing_sigma_max']:.2f} and explodes "
               f"above (accuracy after full training: the next verdict).")
    return _finding(form, summary, n)


def saturation_numbers(records) -> dict:
    """Softmax in the short retrainings: the largest share of a layer's rows whose largest weight
    exceeds 0.99, at initialisation or after the retraining, and the largest score spread."""
    from ..analysis import critiques as crit

    grads = crit.short_gradients(records)
    soft = grads[grads["activation"] == "softmax"]
    return {"saturated_share_max": float(soft["saturated_share"].max()),
            "score_std_max": float(soft["score_std"].max()), "saturated_share_threshold": rules.SATURATED_SHARE}


def softmax_saturation(root: Optional[Path] = None) -> Finding:
    """Softmax starves gradients where its rows saturate: "holds" when at least SATURATED_SHARE of
    some layer's rows saturate in the short retrainings, else "holds only under its assumptions"
    (the mechanism, measured on random scores, needs scores large enough to saturate)."""
    grid, complete = short_records(root)
    if not complete:
        return _short_pending(grid)
    n = {**saturation_numbers(list(grid.records)), **random_softmax_numbers(jacobian_survey(root).table)}
    form = rules.saturation_form(n["saturated_share_max"])
    summary = (f"A saturated softmax row (max weight $> 0.99$) has Jacobian norm at most "
               f"{n['random_saturated_row_jacobian_max']:.3f} on random scores (sharp bound $1/2$), but at most "
               f"{n['saturated_share_max']:.1%} of rows saturate in Table 1's micro ViT at initialisation or after a "
               f"short retraining; trained-at-scale models not measured.")
    return _finding(form, summary, n)


def outlier_pairs(records, n_boot: int = N_BOOT, seed: int = BOOT_SEED) -> pd.DataFrame:
    """Per place (embedding, attention input, scores) and polynomial of :data:`MAP_SPECS`: the
    accuracy it loses when one token is multiplied by the largest factor, against softmax's loss,
    paired on the same test images (:func:`polyattn.analysis.critiques.paired_drop_difference`)."""
    from .. import model_checks
    from ..analysis import critiques as crit

    outl, correct = crit.short_outliers(records)
    top = float(outl["factor"].max())
    rows = []
    for where in model_checks.WHERE:
        for act in MAP_SPECS[1:]:
            a, s = correct[(act, where)], correct[("softmax", where)]
            rows.append({"where": where, "activation": act, "factor": top,
                         **crit.paired_drop_difference(a[1.0], a[top], s[1.0], s[top], n_boot=n_boot, seed=seed)})
    return pd.DataFrame(rows)


def outlier_shares(records) -> pd.DataFrame:
    """The token's share of the last layer's absolute attention, by place and activation (rows)
    and factor (columns)."""
    from ..analysis import critiques as crit

    outl, _ = crit.short_outliers(records)
    outl = outl[outl["activation"].isin(MAP_SPECS)]
    last = outl[outl["layer"] == outl["layer"].max()]
    return last.pivot_table(index=["where", "activation"], columns="factor", values="token_share")


def _drops(pairs: pd.DataFrame, where: str) -> str:
    d = pairs[pairs["where"] == where]
    return (", ".join(f"{_name(r['activation'])} {r['drop_a']:.1f}" for _, r in d.iterrows())
            + f", softmax {d['drop_b'].iloc[0]:.1f}")


def outlier_numbers(pairs: pd.DataFrame, shares: pd.DataFrame) -> dict:
    """The outlier sweep at its largest factor, from :func:`outlier_pairs` and
    :func:`outlier_shares`: each activation's share of the last layer's attention on the token
    (the scores place), the accuracy each loses at every place, how many polynomials amplify the
    token and in how many cases a polynomial loses more (less) than softmax, its interval over
    images above (below) 0."""
    top = float(pairs["factor"].iloc[0])
    sh = shares.loc[OUTLIER_PLACE]
    col = pairs[pairs["where"] == OUTLIER_PLACE]
    amplified = [rules.amplified(sh.loc[a, top], sh.loc["softmax", top]) for a in MAP_SPECS[1:]]
    out = {"factor": top, "images": int(col["n_images"].iloc[0]),
           "shares": ", ".join(f"{_name(a)} {sh.loc[a, top]:.2f}" for a in MAP_SPECS),
           "drops_scores": _drops(pairs, "scores"), "drops_attention_input": _drops(pairs, "attention_input"),
           "drops_embedding": _drops(pairs, "embedding"),
           "embedding_drop_max": float(pairs.loc[pairs["where"] == "embedding", ["drop_a", "drop_b"]].abs().max().max()),
           "loses_more": int((col["ci_low"] > 0).sum()), "loses_less": int((col["ci_high"] < 0).sum()),
           "cases": len(col), "amplified": int(sum(amplified)), "amplified_factor": rules.AMPLIFIED_FACTOR}
    for a in MAP_SPECS:
        out[f"share {a}"] = float(sh.loc[a, top])
    for _, r in col.iterrows():
        out[f"drop {r['activation']}"] = float(r["drop_a"])
        out[f"drop minus softmax's {r['activation']}"] = float(r["diff"])
    out["drop softmax"] = float(col["drop_b"].iloc[0])
    return out


def outliers(root: Optional[Path] = None) -> Finding:
    """Do polynomials amplify an extreme entry, and lose more accuracy to it than softmax?  One
    token's column of the scores multiplied by the largest factor: a polynomial amplifies when the
    token's share of the last layer's attention is above AMPLIFIED_FACTOR times softmax's, and loses
    more when its paired drop minus softmax's has an interval over images above 0.  Both for every
    polynomial -> holds; neither for any -> not supported; else mixed."""
    grid, complete = short_records(root)
    if not complete:
        return _short_pending(grid)
    records = list(grid.records)
    pairs, shares = outlier_pairs(records), outlier_shares(records)
    n = outlier_numbers(pairs, shares)
    top = n["factor"]
    sh = shares.loc[OUTLIER_PLACE]
    col = pairs[pairs["where"] == OUTLIER_PLACE]
    amplified = [rules.amplified(sh.loc[a, top], sh.loc["softmax", top]) for a in MAP_SPECS[1:]]
    form = rules.outlier_form(amplified, list(col["ci_low"] > 0))
    summary = (f"One token's column of the scores multiplied by {top:g} takes {n['shares']} of the last layer's "
               f"|attention|; accuracy drops "
               + ", ".join(f"{_name(r['activation'])} {r['drop_a']:.1f}" for _, r in col.iterrows())
               + f" vs softmax {col['drop_b'].iloc[0]:.1f} points (short retraining, seed 0, {n['images']} test "
               f"images; intervals over images only).")
    return _finding(form, summary, n)


def map_numbers(records) -> dict:
    """The short retrainings' maps: each activation's share of negative mass in the first and the
    last layer, the range of its heads' mean attention distance, and that of uniform weights."""
    from ..analysis import critiques as crit

    maps = crit.short_maps(records)
    out = {"uniform_distance": crit.uniform_attention_distance(maps["softmax"]["grid"]),
           "test_images": int(maps["softmax"]["n_test"])}
    lows, highs = [], []
    for act in MAP_SPECS:
        neg, dist = maps[act]["negative_mass_share"], maps[act]["attention_distance"]
        out[f"negative share, first layer {act}"] = float(neg[0])
        out[f"negative share, last layer {act}"] = float(neg[-1])
        lows.append(float(dist.min()))
        highs.append(float(dist.max()))
    out["negative_shares"] = ", ".join(f"{_name(a)} {out[f'negative share, first layer {a}']:.2f} / "
                                       f"{out[f'negative share, last layer {a}']:.2f}" for a in MAP_SPECS)
    out["distances"] = ", ".join(f"{_name(a)} {lo:.2f} to {hi:.2f}" for a, lo, hi in zip(MAP_SPECS, lows, highs))
    out["distance_min"], out["distance_max"] = min(lows), max(highs)
    return out


def attention_maps(root: Optional[Path] = None) -> Finding:
    """The maps described, not judged ("measured"): negative mass per layer and attention distance
    per head of the four short-retrained models."""
    grid, complete = short_records(root)
    if not complete:
        return _short_pending(grid)
    n = map_numbers(list(grid.records))
    summary = (f"Negative share of the absolute attention, first / last layer: {n['negative_shares']}; mean attention "
               f"distance per head {n['distance_min']:.2f} to {n['distance_max']:.2f} patches (uniform "
               f"{n['uniform_distance']:.2f}); short retrainings, seed 0.")
    return _finding("measured", summary, n)
