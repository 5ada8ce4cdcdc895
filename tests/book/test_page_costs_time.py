"""Chapter 08's time section: the cubic's time on the blocked and compiled paths, as glued."""
from support.costs_frames import CFG, attention, record

from polyattn.studies.costs import page as costs_page
from polyattn.studies.costs import time as costs_time


def test_the_compiled_path_is_reported_as_measured():
    texts = costs_time.time_texts(attention(), CFG)
    assert (texts["cubic_best"], texts["cubic_best_n"], texts["cubic_worst"], texts["cubic_worst_n"]) == \
        ("0.95", "256", "1.10", "64")                      # the longest length (1024) is not among ns
    assert texts["compiled_rule"] == "takes 0.73–0.95 times the blocked path's time: faster at every measured length"
    slower = costs_time.time_texts(attention(compiled=(0.8, 1.0)), CFG)
    assert slower["compiled_rule"].endswith("not faster at every measured length")
    missing = costs_time.time_texts(attention(compiled=None), CFG)
    assert missing["compiled_time"].startswith("was not measured") and "did not build" in missing["compiled_rule"]


def test_no_length_at_the_rule_is_said_so():
    records = [record("softmax", "sdpa", n, 1.0) for n in (16, 32)]
    records += [record("poly:p=3", "blocked", n, 2.0) for n in (16, 32)]
    records += [record("poly:p=3", "compiled", n, 1.5) for n in (16, 32)]
    texts = costs_time.time_texts(costs_page.attention_frame(records), {**CFG, "ns": [16, 32]})
    assert "no length of 48 keys or more" in texts["compiled_rule"]
    assert texts["compiled_time"] == "takes 1.50–1.50 times SDPA's time over the same lengths and 0.75–0.75 times " \
                                     "the blocked path's"
