"""Chapter 07's variants and setup: the variants as a table read from the activation registry (each
weights' formula on one line), how its comparisons are judged, and what the models, data and
training are.

    variants_table()                                         # reading of N, weights, non-negative, sum to one
    glue_values({**setup_numbers(lm), **judging_numbers()})  # the numbers the prose quotes
    glue_folded("ch07_fold_setup", setup_table(lm))          # the setup, for a folded block

``lm`` is :func:`polyattn.studies.causal.page.charlm_runs` of the page.
"""
from __future__ import annotations

from ... import analysis
from ...book.deliver import styled
from ...claims import claim
from ...formulas import math_formula
from ...labels import CHARLM_VARIANTS
from .page import MULTIPLES, Runs, compact, show, training_steps

# --- the variants and how comparisons are judged ------------------------------------------------------


def _group(text: str, i: int) -> tuple[str, int]:
    """The braced group of ``text`` that opens at ``i`` and the index after it."""
    depth = 0
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1:j], j + 1
    raise ValueError(f"unbalanced braces in {text!r}")


def _bare(term: str, denominator: bool = False) -> str:
    """``term`` in brackets where an operator outside any bracket would bind wrongly next to a slash:
    a sum or difference on either side, and a quotient or product in a denominator."""
    operators = (" + ", " - ") + ((" / ", " \\cdot ") if denominator else ())
    depth = 0
    for k, ch in enumerate(term):
        depth += {"(": 1, "{": 1, "[": 1, ")": -1, "}": -1, "]": -1}.get(ch, 0)
        if depth == 0 and any(term.startswith(op, k) for op in operators):
            return f"({term})"
    return term


def inline_formula(formula: str) -> str:
    """A LaTeX formula with each ``\\frac{a}{b}`` written ``a / b`` on one line (brackets where they
    are needed), so that a table row stays one line high; ``\\tfrac`` stays as it is."""
    out, i = "", 0
    while (k := formula.find("\\frac{", i)) >= 0:
        numerator, j = _group(formula, k + 5)
        denominator, j = _group(formula, j)
        out += formula[i:k] + f"{_bare(inline_formula(numerator))} / {_bare(inline_formula(denominator), denominator=True)}"
        i = j
    return out + formula[i:]


def _math(latex: str) -> str:
    """Inline maths in a table cell of HTML, as the page typesets it."""
    return f'<span class="math notranslate nohighlight">\\({latex}\\)</span>'


def variants_table():
    """The variants as a compact table read from the activation registry: the reading of N, the
    weights' formula on one line and whether they are non-negative and rows sum to one."""
    from ... import activations
    yes_no = {True: "yes", False: "no"}
    rows = []
    for label, spec, mode in CHARLM_VARIANTS:
        act = activations.get(spec)
        formula = math_formula(act.description).strip("$")
        rows.append({"variant": show(label), "N": _math("i + 1" if mode == "row" else "T"),
                     "weights": _math(inline_formula(formula)), "non-negative": yes_no[act.nonnegative],
                     "rows sum to one": yes_no[act.rows_sum_to_one]})
    return compact(styled(rows, "The variants, read from the activation registry (s: a score, N: the keys a row sees)"),
                   ["weights"])


def judging_numbers() -> dict:
    """The margin of the language-model claims with its note and perplexity ratio, α and the power."""
    c = claim("lm_vs_softmax")
    return {"ch07_n_variants": len(CHARLM_VARIANTS), "ch07_margin": f"±{c.margin:g}",
            "ch07_margin_note": c.registered_after or "fixed before its runs",
            "ch07_margin_ratio": f"{2 ** c.margin:.3f}", "ch07_alpha": f"{analysis.ALPHA:g}",
            "ch07_power": f"{analysis.POWER:g}"}


# --- setup ------------------------------------------------------------------------------------------


def setup_table(lm: Runs):
    """What the models, data and training are (a two-column table)."""
    from ... import sinks
    from ...models.char_lm import LM_SIZES
    from ...tasks.charlm import DEFAULTS, MAP_TOKENS, SINK_WINDOWS

    cfg = lm.grid[0]
    opts, size = cfg.options, LM_SIZES[cfg.model]
    sampling = next((r["final"]["sampling"] for r in lm.records if r.get("final")),
                    {"temperature": DEFAULTS["temperature"], "top_k": DEFAULTS["top_k"], "seed": "?"})
    n_params = next((int(r["n_params"]) for r in lm.records if r.get("n_params")), None)
    rows = [
        ("corpus", _corpus(lm)),
        ("model", f"{cfg.model}: {size['depth']} layers, width {size['dim']}, {size['heads']} heads, pre-LN "
                  "blocks, sinusoidal positions (defined at any length), token embeddings at unit scale"
                  + (f"; {n_params:,} parameters" if n_params else "")),
        ("context T (training)", f"{opts['context']} characters"),
        ("evaluation lengths", ", ".join(f"{m}x = {m * opts['context']}" for m in MULTIPLES)
         + f" characters; {opts['eval_windows']} windows at 1x (fewer at longer lengths: the same first "
           f"{opts['eval_windows'] * opts['context']:,} test characters each time)"),
        ("training", f"{training_steps(cfg):,} steps of {cfg.batch_size} random windows ({cfg.epochs} epoch(s) of "
                     f"{opts['windows']:,} windows); AdamW lr {cfg.lr:g}, weight decay {cfg.weight_decay:g}, "
                     f"warm-up {cfg.warmup_epochs:g} epoch(s) then cosine to {cfg.min_lr:g}; gradients clipped "
                     f"at norm {cfg.clip_grad:g}"),
        ("seeds", f"{len({c.seed for c in lm.grid})} per variant "
                  f"({', '.join(str(s) for s in sorted({c.seed for c in lm.grid}))}), paired across variants"),
        ("samples", f"{opts['sample_chars']} characters after the prompt {DEFAULTS['prompt']!r}, temperature "
                    f"{sampling['temperature']:g}, top-k {sampling['top_k']}, sampling seed {sampling['seed']}, "
                    "the lowest seed's model"),
        ("sinks and maps", f"{SINK_WINDOWS} test windows of {sinks.SINK_WINDOW} characters after training; "
                           f"threshold {sinks.SINK_EPS:g}; the first layer's map on the first window's first "
                           f"{MAP_TOKENS} characters"),
        ("preset and compute", f"{lm.preset}; {lm.budget}"),
    ]
    return styled([{"": k, "this chapter": v} for k, v in rows])


def _corpus(lm: Runs) -> str:
    """The corpus in words: its split by book and size, when the preset loads it."""
    from ...tasks import get_task

    cfg = lm.grid[0]
    if not lm:
        return f"{cfg.dataset} ({lm.missing})"
    data = get_task("charlm").load(cfg, 1, 0)
    chars = {s: len(data.stream(s)) for s in ("train", "validation", "test")}
    size = (f" ({chars['train']:,} / {chars['validation']:,} / {chars['test']:,} characters; "
            f"{len(data.vocab)} symbols)")
    if cfg.dataset != "bible_kjv":
        return f"generated text ({cfg.dataset}), for the pipeline check only" + size
    return (f"King James Bible (Debian's bible-kjv), split by book: test {', '.join(data.books['test'])}; "
            f"validation {', '.join(data.books['validation'])}; the other {len(data.books['train'])} books "
            "train" + size)


def setup_numbers(lm: Runs) -> dict:
    """The setup's numbers the prose quotes."""
    from ... import sinks
    from ...tasks.charlm import MAP_TOKENS, SINK_WINDOWS

    cfg = lm.grid[0]
    return {"ch07_context": cfg.options["context"], "ch07_steps": f"{training_steps(cfg):,}",
            "ch07_n_seeds": len({c.seed for c in lm.grid}), "ch07_eps": f"{sinks.SINK_EPS:g}",
            "ch07_sink_window": sinks.SINK_WINDOW, "ch07_sink_windows": SINK_WINDOWS, "ch07_map_tokens": MAP_TOKENS}

