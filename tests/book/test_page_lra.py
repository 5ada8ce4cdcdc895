"""Chapter 05's shared page code: the names a reader reads, and what every section shows where the
preset runs nothing."""
import matplotlib

matplotlib.use("Agg")

from support.lra_runs import TASKS  # noqa: E402

from polyattn.studies.lra import accuracy as lra_accuracy
from polyattn.studies.lra import curves as lra_curves
from polyattn.studies.lra import lengths as lra_lengths
from polyattn.studies.lra import page


def test_names_a_reader_reads():
    assert page.variant_name("x^3/sqrt(N), N padded") == "x³/√N, N padded"
    assert page.variant_name("x^3/14") == "x³/14" and page.variant_name("softmax") == "softmax"
    assert page.names(["listops", "text", "retrieval"]) == "ListOps, Text and Retrieval"
    assert page.names(["image"]) == "Image" and page.names([]) == "none"
    assert page.plural(1, "seed") == "1 seed" and page.plural(3, "seed") == "3 seeds"


def test_a_table_where_the_preset_runs_nothing_says_so():
    runs = page.Runs("paper", False, "not run under preset paper", [], list(TASKS), [])
    assert lra_accuracy.accuracy_table(runs).data == "not run under preset paper"
    assert page.differences(runs).empty and lra_curves.curve_figure(runs) == (None, "not run under preset paper")
    assert lra_lengths.length_tables(runs) == [] and lra_lengths.length_figure(runs) is None
