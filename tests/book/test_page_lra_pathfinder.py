"""Chapter 05's Pathfinder budget check on a planted table."""
import pandas as pd

from polyattn.studies.lra import pathfinder as page


def test_pathfinder_values_name_who_left_chance():
    from polyattn.experiments.lra import pathfinder_budget

    configs = pathfinder_budget("smoke", [0])
    table = pd.DataFrame([{"model": m, "seeds": 1, "images seen": 128, "mean": acc, "ci_low": acc - 0.1,
                           "ci_high": acc + 0.1, "chance": 0.5, "learned": acc - 0.1 > 0.5, "wall_s": 1.0}
                          for m, acc in ((page.TRANSFORMER, 0.5), (page.EASY, 0.5), (page.CNN, 0.8))]).set_index("model")
    check = page.PathfinderCheck(configs, [{}] * len(configs), 0.5, table, 64)
    v = page.pathfinder_values(check)
    assert v["learned_by"] == "the CNN" and v["not_learned_by"] == "the transformer and the transformer without distractors"
    assert v["cnn"] == "80.0% (95% CI 70.0 to 90.0)" and v["cnn_learned"] == "learns"
    assert v["times_grid"] == f"{configs[0].train_subset * configs[0].epochs / 64:.1f}" and v["seeds"] == "1 seed"
    waiting = page.PathfinderCheck(configs, [], 0.5, pd.DataFrame(), 64)
    assert page.pathfinder_values(waiting)["cnn"] == "not stored" and page.pathfinder_table(waiting, "book").data == ""
