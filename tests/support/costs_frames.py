"""Chapter 08's settings and planted benchmark frames (nothing here times anything), as its page
modules read them."""
import pandas as pd

from polyattn.studies.costs import page as costs_page

CFG = dict(ns=[64, 256], big_n=1024, batch=2, heads=2, head_dim=8, rounds=1, round_budget=1.0, sample_s=0.01,
           causal_ns=[256, 1024], train=dict(size="micro", batch=8, steps=1, rounds=1, image_size=8),
           lra=dict(seq_lens=[512, 1024], batch=2, steps=1, rounds=1))
TARGETS = {"causal_cubic": 1.0, "causal_linear": 0.2, "causal_linear_from": 1024, "lra_cubic": 1.0,
           "lra_linear": 0.5}


def record(activation, path, n, ratio, peak=1.0, fraction=0.5, sdpa_ms=10.0):
    return {"activation": activation, "path": path, "n": n, "time_ms": ratio * sdpa_ms, "peak_mb": peak,
            "ratio_to_sdpa": ratio, "gflop_s": 1.0, "matmul_gflop_s": 100.0 + n, "matmul_fraction": fraction}


def attention(compiled=(0.8, 0.9), blocked=(1.1, 0.95), lin3=0.5):
    """Planted records: SDPA's peak 2 MiB at every N; the cubic's blocked path at 1.1 and 0.95 of SDPA's
    time (N = 64, 256); the compiled path at ``compiled`` (None: not built); the naive path at 8 MiB."""
    records = []
    for i, n in enumerate(CFG["ns"]):
        records += [record("softmax", "sdpa", n, 1.0, peak=2.0, fraction=0.7),
                    record("poly:p=3", "blocked", n, blocked[i], peak=1.5, fraction=0.6),
                    record("poly:p=3", "naive", n, 2.0, peak=8.0 * (i + 1)),
                    record("poly:p=1", "blocked", n, 0.9), record("poly:p=1", "linear", n, 0.06 / (i + 1)),
                    record("poly:p=2", "blocked", n, 1.0), record("poly:p=2", "linear", n, 0.25),
                    record("softpick", "naive", n, 3.0)]
        if compiled is not None:
            records.append(record("poly:p=3", "compiled", n, compiled[i], fraction=0.75))
    big = CFG["big_n"]
    records += [record("softmax", "sdpa", big, 1.0, peak=2.0), record("poly:p=3", "blocked", big, 1.0, peak=1.6),
                record("poly:p=1", "linear", big, 0.01), record("poly:p=2", "linear", big, 0.2),
                record("poly:p=3", "linear", big, lin3, peak=3.0)]
    return costs_page.attention_frame(records)


def causal(cubic=(0.7, 0.8), floor=(0.9, 1.1), linear=(0.3, 0.1), compiled=True):
    records = []
    for i, n in enumerate(CFG["causal_ns"]):
        records += [record("softmax", "sdpa", n, 1.0), record("poly:p=3", "blocked", n, 1.05),
                    record("poly:p=1", "blocked", n, floor[i]), record("poly:p=1", "linear", n, linear[i])]
        if compiled:
            records.append(record("poly:p=3", "compiled", n, cubic[i]))
    return costs_page.attention_frame(records)


def lra(cubic=(0.8, 0.7), linear=(0.4, 0.6)):
    rows = []
    for i, n in enumerate(CFG["lra"]["seq_lens"]):
        for spec, ratio in (("softmax", 1.0), ("poly:p=3", cubic[i]), ("poly:p=1", linear[i])):
            rows.append({"activation": spec, "images_per_s": 1.0, "step_ms": ratio, "ratio_to_softmax": 1 / ratio,
                         "n": n, "step_ratio": ratio})
    return pd.DataFrame(rows)


def train():
    return pd.DataFrame([{"activation": "softmax", "images_per_s": 1000.0, "step_ms": 8.0, "ratio_to_softmax": 1.0},
                         {"activation": "poly:p=3", "images_per_s": 1100.0, "step_ms": 7.3, "ratio_to_softmax": 1.1}])


def text(styler) -> str:
    return styler.data.to_string() + " " + " ".join(styler.data.columns) + " " + (styler.caption or "")
