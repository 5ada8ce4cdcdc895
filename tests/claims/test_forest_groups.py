"""The answer's forest plot: one group per experiment and a colour per result that a reader can tell apart."""
from itertools import combinations

from matplotlib.colors import to_rgb

from polyattn.claims.register import REGISTER
from polyattn.claims.report import CHAPTER_TOPICS, RESULT_COLOURS, TOPICS, topic_of


def test_every_registered_claim_falls_into_a_named_experiment_group():
    groups = set(TOPICS.values())
    assert {topic_of(c) for c in REGISTER.values()} <= groups, "a claim's forest row would get a chapter name"
    assert set(CHAPTER_TOPICS.values()) <= groups


def test_result_colours_are_distinct():
    close = [(a, b) for (a, ca), (b, cb) in combinations(RESULT_COLOURS.items(), 2)
             if sum((x - y) ** 2 for x, y in zip(to_rgb(ca), to_rgb(cb))) ** 0.5 < 0.2]
    assert not close, f"colours a reader cannot tell apart: {close}"
