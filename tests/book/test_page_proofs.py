"""Chapter 02's page module: planted surveys and findings come back out as the page's tables,
numbers and figures."""
import json
import math
import re
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from polyattn import theory  # noqa: E402
from polyattn.pages import proofs as page  # noqa: E402


def _rows(styler) -> list[dict]:
    return styler.data.to_dict("records")


def _figure_texts(fig) -> list:
    """Every text artist of a figure: titles, labels, tick labels, legend entries, annotations."""
    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


def _check_figure(fig, max_entries: int = 6):
    """No raw activation spec in any text, at most ``max_entries`` legend entries per legend, and
    legend and stamp text of at least 9 points."""
    for t in _figure_texts(fig):
        assert "poly:" not in t.get_text() and "softmax:" not in t.get_text(), t.get_text()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    for legend in legends:
        assert len(legend.get_texts()) <= max_entries
        assert all(t.get_fontsize() >= 9 for t in legend.get_texts())
    plt.close(fig)


@pytest.fixture
def findings(monkeypatch):
    """Plant the findings the page reads: ``findings({"thm41_2": {...}})``; forms default to "holds"."""
    def plant(numbers: dict, forms: dict | None = None):
        forms = forms or {}
        monkeypatch.setattr(page, "_finding", lambda cid: SimpleNamespace(
            form=forms.get(cid, "holds"), numbers=numbers.get(cid, {})))
    return plant


# --- setup and glued values -------------------------------------------------------------------


def test_the_seed_is_the_presets_default_or_the_first_given():
    assert page.seed_of(None, "book") == theory.preset("book").seed
    assert page.seed_of([3, 4], "smoke") == 3 and page.seed_of(5, "book") == 5
    assert page.setting_values("smoke", 2) == {"preset": "smoke", "seed": "2"}


def test_numbers_are_formatted_by_their_spec():
    out = page.formatted({"n": 1234, "tiny": 1.0036e-5, "r": 0.4999862, "word": "x³/√N"},
                         {"n": "d", "tiny": "sci", "r": ".6f", "word": ""}, prefix="a_")
    assert out == {"a_n": "1,234", "a_tiny": "1.0 × 10⁻⁵", "a_r": "0.499986", "a_word": "x³/√N"}
    with pytest.raises(KeyError, match="no number 'absent'"):
        page.formatted({"n": 1}, {"absent": "d"})


def test_each_value_is_glued_under_the_chapters_prefix(monkeypatch):
    import polyattn.book.deliver as deliver

    glued = {}
    monkeypatch.setattr(deliver, "glue", lambda name, value, display=True: glued.__setitem__(name, value))
    page.glue_all({"t41a_x": "7", "preset": "book"})
    assert glued == {"ch02_t41a_x": "7", "ch02_preset": "book"}


# --- Theorem 4.1 ------------------------------------------------------------------------------


def test_a_gap_below_float64s_reach_reads_zero_and_a_missing_one_a_dash():
    assert page.gap_cell(1e-27) == "0"
    assert page.gap_cell(0.0821) == "0.0821" and page.gap_cell(float("nan")) == "–"


def test_the_gap_table_keeps_the_smallest_gap_per_n_and_kind():
    survey = pd.DataFrame([
        {"kind": "random", "N": 2, "fro_gap": 0.3}, {"kind": "random", "N": 2, "fro_gap": 0.1},
        {"kind": "peaked", "N": 2, "fro_gap": 2e-6}, {"kind": "one-hot", "N": 2, "fro_gap": 0.0},
        {"kind": "adversarial (norm)", "N": 2, "fro_gap": 7e-28},
        {"kind": "random", "N": 4, "fro_gap": 0.5}, {"kind": "peaked", "N": 4, "fro_gap": 0.01},
        {"kind": "one-hot", "N": 4, "fro_gap": 0.0}, {"kind": "random", "N": 8, "fro_gap": 0.6}])
    rows = _rows(page.gap_table(survey, "smoke", every=1))
    assert [r["N"] for r in rows] == [2, 4, 8]
    assert rows[0]["random logits"] == "0.1" and rows[0]["peaked logits"] == "2 × 10⁻⁶"
    assert rows[0]["adversarial ascent"] == "0" and rows[1]["adversarial ascent"] == "–"
    assert [r["N"] for r in _rows(page.gap_table(survey, "smoke"))] == [2, 8]


def test_the_jacobian_numbers_add_the_worst_gap_and_the_plain_ascent(findings):
    findings({"thm41_2": {"ascent_restarts": 8, "adversarial_max_ratio": 0.4999999, "adversarial_min_ratio": 0.49,
                          "adversarial_gap_to_half": 1e-7, "random_max_ratio": 0.47, "paper_over_sharp": 4.0,
                          "matrices_above_sharp": 0, "eq42_one_hot_lhs": 1.0, "eq42_one_hot_rhs": 2.0}})
    plain = {"n": 64, "ratio64": 0.4721, "frac_rows_at_max": 0.0, "frac_rows_near_k_uniform": {3: 0.953}}
    out = page.jacobian_numbers(plain, 2e-5)
    assert out["t41b_worst_gap_to_half"] == "0.01" and out["t41b_plain_k3"] == "95%"
    assert out["t41b_jacrev_difference"] == "2.0 × 10⁻⁵" and out["t41b_paper_over_sharp"] == "4"


def test_the_jacobian_figure_names_its_curves_for_people():
    rows = [{"kind": k, "N": n, "jac_over_sqrt_n": v} for n in (2, 4, 8)
            for k, v in (("random", 0.3), ("peaked", 0.2), ("adversarial (Jacobian)", 0.5), ("two halves", 0.5))]
    plain = {"n": 8, "row_values": np.full(8, 2 / 9)}
    fig = page.jacobian_figure(pd.DataFrame(rows), plain, "smoke", 0)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "sharp bound 1/2" in labels and "paper's bound 2" in labels and "ascent with restarts" in labels
    _check_figure(fig)


# --- Theorem 4.2 ------------------------------------------------------------------------------


def test_the_moment_ratios_and_the_smallest_d_within_one_percent():
    rows = {r["p"]: r for r in _rows(page.moment_ratio_table((1, 3), (1, 64)))}
    assert rows[3]["D = 1"] == "15.000" and rows[1]["D = 64"] == "1.000"
    assert rows[1]["smallest D within 1%"] == "1" and rows[3]["smallest D within 1%"] == "602"
    numbers = page.moment_numbers()
    assert numbers["t42_ratio_p3_d1"] == "15.0" and numbers["t42_mind_p3"] == "602"
    assert page.exact_over_leading(3, 1) == pytest.approx(math.sqrt(15))


def _unbroken(styler) -> set:
    """The elements (th, td) a table's style keeps on one line; asserts the book's padding is kept."""
    rules = re.findall(r"#\w+\s+(\w+) \{([^}]*)\}", styler.to_html().split("</style>")[0])
    assert any(element == "td" and "padding: 0.25em 0.6em" in props for element, props in rules)
    return {element for element, props in rules if "white-space: nowrap" in props}


def test_numbers_in_table_cells_stay_on_one_line_and_the_book_style_is_kept():
    assert _unbroken(page.moment_ratio_table((1, 3), (1, 64))) == {"td"}
    factors = page.factors_table()
    _unbroken(factors)
    single = {"N, D, d", "√N", "D factor, ÷ √d"}  # the columns of one number each; "a | b" cells may break
    html = factors.to_html()
    for column in range(len(factors.data.columns)):
        nowrap = re.search(rf"_row0_col{column}[^{{]*\{{[^}}]*white-space: nowrap", html) is not None
        assert nowrap == (factors.data.columns[column] in single), factors.data.columns[column]


def _thm42_planted(preset: str) -> pd.DataFrame:
    """E||C^p||_F = N D^(p/2) (sqrt(N) D^(p/2) scaled), 1.1 times the bound, on the preset's grid."""
    P = theory.preset(preset)
    rows = []
    for n, D in page.theorems.thm42_sizes(P):
        for p in P.ps:
            for scaled in (False, True):
                mean = (math.sqrt(n) if scaled else n) * D ** (p / 2)
                rows.append({"N": n, "D": D, "p": p, "scaled": scaled, "mean": mean, "se": mean * 1e-3,
                             "ratio_to_bound": 1.1, "ratio_ci_lo": 1.05, "ratio_ci_hi": 1.15})
    return pd.DataFrame(rows)


def test_the_exponent_table_recovers_planted_power_laws():
    rows = {r["p"]: r for r in _rows(page.exponent_table(_thm42_planted("smoke"), "smoke"))}
    assert rows[3]["in N, unscaled (theorem: 1)"].startswith("1.000 ± 0.0")
    assert rows[3]["in N, scaled by 1/√N (theorem: 1/2)"].startswith("0.500 ± 0.0")
    assert rows[2]["in D (leading order: p/2)"].startswith("1.000 ± 0.0")


def test_the_bound_figure_draws_the_small_d_cells_and_the_stated_bound():
    fig = page.bound_figure(_thm42_planted("smoke"), "smoke")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "the stated bound" in labels and "p = 1: √(exact / leading)" not in labels
    _check_figure(fig)


def _score_frames():
    by_sigma = pd.DataFrame([{"activation": a, "sigma": s, "mean": v * s} for s in (0.1, 1.0)
                             for a, v in (("softmax", 0.12), ("poly:p=1", 1.0), ("poly:p=2", 1.7),
                                          ("poly:p=3", 4.0))])
    by_n = pd.DataFrame([{"activation": a, "N": n, "mean": n ** e, "se": 1e-3 * n ** e} for n in (8, 16, 32)
                         for a, e in (("softmax", 0.05), ("poly:p=1", 0.5), ("poly:p=2", 0.5), ("poly:p=3", 0.5),
                                      ("poly:p=3,c=1", 1.0))])
    return by_sigma, by_n


def test_the_score_scale_numbers_read_sigma_one_and_the_growth_in_n():
    by_sigma, by_n = _score_frames()
    out = page.score_scale_numbers(by_sigma, by_n, "smoke")
    assert out["scale_sigma"] == "1" and out["scale_softmax"] == "0.120" and out["scale_poly3"] == "4.00"
    assert out["growth_poly3"] == "0.500" and out["growth_unscaled"] == "1.000"
    assert out["scale_cross_p3"] == f"{15 ** (-1 / 6):.3f}"


def test_the_score_scale_figure_names_each_activation():
    by_sigma, _ = _score_frames()
    fig = page.score_scale_figure(by_sigma, "smoke")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "x³/√N" in labels and "softmax's bound" in labels
    _check_figure(fig)


# --- critique 7 -------------------------------------------------------------------------------


def _readings_planted() -> pd.DataFrame:
    """Elementwise norms grow like N^(1/2); matrix ones like N^(p - 1/2) with shared X, N^(p/2) without."""
    rows = []
    for setup, shared in (("shared X", True), ("independent A, B", False)):
        for n in (16, 32, 64, 128):
            for p in (1, 2, 3):
                for reading in ("elementwise", "matrix"):
                    e = 0.5 if reading == "elementwise" or p == 1 else (p - 0.5 if shared else p / 2)
                    rows.append({"setup": setup, "reading": reading, "p": p, "N": n, "D": 64, "d": 16,
                                 "mean": n ** e, "se": 1e-3 * n ** e, "ci_lo": 0, "ci_hi": 0, "reps": 8})
    return pd.DataFrame(rows)


def test_the_readings_table_gives_each_readings_exponent_and_their_ratio():
    survey = _readings_planted()
    rows = {r["p"]: r for r in _rows(page.readings_table(survey, page.theorems.matrix_power_exponents(survey)))}
    assert rows[3]["elementwise"] == "0.50 ± 0.00" and rows[3]["matrix"] == "2.50 ± 0.00"
    assert rows[3]["matrix, independent A, B"] == "1.50 ± 0.00"
    assert rows[3]["matrix, last slope (prediction)"] == "2.50 (2.5)"
    assert rows[3]["matrix ÷ elementwise"] == f"{128 ** 2:,}" and rows[1]["matrix ÷ elementwise"] == "1"


def test_the_readings_figure_draws_p_one_once():
    fig = page.readings_figure(_readings_planted(), "smoke", 0)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels.count("p = 1, both readings") == 1 and len(labels) == 5
    _check_figure(fig)


# --- Theorem 4.4 ------------------------------------------------------------------------------


def test_the_closed_form_gradient_norm_matches_autograd():
    assert page.qgrad_difference(0) < 1e-10


def _thm44_planted(dims=((64, 16), (64, 64))) -> pd.DataFrame:
    rows = []
    for D, d in dims:
        for n in (8, 16, 32):
            for p in (1, 2, 3):
                for scaled in (False, True):
                    mean = (math.sqrt(n) if scaled else n) * p
                    rows.append({"N": n, "D": D, "d": d, "p": p, "scaled": scaled, "mean": mean, "se": 1e-3 * mean,
                                 "ratio_to_bound": 1.0 + 0.1 * (p - 1)})
    return pd.DataFrame(rows)


def test_the_gradient_tables_name_each_cell_by_its_sizes():
    mc = _thm44_planted()
    rows = {r["cell"]: r for r in _rows(page.thm44_ratio_table(mc, "smoke", 0))}
    assert rows["d = 16, p = 3"]["N = 8"] == "1.200" and rows["d = 64, p = 1"]["N = 32"] == "1.000"
    both = pd.concat([mc, _thm44_planted(((32, 16),))])
    assert "D = 32, d = 16, p = 1" in {r["cell"] for r in _rows(page.thm44_ratio_table(both, "smoke", 0))}


# --- where the assumptions fail ---------------------------------------------------------------


def test_an_interval_is_shown_by_its_half_width_to_the_estimates_decimals():
    assert page.pm_cell(0.505, 0.496, 0.514) == "0.505 ± 0.009"
    assert page.pm_cell(12.01, 11.7, 12.3, "#.3g") == "12.0 ± 0.3" and page.pm_cell(-1.5, -2.0, -1.0, ".1f") == "−1.5 ± 0.5"


def test_the_quoted_correlation_is_one_half_when_the_grid_has_it():
    assert page.middle_rho((0.0, 0.25, 0.5, 1.0)) == 0.5
    assert page.middle_rho((0.0, 0.25, 1.0)) == 0.25 and page.middle_rho((0.0, 1.0)) == 1.0


def _corr_planted(rhos) -> pd.DataFrame:
    rows = [{"setup": "independent A, B", "rho": float("nan"), "p": p, "ratio": 1.0, "ratio_ci_lo": 0.99,
             "ratio_ci_hi": 1.01} for p in (1, 2, 3)]
    rows += [{"setup": "shared X", "rho": r, "p": p, "ratio": 1 + r * p ** 2, "ratio_ci_lo": 1 + r * p ** 2 - 0.1,
              "ratio_ci_hi": 1 + r * p ** 2 + 0.1} for r in rhos for p in (1, 2, 3)]
    return pd.DataFrame(rows)


def test_the_correlation_table_and_numbers_read_rho_zero_the_middle_and_k_equal_q():
    corr = _corr_planted(theory.preset("book").corr_rhos)
    rows = {r["p"]: r for r in _rows(page.correlated_table(corr, "book", 0))}
    assert rows[3]["K = Q (ρ = 1)"] == "10.0 ± 0.1" and rows[3]["ρ = 0.5"] == "5.50 ± 0.10"
    assert rows[1]["independent A, B"] == "1.00 ± 0.01"
    out = page.correlated_numbers(corr, "book")
    assert out["corr_mid_p3"] == "5.50" and out["corr_k_eq_q_p3"] == "10.0" and out["corr_rho0_p3"] == "1.000"
    assert out["corr_model_p3"] == f"{theory.qk_equal_prediction(196, 64, 3):.1f}"
    assert out["corr_sizes"] == "(196, 768, 64)"
    smoke = _rows(page.correlated_table(_corr_planted((0.0, 1.0)), "smoke", 0))[0]
    assert not any(k.startswith("ρ = ") for k in smoke)


def test_the_factors_at_vit_sizes_and_the_readings_of_d():
    rows = _rows(page.factors_table())
    vit_b = next(r for r in rows if r["model"] == "ViT-B/16")
    assert len(rows) == len(page.FACTOR_MODELS) and vit_b["√N"] == "14" and vit_b["D factor, ÷ √d"] == "3.87"
    assert vit_b["N, D, d"] == "196, 768, 64" and vit_b["√N reaches it at N ="] == "6.8 × 10⁹ | 3.9 × 10⁶"
    assert len(_rows(page.factors_table(models=tuple(theory.MODEL_SIZES)))) == len(theory.MODEL_SIZES)
    assert page.head_dim_numbers() == {"head_factor_p1": f"{math.sqrt(12):.2f}", "head_factor_p3": f"{12 ** 1.5:.1f}"}


def test_the_factor_numbers_come_from_the_finding_on_theorem_4_2(findings):
    findings({"thm42_43": page.theorems.vit_b_factors(3)})
    out = page.factor_numbers()
    assert out["vit_b_n_factor"] == "14" and out["vit_b_crossover_n_scaled"] == "15"
    assert out["vit_b_crossover_n_unscaled"] == "6.8e+09" and out["vit_b_d_factor_scaled"] == "3.87"


def _init_planted() -> pd.DataFrame:
    rows = []
    for a, fro in (("softmax", 0.14), ("poly:p=3", 7.5e-5), ("poly:p=3,c=1", 5.1e-4)):
        for head in range(2):
            rows.append({"activation": a, "N": 50, "head": head, "fro_over_sqrt_n": fro, "jac_over_sqrt_n": 0.1,
                         "score_std": 0.025, "gaussian_over_sqrt_n": float("nan") if a == "softmax" else fro / 1.1})
    return pd.DataFrame(rows)


def test_the_model_norms_table_adds_trained_columns_only_when_records_are_stored():
    init = _init_planted()
    alone = _rows(page.model_norms_table(init, pd.DataFrame(), "smoke"))
    assert [r["activation"] for r in alone] == ["softmax", "x³/√N", "x³ (unscaled)"]
    assert not any("trained" in k for k in alone[0]) and alone[0]["Gaussian prediction"] == "n/a"
    trained = pd.DataFrame([{"record": r, "activation": "softmax", "metric": m, "value": v}
                            for r, m, v in (("a.json", "attn_fro_over_sqrt_n", 0.25), ("b.json", "attn_fro_over_sqrt_n", 0.35),
                                            ("a.json", "act_jac_fro_over_sqrt_n", 0.2))])
    rows = {r["activation"]: r for r in _rows(page.model_norms_table(init, trained, "smoke"))}
    assert rows["softmax"]["trained, mean (largest)"] == "0.3 (0.35)"
    assert rows["x³/√N"]["trained, mean (largest)"] == "no stored run"
    numbers = page.model_norms_numbers(init, trained)
    assert numbers["init_poly3_over_prediction"] == "1.10" and numbers["trained_records"] == "2"
    assert numbers["init_poly3"] == "7.5 × 10⁻⁵" and page.model_norms_numbers(init, pd.DataFrame())["trained_records"] == "0"


def test_trained_norms_are_read_from_the_records_of_a_folder(tmp_path):
    record = {"schema": 1, "status": "ok", "seed": 0, "config": {"activation": "softmax"},
              "probes": [{"step": s, "layer": 0, "head": 0, "metric": "attn_fro_over_sqrt_n", "value": v}
                         for s, v in ((0, 0.1), (10, 0.3))]}
    (tmp_path / "r.json").write_text(json.dumps(record))
    (tmp_path / "broken.json").write_text("{")
    frame = page.trained_norms("smoke", results=str(tmp_path))
    assert list(frame.value) == [0.3] and set(frame.activation) == {"softmax"}
    assert page.trained_norms("smoke", results=str(tmp_path / "absent")).empty


# --- what the chapter found -------------------------------------------------------------------


def test_the_findings_table_lists_each_claim_with_its_form(findings):
    findings({}, forms={"thm41_2": "holds with a corrected constant", "critique7_matrix_powers": "not supported"})
    rows = _rows(page.findings_table())
    assert [r["result"] for r in rows] == [label for _, label, _ in page.CLAIMS]
    assert rows[1]["verdict"] == "holds with a corrected constant" and rows[3]["verdict"] == "not supported"
    findings({"thm41_1": {"matrices_above": 0, "ascent_steps": 300}})
    assert page.claim_numbers("thm41_1") == {"matrices_above": 0, "ascent_steps": 300}
