"""Chapter 09, "Powers and gradients without training": the random-score survey of the Jacobian
through x^p/sqrt(N) and softmax, the activation Jacobian of Table 1's records step by step, and the
gradients and softmax's saturated rows of the short retrainings.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ... import analysis
from ...analysis import critique_runs
from ...analysis import critiques as crit
from ...analysis.tables import number_cell
from ...book.deliver import styled
from ...display import name
from ...measures.critique_common import LINEAR
from ...measures.critique_gradients import POWER_SPECS
from ...measures.critique_survey import jacobian_survey, survey_settings
from .page import SHORT_DEVIATION, TABLE1_DEVIATION, Runs, before_after, first_only, nothing_stored, short_pending

#: Table 1's activations whose activation Jacobian is followed step by step.
JACOBIAN_ACTIVATIONS = ("softmax", "poly:p=1", "poly:p=2", "poly:p=3")
#: The powers drawn in the random-score figure (every power is in the survey's record).
SURVEY_POWERS = ("poly:p=1", "poly:p=3", "poly:p=5", "poly:p=7")


def survey_figure():
    """The random-score survey: the Jacobian through x^p/sqrt(N) for a few powers (markers: measured;
    line: the Gaussian prediction) and softmax against the score spread; softmax's saturation."""
    import matplotlib.pyplot as plt

    from ... import plotting
    settings = survey_settings()
    surv = jacobian_survey().table
    sigmas = settings["init_sigmas"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(7, 3.3))
    colours = dict(zip(SURVEY_POWERS, plt.cm.plasma(np.linspace(0.0, 0.8, len(SURVEY_POWERS)))))
    for spec in SURVEY_POWERS:
        g = surv[(surv["activation"] == spec) & surv["sigma"].isin(sigmas)]
        ax.plot(g["sigma"], g["gaussian_prediction"], color=colours[spec], linewidth=1)
        ax.plot(g["sigma"], g["mean"], "o", markersize=4, color=colours[spec], label=name(spec))
    g = surv[(surv["activation"] == "softmax") & surv["sigma"].isin(sigmas)]
    ax.plot(g["sigma"], g["mean"], marker="s", markersize=3, color=plotting.activation_color("softmax"),
            label="softmax")
    ax.axhline(0.5, color="black", linestyle="--", linewidth=1, label="softmax's bound 1/2")
    ax.set(xscale="log", yscale="log", xlabel="score standard deviation σ", ylabel="‖∂φ(S)/∂S‖_F / √N",
           title=f"Through the activation (N = {settings['n']})")
    handles, labels = ax.get_legend_handles_labels()
    soft = surv[surv["activation"] == "softmax"]
    ax2.plot(soft["sigma"], soft["saturated_share"], marker="o", color=plotting.activation_color("softmax"),
             label="rows saturated (max > 0.99)")
    ax2.plot(soft["sigma"], soft["row_jac_saturated"], marker="s", color="black", label="their ‖row Jacobian‖_F")
    ax2.set(xscale="log", xlabel="score standard deviation σ", title="Softmax saturation")
    ax2.legend(frameon=False, fontsize="small", loc="upper left")
    fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0.17, 1, 0.94))
    plotting.stamp(fig, "book", f"markers: measured, {settings['reps']} draws; lines: Gaussian prediction",
                   loc="upper right")
    return fig


def jacobian_by_step(records) -> pd.DataFrame:
    """``||d phi(S)/dS||_F`` of each activation of :data:`JACOBIAN_ACTIVATIONS` per probed step
    (rows: activations; columns: steps), mean over seeds, layers and heads."""
    probes = analysis.probe_frame([r for r in records if r["config"]["activation"] in JACOBIAN_ACTIVATIONS],
                                  ["act_jac_fro"])
    return probes.groupby(["activation", "step"])["value"].mean().unstack("step")


def jacobian_numbers(steps: pd.DataFrame) -> dict:
    """The cube's activation Jacobian against the linear map's (:func:`jacobian_by_step`): at the
    first probe, the second and the last, and the first step at which it is above."""
    cube, linear = steps.loc["poly:p=3"], steps.loc[LINEAR]
    past = steps.columns[cube > linear]
    first, second, last = steps.columns[0], steps.columns[1], steps.columns[-1]
    return {"first_step": int(first), "second_step": int(second), "cube_first": float(cube[first]),
            "linear_first": float(linear[first]), "linear_over_cube_first": float(linear[first] / cube[first]),
            "cube_second": float(cube[second]), "cube_last": float(cube[last]),
            "cube_above_from_step": int(past.min()) if len(past) else "no probed step"}


def records_jacobian_numbers(records) -> dict:
    """:func:`jacobian_numbers` of the Table 1 records (empty without records)."""
    return jacobian_numbers(jacobian_by_step(records)) if records else {}


#: The Jacobian numbers the page's prose glues (prefix ``ch09_records_jac``).
JACOBIAN_FORMATS = {"first_step": "d", "cube_first": ".2g", "linear_first": ".3g", "linear_over_cube_first": ".0f",
                    "cube_last": ".3g", "cube_above_from_step": "d"}


def jacobian_table(records, preset: str):
    """:func:`jacobian_by_step` for people: one row per probed step."""
    if not records:
        return nothing_stored()
    steps = jacobian_by_step(records)
    return styled([{"step": int(step), **{name(a): number_cell(steps.loc[a, step]) for a in steps.index}}
                   for step in steps.columns],
                  f"‖∂φ(S)/∂S‖_F per probed step, mean over seeds, layers and heads (Table 1 records, preset {preset})"
                  + TABLE1_DEVIATION)


def short_gradient_table(runs: Runs, preset: str):
    """Per activation of the short retrainings (softmax and every power): the score spread, the
    gradient through the activation and its Jacobian, at initialisation → after the retraining
    (mean over layers, samples and heads), and the accuracy after it."""
    if not runs.all_measured:
        return short_pending(runs)
    acc = crit.short_accuracy(runs.records)
    grads = crit.short_gradients(runs.records)
    per = grads.groupby(["activation", "state"])[["score_std", "grad_scores_fro", "act_jac_fro"]].mean()
    columns = (("score_std", "std of S"), ("grad_scores_fro", "‖∂L/∂S‖_F"), ("act_jac_fro", "‖∂φ/∂S‖_F"))
    rows = [{"activation": name(a),
             **{label: before_after(per.loc[(a, "initialisation"), m], per.loc[(a, "trained"), m]) for m, label in columns},
             "accuracy (%)": number_cell(acc[a])}
            for a in ["softmax", *POWER_SPECS]]
    c = runs.config
    return styled(rows, f"At initialisation → after the short retraining, mean over layers, {c.options['measure']['gradients']} "
                        f"test images and heads; accuracy after the retraining (Table 1's model, {c.train_subset:,} "
                        f"images, {c.epochs} epochs, seed {c.seed}, preset {preset})" + SHORT_DEVIATION)


def short_gradient_figure(runs: Runs, preset: str):
    """The gradient through the activation, ``||dL/dS||_F`` (mean over layers, samples and heads),
    against p at initialisation and after the short retraining: plain and sign-keeping powers, and
    softmax's as a level."""
    import matplotlib.pyplot as plt

    from ... import plotting
    if not runs.all_measured:
        return None
    grads = crit.short_gradients(runs.records)
    per = grads.groupby(["activation", "state"])["grad_scores_fro"].mean()
    fig, ax = plt.subplots(figsize=(7, 2.8))
    for state, dash in (("initialisation", ":"), ("trained", "-")):
        for odd, marker, colour, family in ((False, "o", "C0", "xᵖ/√N"), (True, "s", "C3", "sign kept")):
            specs = [a for a in POWER_SPECS if critique_runs.power_of(a)[1] == odd]
            ps = [critique_runs.power_of(a)[0] for a in specs]
            ax.plot(ps, [per[(a, state)] for a in specs], marker=marker, linestyle=dash, color=colour,
                    label=f"{family}, {'start' if state == 'initialisation' else 'end'}")
        ax.axhline(per[("softmax", state)], color=plotting.activation_color("softmax"), linestyle=dash, linewidth=1,
                   label=f"softmax, {'start' if state == 'initialisation' else 'end'}")
    ax.set(yscale="log", xlabel="power p", ylabel="‖∂L/∂S‖_F")
    plotting.legend_outside(ax)
    fig.tight_layout()
    plotting.stamp(ax, preset, f"short retraining, seed {runs.config.seed}; dotted: start, solid: end",
                   loc="lower left")
    return fig


def saturation_table(runs: Runs, preset: str):
    """Softmax's saturated rows (largest weight above 0.99) per state and layer, against the others."""
    if not runs.all_measured:
        return short_pending(runs)
    grads = crit.short_gradients(runs.records)
    sat = grads[grads["activation"] == "softmax"].replace({"state": {"trained": "short retraining"}})
    rows = [{"state": state, "layer": int(r["layer"]) + 1, "std of S": number_cell(r["score_std"]),
             "rows saturated": f"{r['saturated_share']:.1%}",
             "‖∂L/∂S_i‖, saturated / other rows": f"{number_cell(r['row_grad_saturated'])} / "
                                                  f"{number_cell(r['row_grad_other'])}",
             "row Jacobian norm, saturated / other": f"{number_cell(r['row_jac_saturated'])} / "
                                                     f"{number_cell(r['row_jac_other'])}"}
            for state, (_, r) in zip(first_only(sat["state"]), sat.iterrows())]
    return styled(rows, "Softmax rows with largest weight above 0.99 (saturated) and the others; a dash where no row "
                        f"saturates (short retraining, seed {runs.config.seed}, preset {preset})" + SHORT_DEVIATION)
