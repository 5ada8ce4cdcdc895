"""Chapter 06's shared page module: the names a reader reads, the setting of the runs in words, and
what each section shows without runs."""
import math

from support.physics_runs import planted_runs

from polyattn.experiments import physics as grids
from polyattn.labels import PINN_LABEL
from polyattn.studies.physics import comparisons as physics_comparisons
from polyattn.studies.physics import curves as physics_curves
from polyattn.studies.physics import errors as physics_errors
from polyattn.studies.physics import fields as physics_fields
from polyattn.studies.physics import page
from polyattn.studies.physics import problems as physics_problems
from polyattn.studies.physics import setting as physics_setting


def test_names_a_reader_reads():
    assert page.variant_name("x^3/sqrt(N)") == "x³/√N" and page.variant_name("x^3/14") == "x³/14"
    assert page.variant_name(PINN_LABEL) == PINN_LABEL
    assert page.parameters_text("convection:beta=30") == "β = 30" and page.parameters_text("reaction") == "ρ = 5"
    assert physics_problems.intro_values()["scale_ratio"] == f"{14 / math.sqrt(5):.2f}"


def test_the_scope_is_the_measures_own():
    runs = planted_runs()
    assert "convection at β = 30 instead of the published parameters" in page.scope(runs)
    assert page.scope(runs).endswith("preset smoke")


def test_a_page_without_runs_says_so():
    runs = page.Runs("paper", False, "not run under preset paper", grids.physics("book"))
    assert physics_errors.error_table(runs).data == "not run under preset paper"
    assert physics_comparisons.comparison_table(runs).data == "not run under preset paper"
    assert physics_fields.field_figure(runs) is None and physics_curves.curve_figure(runs) is None
    assert physics_errors.error_values(runs)["failed_wave_poly"] == "not run under preset paper"
    assert (physics_setting.grid_values(runs)["seeds_main"] == "5"
            and physics_problems.problem_specs(runs)["convection"] == "convection:beta=30")
