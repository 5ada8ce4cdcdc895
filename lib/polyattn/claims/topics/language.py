"""Chapter 07: causal models.  Character language models on the King James Bible (with sinusoidal
positions and without), which $N$ scales row $i$ under a causal mask, the scale across training
lengths, attention sinks, associative recall (MQAR), and a survey article's findings."""
from __future__ import annotations

from ... import specs
from ...grid_constants import MQAR_PLATEAU_BAND as PLATEAU_BAND
from ...grid_constants import MQAR_RECALL_PAIRS
from ...labels import CHARLM_VARIANTS
from ..constants import (
    CHANCE_LATE,
    CUBE_14,
    CUBE_SQRT_N,
    GATE_LATE,
    KJV_UNIGRAM_BPC,
    MQAR_CHANCE,
    MQAR_VOCAB,
    ROW_N,
    SOFTMAX,
    UNIGRAM_BAND,
    mqar_value_tokens,
)
from ..floors import NGRAM_NAMES, floor, ngram_floor
from ..spec import Gate, RegisteredClaim, vs

#: A language model's baseline must beat the count-based bigram (one character of context) for its
#: comparisons to say anything about attention.  No clearance beyond it: a band would split arms that sit
#: just below the bigram into counts without a registered reason for its width.
BIGRAM_GATE = Gate(NGRAM_NAMES[2], ngram_floor(2))
#: MQAR: copying *a* value of the context (1/K at a query with K pairs, pooled over the test sets' queries)
#: takes no key matching; softmax must get past it.
COPY_PLATEAU_GATE = Gate("the copy plateau", floor("mqar", "copy_plateau"))

_CUBE_ROW = {**CUBE_SQRT_N, "n_mode": "row"}
_CUBE_FIXED = {**CUBE_SQRT_N, "n_mode": "fixed"}
_SOFTMAX_ROW = {**SOFTMAX, **ROW_N}
_LM_SCALE = "micro character LM, King James Bible, T = 128, 2,000 steps, book preset"

# --- the character language models against softmax ------------------------------------------------------
LM_VS_SOFTMAX = RegisteredClaim(
    "lm_vs_softmax",
    "Causal character language models: the cubic variants match softmax",
    "paper (the polynomial as a drop-in replacement)", "07_causal",
    registered="2026-11-30",
    comparisons=(
        vs("causal_charlm", _CUBE_ROW, _SOFTMAX_ROW, "per_row_n", "x³/√(i+1) − softmax (bits/char)", "equivalent",
           metric="test_bpc"),
        vs("causal_charlm", _CUBE_FIXED, _SOFTMAX_ROW, "fixed_n", "x³/√T − softmax (bits/char)", "equivalent",
           metric="test_bpc"),
        vs("causal_charlm", {**CUBE_14, **ROW_N}, _SOFTMAX_ROW, "cube_14", "x³/14 − softmax (bits/char)", "equivalent",
           metric="test_bpc"),
    ),
    margin=0.05, margin_commit="fc88187", chance=KJV_UNIGRAM_BPC, chance_band=UNIGRAM_BAND,
    chance_registered_after=CHANCE_LATE, gate=BIGRAM_GATE, gate_registered_after=GATE_LATE,
    registered_after="the first language-model run started five minutes before the margin was committed",
    scale=_LM_SCALE,
    headline="Cubic language models match softmax", answer_row=17, topic="char LM",
)

# --- causal masks: which N scales row i ------------------------------------------------------------------
_LENGTHS = (("test_bpc", "1×"), ("test_bpc_x2", "2×"), ("test_bpc_x4", "4×"))

CAUSAL_SCALING = RegisteredClaim(
    "causal_scaling",
    "Under a causal mask, whether $N$ in $x^3/\\sqrt{N}$ is the keys row $i$ sees ($i + 1$) or the context "
    "$T$ makes no difference",
    "review ICLR 2025", "07_causal",
    registered="2026-11-30",
    comparisons=(
        vs("causal_charlm", _CUBE_FIXED, _CUBE_ROW, "positions_1x", "x³/√T − x³/√(i+1), sinusoidal positions, 1× the "
           "context", "equivalent", metric="test_bpc"),
        *(vs("causal_charlm_nope", _CUBE_FIXED, _CUBE_ROW, f"nope_{m}", f"x³/√T − x³/√(i+1), no positions, {label} the "
             "context", "equivalent", metric=m) for m, label in _LENGTHS),
    ),
    margin=0.05, chance=KJV_UNIGRAM_BPC, chance_band=UNIGRAM_BAND, margin_commit="fc88187",
    chance_registered_after=CHANCE_LATE, gate=BIGRAM_GATE, gate_registered_after=GATE_LATE,
    registered_after="the comparisons were written down after the language-model runs were stored (the margin "
                     "itself was committed five minutes after the first run started)",
    scale=_LM_SCALE + "; models with sinusoidal positions are compared at the training length only (they never saw "
          "positions beyond it)",
    verdict_row=16,
)

NOPE_LM = RegisteredClaim(
    "nope_lm",
    "Without position encodings the cubic language models are worse than softmax",
    "the book's language models (chapter 07)", "07_causal",
    registered="2026-12-02",
    comparisons=(
        vs("causal_charlm_nope", _CUBE_ROW, _SOFTMAX_ROW, "per_row_n", "x³/√(i+1) − softmax, no positions", "worse",
           metric="test_bpc"),
        vs("causal_charlm_nope", _CUBE_FIXED, _SOFTMAX_ROW, "fixed_n", "x³/√T − softmax, no positions", "worse",
           metric="test_bpc"),
    ),
    margin=0.05, chance=KJV_UNIGRAM_BPC, chance_band=UNIGRAM_BAND,
    chance_registered_after="the unigram level was added to this claim on 3 December, after its runs",
    gate=BIGRAM_GATE, gate_registered_after=GATE_LATE,
    registered_after="the first 3 seeds of each model were stored before this claim was registered; seeds 3 "
                     "and 4 were added after",
    scale="micro character LM without positions, King James Bible, T = 128, 2,000 steps, book preset",
    headline="Without positions, cubic LMs are worse", answer_row=18, topic="char LM",
)

# --- the sqrt(N) scaling across training lengths: registered before the first run of its grid ------------
_LS = "causal_length_sweep"
_LS_ROW = {"activation": "poly:p=3", "n_mode": "row"}
_LS_FIXED = {"activation": "poly:p=3", "n_mode": "fixed"}
_LS_CUBE = {"activation": "poly:p=3,c=1", "n_mode": "row"}
_LS_SCALE = ("position-free micro character LM, King James Bible, trained at T = 64, 256 and 1024 with 4,096 "
             "characters a step, 2,000 steps, no gradient clipping, book preset")


def _at(context: int) -> dict:
    return {"options": {"context": context, "windows": (4096 // context) * 500, "eval_windows": 64,
                        "sample_chars": 200, "positions": "none"}}


#: How far a baseline of the sweep may fall behind its own T = 64 result and still count as having learned.
_SWEEP_TOLERANCE = 0.15
#: The sweep's baseline must beat the count-based trigram at every T and stay within the tolerance of its
#: own T = 64 result: a model at the bigram level learned no attention at that length.
SWEEP_GATE = Gate(f"{NGRAM_NAMES[3]} (and within {_SWEEP_TOLERANCE:g} bits/char of its own T = 64 result)",
                  ngram_floor(3), within_of=("options", _at(64)["options"], _SWEEP_TOLERANCE), within_name="T = 64")


LENGTH_SCALE_NEEDED = RegisteredClaim(
    "length_scale_needed",
    "The unscaled $x^3$ falls behind $x^3/\\sqrt{i+1}$ at long training lengths, and its deficit grows with $T$ "
    "(the theory's prediction: the unscaled cube's norms grow with $N$)",
    "paper, Section 4 (the factor must depend on N)", "07_causal",
    registered="2026-12-03",
    comparisons=(
        vs(_LS, {**_LS_CUBE, **_at(1024)}, {**_LS_ROW, **_at(1024)}, "cube_vs_row_1024",
           "x³ − x³/√(i+1), T = 1024", "worse", metric="test_bpc", tier="T = 1024"),
        vs(_LS, {**_LS_CUBE, **_at(256)}, {**_LS_ROW, **_at(256)}, "cube_vs_row_256",
           "x³ − x³/√(i+1), T = 256", "worse", metric="test_bpc", role="description", tier="T = 256"),
        vs(_LS, {**_LS_CUBE, **_at(64)}, {**_LS_ROW, **_at(64)}, "cube_vs_row_64",
           "x³ − x³/√(i+1), T = 64", "worse", metric="test_bpc", role="description", tier="T = 64"),
        vs(_LS, {**_LS_ROW, **_at(1024)}, {"activation": "softmax", "n_mode": "row", **_at(1024)},
           "row_vs_softmax_1024", "x³/√(i+1) − softmax, T = 1024 (control: the scaled cube trains)", "equivalent",
           metric="test_bpc", role="check", tier="T = 1024", margin=0.5),
    ),
    margin=0.05, chance=KJV_UNIGRAM_BPC, chance_band=UNIGRAM_BAND, gate=SWEEP_GATE, gate_registered_after=GATE_LATE,
    notes=("the growth with T is stated as the slope of the paired difference over log2 T with its interval "
           "(chapter 07); the claim's verdict rests on the longest length, where the theory says the factor "
           "matters most", "3 seeds planned from the measured pair spread of the position-free models at T = 128 "
                             "(the design table on the status page)"),
    scale=_LS_SCALE,
)

LENGTH_SCALE_FOLLOWS_N = RegisteredClaim(
    "length_scale_follows_n",
    "A scale fixed for the training length ($x^3/\\sqrt{T}$) falls behind one that follows each row's $N$ "
    "($x^3/\\sqrt{i+1}$) beyond the training length (at 2 times it; 4 times is shown as description)",
    "paper (the factor depends on N); review ICLR 2025 (which N under a causal mask)", "07_causal",
    registered="2026-12-03",
    comparisons=tuple(
        vs(_LS, {**_LS_FIXED, **_at(t)}, {**_LS_ROW, **_at(t)}, f"fixed_vs_row_x2_{t}",
           f"x³/√T − x³/√(i+1), T = {t}, at 2T", "worse", metric="test_bpc_x2", tier="2T")
        for t in (64, 256, 1024)
    ) + tuple(
        vs(_LS, {**_LS_FIXED, **_at(t)}, {**_LS_ROW, **_at(t)}, f"fixed_vs_row_x4_{t}",
           f"x³/√T − x³/√(i+1), T = {t}, at 4T", "worse", metric="test_bpc_x4", tier="4T", role="description")
        for t in (64, 256, 1024)
    ),
    margin=0.05, chance=KJV_UNIGRAM_BPC, chance_band=UNIGRAM_BAND, logic="all", gate=SWEEP_GATE,
    gate_registered_after=GATE_LATE,
    notes=("3 seeds planned; 2T decides and 4T is description, because at T = 128 the position-free models' "
           "paired differences at 4T spread too widely to decide with the seeds this book can run (the design "
           "table on the status page: causal_scaling at 4T)",),
    scale=_LS_SCALE + "; evaluated at 2 and 4 times the training length",
)

# --- the sqrt(N) scaling with rotary positions: registered before the first run of its grid ----------------
_ROPE = "causal_length_rope"
#: The RoPE grids' training budget (``polyattn.experiments.causal_rope.ROPE_STEPS["book"]``; a test keeps them equal).
ROPE_BOOK_STEPS = 2000
_ROPE_SCALE = ("micro character LM with rotary positions on queries and keys, King James Bible, trained at T = 64, "
               f"256 and 1024 with 4,096 characters a step, {ROPE_BOOK_STEPS:,} steps (the smallest probed budget at "
               "which softmax clears the count-based trigram at every T), no gradient clipping, book preset")


def rope_at(context: int) -> dict:
    """The config fields that pick the RoPE grids' runs at training length ``context``."""
    return {"options": {"context": context, "windows": (4096 // context) * (ROPE_BOOK_STEPS // 4), "eval_windows": 64,
                        "sample_chars": 200, "positions": "rope"}}


#: The RoPE sweep's baseline must beat the count-based trigram at every T and stay within the tolerance of its
#: own T = 64 result, as in the position-free sweep.
ROPE_GATE = Gate(f"{NGRAM_NAMES[3]} (and within {_SWEEP_TOLERANCE:g} bits/char of its own T = 64 result)",
                 ngram_floor(3), within_of=("options", rope_at(64)["options"], _SWEEP_TOLERANCE), within_name="T = 64")
_SEEDS_NOTE = ("5 seeds planned: the paired differences of the character models that learned (causal_charlm, "
               "causal_charlm_nope) spread by 0.02 to 0.06 bits/char, at which 3 to 6 pairs decide a difference of "
               "zero or of twice the 0.05 margin (the design table on the status page)")

ROPE_SCALE_NEEDED = RegisteredClaim(
    "rope_scale_needed",
    "With rotary positions, where softmax learns at every training length, the unscaled $x^3$ falls behind "
    "$x^3/\\sqrt{i+1}$ at the longest length, and its deficit grows with $T$ and with the position $i$ in the "
    "sequence (the theory's prediction: the unscaled cube's row norms grow with $N = i + 1$)",
    "paper, Section 4 (the factor must depend on N)", "07_causal",
    registered="2026-12-05",
    comparisons=(
        vs(_ROPE, {**_LS_CUBE, **rope_at(1024)}, {**_LS_ROW, **rope_at(1024)}, "cube_vs_row_1024",
           "x³ − x³/√(i+1), rotary positions, T = 1024", "worse", metric="test_bpc", tier="T = 1024"),
        *(vs(_ROPE, {**_LS_CUBE, **rope_at(t)}, {**_LS_ROW, **rope_at(t)}, f"cube_vs_row_{t}",
             f"x³ − x³/√(i+1), rotary positions, T = {t}", "worse", metric="test_bpc", role="description",
             tier=f"T = {t}") for t in (256, 64)),
        *(vs(_ROPE, {**_LS_FIXED, **rope_at(t)}, {**_LS_ROW, **rope_at(t)}, f"fixed_vs_row_{t}",
             f"x³/√T − x³/√(i+1), rotary positions, T = {t}", "equivalent", metric="test_bpc", role="description",
             tier=f"T = {t}") for t in (1024, 256, 64)),
        vs(_ROPE, {"activation": "uniform", "n_mode": "row", **rope_at(1024)},
           {"activation": "softmax", "n_mode": "row", **rope_at(1024)}, "ablated_1024",
           "uniform attention − softmax, rotary positions, T = 1024 (attention ablated)", "worse", metric="test_bpc",
           role="check", tier="T = 1024", validates=("cube_vs_row_1024",)),
    ),
    margin=0.05, chance=KJV_UNIGRAM_BPC, chance_band=UNIGRAM_BAND, gate=ROPE_GATE,
    notes=("registered on 5 December 2026, before the first run of its grid; its budget was fixed by the softmax "
           "probes of causal_length_probe, which chapter 07 shows",
           "the growth is stated by two registered statistics, each with its 95% t-interval over seeds: the slope of "
           "the paired difference x³ − x³/√(i+1) over log2 T (three lengths), and, at T = 1024, its slope over "
           "log2 of the position bins' upper ends (the test loss binned by position i, stored in each record); the "
           "theory predicts both positive", _SEEDS_NOTE),
    scale=_ROPE_SCALE,
)

# --- attention sinks ---------------------------------------------------------------------------------------
#: One layer-head pair of the micro model's 2 × 4 as a share of them: the sink rate's resolution.
ONE_PAIR = 1 / 8


def _free_rows():
    """The language-model variants whose rows need not sum to one (from the activation registry)."""

    return tuple((label, spec, n_mode) for label, spec, n_mode in CHARLM_VARIANTS
                 if not specs.declare(spec).rows_sum_to_one)


ATTENTION_SINKS = RegisteredClaim(
    "attention_sinks",
    "Attention sinks come from softmax's sum-to-one constraint: activations without it form fewer sinks "
    "than softmax",
    "attention-sink literature", "07_causal",
    registered="2026-12-02",
    comparisons=tuple(
        vs("causal_charlm", {"activation": spec, "n_mode": n_mode}, _SOFTMAX_ROW, f"sinks_{spec}_{n_mode}",
           f"{label.replace('sqrt(T)', '√T').replace('^3', '³').replace('sqrt', '√')} − softmax, sink rate", "better",
           metric="sinks.sink_rate", baseline_null=0.0)
        for label, spec, n_mode in _free_rows()),
    margin=ONE_PAIR, chance_band=ONE_PAIR / 2, chance_registered_after=CHANCE_LATE,
    registered_after="the comparisons were written down after the language-model runs were stored",
    scale="micro character LM, King James Bible, T = 128, 2,000 steps, book preset; sink rate: share of the "
          "2 × 4 layer-head pairs whose mean first-token weight exceeds the threshold; where softmax forms no "
          "sink there is none to have fewer of, and the comparison counts as uninformative",
    verdict_row=17,
)

# --- associative recall (MQAR) -------------------------------------------------------------------------------
#: Said by both MQAR claims: their chance level came after their runs.
_MQAR_CHANCE_LATE = ("the chance level (guessing one of the vocabulary's value tokens at every query) was added to "
                     "this claim on 3 December, after its runs")
_MQAR_CHANCE_NOTE = (f"chance: values are drawn from {mqar_value_tokens(MQAR_VOCAB)} of the {MQAR_VOCAB} tokens, so "
                     f"guessing scores {MQAR_CHANCE:.2f}%; copying some value of the context (the 1/K plateau softmax "
                     "reaches) takes learning and is no chance level")

MQAR = RegisteredClaim(
    "mqar",
    "Associative recall (MQAR): the cubic variants match softmax",
    "the book's question (Zoology's benchmark)", "07_causal",
    registered="2026-12-02",
    comparisons=(
        vs("causal_mqar", _CUBE_ROW, _SOFTMAX_ROW, "per_row_n", "x³/√(i+1) − softmax", "equivalent", metric="acc"),
        vs("causal_mqar", _CUBE_FIXED, _SOFTMAX_ROW, "fixed_n", "x³/√T − softmax", "equivalent", metric="acc"),
        vs("causal_mqar", {**CUBE_14, **ROW_N}, _SOFTMAX_ROW, "cube_14", "x³/14 − softmax", "equivalent", metric="acc"),
    ),
    margin=2.0, chance=MQAR_CHANCE, chance_registered_after=_MQAR_CHANCE_LATE, gate=COPY_PLATEAU_GATE,
    gate_registered_after=GATE_LATE,
    registered_after="this margin was fixed after the MQAR runs were stored",
    notes=(_MQAR_CHANCE_NOTE,),
    scale="MQAR, micro model, six epochs, book preset",
    headline="Cubic variants match on recall (MQAR)", answer_row=19, topic="MQAR",
)

# the negative result, given ten times the training
MQAR_LONG = RegisteredClaim(
    "mqar_long",
    "On associative recall (MQAR) the $\\sqrt{N}$-scaled cubic stays behind softmax even with ten times the "
    "training",
    "the book's MQAR result (chapter 07)", "07_causal",
    registered="2026-12-02",
    comparisons=(
        vs("causal_mqar_long", _CUBE_ROW, _SOFTMAX_ROW, "cube_sqrt_i", "x³/√(i+1) − softmax", "worse", metric="acc"),
        vs("causal_mqar_long", {**CUBE_14, **ROW_N}, _SOFTMAX_ROW, "cube_14", "x³/14 − softmax", "worse",
           metric="acc"),
    ),
    margin=2.0, chance=MQAR_CHANCE, chance_registered_after=_MQAR_CHANCE_LATE, gate=COPY_PLATEAU_GATE,
    gate_registered_after=GATE_LATE,
    notes=(_MQAR_CHANCE_NOTE,),
    scale="MQAR, micro model, 60 epochs (ten times the book's budget), book preset",
    topic="MQAR",
)

# registered before the first run of its grid: recall where softmax learns it
_RECALL = "causal_mqar_recall"
#: Copying some value of the context scores 1/K: the plateau every model reaches before it matches keys.
MQAR_COPY_PLATEAU = 100.0 / MQAR_RECALL_PAIRS
#: A seed learned recall above the plateau's band (1/K times the band factor chapter 07 draws).
_RECALL_BAND = MQAR_COPY_PLATEAU * (PLATEAU_BAND - 1)
_RECALL_VARIANTS = (("per_row_n", _CUBE_ROW, "x³/√(i+1)"), ("fixed_n", _CUBE_FIXED, "x³/√T"),
                    ("cube_14", {**CUBE_14, **ROW_N}, "x³/14"))

MQAR_RECALL = RegisteredClaim(
    "mqar_recall",
    "Where softmax learns associative recall (MQAR), the cubic variants learn it too and match softmax at the "
    "load they were trained on",
    "the book's question (Zoology's benchmark)", "07_causal",
    registered="2026-12-04",
    comparisons=(
        *(vs(_RECALL, act, _SOFTMAX_ROW, cid, f"{label} − softmax, 4 key–value pairs (as trained)", "equivalent",
             metric="acc_L64_K4") for cid, act, label in _RECALL_VARIANTS),
        *(vs(_RECALL, act, _SOFTMAX_ROW, f"{cid}_8_pairs", f"{label} − softmax, 8 key–value pairs (twice the training load)",
             "equivalent", metric="acc_L64_K8", role="description", chance=MQAR_COPY_PLATEAU / 2,
             chance_band=_RECALL_BAND / 2) for cid, act, label in _RECALL_VARIANTS),
    ),
    margin=2.0, chance=MQAR_COPY_PLATEAU, chance_band=_RECALL_BAND,
    notes=(f"the chance level here is the copy plateau, {MQAR_COPY_PLATEAU:g}% (1/K with K = {MQAR_RECALL_PAIRS} "
           f"pairs): a seed within {_RECALL_BAND:g} points of it (the plateau's band, 1/K times {PLATEAU_BAND:g}), "
           "or below, did not learn recall, and the seeds that did are counted with exact intervals",
           "3 seeds planned, with no pilot of the cubic variants at this setting: softmax's probe (the grid "
           "causal_mqar_probe, shown in chapter 07) left the plateau within a few epochs and then stayed near full "
           "recall, so seeds that learn differ by little, and seeds that do not learn are counted, not averaged"),
    scale="MQAR, Zoology's two-layer one-head model of width 64, length 64 with 4 key–value pairs, vocabulary 128, "
          "100 epochs of 8,192 freshly drawn examples, no weight decay, gradients clipped at norm 1, book preset",
    headline="MQAR where softmax learns: cubics match", answer_row=20, topic="MQAR",
)

# --- a survey article's three findings on language models --------------------------------------------------
_POLYS = (("poly2", {"activation": "relu2_norm"}, "Poly2 (ReLU² / row sum)"),
          ("cube_row", _CUBE_ROW, "x³/√(i+1)"), ("cube_fixed", _CUBE_FIXED, "x³/√T"),
          ("cube_14", {**CUBE_14, **ROW_N}, "x³/14"))

SEED_ARTICLE_TABLE = RegisteredClaim(
    "seed_article_table",
    "A survey article's language-model findings (no model, data or source given): polynomial substitutes "
    "are slightly worse than softmax, Softpick mitigates the attention sink, SA-Softmax is best on long contexts",
    "survey article, no source given", "07_causal",
    registered="2026-11-30",
    comparisons=(
        *(vs("causal_charlm", act, _SOFTMAX_ROW, cid, f"{label} − softmax", "worse", metric="test_bpc",
             cited_from=cited)
          for (cid, act, label), cited in zip(_POLYS, (None, "lm_vs_softmax:per_row_n", "lm_vs_softmax:fixed_n",
                                                       "lm_vs_softmax:cube_14"))),
        vs("causal_charlm", {"activation": "softpick"}, _SOFTMAX_ROW, "softpick_sinks", "Softpick − softmax, sink rate",
           "better", metric="sinks.sink_rate", margin=ONE_PAIR, baseline_null=0.0, chance_band=ONE_PAIR / 2),
        vs("causal_charlm", {"activation": "sa_softmax"}, _SOFTMAX_ROW, "sa_softmax_long",
           "SA-Softmax − softmax, 4× the context", "better", metric="test_bpc_x4",
           chance=KJV_UNIGRAM_BPC, chance_band=UNIGRAM_BAND),
    ),
    margin=0.05, margin_commit="fc88187", chance_registered_after=CHANCE_LATE,
    registered_after="the article's findings were first tested by the chapter's own code; these comparisons "
                     "were written down after the runs were stored",
    scale=_LM_SCALE + "; softmax forming no sink (none to mitigate) and bits/char within 0.5 of a unigram model in both "
          "arms (neither model works at that length) count as uninformative",
    verdict_row=18,
)

#: In the order chapter 07 takes them up.
CLAIMS = (LM_VS_SOFTMAX, CAUSAL_SCALING, NOPE_LM, LENGTH_SCALE_NEEDED, LENGTH_SCALE_FOLLOWS_N, ROPE_SCALE_NEEDED,
          ATTENTION_SINKS, MQAR, MQAR_LONG, MQAR_RECALL, SEED_ARTICLE_TABLE)
