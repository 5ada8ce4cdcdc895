"""Chapter 09's shared page code on planted records: table cells, glued numbers, the loaders' runs
and the folded parts."""
from types import SimpleNamespace

import matplotlib
from support.patching import patch_everywhere

from polyattn.experiments import vit
from polyattn.studies.critiques import page, trained

matplotlib.use("Agg")


# --- table cells and glued values -----------------------------------------------------------------


def test_a_grouping_column_blanks_each_repeat_of_the_value_above():
    assert page.first_only(["a", "a", "b", "a", "a"]) == ["a", "", "b", "a", ""]
    assert page.first_only([]) == []


def test_a_before_and_after_cell():
    assert page.before_after(0.5, 2.0) == "0.5 → 2"


def test_numbers_are_formatted_by_their_spec_and_a_missing_one_says_so():
    values = page.formatted({"share": 0.153, "step": 117, "powers": "x⁷/√N", "tiny": 2.56e-9, "gone": float("nan")},
                            {"share": ".0%", "step": "d", "powers": "", "tiny": ".3g", "absent": ".2f", "gone": ".2f"})
    assert values == {"share": "15%", "step": "117", "powers": "x⁷/√N", "tiny": "2.56e-09", "absent": "not stored",
                      "gone": "not stored"}


def test_each_number_is_glued_under_the_page_prefix_with_the_sections_formats(monkeypatch):
    import polyattn.book.deliver as deliver

    glued = {}
    patch_everywhere(monkeypatch, deliver, "glue", lambda name, value, display=True: glued.__setitem__(name, value))
    page.glue_numbers("ch09_x", {"rho": -0.52}, {"rho": "+.2f"})
    page.glue_numbers("ch09_outlier", {"factor": 100.0, "images": 500, "other": 1})
    assert glued == {"ch09_x_rho": "-0.52", "ch09_outlier_factor": "100", "ch09_outlier_images": "500"}


def test_the_bootstrap_takes_the_registers_draws_at_the_book_preset_only():
    assert page.n_boot("book") == 2000 and page.n_boot("smoke") < 2000


# --- the runs -------------------------------------------------------------------------------------


def test_runs_know_when_every_planned_run_is_stored_and_measured():
    grid = vit.table1("smoke", seeds=[0, 1])[:3]
    ok = {"status": "ok", "final": {"gradients": {}}}
    runs = page.Runs(grid, [ok, {"status": "ok"}, {"status": "diverged", "final": {}}])
    assert runs.complete and not runs.all_measured and len(runs.measured) == 1
    assert runs.seeds == sorted({c.seed for c in grid}) and runs.config is grid[0]
    assert not page.Runs(grid, [ok]).complete and page.Runs(grid[:1], [ok]).all_measured


def test_a_page_that_does_not_train_reads_no_records(planted_grid):
    configs = planted_grid("critique_powers", vit.table1("smoke", seeds=[0]))
    idle = SimpleNamespace(preset="paper", trains=False, on_device=lambda c: list(c))
    runs = page.trained_runs(idle, "critique_powers")
    assert runs.grid == configs and runs.records == []
    assert page.table1_records(idle) == [] and page.sweep_records(idle) == []
    assert trained.powers_figure(runs, "paper") is None
    assert "No record" in trained.powers_table(runs, "paper").data
    assert set(trained.powers_numbers(runs).values()) == {"not stored"}


# --- the folded parts -----------------------------------------------------------------------------


def test_a_folded_part_is_glued_and_a_figure_is_closed_where_it_is_made(monkeypatch):
    import matplotlib.pyplot as plt

    import polyattn.book.deliver as deliver

    glued = {}
    patch_everywhere(monkeypatch, deliver, "glue", lambda name, value, display=True: glued.__setitem__(name, value))
    fig, _ = plt.subplots()
    page.glue_folded("ch09_fold_figure", fig)
    page.glue_folded("ch09_fold_missing", None)
    assert glued["ch09_fold_figure"] is fig and not plt.fignum_exists(fig.number)
    assert "Not computed" in glued["ch09_fold_missing"].data
    note = page.nothing_stored()
    assert page.compact(note) is note
