"""Chapter 03's attention maps on planted values: the fraction of negative weights, the
activations by name, and a page that trains nothing."""
import matplotlib
import numpy as np
from support.norms_runs import page

from polyattn.experiments import vit
from polyattn.studies.norms import maps as mp
from polyattn.studies.norms import page as npage

matplotlib.use("Agg")


def test_the_maps_values_count_negative_weights_and_name_the_activations():
    maps = mp.Maps({"softmax": np.full((2, 3, 3), 0.1), "poly:p=3": np.array([-1.0, 1.0, 1.0, 1.0]).reshape(1, 2, 2)},
                   np.zeros((2, 1, 28, 28)), {"softmax": 45.6, "poly:p=3": float("nan")},
                   vit.table1("smoke")[0], 3, 0, 41.6, "book")
    v = mp.map_values(maps)
    assert v["ch03_neg_frac_softmax"] == "0.00" and v["ch03_neg_frac_poly"] == "0.25"
    assert v["ch03_neg_frac_unscaled"] == "not stored"
    assert v["ch03_map_accuracy"] == "softmax 45.6%, x³/√N diverged"
    assert v["ch03_map_layer"] == 4 and v["ch03_map_head"] == 1 and v["ch03_map_seconds"] == "42"
    assert set(mp.map_values(None, "not run").values()) == {"not run"}


def test_a_page_that_trains_nothing_has_no_maps():
    assert mp.attention_maps(page(trains=False)) is None and mp.maps_figure(None) is None
    assert npage.table1_runs(page(trains=False)).missing == "not run"
