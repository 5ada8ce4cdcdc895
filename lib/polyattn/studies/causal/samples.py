"""Chapter 07's section on generated text and attention maps: the lowest seed's samples, whether
they collapsed against windows of real test text, and the first layer's attention maps.

    glue_values(collapse_numbers(lm))
    glue_folded("ch07_fold_samples", Markdown(samples_markdown(lm)))
    glue_folded("ch07_fold_collapse", collapse_table(lm))
    found = attention_maps(lm); glue_values(map_numbers(lm, found)); map_figure(found, preset)

``lm`` is :func:`polyattn.studies.causal.page.charlm_runs` of the page.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...analysis import causal as ca
from ...analysis.tables import number_cell
from ...book.deliver import styled
from ...labels import charlm_label
from .page import Runs, scale_caption, show

# --- generated text -----------------------------------------------------------------------------------------


def _samples(lm: Runs) -> tuple[dict, list, str]:
    """The lowest seed's samples by variant, the variants without one (diverged) and the prompt."""
    from ...tasks.charlm import DEFAULTS

    final = lm.frame
    first = final[final["seed"] == final["seed"].min()].set_index("activation")
    samples = {v: first.loc[v, "sample"] for v in first.index if first.loc[v, "status"] == "ok"}
    prompt = next((r["final"]["prompt"] for r in lm.records if r.get("final")), DEFAULTS["prompt"])
    return samples, [v for v in first.index if v not in samples], prompt


def samples_markdown(lm: Runs) -> str:
    """The samples as a fenced text block, one line per variant after the prompt."""
    if not lm:
        return ""
    samples, _, prompt = _samples(lm)
    width = max(len(show(v)) for v in samples)
    lines = [f"{show(v):<{width}}  {prompt}" + s.replace("\n", "⏎").replace("`", "'") for v, s in samples.items()]
    return "```text\n" + "\n".join(lines) + "\n```"


def _test_text(lm: Runs) -> str:
    from ...tasks import get_task

    data = get_task("charlm").load(lm.grid[0], 1, 0)
    return data.vocab.decode(data.stream("test"))


def collapse(lm: Runs) -> tuple[pd.DataFrame, dict]:
    """:func:`polyattn.analysis.causal.collapse_check` of the lowest seed's samples against windows
    of real test text of the same length, and that reference."""
    samples, _, _ = _samples(lm)
    reference = ca.reference_ranges(_test_text(lm), lm.grid[0].options["sample_chars"])
    return ca.collapse_check(samples, reference), reference


def collapse_table(lm: Runs):
    """Per sample: distinct characters, repeated 4-grams, longest run and whether it collapsed."""
    if not lm:
        return None
    check, reference = collapse(lm)
    rows = [{"variant": show(r["variant"]), "distinct characters": int(r["distinct_chars"]),
             "repeated 4-grams (share)": number_cell(r["repeated_ngram_share"], ".3g"),
             "longest run of one character": int(r["longest_run"]),
             "collapsed": ("yes: " + r["reasons"]) if r["collapsed"] else "no"} for _, r in check.iterrows()]
    return styled(rows, (
        f"Samples of {reference['length']} characters from the lowest seed's models against "
        f"{reference['windows']} windows of real test text of that length: at least {reference['min_distinct_chars']} "
        f"distinct characters, at most {reference['max_repeated_ngram_share']:.2f} of 4-grams repeated, runs of at most "
        f"{reference['max_longest_run']} equal characters. {scale_caption(lm)}"))


def collapse_numbers(lm: Runs) -> dict:
    """How many samples collapsed (and which), which variants produced none, and the reference windows."""
    keys = ("ch07_ref_windows", "ch07_collapsed", "ch07_collapsed_which", "ch07_no_sample")
    if not lm:
        return dict.fromkeys(keys, lm.missing)
    check, reference = collapse(lm)
    _, missing, _ = _samples(lm)
    bad = check[check["collapsed"]]
    return {"ch07_ref_windows": reference["windows"], "ch07_collapsed": f"{len(bad)} of {len(check)}",
            "ch07_collapsed_which": "; ".join(f"{show(r.variant)} ({r.reasons})" for r in bad.itertuples()) or "none",
            "ch07_no_sample": ", ".join(show(v) for v in missing) or "none"}


# --- attention maps -----------------------------------------------------------------------------------------


def attention_maps(lm: Runs) -> dict:
    """Per variant the first layer's map of the lowest seed whose record holds one, as ``maps``
    (variant -> [heads, t, t]), with ``source`` (variant -> where it comes from), ``window`` (the
    text), ``diverged`` and ``missing`` (variants without a map).  Under the smoke preset a record
    written before records kept maps is retrained from its configuration (seconds)."""
    if not lm:
        return {"maps": {}, "source": {}, "window": "", "diverged": [], "missing": []}
    by_variant: dict = {}
    for r, c in sorted(zip(lm.records, lm.grid), key=lambda rc: rc[0]["seed"]):
        by_variant.setdefault(charlm_label(r["config"]), []).append((r, c))
    maps, source, window = {}, {}, ""
    chosen = {v: next(((r, c) for r, c in rcs if (r.get("final") or {}).get("attention_map")), rcs[0])
              for v, rcs in by_variant.items()}
    for variant in [v for v in ca.variant_order() if v in chosen]:
        rec, config = chosen[variant]
        amap = (rec.get("final") or {}).get("attention_map")
        where = f"the seed-{rec['seed']} record"
        if amap is None and rec["status"] == "ok" and lm.preset == "smoke":
            from ...train import train_with_model

            amap = train_with_model(config)[0]["final"]["attention_map"]
            where = "retrained from its record's configuration and seed"
        if amap is not None:
            maps[variant], source[variant], window = np.asarray(amap["weights"]), where, amap["text"]
    diverged = [v for v in chosen if chosen[v][0]["status"] != "ok"]
    missing = [v for v in chosen if v not in maps and v not in diverged]
    return {"maps": maps, "source": source, "window": window, "diverged": diverged, "missing": missing}


#: A head whose share of non-zero weights (below the diagonal, on the map's window) is under this is
#: drawn as its count, not as a near-blank map.
MAP_SPARSE = 0.05


def _nonzero(head) -> tuple[int, int]:
    """How many of a head's visible (causal) weights are non-zero, and how many there are."""
    visible = np.tril(np.ones(head.shape, dtype=bool))
    return int((np.abs(head[visible]) > 0).sum()), int(visible.sum())


def sparse_heads(found: dict) -> dict[str, list[tuple[int, int, int]]]:
    """Per variant the heads (numbered from 1) whose share of non-zero weights is under
    :data:`MAP_SPARSE`, each as (head, non-zero weights, weights)."""
    out: dict = {}
    for variant, m in found["maps"].items():
        for h in range(m.shape[0]):
            k, n = _nonzero(m[h])
            if k < MAP_SPARSE * n:
                out.setdefault(variant, []).append((h + 1, k, n))
    return out


def map_figure(found: dict, preset: str):
    """One row per variant, one column per head; each head's weights divided by its largest absolute
    weight (so that no panel is blank where a head's weights are small), one colour scale centred at
    zero for all; a head with almost no non-zero weight (:func:`sparse_heads`) shows their count."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    from ...plotting import stamp

    maps = found["maps"]
    if not maps:
        return None
    sparse = {(v, h - 1): (k, n) for v, heads in sparse_heads(found).items() for h, k, n in heads}
    heads = next(iter(maps.values())).shape[0]
    fig, axes = plt.subplots(len(maps), heads, figsize=(1.25 * heads + 2.6, 1.25 * len(maps) + 0.9), squeeze=False,
                             layout="constrained")
    norm = TwoSlopeNorm(vmin=-1.0, vcenter=0.0, vmax=1.0)
    im = None
    for i, (variant, m) in enumerate(maps.items()):
        for h in range(heads):
            ax = axes[i, h]
            if (variant, h) in sparse:
                k, n = sparse[(variant, h)]
                ax.text(0.5, 0.5, f"{k} of {n}\nweights\nnot zero", ha="center", va="center", fontsize=9,
                        transform=ax.transAxes)
            else:
                peak = float(np.abs(m[h]).max()) or 1.0
                im = ax.imshow(m[h] / peak, cmap="RdBu_r", norm=norm, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if i == 0:
                ax.set_title(f"head {h + 1}", fontsize=10)
        axes[i, 0].set_ylabel(show(variant).replace(" (", "\n("), fontsize=10, rotation=0, ha="right", va="center")
    if im is not None:
        cbar = fig.colorbar(im, ax=list(axes.flat), fraction=0.03, pad=0.02, shrink=0.4)
        cbar.set_label("weight ÷ the head's largest |weight|", fontsize=9)
        cbar.ax.tick_params(labelsize=9)
    # the axes of every map, once for all panels; the second line leaves room for the stamp
    fig.supxlabel("each map: query position i (rows, top to bottom) × key position j (columns, left to right)\n ",
                  fontsize=10)
    stamp(fig, preset, "layer 1, lowest seed with a stored map")
    return fig


def map_numbers(lm: Runs, found: dict) -> dict:
    """The window's text, where the maps come from (:func:`attention_maps` of ``lm``), which variants
    have none, each map's share of negative entries, and the heads drawn as a count of their non-zero
    weights (:func:`sparse_heads`, under ``ch07_map_sparse_share`` of them)."""
    share = {"ch07_map_sparse_share": f"{MAP_SPARSE:.0%}"}
    if not lm:
        return {**share, **dict.fromkeys(("ch07_map_window", "ch07_map_source", "ch07_map_absent", "ch07_map_neg",
                                          "ch07_map_sparse"), lm.missing)}
    by_source: dict = {}
    for v, src in found["source"].items():
        by_source.setdefault(src, []).append(show(v))
    everyone = len(by_source) == 1
    source = "; ".join(("every variant: " if everyone else ", ".join(vs) + ": ") + src for src, vs in by_source.items())
    absent = [f"{show(v)} (diverged)" for v in found["diverged"]] + [
        f"{show(v)} (its record was written before records kept a map)" for v in found["missing"]]
    neg = ", ".join(f"{show(v)} {float((m < 0).mean()):.2f}" for v, m in found["maps"].items())
    sparse = "; ".join(f"{show(v)} head{'s' if len(hs) > 1 else ''} "
                       + ", ".join(str(h) for h, _, _ in hs) + " (" + ", ".join(f"{k}" for _, k, _ in hs)
                       + f" of {hs[0][2]} weights not zero)" for v, hs in sparse_heads(found).items())
    return {**share, "ch07_map_window": repr(found["window"]).replace("`", "'") if found["window"] else "none",
            "ch07_map_source": source or "no map is stored", "ch07_map_absent": "; ".join(absent) or "none",
            "ch07_map_neg": neg or "no map is available at this preset", "ch07_map_sparse": sparse or "none"}
