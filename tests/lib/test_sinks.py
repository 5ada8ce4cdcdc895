
import pytest
import torch

from polyattn import activations, sinks


def _causal_uniform(b, h, n):
    """Causal softmax-like weights: query i spreads 1 evenly over keys 0..i."""
    w = torch.ones(n, n).tril()
    return (w / w.sum(-1, keepdim=True)).expand(b, h, n, n).clone()


def _sink_heads(b, h, n, heads, mass=0.5):
    """Heads in ``heads`` put ``mass`` on token 0 from every query i >= 1 and spread the
    rest evenly over keys 1..i; query 0 can only see token 0."""
    w = _causal_uniform(b, h, n)
    for hd in heads:
        for i in range(1, n):
            w[:, hd, i, :] = 0
            w[:, hd, i, 0] = mass
            w[:, hd, i, 1:i + 1] = (1 - mass) / i
    return w


def test_two_of_four_heads_with_half_their_mass_on_token_zero_give_rate_one_half():
    w = _sink_heads(3, 4, 8, heads=(0, 2))
    torch.testing.assert_close(w.sum(-1), torch.ones(3, 4, 8))
    assert sinks.sink_rate(w, eps=0.35, window=None) == pytest.approx(0.5)
    alpha = sinks.key_attention(w, window=None)
    assert alpha.shape == (1, 3, 4)
    torch.testing.assert_close(alpha[0, 0], torch.tensor([(1 + 7 * 0.5) / 8, sum(1 / (i + 1) for i in range(8)) / 8,
                                                          (1 + 7 * 0.5) / 8, sum(1 / (i + 1) for i in range(8)) / 8]))
    # the threshold matters: the sink heads' alpha is 0.5625; the uniform heads' is H_8 / 8 = 0.34,
    # itself above the published eps = 0.3 (short causal windows favour the first token)
    assert sinks.sink_rate(w, eps=0.6, window=None) == 0.0
    assert sinks.sink_rate(w, window=None) == 1.0


def test_layers_and_samples_average_as_published():
    n = 8
    layer1 = _sink_heads(2, 4, n, heads=(0, 1, 2, 3), mass=0.9)
    layer2 = _sink_heads(2, 4, n, heads=(), mass=0.9)
    layer2[1] = _sink_heads(1, 4, n, heads=(3,), mass=0.9)[0]
    # sample 0: 4 of 8 layer-heads; sample 1: 5 of 8
    assert sinks.sink_rate([layer1, layer2], eps=0.5, window=None) == pytest.approx((4 / 8 + 5 / 8) / 2)
    mass = sinks.first_token_mass([layer1, layer2], window=None)
    assert mass.shape == (2, 4)


def test_window_cuts_causal_weights_to_the_leading_window_and_rejects_the_rest():
    torch.manual_seed(0)
    s = torch.randn(2, 2, 80, 80)
    mask = torch.ones(80, 80, dtype=torch.bool).tril()
    long = activations.get("softmax")(s, mask)
    short = activations.get("softmax")(s[..., :64, :64], mask[:64, :64])
    torch.testing.assert_close(torch.tensor(sinks.sink_report(long)["alpha"]),
                               torch.tensor(sinks.sink_report(short)["alpha"]))
    torch.testing.assert_close(sinks.key_attention(long), sinks.key_attention(short, window=None))
    with pytest.raises(ValueError, match="non-causal"):
        sinks.sink_rate(long, causal=False)
    with pytest.raises(ValueError, match="fewer"):
        sinks.sink_rate(short[..., :32, :32])


def test_non_causal_weights_average_over_every_query():
    w = torch.full((1, 2, 4, 4), 0.25)
    w[0, 1, :, 0], w[0, 1, :, 1:] = 0.7, 0.1
    alpha = sinks.key_attention(w, causal=False, window=None)
    torch.testing.assert_close(alpha[0, 0], torch.tensor([0.25, 0.7]))
    assert sinks.sink_rate(w, causal=False, window=None) == 0.5


def test_padding_queries_are_left_out():
    w = _sink_heads(1, 2, 6, heads=(0,), mass=0.5)
    qm = torch.tensor([[True, True, True, True, False, False]])
    padded = w.clone()
    padded[..., 4:, :] = 0          # padding rows weigh nothing and must not dilute the mean
    alpha = sinks.key_attention(padded, query_mask=qm, window=None)
    torch.testing.assert_close(alpha, sinks.key_attention(w[..., :4, :4], window=None))


def test_signed_unnormalised_weights_report_the_normalised_share():
    # one head: rows [2, -1, -1, ...]: raw alpha 2 (far above eps) but half the absolute mass
    n = 4
    w = torch.zeros(1, 2, n, n)
    for i in range(n):
        w[0, 0, i, : i + 1] = 0.05                   # a small-scale head: raw alpha 0.05
        w[0, 1, i, 0] = 2.0
        w[0, 1, i, 1: i + 1] = -2.0 / max(i, 1)
    rep = sinks.sink_report(w, window=None)
    assert rep["sink_rate"] == 0.5
    share = torch.tensor(rep["share"])[0]
    exp1 = (1 + 3 * 0.5) / 4                       # query 0 sees only token 0: share 1
    exp0 = sum(1 / (i + 1) for i in range(n)) / n  # uniform rows: share 1/(i+1)
    torch.testing.assert_close(share, torch.tensor([exp0, exp1]))
    assert rep["negative_fraction"] == pytest.approx(6 / 20)   # 6 negative of 2 x 10 visible entries
    # head 0 sums to 0.05 (i + 1), head 1 to 2 on row 0 and to 0 after
    assert rep["row_sum_min"] == pytest.approx(0.0, abs=1e-6) and rep["row_sum_max"] == pytest.approx(2.0)
    # by share both heads are sinks (0.52 and 0.625), by raw weight only the large one
    assert rep["sink_rate_normalised"] == 1.0


def test_two_of_four_encoder_heads_at_one_half_on_token_zero_give_the_published_rate_one_half():
    n = 8
    w = torch.full((5, 4, n, n), 1 / n)
    w[:, 0::2, :, 0] = 0.5
    w[:, 0::2, :, 1:] = 0.5 / (n - 1)
    assert sinks.sink_rate(w, causal=False, window=None) == pytest.approx(0.5)      # eps = 0.3
    assert sinks.sink_report(w, causal=False, window=None)["sink_rate_normalised"] == pytest.approx(0.5)
