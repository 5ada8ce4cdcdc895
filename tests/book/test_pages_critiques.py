"""Chapter 09's page module: table cells, glued numbers and the values its prose reads."""
import pandas as pd
import pytest

from polyattn.pages import critiques as page


def test_a_grouping_column_blanks_each_repeat_of_the_value_above():
    assert page.first_only(["a", "a", "b", "a", "a"]) == ["a", "", "b", "a", ""]
    assert page.first_only([]) == []


def test_grid_labels_read_as_a_reader_writes_them():
    assert page.qk_name("x^3, Q/K init x0.72") == "x³, Q/K init ×0.72"
    assert page.qk_name("x^3/sqrt(N)") == "x³/√N"


def test_a_before_and_after_cell():
    assert page.before_after(0.5, 2.0) == "0.5 → 2"


def test_numbers_are_formatted_by_their_spec_and_a_missing_one_says_so():
    values = page.formatted({"share": 0.153, "step": 117, "powers": "x⁷/√N", "tiny": 2.56e-9},
                            {"share": ".0%", "step": "d", "powers": "", "tiny": ".3g", "absent": ".2f"})
    assert values == {"share": "15%", "step": "117", "powers": "x⁷/√N", "tiny": "2.56e-09", "absent": "not stored"}


def test_each_number_is_glued_under_the_page_prefix(monkeypatch):
    import polyattn.book.deliver as deliver

    glued = {}
    monkeypatch.setattr(deliver, "glue", lambda name, value, display=True: glued.__setitem__(name, value))
    page.glue_numbers("ch09_x", {"rho": -0.52}, {"rho": "+.2f"})
    assert glued == {"ch09_x_rho": "-0.52"}


def test_the_cube_leaves_its_vanishing_start_at_the_first_step_above_the_linear_map():
    steps = pd.DataFrame({0: [0.02, 7.07], 117: [5.37, 7.07], 234: [9.0, 7.07], 935: [22.7, 7.07]},
                         index=["poly:p=3", "poly:p=1"])
    n = page.jacobian_numbers(steps)
    assert n["first_step"] == 0 and n["second_step"] == 117
    assert n["linear_over_cube_first"] == pytest.approx(353.5)
    assert n["cube_above_from_step"] == 234 and n["cube_last"] == 22.7
    below = page.jacobian_numbers(steps.loc[:, [0, 117]])
    assert below["cube_above_from_step"] == "no probed step"


def test_correlation_rows_become_numbers_by_subset_and_norm():
    row = {"rho": -0.5, "ci_low": -0.8, "ci_high": -0.2, "cluster_ci_low": -0.9, "cluster_ci_high": 0.1,
           "within_rho": -0.3, "n": 25}
    corr = pd.DataFrame([{**row, "norm": "attn_fro_over_sqrt_n_mean", "subset": page.FAMILY_LABEL, "activations": 5},
                         {**row, "norm": "grad_attn_fro_mean", "subset": page.ALL_LABEL, "activations": 13}])
    n = page.correlation_numbers(corr)
    assert n["family_attention_rho"] == -0.5 and n["all_gradient_activations_ci_high"] == 0.1
    assert n["family_activations"] == 5 and n["family_attention_runs"] == 25
