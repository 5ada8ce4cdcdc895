"""Experiment grids per chapter and preset; each grid is a list of configs for
:func:`polyattn.runs.load_or_run_all`."""
from . import architectures, causal, critiques, detection, lra, mqar, physics, vit

GRIDS = {
    "vit_table1": vit.table1,
    "vit_table2": vit.table2,
    "vit_scale": vit.scale_sweep,
    "vit_table1_unclipped": vit.table1_unclipped,
    "vit_converged": vit.converged,
    "vit_unclipped": vit.unclipped,
    "vit_norm_intervention": vit.intervention,
    "vit_scale_long": vit.scale_sweep_long,
    "lra": lra.lra,
    "lra_pathfinder_budget": lra.pathfinder_budget,
    "physics": physics.physics,
    "physics_published_speed": physics.published_speed,
    "causal_charlm": causal.charlm,
    "causal_charlm_nope": causal.charlm_nope,
    "causal_mqar": mqar.causal_mqar,
    "architectures_table2": architectures.table2,
    "critique_weight_decay": critiques.weight_decay,
    "critique_powers": critiques.powers,
    "critique_qk_controls": critiques.qk_controls,
    "critique_weight_decay_unclipped": critiques.weight_decay_unclipped,
    "critique_qk_controls_unclipped": critiques.qk_controls_unclipped,
    "detection_proxy": detection.detection_proxy,
}

__all__ = ["GRIDS", "architectures", "causal", "critiques", "detection", "lra", "mqar", "physics", "vit"]
