"""Structure of the benchmarks (tiny sizes).  No timing is asserted anywhere."""
import json

import pytest
import torch

from polyattn import bench
from polyattn.bench import (
    MATMUL,
    RECORD_KEYS,
    REFERENCE,
    TRAIN_RECORD_KEYS,
    Case,
    attention_cases,
    forward_backward,
    make_inputs,
    paths_for,
    peak_memory_bytes,
)
from polyattn.kernels import blocked as _blocked
from polyattn.kernels import compiled

TINY = dict(batch=1, heads=2, head_dim=4, rounds=1)


def test_cases_cover_every_path_with_sdpa_first():
    cases = attention_cases()
    assert cases[0] == REFERENCE == Case("softmax", "sdpa")
    assert len(set(cases)) == len(cases)
    built = ["compiled"] if compiled.available() else []      # the C++ extension of the compiled path
    assert paths_for("poly:p=1") == ["blocked", "linear"] + built + ["naive"]
    assert paths_for("poly:p=3") == ["blocked", "linear"] + built + ["naive"]
    assert paths_for("poly:p=4") == ["blocked"] + built + ["naive"]
    assert paths_for("relu_n") == ["blocked", "naive"]
    assert paths_for("softpick") == ["naive"]
    assert paths_for("softmax") == ["sdpa", "naive"]
    only = attention_cases(["poly:p=2", "relu_n"], paths=["linear"])
    assert only == [REFERENCE, Case("poly:p=2", "linear")]


def test_attention_records_and_reference_ratio():
    records = bench.run_attention_bench([8, 12], ["poly:p=3", "poly:p=1", "softpick"], **TINY, naive_max_n=8)
    assert all(tuple(r) == RECORD_KEYS for r in records)
    for n in (8, 12):
        rows = [r for r in records if r["n"] == n]
        assert (rows[0]["activation"], rows[0]["path"]) == ("softmax", "sdpa")
        assert rows[0]["ratio_to_sdpa"] == 1.0
        assert all(r["time_ms"] > 0 and r["peak_mb"] >= 0 for r in rows)
        paths = {(r["activation"], r["path"]) for r in rows}
        assert ("poly:p=1", "linear") in paths and ("poly:p=3", "blocked") in paths
        assert (("softpick", "naive") in paths) == (n <= 8)            # naive skipped above naive_max_n
    table = bench.format_attention_table(records, {"batch": 1})
    assert "sdpa" in table and "poly:p=1" in table and table.count("\n") == len(records) + 2
    assert all(r["gflop_s"] > 0 and r["matmul_gflop_s"] is None and r["matmul_fraction"] is None for r in records)


def test_a_matched_matrix_product_runs_in_the_same_rounds():
    cases = [Case("poly:p=3", "blocked"), Case("poly:p=1", "linear")]
    records = bench.run_attention_bench([8, 24], cases=cases, batch=1, heads=2, head_dim=4, rounds=2, memory=False,
                                        matmul=True)
    assert all(tuple(r) == RECORD_KEYS for r in records)
    for n in (8, 24):
        rows = [r for r in records if r["n"] == n]
        assert [(r["activation"], r["path"]) for r in rows] == [("softmax", "sdpa"), ("poly:p=3", "blocked"),
                                                                 ("poly:p=1", "linear")]
        assert len({r["matmul_gflop_s"] for r in rows}) == 1 and rows[0]["matmul_gflop_s"] > 0
        for r in rows:
            flops = bench.case_flops(Case(r["activation"], r["path"]), n, 1, 2, 4)
            assert r["gflop_s"] == pytest.approx(flops / (r["time_ms"] / 1e3) / 1e9)
            assert r["matmul_fraction"] > 0
    table = bench.format_attention_table(records)
    assert table.count("float32 matmul") == 2 and table.count("\n") == len(records) + 3


def test_matched_matrix_product_does_the_quadratic_paths_work():
    flops = bench.case_flops(REFERENCE, 256, 8, 4, 32)
    assert flops == 8 * 4 * 7 * 2 * 256 * 256 * 32
    side = bench.matched_matmul_side(256, 8, 4, 32)
    assert abs(2 * side ** 3 - flops) <= 2 * 3 * side ** 2 + 1          # the nearest side
    assert bench.matched_matmul_side(1, 1, 1, 1) == bench.MATMUL_MIN_SIDE
    assert bench.matched_matmul_side(65536, 8, 4, 32) == bench.MATMUL_MAX_SIDE
    assert bench.matched_matmul_side(256, 8, 4, 32, causal=True) < side
    assert bench.square_matmul_side(2 * 100 ** 3) == 100
    with pytest.raises(ValueError, match="lo <= hi"):
        bench.square_matmul_side(1e6, lo=10, hi=5)


def test_explicit_cases_get_the_reference_in_front():
    records = bench.run_attention_bench([8], cases=[Case("poly:p=1", "linear")], **TINY, memory=False)
    assert [(r["activation"], r["path"]) for r in records] == [("softmax", "sdpa"), ("poly:p=1", "linear")]
    with pytest.raises(ValueError, match="no path"):
        bench.run_attention_bench([8], cases=[Case("relu_n", "linear")], **TINY)


def test_records_without_memory():
    records = bench.run_attention_bench([8], ["relu_n"], **TINY, memory=False)
    assert [r["peak_mb"] for r in records] == [None, None, None]


def test_peak_memory_sees_freed_and_kept_allocations():
    assert peak_memory_bytes(lambda: torch.empty(1000)) >= 4000
    def temporary():
        t = torch.empty(250_000)
        del t
        return torch.empty(10)
    assert peak_memory_bytes(temporary) >= 1_000_000


def test_blocked_path_never_holds_the_score_matrix():
    # 2 batch-heads, N = 1024: one N x N float32 matrix per head is 4 MiB
    n, bh = 1024, 2
    q, k, v, grad = make_inputs(n, batch=1, heads=bh, head_dim=8)
    score_bytes = bh * n * n * 4
    _blocked.clear_workspace()            # the first call also allocates the scratch tiles
    blocked = peak_memory_bytes(forward_backward(Case("poly:p=3", "blocked"), q, k, v, grad))
    naive = peak_memory_bytes(forward_backward(Case("poly:p=3", "naive"), q, k, v, grad))
    assert blocked < score_bytes / 2 < score_bytes < naive


def test_train_records_and_reference_ratio():
    records = bench.run_train_bench(["poly:p=3", "softmax"], size="micro", batch=2, steps=1, rounds=1,
                                    image_size=8)
    assert [r["activation"] for r in records] == ["softmax", "poly:p=3"]
    assert all(tuple(r) == TRAIN_RECORD_KEYS for r in records)
    assert records[0]["ratio_to_softmax"] == 1.0
    assert all(r["images_per_s"] > 0 for r in records)
    assert "x softmax" in bench.format_train_table(records)


def test_train_bench_runs_the_lra_model_with_padding_masks(capsys):
    records = bench.run_train_bench(["poly:p=3", "poly:p=1", "softmax"], size="tiny", batch=2, steps=1, rounds=1,
                                    model="lra", seq_len=64)
    assert [r["activation"] for r in records] == ["softmax", "poly:p=3", "poly:p=1"]
    assert all(r["step_ms"] > 0 for r in records)
    with pytest.raises(ValueError, match="unknown benchmark model"):
        bench.run_train_bench(["softmax"], model="bert", steps=1, rounds=1)
    assert bench.main(["train", "--model", "lra", "--size", "tiny", "--seq-len", "32", "--batch", "2",
                       "--steps", "1", "--rounds", "1", "--activations", "poly:p=3"]) == 0
    assert "padded length 32" in capsys.readouterr().out


def test_command_line_writes_records(tmp_path, capsys):
    out = tmp_path / "records.json"
    assert bench.main(["attention", "--n", "8", "--batch", "1", "--heads", "1", "--head-dim", "4",
                       "--activations", "poly:p=3;poly:p=2", "--paths", "sdpa,blocked,linear",
                       "--rounds", "2", "--min-rounds", "1", "--round-budget", "0", "--json", str(out)]) == 0
    records = json.loads(out.read_text())
    assert {r["rounds"] for r in records} == {1}            # the budget allows none; --min-rounds 1 times one
    assert [(r["activation"], r["path"]) for r in records] == [("softmax", "sdpa"), ("poly:p=3", "blocked"),
                                                                 ("poly:p=3", "linear"), ("poly:p=2", "blocked"),
                                                                 ("poly:p=2", "linear")]
    assert all(tuple(r) == RECORD_KEYS for r in records)
    assert "poly:p=2" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        bench.main(["attention", "--paths", "fast"])
    with pytest.raises(SystemExit):
        bench.main(["attention", "--n", "0"])


def test_save_and_load_keep_provenance(tmp_path):
    records = [{"activation": "softmax", "path": "sdpa", "n": 8, "time_ms": 1.0, "peak_mb": 0.1,
                "ratio_to_sdpa": 1.0}]
    path = bench.save(tmp_path / "run.json", "attention", records, {"batch": 1})
    data = bench.load(path)
    assert data["records"] == records and data["kind"] == "attention"
    assert "hardware" in data["provenance"] and "git_commit" in data["provenance"]
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not a stored benchmark run"):
        bench.load(tmp_path / "bad.json")


def test_matmul_flops_count_the_products():
    n, d = 100, 8
    assert bench.matmul_flops(n, d, "sdpa") == bench.matmul_flops(n, d, "blocked") == 7 * 2 * n * n * d
    assert bench.matmul_flops(n, d, "compiled") == bench.matmul_flops(n, d, "blocked")
    assert bench.matmul_flops(n, d, "naive") == 6 * 2 * n * n * d
    assert bench.matmul_flops(n, d, "blocked", causal=True) == 7 * n * n * d
    assert bench.matmul_flops(n, d, "linear", degree=1) == 6 * 2 * n * d * d
    assert bench.matmul_flops(n, d, "linear", degree=2) == 6 * 2 * n * 36 * d
    assert bench.matmul_flops(n, d, "blocked", value_dim=4) == 2 * n * n * (4 * d + 3 * 4)
    with pytest.raises(ValueError, match="degree"):
        bench.matmul_flops(n, d, "linear")
    with pytest.raises(ValueError, match="unknown path"):
        bench.matmul_flops(n, d, "flash")
    rows = bench.flops_records([10, 20], [REFERENCE, Case("poly:p=1", "linear")], batch=2, heads=3, head_dim=4)
    assert len(rows) == 4 and rows[0]["gflop"] == 3 * 2 * 7 * 2 * 10 * 10 * 4 / 1e9


def test_distinct_cost_specs_drop_only_other_constants():
    specs = ["softmax", "poly:p=3", "poly:p=3,c=1/14", "poly:p=3,c=1", "poly:p=2", "poly:p=2,c=1/2",
             "relu_n", "ssmax:s=0.4", "ssmax:s=1"]
    assert bench.distinct_cost_specs(specs) == ["softmax", "poly:p=3", "poly:p=2", "relu_n", "ssmax:s=0.4",
                                                "ssmax:s=1"]
    # the first of a family wins, whether or not it carries a constant
    assert bench.distinct_cost_specs(["poly:p=3,c=1", "poly:p=3"]) == ["poly:p=3,c=1"]


@pytest.mark.parametrize("long_call_s, warmups", [(1e9, 2), (0.0, 1)])
def test_a_long_warm_up_call_is_not_repeated(monkeypatch, long_call_s, warmups):
    calls = []
    real = bench.forward_backward

    def counting(case, *args, **kwargs):
        fn = real(case, *args, **kwargs)
        return lambda: calls.append(case) or fn()

    monkeypatch.setattr(bench, "forward_backward", counting)
    monkeypatch.setattr(bench, "LONG_CALL_S", long_call_s)
    bench.run_attention_bench([8], cases=[Case("poly:p=3", "blocked")], batch=1, heads=1, head_dim=4, rounds=2,
                              round_budget_s=1e9, sample_s=0.0, memory=False)
    # per configuration: the warm-up calls, then two rounds of one call each
    assert calls.count(REFERENCE) == calls.count(Case("poly:p=3", "blocked")) == warmups + 2


def test_ratios_pair_the_samples_of_each_round(monkeypatch):
    # a slow phase that hits a round hits every configuration of that round: it cancels
    # (medians of the times alone would give 3 / 10)
    durations = {REFERENCE: [1, 10, 10], Case("poly:p=3", "blocked"): [2, 20, 3], MATMUL: [4, 40, 40]}
    calls = {c: 0 for c in durations}
    order = []
    now = [0.0]

    def fake(case):
        def run():
            i = calls[case]
            calls[case] += 1
            if i >= 2:
                order.append(case)
            now[0] += durations[case][max(0, i - 2)] if i >= 2 else 1.0   # two warm-up calls
        return run

    monkeypatch.setattr(bench, "forward_backward", lambda case, *a, **kw: fake(case))
    monkeypatch.setattr(bench, "matmul_call", lambda side, seed=0: fake(MATMUL))
    monkeypatch.setattr(bench, "_clock", lambda threads: ("cpu", lambda: now[0]))
    monkeypatch.setattr(bench, "LONG_CALL_S", 1e9)
    records = bench.run_attention_bench([8], cases=[Case("poly:p=3", "blocked")], batch=1, heads=1, head_dim=4,
                                        rounds=3, round_budget_s=1e9, sample_s=0.0, memory=False, matmul=True)
    assert [r["ratio_to_sdpa"] for r in records] == [1.0, 2.0]
    assert [r["time_ms"] for r in records] == [10000.0, 3000.0]
    # the product runs once in every round, after the attention calls
    assert order == [REFERENCE, Case("poly:p=3", "blocked"), MATMUL] * 3
    side = bench.matched_matmul_side(8, 1, 1, 4)
    mm_flops = 2.0 * side ** 3
    assert records[0]["matmul_gflop_s"] == pytest.approx(mm_flops / 40 / 1e9)
    # rate fractions pair the rounds too: t_mm / t = 4, 4, 4 for SDPA; 2, 2, 40/3 for the cubic
    flops = bench.case_flops(REFERENCE, 8, 1, 1, 4)
    assert records[0]["matmul_fraction"] == pytest.approx(flops / mm_flops * 4)
    assert records[1]["matmul_fraction"] == pytest.approx(flops / mm_flops * 2)


def test_flop_break_even_is_where_the_feature_map_stops_costing_more():
    for d, p in ((32, 3), (32, 2), (16, 3)):
        n = bench.flop_break_even(d, p)
        assert bench.matmul_flops(n, d, "linear", p) <= bench.matmul_flops(n, d, "blocked")
        assert bench.matmul_flops(n - 1, d, "linear", p) > bench.matmul_flops(n - 1, d, "blocked")
    # chapter 08's grid: head dimension 32, the cubic's map breaks even near N = 5,100
    assert 5000 < bench.flop_break_even(32, 3) < 5200


@pytest.mark.parametrize("long_call_s, calls_each", [(1e9, 2 + 2), (0.0, 1 + 2)])
def test_the_profiled_call_is_the_first_warm_up(monkeypatch, long_call_s, calls_each):
    """With peak memory measured, the profiled call is the first warm-up: no call is added for it,
    and a long one sizes the samples itself."""
    calls, profiled = [], []
    real = bench.forward_backward

    def counting(case, *args, **kwargs):
        fn = real(case, *args, **kwargs)
        return lambda: calls.append(case) or fn()

    def peak(fn):
        profiled.append(len(calls))
        fn()
        return 1024

    monkeypatch.setattr(bench, "forward_backward", counting)
    monkeypatch.setattr(bench, "peak_memory_bytes", peak)
    monkeypatch.setattr(bench, "LONG_CALL_S", long_call_s)
    records = bench.run_attention_bench([8], cases=[Case("poly:p=3", "blocked")], batch=1, heads=1, head_dim=4,
                                        rounds=2, round_budget_s=1e9, sample_s=0.0, memory=True)
    assert calls.count(REFERENCE) == calls.count(Case("poly:p=3", "blocked")) == calls_each
    assert calls[profiled[0]] == REFERENCE and calls[profiled[1]] == Case("poly:p=3", "blocked")
    assert profiled[0] == 0, "the first call of all is profiled"
    assert [r["peak_mb"] for r in records] == [1024 / 2 ** 20] * 2 and [r["rounds"] for r in records] == [2, 2]


@pytest.mark.parametrize("min_rounds, expected", [(2, 2), (1, 1)])
def test_rounds_that_outlast_the_budget_go_down_to_min_rounds(monkeypatch, min_rounds, expected):
    now = [0.0]

    def slow(case):
        def run():
            now[0] += 1.0
        return run

    monkeypatch.setattr(bench, "forward_backward", lambda case, *a, **kw: slow(case))
    monkeypatch.setattr(bench, "_clock", lambda threads: ("cpu", lambda: now[0]))
    records = bench.run_attention_bench([8], cases=[Case("poly:p=3", "blocked")], batch=1, heads=1, head_dim=4,
                                        rounds=3, round_budget_s=0.5, sample_s=0.0, memory=False,
                                        min_rounds=min_rounds)
    assert [r["rounds"] for r in records] == [expected, expected]
    with pytest.raises(ValueError, match="min_rounds"):
        bench.run_attention_bench([8], rounds=1, min_rounds=0)
