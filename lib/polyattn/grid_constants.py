"""Constants of the grids (:mod:`polyattn.experiments`) that the claim register reads too, kept
where reading them imports no grid: the Long Range Arena's single softmax trials with each task's
chance level, and the MQAR grids' vocabulary at the book preset.  No imports."""
from __future__ import annotations

#: What single softmax trials of the LRA tasks reached (seed 0, test accuracy after ``steps``
#: steps on ``train`` examples, chance = the majority class of the test data; ``book_setting``:
#: the trial ran the book's config); documentation only, and each task's chance level.
LRA_BOOK_TRIALS = {
    "image": dict(steps=600, train=6400, test_acc=0.381, chance=0.104, book_setting=False),
    "listops": dict(steps=600, train=6400, test_acc=0.184, chance=0.158, book_setting=False),
    "listops_long": dict(steps=2400, train=25600, test_acc=0.315, chance=0.158, book_setting=False,
                         test_acc_at_800=0.328),
    "text": dict(steps=330, train=3520, test_acc=0.393, chance=0.167, book_setting=True),
    "retrieval": dict(steps=240, train=2560, test_acc=0.504, chance=0.5, book_setting=False),
    "retrieval_2ep": dict(steps=1600, train=25600, test_acc=0.557, chance=0.5, book_setting=False, val_acc=0.522),
    "retrieval_long": dict(steps=2400, train=25600, test_acc=0.565, chance=0.5, book_setting=True, val_acc=0.544,
                           test_acc_by_epoch=(0.527, 0.555, 0.565)),
    "pathfinder": dict(steps=300, train=4800, test_acc=0.500, chance=0.5, book_setting=True),
}

#: The vocabulary of every MQAR grid at the book preset (``causal_mqar``, ``causal_mqar_long``).
MQAR_BOOK_VOCAB = 512
#: Key-value pairs per training example of ``causal_mqar_recall`` (length 64, Zoology's 4 pairs there):
#: its copy plateau, copying some value of the context, scores 1/K.
MQAR_RECALL_PAIRS = 4
#: The copy plateau's band in every MQAR reading: 1/K divided or multiplied by this factor (a model that
#: copies a value without matching the key gets 1/K only in the limit); above it a run learned recall.
MQAR_PLATEAU_BAND = 1.25
#: Its vocabulary: the one at which softmax learned recall in the probes (with 512 it stayed below).
MQAR_RECALL_VOCAB = 128
