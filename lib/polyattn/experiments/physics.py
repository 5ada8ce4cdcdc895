"""Physics-informed transformers (chapter 06) as a config grid, per preset.

PINNsFormer (:mod:`polyattn.models.pinnsformer`) on the three PDEs of its benchmark
(:mod:`polyattn.data.pde`: convection with beta = 50, reaction with rho = 5, the wave with
c = 2), with the attention activation as the variable, and the tanh PINN as the baseline
without attention.  PINNsFormer's pseudo-sequence has k = 5 tokens, so N = 5 in every
attention row: x^3/sqrt(N) is x^3/sqrt(5), x/sqrt(N) is x/sqrt(5), relu/N is relu/5 and the
sigmoid's bias is -log 5.  Every run is one full-batch L-BFGS optimisation with a strong-Wolfe
line search (one "epoch" is one outer L-BFGS step of up to ``lbfgs_max_iter`` iterations),
scored by rMAE and rRMSE against the closed-form solution on the published 101 x 101 grid.

Seeds (defaults): 5 for softmax, x^3/sqrt(N) and the PINN, which the chapter's two claims
rest on; 3 for the other activations.  ``seeds=`` gives every variant the same seeds.

``smoke``: about a second per run (the ``micro`` models, a 9 x 9 grid, two L-BFGS steps of
four iterations), for CI; never evidence.

``paper``: the published configuration (AdityaLab/pinnsformer demos): the ``paper``
PINNsFormer (d_model 32, 2 heads, feed-forward 256, output MLP 512; 453,561 parameters) on
the 51 x 51 grid, the ``paper`` PINN (4 layers of width 512) on the 101 x 101 grid, L-BFGS
with 20 iterations per step for 500 steps (convection, reaction) or 1,000 (wave), the
published loss (residual and boundary terms over all five tokens, the initial value on the
first).  Listed for GPUs, not run here.

``book``: sized for one CPU thread per run; see :data:`BOOK_NOTES` for what it reduces and
why, and :data:`SIZING` for the measurements it rests on.  Two-step probes (the CPU seconds
of a whole two-step ``fit``, halved; measured while two other training processes shared the
machine's two cores, so upper bounds) put a PINNsFormer step at about 4.6 s on convection,
3.9 s on reaction and 15 s on the wave, and a PINN step at 0.6-2.3 s.  The first book runs
(seed 0 of softmax PINNsFormer and of the PINN) took 330-365 s of wall time for 80 steps
(PINNsFormer) and about 80 s (the PINN), each on a core of its own.  Both solved reaction at
80 steps; neither left the trivial solution of convection at beta = 50 (softmax: rMAE 0.92
at step 80, and 0.55 after 200 steps in a longer probe), while at beta = 30 softmax reached
rMAE 0.36 at step 80, 0.019 at step 100 and 0.005 from step 125 on (a 160-step probe, whose
last 25 steps cost about 30 s in all: the line search ends them early).  So the book's
convection is beta = 30 with 160 steps, and its budget: 22 PINNsFormer runs per problem, of
up to about 12 minutes each on convection, about 5 on reaction and about 6 on the wave, plus
15 PINN runs of 1-2 minutes, about 9 CPU-hours in all, within the 12 the chapter may use.
"""
from __future__ import annotations

from typing import Optional

from ..config import TrainConfig
from ..labels import PDES, PINN_LABEL, PINNSFORMER_VARIANTS, pde_of
from ..labels import PHYSICS_VARIANTS as VARIANTS
from ..labels import physics_label as variant_label
from ..presets import check, seeds_for

#: The variants the claims rest on, which get more seeds.
MAIN_VARIANTS = ("softmax", "x^3/sqrt(N)", PINN_LABEL)
#: Default seeds per preset: (main variants, the others).
SEEDS = {"smoke": ((0,), (0,)), "book": ((0, 1, 2, 3, 4), (0, 1, 2)), "paper": ((0, 1, 2, 3, 4), (0, 1, 2))}
#: The PINN has no attention; its config keeps the default activation field, which nothing reads.
PINN_ACTIVATION = "softmax"

_COMMON = dict(task="pde", optimizer="lbfgs", lr=1.0, batch_size=1, warmup_epochs=0.0, weight_decay=0.0,
               clip_grad=0.0, threads=1)

#: Per preset: the PINNsFormer size, the PINN size, the training grids (PINNsFormer, PINN),
#: the test grid, the L-BFGS iterations per step, the steps per PDE, how often to evaluate, and
#: the PDE parameters that differ from the published ones (:mod:`polyattn.data.pde`'s defaults).
SCALES = {
    "smoke": dict(model="micro", pinn="pinn_micro", grid=(9, 9), pinn_grid=(9, 9), test_grid=(21, 21),
                  lbfgs_max_iter=4, steps={"convection": 2, "reaction": 2, "wave": 2}, eval_every=1,
                  params={"convection": {"beta": 30.0}}),
    "book": dict(model="small", pinn="pinn_small", grid=(31, 31), pinn_grid=(61, 61), test_grid=(101, 101),
                 lbfgs_max_iter=20, steps={"convection": 160, "reaction": 80, "wave": 20}, eval_every=2,
                 params={"convection": {"beta": 30.0}}),
    "paper": dict(model="paper", pinn="pinn_paper", grid=(51, 51), pinn_grid=(101, 101), test_grid=(101, 101),
                  lbfgs_max_iter=20, steps={"convection": 500, "reaction": 500, "wave": 1000}, eval_every=10,
                  params={}),
}

#: What the book preset changes from the paper preset, and why, keyed by the field of
#: :data:`SCALES` it changes (the chapter prints these; a test checks every change has one).
BOOK_NOTES = {
    "model": "PINNsFormer `small` (feed-forward 64, output MLP 128) instead of `paper` (256, 512): the output MLP's "
             "512 x 512 layer dominates the cost of a residual evaluation on one CPU thread; a user of the published "
             "code reports that an output MLP of width 128 solves convection (rMAE 0.024), and the attention "
             "(d_model 32, 2 heads, 5 tokens), the only variable of the chapter, is the published one",
    "grid": "31 x 31 collocation points for PINNsFormer instead of 51 x 51 (961 points of 5 tokens instead of 2,601): "
            "a step's cost grows with the points; on convection this leaves about 4 points per period of the "
            "solution in t instead of 6, so whether the problem is still solved is read from the runs themselves "
            "(the failure share per variant), not assumed",
    "pinn": "PINN of width 128 instead of 512 (4 tanh layers in both): the PINN is the baseline that is known to "
            "fail on convection and reaction (published rMAE 0.78 and 0.98); it is kept to show that failure mode, "
            "and a narrower network is cheaper",
    "pinn_grid": "61 x 61 collocation points for the PINN instead of 101 x 101: cost, as for PINNsFormer; the PINN "
                 "keeps about 4 times PINNsFormer's points (3,721 against 961), as published (10,201 against 2,601), "
                 "since it has one token per point",
    "params": "convection speed beta = 30 instead of 50: on the 31 x 31 grid this keeps the published number of "
              "collocation points per period of the solution in t (beta / (points - 1) = 1 radian between neighbours, "
              "as 50 / 50 on the published 51 x 51 grid), and at beta = 50 softmax PINNsFormer did not solve "
              "convection on this grid within 200 steps (see SIZING), so a comparison there would compare failures; "
              "beta = 30 is still a failure case of the plain PINN: it is the speed at which Krishnapriyan et al. (2021), who "
              "described these failure modes, show a PINN failing on convection",
    "steps": "160 L-BFGS steps of up to 20 iterations on convection, 80 on reaction (500 published) and 20 on the "
             "wave (1,000 published): the budget of about 12 CPU-hours for the grid's 81 runs (see SIZING); softmax "
             "PINNsFormer left the trivial solution of convection only after about 80 steps and reached its final "
             "error near step 120, after which the line search ends steps early and they cost little; a wave step "
             "costs about 4 times a convection step (second derivatives through the five tokens), and the "
             "published PINNsFormer does not solve the wave even after 1,000 steps (rMAE 0.27)",
    "eval_every": "test errors every 2 L-BFGS steps instead of every 10, so that the shorter runs still give loss "
                  "curves of 40 (convection, reaction) and 10 (wave) points; an evaluation is one forward pass on "
                  "the 101 x 101 test grid, small next to a step",
}

#: Measurements behind the book preset (documentation only): per probe, the PDE, model,
#: grid, L-BFGS steps and iterations, CPU seconds on one thread (``time.process_time`` of the
#: whole ``fit``: building, the steps, one test evaluation and the stored field; upper bounds,
#: taken while two other training processes shared the machine's two cores) or, for the long
#: probes, wall seconds, and the test rMAE reached.  Two steps say what a step costs, not
#: whether a run solves its problem; the long probes say whether softmax solves convection.
SIZING = (
    {"PDE": "convection", "model": "small, softmax", "grid": "31 x 31", "steps x iterations": "2 x 20",
     "CPU s": 9.1, "rMAE": 1.001},
    {"PDE": "convection", "model": "small, x^3/sqrt(N)", "grid": "31 x 31", "steps x iterations": "2 x 20",
     "CPU s": 7.2, "rMAE": 1.000},
    {"PDE": "reaction", "model": "small, softmax", "grid": "31 x 31", "steps x iterations": "2 x 20",
     "CPU s": 7.7, "rMAE": 0.156},
    {"PDE": "wave", "model": "small, softmax", "grid": "31 x 31", "steps x iterations": "2 x 20",
     "CPU s": 30.5, "rMAE": 1.154},
    {"PDE": "convection", "model": "pinn_small", "grid": "61 x 61", "steps x iterations": "2 x 20",
     "CPU s": 1.2, "rMAE": 1.043},
    {"PDE": "wave", "model": "pinn_small", "grid": "61 x 61", "steps x iterations": "2 x 20",
     "CPU s": 4.5, "rMAE": 1.169},
    {"PDE": "convection", "model": "small, softmax", "grid": "31 x 31", "steps x iterations": "16 x 20",
     "CPU s": 66.8, "rMAE": 1.286},
    # wall seconds with four training processes on the two cores (about twice the CPU seconds)
    {"PDE": "convection (beta = 50)", "model": "small, softmax", "grid": "31 x 31", "steps x iterations": "200 x 20",
     "CPU s": None, "wall s": 1843, "rMAE": 0.554},
    {"PDE": "convection (beta = 30)", "model": "small, softmax", "grid": "31 x 31", "steps x iterations": "160 x 20",
     "CPU s": None, "wall s": 1477, "rMAE": 0.0045},
)


def _seeds(preset: str, label: str, seeds) -> tuple:
    if seeds is not None:
        return seeds_for(preset, seeds)
    main, rest = SEEDS[check(preset)]
    return main if label in MAIN_VARIANTS else rest


def preset_pdes(preset: str) -> tuple:
    """The PDEs a preset runs (those it gives a number of L-BFGS steps), in :data:`PDES` order."""
    steps = SCALES[check(preset)]["steps"]
    return tuple(p for p in PDES if p in steps)


def pde_spec(preset: str, pde: str) -> str:
    """The problem a preset trains on: the PDE's name, with the parameters it changes
    (``convection:beta=30`` for the book preset)."""
    params = SCALES[check(preset)]["params"].get(pde, {})
    return pde + "".join(f":{k}={v:g}" for k, v in sorted(params.items()))


def config_for(preset: str, pde: str, label: str, seed: int, spec: Optional[str] = None,
               steps: Optional[int] = None) -> TrainConfig:
    """The config of one run: ``pde`` one of :data:`PDES`, ``label`` one of :data:`VARIANTS`;
    ``spec`` and ``steps`` replace the preset's problem (:func:`pde_spec`) and L-BFGS steps."""
    scale = SCALES[check(preset)]
    if pde not in PDES:
        raise ValueError(f"unknown PDE {pde!r}; choose one of {', '.join(PDES)}")
    if pde not in scale["steps"]:
        raise ValueError(f"preset {preset!r} does not run the {pde} problem (BOOK_NOTES says why); "
                         f"it runs {', '.join(preset_pdes(preset))}")
    if label not in VARIANTS:
        raise ValueError(f"unknown variant {label!r}; choose one of {', '.join(VARIANTS)}")
    pinn = label == PINN_LABEL
    problem = spec
    if problem is not None and problem.split(":", 1)[0] != pde:
        raise ValueError(f"spec {problem!r} is not a {pde} problem")
    act = PINN_ACTIVATION if pinn else dict(PINNSFORMER_VARIANTS)[label]
    grid = scale["pinn_grid"] if pinn else scale["grid"]
    return TrainConfig(experiment="physics", preset=preset, dataset=problem or pde_spec(preset, pde),
                       model=scale["pinn" if pinn else "model"],
                       activation=act, epochs=steps or scale["steps"][pde], lbfgs_max_iter=scale["lbfgs_max_iter"],
                       eval_every=scale["eval_every"], seed=seed, device="cuda" if preset == "paper" else "cpu",
                       options={"grid": list(grid), "test_grid": list(scale["test_grid"])}, **_COMMON)


#: L-BFGS steps of the first book runs on convection, at the published speed beta = 50.
PUBLISHED_SPEED_STEPS = 80


def published_speed_runs(seed: int = 0) -> list[TrainConfig]:
    """The first book runs on convection (softmax PINNsFormer and the PINN, 80 steps at the
    published beta = 50; their records are committed): the evidence that chose beta = 30."""
    return [config_for("book", "convection", label, seed, spec="convection", steps=PUBLISHED_SPEED_STEPS)
            for label in ("softmax", PINN_LABEL)]


def published_speed(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """:func:`published_speed_runs` as a grid: book runs only (the other presets have none)."""
    if check(preset) != "book":
        return []
    return [c for s in (seeds if seeds is not None else (0,)) for c in published_speed_runs(int(s))]


def physics(preset: str = "book", seeds=None, pdes=None) -> list[TrainConfig]:
    """One run per PDE (default: those the preset runs), variant and seed, seed-major (a partial
    run set has every PDE and variant of the first seeds); the main variants' extra seeds come last."""
    pdes = preset_pdes(preset) if pdes is None else tuple(pdes)
    bad = [p for p in pdes if p not in PDES]
    if bad:
        raise ValueError(f"unknown PDE(s) {bad}; choose from {', '.join(PDES)}")
    per_label = {label: _seeds(preset, label, seeds) for label in VARIANTS}
    all_seeds = sorted({s for v in per_label.values() for s in v})
    return [config_for(preset, pde, label, s) for s in all_seeds for pde in pdes for label in VARIANTS
            if s in per_label[label]]


#: The negative result made sure: convection at 500 L-BFGS steps (the book's 160; the published
#: 500), softmax and x^3/sqrt(N), 3 seeds.
LONG_STEPS = {"convection": 500}
LONG_VARIANTS = ("softmax", "x^3/sqrt(N)")


def physics_long(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """:data:`LONG_VARIANTS` on the problems of :data:`LONG_STEPS` at those steps (book; smoke:
    the preset's steps), as its own experiment."""
    if check(preset) == "paper":
        return []
    return [config_for(preset, pde, label, s, steps=steps if preset == "book" else None)
            .replace(experiment="physics_long")
            for s in seeds_for(preset, seeds) for pde, steps in LONG_STEPS.items() for label in LONG_VARIANTS]


def setting_table(presets=("book", "paper")) -> list[dict]:
    """One row per PDE and preset: what trains, on which grid, for how many L-BFGS steps."""
    from ..models.pinn import PINN_SIZES
    from ..models.pinnsformer import PINNSFORMER_SIZES

    rows = []
    for pde in PDES:
        for preset in presets:
            s = SCALES[preset]
            if pde not in s["steps"]:
                rows.append({"PDE": pde, "preset": preset, "PINNsFormer": "not run"})
                continue
            w = PINNSFORMER_SIZES[s["model"]]
            p = PINN_SIZES[s["pinn"][len("pinn_"):]]
            rows.append({"PDE": pde, "preset": preset,
                         "PINNsFormer": f"d_model {w['d_model']}, {w['heads']} heads, feed-forward {w['d_ff']}, "
                                        f"output MLP {w['d_hidden']}",
                         "PINNsFormer grid": "{} x {}".format(*s["grid"]),
                         "PINN": f"{p['layers']} layers of width {p['width']}",
                         "PINN grid": "{} x {}".format(*s["pinn_grid"]),
                         "problem": pde_spec(preset, pde),
                         "L-BFGS steps x iterations": f"{s['steps'][pde]} x {s['lbfgs_max_iter']}",
                         "test grid": "{} x {}".format(*s["test_grid"])})
    return rows


#: What users of the published code report about seeds (cited in the chapter's introduction):
#: github.com/AdityaLab/pinnsformer issues 6 (seeds) and 5 (the narrower output MLP).
SEED_REPORT = ("with one seed (66) the convection rRMSE was 0.13, with other seeds about 0.6; a run with the output "
               "MLP narrowed to width 128 reached rMAE 0.024 on convection")

#: The published demo notebooks' errors (rMAE, rRMSE), seed 0, as printed by AdityaLab/pinnsformer's
#: demo/<pde>/*_pinns(former).ipynb, scored against the reference files (the convection file
#: differs from the closed form by rMAE 0.013); for comparison only.
PUBLISHED_ERRORS = {
    "convection": {"PINN": (0.778651, 0.840410), "PINNsFormer": (0.022864, 0.026753)},
    "reaction": {"PINN": (0.981845, 0.981020), "PINNsFormer": (0.015195, 0.030002)},
    "wave": {"PINN": (0.326268, 0.334919), "PINNsFormer": (0.269878, 0.282539)},
}

__all__ = ["BOOK_NOTES", "MAIN_VARIANTS", "PDES", "PINNSFORMER_VARIANTS", "PINN_LABEL", "PUBLISHED_ERRORS", "SCALES",
           "SEEDS", "SEED_REPORT", "SIZING", "VARIANTS", "config_for", "pde_of", "pde_spec", "physics", "preset_pdes",
           "PUBLISHED_SPEED_STEPS", "published_speed", "published_speed_runs",
           "setting_table", "variant_label"]


#: The positive control: attention ablated (every visible token weighted 1/N) in place of softmax, on
#: every PDE the preset runs, at the book's budget and seeds. Where it too matches softmax, the
#: benchmark cannot see what attention does, and the comparison of activations on it says nothing.
def physics_ablated(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """PINNsFormer with :func:`polyattn.activations_extra` ``uniform`` attention, one run per PDE and seed."""
    if check(preset) == "paper":
        return []
    return [config_for(preset, pde, "softmax", s).replace(experiment="physics_ablated", activation="uniform")
            for s in seeds_for(preset, seeds) for pde in preset_pdes(preset)]
