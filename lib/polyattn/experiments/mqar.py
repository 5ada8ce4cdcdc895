"""Multi-query associative recall (MQAR) for chapter 07, as a config grid per preset.

The same eleven activation variants as the character language models
(:data:`polyattn.experiments.causal.CHARLM_VARIANTS`), trained on a mixture of sequence
lengths and tested at lengths 64, 128 and 256, as the Zoology benchmark does (Arora,
Eyuboglu et al., ICLR 2024; task :mod:`polyattn.tasks.mqar`, data :mod:`polyattn.data.mqar`).

``smoke``: seconds per run (lengths 16 and 32, vocabulary 64), for CI; never evidence.

``book``: sized for one CPU thread per run (the 33 runs in about 40 CPU-minutes).  The
CharLM micro model (2 layers, width 64, 4 heads) with the output head tied to the token
embedding (as Zoology's model), vocabulary 512, batches of 8, AdamW at 5e-3 without weight
decay, six epochs, each on a freshly drawn training mixture of (64, 4, 2048), (128, 8, 64)
and (256, 16, 32) (length, pairs, examples): Zoology's pairs per length, most examples at
length 64 as in Zoology's mixture; tested on 256 examples each of (64, 4), (128, 8) and
(256, 16) every second epoch.  Deviations from Zoology, all for the CPU budget: vocabulary
512 instead of 8192 (the generator needs it above the longest length, 256); about 14,000
training examples in all instead of 180,000 per epoch for 32 epochs; CharLM's MLPs and
sinusoidal positions kept (Zoology: attention only, learned positions).

What this budget buys, measured while sizing it on seed 0 (CPU time on a shared machine:
softmax about 55 s, x^3/sqrt(i+1) about 68 s): softmax learns within a few hundred steps
to copy *a* value of the context (test accuracy near 1/K: 24% at length 64, 11% at 128, 5%
at 256), but not to match the queried key, which would take it towards 100%.  None of
these got past that plateau in the same budget: half as many pairs (the plateau moves to
1/K = 50% and stays there), a learning rate of 1e-2, one head of width 64 instead of four,
batches of 32, or a fixed training set (which the model starts to memorise); with untied
output weights the model had not even reached the plateau (about 10% at length 64).  The
book preset therefore measures how fast each activation learns to copy from the context and
whether any gets beyond the copy plateau (x^3/sqrt(i+1) did not reach the plateau: 0.9% at
every length after the six epochs).  Recall proper (key matching) needs more training than
this budget allows: the ``paper`` preset, or a larger one.  Two longer softmax probes (seed 0,
one length, freshly drawn examples every epoch) stayed on the plateau too: length 64 with 8
pairs, vocabulary 256, the micro model, 2,048 steps of 64 at 3e-3 (131,000 examples; 14% at
8 pairs, 1/K = 12.5%); and length 64 with 4 pairs, vocabulary 128, Zoology's one-head model,
3,072 steps of 64 (197,000 examples; 24% at 4 pairs, where the training loss settled at
ln 4).  Zoology's schedule shows about 30 times as many examples.

``paper``: Zoology's published MQAR setting, listed for GPUs, not run: vocabulary 8192, the
training mixture :data:`polyattn.data.mqar.TRAIN_MIX` (64/4 x 100,000; 128/8, 256/16,
256/32, 256/64 x 20,000 each), the test sets :data:`polyattn.data.mqar.TEST_SETS` (up to
length 1024 with 256 pairs) of 1,000 examples, batches of 256, 32 epochs, learning rate 1e-3
(the low end of Zoology's sweep 1e-3 .. 10^-1.5), two layers of width 64 with one head (the
narrowest model of Zoology's width sweep 64 .. 512; without Zoology's attention dropout of
0.1, and with CharLM's MLPs and positions as above).
"""
from __future__ import annotations

from ..config import TrainConfig
from ..data.mqar import TEST_EXAMPLES, TEST_SETS, TRAIN_MIX
from ..grid_constants import MQAR_BOOK_VOCAB, MQAR_RECALL_PAIRS, MQAR_RECALL_VOCAB
from .causal import CHARLM_VARIANTS, variant_grid, variant_label

BOOK_MIX = ((64, 4, 2048), (128, 8, 64), (256, 16, 32))
BOOK_TESTS = ((64, 4), (128, 8), (256, 16))

_SCALE = {
    "smoke": dict(model="micro", epochs=1, batch_size=16, warmup_epochs=0.2, lr=5e-3,
                  options=dict(vocab_size=64, train_mix=((16, 2, 64), (32, 4, 32)), test_sets=((16, 2), (32, 4)),
                               test_examples=16, eval_batch=16)),
    "book": dict(model="micro", epochs=6, batch_size=8, warmup_epochs=0.3, lr=5e-3, eval_every=2,
                 options=dict(vocab_size=MQAR_BOOK_VOCAB, train_mix=BOOK_MIX, test_sets=BOOK_TESTS, test_examples=256,
                              resample=True)),
    "paper": dict(model="recall", epochs=32, batch_size=256, warmup_epochs=1.0, lr=1e-3,
                  options=dict(vocab_size=8192, train_mix=TRAIN_MIX, test_sets=TEST_SETS,
                               test_examples=TEST_EXAMPLES, eval_batch=32)),
}
_COMMON = dict(task="mqar", dataset="mqar", weight_decay=0.0, clip_grad=1.0, threads=1)


def causal_mqar(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """One MQAR model per variant of chapter 07 and seed (seed-major order)."""
    return variant_grid("causal_mqar", preset, seeds, {**_COMMON, **_SCALE[preset]})


#: The negative result made sure: ten times the book's epochs (each on a freshly drawn mixture)
#: for softmax, x^3/sqrt(i+1) and x^3/14.
LONG_VARIANTS = ("softmax", "x^3/sqrt(i+1)", "x^3/14")
LONG_EPOCHS = 60


def causal_mqar_long(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """:func:`causal_mqar` for :data:`LONG_VARIANTS` at ten times the epochs (smoke: unchanged)."""
    variants = tuple(v for v in CHARLM_VARIANTS if v[0] in LONG_VARIANTS)
    scale = dict(_SCALE[preset])
    if preset == "book":
        scale.update(epochs=LONG_EPOCHS, eval_every=10, warmup_epochs=3.0)
    return variant_grid("causal_mqar_long", preset, seeds, {**_COMMON, **scale}, variants=variants)


#: Where softmax learns recall: the setting the softmax probes of :func:`causal_mqar_probe` found
#: (stored records; the earlier probes above had stopped at 3,072 steps).  Zoology's two-layer one-head
#: model of width 64, one training length 64 with 4 pairs, 8,192 freshly drawn examples per epoch,
#: batches of 64, AdamW at 1e-3 without weight decay, 100 epochs.  At vocabulary 128 softmax leaves the
#: copy plateau for recall; at 512 (which would allow tests at 2x and 4x the length, the generator
#: needing V above every length) it stops at a second plateau near half the queries.  The grid therefore
#: keeps vocabulary 128 and tests at the training length only, with the training load and twice it.
RECALL_VARIANTS = ("softmax", "x^3/sqrt(i+1)", "x^3/sqrt(T)", "x^3/14")
RECALL_TRAIN = ((64, MQAR_RECALL_PAIRS, 8192),)
RECALL_TESTS = ((64, MQAR_RECALL_PAIRS), (64, 2 * MQAR_RECALL_PAIRS))
RECALL_EPOCHS = 100
_RECALL_SCALE = {
    "smoke": dict(model="recall", epochs=1, batch_size=16, warmup_epochs=0.2, lr=1e-3,
                  options=dict(vocab_size=64, train_mix=((16, 2, 64),), test_sets=((16, 2), (16, 4)),
                               test_examples=16, eval_batch=16)),
    "book": dict(model="recall", epochs=RECALL_EPOCHS, batch_size=64, warmup_epochs=1.0, lr=1e-3, eval_every=5,
                 options=dict(vocab_size=MQAR_RECALL_VOCAB, train_mix=RECALL_TRAIN, test_sets=RECALL_TESTS,
                              test_examples=256, resample=True)),
}


#: The probes that chose :func:`causal_mqar_recall`'s setting: softmax alone, seed 0, at vocabulary 128
#: (tested where it trains) and 512 (tested also at 2x and 4x the length, which the vocabulary allows).
PROBE_VOCABS = {128: ((64, MQAR_RECALL_PAIRS),),
                512: ((64, MQAR_RECALL_PAIRS), (128, MQAR_RECALL_PAIRS), (256, MQAR_RECALL_PAIRS), (128, 8), (256, 16))}


def causal_mqar_probe(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """The two softmax probes of :data:`PROBE_VOCABS` (book: seed 0; smoke: a seconds-long stand-in);
    ``paper``: none (the probes chose a CPU setting)."""
    if preset == "paper":
        return []
    book = _RECALL_SCALE["book"]
    out = []
    for vocab, tests in PROBE_VOCABS.items():
        fields = dict(book, options=dict(book["options"], vocab_size=vocab, test_sets=tests))
        if preset == "smoke":
            fields = dict(_RECALL_SCALE["smoke"])
            fields["options"] = dict(fields["options"], vocab_size=vocab // 2)
        for s in (seeds if seeds is not None else (0,)):
            out.append(TrainConfig(experiment="mqar_probe", preset=preset, activation="softmax", n_mode="row",
                                   seed=s, device="cpu", **{**_COMMON, **fields}))
    return out


def causal_mqar_recall(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """MQAR at a setting where softmax learns recall (:data:`RECALL_TRAIN`), for :data:`RECALL_VARIANTS`,
    tested at the training length with its load and twice it (:data:`RECALL_TESTS`); ``paper``:
    :func:`causal_mqar`'s."""
    variants = tuple(v for v in CHARLM_VARIANTS if v[0] in RECALL_VARIANTS)
    scale = _SCALE["paper"] if preset == "paper" else _RECALL_SCALE[preset]
    return variant_grid("causal_mqar_recall", preset, seeds, {**_COMMON, **scale}, variants=variants)


__all__ = ["BOOK_MIX", "causal_mqar_long", "causal_mqar_probe", "causal_mqar_recall", "BOOK_TESTS", "causal_mqar", "RECALL_TESTS",
           "RECALL_VARIANTS", "variant_label"]
