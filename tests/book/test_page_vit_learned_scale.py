"""Chapter 04's quadratic with a learned scale, on planted ViT records: the factors per layer."""
from support.records import make_record

from polyattn.studies.vit import learned_scale as qd


def test_the_learned_scales_are_summarised_per_layer():
    records = [make_record("poly_learned:p=2", s) for s in (0, 1)]
    records[0]["learned_head_scales"] = [[0.9, 1.0], [0.8, 1.1]]
    records[1]["learned_head_scales"] = [[1.0, 1.0], [0.7, 1.0]]
    rows = qd.learned_scale_table(records).data.to_dict("records")
    assert rows == [{"Layer": 1, "Mean g": "0.97", "Smallest": "0.90", "Largest": "1.00"},
                    {"Layer": 2, "Mean g": "0.90", "Smallest": "0.70", "Largest": "1.10"}]
    assert qd.learned_scale_numbers(records, 5) == {"ch04_quad_stored": "2 of 5", "ch04_quad_low": "0.70",
                                                    "ch04_quad_high": "1.10"}
    assert qd.learned_scale_table([make_record("poly_learned:p=2", 0)]) is None
