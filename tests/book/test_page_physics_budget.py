"""Chapter 06's "Convection with a longer budget": planted runs of the two grids come back out as
the budget's table, values and figure, and one comparison of a delivered claim is read by id."""
import math
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from support.patching import patch_everywhere
from support.physics_runs import RMAE_SPEC  # noqa: E402
from support.planted_records import plant  # noqa: E402

from polyattn.experiments import physics as grids  # noqa: E402
from polyattn.studies.physics import budget as page
from polyattn.studies.physics.page import FONT  # noqa: E402


def test_claim_comparison_reads_one_comparison_of_a_claim(monkeypatch):
    from polyattn.claims import report

    result = SimpleNamespace(comparison=SimpleNamespace(id="convection"), mean=math.log10(2.0))
    delivered = SimpleNamespace(verdict=SimpleNamespace(comparisons=[result], claim=SimpleNamespace(id="x")))
    patch_everywhere(monkeypatch, report, "comparison_rows", lambda v: [{"Difference [95% CI]": "+0.30 [−0.5, +1.1] (log10)",
                                                                  "Result": "inconclusive", "Pairs": "3 of 3"}])
    v = page.claim_comparison(delivered, "convection")
    assert v == {"difference": "+0.30 [−0.5, +1.1]", "pairs": "3 of 3", "ratio": "2", "result": "inconclusive"}
    with pytest.raises(ValueError, match="no comparison"):
        page.claim_comparison(delivered, "wave")


def _plant_budget(root, planted_grid, short, long, short_steps=8, long_steps=20):
    """Convection runs of the two grids: per variant, one rMAE curve per seed (one value per step)."""
    configs = {"physics": [], "physics_long": []}
    for grid, curves, steps in (("physics", short, short_steps), ("physics_long", long, long_steps)):
        for label, per_seed in curves.items():
            for seed, curve in enumerate(per_seed):
                cfg = grids.config_for("smoke", "convection", label, seed, steps=steps).replace(experiment=grid)
                metrics = [{"epoch": i + 1, "step": i + 1, "train_loss": 1.0, "rMAE": e, "rRMSE": e}
                           for i, e in enumerate(curve)]
                plant(root, cfg, metrics, metrics_spec=RMAE_SPEC, task="pde", seq_lens={"seq_len": 5},
                      provenance={"git_commit": "x", "git_dirty": False, "wall_s": 1.0,
                                  "started": "2026-01-01T00:00:00+00:00",
                                  "hardware": {"cpu": "CPU " + grid}})
                configs[grid].append(cfg)
    for grid, cfgs in configs.items():
        planted_grid(grid, cfgs)


def test_the_budget_table_shows_a_failure_that_more_steps_remove(tmp_path, planted_grid):
    fast, slow, never = [1.0, 0.5, 0.05, 0.02], [1.0, 0.9, 0.8, 0.6], [1.0, 0.9, 0.9, 0.9]
    _plant_budget(tmp_path, planted_grid,
                  short={"softmax": [fast, fast], "x^3/sqrt(N)": [slow, never]},
                  long={"softmax": [fast + [0.02] * 16, fast + [0.02] * 16],           # below 0.1 from step 3
                        "x^3/sqrt(N)": [slow + [0.5] * 5 + [0.05] * 11,               # from step 10
                                        slow + [0.5] * 7 + [0.04] * 9]})              # from step 12
    budget = page.budget_runs(tmp_path)
    summary = page.budget_summary(budget).set_index(["grid", "variant"])
    assert summary.loc[("physics", "x^3/sqrt(N)"), "failed"] == 2
    assert summary.loc[("physics", "x^3/sqrt(N)"), "first_below"] == "never"
    assert summary.loc[("physics_long", "x^3/sqrt(N)"), "failed"] == 0
    assert summary.loc[("physics_long", "x^3/sqrt(N)"), "first_below"] == "11 [10, 12]"
    assert summary.loc[("physics_long", "softmax"), "by_short"] == 2
    v = page.budget_values(budget)
    assert (v["short_steps"], v["long_seeds"]) == ("8", "2")
    assert (v["failed_short_poly"], v["failed_long_poly"], v["failed_short_softmax"]) == ("2 of 2", "0 of 2", "0 of 2")
    assert v["first_long_softmax"] == "3 [3, 3]" and v["by_short_long_poly"] == "0 of 2"
    assert (v["cpu_short"], v["cpu_long"]) == ("CPU physics", "CPU physics_long")
    table = page.budget_table(budget).data
    assert list(table["L-BFGS steps"]) == [8, 8, 20, 20] and "x³/√N" in set(table["Variant"])
    fig = page.budget_figure(budget)
    assert [ax.get_title() for ax in fig.axes] == ["book grid, 8 steps", "longer grid, 20 steps"]
    assert all(t.get_fontsize() >= FONT for ax in fig.axes for t in ax.get_legend().get_texts())
    matplotlib.pyplot.close(fig)


def test_no_stored_budget_says_so(tmp_path, planted_grid):
    planted_grid("physics", [])
    planted_grid("physics_long", [])
    budget = page.budget_runs(tmp_path)
    assert budget.empty and page.budget_figure(budget) is None
    assert page.budget_table(budget).data.startswith("No run")
    assert page.budget_values(budget)["failed_long_poly"] == "not stored"
