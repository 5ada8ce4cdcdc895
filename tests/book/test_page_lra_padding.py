"""Chapter 05's "What N is under padding" on planted runs."""
from support.lra_runs import planted_runs

from polyattn.studies.lra import padding as page


def test_the_readings_of_n_agree_where_every_token_is_real():
    runs = planted_runs({("image", "x^3/sqrt(N), N padded"): 0.001})
    assert page.readings_gap(runs) == {"tasks": "Image", "gap": "0.10"}
