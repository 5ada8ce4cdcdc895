"""Run labels read from configs (:mod:`polyattn.labels`) name every run of the grids built from the
same tables, from a TrainConfig, a record's config dict or the whole record alike; the grids,
tasks and training loop use these definitions, not copies of them."""
from __future__ import annotations

import pytest

from polyattn import labels, qk_controls, schedule, train
from polyattn.experiments import architectures, causal, critiques, detection, lra, physics
from polyattn.results import config_dict
from polyattn.tasks import mqar as mqar_task


def forms(config):
    """The three things a label reads: the config, its dict, a record holding the dict."""
    return config, config_dict(config), {"config": config_dict(config), "seed": config.seed}


def test_the_grids_and_the_training_loop_use_the_labels_definitions():
    assert lra.variant_label is labels.lra_label and lra.task_of is labels.lra_task
    assert lra.budget_label is labels.pathfinder_budget_label and lra.LRA_VARIANTS is labels.LRA_VARIANTS
    assert physics.variant_label is labels.physics_label and physics.pde_of is labels.pde_of
    assert causal.variant_label is labels.charlm_label and detection.variant_label is labels.detection_label
    assert critiques.qk_label is labels.qk_label and architectures.architecture is labels.architecture
    assert qk_controls.length_aware_gain is labels.length_aware_gain
    assert train.lr_at is schedule.lr_at
    assert mqar_task.set_names is labels.mqar_set_names and mqar_task.DEFAULTS is labels.MQAR_DEFAULTS


@pytest.mark.parametrize("preset", ["smoke", "book", "paper"])
def test_architecture_is_the_grid_entry_of_every_config(preset):
    table = architectures.PAPER_ARCHITECTURES if preset == "paper" else architectures.BOOK_ARCHITECTURES
    configs = architectures.table2(preset, seeds=[0]) + architectures.table2_linear(preset, seeds=[0])
    assert configs
    for c in configs:
        for x in forms(c):
            assert labels.architecture(x) == next(a for a, spec in table.items() if spec["model"] == c.model)
    assert [labels.architecture_label(c) for c in architectures.table2(preset, seeds=[0]) if "xcit" in c.model] == \
        list(labels.ARCHITECTURE_VARIANTS)


@pytest.mark.parametrize("model", ["micro", "timm:resnet50", None])
def test_architecture_refuses_models_outside_the_grid(model):
    with pytest.raises(ValueError, match="not a model of the architectures grid"):
        labels.architecture({"model": model})


def test_lra_labels_name_every_run_of_the_grid():
    configs = lra.lra("smoke", seeds=[0])
    assert len(configs) == len(labels.LRA_TASKS) * len(labels.LRA_VARIANTS)
    for c in configs:
        for x in forms(c):
            assert labels.lra_task(x) == c.dataset
            assert labels.lra_label(x) in [label for label, _, _ in labels.LRA_VARIANTS]
    assert labels.lra_task({"dataset": "pathfinder_6"}) == "pathfinder"
    assert labels.lra_label({"activation": "relu_n", "n_mode": "row"}) == "relu_n (N: row)"
    budget = lra.pathfinder_budget("smoke", seeds=[0])
    assert [labels.pathfinder_budget_label(r) for c in budget for r in forms(c)[1:]] == \
        [label for label, _, _ in labels.PATHFINDER_BUDGET for _ in range(2)]


def test_physics_labels_name_every_run_of_the_grid():
    configs = physics.physics("smoke", seeds=[0])
    got = {(labels.pde_of(x), labels.physics_label(x)) for c in configs for x in forms(c)}
    assert got == {(p, v) for p in labels.PDES for v in labels.PHYSICS_VARIANTS}


def test_charlm_and_detection_labels_name_every_run_of_their_grids():
    charlm = causal.charlm("smoke", seeds=[0])
    assert [labels.charlm_label(c) for c in charlm] == [label for label, _, _ in labels.CHARLM_VARIANTS]
    assert labels.charlm_label(forms(charlm[2])[2]) == "x^3/sqrt(T)"
    proxy = detection.detection_proxy("smoke", seeds=[0])
    assert [labels.detection_label(x) for c in proxy for x in forms(c)] == \
        [label for label, _ in labels.DETECTION_VARIANTS for _ in range(3)]
    assert labels.detection_label("poly:p=3,c=2/28") == "x^3/14"


def test_qk_labels_name_every_run_of_the_qk_grid_in_its_order():
    configs = critiques.qk_controls("smoke", seeds=[0])
    assert [labels.qk_label(x) for c in configs for x in forms(c)[1:]] == \
        [label for label, _, _ in labels.qk_variants() for _ in range(2)]
    gain = labels.qk_variants()[-1][2]["qk_init_scale"]
    assert gain == pytest.approx(labels.TABLE1_TOKENS ** (-1 / 12), abs=1e-4)
    assert labels.qk_label({"activation": "poly:p=3,c=1", "qk_init_scale": 0.5}).startswith("poly:p=3,c=1 (")


def test_mqar_set_names_fill_the_defaults():
    assert labels.mqar_set_names(labels.MQAR_DEFAULTS["test_sets"]) == ["L64", "L128", "L256"]
    assert labels.mqar_set_names([(64, 4), (64, 8)]) == ["L64_K4", "L64_K8"]
