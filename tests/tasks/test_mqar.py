import numpy as np
import pytest
import torch

from polyattn.data import mqar


# (256, 64) and vocabulary 100 draw keys one row at a time; the others redraw repeats
@pytest.mark.parametrize("seq_len,pairs,v", [(64, 4, 8192), (128, 8, 8192), (256, 16, 8192), (256, 64, 8192),
                                             (64, 16, 8192), (64, 16, 100)])
def test_layout_labels_and_disjoint_vocabularies(seq_len, pairs, v):
    d = mqar.multiquery_ar(200, seq_len, pairs, vocab_size=v, seed=1)
    assert d.inputs.shape == d.labels.shape == (200, seq_len)
    assert d.inputs.dtype == d.labels.dtype == torch.int64
    assert ((d.keys >= 1) & (d.keys < v // 2)).all() and ((d.values >= v // 2) & (d.values < v)).all()
    assert all(len(set(r.tolist())) == pairs for r in d.keys) and all(len(set(r.tolist())) == pairs for r in d.values)
    assert torch.equal(d.inputs[:, 0:2 * pairs:2], d.keys) and torch.equal(d.inputs[:, 1:2 * pairs:2], d.values)
    assert ((d.inputs >= 0) & (d.inputs < v)).all()
    at = d.labels != mqar.IGNORE_INDEX
    assert (at.sum(1) == pairs).all()
    for i in range(0, 200, 17):
        bound = dict(zip(d.keys[i].tolist(), d.values[i].tolist()))
        pos = torch.nonzero(at[i]).flatten()
        assert torch.equal(pos, d.query_positions[i].sort().values)
        assert (pos >= 2 * pairs).all() and (pos < seq_len).all() and (pos % 2 == 0).all()
        for p in pos.tolist():     # the label is the value bound to the key queried there
            assert d.labels[i, p].item() == bound[d.inputs[i, p].item()]
    assert not at[:, :2 * pairs].any()


def test_deterministic_per_seed_and_different_across_seeds():
    a = mqar.multiquery_ar(50, 128, 8, seed=7)
    b = mqar.multiquery_ar(50, 128, 8, seed=7)
    c = mqar.multiquery_ar(50, 128, 8, seed=8)
    assert torch.equal(a.inputs, b.inputs) and torch.equal(a.labels, b.labels)
    assert not torch.equal(a.inputs, c.inputs)


def test_gaps_follow_the_power_law():
    d = mqar.multiquery_ar(4000, 256, 1, seed=3)
    space = (256 - 2) // 2
    counts = np.bincount(d.gaps.flatten().numpy(), minlength=space)
    p = mqar.gap_probabilities(space)
    np.testing.assert_allclose(p[5] / p[0], 6.0 ** -0.99)
    assert np.all(np.diff(p) < 0) and p[:8].sum() > 0.4       # a = 0.01: much mass on short gaps
    assert abs(counts[0] / 4000 - p[0]) < 0.03
    assert abs(counts[space // 2:].sum() / 4000 - p[space // 2:].sum()) < 0.03
    assert counts[space // 2:].sum() > 0                     # and a real tail


def test_fillers_random_or_zero():
    z = mqar.multiquery_ar(20, 64, 4, seed=0, random_fillers=False)
    filler = (z.labels == mqar.IGNORE_INDEX)
    filler[:, :8] = False
    assert (z.inputs[filler] == 0).all()
    r = mqar.multiquery_ar(20, 64, 4, seed=0)
    assert (r.inputs[filler] != 0).float().mean() > 0.99
    assert torch.equal(r.labels, z.labels)                  # fillers draw after everything else


def test_mixture_and_standard_configs():
    mix = mqar.mixture([(64, 4, 30), (128, 8, 20)], seed=2)
    assert [tuple(m.inputs.shape) for m in mix] == [(30, 64), (20, 128)]
    again = mqar.mixture([(64, 4, 30)], seed=2)
    assert torch.equal(mix[0].inputs, again[0].inputs)
    assert mqar.TRAIN_MIX[0] == (64, 4, 100_000) and (1024, 256) in mqar.TEST_SETS


def test_query_accuracy():
    d = mqar.multiquery_ar(4, 64, 4, seed=0, vocab_size=100)
    logits = torch.nn.functional.one_hot(d.labels.clamp_min(0), 100).float()
    assert mqar.query_accuracy(logits, d.labels) == 1.0
    logits[0, d.query_positions[0, 0]] = 0
    assert mqar.query_accuracy(logits, d.labels) == pytest.approx(15 / 16)


@pytest.mark.parametrize("kwargs", [dict(seq_len=63, num_kv_pairs=4), dict(seq_len=64, num_kv_pairs=17),
                                    dict(seq_len=64, num_kv_pairs=0), dict(seq_len=64, num_kv_pairs=4, vocab_size=64)])
def test_bad_configs_raise(kwargs):
    with pytest.raises(ValueError):
        mqar.multiquery_ar(2, **kwargs)
