"""Chapter 08's page module: its tables, figure and glued phrases read planted benchmark records
(nothing here times anything), and each grid is measured once per process and settings."""
import pandas as pd
import pytest

from polyattn import kernels
from polyattn.measures import costs as measured
from polyattn.pages import costs as page

CFG = dict(ns=[64, 256], big_n=1024, batch=2, heads=2, head_dim=8, rounds=1, round_budget=1.0, sample_s=0.01,
           causal_ns=[256, 1024], train=dict(size="micro", batch=8, steps=1, rounds=1, image_size=8),
           lra=dict(seq_lens=[512, 1024], batch=2, steps=1, rounds=1))
TARGETS = {"causal_cubic": 1.0, "causal_linear": 0.2, "causal_linear_from": 1024, "lra_cubic": 1.0,
           "lra_linear": 0.5}


def _record(activation, path, n, ratio, peak=1.0, fraction=0.5, sdpa_ms=10.0):
    return {"activation": activation, "path": path, "n": n, "time_ms": ratio * sdpa_ms, "peak_mb": peak,
            "ratio_to_sdpa": ratio, "gflop_s": 1.0, "matmul_gflop_s": 100.0 + n, "matmul_fraction": fraction}


def _attention(compiled=(0.8, 0.9), blocked=(1.1, 0.95), lin3=0.5):
    """Planted records: SDPA's peak 2 MiB at every N; the cubic's blocked path at 1.1 and 0.95 of SDPA's
    time (N = 64, 256); the compiled path at ``compiled`` (None: not built); the naive path at 8 MiB."""
    records = []
    for i, n in enumerate(CFG["ns"]):
        records += [_record("softmax", "sdpa", n, 1.0, peak=2.0, fraction=0.7),
                    _record("poly:p=3", "blocked", n, blocked[i], peak=1.5, fraction=0.6),
                    _record("poly:p=3", "naive", n, 2.0, peak=8.0 * (i + 1)),
                    _record("poly:p=1", "blocked", n, 0.9), _record("poly:p=1", "linear", n, 0.06 / (i + 1)),
                    _record("poly:p=2", "blocked", n, 1.0), _record("poly:p=2", "linear", n, 0.25),
                    _record("softpick", "naive", n, 3.0)]
        if compiled is not None:
            records.append(_record("poly:p=3", "compiled", n, compiled[i], fraction=0.75))
    big = CFG["big_n"]
    records += [_record("softmax", "sdpa", big, 1.0, peak=2.0), _record("poly:p=3", "blocked", big, 1.0, peak=1.6),
                _record("poly:p=1", "linear", big, 0.01), _record("poly:p=2", "linear", big, 0.2),
                _record("poly:p=3", "linear", big, lin3, peak=3.0)]
    return page.attention_frame(records)


def _causal(cubic=(0.7, 0.8), floor=(0.9, 1.1), linear=(0.3, 0.1), compiled=True):
    records = []
    for i, n in enumerate(CFG["causal_ns"]):
        records += [_record("softmax", "sdpa", n, 1.0), _record("poly:p=3", "blocked", n, 1.05),
                    _record("poly:p=1", "blocked", n, floor[i]), _record("poly:p=1", "linear", n, linear[i])]
        if compiled:
            records.append(_record("poly:p=3", "compiled", n, cubic[i]))
    return page.attention_frame(records)


def _lra(cubic=(0.8, 0.7), linear=(0.4, 0.6)):
    rows = []
    for i, n in enumerate(CFG["lra"]["seq_lens"]):
        for spec, ratio in (("softmax", 1.0), ("poly:p=3", cubic[i]), ("poly:p=1", linear[i])):
            rows.append({"activation": spec, "images_per_s": 1.0, "step_ms": ratio, "ratio_to_softmax": 1 / ratio,
                         "n": n, "step_ratio": ratio})
    return pd.DataFrame(rows)


def _train():
    return pd.DataFrame([{"activation": "softmax", "images_per_s": 1000.0, "step_ms": 8.0, "ratio_to_softmax": 1.0},
                         {"activation": "poly:p=3", "images_per_s": 1100.0, "step_ms": 7.3, "ratio_to_softmax": 1.1}])


def _text(styler) -> str:
    return styler.data.to_string() + " " + " ".join(styler.data.columns) + " " + (styler.caption or "")


def test_labels_and_peak_ratio_come_from_the_records():
    df = _attention()
    assert set(df["configuration"]) >= {"softmax, SDPA", "x³/√N, blocked", "x³/√N, linear (degree-3 features)"}
    peak = df[(df["configuration"] == "x³/√N, naive") & (df["n"] == 256)]["peak_ratio"].iloc[0]
    assert peak == pytest.approx(16.0 / 2.0)


def test_tables_name_activations_as_a_reader_does():
    df = _attention()
    for table in (page.time_table(df, CFG, "book"), page.memory_table(df, CFG, "book"), page.rate_table(df, CFG, "book"),
                  page.linear_table(df, CFG, "book"), page.causal_table(_causal(), CFG, "book"),
                  page.lra_table(_lra(), CFG, "book"), page.training_table(_train(), CFG, "book"), page.flop_table(CFG)):
        text = _text(table)
        assert "poly:" not in text and "nan" not in text.lower(), text
    memory = page.memory_table(df, CFG, "book").data.set_index("configuration")
    assert memory.loc["softmax, SDPA (MiB)", "N = 64"] == "2 MiB"
    assert memory.loc["x³/√N, blocked", "N = 1,024"] == "0.80"
    rate = page.rate_table(df, CFG, "book").data.set_index("configuration")
    assert rate.loc["float32 matrix product (GFLOP/s)", "N = 256"] == "356"
    assert rate.loc["x³/√N, compiled", "N = 64"] == "0.75" and "Softpick, naive" not in rate.index


def test_the_compiled_path_is_reported_as_measured():
    texts = page.time_texts(_attention(), CFG)
    assert (texts["cubic_best"], texts["cubic_best_n"], texts["cubic_worst"], texts["cubic_worst_n"]) == \
        ("0.95", "256", "1.10", "64")                      # the longest length (1024) is not among ns
    assert texts["compiled_rule"] == "takes 0.73–0.95 times the blocked path's time: faster at every measured length"
    slower = page.time_texts(_attention(compiled=(0.8, 1.0)), CFG)
    assert slower["compiled_rule"].endswith("not faster at every measured length")
    missing = page.time_texts(_attention(compiled=None), CFG)
    assert missing["compiled_time"].startswith("was not measured") and "did not build" in missing["compiled_rule"]


def test_no_length_at_the_rule_is_said_so():
    records = [_record("softmax", "sdpa", n, 1.0) for n in (16, 32)]
    records += [_record("poly:p=3", "blocked", n, 2.0) for n in (16, 32)]
    records += [_record("poly:p=3", "compiled", n, 1.5) for n in (16, 32)]
    texts = page.time_texts(page.attention_frame(records), {**CFG, "ns": [16, 32]})
    assert "no length of 48 keys or more" in texts["compiled_rule"]
    assert texts["compiled_time"] == "takes 1.50–1.50 times SDPA's time over the same lengths and 0.75–0.75 times " \
                                     "the blocked path's"


def test_auto_follows_the_library_rule(monkeypatch):
    df = _attention()
    monkeypatch.setattr(kernels.compiled, "auto_enabled", lambda: True)
    ratios, paths = page.auto_cubic(df, CFG)
    assert paths == ["compiled"] and list(ratios) == [0.8, 0.9]
    monkeypatch.setattr(kernels.compiled, "auto_enabled", lambda: False)
    ratios, paths = page.auto_cubic(df, CFG)
    assert paths == ["blocked"] and list(ratios) == [1.1, 0.95]


def test_memory_and_linear_forms():
    df = _attention()
    mem = page.memory_texts(df, CFG)
    assert (mem["naive_peak"], mem["naive_n"], mem["big_peak"]) == ("8.0", "256", "0.80")
    lin = page.linear_texts(df, CFG)
    assert (lin["lin1_worst"], lin["lin1_from"]) == ("0.030", "256")     # from min(1024, longest N) on
    assert lin["lin2_vs_blocked"] == "0.25" and lin["lin3_vs_blocked"] == "0.50" and lin["lin3_result"] == "wins"
    assert page.linear_texts(_attention(lin3=1.5), CFG)["lin3_result"] == "does not win"
    rows = {r["p"]: r for r in page.linear_rows(df, CFG)}
    assert rows[3]["features"] == 120 and rows[1]["features"] == 8 and rows[3]["n"] == CFG["big_n"]


def test_rate_takes_the_cubic_s_faster_path():
    texts = page.rate_texts(_attention(), CFG)
    assert (texts["rate_best_path"], texts["rate_best"], texts["rate_sdpa"], texts["rate_gflop"]) == \
        ("compiled", "0.75", "0.70", "356")
    assert page.rate_texts(_attention(compiled=None), CFG)["rate_best_path"] == "blocked"


def test_targets_are_judged_on_every_length():
    texts = page.causal_texts(_causal(), TARGETS)
    assert texts["causal_cubic_path"] == "compiled" and texts["causal_met"] == "both targets are met"
    assert texts["causal_linear_from"] == "1,024" and texts["causal_linear_max"] == "0.100"
    # the linear form's target from N = 256 on includes 0.3 there
    early = page.causal_texts(_causal(), {**TARGETS, "causal_linear_from": 256})
    assert early["causal_met"] == "the cubic's target is met and the linear form's is not"
    assert page.causal_texts(_causal(cubic=(0.7, 1.2)), TARGETS)["causal_met"] == \
        "the linear form's target is met and the cubic's is not"
    assert page.causal_texts(_causal(cubic=(0.7, 1.2), linear=(0.3, 0.3)), TARGETS)["causal_met"] == \
        "neither target is met"
    assert page.causal_texts(_causal(floor=(1.1, 1.2)), TARGETS)["causal_floor_where"] == \
        "is above 1 at every measured length"
    assert page.causal_texts(_causal(floor=(0.9, 1.0)), TARGETS)["causal_floor_where"] == \
        "is at or below 1 at every measured length"
    assert texts["causal_floor_where"] == "is above 1 at some measured lengths only"
    assert texts["causal_floor_range"] == "0.90–1.10"
    assert page.causal_texts(_causal(compiled=False), TARGETS)["causal_cubic_path"] == "blocked"
    lra = page.lra_texts(_lra(), TARGETS)
    assert lra["lra_met"] == "only the target of x³/√N is met"
    assert lra["lra_cubic"] == "0.80 at N = 512, 0.70 at N = 1,024"
    assert page.lra_texts(_lra(linear=(0.4, 0.5)), TARGETS)["lra_met"] == "both targets are met"


def test_the_stored_numbers_are_what_the_measure_needs(monkeypatch, tmp_path):
    frames = {"attention": _attention(), "causal": _causal(), "lra": _lra(), "training": _train()}
    for kind, frame in frames.items():
        monkeypatch.setattr(page, kind, lambda cfg, frame=frame: frame.copy())
    monkeypatch.setattr(kernels.compiled, "auto_enabled", lambda: True)
    numbers = page.cost_numbers(CFG, TARGETS)
    assert set(numbers) == set(measured.FIELDS)
    assert (numbers["attention_time_min"], numbers["attention_time_max"], numbers["auto_paths"]) == (0.8, 0.9, "compiled")
    assert numbers["peak_memory"] == pytest.approx(0.8) and numbers["vit_throughput"] == 1.1
    assert (numbers["lra_n"], numbers["lra_cubic_step"], numbers["causal_linear_from_n"]) == (1024, 0.7, 1024)
    measured.save(numbers, repo=tmp_path)
    finding = measured.cost(repo=tmp_path)
    assert finding.form == "measured" and "0.80–0.90" in finding.summary
    table = page.finding_table(numbers, finding.form).data.iloc[0]
    assert table["x³/√N against SDPA softmax, time"] == "0.80–0.90×"


def test_each_grid_is_measured_once_per_settings(monkeypatch):
    monkeypatch.setattr(page, "_MEASURED", {})
    calls = []

    def run():
        calls.append(1)
        return pd.DataFrame({"x": [1]})

    first = page._once("attention", CFG, run)
    first.loc[0, "x"] = 99                                # a caller's change does not reach the store
    assert page._once("attention", CFG, run)["x"].iloc[0] == 1 and len(calls) == 1
    page._once("attention", {**CFG, "rounds": 2}, run)
    page._once("causal", CFG, run)
    assert len(calls) == 3


def test_the_figure_has_few_lines_and_readable_names():
    fig = page.scaling_figure(_attention(), "book")
    for ax in fig.axes:
        assert 0 < len(ax.lines) <= 6
        assert all("poly:" not in line.get_label() for line in ax.lines)
    labels = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert labels[0] == "softmax, SDPA" and "x³/√N, compiled" in labels
    sizes = [t.get_fontsize() for ax in fig.axes for t in ax.texts + [ax.xaxis.label, ax.yaxis.label]]
    assert min(sizes) >= 9
    assert page.scaling_figure(_attention(compiled=None), "book").axes[0].lines.__len__() == 5


def test_setup_texts_place_the_feature_map_s_break_even():
    texts = page.setup_texts(CFG)
    assert texts["cubic_features"] == "120" and texts["cubic_break_even"] == "103"
    assert texts["cubic_beyond"] == "N = 256, N = 1,024"
    assert page.setup_texts({**CFG, "ns": [16, 32], "big_n": 64})["cubic_beyond"] == "none of them"
