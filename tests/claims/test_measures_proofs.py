"""Chapter 02's measured claims (the theorems checked numerically) and the measurement records they read."""
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from polyattn import theory
from polyattn.measures import measurement_records as records
from polyattn.measures import proofs_matrix_powers, proofs_product_powers, proofs_query_gradient, proofs_softmax
from polyattn.measures import proofs_measurements as measurements

BOOK = theory.preset("book")
#: Each claim of the chapter and the module that measures it.
CLAIMS = {"thm41_1": proofs_softmax, "thm41_2": proofs_softmax, "thm42_43": proofs_product_powers,
          "critique7_matrix_powers": proofs_matrix_powers, "thm44_45": proofs_query_gradient}


def _root(tmp_path: Path) -> Path:
    """A results directory whose measurement records are planted beside it, in tmp_path/measurements."""
    return tmp_path / "results"


def _plant(tmp_path: Path, name: str, table: pd.DataFrame, numbers=None) -> Path:
    function, settings = measurements.settings(name)
    return records.write_planted(records.measurements_dir(_root(tmp_path)), name, function, settings, table, numbers)


# --- measurement records: valid -> loaded, missing or stale -> computed -----------------------------

def test_a_missing_record_is_computed_written_with_provenance_and_then_loaded(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return pd.DataFrame({"N": [2, 4], "value": [0.5, float("nan")]}), {"draws": np.int64(3)}

    first = records.measurement("probe", "polyattn.theory:probe", {"seed": 0, "ns": (2, 4)}, compute, tmp_path)
    assert first.computed and calls == [1]
    stored = json.loads((tmp_path / "probe.json").read_text())
    assert stored["settings"] == {"seed": 0, "ns": [2, 4]} and stored["function"] == "polyattn.theory:probe"
    assert {"git_commit", "git_dirty", "started", "wall_s", "hardware"} <= set(stored["provenance"])
    assert [p.name for p in tmp_path.iterdir()] == ["probe.json"]  # no temporary file left behind
    again = records.measurement("probe", "polyattn.theory:probe", {"seed": 0, "ns": (2, 4)}, compute, tmp_path)
    assert not again.computed and calls == [1]
    assert again.numbers == {"draws": 3} and math.isnan(again.table.value.iloc[1])


def test_a_record_with_other_settings_or_a_broken_file_is_computed_again(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return pd.DataFrame({"x": [len(calls)]}), {}

    records.measurement("probe", "f:g", {"seed": 0}, compute, tmp_path)
    changed = records.measurement("probe", "f:g", {"seed": 1}, compute, tmp_path)
    assert changed.computed and int(changed.table.x.iloc[0]) == 2
    (tmp_path / "probe.json").write_text("{ not json")
    assert records.measurement("probe", "f:g", {"seed": 1}, compute, tmp_path).computed and len(calls) == 3


def test_the_book_measurements_live_beside_the_results_and_other_presets_in_the_build_folder(tmp_path):
    assert records.measurements_dir(tmp_path / "results") == tmp_path / "measurements"
    assert records.measurements_dir().parts[-2:] == ("data", "measurements")
    _, _, smoke = measurements._where("smoke", None, None)
    _, _, other_seed = measurements._where("book", 7, None)
    assert "_build" in smoke.parts and "_build" in other_seed.parts


def test_an_unknown_measurement_is_refused_with_the_names_there_are():
    with pytest.raises(ValueError, match="thm41_softmax_survey"):
        measurements.settings("thm99")


# --- Theorem 4.1 (1) and (2) ----------------------------------------------------------------------

def _survey(gap_adv=1e-27, jac_adv=0.4999999, extra=()):
    """A softmax survey: random, peaked, one-hot and two-halves rows and the two searches, per N."""
    rows = []
    for n in (2, 8, 64):
        rows += [{"kind": "random", "N": n, "rep": 0, "fro_over_sqrt_n": 0.8, "fro_gap": 0.2, "jac_over_sqrt_n": 0.3},
                 {"kind": "peaked", "N": n, "rep": 0, "fro_over_sqrt_n": 1 - 1e-6, "fro_gap": 1e-6, "jac_over_sqrt_n": 0.01},
                 {"kind": "one-hot", "N": n, "rep": 0, "fro_over_sqrt_n": 1.0, "fro_gap": 0.0, "jac_over_sqrt_n": 0.0},
                 {"kind": "two halves", "N": n, "rep": 0, "fro_over_sqrt_n": 0.7, "fro_gap": 0.3, "jac_over_sqrt_n": 0.5},
                 {"kind": "adversarial (norm)", "N": n, "rep": 0, "fro_over_sqrt_n": 1.0, "fro_gap": gap_adv,
                  "jac_over_sqrt_n": float("nan")},
                 {"kind": "adversarial (Jacobian)", "N": n, "rep": 0, "fro_over_sqrt_n": 0.7, "fro_gap": 0.3,
                  "jac_over_sqrt_n": jac_adv}]
    return pd.DataFrame(rows + list(extra))


def test_no_matrix_above_sqrt_n_holds_and_one_above_fails(tmp_path):
    _plant(tmp_path, "thm41_softmax_survey", _survey())
    f = proofs_softmax.thm41_1(_root(tmp_path))
    assert f.form == "holds" and f.numbers["matrices_above"] == 0
    assert "to machine precision" in f.summary and "none of the 18 matrices" in f.summary
    _plant(tmp_path, "thm41_softmax_survey", _survey(gap_adv=1e-3, extra=[
        {"kind": "random", "N": 8, "rep": 1, "fro_over_sqrt_n": 1 + 1e-9, "fro_gap": -1e-9, "jac_over_sqrt_n": 0.3}]))
    f = proofs_softmax.thm41_1(_root(tmp_path))
    assert f.form == "fails" and f.numbers["matrices_above"] == 1
    assert "1 of the 19 matrices evaluated is above it" in f.summary and "within a gap of 0.001" in f.summary


@pytest.mark.parametrize("jac_adv,form,words", [
    (0.4999999, "holds with a corrected constant", "comes within $10^{-4}\\sqrt{N}$ of $\\sqrt{N}/2$ and never more"),
    (0.6, "holds", "exceed $\\sqrt{N}/2$"),
    (2.5, "fails", "exceed $2\\sqrt{N}$"),
])
def test_the_jacobian_constant_is_judged_against_the_sharp_and_the_stated_one(tmp_path, jac_adv, form, words):
    _plant(tmp_path, "thm41_softmax_survey", _survey(jac_adv=jac_adv))
    f = proofs_softmax.thm41_2(_root(tmp_path))
    assert f.form == form and words in f.summary
    assert f.numbers["eq42_one_hot_lhs"] == 1.0 and f.numbers["eq42_one_hot_rhs"] == 2.0


# --- Theorem 4.2 and Corollary 4.3 --------------------------------------------------------------

def _thm42_table(mean_of):
    """Theorem 4.2's grid with means ``mean_of(n, D, p, exact_rms, bound)`` (unscaled) and tight intervals."""
    rows = []
    for n, D in measurements.thm42_sizes(BOOK):
        for p in BOOK.ps:
            exact, bound = float(theory.thm42_exact_rms(n, D, p)), float(theory.thm42_bound(n, D, p))
            for scaled in (False, True):
                k = 1 / math.sqrt(n) if scaled else 1.0
                mean = mean_of(n, D, p, exact, bound) * k
                se = 1e-4 * mean
                b, e = bound * k, exact * k
                rows.append({"N": n, "D": D, "p": p, "scaled": scaled, "mean": mean, "se": se,
                             "ci_lo": mean - 1.96 * se, "ci_hi": mean + 1.96 * se, "reps": 400, "bound": b,
                             "exact_rms": e, "ratio_to_bound": mean / b, "ratio_ci_lo": (mean - 1.96 * se) / b,
                             "ratio_ci_hi": (mean + 1.96 * se) / b})
    return pd.DataFrame(rows)


def _corr_table(k_equals_q=12.0):
    rows = [{"setup": "independent A, B", "rho": float("nan"), "p": p, "ratio": 1.0} for p in BOOK.ps]
    rows += [{"setup": "shared X", "rho": rho, "p": p, "ratio": k_equals_q if (rho == 1.0 and p == 3) else 1.0}
             for rho in BOOK.corr_rhos for p in BOOK.ps]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("mean_of,form", [
    # at the exact-moment bound (Jensen's gap closed): the stated constant is exceeded for p >= 2
    (lambda n, D, p, exact, bound: 0.999 * exact, "holds with a corrected constant"),
    # below the stated bound everywhere
    (lambda n, D, p, exact, bound: 0.999 * bound, "holds"),
    # above even the exact moment's bound
    (lambda n, D, p, exact, bound: 1.05 * exact, "fails"),
    # below both bounds, but growing like N^0.7 after the 1/sqrt(N) scale
    (lambda n, D, p, exact, bound: 0.5 * bound * (n / 256) ** 0.2, "fails"),
])
def test_theorem_42_is_judged_on_its_bound_the_exact_moment_and_the_growth(tmp_path, mean_of, form):
    _plant(tmp_path, "thm42_monte_carlo", _thm42_table(mean_of))
    _plant(tmp_path, "thm42_correlated_qk", _corr_table())
    f = proofs_product_powers.thm42_43(_root(tmp_path))
    assert f.form == form


def test_theorem_42_states_its_excess_and_the_d_factor_with_the_scores_scaled(tmp_path):
    _plant(tmp_path, "thm42_monte_carlo", _thm42_table(lambda n, D, p, exact, bound: 0.999 * exact))
    _plant(tmp_path, "thm42_correlated_qk", _corr_table(k_equals_q=7.5))
    f = proofs_product_powers.thm42_43(_root(tmp_path))
    n = f.numbers
    assert n["cells_above_exact"] == 0 and n["cells_above_stated"] > 0
    assert (n["worst_p"], n["worst_d"]) == (3, 1) and n["worst_ratio_to_stated"] == pytest.approx(0.999 * math.sqrt(15))
    assert n["exponent_n_scaled"] == pytest.approx(0.5, abs=1e-6)
    # the D factor with the 1/sqrt(d) of the scores: sqrt(15) = 3.87 against sqrt(196) = 14
    assert n["vit_b_d_factor_scaled"] == pytest.approx(math.sqrt(15))
    assert n["vit_b_d_factor_scaled_over_n_factor"] == pytest.approx(math.sqrt(15) / 14)
    assert n["vit_b_d_factor_unscaled_over_n_factor"] == pytest.approx(math.sqrt(15 * 768 ** 3) / 14)
    assert "$\\sqrt{(2p-1)!!} = 3.87$ against $\\sqrt{N} = 14$" in f.summary and "1/\\sqrt{d}" in f.summary
    assert "inflates the norm 7.5" in f.summary and "5.89" not in f.summary


# --- critique 7 ---------------------------------------------------------------------------------

def _readings_table(matrix_exponent, independent_exponent=lambda p: p / 2, ns=(16, 64, 256, 1024)):
    rows = []
    for setup, exponent in (("shared X", matrix_exponent), ("independent A, B", independent_exponent)):
        for p in (1, 2, 3):
            for n in ns:
                for reading, k in (("elementwise", 0.5), ("matrix", 0.5 if p == 1 else exponent(p))):
                    mean = float(n) ** k
                    rows.append({"setup": setup, "reading": reading, "p": p, "N": n, "D": 64, "d": 16, "mean": mean,
                                 "se": 1e-3 * mean, "ci_lo": mean * 0.998, "ci_hi": mean * 1.002, "reps": 64})
    return pd.DataFrame(rows)


CHECK = {"activation_n": 64, "activation_vs_elementwise": 1e-8, "matrix_over_activation": 25.0}


@pytest.mark.parametrize("matrix_exponent,check,form", [
    (lambda p: p - 0.5, CHECK, "not supported"),
    (lambda p: p - 0.5, {**CHECK, "activation_vs_elementwise": 0.01}, "mixed"),
    (lambda p: 0.6, CHECK, "inconclusive at this scale"),
])
def test_critique_7_is_judged_on_the_readings_growth_and_the_activation(tmp_path, matrix_exponent, check, form):
    _plant(tmp_path, "matrix_power_readings", _readings_table(matrix_exponent), check)
    f = proofs_matrix_powers.critique7_matrix_powers(_root(tmp_path))
    assert f.form == form
    assert f.numbers["matrix_exponent_p3"] == pytest.approx(matrix_exponent(3), abs=1e-6)
    assert f.numbers["matrix_over_elementwise_at_n_hi"] == pytest.approx(1024 ** (matrix_exponent(3) - 0.5))


# --- Theorem 4.4 and Corollary 4.5 --------------------------------------------------------------

def _thm44_table(exponent=1.0):
    rows = []
    for D, d in BOOK.thm44_dims:
        for n in BOOK.thm44_ns:
            for p in BOOK.ps:
                bound = float(theory.thm44_leading(n, D, d, p, 1.0, 1 / math.sqrt(D)))
                for scaled in (False, True):
                    k = 1 / math.sqrt(n) if scaled else 1.0
                    mean = (1.0 if p == 1 else 1.2) * bound * (n / 8) ** (exponent - 1) * k
                    rows.append({"N": n, "D": D, "d": d, "p": p, "scaled": scaled, "mean": mean, "se": 1e-3 * mean,
                                 "ci_lo": mean * 0.998, "ci_hi": mean * 1.002, "reps": 100, "bound": bound * k,
                                 "ratio_to_bound": mean / (bound * k)})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("exponent,k_equals_q,form", [
    (1.0, 12.0, "holds only under its assumptions"),
    (1.0, 1.5, "holds"),
    (1.2, 12.0, "fails"),
])
def test_theorem_44_is_judged_on_its_growth_and_on_keys_equal_to_queries(tmp_path, exponent, k_equals_q, form):
    _plant(tmp_path, "thm44_monte_carlo", _thm44_table(exponent))
    _plant(tmp_path, "thm42_correlated_qk", _corr_table(k_equals_q))
    f = proofs_query_gradient.thm44_45(_root(tmp_path))
    assert f.form == form
    assert f.numbers["pmax_max_ratio"] == pytest.approx(1.2 * (256 / 8) ** (exponent - 1))
    assert f.numbers["exponent_p1_scaled"] == pytest.approx(exponent - 0.5, abs=1e-6)


# --- the committed measurements ---------------------------------------------------------------

@pytest.mark.committed
@pytest.mark.parametrize("claim", CLAIMS)
def test_the_committed_measurements_give_the_committed_verdict(repo_root: Path, claim):
    for name in measurements.MEASUREMENTS:
        function, settings = measurements.settings(name)
        assert records.load(repo_root / "data" / "measurements" / f"{name}.json", name, function, settings) is not None, \
            f"data/measurements/{name}.json is missing or stale"
    committed = json.loads((repo_root / "data" / "verdicts.json").read_text())[claim]
    assert getattr(CLAIMS[claim], claim)().form == committed["form"]
