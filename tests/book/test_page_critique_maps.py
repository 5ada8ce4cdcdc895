"""Chapter 09's attention maps on planted records: each activation's negative share and its heads'
attention distances."""
import numpy as np
from support.pages import table_rows
from support.records import make_record

from polyattn.experiments import vit
from polyattn.studies.critiques import maps as page
from polyattn.studies.critiques.page import Runs


def test_the_maps_table_gives_each_activations_negative_share_and_the_range_of_its_heads_distances():
    from polyattn.measures.critique_common import MAP_SPECS

    recs = []
    for i, act in enumerate(MAP_SPECS):
        r = make_record(act, 0, experiment="critique_short_retrain")
        r["final"] = {"maps": {"cls": np.zeros((2, 1, 4, 7, 7)).tolist(), "negative_mass_share": [0.1 * i, 0.2 * i],
                               "attention_distance": [[3.0, 3.5, 3.25, 3.1], [2.0 + i, 4.0, 3.0, 3.0]],
                               "layers": [0, 3], "grid": 7, "n_images": 1, "n_test": 500}}
        recs.append(r)
    grid = vit.table1("smoke", seeds=[0])[:len(recs)]
    table = page.maps_table(Runs(grid, recs), "smoke")
    rows = table_rows(table)
    assert [r["activation"] for r in rows] == ["softmax", "x³/√N", "x³/14", "x/√N"]
    assert rows[1]["negative share, first layer"] == "0.10" and rows[1]["negative share, last layer"] == "0.20"
    assert rows[0]["distance, first layer (heads)"] == "3.00 to 3.50"
    assert rows[3]["distance, last layer (heads)"] == "3.00 to 5.00"
    assert "500 test images" in table.caption and "preset smoke" in table.caption
    waiting = page.maps_table(Runs(grid + grid[:1], recs), "smoke")
    assert "4 of the 5 short retrainings" in waiting.data
