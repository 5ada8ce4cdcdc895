import math

import numpy as np
import pandas as pd
import pytest
import torch

from polyattn import survey


def test_settings_per_preset_and_unknown_preset():
    for preset in ("smoke", "book", "paper"):
        cfg = survey.settings(preset)
        assert len(cfg["ns"]) >= 2 and cfg["trials"] >= 1
    assert max(survey.settings("smoke")["ns"]) < max(survey.settings("book")["ns"])
    with pytest.raises(ValueError, match="smoke, book, paper"):
        survey.settings("huge")


def test_gaussian_scores_are_seeded_float32_and_scaled():
    a = survey.gaussian_scores(64, seed=3)
    assert a.dtype == torch.float32 and a.shape == (64, 64)
    assert torch.equal(a, survey.gaussian_scores(64, seed=3))
    assert not torch.equal(a, survey.gaussian_scores(64, seed=4))
    assert not torch.equal(a, survey.gaussian_scores(64, seed=3, trial=1))
    big = survey.gaussian_scores(512, sigma=2.0)
    assert abs(big.std().item() - 2.0) < 0.05
    with pytest.raises(ValueError, match="sigma"):
        survey.gaussian_scores(4, sigma=0)
    with pytest.raises(ValueError, match="at least 1"):
        survey.gaussian_scores(0)


def test_measured_properties_match_what_each_activation_declares():
    df = survey.measured_properties(["softmax", "poly:p=3", "poly:p=2", "relu_n"], (16, 128), trials=2)
    by = df.set_index(["activation", "N"])
    # softmax: non-negative rows summing to one; ||A||_F <= sqrt(N) (each row has norm <= 1)
    for n in (16, 128):
        row = by.loc[("softmax", n)]
        assert row.frac_negative == 0
        assert row.row_sum_mean == pytest.approx(1.0, abs=1e-5) and row.row_sum_std < 1e-5
        assert 0 < row.fro_over_sqrt_n <= 1
    # odd polynomial on symmetric scores: about half the weights negative
    assert by.loc[("poly:p=3", 128)].frac_negative == pytest.approx(0.5, abs=0.02)
    assert by.loc[("poly:p=2", 128)].frac_negative == 0
    # x^3/sqrt(N) on standard normal scores: ||A||_F^2 ~ N^2 * E[s^6] / N = 15 N
    assert by.loc[("poly:p=3", 128)].fro_over_sqrt_n == pytest.approx(math.sqrt(15), rel=0.15)
    # relu(s)/N: row sums about E[relu(s)] = 1/sqrt(2 pi)
    assert by.loc[("relu_n", 128)].row_sum_mean == pytest.approx(1 / math.sqrt(2 * math.pi), rel=0.05)


def test_measured_properties_rejects_bad_inputs():
    with pytest.raises(ValueError, match="activation spec"):
        survey.measured_properties([], (4,))
    with pytest.raises(ValueError, match="positive"):
        survey.measured_properties(["softmax"], (0,))
    with pytest.raises(ValueError, match="unknown activation"):
        survey.measured_properties(["nope"], (4,))


def test_fro_norm_and_growth_exponents():
    ns = (16, 64, 256)
    norms = survey.fro_norm_vs_n(["softmax", "poly:p=3", "poly:p=3,c=1"], ns, trials=2, seed=1)
    assert len(norms) == 3 * len(ns) * 2
    assert np.allclose(norms.fro_over_sqrt_n, norms.fro_norm / np.sqrt(norms.N))
    g = survey.growth_exponents(norms).set_index("activation")
    assert g.loc["poly:p=3", "exponent"] == pytest.approx(0.5, abs=0.1)      # sqrt(15 N)
    assert g.loc["poly:p=3,c=1", "exponent"] == pytest.approx(1.0, abs=0.1)  # sqrt(15) N
    assert g.loc["softmax", "exponent"] < 0.2                                  # near-uniform rows
    assert g.loc["softmax", "max_fro_over_sqrt_n"] <= 1.0
    same = survey.fro_norm_vs_n(["softmax"], ns, trials=2, seed=1)
    assert same.fro_norm.tolist() == norms[norms.activation == "softmax"].fro_norm.tolist()


def test_growth_exponents_needs_two_lengths_and_columns():
    with pytest.raises(ValueError, match="two sequence lengths"):
        survey.growth_exponents(pd.DataFrame({"activation": ["softmax"], "N": [4], "fro_norm": [1.0]}))
    with pytest.raises(ValueError, match="columns"):
        survey.growth_exponents(pd.DataFrame({"activation": ["softmax"]}))


def test_weight_curves_equal_the_pointwise_map_for_elementwise_activations():
    from polyattn import activations

    df = survey.weight_curves(["poly:p=3", "softmax"], (4, 64), scores=[-1.0, 0.0, 2.0])
    assert len(df) == 2 * 2 * 3
    poly = df[(df.activation == "poly:p=3") & (df.N == 4)]
    assert poly.weight.tolist() == pytest.approx([-0.5, 0.0, 4.0])  # s^3 / sqrt(4)
    soft = df[(df.activation == "softmax") & (df.N == 4)].set_index("score").weight
    assert soft[0.0] == pytest.approx(0.25)
    assert soft[2.0] == pytest.approx(math.e ** 2 / (math.e ** 2 + 3), rel=1e-5)
    act = activations.get("poly:p=3")
    assert act.elementwise
