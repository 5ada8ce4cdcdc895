"""Chapter 03: the mechanism.  Softmax bounds $\\lVert A \\rVert_F \\le \\sqrt{N}$; lifting the bound
should hurt and imposing it on $x^3/\\sqrt{N}$ should help, with gradient clipping and without."""
from __future__ import annotations

from ..constants import CHANCE_LATE, CLIPPED, CONVERGED_UNCLIPPED_GRID, CUBE_SQRT_N, FASHION_MNIST_CHANCE, SOFTMAX
from ..spec import RegisteredClaim, vs

_CAPPED = {"activation": "poly_cap:p=3"}

NORM_INTERVENTION = RegisteredClaim(
    "norm_intervention",
    "Softmax trains well because it bounds $\\lVert A \\rVert_F \\le \\sqrt{N}$: lifting the bound "
    "($8\\cdot$softmax) hurts, imposing it on $x^3/\\sqrt{N}$ (rows capped at norm 1) matches softmax",
    "paper, Section 4 (the mechanism); review ICLR 2025 (clamp or scale softmax's norm)", "03_norms",
    registered="2026-12-01",
    comparisons=(
        vs("vit_norm_intervention", {"activation": "softmax:k=8"}, SOFTMAX, "necessity",
           "8·softmax − softmax, converged recipe", "worse", baseline_grid="vit_converged"),
        vs("vit_norm_intervention", _CAPPED, CUBE_SQRT_N, "sufficiency_contrast",
           "capped − uncapped x³/√N, converged recipe", "better", baseline_grid="vit_converged"),
        vs("vit_norm_intervention", _CAPPED, SOFTMAX, "sufficiency", "capped x³/√N − softmax, converged recipe",
           "equivalent", baseline_grid="vit_converged", role="description"),
        vs("vit_converged", CUBE_SQRT_N, SOFTMAX, "uncapped", "uncapped x³/√N − softmax, converged recipe",
           "equivalent", role="description", cited_from="table_parity:converged"),
    ),
    margin=1.0, chance=FASHION_MNIST_CHANCE, margin_commit="900830c", chance_registered_after=CHANCE_LATE,
    registered_after="the sufficiency half was first judged as capped x³/√N against softmax; that it needs the "
                     "contrast with the uncapped x³/√N (which matches softmax while breaking the bound) was "
                     "written down after all the runs were stored",
    scale="micro ViT, the converged tier's recipe (all 60,000 Fashion-MNIST images, 20 epochs), " + CLIPPED
          + ", book preset",
)

# registered before the first run of its grid: the intervention without its confounds
_IU = "vit_intervention_unclipped"
NORM_INTERVENTION_UNCLIPPED = RegisteredClaim(
    "norm_intervention_unclipped",
    "Without gradient clipping and with the output scale compensated, lifting softmax's bound ($8\\cdot$softmax, "
    "output projection started 8 times smaller) hurts, and capping the rows of $x^3/\\sqrt{N}$ at norm 1 helps it",
    "paper, Section 4 (the mechanism); review ICLR 2025 (clamp or scale softmax's norm)", "03_norms",
    registered="2026-12-03",
    comparisons=(
        vs(_IU, {"activation": "softmax:k=8", "out_init_scale": 0.125}, SOFTMAX, "necessity",
           "8·softmax, output compensated − softmax, unclipped", "worse", baseline_grid=CONVERGED_UNCLIPPED_GRID),
        vs(_IU, _CAPPED, CUBE_SQRT_N, "sufficiency_contrast", "capped − uncapped x³/√N, unclipped", "better",
           baseline_grid=CONVERGED_UNCLIPPED_GRID),
        vs(_IU, {"activation": "softmax:k=1/8"}, SOFTMAX, "tightened", "softmax/8 − softmax, unclipped",
           "equivalent", baseline_grid=CONVERGED_UNCLIPPED_GRID, role="description", shown_with="necessity"),
        vs(_IU, _CAPPED, SOFTMAX, "capped_vs_softmax", "capped x³/√N − softmax, unclipped", "equivalent",
           baseline_grid=CONVERGED_UNCLIPPED_GRID, role="description"),
    ),
    margin=1.0, chance=FASHION_MNIST_CHANCE, chance_band=2.0,
    notes=("5 seeds planned: the clipped intervention's pair spread at this scale decides with 4 or 5 (the design "
           "table on the status page: norm_intervention)",),
    scale="micro ViT, all 60,000 Fashion-MNIST images, 20 epochs, no gradient clipping, book preset",
)

#: In the order chapter 03 takes them up.
CLAIMS = (NORM_INTERVENTION, NORM_INTERVENTION_UNCLIPPED)
