"""Chapter 08's measurements, tables, figure and glued values (what polynomial attention costs).

The benchmarks (:mod:`polyattn.bench`, :mod:`polyattn.bench_train`) run once per process and
settings; every section of the page asks for the measurements it shows, so a section reruns
alone and the whole page still measures each grid once:

    df = attention(cfg)                       # every activation and path against SDPA, per N
    time_table(df, cfg, preset); memory_table(df, cfg, preset); scaling_figure(df, preset)
    glue_texts(time_texts(df, cfg))           # ch08_<key>: the numbers the prose names
    causal(cfg); training(cfg); lra(cfg)      # causal masks, the micro ViT, the LRA classifier
    costs.save(cost_numbers(cfg))             # what polyattn.measures.costs states

``cfg`` is one preset's settings of the chapter (``ns``, ``big_n``, ``batch``, ``heads``,
``head_dim``, ``rounds``, ``round_budget``, ``sample_s``, ``causal_ns``, ``train``, ``lra``).
Tables name activations as a reader does (``x³/√N``) and paths by their names in
:mod:`polyattn.kernels`.
"""
from __future__ import annotations

import json
from typing import Callable, Mapping, Optional

import pandas as pd

from .. import activations, bench, kernels
from ..display import name
from .shown import glue_values

#: The benchmarks run on one thread: the clock is then the process's CPU time.
THREADS = 1
CUBIC = "poly:p=3"
#: The cubic's exact linear-time form (its degree-3 feature map), measured at the longest length only.
CUBIC_FEATURES = bench.Case(CUBIC, "linear")
#: The configurations measured at the longest length besides the reference.
LONGEST_CASES = (bench.Case(CUBIC, "blocked"), bench.Case("poly:p=1", "linear"), bench.Case("poly:p=2", "linear"),
                 CUBIC_FEATURES)
#: The activations of the training benchmarks at LRA lengths.
LRA_SPECS = ("softmax", CUBIC, "poly:p=1")
#: The lines of the figure: the cubic on each quadratic path, SDPA, and the linear forms of x and x².
FIGURE_LINES = (("softmax", "sdpa"), (CUBIC, "blocked"), (CUBIC, "compiled"), (CUBIC, "naive"),
                ("poly:p=1", "linear"), ("poly:p=2", "linear"))
#: The rows of the rate table: the figure's lines and the cubic's feature map.
RATE_LINES = FIGURE_LINES + ((CUBIC_FEATURES.activation, CUBIC_FEATURES.path),)

_MEASURED: dict = {}


def _once(kind: str, cfg: Mapping, run: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """``run()`` the first time ``kind`` is asked for with these settings in this process, its
    stored frame (a copy) afterwards."""
    key = (kind, json.dumps(cfg, sort_keys=True, default=str))
    if key not in _MEASURED:
        _MEASURED[key] = run()
    return _MEASURED[key].copy()


def _shape(cfg: Mapping) -> dict:
    return dict(batch=cfg["batch"], heads=cfg["heads"], head_dim=cfg["head_dim"], threads=THREADS)


def _shape_text(cfg: Mapping) -> str:
    return f"batch {cfg['batch']}, {cfg['heads']} heads, head dimension {cfg['head_dim']}"


def configuration(activation: str, path: str) -> str:
    """A configuration as the tables name it: "x³/√N, blocked", "softmax, SDPA"."""
    if path == "sdpa":
        return "softmax, SDPA"
    if (activation, path) == (CUBIC_FEATURES.activation, CUBIC_FEATURES.path):
        return f"{name(activation)}, linear (degree-3 features)"
    return f"{name(activation)}, {path}"


def _range(values) -> str:
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
        common = dict(round_budget_s=cfg["round_budget"], sample_s=cfg["sample_s"], matmul=True, **_shape(cfg))
        records = bench.run_attention_bench(cfg["ns"], cases=cases, rounds=cfg["rounds"], **common)
        records += bench.run_attention_bench([cfg["big_n"]], cases=list(LONGEST_CASES),
                                             rounds=min(cfg["rounds"], 2), **common)
        return attention_frame(records)

    return _once("attention", cfg, run)


def causal(cfg: Mapping) -> pd.DataFrame:
    """Causal forward and backward against SDPA's causal call: the cubic on the blocked path (and
    the compiled one where it builds), x/sqrt(N) on the blocked path and as a running sum."""
    def run():
        records = bench.run_attention_bench(
            cfg["causal_ns"], cases=causal_cases(), causal=True, rounds=min(cfg["rounds"], 3),
            round_budget_s=cfg["round_budget"], sample_s=cfg["sample_s"], memory=False, **_shape(cfg))
        return attention_frame(records)

    return _once("causal", cfg, run)


def causal_cases(compiled: Optional[bool] = None) -> list:
    """The causal benchmark's configurations (the compiled path only where it builds)."""
    compiled = kernels.compiled.available() if compiled is None else compiled
    cases = [bench.Case(CUBIC, "blocked"), bench.Case("poly:p=1", "blocked"), bench.Case("poly:p=1", "linear")]
    if compiled:
        cases.insert(1, bench.Case(CUBIC, "compiled"))
    return cases


def training(cfg: Mapping) -> pd.DataFrame:
    """Training steps of the micro ViT per activation of the book, interleaved, against softmax."""
    return _once("training", cfg, lambda: pd.DataFrame(
        bench.run_train_bench(activations.BOOK_SPECS, threads=THREADS, **cfg["train"])))


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

    return _once("lra", cfg, run)


# --- selections ------------------------------------------------------------------------------------


def series(df: pd.DataFrame, activation: str, path: str, column: str = "ratio_to_sdpa") -> pd.Series:
    """``column`` of one configuration, indexed by N (empty when it was not measured)."""
    sel = df[(df["activation"] == activation) & (df["path"] == path)]
    return sel.set_index("n")[column].sort_index()


def _at(df: pd.DataFrame, activation: str, path: str, n: int, column: str = "ratio_to_sdpa") -> Optional[float]:
    s = series(df, activation, path, column)
    return float(s[n]) if n in s.index and pd.notna(s[n]) else None


def auto_cubic(df: pd.DataFrame, cfg: Mapping) -> tuple[pd.Series, list[str]]:
    """The cubic's time / SDPA's on the path ``auto`` takes at each length of ``ns`` (its rule, with
    the compiled extension as it is here), and those paths."""
    paths = {n: kernels.choose_path(CUBIC, n, n, cfg["head_dim"], compiled=kernels.compiled.auto_enabled())
             for n in cfg["ns"]}
    ratios = {n: _at(df, CUBIC, p, n) for n, p in paths.items()}
    ratios = pd.Series({n: r for n, r in ratios.items() if r is not None}, dtype=float)
    return ratios, list(dict.fromkeys(paths[n] for n in ratios.index))


# --- tables ------------------------------------------------------------------------------------------


def _pivot_rows(df: pd.DataFrame, column: str, cell: Callable[[float], str]) -> list[dict]:
    """One row per configuration (in measuring order), one column per N."""
    ns = sorted(df["n"].unique())
    rows = []
    for label in dict.fromkeys(df["configuration"]):
        values = df[df["configuration"] == label].set_index("n")[column]
        rows.append({"configuration": label,
                     **{f"N = {n:,}": cell(values[n]) if n in values.index and pd.notna(values[n]) else ""
                        for n in ns}})
    return rows


def flop_table(cfg: Mapping):
    """GFLOP of the matrix products of one forward and backward call, per path, at every length."""
    from ..analysis.tables import number_cell
    from ..book.deliver import styled

    ns = list(cfg["ns"]) + [cfg["big_n"]]
    rows = [("softmax on SDPA, or any elementwise activation on the blocked or compiled path", bench.REFERENCE),
            ("any activation on the naive path", bench.Case(CUBIC, "naive")),
            (f"{name('poly:p=1')}, linear form", bench.Case("poly:p=1", "linear")),
            (f"{name('poly:p=2')}, linear form", bench.Case("poly:p=2", "linear")),
            (f"{name(CUBIC)}, linear form (degree-3 features)", CUBIC_FEATURES)]
    shape = dict(batch=cfg["batch"], heads=cfg["heads"], head_dim=cfg["head_dim"])
    out = [{"path": label, **{f"N = {n:,}": number_cell(bench.case_flops(case, n, **shape) / 1e9) for n in ns}}
           for label, case in rows]
    return styled(out, f"GFLOP of the matrix products of one forward and backward call ({_shape_text(cfg)}; a "
                       "multiply-add counts 2; elementwise work is not counted)")


def machine_table(cfg: Mapping):
    """The machine, the clock and the shape the benchmarks ran with."""
    import torch

    from ..book.deliver import styled
    from ..results import hardware

    hw = hardware("cpu")
    rows = [("processor", hw["cpu"]), ("cores", hw["cores"]), ("threads used", THREADS),
            ("clock", "process CPU time" if THREADS == 1 else "wall time"), ("PyTorch", torch.__version__),
            ("platform", hw["platform"]), ("shape", _shape_text(cfg))]
    return styled([{"setting": k, "value": str(v)} for k, v in rows])


def time_table(df: pd.DataFrame, cfg: Mapping, preset: str):
    """Each configuration's time as a multiple of SDPA's at the same N."""
    from ..book.deliver import styled

    return styled(_pivot_rows(df, "ratio_to_sdpa", lambda x: f"{x:.2f}"),
                  f"Time of one forward and backward call, multiple of SDPA softmax's at the same N (preset {preset}; "
                  f"{_shape_text(cfg)}; median over interleaved rounds of the ratio within a round; one thread). "
                  f"Blank: not measured (the naive path above N = {bench.NAIVE_MAX_N:,}; at the longest length only "
                  "the cubic's blocked path and the linear forms). The paper reports no timings.")


def memory_table(df: pd.DataFrame, cfg: Mapping, preset: str):
    """Each configuration's peak memory as a multiple of SDPA's; SDPA's own row in MiB."""
    from ..book.deliver import styled

    ref_label = configuration("softmax", "sdpa")
    (ref,) = _pivot_rows(df[df["configuration"] == ref_label], "peak_mb", lambda x: f"{x:.3g} MiB")
    rows = [{**ref, "configuration": f"{ref_label} (MiB)"} if r["configuration"] == ref_label else r
            for r in _pivot_rows(df, "peak_ratio", lambda x: f"{x:.2f}")]
    return styled(rows, f"Peak memory of one forward and backward call, multiple of SDPA softmax's at the same N "
                        f"(preset {preset}; {_shape_text(cfg)}; bytes held at once by tensors created during the "
                        "call, inputs not counted; SDPA's own peak in its row).")


def linear_table(df: pd.DataFrame, cfg: Mapping, preset: str):
    """The exact linear-time forms at the longest length each was measured at: their time against
    SDPA's and against the blocked path's, and the blocked path's time the operation count predicts."""
    from ..book.deliver import styled

    rows = []
    for row in linear_rows(df, cfg):
        rows.append({"form": row["form"], "features F": f"{row['features']:,}", "N": f"{row['n']:,}",
                     "time / SDPA": f"{row['vs_sdpa']:.3f}",
                     "time / blocked path": "" if row["vs_blocked"] is None else f"{row['vs_blocked']:.2f}",
                     "operations / blocked path's": f"{row['counted']:.2f}"})
    return styled(rows, f"The exact linear-time forms, forward and backward (preset {preset}; {_shape_text(cfg)}); "
                        "blank: the blocked path was not measured at that length.")


def linear_rows(df: pd.DataFrame, cfg: Mapping) -> list[dict]:
    """Per linear form (p = 1, 2 at the longest length of ``ns``, p = 3 at ``big_n``): features F,
    N, time / SDPA, time / the blocked path of the same activation (None when not measured at that
    N), and the operation count's ratio to the blocked path's."""
    from ..flops import matmul_flops
    from ..kernels.linear import monomial_count

    out = []
    n_max, d = max(cfg["ns"]), cfg["head_dim"]
    for p, n in ((1, n_max), (2, n_max), (3, cfg["big_n"])):
        spec = CUBIC if p == 3 else f"poly:p={p}"
        lin, blk = _at(df, spec, "linear", n, "time_ms"), _at(df, spec, "blocked", n, "time_ms")
        if lin is None:
            continue
        out.append({"form": configuration(spec, "linear"), "p": p, "features": monomial_count(d, p), "n": n,
                    "vs_sdpa": _at(df, spec, "linear", n), "vs_blocked": None if blk is None else lin / blk,
                    "counted": matmul_flops(n, d, "linear", degree=p) / matmul_flops(n, d, "blocked")})
    return out


def rate_table(df: pd.DataFrame, cfg: Mapping, preset: str):
    """The achieved rate of each configuration of :data:`RATE_LINES` as a fraction of the plain
    matrix product's, and the product's own rate in the last row."""
    from ..book.deliver import styled

    rate = df.dropna(subset=["matmul_fraction"])
    shown = {configuration(*line) for line in RATE_LINES}
    rows = _pivot_rows(rate[rate["configuration"].isin(shown)], "matmul_fraction", lambda x: f"{x:.2f}")
    mm = rate.groupby("n")["matmul_gflop_s"].first()
    rows.append({"configuration": "float32 matrix product (GFLOP/s)",
                 **{f"N = {n:,}": f"{mm[n]:.0f}" for n in sorted(rate["n"].unique())}})
    sides = ", ".join(f"{bench.matched_matmul_side(n, cfg['batch'], cfg['heads'], cfg['head_dim']):,}"
                      for n in mm.index)
    return styled(rows, f"Achieved rate of the matrix products of SDPA, the cubic on each path and the linear forms, "
                        f"fraction of a plain matrix product's (preset {preset}; "
                        f"{_shape_text(cfg)}; forward and backward, median over rounds of the ratio within a round; "
                        f"last row: the product's own rate, sides {sides}).")


def training_table(train: pd.DataFrame, cfg: Mapping, preset: str):
    """The micro ViT's training throughput per activation, and its ratio to softmax's."""
    from ..book.deliver import styled

    t = cfg["train"]
    rows = [{"activation": name(r.activation), "images/s": f"{r.images_per_s:,.0f}", "step (ms)": f"{r.step_ms:.3g}",
             "throughput / softmax": f"{r.ratio_to_softmax:.2f}"} for r in train.itertuples()]
    return styled(rows, f"Training throughput ({t['size']} ViT, preset {preset}; batch {t['batch']} of random "
                        f"{t['image_size']}×{t['image_size']} images, median over {t['rounds']} interleaved rounds of "
                        f"{t['steps']} steps; above 1: faster than softmax)")


def causal_table(frame: pd.DataFrame, cfg: Mapping, preset: str):
    """Causal time as a multiple of SDPA's causal time, per configuration and N."""
    from ..book.deliver import styled

    return styled(_pivot_rows(frame, "ratio_to_sdpa", lambda x: f"{x:.2f}"),
                  f"Causal attention, forward and backward, time as a multiple of SDPA's causal softmax (preset "
                  f"{preset}; {_shape_text(cfg)}; one thread; median over interleaved rounds)")


def lra_table(frame: pd.DataFrame, cfg: Mapping, preset: str):
    """The LRA classifier's training step time as a multiple of softmax's, per activation and length."""
    from ..book.deliver import styled

    lc = cfg["lra"]
    rows = [{"activation": name(spec),
             **{f"N = {n:,}": f"{frame[(frame['activation'] == spec) & (frame['n'] == n)]['step_ratio'].iloc[0]:.2f}"
                for n in lc["seq_lens"]}} for spec in LRA_SPECS]
    return styled(rows, f"LRA classifier (2 layers, width 64, 2 heads), training step time as a multiple of "
                        f"softmax's (preset {preset}; batch {lc['batch']} of byte sequences padded to N, median over "
                        f"{lc['rounds']} interleaved rounds of {lc['steps']} steps; below 1: faster than softmax)")


def finding_table(numbers: Mapping[str, object], form: str):
    """The chapter's verdict with its two headline numbers."""
    from ..book.deliver import styled

    return styled([{"claim": "the cost of polynomial attention", "verdict": form,
                    f"{name(CUBIC)} against SDPA softmax, time":
                        f"{numbers['attention_time_min']:.2f}–{numbers['attention_time_max']:.2f}×",
                    "micro ViT training throughput": f"{numbers['vit_throughput']:.2f}×"}],
                  "The verdict of this chapter; the sentence below gives the rest of its numbers")


# --- the figure ----------------------------------------------------------------------------------------

PATH_STYLE = {"sdpa": ("-", "s"), "blocked": ("-", "o"), "compiled": ("-.", "D"), "linear": ("--", "^"),
              "naive": (":", "x")}


def scaling_figure(df: pd.DataFrame, preset: str):
    """Time and peak memory against N on log-log axes: SDPA, the cubic on each quadratic path and
    the linear forms of x and x² (at most six lines a panel)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter, NullLocator

    from .. import plotting

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for spec, path in FIGURE_LINES:
        sub = df[(df["activation"] == spec) & (df["path"] == path)].sort_values("n")
        if sub.empty:
            continue
        style, marker = PATH_STYLE[path]
        color = "black" if path == "sdpa" else plotting.activation_color(spec)
        for ax, col in zip(axes, ("time_ms", "peak_mb")):
            ax.plot(sub["n"], sub[col], color=color, linestyle=style, marker=marker, markersize=5, linewidth=1.4,
                    label=configuration(spec, path))
    ns = sorted(df["n"].unique())
    plain = FuncFormatter(lambda y, _: f"{y:g}")
    for ax, label, title in zip(axes, ("forward + backward time (ms)", "peak memory (MiB)"), ("time", "peak memory")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(ns, [f"{n:,}" for n in ns])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("sequence length N", fontsize=11)
        ax.set_ylabel(label, fontsize=11)
        ax.tick_params(labelsize=10)
        ax.set_title(title, fontsize=12)
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=10)
    plotting.stamp(axes[0], preset, f"{THREADS} thread", loc="upper left").set_fontsize(9)
    fig.tight_layout()
    return fig


# --- glued values ------------------------------------------------------------------------------------


def glue_texts(texts: Mapping[str, str]) -> None:
    """Glue each text as ``ch08_<key>`` for the page's ``{glue:text}`` references."""
    glue_values("ch08", texts)


def setup_texts(cfg: Mapping) -> dict[str, str]:
    """The sizes the opening sections name: head dimension, feature counts, the keeping tile, the
    cubic feature map's break-even length and which measured lengths lie past it."""
    from ..kernels.linear import monomial_count
    from ..results import hardware

    even = bench.flop_break_even(cfg["head_dim"], 3)
    beyond = [n for n in list(cfg["ns"]) + [cfg["big_n"]] if n >= even]
    return {"head_dim": str(cfg["head_dim"]), "cubic_features": f"{monomial_count(cfg['head_dim'], 3):,}",
            "quadratic_features": f"{monomial_count(cfg['head_dim'], 2):,}",
            "keep_elements": f"{kernels.blocked.KEEP_ELEMENTS:,}", "cubic_break_even": f"{even:,}",
            "cubic_beyond": ", ".join(f"N = {n:,}" for n in beyond) if beyond else "none of them",
            "big_n": f"{cfg['big_n']:,}", "cpu": hardware("cpu")["cpu"], "mm_max_side": f"{bench.MATMUL_MAX_SIDE:,}",
            "naive_max_n": f"{bench.NAIVE_MAX_N:,}", "compiled_min_keys": str(kernels.COMPILED_MIN_KEYS),
            "compiled_max_degree": str(kernels.COMPILED_MAX_DEGREE),
            "p2_switch": f"{kernels.LINEAR_P2_FEATURE_RATIO:g}"}


def time_texts(df: pd.DataFrame, cfg: Mapping) -> dict[str, str]:
    """The cubic's time against SDPA on the blocked path (best and worst length), on the compiled
    path, against the blocked path from ``COMPILED_MIN_KEYS`` keys on, and on the path ``auto`` takes."""
    blocked = series(df, CUBIC, "blocked")
    blocked = blocked[blocked.index.isin(cfg["ns"])]
    compiled = series(df, CUBIC, "compiled")
    compiled = compiled[compiled.index.isin(cfg["ns"])]
    vs_blocked = (compiled / blocked.reindex(compiled.index)).dropna()
    at_rule = vs_blocked[vs_blocked.index >= kernels.COMPILED_MIN_KEYS]
    if compiled.empty:
        rule = "was not measured: the C++ extension did not build here or is switched off"
        time = "was not measured: the C++ extension did not build here or is switched off"
    else:
        time = (f"takes {_range(compiled)} times SDPA's time over the same lengths and {_range(vs_blocked)} times "
                "the blocked path's")
        rule = (f"was not measured: this preset measures no length of {kernels.COMPILED_MIN_KEYS} keys or more"
                if at_rule.empty else
                f"takes {_range(at_rule)} times the blocked path's time: "
                + ("faster at every measured length" if bool((at_rule < 1).all()) else "not faster at every measured length"))
    auto, paths = auto_cubic(df, cfg)
    return {"cubic_best": f"{blocked.min():.2f}", "cubic_best_n": f"{int(blocked.idxmin()):,}",
            "cubic_worst": f"{blocked.max():.2f}", "cubic_worst_n": f"{int(blocked.idxmax()):,}",
            "compiled_time": time, "compiled_rule": rule,
            "auto_range": _range(auto), "auto_paths": " or ".join(paths)}


def memory_texts(df: pd.DataFrame, cfg: Mapping) -> dict[str, str]:
    """The naive path's peak memory against SDPA's at its longest length, the blocked path's at
    the longest length of all (``big_n``, glued by :func:`setup_texts`)."""
    naive_n = max(n for n in cfg["ns"] if n <= bench.NAIVE_MAX_N)
    big = cfg["big_n"]
    return {"naive_peak": f"{_at(df, CUBIC, 'naive', naive_n, 'peak_ratio'):.1f}", "naive_n": f"{naive_n:,}",
            "big_peak": f"{_at(df, CUBIC, 'blocked', big, 'peak_ratio'):.2f}"}


def linear_texts(df: pd.DataFrame, cfg: Mapping) -> dict[str, str]:
    """x/sqrt(N)'s worst time against SDPA from N = 1024 on (or the longest length, when shorter);
    the degree-2 form against the blocked path; whether the degree-3 form beats the blocked path."""
    lin1 = series(df, "poly:p=1", "linear")
    lin1 = lin1[lin1.index >= min(1024, max(cfg["ns"]))]
    rows = {r["p"]: r for r in linear_rows(df, cfg)}
    p2, p3 = rows.get(2), rows.get(3)
    return {"lin1_worst": f"{lin1.max():.3f}", "lin1_from": f"{int(lin1.index.min()):,}",
            "lin2_vs_blocked": "not measured" if p2 is None or p2["vs_blocked"] is None else f"{p2['vs_blocked']:.2f}",
            "n_max": f"{max(cfg['ns']):,}",
            "lin3_vs_blocked": "not measured" if p3 is None else f"{p3['vs_blocked']:.2f}",
            "lin3_counted": "not measured" if p3 is None else f"{p3['counted']:.2f}",
            "lin3_result": ("is not measured" if p3 is None else
                            "wins" if p3["vs_blocked"] < 1 else "does not win")}


def rate_texts(df: pd.DataFrame, cfg: Mapping) -> dict[str, str]:
    """The product's rate at the longest length of ``ns``, SDPA's fraction of it, the cubic's best
    path and its fraction there and at the shortest length."""
    n_max, n_min = max(cfg["ns"]), min(cfg["ns"])
    mm = df.dropna(subset=["matmul_gflop_s"]).groupby("n")["matmul_gflop_s"].first()
    best = max(((_at(df, CUBIC, p, n_max, "matmul_fraction") or 0.0, p) for p in ("blocked", "compiled")))
    small = _at(df, CUBIC, best[1], n_min, "matmul_fraction")
    return {"rate_n": f"{n_max:,}", "rate_gflop": f"{mm[n_max]:.0f}",
            "rate_sdpa": f"{_at(df, 'softmax', 'sdpa', n_max, 'matmul_fraction'):.2f}",
            "rate_best_path": best[1], "rate_best": f"{best[0]:.2f}", "rate_small_n": f"{n_min:,}",
            "rate_small": "not measured" if small is None else f"{small:.2f}", "rate_small_gflop": f"{mm[n_min]:.0f}"}


def training_texts(train: pd.DataFrame, cfg: Mapping) -> dict[str, str]:
    """The cubic's training throughput against softmax's, and the batch."""
    return {"train_cubic": f"{float(train.set_index('activation').loc[CUBIC, 'ratio_to_softmax']):.2f}",
            "train_batch": str(cfg["train"]["batch"])}


def _causal_series(frame: pd.DataFrame, targets: Mapping) -> dict:
    cubic_path = "compiled" if not series(frame, CUBIC, "compiled").empty else "blocked"
    lin = series(frame, "poly:p=1", "linear")
    lin_from = lin[lin.index >= min(targets["causal_linear_from"], max(lin.index))]
    return {"path": cubic_path, "cubic": series(frame, CUBIC, cubic_path), "blocked": series(frame, CUBIC, "blocked"),
            "floor": series(frame, "poly:p=1", "blocked"), "linear": lin_from}


def causal_texts(frame: pd.DataFrame, targets: Mapping) -> dict[str, str]:
    """The cubic on its fastest causal path and on the blocked path, the floor of the blocked path
    (x/sqrt(N): its tiles and products without elementwise work), the running-sum form of x/sqrt(N),
    and which of the targets stated before measuring are met."""
    s = _causal_series(frame, targets)
    cubic_met = bool((s["cubic"] <= targets["causal_cubic"]).all())
    linear_met = bool((s["linear"] <= targets["causal_linear"]).all())
    met = ("both targets are met" if cubic_met and linear_met else
           "the cubic's target is met and the linear form's is not" if cubic_met else
           "the linear form's target is met and the cubic's is not" if linear_met else "neither target is met")
    return {"causal_cubic_path": s["path"], "causal_cubic_range": _range(s["cubic"]),
            "causal_blocked_range": _range(s["blocked"]), "causal_floor_range": _range(s["floor"]),
            "causal_floor_where": ("is above 1 at every measured length" if bool((s["floor"] > 1.0).all()) else
                                   "is at or below 1 at every measured length" if bool((s["floor"] <= 1.0).all()) else
                                   "is above 1 at some measured lengths only"),
            "causal_linear_max": f"{s['linear'].max():.3f}", "causal_linear_from": f"{int(s['linear'].index.min()):,}",
            "causal_met": met, "causal_linear_impl": ("in the C++ extension described next"
                                                      if kernels.compiled.auto_enabled() else
                                                      "in PyTorch (the C++ extension described next is not in use)"),
            "target_causal_cubic": f"{targets['causal_cubic']:g}", "target_causal_linear": f"{targets['causal_linear']:g}",
            "target_causal_from": f"{targets['causal_linear_from']:,}"}


def _lra_rows(frame: pd.DataFrame) -> dict[str, pd.Series]:
    return {spec: frame[frame["activation"] == spec].set_index("n")["step_ratio"].sort_index() for spec in LRA_SPECS}


def lra_texts(frame: pd.DataFrame, targets: Mapping) -> dict[str, str]:
    """The step-time ratios of x³/√N and x/√N at each length, and which targets are met."""
    rows = _lra_rows(frame)
    met = [name(spec) for spec, key in ((CUBIC, "lra_cubic"), ("poly:p=1", "lra_linear"))
           if bool((rows[spec] <= targets[key]).all())]
    return {"lra_cubic": ", ".join(f"{v:.2f} at N = {n:,}" for n, v in rows[CUBIC].items()),
            "lra_linear": ", ".join(f"{v:.2f} at N = {n:,}" for n, v in rows["poly:p=1"].items()),
            "lra_met": ("both targets are met" if len(met) == 2 else f"only the target of {met[0]} is met" if met
                        else "neither target is met"),
            "target_lra_cubic": f"{targets['lra_cubic']:g}", "target_lra_linear": f"{targets['lra_linear']:g}"}


def cost_numbers(cfg: Mapping, targets: Mapping) -> dict[str, object]:
    """The numbers :func:`polyattn.measures.costs.save` stores (every key of its ``FIELDS``), from
    the measurements of this process (each measured once)."""
    df = attention(cfg)
    auto, paths = auto_cubic(df, cfg)
    lin1 = series(df, "poly:p=1", "linear")
    lin1 = lin1[lin1.index >= min(1024, max(cfg["ns"]))]
    c = _causal_series(causal(cfg), targets)
    lra_rows = _lra_rows(lra(cfg))
    train = training(cfg).set_index("activation")
    return {
        "threads": THREADS, "auto_paths": " or ".join(paths),
        "attention_time_min": float(auto.min()), "attention_time_max": float(auto.max()),
        "n_min": int(min(cfg["ns"])), "n_max": int(max(cfg["ns"])),
        "peak_memory": _at(df, CUBIC, "blocked", cfg["big_n"], "peak_ratio"), "peak_memory_n": int(cfg["big_n"]),
        "linear_time_max": float(lin1.max()), "linear_from_n": int(lin1.index.min()),
        "vit_throughput": float(train.loc[CUBIC, "ratio_to_softmax"]),
        "causal_path": c["path"], "causal_time_min": float(c["cubic"].min()), "causal_time_max": float(c["cubic"].max()),
        "causal_linear_max": float(c["linear"].max()), "causal_linear_from_n": int(c["linear"].index.min()),
        "lra_n": int(max(cfg["lra"]["seq_lens"])), "lra_cubic_step": float(lra_rows[CUBIC].iloc[-1]),
        "lra_linear_step": float(lra_rows["poly:p=1"].iloc[-1]),
    }
