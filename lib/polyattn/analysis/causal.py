"""Character language models under a causal mask (chapter 07): tables over seeds, length
generalisation, attention sinks, the collapse of generated text, and a survey article's
table set against the records.

The records are those of the ``causal_charlm`` grid (:mod:`polyattn.experiments.causal`).
Two of its variants share one activation spec (``poly:p=3`` with N per row or fixed), so
the frames here name a run by its *variant* label (in ``activation`` and ``variant``) and
keep the spec in ``spec``; the paired statistics of :mod:`polyattn.analysis.stats` run on
the labels.  Differences are candidate minus baseline, in bits per character (lower is
better) or, for sinks, in the share of layer-head pairs.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from .. import specs
from ..labels import CHARLM_VARIANTS
from ..labels import charlm_label as variant_label
from ..metric_specs import Metric
from .frames import final_metrics
from .metrics import set_metrics
from .stats import POWER, holm, paired_difference, t_interval
from .verdicts import BOOK_FORMS, comparison_verdict, short

#: The equivalence margin for bits per character, fixed before any record was read: 0.05
#: bits/char is a factor 2^0.05 = 1.035 in per-character perplexity, a difference no reader of
#: a language-model table would call material.
EQUIVALENCE_MARGIN = 0.05
#: The test metrics at 1x, 2x and 4x the training context.
LENGTH_METRICS = (("test_bpc", 1), ("test_bpc_x2", 2), ("test_bpc_x4", 4))
ROW, FIXED = "x^3/sqrt(i+1)", "x^3/sqrt(T)"
#: The scalar sink measurements of :func:`polyattn.sinks.sink_report` kept per run.
SINK_FIELDS = ("sink_rate", "sink_rate_normalised", "alpha_mean", "share_mean", "negative_fraction", "row_sum_mean")
SINK_METRICS = {
    "sink_rate": Metric("sink_rate", "share", False, 1.0, "sink rate (first token, raw weights)"),
    "sink_rate_normalised": Metric("sink_rate_normalised", "share", False, 1.0, "sink rate (normalised share)"),
    "alpha_mean": Metric("alpha_mean", "weight", False, 1.0, "mean first-token weight"),
}

#: The survey article's table, as printed (its 实验验证 / 语言建模任务 section): method, the
#: variant of this book that implements its formula, perplexity, "attention sink strength".
SURVEY_SOURCE = ("\u201cSoftmax\u66ff\u4ee3\u65b9\u6848\u4e0eAttention Sink\u95ee\u9898\u201d (Softmax "
                 "alternatives and the attention-sink problem), a Chinese-language web article without author, "
                 "date, model, data or sources; table \u201c\u8bed\u8a00\u5efa\u6a21\u4efb\u52a1\u201d "
                 "(language-modelling task)")
SURVEY_TABLE = (
    ("Softmax", "softmax", 12.34, 0.45),
    ("Poly2", "Poly2 (ReLU^2 / row sum)", 12.56, 0.38),
    ("InvSqrt", "InvSqrt", 12.89, 0.52),
    ("Softpick", "Softpick", 12.21, 0.28),
    ("SA-Softmax", "SA-Softmax", 12.18, 0.31),
)
#: Characters per n-gram in the repetition measure of :func:`collapse_metrics`.
COLLAPSE_NGRAM = 4


def variant_order() -> list[str]:
    return [label for label, _, _ in CHARLM_VARIANTS]


def variant_frame(records: Iterable[dict]) -> pd.DataFrame:
    """One row per run (:func:`~polyattn.analysis.final_metrics`) named by its variant, with
    ``spec``, ``n_mode``, the scalar sink measurements and the generated ``sample``; in the
    grid's variant order, then by seed.  A diverged run keeps NaN measurements."""
    records = list(records)
    final = final_metrics(records)
    metrics = {name: Metric.from_dict(d) for name, d in final.attrs["metrics"].items()}
    ok = [r["status"] == "ok" for r in records]
    summaries = [(r.get("final") or {}) if good else {} for r, good in zip(records, ok)]
    final["spec"] = final["activation"]
    final["n_mode"] = [r["config"].get("n_mode", "row") for r in records]
    final["variant"] = final["activation"] = [variant_label(r["config"]) for r in records]
    for name in SINK_FIELDS:
        final[name] = [float((s.get("sinks") or {}).get(name, np.nan)) for s in summaries]
    final["sample"] = [s.get("sample") for s in summaries]
    order = {label: i for i, label in enumerate(variant_order())}
    final["_order"] = [order.get(v, len(order)) for v in final["variant"]]
    final = final.sort_values(["_order", "seed"], kind="stable").drop(columns="_order").reset_index(drop=True)
    return set_metrics(final, {**metrics, **SINK_METRICS})


def variant_colors() -> dict[str, str]:
    """A distinct colour per variant: the activation's book colour, or the next unused one of
    the fallback palette when two variants would share it (the two readings of N share theirs;
    figures tell them apart by line style)."""
    from ..plotting import FALLBACK_COLORS, activation_color

    out, used = {}, set()
    spare = iter(c for c in FALLBACK_COLORS)
    for label, spec, mode in CHARLM_VARIANTS:
        color = activation_color(spec)
        if color in used and mode == "row":
            color = next(c for c in spare if c not in used)
        out[label] = color
        used.add(color)
    return out


def compare_variants(final: pd.DataFrame, baseline: str = "softmax", metric="test_bpc",
                     margin: Optional[float] = EQUIVALENCE_MARGIN, variants: Optional[Sequence[str]] = None,
                     ) -> pd.DataFrame:
    """:func:`~polyattn.analysis.paired_difference` of every variant (or ``variants``) against the
    variant ``baseline`` (a label), Holm over the rows; ``baseline`` holds the label."""
    frame = final if variants is None else final[final["activation"].isin([*variants, baseline])]
    base = frame.loc[frame["activation"] == baseline, "spec"]
    if base.empty:
        raise ValueError(f"compare_variants: no run of the baseline {baseline!r}; variants present: "
                         f"{list(dict.fromkeys(final['activation']))}")
    spec = specs.canonical(base.iloc[0])
    if ((frame["activation"] == spec) & (frame["activation"] != baseline)).any():
        raise ValueError(f"compare_variants: a variant other than {baseline!r} is labelled {spec!r}")
    frame = frame.copy()
    frame.attrs = dict(final.attrs)
    frame.loc[frame["activation"] == baseline, "activation"] = spec      # paired_difference wants a spec
    out = paired_difference(frame, baseline=spec, metric=metric, margin=margin)
    out["baseline"] = baseline
    return out


def _refamily(frames: list[pd.DataFrame], extra: dict) -> pd.DataFrame:
    """Several comparison tables as one family: concatenated, with Holm over all their rows."""
    parts = [f.assign(**{k: v[i] for k, v in extra.items()}) for i, f in enumerate(frames)]
    out = pd.concat(parts, ignore_index=True)
    out["p_holm"] = holm(out["t_p"].to_numpy(dtype=float))
    out["family_size"] = int(out["t_p"].notna().sum())
    return out


def row_vs_fixed(final: pd.DataFrame, margin: float = EQUIVALENCE_MARGIN) -> pd.DataFrame:
    """N = T minus N = i + 1 for x^3/sqrt(N), per evaluation length (``multiple``), Holm over the lengths."""
    frames = [compare_variants(final, ROW, name, margin, variants=[FIXED]) for name, _ in LENGTH_METRICS]
    return _refamily(frames, {"multiple": [m for _, m in LENGTH_METRICS]})


def positions_effect(sinusoidal: pd.DataFrame, nope: pd.DataFrame, margin: float = EQUIVALENCE_MARGIN) -> pd.DataFrame:
    """Per variant of ``nope`` (the runs without position encodings) and evaluation length, the
    same-seed difference NoPE minus sinusoidal positions in test bits/char; Holm over all rows.
    Columns of :func:`~polyattn.analysis.paired_difference` plus ``variant`` and ``multiple``."""
    missing = sorted(set(nope["variant"]) - set(sinusoidal["variant"]))
    if missing:
        raise ValueError(f"positions_effect: no run with sinusoidal positions of {missing}")
    both = pd.concat([sinusoidal[sinusoidal["variant"].isin(set(nope["variant"]))].assign(positions="sinusoidal"),
                      nope.assign(positions="none")], ignore_index=True)
    both.attrs = dict(nope.attrs)
    frames = [paired_difference(both, baseline="sinusoidal", by="variant", metric=name, margin=margin,
                                key="positions") for name, _ in LENGTH_METRICS]
    return _refamily(frames, {"multiple": [m for _, m in LENGTH_METRICS]})


def lengths_vs_softmax(final: pd.DataFrame, margin: float = EQUIVALENCE_MARGIN) -> pd.DataFrame:
    """Every variant against softmax at each evaluation length (Holm within each length)."""
    return pd.concat([compare_variants(final, "softmax", name, margin).assign(multiple=m)
                      for name, m in LENGTH_METRICS], ignore_index=True)


def _ci_text(vals, digits=3) -> str:
    m, lo, hi = t_interval(vals)
    if m != m:
        return "diverged"
    return f"{m:.{digits}f}" if lo != lo else f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def results_table(final: pd.DataFrame, diffs: pd.DataFrame) -> pd.DataFrame:
    """Per variant: validation and test bits/char as mean [95% t-interval] over seeds, and the
    paired difference from ``diffs``' baseline with its interval, p-values, TOST, MDE and form."""
    d = diffs.set_index("activation")
    base = diffs["baseline"].iloc[0] if len(diffs) else "softmax"
    margin = float(diffs["margin"].iloc[0]) if len(diffs) else np.nan
    rows = []
    for variant, g in final.groupby("activation", sort=False):
        row = {"variant": variant, "spec": g["spec"].iloc[0], "N": "T" if g["n_mode"].iloc[0] == "fixed" else "i+1",
               "seeds": f"{int((g['status'] == 'ok').sum())} of {len(g)}",
               "val bits/char": _ci_text(g["val_bpc"]), "test bits/char": _ci_text(g["test_bpc"])}
        if variant in d.index:
            x = d.loc[variant]
            p = lambda v: "" if v != v else f"{v:.2g}"
            row.update({f"Δ test vs {base}": f"{x['mean_diff']:+.3f}" if x["n_pairs"] else "diverged",
                        "95% CI": "" if x["ci_low"] != x["ci_low"] else f"[{x['ci_low']:+.3f}, {x['ci_high']:+.3f}]",
                        "paired t p": p(x["t_p"]), "Holm p": p(x["p_holm"]),
                        f"TOST p (±{margin:g})": p(x["tost_p"]), "MDE": "" if x["mde"] != x["mde"] else f"{x['mde']:.3f}",
                        "verdict": comparison_verdict(x, name=variant).form})
        elif variant == base:
            row[f"Δ test vs {base}"] = "baseline"
        rows.append(row)
    return pd.DataFrame(rows).fillna("")


def length_summary(final: pd.DataFrame) -> pd.DataFrame:
    """Mean test bits/char and its 95% t-interval per variant and evaluation length."""
    rows = []
    for variant, g in final.groupby("activation", sort=False):
        for name, m in LENGTH_METRICS:
            mean, lo, hi = t_interval(g[name])
            rows.append({"variant": variant, "spec": g["spec"].iloc[0], "n_mode": g["n_mode"].iloc[0],
                         "multiple": m, "length": m * int(g["seq_len"].iloc[0]), "mean": mean, "ci_low": lo,
                         "ci_high": hi, "n": int(g[name].notna().sum())})
    return pd.DataFrame(rows)


def sink_table(final: pd.DataFrame) -> pd.DataFrame:
    """Per variant: the declared properties of its weights and each sink measurement's mean and
    standard deviation over seeds."""
    rows = []
    for variant, g in final.groupby("activation", sort=False):
        act = specs.declare(g["spec"].iloc[0])
        row = {"variant": variant, "spec": act.spec, "nonnegative": act.nonnegative,
               "rows_sum_to_one": act.rows_sum_to_one, "n": int(g["sink_rate"].notna().sum())}
        for name in SINK_FIELDS:
            vals = g[name].dropna()
            row[f"{name}_mean"] = vals.mean() if len(vals) else np.nan
            row[f"{name}_sd"] = vals.std(ddof=1) if len(vals) > 1 else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def collapse_metrics(text: str, n: int = COLLAPSE_NGRAM) -> dict:
    """Degeneracy measures of a generated text: its length, whether it is blank (empty or
    whitespace), the number of distinct characters, the share of its n-grams that repeat an
    earlier one (0: all distinct; near 1: a loop) and the longest run of one character."""
    grams = [text[i:i + n] for i in range(len(text) - n + 1)]
    run = best = 0
    for i, ch in enumerate(text):
        run = run + 1 if i and ch == text[i - 1] else 1
        best = max(best, run)
    return {"length": len(text), "blank": not text.strip(), "distinct_chars": len(set(text)),
            "repeated_ngram_share": 1 - len(set(grams)) / len(grams) if grams else np.nan, "longest_run": best}


def reference_ranges(text: str, length: int, windows: int = 200, n: int = COLLAPSE_NGRAM) -> dict:
    """The range of :func:`collapse_metrics` over consecutive ``length``-character windows of real
    text (the first ``windows`` of them): what real text of that length does."""
    if length < n:
        raise ValueError(f"reference windows of {length} characters hold no {n}-gram")
    count = min(windows, len(text) // length)
    if count < 1:
        raise ValueError(f"a text of {len(text)} characters has no window of {length}")
    m = pd.DataFrame([collapse_metrics(text[i * length:(i + 1) * length], n) for i in range(count)])
    return {"windows": count, "length": length, "min_distinct_chars": int(m["distinct_chars"].min()),
            "max_repeated_ngram_share": float(m["repeated_ngram_share"].max()),
            "max_longest_run": int(m["longest_run"].max())}


def collapse_check(samples: Mapping[str, str], reference: dict, n: int = COLLAPSE_NGRAM) -> pd.DataFrame:
    """One row per sample: :func:`collapse_metrics` and ``collapsed`` when the sample is blank or
    leaves the range of real text (fewer distinct characters or more repeated n-grams than any
    reference window: a loop, a run of one character included), with the ``reasons``.  The
    longest run is reported, not judged: a run of spaces or a doubled letter is not collapse."""
    rows = []
    for label, text in samples.items():
        m = collapse_metrics(text or "", n)
        reasons = []
        if m["blank"]:
            reasons.append("blank")
        if m["distinct_chars"] < reference["min_distinct_chars"]:
            reasons.append("few distinct characters")
        if m["repeated_ngram_share"] > reference["max_repeated_ngram_share"]:
            reasons.append(f"repeated {n}-grams")
        rows.append({"variant": label, **m, "collapsed": bool(reasons), "reasons": ", ".join(reasons)})
    return pd.DataFrame(rows)


def survey_comparison(final: pd.DataFrame) -> pd.DataFrame:
    """The survey article's table next to this book's numbers for the same methods: perplexity
    (the article's, and this book's per character, 2^bits) and its ratio to softmax's, the
    article's sink strength and this book's sink rate and first-token weight; ranks (1 = lowest)."""
    base = final.loc[final["activation"] == "softmax", "test_bpc"].mean()
    base_ppl = dict((m[1], m[2]) for m in SURVEY_TABLE)["softmax"]
    rows = []
    for method, variant, ppl, sink in SURVEY_TABLE:
        g = final[final["activation"] == variant]
        bpc = g["test_bpc"].mean()
        rows.append({"method": method, "variant": variant, "survey perplexity": ppl,
                     "survey ratio to softmax": ppl / base_ppl, "survey sink strength": sink,
                     "book perplexity per char": 2 ** bpc, "book ratio to softmax": 2 ** (bpc - base),
                     "book sink rate": g["sink_rate"].mean(), "book first-token weight": g["alpha_mean"].mean()})
    out = pd.DataFrame(rows)
    for col in ("survey perplexity", "book perplexity per char", "survey sink strength", "book sink rate"):
        out[f"rank: {col}"] = out[col].rank(method="min").astype("Int64")
    return out


def rank_agreement(a: Sequence[float], b: Sequence[float]) -> dict:
    """How far two orderings of the same methods agree: pairs ordered alike (``concordant``),
    oppositely (``discordant``) or tied in either (``ties``), and Spearman's rho (NaN when a
    column is constant or has fewer than three finite values)."""
    from scipy import stats

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    con = dis = ties = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            s = np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])
            con, dis, ties = con + (s > 0), dis + (s < 0), ties + (s == 0)
    rho = float(stats.spearmanr(x, y)[0]) if len(x) >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0 else np.nan
    return {"pairs": con + dis + ties, "concordant": int(con), "discordant": int(dis), "ties": int(ties), "rho": rho}


def register_results(claim_verdict) -> dict:
    """The comparisons of a registered claim on the causal grids
    (:func:`polyattn.claims.evaluate.evaluate`), by the variant label of their candidate."""
    return {variant_label(r.comparison.candidate.fields): r for r in claim_verdict.comparisons}


def describe(v, digits: int = 3) -> str:
    """One comparison in a sentence at the precision bits per character need: the names, the
    form in the book's words, :func:`short`, and what an inconclusive one could have detected."""
    text = f"{v.name} minus {v.baseline}: {BOOK_FORMS[v.form]}, {short(v, digits)}"
    if v.form == "inconclusive" and v.mde == v.mde:
        text += f"; these seeds could have detected ±{v.mde:.{digits}f} {v.unit} (power {POWER:g})"
    return text
