"""The floors the gates read: computed by the library, stored under data/, recomputed here."""
import json
import math

import pytest

from polyattn import task_floors
from polyattn.claims import floors


def test_an_ngram_model_counts_what_it_has_seen():
    # a stream that repeats "abc": one character of context predicts the next one exactly
    train = [1, 2, 3] * 200
    test = [1, 2, 3] * 50
    uni = task_floors.ngram_bits_per_char(train, test, 1, vocab=4, k=0.001)
    bi = task_floors.ngram_bits_per_char(train, test, 2, vocab=4, k=0.001)
    assert uni == pytest.approx(math.log2(3), abs=0.01)
    assert bi < 0.01
    # add-k: an unseen character costs more the smaller k is, and no probability is zero
    unseen = task_floors.ngram_bits_per_char(train, [1, 2, 3, 0] * 10, 2, vocab=4, k=0.001)
    assert math.isfinite(unseen) and unseen > bi
    with pytest.raises(ValueError, match="outside the vocabulary"):
        task_floors.ngram_bits_per_char(train, [5], 1, vocab=4, k=1.0)


def test_the_stored_floors_are_the_ones_the_library_computes():
    stored = json.loads(floors.FLOORS_PATH.read_text())
    fresh = task_floors.compute_floors(charlm=False)
    for task in ("fashion_mnist", "lra", "mqar", "pde"):
        assert json.dumps(stored[task], sort_keys=True) == json.dumps(fresh[task], sort_keys=True), task
    # the n-gram floors fall with the context they use: 4.36, 3.30, 2.57, 2.05, 1.81 bits/char
    bpc = [floors.ngram_floor(n) for n in floors.NGRAM_ORDERS]
    assert bpc == sorted(bpc, reverse=True) and bpc[0] == pytest.approx(4.36, abs=0.01)


def test_the_mqar_copy_plateau_pools_the_test_sets_queries():
    from polyattn.experiments.mqar import BOOK_TESTS, causal_mqar_long

    f = task_floors.mqar_floors(BOOK_TESTS, 256)
    # one query in K is right by copying: 3 test sets with 4 + 8 + 16 queries an example
    assert f["copy_plateau"] == pytest.approx(100 * 3 / 28) and f["guess"] == pytest.approx(100 / 256)
    assert {tuple(map(tuple, c.options["test_sets"])) for c in causal_mqar_long("book")} == {tuple(BOOK_TESTS)}


def test_the_zero_predictor_of_a_pde_has_relative_error_one():
    f = task_floors.pde_floors("reaction", (21, 21))
    assert f["zero"] == pytest.approx(0.0) and f["mean"] < 0.0


def test_a_missing_floor_names_the_command_that_computes_it(tmp_path):
    with pytest.raises(ValueError, match="python -m polyattn floors"):
        floors.floor("charlm", path=tmp_path / "none.json")
    path = tmp_path / "f.json"
    path.write_text(json.dumps({"mqar": {"guess": 1.0}}))
    with pytest.raises(ValueError, match="no floor mqar/copy_plateau"):
        floors.floor("mqar", "copy_plateau", path=path)


@pytest.mark.slow
def test_the_charlm_floors_recompute_from_the_corpus():
    from polyattn.data.errors import DatasetMissing

    try:
        fresh = task_floors.charlm_floors()
    except DatasetMissing as exc:
        pytest.skip(str(exc))
    stored = json.loads(floors.FLOORS_PATH.read_text())["charlm"]
    for n in floors.NGRAM_ORDERS:
        assert fresh["ngram"][str(n)]["bits_per_char"] == pytest.approx(stored["ngram"][str(n)]["bits_per_char"],
                                                                        abs=1e-9)
