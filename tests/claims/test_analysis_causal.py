"""The causal-LM analysis of chapter 07 on synthetic records with planted answers."""
import math
from types import SimpleNamespace

import numpy as np
import pytest

from polyattn.analysis import causal as C
from polyattn.analysis import comparison_verdict
from polyattn.experiments import causal
from polyattn.results import config_dict
from polyattn.tasks.charlm import CharLanguageModel

SEEDS = (0, 1, 2)
NOISE = (0.0, 0.02, -0.02)          # shared by every variant of a seed: the pairing removes it


def make_record(label, seed, bpc, x2=None, x4=None, sink_rate=0.0, alpha=0.1, sample="and the lord said",
                status="ok"):
    cfg = next(c for c in causal.charlm("smoke", seeds=[seed]) if causal.variant_label(c) == label)
    task = CharLanguageModel()
    last = {"epoch": 1, "step": 8, "train_bpc": bpc + 0.1, "val_bpc": bpc + 0.05, "test_bpc": bpc,
            "test_bpc_x2": bpc if x2 is None else x2, "test_bpc_x4": bpc if x4 is None else x4}
    sinks = {"sink_rate": sink_rate, "sink_rate_normalised": sink_rate, "alpha_mean": alpha, "share_mean": alpha,
             "negative_fraction": 0.0, "row_sum_mean": 1.0, "alpha": [[alpha] * 4] * 2}
    return {"schema": 1, "experiment": "causal_charlm", "config": config_dict(cfg), "config_hash": cfg.hash,
            "seed": seed, "preset": "smoke", "status": status, "diverged_step": None if status == "ok" else 3,
            "task": "charlm", "seq_lens": task.seq_lens(cfg), "metrics_spec": [m.as_dict() for m in task.metrics(cfg)],
            "metrics": [last], "probes": [], "n_params": 1000,
            "final": {"sample": sample, "sinks": sinks} if status == "ok" else None,
            "provenance": {"git_commit": "abc", "git_dirty": False, "wall_s": 1.0, "hardware": {}, "packages": {}}}


def planted(diff=None, x4=None, sinks=None, base=2.0):
    """Every variant at softmax + its planted difference (+ a small per-seed jitter)."""
    diff, x4, sinks = diff or {}, x4 or {}, sinks or {}
    recs = []
    for s, eps in zip(SEEDS, NOISE):
        for label in C.variant_order():
            jitter = 0.002 * (s - 1) if label != "softmax" else 0.0
            b = base + eps + diff.get(label, 0.0) + jitter
            recs.append(make_record(label, s, b, x2=b, x4=b + x4.get(label, 0.0),
                                    sink_rate=sinks.get(label, 0.0) + (0.01 * s if label in sinks else 0.0)))
    return recs


def test_variant_frame_names_runs_by_variant_in_grid_order():
    recs = planted()[::-1]                         # reversed: the frame restores the grid's order
    f = C.variant_frame(recs)
    assert list(dict.fromkeys(f["variant"])) == C.variant_order()
    assert (f["activation"] == f["variant"]).all()
    row = f[f["variant"] == C.FIXED].iloc[0]
    assert row["spec"] == "poly:p=3" and row["n_mode"] == "fixed"
    assert set(f[f["spec"] == "poly:p=3"]["variant"]) == {C.ROW, C.FIXED}
    assert list(f[f["variant"] == "softmax"]["seed"]) == list(SEEDS)
    assert f["sample"].iloc[0] == "and the lord said" and (f["sink_rate"] == 0).all()
    assert "sink_rate" in f.attrs["metrics"] and "test_bpc_x4" in f.attrs["metrics"]


def test_diverged_run_keeps_its_row_with_nan_measurements():
    recs = planted()
    recs[1] = make_record(causal.variant_label(recs[1]["config"]), 0, 2.0, status="diverged")
    f = C.variant_frame(recs)
    bad = f[f["status"] == "diverged"].iloc[0]
    assert math.isnan(bad["test_bpc"]) and math.isnan(bad["sink_rate"]) and not isinstance(bad["sample"], str)


def test_compare_variants_recovers_planted_differences_and_takes_a_label_as_baseline():
    f = C.variant_frame(planted({"Softpick": -0.3, C.FIXED: 0.2}))
    d = C.compare_variants(f).set_index("activation")
    assert len(d) == len(C.variant_order()) - 1 and d["family_size"].iloc[0] == len(d)
    assert d.loc["Softpick", "mean_diff"] == pytest.approx(-0.3, abs=1e-9)
    assert d.loc["Softpick", "ci_high"] < 0 and d.loc["Softpick", "p_holm"] < 0.05
    assert d.loc["SSMax", "mean_diff"] == pytest.approx(0.0, abs=1e-9)
    assert (d["baseline"] == "softmax").all()
    r = C.compare_variants(f, baseline=C.ROW, variants=[C.FIXED])
    assert list(r["activation"]) == [C.FIXED] and r["baseline"].iloc[0] == C.ROW
    assert r["mean_diff"].iloc[0] == pytest.approx(0.2, abs=1e-9)
    with pytest.raises(ValueError, match="no run of the baseline"):
        C.compare_variants(f, baseline="no such variant")


def test_row_vs_fixed_is_one_family_over_the_three_lengths():
    recs = []
    for s, eps in zip(SEEDS, NOISE):
        recs.append(make_record("softmax", s, 2.0 + eps))
        recs.append(make_record(C.ROW, s, 2.0 + eps, x4=2.1 + eps))
        recs.append(make_record(C.FIXED, s, 2.0 + eps + 0.001 * s, x4=2.6 + eps + 0.001 * s))
    d = C.row_vs_fixed(C.variant_frame(recs))
    assert list(d["multiple"]) == [1, 2, 4] and (d["family_size"] == 3).all()
    assert d["mean_diff"].tolist() == pytest.approx([0.001, 0.001, 0.501], abs=1e-9)
    # equivalent within the margin at 1x, clearly worse at 4x
    assert d["equivalent"].iloc[0] and d["p_holm"].iloc[2] < 0.05
    forms = [C.BOOK_FORMS[comparison_verdict(r).form] for _, r in d.iterrows()]
    assert forms == ["equivalent within the margin", "equivalent within the margin", "worse"]


def test_positions_effect_pairs_nope_with_sinusoidal_runs_per_variant_and_length():
    sinus, nope = [], []
    for s, eps in zip(SEEDS, NOISE):
        for label in ("softmax", C.ROW, C.FIXED):
            sinus.append(make_record(label, s, 2.0 + eps, x2=4.0 + eps, x4=4.5 + eps))
        # without positions: 0.1 worse at 1x, far better beyond the context (x^3/sqrt(T) has no NoPE run)
        nope.append(make_record("softmax", s, 2.1 + eps + 0.001 * s, x2=2.2 + eps + 0.01 * s, x4=2.3 + eps + 0.01 * s))
        nope.append(make_record(C.ROW, s, 2.1 + eps + 0.001 * s, x2=2.2 + eps + 0.01 * s, x4=2.3 + eps + 0.01 * s))
    d = C.positions_effect(C.variant_frame(sinus), C.variant_frame(nope))
    assert list(d["multiple"]) == [1, 1, 2, 2, 4, 4] and list(d["variant"]) == ["softmax", C.ROW] * 3
    assert (d["family_size"] == 6).all() and (d["n_pairs"] == 3).all()
    assert d["mean_diff"].tolist() == pytest.approx([0.101, 0.101, -1.79, -1.79, -2.19, -2.19], abs=1e-9)
    assert (d.loc[d["multiple"] > 1, "p_holm"] < 0.05).all()
    with pytest.raises(ValueError, match="no run with sinusoidal positions"):
        C.positions_effect(C.variant_frame(sinus[:1]), C.variant_frame(nope))


def test_results_and_length_tables_report_means_with_intervals():
    f = C.variant_frame(planted({"Softpick": -0.3}))
    table = C.results_table(f, C.compare_variants(f)).set_index("variant")
    assert table.loc["softmax", "Δ test vs softmax"] == "baseline"
    assert table.loc["Softpick", "Δ test vs softmax"] == "-0.300" and table.loc["Softpick", "verdict"] == "better"
    assert table.loc["softmax", "test bits/char"].startswith("2.000 [")
    assert table.loc[C.FIXED, "N"] == "T" and table.loc[C.ROW, "N"] == "i+1"
    lengths = C.length_summary(f)
    assert len(lengths) == 3 * len(C.variant_order())
    sm = lengths[(lengths["variant"] == "softmax") & (lengths["multiple"] == 4)].iloc[0]
    assert sm["length"] == 4 * 32 and sm["mean"] == pytest.approx(2.0) and sm["ci_low"] < 2.0 < sm["ci_high"]


def test_collapse_metrics_on_known_strings():
    m = C.collapse_metrics("abababab")
    assert m["repeated_ngram_share"] == pytest.approx(1 - 2 / 5) and m["distinct_chars"] == 2
    assert C.collapse_metrics("xaaab")["longest_run"] == 3
    assert C.collapse_metrics("   \n")["blank"] and C.collapse_metrics("")["blank"]
    assert math.isnan(C.collapse_metrics("abc")["repeated_ngram_share"])
    assert C.collapse_metrics("abcdefgh")["repeated_ngram_share"] == 0


def test_collapse_check_flags_what_real_text_never_does():
    text = ("in the beginning god created the heaven and the earth. and the earth was without form, and void; "
            "and darkness was upon the face of the deep. ") * 4
    ref = C.reference_ranges(text, 40)
    assert ref["windows"] == len(text) // 40
    samples = {"real": text[40:80], "blank": "", "loop": "the " * 10, "stuck": "e" * 40}
    out = C.collapse_check(samples, ref).set_index("variant")
    assert not out.loc["real", "collapsed"]
    assert out.loc["blank", "reasons"].startswith("blank")
    assert "repeated 4-grams" in out.loc["loop", "reasons"]
    assert "repeated 4-grams" in out.loc["stuck", "reasons"] and out.loc["stuck", "longest_run"] == 40
    with pytest.raises(ValueError):
        C.reference_ranges("short", 40)


def test_rank_agreement_counts_pairs_and_rho():
    same = C.rank_agreement([1, 2, 3, 4], [10, 20, 30, 40])
    assert same == {"pairs": 6, "concordant": 6, "discordant": 0, "ties": 0, "rho": pytest.approx(1.0)}
    rev = C.rank_agreement([1, 2, 3, 4], [4, 3, 2, 1])
    assert rev["discordant"] == 6 and rev["rho"] == pytest.approx(-1.0)
    assert math.isnan(C.rank_agreement([1, 1, 1], [1, 2, 3])["rho"])


def test_survey_comparison_puts_ratios_side_by_side():
    f = C.variant_frame(planted({"SA-Softmax": 0.1}))
    t = C.survey_comparison(f).set_index("method")
    assert list(t.index) == [m for m, *_ in C.SURVEY_TABLE]
    assert t.loc["Softmax", "survey ratio to softmax"] == 1.0
    assert t.loc["Poly2", "survey ratio to softmax"] == pytest.approx(12.56 / 12.34)
    assert t.loc["SA-Softmax", "book ratio to softmax"] == pytest.approx(2 ** 0.1, rel=1e-3)
    assert t.loc["Softmax", "book perplexity per char"] == pytest.approx(4.0)
    assert t.loc["SA-Softmax", "rank: survey perplexity"] == 1


def test_register_results_name_the_candidates_by_variant_label():
    from polyattn.claims.spec import Arm, vs

    comps = [vs("causal_charlm", {"activation": "poly:p=3", "n_mode": mode}, {"activation": "softmax"}, mode,
                "x", "equivalent") for mode in ("row", "fixed")]
    fake = SimpleNamespace(comparisons=[SimpleNamespace(comparison=c) for c in comps])
    assert list(C.register_results(fake)) == [C.ROW, C.FIXED]
    assert isinstance(comps[0].candidate, Arm)


def test_short_and_describe():
    f = C.variant_frame(planted({"Softpick": -0.3}))
    v = comparison_verdict(C.compare_variants(f).set_index("activation").loc["Softpick"])
    text = C.short(v)
    assert text.startswith("-0.300 bits/char (95% CI") and "3 pairs" in text and "Holm p" in text
    assert np.isfinite(v.mde)
    assert C.describe(v).startswith("Softpick minus softmax: better, -0.300 bits/char (95% CI")


def test_variant_colors_are_distinct_except_for_the_two_readings_of_n():
    colors = C.variant_colors()
    assert list(colors) == C.variant_order()
    assert colors[C.ROW] == colors[C.FIXED]
    others = [c for v, c in colors.items() if v != C.FIXED]
    assert len(set(others)) == len(others)
