import math

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from polyattn import activations, theory

torch.set_num_threads(1)
D = theory.D_SYMBOL

finite_logits = hnp.arrays(np.float32, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=12),
                           elements=st.floats(-60, 60, width=32))


# --- Thm 4.1 ---------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(finite_logits)
def test_softmax_norm_and_jacobian_bounds_hold_on_any_logits(a):
    a = torch.from_numpy(a)
    rows = a.shape[0]
    assert float(theory.softmax_fro_norm(a)) <= math.sqrt(rows) * (1 + 1e-6)
    per_row32 = activations.get("softmax").jacobian_fro_sq(a)
    per_row64 = theory.softmax_jacobian_fro_sq_rows64(a)
    assert float(per_row32.max()) <= 0.25 + 1e-6          # the sharp per-row bound, float32
    assert float(per_row64.max()) <= 0.25 + 1e-12         # and in float64
    assert float(theory.softmax_jacobian_fro(a)) <= 0.5 * math.sqrt(rows) + 1e-5


@settings(max_examples=100, deadline=None)
@given(finite_logits)
def test_accurate_gap_is_positive_and_matches_the_naive_gap(a):
    a = torch.from_numpy(a).double()
    gap = float(theory.softmax_fro_gap(a))
    naive = 1 - float(theory.softmax_fro_norm(a)) / math.sqrt(a.shape[0])
    assert gap >= 0
    assert abs(gap - naive) <= 1e-12
    if a.shape[1] > 1 and gap == 0:                           # only when the off-entries underflow
        assert float((a.max(-1).values[:, None] - a).sort(-1).values[:, 1].min()) > 700


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 10), elements=st.floats(0, 1)))
def test_bound_chain_is_a_chain_of_inequalities(w):
    if w.sum() <= 1e-6:
        w = np.ones_like(w)
    c = theory.softmax_row_bound_chain(w / w.sum())
    tol = 1e-12
    assert c["exact"] <= c["l1_step"] + tol <= c["drop_square"] + 2 * tol <= c["four_s"] + 3 * tol <= 4 + 4 * tol
    assert c["exact"] <= c["sharp_s"] + tol <= 0.25 + 2 * tol


def test_two_halves_attain_the_sharp_bound_and_one_hot_attains_sqrt_n():
    for n in (2, 3, 17, 64):
        a = theory.two_halves_logits(n, n)
        per_row = activations.get("softmax").jacobian_fro_sq(a)
        assert torch.all(per_row == 0.25)                 # exact in float32
        assert math.isclose(float(theory.softmax_jacobian_fro(a)) / math.sqrt(n), 0.5, rel_tol=1e-6)
        onehot = torch.full((n, n), -1e4)
        onehot[:, 0] = 0
        assert math.isclose(float(theory.softmax_fro_norm(onehot)), math.sqrt(n), rel_tol=1e-6)
    # N = 2 with finite logits: exactly (1/2, 1/2)
    assert float(theory.softmax_jacobian_fro_sq_rows64(torch.zeros(1, 2))) == 0.25
    uniform = theory.softmax_jacobian_fro_sq_rows64(torch.zeros(1, 8))
    assert math.isclose(float(uniform), 1 / 8 - 1 / 64, rel_tol=1e-12)


@pytest.mark.parametrize("spec", ["softmax", "poly:p=3", "sigmoid", "ssmax:s=0.43", "softpick", "poly_norm:p=2"])
def test_closed_form_jacobian_matches_jacrev(spec):
    g = torch.Generator().manual_seed(3)
    scores = torch.randn(5, 7, generator=g) * 2
    exact = activations.get(spec).jacobian_fro_sq(scores[None, None])[0, 0]
    auto = theory.jacobian_fro_sq_autodiff(spec, scores)
    torch.testing.assert_close(exact, auto, rtol=1e-4, atol=1e-6)


def test_float64_softmax_jacobian_matches_jacrev():
    g = torch.Generator().manual_seed(4)
    scores = torch.randn(6, 9, generator=g, dtype=torch.float64) * 3
    ref = torch.stack([torch.func.jacrev(lambda r: torch.softmax(r, -1))(row).pow(2).sum() for row in scores])
    torch.testing.assert_close(theory.softmax_jacobian_fro_sq_rows64(scores), ref, rtol=1e-10, atol=1e-12)


def test_factor_two_step_fails_on_a_one_hot_row():
    e = theory.eq42_as_quoted([1.0, 0.0, 0.0, 0.0], j=1)
    assert e["lhs"] == 1.0 and e["rhs_as_quoted"] == 2.0 and e["rhs_identity"] == 1.0
    p = np.array([0.1, 0.2, 0.3, 0.4])
    for j in range(4):
        e = theory.eq42_as_quoted(p, j)
        assert math.isclose(e["lhs"], e["rhs_identity"]) and math.isclose(e["rhs_as_quoted"], 2 * e["lhs"])
        assert math.isclose(e["l1_norm"], e["l1_closed_form"])


def test_adversarial_searches_approach_but_never_exceed_the_bounds():
    norm = theory.adversarial_softmax_norm(6, steps=150, seed=0)
    assert 0 < norm["min_gap"] < 1e-6                       # approaches the bound from below
    assert np.all(norm["gap_trajectory"] > 0)
    assert norm["gap_trajectory"][-1] < norm["gap_trajectory"][0] * 1e-4
    jac = theory.adversarial_softmax_jacobian(6, steps=150, seed=0, restarts=4)
    assert 0.499 < jac["max_ratio64"] <= 0.5
    assert jac["frac_rows_at_max"] == 1.0
    plain = theory.plain_ascent_softmax_jacobian(6, steps=150, seed=0)
    assert plain["ratio64"] <= 0.5


def test_survey_is_deterministic_and_within_bounds():
    a = theory.softmax_norm_survey((2, 5), reps=2, seed=1, ascent_ns=(5,), ascent_steps=30, ascent_restarts=2)
    b = theory.softmax_norm_survey((2, 5), reps=2, seed=1, ascent_ns=(5,), ascent_steps=30, ascent_restarts=2)
    assert a.equals(b)
    assert (a["fro_over_sqrt_n"] <= 1 + 1e-9).all()
    assert (a["jac_over_sqrt_n"].dropna() <= 0.5 + 1e-9).all()


# --- Thm 4.2: exact moments --------------------------------------------------------------------

@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_product_moment_is_squared_double_factorial(m):
    assert theory.product_moment(m) == theory.double_factorial_odd(m) ** 2


@pytest.mark.parametrize("p", [1, 2, 3, 4, 5])
def test_two_derivations_of_the_moment_agree_and_lead_with_the_paper_term(p):
    mgf = theory.sum_product_moment(p, "mgf")
    multi = theory.sum_product_moment(p, "multinomial")
    assert sp.expand(mgf - multi) == 0
    assert sp.expand(mgf - theory.moment_product_form(p)) == 0
    poly = sp.Poly(mgf, D)
    assert poly.degree() == p
    assert poly.LC() == theory.double_factorial_odd(p)
    assert all(c >= 0 for c in poly.all_coeffs())        # every lower-order term adds


def test_p2_moment_is_3d2_plus_6d():
    assert sp.expand(theory.sum_product_moment(2) - (3 * D ** 2 + 6 * D)) == 0


@pytest.mark.parametrize("p,dim", [(1, 5), (2, 3), (2, 10), (3, 2), (3, 6)])
def test_exact_moment_matches_brute_force_monte_carlo(p, dim):
    s1, s2 = 0.7, 1.3
    rng = np.random.default_rng(1000 * p + dim)
    reps = 400_000
    s = (rng.normal(0, s1, (reps, dim)) * rng.normal(0, s2, (reps, dim))).sum(1)
    x = s ** (2 * p)
    mean, se = x.mean(), x.std(ddof=1) / math.sqrt(reps)
    exact = theory.sum_product_moment_value(p, dim, s1, s2)
    assert abs(mean - exact) < 4 * se, (mean, exact, se)


def test_exact_moment_exceeds_leading_term_for_p_at_least_two():
    t = theory.moment_ratio_table([1, 2, 3], [1, 4, 64, 768])
    assert np.allclose(t[t.p == 1].ratio, 1.0)
    assert (t[t.p > 1].ratio > 1).all()
    r2 = t[(t.p == 2)].set_index("D").ratio
    assert math.isclose(r2[4], (3 * 16 + 24) / (3 * 16))
    assert r2.is_monotonic_decreasing
    d = theory.min_d_within(3, 0.01)
    assert theory.sum_product_moment_value(3, d) / theory.leading_moment(3, d) <= 1.01
    assert theory.sum_product_moment_value(3, d - 1) / theory.leading_moment(3, d - 1) > 1.01


def test_bounds_p1_agree_and_exact_rms_is_larger_for_higher_p():
    assert math.isclose(float(theory.thm42_bound(10, 7, 1)), float(theory.thm42_exact_rms(10, 7, 1)))
    assert float(theory.thm42_exact_rms(10, 7, 3)) > float(theory.thm42_bound(10, 7, 3))
    assert math.isclose(float(theory.thm42_bound(16, 7, 2, scaled=True)), float(theory.thm42_bound(16, 7, 2)) / 4)


def test_thm42_monte_carlo_p1_matches_exact_second_moment_and_is_seeded():
    a = theory.thm42_monte_carlo([(6, 3)], [1, 2], reps=300, seed=5, s1=0.5, s2=2.0)
    b = theory.thm42_monte_carlo([(6, 3)], [1, 2], reps=300, seed=5, s1=0.5, s2=2.0)
    c = theory.thm42_monte_carlo([(6, 3)], [1, 2], reps=300, seed=6, s1=0.5, s2=2.0)
    assert a.equals(b) and not a.equals(c)
    row = a[(a.p == 1) & ~a.scaled].iloc[0]
    assert row["mean"] <= row["bound"] + 4 * row["se"]
    assert row["mean"] > 0.8 * row["bound"]
    scaled = a[(a.p == 1) & a.scaled].iloc[0]
    assert math.isclose(scaled["mean"], row["mean"] / math.sqrt(6))


# --- power-law fits ----------------------------------------------------------------------------

def test_fit_recovers_exact_exponent():
    x = np.array([2.0, 4, 8, 16, 32])
    fit = theory.fit_power_law(x, 3.0 * x ** 1.5)
    assert math.isclose(fit.exponent, 1.5, abs_tol=1e-10) and math.isclose(fit.prefactor, 3.0, rel_tol=1e-10)


@pytest.mark.parametrize("k", [0.5, 1.0, 2.5])
def test_fit_interval_covers_known_exponent_on_noisy_data(k):
    rng = np.random.default_rng(int(k * 10))
    x = np.array([8.0, 16, 32, 64, 128, 256])
    reps = 200
    draws = 2.0 * x[None, :] ** k * rng.lognormal(0, 0.3, (reps, len(x)))
    y, se = draws.mean(0), draws.std(0, ddof=1) / math.sqrt(reps)
    fit = theory.fit_power_law(x, y, se)
    assert fit.ci_lo < k < fit.ci_hi
    assert fit.ci_hi - fit.ci_lo < 0.1
    ols = theory.fit_power_law(x, y)
    assert ols.ci_lo < k < ols.ci_hi


def test_fit_rejects_bad_input():
    with pytest.raises(ValueError, match="positive"):
        theory.fit_power_law([1, 2, 3], [1, -1, 2])
    with pytest.raises(ValueError, match="at least 3"):
        theory.fit_power_law([1, 2], [1, 2])


# --- Thm 4.4 -----------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("scaled", [False, True])
def test_qgrad_closed_form_matches_autograd(p, scaled):
    g = torch.Generator().manual_seed(10 + p)
    X = torch.randn(5, 4, generator=g, dtype=torch.float64)
    Q = torch.randn(4, 3, generator=g, dtype=torch.float64)
    K = torch.randn(4, 3, generator=g, dtype=torch.float64)
    closed = theory.qgrad_fro_norm(X, Q, K, p, scaled)
    auto = theory.qgrad_fro_norm_autograd(X, Q, K, p, scaled)
    torch.testing.assert_close(closed, auto, rtol=1e-10, atol=1e-10)


def test_thm44_p1_exact_second_moment_against_monte_carlo():
    n, dim, d, sx, sw = 4, 3, 2, 1.5, 0.5
    g = torch.Generator().manual_seed(7)
    reps = 100_000
    X = torch.randn(reps, n, dim, generator=g, dtype=torch.float64) * sx
    K = torch.randn(reps, dim, d, generator=g, dtype=torch.float64) * sw
    Q = torch.zeros(dim, d, dtype=torch.float64)
    sq = theory.qgrad_fro_norm(X, Q, K, 1).pow(2).numpy()
    exact = float(theory.thm44_exact_second_moment_p1(n, dim, d, sx, sw))
    assert abs(sq.mean() - exact) < 4 * sq.std(ddof=1) / math.sqrt(reps)
    norms = np.sqrt(sq)
    bound = float(theory.thm44_bound_p1(n, dim, d, sx, sw))
    assert norms.mean() < bound                         # E||.|| <= N D sqrt(d) sx^2 sw
    assert math.isclose(float(theory.thm44_leading(n, dim, d, 1, sx, sw)), bound)


def test_thm44_monte_carlo_n_exponent():
    mc = theory.thm44_monte_carlo((8, 16, 32, 64), ((16, 8),), (1,), reps=40, seed=0)
    fits = theory.fit_exponents(mc, "N", ["p", "scaled"]).set_index("scaled")
    assert fits.loc[False, "ci_lo"] < 1.0 < fits.loc[False, "ci_hi"]
    assert fits.loc[True, "ci_lo"] < 0.5 < fits.loc[True, "ci_hi"]


# --- assumptions ---------------------------------------------------------------------------------

def test_correlated_keys_inflate_the_norm():
    df = theory.correlated_qk_monte_carlo(16, 32, 8, (1, 3), (0.0, 1.0), reps=30, seed=0)
    r = df[df.setup == "shared X"].set_index(["rho", "p"]).ratio
    assert r[(1.0, 3)] > 2 * r[(0.0, 3)]
    assert r[(1.0, 1)] > r[(0.0, 1)]
    with pytest.raises(ValueError, match="rho"):
        theory.correlated_qk_monte_carlo(4, 4, 2, (1,), (1.5,), reps=2, seed=0)


def test_bound_factors_and_head_dim_tables():
    t = theory.bound_factors_table([1, 3]).set_index(["model", "p"])
    row = t.loc[("ViT-B/16 (224 px)", 3)]
    assert math.isclose(row["dfactor_model"], math.sqrt(15 * 768 ** 3))
    assert math.isclose(row["n_crossover_model"], 15 * 768 ** 3)
    assert row["d_head"] == 64
    h = theory.head_dim_table([1, 2], ds=(64, 768)).set_index(["p", "d"])
    assert math.isclose(h.loc[(1, 768), "relative_to_first_d"], math.sqrt(12))
    assert math.isclose(h.loc[(2, 768), "relative_to_first_d"], 12)


def test_gaussian_prediction_of_scaled_polynomials():
    for p in (1, 2, 3):
        pred = theory.gaussian_elementwise_fro(f"poly:p={p}", 49, 0.7)
        assert math.isclose(pred, math.sqrt(49) * 0.7 ** p * math.sqrt(theory.double_factorial_odd(p)), rel_tol=1e-5)
    assert math.isnan(theory.gaussian_elementwise_fro("softmax", 10, 1.0))


def test_presets_and_seeds():
    p = theory.preset("smoke")
    assert theory.resolve_seed(None, p) == p.seed
    assert theory.resolve_seed(7, p) == 7 and theory.resolve_seed([3, 4], p) == 3
    with pytest.raises(ValueError, match="unknown preset"):
        theory.preset("huge")
    with pytest.raises(ValueError, match="seeds"):
        theory.resolve_seed("x", p)
    g1, g2 = theory.generator(1, "a"), theory.generator(1, "a")
    assert torch.equal(torch.randn(3, generator=g1), torch.randn(3, generator=g2))
    assert not torch.equal(torch.randn(3, generator=theory.generator(1, "a")),
                           torch.randn(3, generator=theory.generator(1, "b")))


def test_qk_equal_prediction_and_small_helpers():
    # K = Q at ViT-B-like sizes: the diagonal dominates for p = 3 (d^p > N (2p-1)!!)
    assert theory.qk_equal_prediction(196, 64, 3) > 10 > theory.qk_equal_prediction(196, 64, 2) > 2
    assert 1 < theory.qk_equal_prediction(196, 64, 1) < 1.2
    sig = theory.sigma_at_softmax_bound(3)
    assert math.isclose(theory.gaussian_elementwise_fro("poly:p=3", 100, sig) / 10, 1.0, rel_tol=1e-5)
    assert theory.k_uniform_row_value(2) == 0.25 and math.isclose(theory.k_uniform_row_value(3), 2 / 9)
    per_row = theory.softmax_jacobian_fro_sq_rows64(torch.tensor([[0.0, 0.0, 0.0, -1e4]]))
    assert math.isclose(float(per_row), theory.k_uniform_row_value(3), rel_tol=1e-12)


def test_plain_ascent_stalls_on_k_uniform_rows():
    plain = theory.plain_ascent_softmax_jacobian(16, steps=200, seed=0)
    assert plain["ratio64"] < 0.5
    assert sum(plain["frac_rows_near_k_uniform"].values()) > 0.5
