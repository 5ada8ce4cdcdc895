"""Chapter 07's page modules on planted character-LM records: the tables' rows, the register's
comparisons in them, the glued numbers, and the length sweep's section at any stage of its grid."""
import math
from types import SimpleNamespace

import matplotlib
import pandas as pd
import pytest
from support.patching import patch_everywhere

from polyattn.analysis import length_sweep as ls
from polyattn.analysis import recall as recall_levels
from polyattn.config import TrainConfig
from polyattn.experiments import causal
from polyattn.labels import CHARLM_VARIANTS
from polyattn.results import config_dict
from polyattn.studies.causal import bpc as bp
from polyattn.studies.causal import lengths as lp
from polyattn.studies.causal import page as pg
from polyattn.studies.causal import samples as sa
from polyattn.studies.causal import setup as su
from polyattn.studies.causal import sinks as sk
from polyattn.studies.causal import sweep as sw

matplotlib.use("Agg")

BPC_SPEC = [{"name": n, "higher_is_better": False, "scale": 1.0, "unit": "bits/char", "label": n}
            for n in ("val_bpc", "test_bpc", "test_bpc_x2", "test_bpc_x4")]


def _record(cfg: TrainConfig, bpc: float, status: str = "ok", sink_rate: float = 0.0, sample: str = "and the") -> dict:
    """A character-LM record as ``fit`` writes it: bits/char at 1x, 2x and 4x, sinks and a sample."""
    context = cfg.options["context"]
    return {"schema": 1, "experiment": cfg.experiment, "config": config_dict(cfg), "config_hash": cfg.hash,
            "seed": cfg.seed, "preset": cfg.preset, "status": status, "diverged_step": None if status == "ok" else 3,
            "task": "charlm", "metrics_spec": BPC_SPEC,
            "metrics": [{"epoch": 1, "step": 8, "val_bpc": bpc, "test_bpc": bpc, "test_bpc_x2": bpc + 0.5,
                         "test_bpc_x4": bpc + 1.0}],
            "seq_lens": {"seq_len": context}, "n_params": 1000,
            "final": {"prompt": "And ", "sample": sample, "sampling": {"seed": 1, "temperature": 0.8, "top_k": 5},
                      "sinks": {"sink_rate": sink_rate, "sink_rate_normalised": sink_rate, "alpha_mean": 0.1,
                                "share_mean": 0.1, "negative_fraction": 0.0, "row_sum_mean": 1.0}},
            "provenance": {"git_commit": "abcdef123", "git_dirty": False, "wall_s": 2.0,
                           "hardware": {"cpu": "Test CPU", "cores": 2, "torch_threads": 1}, "packages": {"torch": "x"}}}


#: planted test bits/char per variant above softmax's (seed-specific jitter added below)
PLANTED = {"softmax": 0.0, "x^3/sqrt(i+1)": 0.2, "x^3/sqrt(T)": 0.3, "SSMax": 0.0}


def _runs(seeds=(0, 1, 2), variants=PLANTED, sink_seed=None):
    grid = [c for c in causal.charlm("smoke", seeds=list(seeds))
            if next(lbl for lbl, a, m in CHARLM_VARIANTS if a == c.activation and m == c.n_mode) in variants]
    label = {(a, m): lbl for lbl, a, m in CHARLM_VARIANTS}
    records = [_record(c, 2.0 + variants[label[(c.activation, c.n_mode)]] + 0.01 * c.seed
                       + (0.002 * c.seed if label[(c.activation, c.n_mode)] == "x^3/sqrt(T)" else 0.0),
                       sink_rate=0.25 if (c.activation == "softmax" and c.seed == sink_seed) else 0.0)
               for c in grid]
    return pg.Runs(grid, records, "smoke")


def _plain(text: str) -> str:
    return text.replace("\u00a0", " ")


def _page(preset="book"):
    return SimpleNamespace(preset=preset, device="cpu", trains=preset != "paper", not_run="not run",
                           on_device=lambda configs: list(configs))


def _comparison(n, mean=0.1, low=0.05, high=0.15):
    return SimpleNamespace(n=n, mean=mean, ci_low=low, ci_high=high)


def test_the_bits_per_character_table_finds_the_planted_differences_and_fills_the_baseline_row():
    runs = _runs()
    rows = {r["variant"]: r for r in bp.bpc_rows(runs, 0.05, {})}
    assert rows["softmax"]["Δ vs softmax [95% CI]"] == "baseline" and rows["softmax"]["result"] == ""
    assert set(rows["softmax"]) == set(rows["x³/√(i+1)"])           # no missing cell (no NaN on the page)
    assert rows["x³/√(i+1)"]["Δ vs softmax [95% CI]"].startswith("+0.200") and rows["x³/√(i+1)"]["result"] == "worse"
    assert rows["SSMax"]["result"] == "equivalent"
    numbers = bp.bpc_numbers(runs, 0.05, {})
    assert numbers["ch07_family"] == 3 and numbers["ch07_count_text"] == "2 worse; 1 equivalent"


def test_a_registered_comparison_replaces_the_pages_own_and_is_marked():
    runs = _runs()
    reg = {("x^3/sqrt(i+1)", "softmax", "test_bpc"): {"Holm p": "0.5", "TOST p": "0.9", "Result": "inconclusive",
                                                     "numbers": _comparison(3, 0.123, 0.01, 0.2)}}
    row = next(r for r in bp.bpc_rows(runs, 0.05, reg) if r["variant"] == "x³/√(i+1)")
    assert _plain(row["Δ vs softmax [95% CI]"]) == "+0.123 [+0.010, +0.200] ‡" and row["result"] == "inconclusive ‡"
    assert " " not in row["Δ vs softmax [95% CI]"]                   # the interval stays on one line
    assert row["Holm p"] == "0.5"
    assert bp.bpc_numbers(runs, 0.05, reg)["ch07_count_text"] == "1 inconclusive; 1 worse; 1 equivalent"
    assert pg.register_cell({"numbers": _comparison(0)}) == ""


def test_the_register_rows_are_read_only_at_the_book_preset():
    fields = {"activation": "poly:p=3", "n_mode": "fixed"}
    comparison = SimpleNamespace(candidate=SimpleNamespace(grid="causal_charlm", fields=fields),
                                 baseline=SimpleNamespace(fields={"activation": "softmax", "n_mode": "row"}),
                                 metric="test_bpc", label="x³/√T − softmax", role="primary", expect="equivalent")
    result = SimpleNamespace(comparison=comparison, n=2, planned=3, holm_p=0.2, tost_p=0.4, result="inconclusive",
                             qualifier="", outcome="open", mean=0.1, ci_low=0.0, ci_high=0.2, ci90_low=0.02,
                             ci90_high=0.18, unit="bits/char", higher_is_better=False)
    delivered = SimpleNamespace(verdict=SimpleNamespace(comparisons=[result]))
    import polyattn.claims.report as report

    with pytest.MonkeyPatch.context() as mp:
        patch_everywhere(mp, report, "comparison_rows", lambda v: [{"Comparison": "x³/√T − softmax"}])
        assert pg.register_rows(delivered, "causal_charlm", "smoke") == {}
        rows = pg.register_rows(delivered, "causal_charlm", "book")
        assert list(rows) == [("x^3/sqrt(T)", "softmax", "test_bpc")]
        assert pg.register_rows(delivered, "causal_charlm_nope", "book") == {}


def test_a_length_row_takes_the_registers_numbers_at_its_length_only():
    diffs = pd.DataFrame([{"activation": "a", "multiple": m, "n_pairs": 3, "mean_diff": 0.5, "ci_low": 0.4,
                           "ci_high": 0.6, "t_p": 0.001, "p_holm": 0.002, "tost_p": 1.0, "margin": 0.05, "mde": 0.1,
                           "family_size": 3, "baseline": "softmax", "higher_is_better": False,
                           "unit": "bits/char"} for m in (1, 2)])
    reg = {("a", 1): {"Result": "worse", "numbers": _comparison(3, 0.5, 0.4, 0.6)}}
    row = {k: _plain(v) for k, v in lp.length_rows(diffs, lambda v: f"{v} − softmax", reg)[0].items()}
    assert row == {"comparison": "a − softmax", "at 1x": "+0.50 [+0.40, +0.60] ‡, worse",
                   "at 2x": "+0.50 [+0.40, +0.60], worse"}


def test_claims_table_lists_only_comparisons_with_pairs():
    def delivered(ns):
        comps = [SimpleNamespace(n=n, comparison=SimpleNamespace(label=f"c{i}")) for i, n in enumerate(ns)]
        claim = SimpleNamespace(id="length_scale_needed", margin=0.05, scale="a scale")
        return SimpleNamespace(verdict=SimpleNamespace(comparisons=comps, claim=claim))

    import polyattn.claims.report as report

    with pytest.MonkeyPatch.context() as mp:
        patch_everywhere(mp, report, "comparison_rows", lambda v: [
            {"Comparison": r.comparison.label, "Role": "primary", "Pairs": f"{r.n} of 3", "Difference [95% CI]": "x",
             "Holm p": "", "TOST p": "", "Result": "inconclusive"} for r in v.comparisons])
        assert sw.sweep_table([delivered([0, 0])], "book") is None
        assert sw.sweep_table([delivered([0, 2, 1])], "smoke") is None
        table = sw.sweep_table([delivered([0, 2, 1])], "book")
        assert list(table.data["comparison"]) == ["c1", "c2"] and "claim" not in table.data   # one claim: no column
        two = sw.sweep_table([delivered([0, 2]), delivered([1])], "book")
        assert list(two.data["claim"]) == ["scale needed", "scale needed"]


def test_claim_values_quote_the_registers_late_notes():
    late = SimpleNamespace(verdict=SimpleNamespace(claim=SimpleNamespace(
        registered_after="after the runs", chance_registered_after="on 2 December", comparisons=(1, 2, 3),
        chance_band=0.5)))
    assert pg.claim_values("x", late) == {"x_notes": "after the runs; on 2 December", "x_family": 3,
                                          "x_chance_band": "0.5"}
    in_time = SimpleNamespace(verdict=SimpleNamespace(claim=SimpleNamespace(
        registered_after=None, chance_registered_after=None, comparisons=())))
    assert pg.claim_values("x", in_time)["x_notes"].startswith("nothing")


def test_sink_numbers_count_softmaxs_seeds_with_a_sink():
    numbers = sk.sink_numbers(_runs(sink_seed=1))
    assert numbers["ch07_softmax_sink_seeds"] == "1 of 3"
    assert numbers["ch07_largest_rate"] == "0.25 (softmax, seed 1)"
    assert sk.sink_numbers(pg.Runs([], [], "paper", "not run", loaded=False))["ch07_free_rate"] == "not run"


def test_the_spread_names_the_variants_at_both_ends():
    s = pd.Series({"x^3/sqrt(T)": 0.3, "softmax": -0.1, "SSMax": math.nan})
    assert lp._spread(s) == "−0.100 for softmax to +0.300 for x³/√T"
    assert lp._spread(pd.Series(dtype=float)) == "not measured"


def test_map_numbers_say_where_each_map_comes_from_and_which_are_missing():
    import numpy as np

    found = {"maps": {"softmax": np.ones((1, 2, 2)), "x^3/sqrt(T)": -np.ones((1, 2, 2))},
             "source": {"softmax": "the seed-0 record", "x^3/sqrt(T)": "the seed-1 record"},
             "window": "In the", "diverged": ["SSMax"], "missing": []}
    n = sa.map_numbers(_runs(seeds=(0,)), found)
    assert n["ch07_map_source"] == "softmax: the seed-0 record; x³/√T: the seed-1 record"
    fig = sa.map_figure(found, "smoke")
    assert [ax.get_ylabel() for ax in fig.axes[:2]] == ["softmax", "x³/√T"]      # one row per variant
    assert "query position i" in fig.get_supxlabel() and "key position j" in fig.get_supxlabel()
    # each head is scaled by its own largest weight: a head of small weights is not blank
    small = {**found, "maps": {"softmax": np.array([[[1.0, 0.0], [0.5, 0.5]], [[0.01, 0.0], [0.0, 0.02]]])}}
    images = [ax.get_images()[0].get_array() for ax in sa.map_figure(small, "smoke").axes[:2]]
    assert [float(abs(a).max()) for a in images] == [1.0, 1.0]
    assert n["ch07_map_absent"] == "SSMax (diverged)" and n["ch07_map_neg"] == "softmax 0.00, x³/√T 1.00"
    assert sa.map_figure({**found, "maps": {}}, "smoke") is None
    # a head with (almost) no non-zero weight is named and drawn as its count, not as a blank map
    sparse = {**found, "maps": {"softmax": np.ones((1, 2, 2)), "Softpick": np.zeros((1, 2, 2))}}
    assert sa.sparse_heads(sparse) == {"Softpick": [(1, 0, 3)]}
    assert sa.map_numbers(_runs(seeds=(0,)), sparse)["ch07_map_sparse"] == "Softpick head 1 (0 of 3 weights not zero)"
    drawn = sa.map_figure(sparse, "smoke").axes
    assert drawn[1].get_images() == [] and drawn[1].texts[0].get_text().startswith("0 of 3")
    assert sa.map_numbers(pg.Runs([], [], "paper", "not run", loaded=False), found)["ch07_map_neg"] == "not run"


def _sweep(records):
    grid = causal.length_sweep("smoke")
    runs = pg.Runs(grid, records, "smoke")
    runs._frame = ls.sweep_frame(records)
    return runs


def _sweep_record(cfg, bpc, status="ok"):
    return {"config": {**config_dict(cfg)}, "status": status,
            "metrics": [{"test_bpc": bpc, "test_bpc_x2": bpc + 0.1, "test_bpc_x4": bpc + 0.2}]}


def test_the_length_sweep_section_renders_with_none_some_or_all_of_its_runs():
    grid = causal.length_sweep("smoke")                     # T = 16 and 32, one seed, four variants
    none = _sweep([])
    assert sw.sweep_numbers(none)["ch07_sweep_stored"] == f"0 of the {len(grid)}"
    assert sw.sweep_numbers(none)["ch07_sweep_slope"].startswith("none yet")
    assert sw.sweep_figure(none, 0.05) is None
    # only the unscaled cube: a figure of one panel, no slope
    cube = [_sweep_record(c, 3.0) for c in grid if c.activation == "poly:p=3,c=1"]
    some = _sweep(cube)
    assert len(sw.sweep_figure(some, 0.05).axes) == 1
    assert "nor at one" in sw.sweep_numbers(some)["ch07_sweep_slope"]
    # everything, with the cube's deficit growing by 0.1 per doubling of T and one run diverged
    recs = [_sweep_record(c, 3.0 + (0.1 * math.log2(c.options["context"] / 16) if c.activation == "poly:p=3,c=1"
                                    else 0.0)) for c in grid if c.activation != "softmax"]
    recs.append(_sweep_record(next(c for c in grid if c.activation == "softmax"), math.nan, status="diverged"))
    full = _sweep(recs)
    numbers = sw.sweep_numbers(full)
    assert numbers["ch07_sweep_stored"].startswith(f"{len(recs)} of the {len(grid)} (1 diverged: softmax at T = 16")
    assert numbers["ch07_sweep_slope"].startswith("+0.100 bits/char per doubling over 1 seed(s) (seed 0: +0.100)")
    assert len(sw.sweep_figure(full, 0.05).axes) == 2


def test_nothing_is_loaded_under_a_preset_that_trains_nothing():
    runs = pg.sweep_runs(_page("paper"))
    assert not runs and not runs.loaded
    numbers = sw.sweep_numbers(runs)
    assert numbers["ch07_sweep_stored"] == "not run" and numbers["ch07_sweep_slope"] == "not run"
    assert numbers["ch07_sweep_lengths"] == "256, 1024 and 4096"          # the design, read from the grid
    assert bp.bpc_table(runs, 0.05, {}) is None and sa.samples_markdown(runs) == ""


def test_mqar_long_numbers_name_the_variants_with_more_recall_than_softmax():
    from polyattn.experiments import mqar
    from polyattn.studies.causal import recall as rp

    grid = mqar.causal_mqar_long("smoke")
    names = [f"acc_{n}" for n, *_ in recall_levels.levels(grid[0])]
    spec = [{"name": n, "higher_is_better": True, "scale": 100.0, "unit": "%", "label": n} for n in names]

    def rec(cfg, acc):
        return {"schema": 1, "experiment": cfg.experiment, "config": config_dict(cfg), "config_hash": cfg.hash,
                "seed": cfg.seed, "preset": cfg.preset, "status": "ok", "diverged_step": None, "task": "mqar",
                "metrics_spec": spec, "metrics": [{"epoch": 1, "step": 1, **{n: acc for n in names}}],
                "seq_lens": {"seq_len": 16}, "provenance": {"git_commit": "x", "wall_s": 1.0}}

    records = [rec(c, 0.99 if c.activation == "poly:p=3,c=1/14" else 0.01) for c in grid]
    numbers = rp.mqar_long_numbers(pg.Runs(grid, records, "book"))
    assert numbers["ch07_mqar_long_beyond"] == "x³/14" and numbers["ch07_mqar_long_softmax"] == "0"


# --- the compact page: one-line formulas and intervals, folded secondary tables ------------------------


def test_inline_formula_writes_fractions_on_one_line_with_brackets_where_needed():
    assert su.inline_formula(r"\frac{s^{3}}{\sqrt{N}}") == r"s^{3} / \sqrt{N}"
    assert su.inline_formula(r"\frac{\mathrm{relu}(e^{s} - 1)}{\sum_j |e^{s_j} - 1| + \epsilon}") == (
        r"\mathrm{relu}(e^{s} - 1) / (\sum_j |e^{s_j} - 1| + \epsilon)")   # a bracketed minus needs none
    assert su.inline_formula(r"\frac{a + b}{\frac{c}{d}}") == "(a + b) / (c / d)"
    assert su.inline_formula(r"\frac{a}{2 \cdot b}") == r"a / (2 \cdot b)"
    assert su.inline_formula(r"\tfrac{1}{14} \cdot s^{3}") == r"\tfrac{1}{14} \cdot s^{3}"
    with pytest.raises(ValueError, match="unbalanced"):
        su.inline_formula(r"\frac{a}{b")


def test_the_variants_table_reads_each_reading_of_n_and_has_no_stacked_fraction():
    table = su.variants_table().data.set_index("variant")
    assert r"\(T\)" in table.loc["x³/√T", "N"] and r"\(i + 1\)" in table.loc["x³/√(i+1)", "N"]
    assert not table["weights"].str.contains(r"\\frac").any()
    assert table.loc["softmax", "rows sum to one"] == "yes" and table.loc["x³/√T", "non-negative"] == "no"


def test_register_summary_says_equal_comparisons_once():
    def row(diff, result="uninformative"):
        return {"Difference [95% CI]": diff, "Pairs": "3 of 3", "Result": result}

    same = {("x^3/sqrt(i+1)", "softmax", "m"): row("+0.000"), ("SSMax", "softmax", "m"): row("+0.000")}
    assert pg.register_summary(same) == "all 2 (x³/√(i+1), SSMax): +0.000 (3 of 3 pairs), uninformative"
    apart = {**same, ("SSMax", "softmax", "m"): row("+0.100", "worse")}
    assert pg.register_summary(apart) == ("x³/√(i+1): +0.000 (3 of 3 pairs), uninformative; "
                                          "SSMax: +0.100 (3 of 3 pairs), worse")
    assert pg.register_summary({}) == "none"
    assert pg.register_summary(same, "smoke").startswith("not shown at this preset")


def test_a_variant_with_a_diverged_seed_says_how_many_trained():
    runs = _runs()
    bad = next(i for i, c in enumerate(runs.grid) if c.activation == "softmax" and c.seed == 2)
    runs.records[bad] = {**runs.records[bad], "status": "diverged"}
    names = [r["variant"] for r in bp.bpc_rows(runs, 0.05, {})]
    assert "softmax (2 of 3 seeds)" in names and "SSMax" in names


def test_the_length_table_leaves_the_training_length_to_the_table_above():
    runs = _runs()
    table = lp.length_table(runs, 0.05, {})
    assert list(table.data.columns) == ["comparison", "at 2x", "at 4x"]
    assert table.data["comparison"].iloc[-1] == "x³/√T − x³/√(i+1)"
    numbers = lp.length_numbers(runs, 0.05, {})
    # three variants against softmax at 2x and 4x: planted offsets are the same at every length
    assert numbers["ch07_past_results"].endswith(" (of 6)")
    assert numbers["ch07_rvf_past"].endswith("at 4x") and "at 2x" in numbers["ch07_rvf_past"]
    reg = {("x^3/sqrt(T)", "x^3/sqrt(i+1)", "test_bpc"): {"numbers": _comparison(3, 0.1, 0.05, 0.15)}}
    assert _plain(lp.length_numbers(runs, 0.05, reg)["ch07_rvf_1x"]) == "+0.100 [+0.050, +0.150] ‡ bits/char (3 pairs)"


def test_the_position_comparisons_have_their_own_table():
    lm, nope = _runs(), _runs(variants={"softmax": 0.5, "x^3/sqrt(i+1)": 0.6, "x^3/sqrt(T)": 0.6})
    main = lp.nope_table(lm, nope, 0.05, {}).data["comparison"].tolist()
    assert main == ["x³/√(i+1) − softmax", "x³/√T − softmax", "x³/√T − x³/√(i+1)"]
    positions = lp.positions_table(lm, nope, 0.05).data
    assert positions["comparison"].tolist() == [f"{v}: none − sinusoidal" for v in ("softmax", "x³/√(i+1)", "x³/√T")]
    assert _plain(positions["at 1x"].iloc[0]).startswith("+0.50 [")


def test_claims_table_keeps_the_roles_asked_for_and_states_equal_pairs_once():
    comparison = [SimpleNamespace(n=3, comparison=SimpleNamespace(label=f"c{i}")) for i in range(3)]
    delivered = SimpleNamespace(verdict=SimpleNamespace(comparisons=comparison,
                                                        claim=SimpleNamespace(id="mqar", margin=1.0, scale="s")))
    import polyattn.claims.report as report

    roles = ["primary", "description", "check"]
    with pytest.MonkeyPatch.context() as mp:
        patch_everywhere(mp, report, "comparison_rows", lambda v: [
            {"Comparison": r.comparison.label, "Role": role, "Pairs": "3 of 3", "Difference [95% CI]": "+1.0 [+0.5, +1.5]",
             "Holm p": "< 0.001", "TOST p": "1.0", "Result": "worse"} for r, role in zip(v.comparisons, roles)])
        table = pg.claims_table([delivered], "caption", roles=["primary", "check"])
    assert table.data["comparison"].tolist() == ["c0", "c2"] and "pairs" not in table.data
    assert table.caption.endswith("Pairs: 3 of 3 in every row")


def test_a_folded_block_gets_a_note_when_there_is_nothing_to_show_and_a_figure_is_closed():
    import matplotlib.pyplot as plt

    import polyattn.book.deliver as deliver

    glued = {}
    with pytest.MonkeyPatch.context() as mp:
        patch_everywhere(mp, deliver, "glue", lambda name, value, display=True: glued.__setitem__(name, value))
        pg.glue_folded("none", None)
        fig = plt.figure()
        pg.glue_folded("figure", fig)
    assert "Nothing to show" in glued["none"].data and glued["figure"] is fig
    assert not plt.fignum_exists(fig.number)
    table = pg.compact(su.variants_table(), ["variant"])
    assert "white-space: nowrap" in table.to_html() and pg.compact(None) is None


def test_the_recall_section_counts_the_seeds_above_the_plateau_band_and_draws_each_seed():
    from polyattn.experiments import mqar
    from polyattn.studies.causal import recall as rp

    grid = mqar.causal_mqar_recall("smoke", seeds=[0, 1])
    names = [f"acc_{n}" for n, *_ in recall_levels.levels(grid[0])]
    plateau = recall_levels.levels(grid[0])[0][4]
    spec = [{"name": n, "higher_is_better": True, "scale": 100.0, "unit": "%", "label": n} for n in names]

    def rec(cfg, acc):
        return {"schema": 1, "experiment": cfg.experiment, "config": config_dict(cfg), "config_hash": cfg.hash,
                "seed": cfg.seed, "preset": cfg.preset, "status": "ok", "diverged_step": None, "task": "mqar",
                "metrics_spec": spec, "seq_lens": {"seq_len": 16}, "provenance": {"git_commit": "x", "wall_s": 1.0},
                "metrics": [{"epoch": e, "step": e, **{n: a for n in names}} for e, a in ((1, plateau), (2, acc))]}

    # softmax learns in both seeds; x^3/14 only in seed 1; the others stay on the plateau (inside its band)
    acc = {("softmax", 0): 1.0, ("softmax", 1): 0.98, ("poly:p=3,c=1/14", 1): 0.9}
    records = [rec(c, acc.get((c.activation, c.seed), plateau * 1.2)) for c in grid]
    runs = pg.Runs(grid, records, "smoke")
    counts = rp.learned(runs)
    assert counts["softmax"] == (2, 2) and counts["x^3/14"] == (1, 2) and counts["x^3/sqrt(i+1)"] == (0, 2)
    numbers = rp.recall_numbers(runs)
    assert "softmax 2 of 2" in numbers["ch07_recall_learned"] and "x³/14 1 of 2" in numbers["ch07_recall_learned"]
    fig = rp.curve_figure(runs)
    assert len(fig.axes) == len(mqar.RECALL_VARIANTS) and all(len(ax.lines) >= 2 + 2 for ax in fig.axes)
    # x^3/14 is split across the plateau: its cell reads per seed, with no interval; the bars draw each seed
    cell = rp.mqar_table(runs).data.set_index("variant").loc["x³/14"].iloc[0]
    assert cell == f"{100 * (0.9 + 1.2 * plateau) / 2:.1f} (seeds {120 * plateau:.1f} to 90.0), recall in 1 of 2", cell
    assert "[" not in cell and "recall in 2 of 2" not in rp.mqar_table(runs).data.to_string()
    bars = rp.mqar_figure(runs)
    assert sum(len(line.get_xdata()) for line in bars.axes[0].lines if line.get_marker() == "o") == len(grid)
    empty = rp.recall_numbers(pg.Runs(grid, [], "book", "no run of this grid is stored yet"))
    assert empty["ch07_recall_learned"] == "no run of this grid is stored yet" and rp.curve_figure(
        pg.Runs(grid, [], "book")) is None


def test_the_probe_numbers_read_where_recall_leaves_the_plateau_band(monkeypatch):
    import polyattn.runs
    from polyattn.experiments import mqar
    from polyattn.studies.causal import recall as rp

    grid = mqar.causal_mqar_probe("book")
    small = grid[0]
    name = recall_levels.levels(small)[0][0]
    curve = [(10, 0.25), (20, 0.27), (30, 0.95), (40, 1.0)]
    record = {"config": config_dict(small), "metrics": [{"epoch": e, f"acc_{name}": a} for e, a in curve]}
    patch_everywhere(monkeypatch, polyattn.runs, "page_records", lambda g, preset, **kw: [record])
    numbers = rp.probe_numbers()
    assert numbers[f"ch07_probe_{small.options['vocab_size']}"] == (
        "within the band through epoch 20, above it from epoch 30 (95.0%), 100.0% after epoch 40")
    assert numbers[f"ch07_probe_{grid[1].options['vocab_size']}"] == "not stored"


def test_the_second_probes_name_a_setting_only_when_every_probe_seed_recalls(monkeypatch):
    import polyattn.runs
    from polyattn.experiments import mqar_decide
    from polyattn.studies.causal import recall as rp

    finals = {"lr1_ex2": [0.99, 0.95, 1.0], "lr3": [0.27], "lr3_rope": [0.99, 0.5, 0.99]}

    def stored(grid, preset, **kw):
        name = next(n for n in mqar_decide.PROBE2_SETTINGS if mqar_decide.probe2_at(n)("book") == grid)
        return [{"seed": k, "metrics": [{"acc": a}]} for k, a in enumerate(finals.get(name, []))]

    patch_everywhere(monkeypatch, polyattn.runs, "page_records", stored)
    numbers = rp.probe2_numbers()
    assert "27% (seed 0)" in numbers["ch07_probe2"] and "99%, 50%, 99% (seeds 0, 1, 2)" in numbers["ch07_probe2"]
    assert "length 128 with 8 pairs, sinusoidal positions: not run" in numbers["ch07_probe2"]
    # only the setting whose three seeds all reached 90%: not the rotary one with a seed at 50%
    assert numbers["ch07_probe2_found"] == ("every probe seed reached it at learning rate 0.001, 16,384 examples an "
                                            "epoch, length 64 with 4 pairs, sinusoidal positions")
    finals["lr1_ex2"] = [0.99]  # one seed is not a probe plan's worth
    assert rp.probe2_numbers()["ch07_probe2_found"].startswith("no setting")


def test_the_position_free_sweep_is_set_beside_the_count_based_floors():
    from polyattn.claims.floors import ngram_floor
    from polyattn.studies.causal import sweep as lm_sweep

    def rec(t, bpc):
        return {"status": "ok", "config": {"options": {"context": t}}, "metrics": [{"test_bpc": bpc}]}

    trigram = ngram_floor(3)
    got = lm_sweep.floor_numbers([rec(64, trigram - 0.1), rec(64, trigram + 0.2), rec(256, trigram + 0.5)])
    assert got["ch07_sweep_floor_learned"] == "T = 64" and got["ch07_sweep_floor_stuck"] == "T = 256"
    assert got["ch07_sweep_floor_trigram"] == f"{trigram:.2f}"
    assert got["ch07_sweep_floor_ranges"].startswith(f"T = 64: {trigram - 0.1:.2f} to {trigram + 0.2:.2f}")


def test_the_probe_table_sets_softmax_beside_the_trigram_and_its_own_shortest_length():
    from polyattn.claims.floors import ngram_floor
    from polyattn.experiments import causal_rope
    from polyattn.studies.causal import sweep as lm_sweep

    grid = causal_rope.length_probe("smoke")
    records = [{"status": "ok", "config": {**c.__dict__, "options": dict(c.options)},
                "metrics": [{"test_bpc": 2.0 + i / 10}]} for i, c in enumerate(grid)]
    import dataclasses

    records = [{**r, "config": dataclasses.asdict(c)} for r, c in zip(records, grid)]
    table = lm_sweep.probe_table(records)
    assert len(table) == len(grid) and set(table["T"]) == set(causal_rope.ROPE_CONTEXTS["smoke"])
    first = table.iloc[0]
    assert abs(first["below the trigram"] - round(ngram_floor(3) - first["test bits/char"], 3)) < 1e-3
    assert (table[table["T"] == table["T"].min()].iloc[:, -1] == 0).all()
    assert lm_sweep.probe_table([]) is None


def test_the_growth_reading_says_each_slopes_sign_only_where_its_interval_excludes_zero():
    from polyattn.studies.causal import sweep as lm_sweep

    def slope(lo, hi, seeds=5):
        return {"slope": (lo + hi) / 2, "ci_low": lo, "ci_high": hi, "seeds": seeds}

    both = lm_sweep.growth_reading(slope(0.01, 0.03), slope(0.02, 0.07))
    assert both.startswith("Both slopes are positive")
    one = lm_sweep.growth_reading(slope(-0.01, 0.03), slope(0.02, 0.07))
    assert "over T is of unresolved sign" in one and "only the slope over position" in one
    none = lm_sweep.growth_reading(slope(-0.05, -0.01), slope(float("nan"), float("nan"), seeds=1))
    assert "over T is negative" in none and "over position is not yet measured" in none
    assert none.endswith("neither shows the growth the theory predicts.")


def test_the_difference_at_each_length_names_the_cube_ahead_only_where_its_interval_excludes_zero():
    import pandas as pd

    from polyattn.studies.causal import sweep

    paired = pd.DataFrame([{"T": 64, "difference": -0.07, "ci_low": -0.1, "ci_high": -0.04, "pairs": 5},
                           {"T": 1024, "difference": 0.01, "ci_low": -0.08, "ci_high": 0.1, "pairs": 1}])
    text = sweep.by_length_text(paired)
    assert text.startswith("T = 64: −0.070 [−0.100, −0.040] (5 seeds, x³ ahead); T = 1,024:")
    assert text.endswith("(1 seed)")
    assert "not yet measured" in sweep.by_length_text(paired.iloc[:0])
