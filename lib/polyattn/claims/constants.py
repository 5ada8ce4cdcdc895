"""What the register's claims share: the arms they compare, the chance level of each task, and the
phrases their scales repeat.

A chance level is in the metric's display unit; a run within its claim's ``chance_band`` of it,
or worse, did not learn (:func:`polyattn.claims.rule.learned`).  Activation specs name the arms:
``poly:p=3`` is $x^3/\\sqrt{N}$, ``poly:p=3,c=1`` the unscaled cube, ``poly:p=3,c=1/14`` the
paper's fixed 1/14, ``poly:p=1`` $x/\\sqrt{N}$.
"""
from __future__ import annotations

from ..grid_constants import LRA_BOOK_TRIALS, MQAR_BOOK_VOCAB

# --- the arms ------------------------------------------------------------------------------------
SOFTMAX = {"activation": "softmax"}
#: x^3/sqrt(N)
CUBE_SQRT_N = {"activation": "poly:p=3"}
#: x^3/14, the fixed scale of the paper's ImageNet and LRA runs
CUBE_14 = {"activation": "poly:p=3,c=1/14"}
#: the unscaled x^3
CUBE = {"activation": "poly:p=3,c=1"}
#: x/sqrt(N)
LINEAR_SQRT_N = {"activation": "poly:p=1"}
#: under a causal mask, row i is scaled by its own i + 1 keys
ROW_N = {"n_mode": "row"}

# --- grids that claims of several topics read ------------------------------------------------------
#: Table 1's recipe without gradient clipping (the paper does not clip)
TABLE1_UNCLIPPED_GRID = "vit_table1_unclipped"
#: the converged tier's recipe without gradient clipping
CONVERGED_UNCLIPPED_GRID = "vit_unclipped"

# --- chance levels -------------------------------------------------------------------------------
#: Fashion-MNIST's test classes are balanced: guessing and the majority class both score 10%.
FASHION_MNIST_CHANCE = 10.0
#: Each shortened Long Range Arena task's chance level (majority class of its test data), in points.
LRA_CHANCE = {t: 100 * LRA_BOOK_TRIALS[t]["chance"] for t in ("listops", "text", "retrieval", "image", "pathfinder")}
#: A unigram model of the training text (character frequencies with add-one smoothing) scores
#: this many bits/char on the test books: a language model no better than it has learned nothing
#: usable at that length.  Recomputed from the corpus by the tests when the corpus is installed.
KJV_UNIGRAM_BPC = 4.36
#: How close to the unigram level a model must come to count as having learned nothing.
UNIGRAM_BAND = 0.5
#: log10 of the relative error of predicting zero everywhere (rMAE = 1) ...
PDE_ZERO_PREDICTOR = 0.0
#: ... and the band around it: a run whose error is within a factor 10 of it (rMAE > 0.1) did not
#: solve the equation.
PDE_ZERO_BAND = 1.0


def mqar_value_tokens(vocab_size: int) -> int:
    """How many tokens can be a value in an MQAR example: the values are drawn from the upper half
    of the vocabulary, ``[V // 2, V)`` (:func:`polyattn.data.mqar.multiquery_ar`)."""
    return vocab_size - vocab_size // 2


#: The MQAR grids' vocabulary at the book preset (every MQAR grid uses it there; a grid with its own
#: would need a claim with its own chance level).
MQAR_VOCAB = MQAR_BOOK_VOCAB
#: Recall accuracy of guessing a value token at every query, in points: 100 / 256 at the book's
#: vocabulary of 512.  (Copying *a* value of the context, the plateau softmax reaches, scores 1/K;
#: that takes learning and is no chance level.)
MQAR_CHANCE = 100.0 / mqar_value_tokens(MQAR_VOCAB)
#: COCO AP has no guessing rate like a class prior, but a floor: a detector that finds nothing scores 0.
#: A run within its claim's band of it found no objects.
DETECTION_FLOOR = 0.0

# --- the floors the baselines must clear (gates), computed by polyattn.claims.floors -------------------
#: Said by every claim whose gate was added after its runs.
GATE_LATE = "the floor its baseline must clear (the gate) was added on 5 December, after its runs"

# --- what the claims say about when their levels and recipes were fixed ------------------------------
#: The chance levels, their bands and the null baselines were written into the register on
#: 2 December (commits 6d16288 and ce8a540), after the runs they judge: every claim that uses one says so.
CHANCE_LATE = "the chance level and the band within which a run counts as not having learned were written down " \
              "on 2 December, after the runs they judge"
#: Said by the Fashion-MNIST claims that had no chance level until every task was given one.
CHANCE_ADDED_LATE = "the chance level (10%, ten balanced classes) was added to this claim on 3 December, after its runs"
#: Said in the scale of every claim on clipped ViT runs: a deviation from the paper's recipe.
CLIPPED = "gradients clipped at norm 1 (the paper does not clip)"
