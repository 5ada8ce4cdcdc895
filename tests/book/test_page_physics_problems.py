"""Chapter 06's introduction and "The three problems": the problems and their closed-form
solutions as a reader reads them."""
import math

import matplotlib

matplotlib.use("Agg")

from support.physics_runs import planted_runs  # noqa: E402

from polyattn.studies.physics import problems as page


def test_the_problems_as_a_reader_reads_them():
    runs = planted_runs()
    v = page.problem_values(runs)
    assert (v["beta"], v["beta_published"]) == ("30", "50") and v["crossings"] == f"{30 / (2 * math.pi):.1f}"
    assert v["beta_note"].startswith("not the published speed")
    first, _ = page.problem_tables(runs)
    assert first.data["parameters"].tolist() == ["β = 30", "ρ = 5", "c = 2"]
    fig = page.solution_figure(runs)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["convection (β = 30)", "reaction (ρ = 5)", "wave (c = 2)"]
    matplotlib.pyplot.close(fig)
