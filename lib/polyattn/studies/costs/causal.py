"""Chapter 08's causal masks section: causal forward and backward against SDPA's causal call, and
the targets stated before measuring."""
from __future__ import annotations

from typing import Mapping, Optional

import pandas as pd

from ... import bench, kernels
from ...book.deliver import styled
from .page import CUBIC, attention_frame, once, pivot_rows, series, shape, shape_text, timing, value_range


def causal_cases(compiled: Optional[bool] = None) -> list:
    """The causal benchmark's configurations (the compiled path only where it builds)."""
    compiled = kernels.compiled.available() if compiled is None else compiled
    cases = [bench.Case(CUBIC, "blocked"), bench.Case("poly:p=1", "blocked"), bench.Case("poly:p=1", "linear")]
    if compiled:
        cases.insert(1, bench.Case(CUBIC, "compiled"))
    return cases


def causal(cfg: Mapping) -> pd.DataFrame:
    """Causal forward and backward against SDPA's causal call: the cubic on the blocked path (and
    the compiled one where it builds), x/sqrt(N) on the blocked path and as a running sum."""
    def run():
        records = bench.run_attention_bench(
            cfg["causal_ns"], cases=causal_cases(), causal=True, rounds=min(cfg["rounds"], 3), memory=False,
            **timing(cfg), **shape(cfg))
        return attention_frame(records)

    return once("causal", cfg, run)


def causal_table(frame: pd.DataFrame, cfg: Mapping, preset: str):
    """Causal time as a multiple of SDPA's causal time, per configuration and N."""
    return styled(pivot_rows(frame, "ratio_to_sdpa", lambda x: f"{x:.2f}"),
                  f"Causal attention, forward and backward, time as a multiple of SDPA's causal softmax (preset "
                  f"{preset}; {shape_text(cfg, longest=False)}; one thread; median over interleaved rounds)")


def causal_series(frame: pd.DataFrame, targets: Mapping) -> dict:
    """The cubic's fastest causal path (``path``) and its time against SDPA there (``cubic``), on
    the blocked path (``blocked``), x/sqrt(N) on the blocked path (``floor``) and its running sum
    from the target's length on (``linear``)."""
    cubic_path = "compiled" if not series(frame, CUBIC, "compiled").empty else "blocked"
    lin = series(frame, "poly:p=1", "linear")
    lin_from = lin[lin.index >= min(targets["causal_linear_from"], max(lin.index))]
    return {"path": cubic_path, "cubic": series(frame, CUBIC, cubic_path), "blocked": series(frame, CUBIC, "blocked"),
            "floor": series(frame, "poly:p=1", "blocked"), "linear": lin_from}


def causal_texts(frame: pd.DataFrame, targets: Mapping) -> dict[str, str]:
    """The cubic on its fastest causal path and on the blocked path, the floor of the blocked path
    (x/sqrt(N): its tiles and products without elementwise work), the running-sum form of x/sqrt(N),
    and which of the targets stated before measuring are met."""
    s = causal_series(frame, targets)
    cubic_met = bool((s["cubic"] <= targets["causal_cubic"]).all())
    linear_met = bool((s["linear"] <= targets["causal_linear"]).all())
    met = ("both targets are met" if cubic_met and linear_met else
           "the cubic's target is met and the linear form's is not" if cubic_met else
           "the linear form's target is met and the cubic's is not" if linear_met else "neither target is met")
    return {"causal_cubic_path": s["path"], "causal_cubic_range": value_range(s["cubic"]),
            "causal_blocked_range": value_range(s["blocked"]), "causal_floor_range": value_range(s["floor"]),
            "causal_floor_where": ("is above 1 at every measured length" if bool((s["floor"] > 1.0).all()) else
                                   "is at or below 1 at every measured length" if bool((s["floor"] <= 1.0).all()) else
                                   "is above 1 at some measured lengths only"),
            "causal_linear_max": f"{s['linear'].max():.3f}", "causal_linear_from": f"{int(s['linear'].index.min()):,}",
            "causal_met": met, "causal_linear_impl": ("in the C++ extension described next"
                                                      if kernels.compiled.auto_enabled() else
                                                      "in PyTorch (the C++ extension described next is not in use)"),
            "target_causal_cubic": f"{targets['causal_cubic']:g}", "target_causal_linear": f"{targets['causal_linear']:g}",
            "target_causal_from": f"{targets['causal_linear_from']:,}"}
