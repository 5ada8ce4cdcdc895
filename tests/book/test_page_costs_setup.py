"""Chapter 08's opening sections: the sizes they name, and where the feature map breaks even."""
from support.costs_frames import CFG

from polyattn.studies.costs import setup as costs_setup


def test_setup_texts_place_the_feature_map_s_break_even():
    texts = costs_setup.setup_texts(CFG)
    assert texts["cubic_features"] == "120" and texts["cubic_break_even"] == "103"
    assert texts["cubic_beyond"] == "N = 256, N = 1,024"
    assert costs_setup.setup_texts({**CFG, "ns": [16, 32], "big_n": 64})["cubic_beyond"] == "none of them"
