"""Chapter 08's rate section: the cubic's achieved rate on its faster path."""
from support.costs_frames import CFG, attention

from polyattn.studies.costs import rate as costs_rate


def test_rate_takes_the_cubic_s_faster_path():
    texts = costs_rate.rate_texts(attention(), CFG)
    assert (texts["rate_best_path"], texts["rate_best"], texts["rate_sdpa"], texts["rate_gflop"]) == \
        ("compiled", "0.75", "0.70", "356")
    assert costs_rate.rate_texts(attention(compiled=None), CFG)["rate_best_path"] == "blocked"
