"""Critique 7: matrix powers against elementwise powers of the score matrix (polyattn.theory.matrix_powers)."""
import math

import pandas as pd
import pytest
import torch

from polyattn import activations, theory
from polyattn.theory import matrix_powers as mp

torch.set_num_threads(1)


def _random_scores(seed, shape):
    return torch.randn(*shape, generator=theory.generator(seed, "test-matrix-powers"), dtype=torch.float64)


def test_p1_readings_agree_exactly():
    S = _random_scores(0, (5, 7, 7))
    assert torch.equal(mp.matrix_power_fro(S, 1), mp.elementwise_power_fro(S, 1))
    assert torch.equal(mp.matrix_power_fro(S, 1, scaled=False), mp.elementwise_power_fro(S, 1, scaled=False))


@pytest.mark.parametrize("p", [1, 2, 3, 4, 5])
def test_diagonal_scores_agree_for_every_p(p):
    S = torch.diag_embed(_random_scores(1, (3, 6)))
    torch.testing.assert_close(mp.matrix_power_fro(S, p), mp.elementwise_power_fro(S, p), rtol=1e-13, atol=0)


def test_readings_differ_off_the_diagonal():
    S = _random_scores(2, (4, 6, 6))
    assert (mp.matrix_power_fro(S, 2) - mp.elementwise_power_fro(S, 2)).abs().min() > 1e-3


def test_two_by_two_by_hand():
    # S^2 = [[7, 10], [15, 22]], S^3 = [[37, 54], [81, 118]]; S^{o2} = [[1, 4], [9, 16]], S^{o3} = [[1, 8], [27, 64]]
    S = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    by_hand = {2: (49 + 100 + 225 + 484, 1 + 16 + 81 + 256), 3: (37**2 + 54**2 + 81**2 + 118**2, 1 + 64 + 729 + 4096)}
    assert by_hand[3] == (24770, 4890)
    for p, (matrix_sq, elem_sq) in by_hand.items():
        assert float(mp.matrix_power_fro(S, p, scaled=False)) == pytest.approx(math.sqrt(matrix_sq), rel=1e-15)
        assert float(mp.elementwise_power_fro(S, p, scaled=False)) == pytest.approx(math.sqrt(elem_sq), rel=1e-15)
        assert float(mp.matrix_power_fro(S, p)) == pytest.approx(math.sqrt(matrix_sq / 2), rel=1e-15)
        assert float(mp.elementwise_power_fro(S, p)) == pytest.approx(math.sqrt(elem_sq / 2), rel=1e-15)


@pytest.mark.parametrize("shared_x", [True, False])
@pytest.mark.parametrize("p", [1, 2, 3, 4])
def test_factored_form_matches_the_direct_matrix_power(p, shared_x):
    A, B = mp.draw_factors(theory.generator(3, "factored", p, shared_x), 4, 24, 12, 5, shared_x)
    assert A.dtype == torch.float64 and A.shape == (4, 24, 5)
    S = A @ B.transpose(-2, -1) / math.sqrt(5)
    for scaled in (False, True):
        torch.testing.assert_close(mp.factored_matrix_power_fro(A, B, p, 1 / math.sqrt(5), scaled),
                                   mp.matrix_power_fro(S, p, scaled), rtol=1e-10, atol=0)


def test_the_librarys_activation_is_the_elementwise_reading():
    S = _random_scores(4, (3, 16, 16))
    for p in (1, 2, 3):
        phi = activations.get(f"poly:p={p}")(S).double()
        norm = phi.pow(2).sum((-2, -1)).sqrt()
        torch.testing.assert_close(norm, mp.elementwise_power_fro(S, p), rtol=1e-6, atol=0)
        if p > 1:
            assert (norm / mp.matrix_power_fro(S, p) - 1).abs().min() > 1e-2


def test_invalid_powers_and_shapes_are_refused():
    S = _random_scores(5, (4, 4))
    for bad in (0, -1, 1.5):
        with pytest.raises(ValueError, match="positive integer"):
            mp.elementwise_power_fro(S, bad)
    with pytest.raises(ValueError, match="square"):
        mp.matrix_power_fro(torch.zeros(3, 4, dtype=torch.float64), 2)
    with pytest.raises(ValueError, match="reading"):
        mp.predicted_exponent("hadamard", 2)
    with pytest.raises(ValueError, match="preset"):
        mp.grid("huge")


def test_survey_is_seeded_and_float64():
    kw = dict(ns=(8, 16), ps=(1, 2, 3), reps=6, D=8, d=4)
    a, b, c = mp.readings_survey(seed=7, **kw), mp.readings_survey(seed=7, **kw), mp.readings_survey(seed=8, **kw)
    pd.testing.assert_frame_equal(a, b)
    assert not a["mean"].equals(c["mean"])
    assert set(a.reading) == set(mp.READINGS) and len(a) == 2 * 2 * 3
    one = a[a.p == 1].pivot_table(index="N", columns="reading", values="mean")
    torch.testing.assert_close(torch.tensor(one.matrix.values), torch.tensor(one.elementwise.values), rtol=1e-12, atol=0)


def test_predicted_exponents():
    assert [mp.predicted_exponent("elementwise", p) for p in (1, 2, 3)] == [0.5, 0.5, 0.5]
    assert [mp.predicted_exponent("matrix", p) for p in (1, 2, 3)] == [0.5, 1.5, 2.5]
    assert [mp.predicted_exponent("matrix", p, shared_x=False) for p in (1, 2, 3)] == [0.5, 1.0, 1.5]


def test_growth_exponents_of_the_two_readings_differ_for_p3():
    # D = 16, so N = 32..256 is past the crossover N ~ D.  Over seeds 0-5 (32 draws each) the
    # fitted p = 3 exponents were 0.49-0.70 (elementwise, shared X), 2.30-2.47 (matrix, shared X:
    # below 2.5 because the local slope is still rising) and 1.45-1.57 (matrix, independent A, B)
    ns, reps = (32, 64, 128, 256), 32
    df = pd.concat([mp.readings_survey(ns, (1, 3), reps, 0, 16, 8, shared_x=s) for s in (True, False)])
    fits = mp.growth_exponents(df).set_index(["setup", "reading", "p"])
    elem, mat = fits.loc[("shared X", "elementwise", 3)], fits.loc[("shared X", "matrix", 3)]
    indep = fits.loc[("independent A, B", "matrix", 3)]
    assert abs(elem.exponent - 0.5) < 0.25
    assert abs(mat.exponent - 2.5) < 0.3
    assert abs(indep.exponent - 1.5) < 0.2
    assert mat.exponent - elem.exponent > 1.5 and mat.ci_lo > elem.ci_hi
    for setup in mp.SETUPS:       # p = 1: one reading
        assert fits.loc[(setup, "matrix", 1)].exponent == pytest.approx(fits.loc[(setup, "elementwise", 1)].exponent,
                                                                        abs=1e-10)
    assert fits.loc[("shared X", "matrix", 3)].predicted == 2.5
