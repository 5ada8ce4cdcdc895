"""Chapter 08's causal masks: the targets stated before measuring are judged on every length."""
from support.costs_frames import TARGETS, causal

from polyattn.studies.costs import causal as costs_causal


def test_causal_targets_are_judged_on_every_length():
    texts = costs_causal.causal_texts(causal(), TARGETS)
    assert texts["causal_cubic_path"] == "compiled" and texts["causal_met"] == "both targets are met"
    assert texts["causal_linear_from"] == "1,024" and texts["causal_linear_max"] == "0.100"
    # the linear form's target from N = 256 on includes 0.3 there
    early = costs_causal.causal_texts(causal(), {**TARGETS, "causal_linear_from": 256})
    assert early["causal_met"] == "the cubic's target is met and the linear form's is not"
    assert costs_causal.causal_texts(causal(cubic=(0.7, 1.2)), TARGETS)["causal_met"] == \
        "the linear form's target is met and the cubic's is not"
    assert costs_causal.causal_texts(causal(cubic=(0.7, 1.2), linear=(0.3, 0.3)), TARGETS)["causal_met"] == \
        "neither target is met"
    assert costs_causal.causal_texts(causal(floor=(1.1, 1.2)), TARGETS)["causal_floor_where"] == \
        "is above 1 at every measured length"
    assert costs_causal.causal_texts(causal(floor=(0.9, 1.0)), TARGETS)["causal_floor_where"] == \
        "is at or below 1 at every measured length"
    assert texts["causal_floor_where"] == "is above 1 at some measured lengths only"
    assert texts["causal_floor_range"] == "0.90–1.10"
    assert costs_causal.causal_texts(causal(compiled=False), TARGETS)["causal_cubic_path"] == "blocked"
