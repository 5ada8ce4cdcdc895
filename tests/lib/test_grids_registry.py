"""The grids registry: the studies register their grids; readers look them up by name."""
import pytest

from polyattn import experiments, grids


def test_every_study_grid_is_registered_and_experiments_grids_is_the_registry():
    assert experiments.GRIDS is grids.GRIDS
    assert {"vit_table1", "lra", "causal_charlm", "physics", "detection_proxy"} <= set(grids.GRIDS)
    assert grids.grid("vit_table1") is experiments.vit.table1
    assert grids.configs("vit_table1", "book") == list(experiments.vit.table1("book", None))


def test_an_unknown_grid_and_a_second_grid_under_a_taken_name_are_refused(monkeypatch):
    with pytest.raises(ValueError, match="unknown grid 'no_such_grid'; grids: .*vit_table1"):
        grids.grid("no_such_grid")
    with pytest.raises(ValueError, match="grid 'vit_table1' is registered already"):
        grids.register("vit_table1", lambda preset, seeds: [])
    assert grids.register("vit_table1", experiments.vit.table1) is experiments.vit.table1   # the same again is fine
    monkeypatch.setattr(grids, "GRIDS", {})
    with pytest.raises(ValueError, match="grids: none .import polyattn.experiments"):
        grids.grid("vit_table1")


def test_each_ablated_control_is_its_recipe_with_uniform_weights():
    # the Table 1 analogue's control differs from its softmax runs in the activation alone, seed for seed
    from polyattn.experiments import GRIDS

    softmax = [c for c in GRIDS["vit_table1"]("book") if c.activation == "softmax"]
    ablated = GRIDS["vit_table1_ablated"]("book")
    assert len(ablated) == len(softmax) == 5 and {c.activation for c in ablated} == {"uniform"}
    for a, s in zip(ablated, softmax):
        assert a.replace(activation="softmax", experiment="vit_table1") == s
    assert GRIDS["vit_table1_ablated"]("paper") == GRIDS["vit_table1"]("paper")
