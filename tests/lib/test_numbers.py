"""The book's one number formatter: each function, its missing value, negative zero, rounding at a
digit boundary, and the modules that show numbers delegating to it."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from polyattn import numbers as N

ROOT = Path(__file__).resolve().parents[2]
NAN = float("nan")
MISSING_VALUES = (None, NAN, np.float64("nan"), np.float32("nan"), pd.NA, pd.NaT)


def test_the_module_imports_nothing_heavy():
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('numbers_alone', {str(ROOT / 'lib/polyattn/numbers.py')!r})\n"
            "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
            "print(sorted(m for m in ('torch', 'numpy', 'pandas', 'polyattn') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("x", MISSING_VALUES, ids=repr)
def test_every_formatter_reads_a_missing_value_as_the_one_missing_text(x):
    assert N.MISSING == "n/a" and N.is_missing(x)
    for shown in (N.number(x), N.fixed(x, 2), N.signed(x), N.significant(x), N.interval(x, 0.1), N.interval(0.1, x),
                  N.estimate(x, 0.1, 0.2), N.plus_minus(x, 0.5), N.percent(x), N.p_value(x)):
        assert shown == N.MISSING
    assert N.p_relation(x) == "= n/a"
    assert N.number(x, missing="none") == "none" and N.estimate(x, 0, 1, missing="not comparable") == "not comparable"


def test_values_are_not_missing():
    for x in (0, 0.0, -0.0, float("inf"), "text", np.int64(3)):
        assert not N.is_missing(x)


def test_number_writes_a_true_minus_powers_of_ten_and_integers_as_they_are():
    assert N.number(-0.012345) == "−0.0123" and N.number(0.041, ".2g") == "0.041"
    assert N.number(2.4e-7) == "2.4 × 10⁻⁷" and N.number(-2.4e-7) == "−2.4 × 10⁻⁷"
    assert N.number(3) == "3" and N.number(np.int64(196), ".2f") == "196"
    assert N.number(True) == "1" and N.number(0.5, "+.1f") == "+0.5"
    assert N.number(float("inf"), "+.2f") == "+∞" and N.number(-float("inf")) == "−∞"


def test_a_value_that_rounds_to_zero_has_no_minus_sign():
    assert N.number(-0.0) == "0" and N.number(-0.004, ".2f") == "0.00" and N.number(-0.004, "+.2f") == "+0.00"
    assert N.number(-0.006, "+.2f") == "−0.01"          # rounds away from zero: keeps its sign
    assert N.number(-1e-30, ".1e") == "−1.0 × 10⁻³⁰"    # not zero in scientific notation
    assert N.fixed(-0.0004, 3) == "0.000" and N.signed(-0.0004, 3) == "+0.000" and N.signed(-0.0) == "+0.00"
    assert N.significant(-0.0) == "0" and N.significant(0.0, signed=True) == "±0"
    assert N.percent(-0.001) == "0%" and N.interval(-0.001, 0.2) == "[+0.00, +0.20]"


def test_fixed_and_signed_keep_their_decimals():
    assert N.fixed(1.005, 2) == "1.00" and N.fixed(-12.345, 1) == "−12.3" and N.fixed(2, 3) == "2.000"
    assert N.signed(0.31) == "+0.31" and N.signed(-1.2) == "−1.20" and N.signed(0.5, 3) == "+0.500"


def test_significant_counts_figures_and_caps_decimals():
    assert N.significant(0.012345) == "0.0123" and N.significant(123.456) == "123" and N.significant(12.345) == "12.3"
    assert N.significant(1.23456) == "1.23" and N.significant(1.23456, 5) == "1.23"   # at most two decimals from 1
    assert N.significant(0.00000012345) == "0.000000"                                # at most six decimals
    assert N.significant(-0.0123, signed=True) == "−0.0123" and N.significant(0.5, signed=True) == "+0.500"


def test_rounding_at_a_digit_boundary_counts_figures_from_the_rounded_value():
    assert N.significant(0.09996) == "0.100" and N.significant(0.9996) == "1.00" and N.significant(9.996) == "10.0"
    assert N.significant(99.96) == "100" and N.significant(0.0995, 2) == "0.10" and N.significant(0.0994, 2) == "0.099"
    assert N.significant(-9.996, signed=True) == "−10.0"
    assert N.number(0.09996) == "0.1" and N.number(9.996, ".3g") == "10" and N.fixed(9.996, 2) == "10.00"


def test_intervals_estimates_and_plus_minus():
    assert N.interval(-0.49, 0.01) == "[−0.49, +0.01]" and N.interval(0.25, 3.25, "+.1f") == "[+0.2, +3.2]"
    assert N.estimate(-0.24, -0.49, 0.01) == "−0.24 [−0.49, +0.01]"
    assert N.estimate(1.5, -0.25, 3.25, fmt="+.1f") == "+1.5 [−0.2, +3.2]"
    assert N.estimate(0.5, NAN, NAN) == "+0.50"                           # the estimate alone
    assert N.plus_minus(81.234, 0.456) == "81.23 ± 0.46" and N.plus_minus(-1.5, 0.25, 1) == "−1.5 ± 0.2"
    assert N.plus_minus(81.234, NAN) == "81.23" and N.plus_minus(81.234, None, 1) == "81.2"
    assert N.plus_minus(NAN, 0.3, missing=N.DIVERGED) == "diverged"


def test_percentages_and_p_values():
    assert N.percent(2 / 3) == "67%" and N.percent(0.05, 1) == "5.0%" and N.percent(-0.25) == "−25%"
    assert N.p_value(0.0004) == "< 0.001" and N.p_value(0.001) == "0.0010" and N.p_value(0.0412) == "0.041"
    assert N.p_relation(0.0004) == "< 0.001" and N.p_relation(0.04) == "= 0.040"


def test_scientific_square_root_and_numbers_inside_a_text():
    assert N.scientific(7.1e-28) == "7.1 × 10⁻²⁸" and N.scientific(-5) == "−5.0 × 10⁰"
    assert N.scientific(123456, 3) == "1.23 × 10⁵"
    assert N.square_root(196) == "14" and N.square_root(192) == "13.86"
    assert N.readable_numbers("alpha 0.05, -0.28 [-0.30, -0.26], 9.9e-06, seeds 3-5, x-axis") == \
        "alpha 0.05, −0.28 [−0.30, −0.26], 9.9 × 10⁻⁶, seeds 3-5, x-axis"


def test_the_tables_the_register_and_the_analysis_delegate():
    from polyattn import display
    from polyattn.analysis import _common, architectures, tables
    from polyattn.claims import report

    assert tables.number_cell is N.number and tables.interval_cell is N.estimate and tables.bracket_cell is N.interval
    assert tables.number_cell(None) == N.MISSING and tables.bracket_cell(0.1, NAN) == N.MISSING
    assert report.fixed is N.fixed and report.p_value is N.p_value and report.significant is N.significant
    assert display.readable_numbers is N.readable_numbers and display.typographic("alpha -0.5") == "α = −0.5"
    for gone in ((display, "scientific"), (display, "square_root"), (_common, "_pm"), (report, "number")):
        assert not hasattr(*gone), gone
    assert architectures.value_cell is tables.value_cell


def test_a_group_reads_diverged_only_when_its_runs_diverged():
    from polyattn.analysis.tables import value_cell, verdict_cell

    assert value_cell(81.234, 0.456, n_ok=3, n_diverged=0) == "81.23 ± 0.46"
    assert value_cell(NAN, NAN, n_ok=0, n_diverged=3) == "diverged"
    assert value_cell(NAN, NAN, n_ok=0, n_diverged=0) == N.MISSING      # no value, but nothing diverged
    assert verdict_cell("inconclusive", N.MISSING) == "inconclusive" and verdict_cell("inconclusive", "0.5") == \
        "inconclusive (MDE 0.5)"


def test_a_difference_cell_uses_the_missing_text_and_a_minus_sign():
    from support.records import table1_records

    from polyattn import analysis as A
    from polyattn.analysis.tables import _diff_cells

    final = A.final_accuracy(table1_records({"poly:p=3": -0.05}, seeds=(1,), noise=(0.0,)))   # one pair: no interval
    row = A.paired_difference(final, margin=1.0).set_index("activation").loc["poly:p=3"]
    cells = _diff_cells(row)
    assert cells["diff"] == "−5.00" and cells["ci"] == cells["p"] == N.MISSING
    assert _diff_cells(pd.Series({"n_pairs": 0})) == {"diff": "diverged"}
    table = A.format_summary(A.summary_table(final), A.paired_difference(final, margin=1.0)).set_index("activation")
    assert table.loc["poly:p=3", "95% CI"] == N.MISSING
    (poly,) = [r for r in A.summary_rows(A.summary_table(final), A.paired_difference(final, margin=1.0))
               if r["Activation"] == "x³/√N"]
    assert poly["Δ vs softmax (points) [95% CI]"] == "−5.00"        # the estimate alone, no "n/a" after it
