"""Chapter 08's training at LRA lengths: the targets stated before measuring are judged on every
length."""
from support.costs_frames import TARGETS, lra

from polyattn.studies.costs import lra as costs_lra


def test_lra_targets_are_judged_on_every_length():
    texts = costs_lra.lra_texts(lra(), TARGETS)
    assert texts["lra_met"] == "only the target of x³/√N is met"
    assert texts["lra_cubic"] == "0.80 at N = 512, 0.70 at N = 1,024"
    assert costs_lra.lra_texts(lra(linear=(0.4, 0.5)), TARGETS)["lra_met"] == "both targets are met"
