"""Experiment grids per chapter and preset; each grid is a list of configs for
:func:`polyattn.runs.load_or_run_all`.  Importing this package registers every grid in
:data:`polyattn.grids.GRIDS` (``GRIDS`` here is that registry)."""
from ..grids import GRIDS, register
from . import architectures, causal, causal_rope, critiques, detection, lra, mqar, mqar_decide, physics, short_retrain, vit, vit_marked

for _name, _grid in {
    "vit_table1": vit.table1,
    "vit_table2": vit.table2,
    "vit_scale": vit.scale_sweep,
    "vit_table1_unclipped": vit.table1_unclipped,
    "vit_table1_quadratic": vit.table1_quadratic,
    "vit_converged": vit.converged,
    "vit_unclipped": vit.unclipped,
    "vit_unclipped_ablated": vit.unclipped_ablated,
    "vit_intervention_unclipped": vit.intervention_unclipped,
    "vit_norm_intervention": vit.intervention,
    "vit_table2_converged": vit.table2_converged,
    "vit_scale_long": vit.scale_sweep_long,
    "vit_marked_probe": vit_marked.marked_probe,
    **{f"vit_marked_probe_{e}": vit_marked.marked_probe_at(e) for e in vit_marked.PROBE_EPOCHS["book"]},
    "vit_marked": vit_marked.marked,
    "lra": lra.lra,
    "lra_pathfinder_budget": lra.pathfinder_budget,
    "lra_long": lra.lra_long,
    "physics": physics.physics,
    "physics_published_speed": physics.published_speed,
    "physics_long": physics.physics_long,
    "physics_ablated": physics.physics_ablated,
    "causal_charlm": causal.charlm,
    "causal_charlm_nope": causal.charlm_nope,
    "causal_length_sweep": causal.length_sweep,
    "causal_length_probe": causal_rope.length_probe,
    **{f"causal_length_probe_{s}": causal_rope.length_probe_at(s) for s in causal_rope.PROBE_STEPS["book"]},
    "causal_length_rope": causal_rope.length_rope,
    "causal_dose_response": causal_rope.dose_response,
    "causal_mqar": mqar.causal_mqar,
    "causal_mqar_long": mqar.causal_mqar_long,
    "causal_mqar_recall": mqar.causal_mqar_recall,
    "causal_mqar_probe": mqar.causal_mqar_probe,
    "causal_mqar_probe2": mqar_decide.causal_mqar_probe2,
    **{f"causal_mqar_probe2_{name}": mqar_decide.probe2_at(name) for name in mqar_decide.PROBE2_SETTINGS},
    "causal_mqar_decide": mqar_decide.causal_mqar_decide,
    "architectures_table2": architectures.table2,
    "architectures_linear": architectures.table2_linear,
    "critique_weight_decay": critiques.weight_decay,
    "critique_powers": critiques.powers,
    "critique_qk_controls": critiques.qk_controls,
    "critique_weight_decay_unclipped": critiques.weight_decay_unclipped,
    "critique_qk_controls_unclipped": critiques.qk_controls_unclipped,
    "critique_qk_norm": critiques.qk_norm,
    "critique_short_retrain": short_retrain.short_retrain,
    "detection_proxy": detection.detection_proxy,
    "detection_ablated": detection.detection_ablated,
}.items():
    register(_name, _grid)

__all__ = ["GRIDS", "architectures", "causal", "causal_rope", "critiques", "detection", "lra", "mqar", "mqar_decide",
           "physics", "short_retrain", "vit", "vit_marked"]
