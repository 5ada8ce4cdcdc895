"""The claims registered after their runs: what they read and the levels they assume."""
import shutil

import pytest

from polyattn.claims import REGISTER
from polyattn.claims.constants import KJV_UNIGRAM_BPC

#: The questions the chapters first judged with their own code, registered after their runs.
LATE_CLAIMS = ("qk_alternatives", "weight_decay_all", "powers_trained", "causal_scaling", "seed_article_table",
               "attention_sinks")


def test_every_late_claim_is_registered_and_says_it_came_late():
    for cid in LATE_CLAIMS:
        assert REGISTER[cid].registered_after, f"{cid} reads runs stored before it: it must say so"


def test_the_late_claims_answer_rows_of_the_intro_table():
    from polyattn.book.verdict_rows import CLAIM_IDS

    assert set(LATE_CLAIMS) <= set(CLAIM_IDS)


def test_the_alternatives_are_judged_with_and_without_clipping():
    for cid in ("qk_alternatives", "weight_decay_all"):
        tiers = {c.tier for c in REGISTER[cid].comparisons}
        grids = {c.candidate.grid for c in REGISTER[cid].comparisons}
        assert tiers == {"clipped", "unclipped"} and len(grids) == 2
        assert REGISTER[cid].deciding_tier is None


@pytest.mark.skipif(shutil.which("bible") is None, reason="the King James Bible is not installed (make data)")
def test_the_unigram_level_of_the_test_books_is_what_the_register_assumes():
    import collections
    import math

    from polyattn.data.bible import books
    from polyattn.data.charlm import build_corpus

    corpus = build_corpus(books())
    train = collections.Counter(corpus.stream("train").tolist())
    test = collections.Counter(corpus.stream("test").tolist())
    n, v = sum(train.values()), len(corpus.vocab)
    bits = -sum(k * math.log2((train.get(x, 0) + 1) / (n + v)) for x, k in test.items()) / sum(test.values())
    assert bits == pytest.approx(KJV_UNIGRAM_BPC, abs=0.005)
