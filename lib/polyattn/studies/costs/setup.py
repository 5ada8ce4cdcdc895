"""Chapter 08's opening sections: the sizes they name (why an elementwise activation is cheap),
the operation count of each path (the arithmetic), and the machine and shape the benchmarks ran
with (the machine and the protocol)."""
from __future__ import annotations

from typing import Mapping

from ... import bench, kernels
from ...analysis.tables import number_cell
from ...book.deliver import styled
from ...display import name
from ...kernels.linear import monomial_count
from ...results import hardware
from .page import CUBIC, CUBIC_FEATURES, THREADS, naive_max_n, shape, shape_text


def setup_texts(cfg: Mapping) -> dict[str, str]:
    """The sizes the opening sections name: head dimension, feature counts, the keeping tile, the
    cubic feature map's break-even length and which measured lengths lie past it."""
    even = bench.flop_break_even(cfg["head_dim"], 3)
    beyond = [n for n in list(cfg["ns"]) + [cfg["big_n"]] if n >= even]
    return {"head_dim": str(cfg["head_dim"]), "cubic_features": f"{monomial_count(cfg['head_dim'], 3):,}",
            "quadratic_features": f"{monomial_count(cfg['head_dim'], 2):,}",
            "keep_elements": f"{kernels.blocked.KEEP_ELEMENTS:,}", "cubic_break_even": f"{even:,}",
            "cubic_beyond": ", ".join(f"N = {n:,}" for n in beyond) if beyond else "none of them",
            "big_n": f"{cfg['big_n']:,}", "cpu": hardware("cpu")["cpu"], "mm_max_side": f"{bench.MATMUL_MAX_SIDE:,}",
            "naive_max_n": f"{naive_max_n(cfg):,}", "compiled_min_keys": str(kernels.COMPILED_MIN_KEYS),
            "compiled_max_degree": str(kernels.COMPILED_MAX_DEGREE),
            "p2_switch": f"{kernels.LINEAR_P2_FEATURE_RATIO:g}", "long_call": f"{bench.LONG_CALL_S:g}",
            "rounds": str(cfg["rounds"]), "min_rounds": str(min(cfg.get("min_rounds", 2), cfg["rounds"])),
            "round_budget": f"{cfg['round_budget']:g}", "big_batch": str(cfg.get("big_batch", cfg["batch"]))}


def flop_table(cfg: Mapping):
    """GFLOP of the matrix products of one forward and backward call, per path, at every length."""
    ns = list(cfg["ns"]) + [cfg["big_n"]]
    rows = [("softmax on SDPA, or any elementwise activation on the blocked or compiled path", bench.REFERENCE),
            ("any activation on the naive path", bench.Case(CUBIC, "naive")),
            (f"{name('poly:p=1')}, linear form", bench.Case("poly:p=1", "linear")),
            (f"{name('poly:p=2')}, linear form", bench.Case("poly:p=2", "linear")),
            (f"{name(CUBIC)}, linear form (degree-3 features)", CUBIC_FEATURES)]
    def gflop(case, n):
        size = {k: v for k, v in shape(cfg, n).items() if k != "threads"}
        return number_cell(bench.case_flops(case, n, **size) / 1e9)

    out = [{"path": label, **{f"N = {n:,}": gflop(case, n) for n in ns}} for label, case in rows]
    return styled(out, f"GFLOP of the matrix products of one forward and backward call ({shape_text(cfg)}; a "
                       "multiply-add counts 2; elementwise work is not counted)")


def machine_table(cfg: Mapping):
    """The machine, the clock and the shape the benchmarks ran with."""
    import torch

    hw = hardware("cpu")
    rows = [("processor", hw["cpu"]), ("cores", hw["cores"]), ("threads used", THREADS),
            ("clock", "process CPU time" if THREADS == 1 else "wall time"), ("PyTorch", torch.__version__),
            ("platform", hw["platform"]), ("shape", shape_text(cfg))]
    return styled([{"setting": k, "value": str(v)} for k, v in rows])
