"""Benchmarks that print ratios measured side by side in one run.

    python -m polyattn.bench attention [--n 64,256,1024,4096] [--matmul] [--json out.json]
    python -m polyattn.bench train [--size micro] [--json out.json]

``attention``: forward + backward of one attention call on ``[B, H, N, d]`` inputs
(batch 8, 4 heads, head dim 32 by default) for each activation and path, against
``F.scaled_dot_product_attention`` (softmax, "sdpa") measured in the same run.

* Time: the median over interleaved rounds (every configuration runs once per round,
  after warm-up calls; a short call is repeated within a sample), so slow phases of a
  shared machine hit all of them.  The ratio to SDPA is the median over rounds of the
  ratio within a round.
  With one thread (the default) the clock is the process CPU time, which is what the
  computation costs whatever else the machine runs; with more threads it is wall time.
* Rate (``--matmul``): a plain float32 matrix product ``C = A B`` of square matrices,
  sized to do the operations of the quadratic path at that N (:func:`matched_matmul_side`:
  the count of :mod:`polyattn.flops`, the side capped at ``MATMUL_MAX_SIDE``), runs in
  the same interleaved rounds; each path's achieved GFLOP/s (the operation count of its
  matrix products over its median time) and its fraction of the product's rate, the
  median over rounds of the ratio within a round.  The product is what the processor's
  BLAS does at its best on this machine: the fraction says how close a path comes to it.
* Peak memory: PyTorch's CPU allocator reports every allocation and free to
  ``torch.profiler`` (``profile_memory=True``); replaying them in order gives the
  largest number of bytes held at once by tensors created during the call (outputs,
  tensors saved for backward, gradients, temporaries, kernel scratch), above what was
  alive before it (the inputs and the incoming gradient).  Allocations outside
  PyTorch's allocator are not seen; ``tracemalloc`` would see none of these.

``train``: ViT training steps (forward, backward, AdamW) on random 28x28 images, one
model per activation built from the same seed, steps interleaved across activations;
images per second and the ratio to softmax.

Nothing here asserts a speed: the numbers are printed (and written as JSON records),
and they belong to the machine that measured them.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import torch
import torch.nn.functional as F

from . import activations
from .attention import Attend, attention
from .bench_clock import clock as _clock
from .bench_clock import paired_ratio
from .bench_train import format_train_table, run_train_bench  # noqa: F401  (re-exported: the command runs both)
from .flops import case_flops, flop_break_even, flops_records, matmul_flops, square_matmul_side  # noqa: F401
from .kernels import blocked as _blocked
from .kernels import compiled as _compiled
from .kernels import linear_degree
from .results import provenance, write_atomic

ATTENTION_NS = (64, 256, 1024, 4096)
BENCH_PATHS = ("sdpa", "blocked", "linear", "compiled", "naive")
RECORD_KEYS = ("activation", "path", "n", "time_ms", "peak_mb", "ratio_to_sdpa", "gflop_s", "matmul_gflop_s",
               "matmul_fraction", "rounds")
TRAIN_RECORD_KEYS = ("activation", "images_per_s", "step_ms", "ratio_to_softmax")
#: The naive path stores several N x N float32 matrices; skip it above this N.
NAIVE_MAX_N = 1024
#: A warm-up call at least this long (seconds) also sizes the samples (no second call).
LONG_CALL_S = 0.5
#: The reference matrix product's side: at least this, at most ``MATMUL_MAX_SIDE`` (three float32
#: matrices of 2048^2 hold 48 MiB; measured on one core, the rate at side 64 is 0.85 of that at 1024,
#: from side 128 to 2048 within a few per cent of it).
MATMUL_MIN_SIDE = 16
MATMUL_MAX_SIDE = 2048


@dataclass(frozen=True)
class Case:
    """One (activation, path) pair of the attention benchmark."""

    activation: str
    path: str

    @property
    def label(self) -> str:
        return f"{self.activation} [{self.path}]"


REFERENCE = Case("softmax", "sdpa")
#: The plain matrix product timed next to the attention calls (``run_attention_bench(matmul=True)``).
MATMUL = Case("matmul", "matmul")


def paths_for(spec: str) -> list[str]:
    """The paths an activation can take: sdpa (softmax), blocked, linear (poly p = 1, 2, 3),
    compiled (poly, when its extension builds on this machine), naive."""
    act = activations.get(spec)
    out = ["sdpa"] if act.spec == "softmax" else []
    if act.elementwise:
        out.append("blocked")
    if linear_degree(act) is not None:
        out.append("linear")
    if _compiled.power_degree(act) is not None and _compiled.available():
        out.append("compiled")
    return out + ["naive"]


def attention_cases(specs: Optional[Sequence[str]] = None, paths: Optional[Sequence[str]] = None) -> list[Case]:
    """Every (activation, path) pair of ``specs`` restricted to ``paths``; SDPA softmax first.

    Default: every activation of the book with every path it has.
    """
    specs = list(specs) if specs else list(activations.BOOK_SPECS)
    cases = [REFERENCE]
    for spec in specs:
        spec = activations.canonical(spec)
        for path in paths_for(spec):
            if paths and path not in paths:
                continue
            case = Case(spec, path)
            if case not in cases:
                cases.append(case)
    return cases


def distinct_cost_specs(specs: Sequence[str]) -> list[str]:
    """``specs`` without those that differ from an earlier one only by the constant ``c``
    of ``poly:p=P,c=C``: the same kernel with another scalar, so the same cost."""
    seen, out = set(), []
    for spec in specs:
        act = activations.get(spec)
        key = (act.family, tuple(sorted((k, v) for k, v in act.params.items() if k != "c")))
        if key not in seen:
            seen.add(key)
            out.append(act.spec)
    return out


def make_inputs(n: int, batch: int = 8, heads: int = 4, head_dim: int = 32, seed: int = 0):
    """q, k, v (requiring grad) and the incoming gradient, ``[batch, heads, n, head_dim]``."""
    g = torch.Generator().manual_seed(seed)
    q, k, v, grad = (torch.randn(batch, heads, n, head_dim, generator=g) for _ in range(4))
    return q.requires_grad_(), k.requires_grad_(), v.requires_grad_(), grad


def attention_call(case: Case, q, k, v, causal: bool = False) -> Callable[[], torch.Tensor]:
    """A function computing the attention output of ``case`` (the path is forced).

    Every case goes through ``attention`` as the model does (softmax on the sdpa path
    calls ``F.scaled_dot_product_attention``), with its ``Attend`` module built once;
    under a causal mask the reference calls SDPA with ``is_causal=True``, its fastest
    form, instead of the dense mask ``attention`` would pass.
    """
    if case.path == "sdpa" and case.activation != "softmax":
        raise ValueError(f"the sdpa path computes softmax only, not {case.activation!r}")
    if case.path == "sdpa" and causal:
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
    attend = Attend(case.activation)
    return lambda: attention(q, k, v, attend, causal=causal, path=case.path)


def forward_backward(case: Case, q, k, v, grad, causal: bool = False) -> Callable[[], None]:
    """One training-style call: forward, backward with ``grad``, gradients released."""
    call = attention_call(case, q, k, v, causal)

    def run():
        out = call()
        out.backward(grad)
        q.grad = k.grad = v.grad = None

    return run


def matched_matmul_side(n: int, batch: int = 8, heads: int = 4, head_dim: int = 32, causal: bool = False) -> int:
    """The side s of the square float32 product timed next to attention at length ``n``: it does
    as many operations (2 s^3) as the matrix products of SDPA's forward+backward call
    (:func:`polyattn.flops.case_flops`), within [``MATMUL_MIN_SIDE``, ``MATMUL_MAX_SIDE``]."""
    return square_matmul_side(case_flops(REFERENCE, n, batch, heads, head_dim, causal),
                              MATMUL_MIN_SIDE, MATMUL_MAX_SIDE)


def matmul_call(side: int, seed: int = 0) -> Callable[[], None]:
    """One plain float32 product ``C = A B`` of ``side x side`` matrices, into a buffer kept
    between calls (nothing allocated per call)."""
    g = torch.Generator().manual_seed(seed)
    a, b = torch.randn(side, side, generator=g), torch.randn(side, side, generator=g)
    c = torch.empty(side, side)

    def run():
        torch.mm(a, b, out=c)

    return run


@contextlib.contextmanager
def _native_stderr_silenced():
    """The profiler's native library logs each start and stop on file descriptor 2."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def peak_memory_bytes(fn: Callable[[], object]) -> int:
    """Largest number of bytes held at once by tensors allocated while ``fn`` runs.

    Replays the allocation and free events PyTorch's allocator reports to
    ``torch.profiler`` (CPU, ``profile_memory=True``), in time order.  The count
    starts at 0 when ``fn`` starts: memory alive before (inputs) is not included.
    """
    from torch._C._profiler import _EventType
    from torch.profiler import ProfilerActivity, profile

    with _native_stderr_silenced(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = []
    stack = list(prof.profiler.kineto_results.experimental_event_tree())
    while stack:
        node = stack.pop()
        if node.tag == _EventType.Allocation:
            events.append((node.start_time_ns, node.extra_fields.alloc_size))
        stack.extend(node.children)
    events.sort(key=lambda e: e[0])
    held = peak = 0
    for _, size in events:
        held += size
        peak = max(peak, held)
    return peak


def run_attention_bench(ns: Sequence[int] = ATTENTION_NS, specs: Optional[Sequence[str]] = None,
                        paths: Optional[Sequence[str]] = None, batch: int = 8, heads: int = 4,
                        head_dim: int = 32, causal: bool = False, rounds: int = 5,
                        round_budget_s: float = 60.0, memory: bool = True, naive_max_n: int = NAIVE_MAX_N,
                        threads: int = 1, seed: int = 0, progress: Optional[Callable[[str], None]] = None,
                        cases: Optional[Sequence[Case]] = None, sample_s: float = 0.05,
                        matmul: bool = False, min_rounds: int = 2) -> list[dict]:
    """Records ``{activation, path, n, time_ms, peak_mb, ratio_to_sdpa, gflop_s, matmul_gflop_s,
    matmul_fraction, rounds}``, SDPA softmax first (``rounds``: the timed rounds at that N).

    The configurations are ``attention_cases(specs, paths)``, or ``cases`` when given
    (the reference is added in front when missing).

    For each N: two warm-up calls per configuration, the first of them profiled for the peak
    memory (``peak_mb``; a plain call, and ``peak_mb`` None, with ``memory=False``), the second
    timed to size the samples; a first call that lasts at least ``LONG_CALL_S`` sizes the
    samples itself and is the only warm-up.  Then interleaved rounds (at most ``rounds``, fewer
    when they would take longer than ``round_budget_s``, but at least ``min_rounds``); a sample
    repeats a short call until it lasts about ``sample_s``; the median sample per configuration
    (``time_ms``) and the median over rounds of its ratio to the reference's sample in the same
    round (``ratio_to_sdpa``: a slow phase of a shared machine cancels).  With ``min_rounds=1``
    the longest lengths, where one round outlasts the budget, are timed once.  The naive path is
    skipped above ``naive_max_n``.

    ``gflop_s``: the operation count of the call's matrix products (:func:`polyattn.flops.case_flops`)
    over ``time_ms``.  With ``matmul=True`` a square float32 product of side
    :func:`matched_matmul_side` runs in the same rounds (warmed up and sampled like the others):
    ``matmul_gflop_s`` is its rate (the same in every record of one N), ``matmul_fraction`` the
    median over rounds of the ratio of the call's rate to the product's in the same round; both
    None without it.
    """
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    if rounds < 1 or min_rounds < 1:
        raise ValueError(f"rounds and min_rounds must be >= 1, got {rounds} and {min_rounds}")
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    _, clock = _clock(threads)
    if cases is None:
        cases = attention_cases(specs, paths)
    else:
        cases = [REFERENCE] + [Case(activations.canonical(c.activation), c.path) for c in cases if c != REFERENCE]
        for c in cases:
            if c.path not in paths_for(c.activation):
                raise ValueError(f"{c.activation!r} has no path {c.path!r}; its paths: {paths_for(c.activation)}")
    records = []
    try:
        for n in ns:
            q, k, v, grad = make_inputs(n, batch, heads, head_dim, seed)
            active = [c for c in cases if c.path != "naive" or n <= naive_max_n]
            runs = {c: forward_backward(c, q, k, v, grad, causal) for c in active}
            if matmul:
                side = matched_matmul_side(n, batch, heads, head_dim, causal)
                runs[MATMUL] = matmul_call(side, seed)
            single, peaks = {}, {}
            for c, fn in runs.items():                      # warm-up, then one call to size the samples
                profiled = memory and c in active
                if profiled:
                    _blocked.clear_workspace()              # count the kernels' scratch buffers too
                t0 = clock()
                if profiled:                                # the first warm-up call is the profiled one
                    peaks[c] = peak_memory_bytes(fn) / 2 ** 20
                else:
                    fn()
                warm = clock() - t0
                if warm < LONG_CALL_S:                      # a long warm-up call sizes the samples itself
                    t0 = clock()
                    fn()
                    warm = clock() - t0
                single[c] = max(warm, 1e-6)
            # short calls are repeated inside one sample, so each sample lasts ~sample_s
            inner = {c: max(1, round(sample_s / t)) for c, t in single.items()}
            round_s = sum(inner[c] * single[c] for c in runs)
            n_rounds = max(min(min_rounds, rounds), min(rounds, int(round_budget_s / round_s)))
            times = {c: [] for c in runs}
            for _ in range(n_rounds):
                for c, fn in runs.items():
                    t0 = clock()
                    for _ in range(inner[c]):
                        fn()
                    times[c].append((clock() - t0) / inner[c])
            ref = times.get(REFERENCE)
            mm_flops = 2.0 * side ** 3 if matmul else None
            mm_rate = mm_flops / statistics.median(times[MATMUL]) / 1e9 if matmul else None
            for c in active:
                t = statistics.median(times[c])
                ratio = paired_ratio(times[c], ref) if ref else None
                flops = case_flops(c, n, batch, heads, head_dim, causal)
                # the rates' ratio in one round is (flops / t) / (mm_flops / t_mm)
                fraction = flops / mm_flops * paired_ratio(times[MATMUL], times[c]) if matmul else None
                records.append({"activation": c.activation, "path": c.path, "n": n, "time_ms": 1e3 * t,
                                "peak_mb": peaks.get(c), "ratio_to_sdpa": ratio, "gflop_s": flops / t / 1e9,
                                "matmul_gflop_s": mm_rate, "matmul_fraction": fraction, "rounds": n_rounds})
            if progress:
                extra = f" and a {side}x{side} matrix product" if matmul else ""
                progress(f"N={n}: {len(active)} configurations{extra}, {n_rounds} rounds")
    finally:
        torch.set_num_threads(previous_threads)
    return records


def format_attention_table(records: list[dict], settings: Optional[dict] = None) -> str:
    """One table: a row per (N, activation, path) with time, ratio to SDPA, peak memory and the
    achieved GFLOP/s (with its fraction of the matrix product's rate, when it was measured: the
    product's own rate then opens each N)."""
    lines = []
    if settings:
        lines.append("forward+backward, " + ", ".join(f"{k} {v}" for k, v in settings.items()))
    header = (f"{'N':>6}  {'activation':<18} {'path':<8} {'time ms':>10} {'x sdpa':>8} {'peak MB':>9} {'x sdpa':>7} "
              f"{'GFLOP/s':>8} {'x matmul':>8}")
    lines += [header, "-" * len(header)]
    ref_peak = {r["n"]: r["peak_mb"] for r in records if (r["activation"], r["path"]) == ("softmax", "sdpa")}
    shown = set()
    for r in records:
        mm = r.get("matmul_gflop_s")
        if mm is not None and r["n"] not in shown:
            shown.add(r["n"])
            lines.append(f"{r['n']:>6}  {'float32 matmul':<18} {'':<8} {'':>10} {'':>8} {'':>9} {'':>7} "
                         f"{mm:>8.1f} {1.0:>8.2f}")
        ratio = "" if r["ratio_to_sdpa"] is None else f"{r['ratio_to_sdpa']:.2f}"
        peak = "" if r["peak_mb"] is None else f"{r['peak_mb']:.1f}"
        rp = ref_peak.get(r["n"])
        peak_ratio = "" if r["peak_mb"] is None or not rp else f"{r['peak_mb'] / rp:.2f}"
        rate = "" if r.get("gflop_s") is None else f"{r['gflop_s']:.1f}"
        frac = "" if r.get("matmul_fraction") is None else f"{r['matmul_fraction']:.2f}"
        lines.append(f"{r['n']:>6}  {r['activation']:<18} {r['path']:<8} {r['time_ms']:>10.2f} {ratio:>8} "
                     f"{peak:>9} {peak_ratio:>7} {rate:>8} {frac:>8}")
    return "\n".join(lines)


# --- records with provenance -------------------------------------------------------------------

def save(path, kind: str, records: list[dict], settings: dict) -> Path:
    """Write ``{"kind", "settings", "records", "provenance"}`` atomically (for stored runs)."""
    path = Path(path)
    write_atomic(path, {"kind": kind, "settings": settings, "records": records,
                        "provenance": provenance("cpu")})
    return path


def load(path) -> dict:
    with open(path) as f:
        data = json.load(f)
    for key in ("kind", "settings", "records", "provenance"):
        if key not in data:
            raise ValueError(f"{path} is not a stored benchmark run: no {key!r}")
    return data


# --- command line --------------------------------------------------------------------------------

def _ints(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def _specs(text: str) -> list[str]:
    specs = [s.strip() for s in text.split(";") if s.strip()]
    for s in specs:
        activations.get(s)
    return specs


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m polyattn.bench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("attention", help="forward+backward time and peak memory vs SDPA softmax")
    a.add_argument("--n", type=_ints, default=list(ATTENTION_NS), help="sequence lengths, e.g. 64,256,1024,4096,8192")
    a.add_argument("--batch", type=int, default=8)
    a.add_argument("--heads", type=int, default=4)
    a.add_argument("--head-dim", type=int, default=32)
    a.add_argument("--activations", type=_specs, default=None, help="';'-separated specs (default: the book's)")
    a.add_argument("--paths", default=None, help="comma-separated subset of " + ",".join(BENCH_PATHS))
    a.add_argument("--causal", action="store_true")
    a.add_argument("--rounds", type=int, default=5)
    a.add_argument("--round-budget", type=float, default=60.0,
                   help="seconds of timed rounds per N (at least --min-rounds rounds)")
    a.add_argument("--min-rounds", type=int, default=2, help="rounds timed even when they outlast the budget")
    a.add_argument("--sample", type=float, default=0.05, help="seconds per timed sample (short calls repeat)")
    a.add_argument("--naive-max-n", type=int, default=NAIVE_MAX_N)
    a.add_argument("--no-memory", action="store_true", help="skip the profiled peak-memory calls")
    a.add_argument("--matmul", action="store_true",
                   help="also time a float32 matrix product of matched size in the same rounds, and report "
                        "each path's GFLOP/s as a fraction of its rate")
    a.add_argument("--threads", type=int, default=1)
    a.add_argument("--json", default=None, help="write the records to this file")
    t = sub.add_parser("train", help="training throughput per activation vs softmax (ViT or the LRA model)")
    t.add_argument("--model", default="vit", choices=("vit", "lra"),
                   help="vit: a ViT on 28x28 images; lra: the LRA classifier on padded byte sequences")
    t.add_argument("--seq-len", type=_ints, default=[1024, 2048], help="padded lengths for --model lra")
    t.add_argument("--size", default=None, help="model size (default: micro for vit, nystromformer for lra)")
    t.add_argument("--batch", type=int, default=128)
    t.add_argument("--steps", type=int, default=3)
    t.add_argument("--rounds", type=int, default=3)
    t.add_argument("--activations", type=_specs, default=None)
    t.add_argument("--threads", type=int, default=1)
    t.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    def progress(msg):
        print(msg, file=sys.stderr, flush=True)

    if args.command == "attention":
        paths = args.paths.split(",") if args.paths else None
        if paths and set(paths) - set(BENCH_PATHS):
            parser.error(f"--paths: unknown path(s) {sorted(set(paths) - set(BENCH_PATHS))}")
        records = run_attention_bench(args.n, args.activations, paths, args.batch, args.heads, args.head_dim,
                                      args.causal, args.rounds, args.round_budget, not args.no_memory,
                                      args.naive_max_n, args.threads, progress=progress, sample_s=args.sample,
                                      matmul=args.matmul, min_rounds=args.min_rounds)
        settings = {"batch": args.batch, "heads": args.heads, "head dim": args.head_dim,
                    "causal": args.causal, "threads": args.threads, "clock": _clock(args.threads)[0]}
        print(format_attention_table(records, settings))
    else:
        size = args.size or ("micro" if args.model == "vit" else "nystromformer")
        lengths = args.seq_len if args.model == "lra" else [None]
        records = []
        for n in lengths:
            part = run_train_bench(args.activations, size, args.batch, args.steps, args.rounds,
                                   threads=args.threads, progress=progress, model=args.model, seq_len=n or 0)
            settings = {"model": f"{args.model} {size}", "batch": args.batch, "steps per round": args.steps,
                        "rounds": args.rounds, "threads": args.threads, "clock": _clock(args.threads)[0]}
            if n:
                settings["padded length"] = n
                for r in part:
                    r["seq_len"] = n
            records += part
            print(format_train_table(part, settings))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(records, indent=1))
    return 0

if __name__ == "__main__":
    sys.exit(main())
