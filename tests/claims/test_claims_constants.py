"""The chance levels the register assumes, against the tasks' data."""
import math

import pytest

from polyattn.claims import REGISTER
from polyattn.claims.constants import DETECTION_FLOOR, MQAR_CHANCE, MQAR_VOCAB, mqar_value_tokens


def test_the_mqar_chance_level_is_guessing_one_of_the_value_tokens_the_generator_draws():
    from polyattn.data.mqar import multiquery_ar

    batch = multiquery_ar(64, 64, 4, MQAR_VOCAB, seed=0)
    tokens = mqar_value_tokens(MQAR_VOCAB)
    assert int(batch.values.min()) >= MQAR_VOCAB - tokens and int(batch.values.max()) < MQAR_VOCAB
    # the draws cover the whole range, not a part of it
    assert len(set(batch.values.flatten().tolist())) > tokens // 2
    assert MQAR_CHANCE == pytest.approx(100 / 256)


def test_the_mqar_grids_of_the_book_preset_use_the_vocabulary_the_chance_level_assumes():
    from polyattn.experiments.mqar import causal_mqar, causal_mqar_long

    assert {c.options["vocab_size"] for c in causal_mqar("book") + causal_mqar_long("book")} == {MQAR_VOCAB}


@pytest.mark.parametrize("cid", ["mqar", "mqar_long", "detection_segmentation"])
def test_a_chance_level_written_after_the_runs_says_so(cid):
    c = REGISTER[cid]
    assert c.chance is not None and math.isfinite(c.chance)
    assert c.chance_registered_after and "after its runs" in c.chance_registered_after


def test_a_detector_within_the_band_of_the_ap_floor_did_not_learn():
    from polyattn.claims.rule import learned

    band = REGISTER["detection_segmentation"].chance_band
    assert REGISTER["detection_segmentation"].chance == DETECTION_FLOOR == 0.0
    assert not learned(0.5, DETECTION_FLOOR, band) and learned(30.0, DETECTION_FLOOR, band)
