"""Chapter 03's sections on the mechanism, by intervention: the committed records of k·softmax and
of the capped cubic beside the converged tier's softmax and x³/√N, their accuracy, the norm
each leaves at the end of training, accuracy against k, and the values the prose glues; and the
same for the intervention without its confounds (no clipping, output compensated)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pandas as pd

from ... import analysis
from ...analysis import dose_response as dr
from ...analysis import intervention as iv
from ...book.deliver import styled
from ...claims import claim
from ...display import name
from ...numbers import estimate
from ...results import load_records


@dataclass
class Intervention:
    """The intervention grid's committed records beside the converged tier's softmax and x³/√N
    (the same recipe and seeds): the planned grid, the records, and the final metrics."""

    grid: list
    records: list
    converged: list
    final: pd.DataFrame

    def __bool__(self) -> bool:
        return bool(len(self.final))


def intervention_runs(intervention: Optional[list] = None, converged: Optional[list] = None) -> Intervention:
    """The book's committed records of the intervention (``vit_norm_intervention``) and of the
    converged tier (read at every preset: the section trains nothing); ``intervention`` and
    ``converged`` stand for them in tests."""
    from ...experiments import vit
    records = load_records("vit_norm_intervention") if intervention is None else list(intervention)
    conv = load_records("vit_converged") if converged is None else list(converged)
    return Intervention(vit.intervention("book"), records, conv, iv.intervention_final(conv, records))


def _order(acts) -> list:
    """Softmax, x³/√N, the capped cubic, then k·softmax by k."""
    def key(a):
        k = iv.softmax_factor(a)
        return (0 if a == iv.BASELINE else 1 if a == "poly:p=3" else 2 if a == iv.CAPPED else 3, k or 0)

    return sorted(acts, key=key)


def unclipped_runs(intervention: Optional[list] = None, unclipped: Optional[list] = None) -> Intervention:
    """The intervention without its confounds (``vit_intervention_unclipped``: no clipping, 8·softmax
    with its output compensated, softmax/8, the capped cube) beside softmax and x³/√N at the same
    recipe and seeds (``vit_unclipped``); ``intervention`` and ``unclipped`` stand for them in tests."""
    from ...experiments import vit
    records = load_records("vit_intervention_unclipped") if intervention is None else list(intervention)
    base = load_records("vit_unclipped") if unclipped is None else list(unclipped)
    return Intervention(vit.intervention_unclipped("book"), records, base, iv.intervention_final(base, records))


def _recipe_caption(iv_runs: Intervention) -> str:
    from ...data import split_sizes

    c0 = iv_runs.grid[0]
    train, _ = split_sizes(c0.dataset, c0.train_subset, c0.test_subset)
    clipping = (f"gradients clipped at norm {c0.clip_grad:g} (the paper does not clip)" if c0.clip_grad
                else "no gradient clipping (as in the paper)")
    return (f"{c0.model} ViT, the converged tier's recipe: all {train:,} Fashion-MNIST training images, "
            f"{c0.epochs} epochs, {clipping}; the book preset's committed records")


def _arm(iv_runs: Intervention, act: str) -> str:
    """The activation's display name, with the output compensation its grid gives it."""
    out = {c.activation: c.out_init_scale for c in iv_runs.grid}.get(act, 1.0)
    return name(act) if out == 1 else f"{name(act)}, output projection started {1 / out:g} times smaller"


def unclipped_table(iv_runs: Intervention):
    """Per arm of the unconfounded intervention: the runs stored, final test accuracy (mean ± sd
    over seeds) and the norm it leaves at the last probe (the manipulation check)."""
    if not iv_runs:
        return None
    summary = analysis.format_summary(analysis.summary_table(iv_runs.final)).set_index("activation")
    checks = norm_check(iv_runs).set_index("activation")
    rows = []
    for a in _order(summary.index):
        norm = (f"{checks.loc[a, 'norm_final_mean']:.3g} ({checks.loc[a, 'norm_final_max']:.3g})"
                if a in checks.index else "not probed")
        rows.append({"activation": _arm(iv_runs, a), **summary.loc[a].to_dict(),
                     "‖A‖_F/√N at the last probe: mean (largest run)": norm})
    return styled(rows, "Final test accuracy (mean ± sd over seeds) and the norm each arm leaves at the end of "
                        "training (mean over layers and heads of a run; above 1 is what Theorem 4.1 rules out for "
                        f"softmax); softmax and x³/√N are the runs of the grid vit_unclipped; {_recipe_caption(iv_runs)}")


def unclipped_values(iv_runs: Intervention) -> dict:
    """The manipulation check in words: the norm each arm ends at, mean over its probed runs."""
    checks = norm_check(iv_runs).set_index("activation")
    stored = {r["config"]["activation"] for r in iv_runs.records + iv_runs.converged}

    def final_norm(act):
        return (f"{checks.loc[act, 'norm_final_mean']:.2f}" if act in checks.index
                else "not probed" if act in stored else "no run stored yet")

    return {"ch03_iu_norm_softmax": final_norm(iv.BASELINE), "ch03_iu_norm_k8": final_norm("softmax:k=8"),
            "ch03_iu_norm_tightened": final_norm("softmax:k=1/8"), "ch03_iu_norm_cube": final_norm("poly:p=3"),
            "ch03_iu_norm_capped": final_norm(iv.CAPPED)}


def accuracy_table(iv_runs: Intervention):
    """Final test accuracy (mean ± sd over seeds) of softmax, x³/√N and each intervention."""
    if not iv_runs:
        return None
    summary = analysis.format_summary(analysis.summary_table(iv_runs.final)).set_index("activation")
    rows = [{"activation": name(a), **summary.loc[a].to_dict()} for a in _order(summary.index)]
    return styled(rows, "Final test accuracy of softmax and x³/√N (converged tier) and of each intervention, mean ± sd "
                        f"over seeds; {_recipe_caption(iv_runs)}")


def norm_check(iv_runs: Intervention) -> pd.DataFrame:
    """:func:`polyattn.analysis.intervention.norm_check` of the activations the section compares."""
    acts = set(iv_runs.final["activation"]) if iv_runs else set()
    checks = iv.norm_check([r for r in iv_runs.converged + iv_runs.records if r["config"]["activation"] in acts])
    return checks.set_index("activation").loc[_order(checks["activation"])].reset_index()


def norm_check_table(iv_runs: Intervention):
    """The manipulation check: ‖A‖_F/√N at the last probe, mean over runs and the largest run."""
    checks = norm_check(iv_runs)
    if checks.empty:
        return None
    rows = [{"activation": name(r.activation), "probed runs": int(r.runs),
             "‖A‖_F/√N at the last probe: mean (largest run)": f"{r.norm_final_mean:.3g} ({r.norm_final_max:.3g})"}
            for r in checks.itertuples()]
    return styled(rows, "The norm each activation leaves at the end of training (mean over layers and heads of a run); "
                        "a value above 1 is one that Theorem 4.1 rules out for softmax; same runs as above")


def k_figure(iv_runs: Intervention):
    """Final accuracy of k·softmax against k (one point per seed, the mean joined), with the capped
    cubic at k = 1; None with fewer than two values of k."""
    final = iv_runs.final
    if not iv_runs:
        return None
    k_rows = final.assign(k=final["activation"].map(iv.softmax_factor)).dropna(subset=["k"])
    if k_rows["k"].nunique() < 2:
        return None
    import matplotlib.pyplot as plt

    from ...data import split_sizes
    from ...plotting import activation_color, legend_outside, stamp

    fig, ax = plt.subplots(figsize=(6, 3.6))
    colour = activation_color("softmax")
    ax.scatter(k_rows["k"], 100 * k_rows["test_acc"], color=colour, s=22, label="k·softmax (one point per seed)")
    means = k_rows.groupby("k")["test_acc"].mean()
    ax.plot(means.index, 100 * means.values, color=colour)
    cap = final[final["activation"] == iv.CAPPED]
    if len(cap):
        ax.scatter([1] * len(cap), 100 * cap["test_acc"], marker="x", color=activation_color("poly:p=3"),
                   label=f"{name(iv.CAPPED)} (at k = 1)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(means.index), [f"{k:g}" for k in sorted(means.index)])
    ax.minorticks_off()
    ax.set_xlabel("k")
    ax.set_ylabel("final test accuracy (%)")
    legend_outside(ax)
    c0 = iv_runs.grid[0]
    _, test = split_sizes(c0.dataset, c0.train_subset, c0.test_subset)
    stamp(ax, "book", f"converged tier, all {test:,} test images")
    return fig


def intervention_values(iv_runs: Intervention) -> dict:
    """The grid's recipe and factors k, the claim's margin, how many of its runs are stored (in
    all and per activation), and the norm check's numbers the prose discusses."""
    from ...data import split_sizes
    from ...experiments import vit

    grid, c0 = iv_runs.grid, iv_runs.grid[0]
    train, _ = split_sizes(c0.dataset, c0.train_subset, c0.test_subset)
    margin = claim("norm_intervention").margin
    stored = pd.Series([r["config"]["activation"] for r in iv_runs.records], dtype=object).value_counts()
    planned = pd.Series([c.activation for c in grid], dtype=object).value_counts()
    checks = norm_check(iv_runs).set_index("activation")

    def final_norm(act, column="norm_final_mean"):
        return f"{checks.loc[act, column]:.2f}" if act in checks.index else "not probed"

    return {"ch03_int_recipe": f"all {train:,} training images, {c0.epochs} epochs, batch {c0.batch_size}, gradients "
                               f"clipped at norm {c0.clip_grad:g}, seeds "
                               + ", ".join(str(s) for s in sorted({c.seed for c in grid})),
            "ch03_int_ks": ", ".join(f"{iv.softmax_factor(a):g}" for a in vit.INTERVENTION_ACTIVATIONS
                                     if iv.softmax_factor(a)),
            "ch03_int_margin": f"±{margin:g} accuracy point{'' if margin == 1 else 's'}",
            "ch03_int_stored": f"{len(iv_runs.records)} of {len(grid)}",
            "ch03_int_stored_by_activation": "; ".join(f"{name(a)}: {stored.get(a, 0)} of {n}"
                                                       for a, n in planned[_order(planned.index)].items()),
            "ch03_int_norm_softmax": final_norm(iv.BASELINE), "ch03_int_norm_cube": final_norm("poly:p=3"),
            "ch03_int_norm_k8": final_norm("softmax:k=8"), "ch03_int_norm_capped_max": final_norm(iv.CAPPED,
                                                                                                   "norm_final_max")}


# --- the bound as a dose, in the character language model ---------------------------------------------------


def dose_runs(records: Optional[list] = None) -> pd.DataFrame:
    """The dose-response's stored runs (``causal_dose_response`` at the book preset, planned configs only)
    as :func:`polyattn.analysis.dose_response.dose_frame`; ``records`` stand for them in tests."""
    from ...experiments import causal_rope
    if records is None:
        planned = {c.hash for c in causal_rope.dose_response("book")}
        records = [r for r in load_records("causal_dose_response") if r.get("config_hash") in planned]
    return dr.dose_frame(records)


def dose_values(frame: pd.DataFrame) -> dict:
    """The asymmetry 8·softmax − softmax/8 and the capped cube's contrast, each as its mean over seeds with
    its 95% t-interval and the pairs it rests on (words while no pair is stored)."""
    def said(s: dict, what: str) -> str:
        if not s["pairs"]:
            return f"not yet measured (no seed has both {what} stored)"
        return f"{estimate(s['difference'], s['ci_low'], s['ci_high'], '+.3f')} bits/char over {s['pairs']} seed(s)"

    cubes = dr.cube_contrasts(frame).set_index("arm") if len(frame) else pd.DataFrame()
    capped = ({"pairs": 0} if "capped at row norm 1" not in cubes.index else
              {k: cubes.loc["capped at row norm 1", k] for k in ("difference", "ci_low", "ci_high", "pairs")})
    asym = dr.asymmetry(frame) if len(frame) else {"pairs": 0}
    ks = dr.by_k(frame).set_index("k") if len(frame) else pd.DataFrame()
    side = {k: ({"pairs": 0} if k not in ks.index else
                {f: ks.loc[k, f] for f in ("difference", "ci_low", "ci_high", "pairs")}) for k in (1 / 8, 8.0)}
    return {"ch03_dose_asymmetry": said(asym, "8·softmax and softmax/8"),
            "ch03_dose_capped": said(capped, "the capped and the uncapped cube"),
            "ch03_dose_tightened": said(side[1 / 8], "softmax/8 and softmax"),
            "ch03_dose_lifted": said(side[8.0], "8·softmax and softmax"),
            "ch03_dose_reading": dose_reading(asym)}


def dose_reading(asym: dict) -> str:
    """One sentence on which side of k = 1 costs more, read from the asymmetry's 95% interval (bits/char,
    lower is better, so a negative 8·softmax − softmax/8 means that lifting the bound costs less)."""
    if asym.get("pairs", 0) < 2:
        return "Too few seeds are stored to say which side of k = 1 costs more."
    if asym["ci_high"] < 0:
        return ("Lifting the bound eightfold costs less than tightening it eightfold: the interval of the "
                "difference lies wholly below zero, the opposite of the bound hypothesis's prediction, so in this "
                "model the bound's size is not what softmax's success rests on.")
    if asym["ci_low"] > 0:
        return ("Lifting the bound eightfold costs more than tightening it eightfold, as the bound "
                "hypothesis predicts: the interval of the difference lies wholly above zero.")
    return "The interval of the difference includes zero: the two sides of k = 1 are not told apart."


def dose_shown(frame: pd.DataFrame):
    """The dose-response figure with the claim's margin, stamped with its scale; None while no pair is stored."""
    from ...plotting import stamp

    fig = dr.dose_figure(frame, claim("norm_dose_response").margin) if len(frame) else None
    if fig is not None:
        stamp(fig, "book", "character LM with rotary positions, T = 256; dots: seeds")
        fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig
