"""Reproducing a committed record: one epoch of its configuration, and how close a rerun must come.

The same program on the same data gives the same numbers only on the same CPU running the same
instruction set: PyTorch's CPU kernels (ATen, MKL, oneDNN) pick AVX-512, AVX2 or plain code at run
time, and each sums floats in its own order. How far one epoch moves between instruction sets is
*measured* on one machine (:func:`measure_spread`, ``python -m polyattn tolerance --measure``) and
stored in :data:`SPREAD_FILE`; the tolerance for a rerun on another machine is that measured spread
times :data:`FACTOR`. Exact equality is asked only when the record names this CPU model and this
instruction set.

Every test that compares a rerun with committed numbers goes through :func:`mismatches`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

from .config import TrainConfig
from .results import cpu_model, write_atomic

REPO_ROOT = Path(__file__).resolve().parents[2]
SPREAD_FILE = REPO_ROOT / "data" / "tolerances" / "first_epoch.json"
#: The cross-machine tolerance is this many times the largest difference measured between
#: instruction sets on one machine (an instruction set's rounding differences grow with the
#: number of steps; ten times covers another machine's order of summation with room).
FACTOR = 10.0
#: The metrics of the first epoch that a rerun compares; ``step`` and ``lr`` never depend on floats
#: of the data path, so they are always compared exactly.
EXACT_KEYS = ("step", "lr")
LOSS_KEYS = ("train_loss", "test_loss")
ACCURACY_KEYS = ("train_acc", "test_acc")
#: The instruction-set settings a measurement runs, each an environment for a fresh process.
CAPABILITY_ENVIRONMENTS = {
    "default": {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "ONEDNN_MAX_CPU_ISA": "SSE41"},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "native": {},
}


def records_in(root: Path | None = None) -> list[tuple[Path, dict]]:
    root = root or REPO_ROOT / "data" / "results"
    return [(p, json.loads(p.read_text())) for p in sorted(root.glob("*/*.json"))]


def cheapest_record(cpu: str | None = None, root: Path | None = None) -> tuple[Path, dict]:
    """The committed, clean, ``ok`` image-classification book record with the fewest steps an
    epoch (computed on ``cpu`` when given)."""
    recs = [(p, r) for p, r in records_in(root)
            if r["status"] == "ok" and r["preset"] == "book" and r["provenance"].get("git_dirty") is False
            and r["config"].get("task") == "images"
            and (cpu is None or r["provenance"]["hardware"]["cpu"] == cpu)]
    if not recs:
        raise LookupError(f"no committed clean book image record{' computed on ' + cpu if cpu else ''}")
    return min(recs, key=lambda pr: ((pr[1]["config"]["train_subset"] or 60000) // pr[1]["config"]["batch_size"],
                                     str(pr[0])))


def first_epoch(record: dict) -> dict:
    """The first epoch's metrics of ``record``'s configuration, trained here from scratch."""
    from .train import fit

    cfg = TrainConfig.from_dict({**record["config"], "preset": "smoke"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fit(cfg, progress=False, epochs_limit=1, resume=False)
    keys = EXACT_KEYS + LOSS_KEYS + ACCURACY_KEYS
    return {k: out["metrics"][0][k] for k in keys}


def _first_epoch_in_process(path: Path, env: dict) -> dict:
    code = ("import json, sys; from polyattn.reproduce import first_epoch; "
            "import torch; rec = json.load(open(sys.argv[1])); "
            "out = first_epoch(rec); out['capability'] = torch.backends.cpu.get_cpu_capability(); "
            "print(json.dumps(out))")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True,
                          env={**os.environ, "OMP_NUM_THREADS": "1", **env})
    return json.loads(proc.stdout.strip().splitlines()[-1])


def relative(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-12)


def spread(runs: dict[str, dict]) -> dict:
    """The largest difference between any two runs: relative for losses, absolute for accuracies."""
    names = list(runs)
    out = {k: 0.0 for k in LOSS_KEYS + ACCURACY_KEYS}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for k in LOSS_KEYS:
                out[k] = max(out[k], relative(runs[a][k], runs[b][k]))
            for k in ACCURACY_KEYS:
                out[k] = max(out[k], abs(runs[a][k] - runs[b][k]))
    return out


def measure_spread(path: Path | None = None, environments: dict | None = None) -> dict:
    """One epoch of the cheapest committed record under each instruction set, each in a fresh
    process on this machine; the measurement that :data:`SPREAD_FILE` stores."""
    if path is None:
        path, _ = cheapest_record(cpu_model())
    record = json.loads(Path(path).read_text())
    runs = {name: _first_epoch_in_process(Path(path), env) for name, env in (environments or CAPABILITY_ENVIRONMENTS).items()}
    committed = {k: record["metrics"][0][k] for k in LOSS_KEYS + ACCURACY_KEYS}
    # for comparison only: the cheapest record of every other CPU model, rerun here natively
    other = {}
    for cpu in sorted({r["provenance"]["hardware"]["cpu"] for _, r in records_in()} - {cpu_model()}):
        try:
            p, rec = cheapest_record(cpu)
        except LookupError:
            continue
        here = _first_epoch_in_process(p, {})
        other[cpu] = {"record": str(p.resolve().relative_to(REPO_ROOT)),
                      "spread_to_committed": spread({"here": here, "committed": rec["metrics"][0]})}
    return {"record": str(Path(path).resolve().relative_to(REPO_ROOT)), "cpu": cpu_model(),
            "record_cpu": record["provenance"]["hardware"]["cpu"],
            "runs": runs, "committed_first_epoch": committed,
            "spread_between_instruction_sets": spread(runs),
            "spread_to_committed": spread({**runs, "committed": committed}),
            "other_cpu_models": other}


def write_spread(measured: dict, path: Path = SPREAD_FILE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, measured)


def stored_spread(path: Path = SPREAD_FILE) -> dict:
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: measure it with `python -m polyattn tolerance --measure`")
    return json.loads(path.read_text())


def tolerance(measured: dict | None = None) -> dict:
    """The cross-machine tolerance: :data:`FACTOR` times the largest measured spread between
    instruction sets, one for the losses (relative) and one for the accuracies (absolute): a key
    whose spread happened to be zero on the measuring machine (a train accuracy that no rounding
    tipped over) is held to the same bound as its sibling."""
    if measured is None:
        measured = stored_spread()
    s = measured["spread_between_instruction_sets"]
    loss = FACTOR * max(s[k] for k in LOSS_KEYS)
    accuracy = FACTOR * max(s[k] for k in ACCURACY_KEYS)
    return {**{k: loss for k in LOSS_KEYS}, **{k: accuracy for k in ACCURACY_KEYS}}


def same_machine(record: dict) -> bool:
    """The record names this CPU model and the instruction set PyTorch runs here."""
    import torch


    hw = record["provenance"]["hardware"]
    return hw.get("cpu") == cpu_model() and hw.get("cpu_capability") == torch.backends.cpu.get_cpu_capability()


def mismatches(got: dict, record: dict, epoch: int = 0) -> list[str]:
    """How a rerun's metrics differ from ``record``'s epoch beyond what the machines allow
    (empty when they agree): exactly on the record's own CPU and instruction set, within
    :func:`tolerance` elsewhere."""
    want = record["metrics"][epoch]
    exact = same_machine(record)
    tol = None if exact else tolerance()
    out = []
    for k in EXACT_KEYS + LOSS_KEYS + ACCURACY_KEYS:
        if k not in got:
            continue
        if exact or k in EXACT_KEYS:
            if got[k] != want[k]:
                out.append(f"{k}: {got[k]!r} != {want[k]!r} (same CPU and instruction set: exact)")
        elif k in LOSS_KEYS:
            if relative(got[k], want[k]) > tol[k]:
                out.append(f"{k}: {got[k]!r} vs {want[k]!r}, relative difference "
                           f"{relative(got[k], want[k]):.2e} > {tol[k]:.2e}")
        elif abs(got[k] - want[k]) > tol[k]:
            out.append(f"{k}: {got[k]!r} vs {want[k]!r}, difference {abs(got[k] - want[k]):.2e} > {tol[k]:.2e}")
    return out
