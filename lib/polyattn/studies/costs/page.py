"""What the sections of chapter 08 (what polynomial attention costs) share: the settings every
benchmark runs with, the attention grid, its selections and table rows, and the page's glue.

The benchmarks (:mod:`polyattn.bench`, :mod:`polyattn.bench_train`) run once per process and
settings (:func:`once`); every section of the page asks for the measurements it shows, so a
section reruns alone and the whole page still measures each grid once:

    df = attention(cfg)                       # every activation and path against SDPA, per N
    costs_time.time_table(df, cfg, preset); costs_memory.memory_table(df, cfg, preset)
    glue_texts(costs_time.time_texts(df, cfg))    # ch08_<key>: the numbers the prose names
    costs_causal.causal(cfg); costs_training.training(cfg); costs_lra.lra(cfg)
    costs.save(costs_finding.cost_numbers(cfg, targets))   # what polyattn.measures.costs states

``cfg`` is one preset's settings of the chapter (``ns``, ``big_n``, ``batch``, ``heads``,
``head_dim``, ``rounds``, ``round_budget``, ``sample_s``, ``causal_ns``, ``train``, ``lra``; optionally
``min_rounds``, ``naive_max_n`` and ``big_batch``, the batch at ``big_n``).
Tables name activations as a reader does (``x³/√N``) and paths by their names in
:mod:`polyattn.kernels`.
"""
from __future__ import annotations

import json
from typing import Callable, Mapping, Optional

import pandas as pd

from ... import activations, bench, kernels
from ...display import name
from ...pages.shown import glue_values

#: The benchmarks run on one thread: the clock is then the process's CPU time.
THREADS = 1
CUBIC = "poly:p=3"
#: The cubic's exact linear-time form (its degree-3 feature map), measured at the longest length only.
CUBIC_FEATURES = bench.Case(CUBIC, "linear")
#: The configurations measured at the longest length besides the reference.
LONGEST_CASES = (bench.Case(CUBIC, "blocked"), bench.Case("poly:p=1", "linear"), bench.Case("poly:p=2", "linear"),
                 CUBIC_FEATURES)
#: The lines of the figure: the cubic on each quadratic path, SDPA, and the linear forms of x and x².
FIGURE_LINES = (("softmax", "sdpa"), (CUBIC, "blocked"), (CUBIC, "compiled"), (CUBIC, "naive"),
                ("poly:p=1", "linear"), ("poly:p=2", "linear"))

_MEASURED: dict = {}


def once(kind: str, cfg: Mapping, run: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """``run()`` the first time ``kind`` is asked for with these settings in this process, its
    stored frame (a copy) afterwards."""
    key = (kind, json.dumps(cfg, sort_keys=True, default=str))
    if key not in _MEASURED:
        _MEASURED[key] = run()
    return _MEASURED[key].copy()


def naive_max_n(cfg: Mapping) -> int:
    """The longest length at which the naive path is measured (``cfg["naive_max_n"]``, else the
    benchmark's default)."""
    return int(cfg.get("naive_max_n", bench.NAIVE_MAX_N))


def timing(cfg: Mapping) -> dict:
    """The benchmarks' rounds settings, as keyword arguments: at most ``rounds`` interleaved rounds
    within ``round_budget`` seconds per length, at least ``min_rounds`` (default 2)."""
    return dict(round_budget_s=cfg["round_budget"], sample_s=cfg["sample_s"], min_rounds=cfg.get("min_rounds", 2))


def shape(cfg: Mapping, n: Optional[int] = None) -> dict:
    """The benchmarks' shape and thread count at length ``n``, as keyword arguments: the longest
    length ``big_n`` is measured with ``big_batch`` sequences when the settings name one."""
    batch = cfg.get("big_batch", cfg["batch"]) if n is not None and n == cfg.get("big_n") else cfg["batch"]
    return dict(batch=batch, heads=cfg["heads"], head_dim=cfg["head_dim"], threads=THREADS)


def shape_text(cfg: Mapping, longest: bool = True) -> str:
    """The benchmarks' shape as the captions name it (``longest``: the grid includes ``big_n``)."""
    big = cfg.get("big_batch", cfg["batch"])
    at_big = f" (batch {big} at N = {cfg['big_n']:,})" if longest and big != cfg["batch"] else ""
    return f"batch {cfg['batch']}{at_big}, {cfg['heads']} heads, head dimension {cfg['head_dim']}"


def configuration(activation: str, path: str) -> str:
    """A configuration as the tables name it: "x³/√N, blocked", "softmax, SDPA"."""
    if path == "sdpa":
        return "softmax, SDPA"
    if (activation, path) == (CUBIC_FEATURES.activation, CUBIC_FEATURES.path):
        return f"{name(activation)}, linear (degree-3 features)"
    return f"{name(activation)}, {path}"


def value_range(values) -> str:
    """The smallest and largest of ``values`` ("0.80–0.90"), or "not measured" when there are none."""
    values = list(values)
    return f"{min(values):.2f}–{max(values):.2f}" if values else "not measured"


# --- measurements --------------------------------------------------------------------------------


def attention_frame(records: list[dict]) -> pd.DataFrame:
    """Benchmark records with each configuration's label and its peak memory as a multiple of
    SDPA's at the same N (``peak_ratio``)."""
    df = pd.DataFrame(records)
    df["configuration"] = [configuration(a, p) for a, p in zip(df["activation"], df["path"])]
    ref_peak = df[df["path"] == "sdpa"].set_index("n")["peak_mb"]
    df["peak_ratio"] = df["peak_mb"] / df["n"].map(ref_peak)
    return df


def attention(cfg: Mapping) -> pd.DataFrame:
    """Forward and backward of one attention call for every activation of the book (one per
    cost: the constant c of c·x^p changes no kernel) and every path it has, against SDPA in the
    same interleaved rounds, with a plain matrix product of the same operation count; at the
    longest length ``big_n`` only the reference, the cubic's blocked path and the linear forms."""
    def run():
        specs = bench.distinct_cost_specs(activations.BOOK_SPECS)
        cases = [c for c in bench.attention_cases(specs) if c != CUBIC_FEATURES]
        common = dict(matmul=True, naive_max_n=naive_max_n(cfg), **timing(cfg))
        records = bench.run_attention_bench(cfg["ns"], cases=cases, rounds=cfg["rounds"], **common, **shape(cfg))
        records += bench.run_attention_bench([cfg["big_n"]], cases=list(LONGEST_CASES),
                                             rounds=min(cfg["rounds"], 2), **common, **shape(cfg, cfg["big_n"]))
        return attention_frame(records)

    return once("attention", cfg, run)


# --- selections ------------------------------------------------------------------------------------


def series(df: pd.DataFrame, activation: str, path: str, column: str = "ratio_to_sdpa") -> pd.Series:
    """``column`` of one configuration, indexed by N (empty when it was not measured)."""
    sel = df[(df["activation"] == activation) & (df["path"] == path)]
    return sel.set_index("n")[column].sort_index()


def value_at(df: pd.DataFrame, activation: str, path: str, n: int, column: str = "ratio_to_sdpa") -> Optional[float]:
    """``column`` of one configuration at length ``n`` (None when it was not measured there)."""
    s = series(df, activation, path, column)
    return float(s[n]) if n in s.index and pd.notna(s[n]) else None


def auto_cubic(df: pd.DataFrame, cfg: Mapping) -> tuple[pd.Series, list[str]]:
    """The cubic's time / SDPA's on the path ``auto`` takes at each length of ``ns`` (its rule, with
    the compiled extension as it is here), and those paths."""
    paths = {n: kernels.choose_path(CUBIC, n, n, cfg["head_dim"], compiled=kernels.compiled.auto_enabled())
             for n in cfg["ns"]}
    ratios = {n: value_at(df, CUBIC, p, n) for n, p in paths.items()}
    ratios = pd.Series({n: r for n, r in ratios.items() if r is not None}, dtype=float)
    return ratios, list(dict.fromkeys(paths[n] for n in ratios.index))


# --- tables and glue -------------------------------------------------------------------------------


def pivot_rows(df: pd.DataFrame, column: str, cell: Callable[[float], str]) -> list[dict]:
    """One row per configuration (in measuring order), one column per N."""
    ns = sorted(df["n"].unique())
    rows = []
    for label in dict.fromkeys(df["configuration"]):
        values = df[df["configuration"] == label].set_index("n")[column]
        rows.append({"configuration": label,
                     **{f"N = {n:,}": cell(values[n]) if n in values.index and pd.notna(values[n]) else ""
                        for n in ns}})
    return rows


def glue_texts(texts: Mapping[str, str]) -> None:
    """Glue each text as ``ch08_<key>`` for the page's ``{glue:text}`` references."""
    glue_values("ch08", texts)
