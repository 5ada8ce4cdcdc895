"""Chapter 09's powers and gradients without training: the cube's activation Jacobian against the
linear map's, step by step."""
import pandas as pd
import pytest

from polyattn.studies.critiques import gradients as page


def test_the_cube_leaves_its_vanishing_start_at_the_first_step_above_the_linear_map():
    steps = pd.DataFrame({0: [0.02, 7.07], 117: [5.37, 7.07], 234: [9.0, 7.07], 935: [22.7, 7.07]},
                         index=["poly:p=3", "poly:p=1"])
    n = page.jacobian_numbers(steps)
    assert n["first_step"] == 0 and n["second_step"] == 117
    assert n["linear_over_cube_first"] == pytest.approx(353.5)
    assert n["cube_above_from_step"] == 234 and n["cube_last"] == 22.7
    below = page.jacobian_numbers(steps.loc[:, [0, 117]])
    assert below["cube_above_from_step"] == "no probed step"
    assert page.records_jacobian_numbers([]) == {}
