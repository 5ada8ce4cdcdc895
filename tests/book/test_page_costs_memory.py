"""Chapter 08's memory section: the naive and blocked paths' peak memory against SDPA's."""
from support.costs_frames import CFG, attention

from polyattn.studies.costs import memory as costs_memory


def test_memory_of_the_naive_and_blocked_paths():
    mem = costs_memory.memory_texts(attention(), CFG)
    assert (mem["naive_peak"], mem["naive_n"], mem["big_peak"]) == ("8.0", "256", "0.80")
