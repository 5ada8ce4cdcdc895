"""Chapter 08's section on training at LRA lengths: the LRA classifier's training step at long
padded lengths, against softmax's, and the targets stated before measuring."""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from ... import bench
from ...book.deliver import styled
from ...display import name
from .page import CUBIC, THREADS, once

#: The activations of the training benchmarks at LRA lengths.
LRA_SPECS = ("softmax", CUBIC, "poly:p=1")


def lra(cfg: Mapping) -> pd.DataFrame:
    """Training steps of the LRA classifier at each padded length, as multiples of softmax's
    step time (``step_ratio``)."""
    def run():
        lcfg = cfg["lra"]
        rows = [{**r, "n": n, "step_ratio": 1 / r["ratio_to_softmax"]}
                for n in lcfg["seq_lens"]
                for r in bench.run_train_bench(list(LRA_SPECS), model="lra", size="nystromformer", seq_len=n,
                                               batch=lcfg["batch"], steps=lcfg["steps"], rounds=lcfg["rounds"],
                                               threads=THREADS)]
        return pd.DataFrame(rows)

    return once("lra", cfg, run)


def lra_table(frame: pd.DataFrame, cfg: Mapping, preset: str):
    """The LRA classifier's training step time as a multiple of softmax's, per activation and length."""
    lc = cfg["lra"]
    rows = [{"activation": name(spec),
             **{f"N = {n:,}": f"{frame[(frame['activation'] == spec) & (frame['n'] == n)]['step_ratio'].iloc[0]:.2f}"
                for n in lc["seq_lens"]}} for spec in LRA_SPECS]
    return styled(rows, f"LRA classifier (2 layers, width 64, 2 heads), training step time as a multiple of "
                        f"softmax's (preset {preset}; batch {lc['batch']} of byte sequences padded to N, median over "
                        f"{lc['rounds']} interleaved rounds of {lc['steps']} steps; below 1: faster than softmax)")


def lra_rows(frame: pd.DataFrame) -> dict[str, pd.Series]:
    """Each activation's step-time ratio to softmax's, indexed by N."""
    return {spec: frame[frame["activation"] == spec].set_index("n")["step_ratio"].sort_index() for spec in LRA_SPECS}


def lra_texts(frame: pd.DataFrame, targets: Mapping) -> dict[str, str]:
    """The step-time ratios of x³/√N and x/√N at each length, and which targets are met."""
    rows = lra_rows(frame)
    met = [name(spec) for spec, key in ((CUBIC, "lra_cubic"), ("poly:p=1", "lra_linear"))
           if bool((rows[spec] <= targets[key]).all())]
    return {"lra_cubic": ", ".join(f"{v:.2f} at N = {n:,}" for n, v in rows[CUBIC].items()),
            "lra_linear": ", ".join(f"{v:.2f} at N = {n:,}" for n, v in rows["poly:p=1"].items()),
            "lra_met": ("both targets are met" if len(met) == 2 else f"only the target of {met[0]} is met" if met
                        else "neither target is met"),
            "target_lra_cubic": f"{targets['lra_cubic']:g}", "target_lra_linear": f"{targets['lra_linear']:g}"}
