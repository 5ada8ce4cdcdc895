"""Chapter 01's page module: planted frames come back out as the page's tables, numbers and figures."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from polyattn.studies.activations import page


def _table(styler) -> pd.DataFrame:
    return styler.data


def _norms(exponents: dict, ns=(4, 16, 64, 256), factor: float = 2.0) -> pd.DataFrame:
    """||A||_F = factor * N**exponent for every activation of the page (softmax level at 1), two trials."""
    rows = []
    for spec in page.SPECS:
        e = exponents.get(spec, 0.0)
        for n in ns:
            for t in range(2):
                fro = (1.0 if spec == "softmax" else factor) * n ** e
                rows.append({"activation": spec, "N": n, "trial": t, "fro_norm": fro, "fro_over_sqrt_n": fro / np.sqrt(n)})
    return pd.DataFrame(rows)


def test_the_seed_is_the_first_given_or_zero():
    assert page.seed_of(None) == 0 and page.seed_of([]) == 0 and page.seed_of([3, 4]) == 3


def test_property_counts_and_the_table_name_each_activation_as_a_reader_does():
    assert page.property_counts(("softmax", "poly:p=3", "relu_n")) == {"activations": 3, "nonnegative": 2,
                                                                        "normalised": 1}
    text = page.properties_markdown(("softmax", "poly:p=3,c=1/14"))
    assert "| x³/14 |" in text and "poly:p=3" not in text
    assert "$\\frac{\\exp(s)}{\\sum_j \\exp(s_j)}$" in text
    softmax_row = next(line for line in text.splitlines() if line.startswith("| softmax |"))
    assert softmax_row.endswith("| yes | yes | no |")


def test_the_measured_table_and_the_cubes_numbers():
    frame = pd.DataFrame([
        {"activation": "softmax", "N": 8, "frac_negative": 0.0, "row_sum_mean": 1.0, "row_sum_std": 1e-8,
         "fro_over_sqrt_n": 0.4},
        {"activation": "poly:p=3", "N": 8, "frac_negative": 0.25, "row_sum_mean": 0.1, "row_sum_std": 2.0,
         "fro_over_sqrt_n": 3.0},
        {"activation": "poly:p=3", "N": 2048, "frac_negative": 0.5123, "row_sum_mean": 0.1, "row_sum_std": 3.456,
         "fro_over_sqrt_n": 3.9},
    ])
    table = _table(page.measured_table(frame, "smoke"))
    assert list(table["activation"]) == ["softmax", "x³/√N", "x³/√N"]
    assert table["row sum (mean ± sd)"].iloc[0] == "1, to machine precision"
    assert table["row sum (mean ± sd)"].iloc[1] == "0.1 ± 2"
    assert page.cubic_numbers(frame) == {"table_n": "2,048", "frac_negative": "0.512", "row_sum_std": "3.46"}


def test_growth_numbers_recover_planted_exponents():
    from polyattn import survey

    norms = _norms({"poly:p=3": 0.5, "poly:p=3,c=1/14": 1.0})
    growth = survey.growth_exponents(norms)
    numbers = page.growth_numbers(growth, norms)
    assert numbers["cube_exponent"] == "0.50" and numbers["fixed_exponent"] == "1.00"
    assert numbers["softmax_exponent"] == "0.00" and numbers["softmax_max_ratio"] == "0.500"
    assert numbers["cube_ratio_largest_n"] == "2.00" and numbers["largest_n"] == "256"
    assert numbers["sqrt_moment"] == "3.87"
    table = _table(page.growth_table(growth, "smoke"))
    assert "x³/14" in set(table["activation"]) and not any(":" in a for a in table["activation"])


def _lines_and_legends(fig):
    for ax in fig.axes:
        legend = ax.get_legend()
        yield ax, len(ax.get_lines()), [t.get_text() for t in legend.get_texts()] if legend else [], legend


def test_the_norm_figure_names_activations_and_keeps_panels_small():
    fig = page.norm_figure(_norms({"poly:p=3": 0.5}), "smoke")
    assert len(fig.axes) == len(page.NORM_GROUPS) == 4
    for ax, lines, labels, legend in _lines_and_legends(fig):
        assert lines <= 6 and labels, ax.get_title()
        assert not any(":" in lbl for lbl in labels) and "√N (Thm 4.1)" in labels
        assert all(t.get_fontsize() >= page.FONT for t in legend.get_texts())
    assert "x³/√N" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    matplotlib.pyplot.close(fig)


def test_the_weight_figure_has_one_legend_per_group_in_human_names():
    fig = page.weight_figure("smoke")
    legends = [labels for _, _, labels, _ in _lines_and_legends(fig) if labels]
    assert len(legends) == 3
    assert all(lbl and ":" not in lbl for labels in legends for lbl in labels)
    assert max(lines for _, lines, _, _ in _lines_and_legends(fig)) <= 6
    matplotlib.pyplot.close(fig)


@pytest.mark.parametrize("preset", ["smoke"])
def test_the_findings_table_reads_the_same_numbers_as_the_sections(preset):
    from polyattn import survey

    table = _table(page.findings_table(preset))
    norms = page.norms(preset)
    numbers = page.growth_numbers(survey.growth_exponents(norms), norms)
    assert len(table) == 5
    assert table["measured"].iloc[1] == f"exponent {numbers['cube_exponent']}"
    assert page.cubic_numbers(page.measured(preset))["frac_negative"] in table["measured"].iloc[4]
