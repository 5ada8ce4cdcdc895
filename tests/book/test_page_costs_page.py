"""Chapter 08's shared page module: configuration labels, peak ratios and the path ``auto`` takes
read planted benchmark records (nothing here times anything), each grid is measured once per
process and settings, and every table names activations as a reader does."""
import pandas as pd
import pytest
from support.costs_frames import CFG, attention, causal, lra, text, train
from support.patching import patch_everywhere

from polyattn import kernels
from polyattn.studies.costs import causal as costs_causal
from polyattn.studies.costs import linear as costs_linear
from polyattn.studies.costs import lra as costs_lra
from polyattn.studies.costs import memory as costs_memory
from polyattn.studies.costs import page, training
from polyattn.studies.costs import rate as costs_rate
from polyattn.studies.costs import setup as costs_setup
from polyattn.studies.costs import time as costs_time


def test_labels_and_peak_ratio_come_from_the_records():
    df = attention()
    assert set(df["configuration"]) >= {"softmax, SDPA", "x³/√N, blocked", "x³/√N, linear (degree-3 features)"}
    peak = df[(df["configuration"] == "x³/√N, naive") & (df["n"] == 256)]["peak_ratio"].iloc[0]
    assert peak == pytest.approx(16.0 / 2.0)


def test_tables_name_activations_as_a_reader_does():
    df = attention()
    for table in (costs_time.time_table(df, CFG, "book"), costs_memory.memory_table(df, CFG, "book"),
                  costs_rate.rate_table(df, CFG, "book"), costs_linear.linear_table(df, CFG, "book"),
                  costs_causal.causal_table(causal(), CFG, "book"), costs_lra.lra_table(lra(), CFG, "book"),
                  training.training_table(train(), CFG, "book"), costs_setup.flop_table(CFG)):
        shown = text(table)
        assert "poly:" not in shown and "nan" not in shown.lower(), shown
    memory = costs_memory.memory_table(df, CFG, "book").data.set_index("configuration")
    assert memory.loc["softmax, SDPA (MiB)", "N = 64"] == "2 MiB"
    assert memory.loc["x³/√N, blocked", "N = 1,024"] == "0.80"
    rate = costs_rate.rate_table(df, CFG, "book").data.set_index("configuration")
    assert rate.loc["float32 matrix product (GFLOP/s)", "N = 256"] == "356"
    assert rate.loc["x³/√N, compiled", "N = 64"] == "0.75" and "Softpick, naive" not in rate.index


def test_auto_follows_the_library_rule(monkeypatch):
    df = attention()
    patch_everywhere(monkeypatch, kernels.compiled, "auto_enabled", lambda: True)
    ratios, paths = page.auto_cubic(df, CFG)
    assert paths == ["compiled"] and list(ratios) == [0.8, 0.9]
    patch_everywhere(monkeypatch, kernels.compiled, "auto_enabled", lambda: False)
    ratios, paths = page.auto_cubic(df, CFG)
    assert paths == ["blocked"] and list(ratios) == [1.1, 0.95]


def test_each_grid_is_measured_once_per_settings(monkeypatch):
    patch_everywhere(monkeypatch, page, "_MEASURED", {})
    calls = []

    def run():
        calls.append(1)
        return pd.DataFrame({"x": [1]})

    first = page.once("attention", CFG, run)
    first.loc[0, "x"] = 99                                # a caller's change does not reach the store
    assert page.once("attention", CFG, run)["x"].iloc[0] == 1 and len(calls) == 1
    page.once("attention", {**CFG, "rounds": 2}, run)
    page.once("causal", CFG, run)
    assert len(calls) == 3


def test_the_longest_length_runs_with_its_own_batch_and_the_captions_say_so(monkeypatch):
    cfg = {**CFG, "big_batch": 1, "naive_max_n": 64, "min_rounds": 1}
    assert page.shape(cfg)["batch"] == CFG["batch"] and page.shape(cfg, CFG["ns"][-1])["batch"] == CFG["batch"]
    assert page.shape(cfg, CFG["big_n"])["batch"] == 1
    assert page.shape_text(cfg) == f"batch {CFG['batch']} (batch 1 at N = {CFG['big_n']:,}), 2 heads, head dimension 8"
    assert page.shape_text(CFG) == page.shape_text(cfg, longest=False) == "batch 2, 2 heads, head dimension 8"
    assert page.naive_max_n(cfg) == 64 and page.timing(cfg)["min_rounds"] == 1 and page.timing(CFG)["min_rounds"] == 2
    calls = []
    patch_everywhere(monkeypatch, page.bench, "run_attention_bench",
                        lambda ns, **kw: calls.append((list(ns), kw["batch"], kw["naive_max_n"], kw["min_rounds"])) or [])
    patch_everywhere(monkeypatch, page, "attention_frame", lambda records: pd.DataFrame())
    patch_everywhere(monkeypatch, page, "_MEASURED", {})
    page.attention(cfg)
    assert calls == [(CFG["ns"], CFG["batch"], 64, 1), ([CFG["big_n"]], 1, 64, 1)]
    # the operation count of the longest length's column is that of its batch
    table = costs_setup.flop_table(cfg).data
    half = costs_setup.flop_table({**cfg, "big_batch": CFG["batch"]}).data
    column = f"N = {CFG['big_n']:,}"
    assert float(table[column].iloc[0]) * 2 == pytest.approx(float(half[column].iloc[0]), rel=0.02)


def test_the_time_caption_says_how_many_rounds_each_length_had():
    df = attention()
    df["rounds"] = [3 if n == 64 else 1 for n in df["n"]]
    assert costs_time.rounds_text(df) == "3 rounds at N = 64; 1 round at N = 256, 1,024"
    assert costs_time.rounds_text(attention()) == "rounds not recorded"
