"""Chapter 09's training-speed claim: the gap to softmax against the budget, on planted records."""
import matplotlib
import pytest
from support.planted_records import plant

from polyattn.claims import MEASURED
from polyattn.config import TrainConfig
from polyattn.measures import training_speed as measure

SMALL, LARGE = "unit_speed_small", "unit_speed_large"


def _plant(root, planted_grid, grid, accs, steps):
    """Records of ``grid``: each activation's final test accuracy per seed (fractions), recorded at
    step ``steps`` (the budget is that times the config's batch)."""
    configs = [plant(root, TrainConfig(experiment=grid, activation=act, seed=seed, preset="smoke"),
                     [{"epoch": 1, "step": steps, "test_acc": acc}])
               for act, values in accs.items() for seed, acc in enumerate(values)]
    planted_grid(grid, configs)


BATCH = TrainConfig().batch_size


def _task(task_id="unit", chance=10.0):
    tiers = (measure.Tier(SMALL, measure.CUBE_SQRT_N, measure.SOFTMAX, "short"),
             measure.Tier(LARGE, measure.CUBE_SQRT_N, measure.SOFTMAX, "long"))
    return measure.Task(task_id, f"task {task_id}", "table_parity", "images seen",
                        (measure.Series(f"{task_id}_cube", "x³/√N − softmax", tiers, primary=True),), chance=chance)


SOFT = [0.80, 0.81, 0.79, 0.80, 0.82]


def _shift(values, d, jitter=0.002):
    return [v + d + jitter * (i - 2) for i, v in enumerate(values)]


def _results(tmp_path, task=None):
    return measure.task_results(tmp_path, chosen=(task or _task(),))


def test_a_deficit_that_closes_with_more_budget_shrinks_and_the_claim_holds(tmp_path, planted_grid):
    _plant(tmp_path, planted_grid, SMALL, {"softmax": SOFT, "poly:p=3": _shift(SOFT, -0.05)}, steps=100)
    _plant(tmp_path, planted_grid, LARGE, {"softmax": SOFT, "poly:p=3": _shift(SOFT, -0.001)}, steps=1000)
    (r,) = _results(tmp_path)
    small, large = r.gaps["unit_cube"]
    assert small.mean == pytest.approx(-5.0, abs=1e-6) and large.mean == pytest.approx(-0.1, abs=1e-6)
    assert small.budget == 100 * BATCH and large.budget == 1000 * BATCH
    assert r.change.reading == "means" and r.change.estimate == pytest.approx(4.9, abs=1e-6)
    assert r.change.ci_low > 0 and r.change.verdict == "shrinks"
    assert measure.form_of([r.change.verdict], True) == "holds"


def test_an_unchanged_gap_is_shown_not_to_shrink_and_with_a_shrinking_task_the_claim_is_mixed(tmp_path, planted_grid):
    _plant(tmp_path, planted_grid, SMALL, {"softmax": SOFT, "poly:p=3": _shift(SOFT, -0.002)}, steps=100)
    _plant(tmp_path, planted_grid, LARGE, {"softmax": SOFT, "poly:p=3": _shift(SOFT, -0.001)}, steps=1000)
    (flat,) = _results(tmp_path)
    assert flat.change.verdict == "unchanged within the margin"
    assert measure.form_of(["shrinks", flat.change.verdict], True) == "mixed"
    assert measure.form_of([flat.change.verdict], True) == "fails"
    assert measure.form_of(["shrinks", "undecided"], True) == "inconclusive at this power"
    assert measure.form_of(["undecided"], False) == "inconclusive at this scale"


def test_seeds_split_across_the_floor_are_read_as_counts_with_fishers_test(tmp_path, planted_grid):
    # the cube stays at chance (10%) in every seed with the short budget and learns in every seed with the long
    soft = SOFT[:4]
    _plant(tmp_path, planted_grid, SMALL, {"softmax": soft, "poly:p=3": [0.10, 0.105, 0.10, 0.11]}, steps=100)
    _plant(tmp_path, planted_grid, LARGE, {"softmax": soft, "poly:p=3": _shift(soft, -0.01)[:4]}, steps=1000)
    (r,) = _results(tmp_path)
    small, large = r.gaps["unit_cube"]
    assert (small.candidate_learned, small.baseline_learned, small.n) == (0, 4, 4)
    assert large.all_learned and not small.all_learned
    assert r.change.reading == "counts" and r.change.estimate == 1.0
    assert r.change.p == pytest.approx(1 / 35)  # Fisher's exact test on 0 of 4 against 4 of 4
    assert r.change.verdict == "shrinks" and r.change.ci_low != r.change.ci_low  # counts carry no mean interval


def test_three_split_seeds_cannot_decide_and_softmax_failing_leaves_nothing_to_count(tmp_path, planted_grid):
    _plant(tmp_path, planted_grid, SMALL, {"softmax": SOFT[:3], "poly:p=3": [0.10, 0.60, 0.10]}, steps=100)
    _plant(tmp_path, planted_grid, LARGE, {"softmax": [0.8, 0.1, 0.8], "poly:p=3": SOFT[:3]}, steps=1000)
    (r,) = _results(tmp_path)
    assert r.change.reading == "counts" and r.change.verdict == "undecided"
    assert "softmax did not learn" in r.change.note


def test_holm_runs_over_the_tasks():
    changes = [measure.Change("counts", estimate=1.0, p=0.018), measure.Change("means", estimate=2.0, p=0.026,
                                                                              ci90_low=0.5, ci90_high=3.5)]
    measure.decide(changes, [1.0, 1.0])
    assert [c.holm_p for c in changes] == pytest.approx([0.036, 0.036])
    assert [c.verdict for c in changes] == ["shrinks", "shrinks"]
    changes = [measure.Change("counts", estimate=1.0, p=0.018), measure.Change("counts", estimate=0.5, p=0.4),
               measure.Change("counts", estimate=-1.0, p=0.001)]
    measure.decide(changes, [1.0] * 3)
    assert [c.verdict for c in changes] == ["shrinks", "undecided", "grows"]


def test_the_claim_is_registered_with_its_rule_and_says_it_came_after_its_runs():
    from polyattn.book.verdict_rows import VERDICT_ROWS

    c = MEASURED["training_speed"]
    assert c.measure == "measures.training_speed:training_speed" and c.chapter == "09_critiques"
    assert "Holm" in c.rule and "Fisher" in c.rule and "after every run" in c.registered_after
    assert "training_speed" in VERDICT_ROWS


def test_the_tasks_are_the_grids_with_several_budgets_and_the_language_models_are_left_out():
    from polyattn.experiments import GRIDS

    tasks = measure.tasks()
    assert [t.id for t in tasks] == ["vit", "listops", "retrieval", "convection"]
    assert all(sum(s.primary for s in t.series) == 1 for t in tasks)
    assert all(tier.grid in GRIDS for t in tasks for s in t.series for tier in s.tiers)
    assert not any(tier.grid.startswith("causal_") for t in tasks for s in t.series for tier in s.tiers)
    vit = tasks[0].primary
    assert [t.grid for t in vit.tiers] == ["vit_table2", "vit_table1", "vit_converged"]
    assert vit.tiers[0].pool_over == ("model", "augment")


def test_the_figure_is_a_column_wide_with_no_text_below_nine_points():
    from polyattn.studies.critiques import training_speed as page

    numbers = {"alpha": 0.05, "tasks": 1, "vit: margin": 1.0}
    for s in measure.tasks()[0].series:
        for i, tier in enumerate(s.tiers):
            key = f"{s.id} at {tier.grid}"
            numbers.update({f"{key}: budget": 1e4 * 10 ** i, f"{key}: pairs": 3, f"{key}: gap": -2.0 + i,
                            f"{key}: gap CI low": -3.0 + i, f"{key}: gap CI high": -1.0 + i,
                            f"{key}: candidate learned": 3 if i else 2, f"{key}: baseline learned": 3})
    fig = page.speed_figure(numbers)
    assert fig.get_figwidth() * fig.dpi == pytest.approx(page.WIDTH_PX)
    texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()]
    assert texts and min(t.get_fontsize() for t in texts) >= page.FONT >= 9
    assert any(t.get_text() == "2/3" for t in texts)  # a tier with an unlearned seed shows its count
    assert sum(t.get_text() == "no runs stored" for t in texts) == len(page.panels()) - 2  # only the ViT's given
    assert not any("$" in t.get_text() or "\\" in t.get_text() for t in texts)
    matplotlib.pyplot.close(fig)
