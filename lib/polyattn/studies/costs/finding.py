"""Chapter 08's finding: the numbers :mod:`polyattn.measures.costs` states, from the measurements
of every section (each measured once), and the verdict's table."""
from __future__ import annotations

from typing import Mapping

from ...book.deliver import styled
from ...display import name
from .causal import causal, causal_series
from .linear import linear_from
from .lra import lra, lra_rows
from .page import CUBIC, THREADS, attention, auto_cubic, value_at
from .training import training


def cost_numbers(cfg: Mapping, targets: Mapping) -> dict[str, object]:
    """The numbers :func:`polyattn.measures.costs.save` stores (every key of its ``FIELDS``), from
    the measurements of this process (each measured once)."""
    df = attention(cfg)
    auto, paths = auto_cubic(df, cfg)
    lin1 = linear_from(df, cfg)
    c = causal_series(causal(cfg), targets)
    lra_steps = lra_rows(lra(cfg))
    train = training(cfg).set_index("activation")
    return {
        "threads": THREADS, "auto_paths": " or ".join(paths),
        "attention_time_min": float(auto.min()), "attention_time_max": float(auto.max()),
        "n_min": int(min(cfg["ns"])), "n_max": int(max(cfg["ns"])),
        "peak_memory": value_at(df, CUBIC, "blocked", cfg["big_n"], "peak_ratio"), "peak_memory_n": int(cfg["big_n"]),
        "linear_time_max": float(lin1.max()), "linear_from_n": int(lin1.index.min()),
        "vit_throughput": float(train.loc[CUBIC, "ratio_to_softmax"]),
        "causal_path": c["path"], "causal_time_min": float(c["cubic"].min()), "causal_time_max": float(c["cubic"].max()),
        "causal_linear_max": float(c["linear"].max()), "causal_linear_from_n": int(c["linear"].index.min()),
        "lra_n": int(max(cfg["lra"]["seq_lens"])), "lra_cubic_step": float(lra_steps[CUBIC].iloc[-1]),
        "lra_linear_step": float(lra_steps["poly:p=1"].iloc[-1]),
    }


def finding_table(numbers: Mapping[str, object], form: str):
    """The chapter's verdict with its two headline numbers."""
    return styled([{"claim": "the cost of polynomial attention", "verdict": form,
                    f"{name(CUBIC)} against SDPA softmax, time":
                        f"{numbers['attention_time_min']:.2f}–{numbers['attention_time_max']:.2f}×",
                    "micro ViT training throughput": f"{numbers['vit_throughput']:.2f}×"}],
                  "The verdict of this chapter; the sentence below gives the rest of its numbers")
