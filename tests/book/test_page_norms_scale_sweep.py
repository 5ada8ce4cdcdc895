"""Chapter 03's Figure 1 analogue on planted records: the sweep's table of the best constant,
the grid in words, and chapter 04's verdict under this chapter's names."""
import matplotlib
from support.records import sweep_records

from polyattn import analysis
from polyattn.claims.spec import Finding
from polyattn.experiments import vit
from polyattn.studies.norms import scale_sweep as sw

matplotlib.use("Agg")


def test_the_sweep_table_finds_the_planted_best_constants_and_marks_an_optimum_at_the_edge():
    records = sweep_records({4: 1 / 8, 7: 1 / 32}, noise=0.0)
    best = analysis.best_constant(analysis.final_accuracy(records), n_boot=0)
    rows = {r["N"]: r for r in sw.best_constant_rows(best)}
    assert set(rows) == {17, 50}
    assert rows[50]["best c"] == "1/8" and rows[50]["best at grid edge"] == "no"
    assert rows[17]["best c"] == "1/32" and rows[17]["best at grid edge"] == "yes"
    # three seeds with a steady offset: the margin's interval excludes 0
    assert rows[50]["interval excludes 0"] == "yes"
    assert "±" in rows[50]["accuracy (%) ± sd"]


def test_the_sweep_table_says_when_one_seed_gives_no_interval():
    records = sweep_records({4: 1 / 8}, seeds=(0,))
    best = analysis.best_constant(analysis.final_accuracy(records), n_boot=0)
    (row,) = sw.best_constant_rows(best)
    assert row["interval excludes 0"] == "one seed: no interval" and "±" not in row["accuracy (%) ± sd"]


def test_the_sweep_values_name_the_grid_and_a_page_without_runs_shows_no_table():
    grid = vit.scale_sweep("book")
    sweep = sw.Sweep(grid, [], None, "paper", "not run")
    values = sw.sweep_values(sweep)
    constants = sorted({analysis.activation_constant(c.activation) for c in grid})
    assert values["ch03_n_constants"] == len(constants) and values["ch03_n_lengths"] == 3
    assert values["ch03_constants"] == "{" + ", ".join(lbl for _, lbl in constants) + "}"
    assert values["ch03_grid_factor"] == f"{constants[1][0] / constants[0][0]:g}"
    assert values["ch03_scale_caption"] == "not run"
    assert sw.best_constant_table(sweep) is None and sw.scale_figure(sweep) is None


def test_chapter_04s_verdict_is_glued_with_its_slope_and_interval():
    numbers = {"deciding sweep": "vit_scale", "deciding sweep scale": "1,000 images for 5 epochs",
               "deciding sweep runs stored": 45, "deciding sweep runs planned": 45,
               "best c at N = 197": "2", "best c at N = 17": "1/2", "best c at N = 50": "8",
               "slope": -0.124, "slope CI low": -0.705, "slope CI high": 0.882}
    values = sw.fig1_values(Finding("inconclusive at this scale", "planted", numbers))
    assert values["ch03_fig1_form"] == "inconclusive at this scale"
    assert values["ch03_fig1_best"] == "1/2 at N = 17, 8 at N = 50, 2 at N = 197"
    assert values["ch03_fig1_slope"] == "−0.12 (95% bootstrap interval over seeds: −0.70 to +0.88)"
    assert values["ch03_fig1_stored"] == "45 of 45" and values["ch03_fig1_sweep"].data == "`vit_scale`"


def test_a_slope_that_was_not_fitted_is_said_in_words():
    numbers = {"deciding sweep": "vit_scale", "deciding sweep scale": "", "deciding sweep runs stored": 0,
               "deciding sweep runs planned": 45}
    values = sw.fig1_values(Finding("inconclusive at this scale", "planted", numbers))
    assert values["ch03_fig1_slope"].startswith("not fitted") and values["ch03_fig1_best"] == "none"
    missing = {"slope": float("nan"), "slope CI low": float("nan"), "slope CI high": float("nan")}
    with_nan = sw.fig1_values(Finding("inconclusive at this scale", "planted", {**numbers, **missing}))
    assert with_nan["ch03_fig1_slope"].startswith("not fitted")
