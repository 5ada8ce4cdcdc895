"""Reproducing a committed record, on its own machine and on any other.

The same program on the same data gives the same numbers only on the same CPU running the same
instruction set: PyTorch's CPU kernels (ATen, MKL, oneDNN) pick AVX-512, AVX2 or plain code at run
time, and each sums floats in its own order.  Over a whole epoch those rounding differences grow
(training is chaotic), by an amount that depends on the CPU: one Intel Xeon moved its first epoch's
test loss by 8.8e-5 between instruction sets, an AMD EPYC eighty times more.  So two checks:

* **exact**, on the record's own CPU model and instruction set: the first epoch of the cheapest
  committed record gives its committed numbers bit for bit (:func:`first_epoch`, :func:`mismatches`);
* **short**, on any CPU: the first :data:`SHORT_STEPS` optimiser steps of one committed record's
  configuration (each step's training loss, then the test loss and accuracy) against a stored
  reference, :data:`SHORT_FILE`.  After so few steps the order of summation has not grown into the
  numbers; a real change to the training loop has.  Both are *measured*
  (``python -m polyattn tolerance --measure``): the spread between instruction sets on this machine,
  and the effect of a deliberate change of one learning-rate step.  The tolerance sits halfway
  between them on a log scale (:func:`short_tolerance`), and the measurement fails when the two are
  not far enough apart for that to mean anything.

Every test that compares a rerun with committed numbers goes through :func:`mismatches` or
:func:`short_mismatches`.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

from .config import TrainConfig
from .results import cpu_model, write_atomic

REPO_ROOT = Path(__file__).resolve().parents[2]
SPREAD_FILE = REPO_ROOT / "data" / "tolerances" / "first_epoch.json"
#: The short reproduction's reference and its measured tolerance.
SHORT_FILE = REPO_ROOT / "data" / "tolerances" / "first_steps.json"
#: How many optimiser steps the short reproduction trains: measured on an Intel Xeon, the largest
#: difference between instruction sets stays at float32 rounding (1e-7 relative) through step 16
#: and has grown to 4e-7 by step 40, while one learning-rate step's shift moves the losses by 1e-3.
SHORT_STEPS = 16
#: The measured noise (spread between instruction sets, times :data:`FACTOR`) and the measured
#: signal (a one-step shift of the learning-rate schedule) must be at least this far apart, each
#: on its own side of the tolerance, for the short check to both hold and catch a real change.
SHORT_HEADROOM = 10.0
#: The relative rounding of one float32 operation (2^-23): the least a measured spread is taken to be.
FLOAT32_ROUNDING = 2.0 ** -23
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


def cheapest_record(cpu: str | None = None, root: Path | None = None,
                    capability: str | None = None) -> tuple[Path, dict]:
    """The committed, clean, ``ok`` image-classification book record with the fewest steps an
    epoch (computed on ``cpu`` under the instruction set ``capability``, when given)."""
    recs = [(p, r) for p, r in records_in(root)
            if r["status"] == "ok" and r["preset"] == "book" and r["provenance"].get("git_dirty") is False
            and r["config"].get("task") == "images"
            and (cpu is None or r["provenance"]["hardware"]["cpu"] == cpu)
            and (capability is None or r["provenance"]["hardware"].get("cpu_capability") == capability)]
    if not recs:
        where = "".join([f" computed on {cpu}" if cpu else "", f" under {capability}" if capability else ""])
        raise LookupError(f"no committed clean book image record{where}")
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
    """What one whole epoch moved between instruction sets, as :data:`FACTOR` times the largest
    measured spread of each kind (relative for losses, absolute for accuracies): a description of
    why a whole epoch is compared only on the record's own machine, printed by
    ``python -m polyattn tolerance``."""
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
    """How a rerun's metrics differ from ``record``'s epoch (empty when they agree): exactly, on the
    record's own CPU model and instruction set only; elsewhere a whole epoch has grown by the
    order of summation, and :func:`short_mismatches` is the check."""
    if not same_machine(record):
        hw = record["provenance"]["hardware"]
        raise ValueError(f"a whole epoch is compared only on the record's own machine ({hw.get('cpu')}, "
                         f"{hw.get('cpu_capability')}); on another, compare the first steps with short_mismatches")
    want = record["metrics"][epoch]
    return [f"{k}: {got[k]!r} != {want[k]!r} (same CPU and instruction set: exact)"
            for k in EXACT_KEYS + LOSS_KEYS + ACCURACY_KEYS if k in got and got[k] != want[k]]


# --- the short reproduction: a fixed number of steps, on any CPU ---------------------------------------------

SHORT_LOSS_KEYS = ("test_loss",)
SHORT_ACCURACY_KEYS = ("test_acc",)


def short_record(root: Path | None = None) -> tuple[Path, dict]:
    """The committed record whose configuration the short reproduction trains: the cheapest clean
    ``ok`` image-classification book record of the CPU model named in :data:`SHORT_FILE` (any CPU
    model when there is no measurement yet)."""
    cpu = json.loads(SHORT_FILE.read_text())["record_cpu"] if SHORT_FILE.exists() and root is None else None
    return cheapest_record(cpu, root)


def first_steps(record: dict, steps: int = SHORT_STEPS, lr_shift: int = 0) -> dict:
    """The first ``steps`` optimiser steps of ``record``'s configuration, trained here from scratch:
    each step's training loss, then the test loss and accuracy after the last.  ``lr_shift=k``
    reads the learning-rate schedule ``k`` steps ahead: the deliberate change that
    :func:`measure_short` uses to show the check would catch a real one."""
    from . import train

    cfg = TrainConfig.from_dict({**record["config"], "preset": "smoke"})
    schedule = train.lr_at
    if lr_shift:
        train.lr_at = lambda step, *rest: schedule(step + lr_shift, *rest)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = train.fit(cfg, progress=False, steps_limit=steps, resume=False)
    finally:
        train.lr_at = schedule
    last = out["metrics"][-1]
    return {"steps": steps, "step_losses": out["step_losses"], **{k: last[k] for k in SHORT_LOSS_KEYS + SHORT_ACCURACY_KEYS}}


def _first_steps_in_process(path: Path, env: dict, lr_shift: int = 0) -> dict:
    code = ("import json, sys; from polyattn.reproduce import first_steps; "
            "import torch; rec = json.load(open(sys.argv[1])); "
            "out = first_steps(rec, lr_shift=int(sys.argv[2])); "
            "out['capability'] = torch.backends.cpu.get_cpu_capability(); print(json.dumps(out))")
    proc = subprocess.run([sys.executable, "-c", code, str(path), str(lr_shift)], capture_output=True, text=True,
                          check=True, env={**os.environ, "OMP_NUM_THREADS": "1", **env})
    return json.loads(proc.stdout.strip().splitlines()[-1])


def short_difference(a: dict, b: dict) -> dict:
    """How far two short runs are apart: the largest relative difference over the step losses and
    the test loss, and the absolute difference of the test accuracy."""
    if len(a["step_losses"]) != len(b["step_losses"]):
        return {"loss": math.inf, "accuracy": math.inf}
    loss = max([relative(x, y) for x, y in zip(a["step_losses"], b["step_losses"])]
               + [relative(a[k], b[k]) for k in SHORT_LOSS_KEYS])
    accuracy = max(abs(a[k] - b[k]) for k in SHORT_ACCURACY_KEYS)
    return {"loss": loss, "accuracy": accuracy}


def short_tolerance(noise: dict, signal: dict, one_image: float) -> dict:
    """The tolerances of the short reproduction.

    Losses: halfway, on a log scale, between the measured noise (:data:`FACTOR` times the largest
    spread between instruction sets, never below float32 rounding) and the measured signal (the
    deliberate change), so each is at least :data:`SHORT_HEADROOM` from it; a ValueError when they
    are too close for that, since then no tolerance both holds across machines and catches the
    change.  Accuracy: :data:`FACTOR` times the larger of its measured spread and one test image
    (``one_image``), a secondary check; the losses carry the reproduction."""
    low = FACTOR * max(noise["loss"], FLOAT32_ROUNDING)
    if signal["loss"] < low * SHORT_HEADROOM ** 2:
        raise ValueError(f"the short reproduction cannot separate rounding from a real change: noise {low:.1e} "
                         f"(x{FACTOR:g}) against a one-step learning-rate shift's {signal['loss']:.1e}; raise "
                         f"SHORT_STEPS and measure again")
    return {"loss": math.sqrt(low * signal["loss"]), "accuracy": FACTOR * max(noise["accuracy"], one_image)}


def measure_short(path: Path | None = None, environments: dict | None = None) -> dict:
    """The short reproduction measured on this machine: :data:`SHORT_STEPS` steps of the cheapest
    committed record of this CPU model under each instruction set, and with the learning-rate
    schedule shifted by one step; the reference (this machine's native run), the noise, the signal
    and the tolerance that :data:`SHORT_FILE` stores."""

    if path is None:
        path, _ = cheapest_record(cpu_model())
    record = json.loads(Path(path).read_text())
    runs = {name: _first_steps_in_process(Path(path), env)
            for name, env in (environments or CAPABILITY_ENVIRONMENTS).items()}
    shifted = _first_steps_in_process(Path(path), {}, lr_shift=1)
    names = list(runs)
    noise = {"loss": 0.0, "accuracy": 0.0}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            d = short_difference(runs[a], runs[b])
            noise = {k: max(noise[k], d[k]) for k in noise}
    reference = runs.get("native") or runs[names[-1]]
    signal = short_difference(shifted, reference)
    return {"record": str(Path(path).resolve().relative_to(REPO_ROOT)), "config_hash": record["config_hash"],
            "record_cpu": record["provenance"]["hardware"]["cpu"], "cpu": cpu_model(),
            "steps": SHORT_STEPS, "runs": runs, "lr_shifted_one_step": shifted, "reference": reference,
            "spread_between_instruction_sets": noise, "effect_of_one_lr_step": signal,
            "tolerance": short_tolerance(noise, signal, 1.0 / (record["config"].get("test_subset") or 10000))}


def stored_short(path: Path = SHORT_FILE) -> dict:
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: measure it with `python -m polyattn tolerance --measure`")
    return json.loads(path.read_text())


def short_mismatches(got: dict, measured: dict | None = None) -> list[str]:
    """How a short rerun differs from the stored reference beyond the stored tolerance (empty when
    they agree)."""
    measured = measured or stored_short()
    ref, tol = measured["reference"], measured["tolerance"]
    d = short_difference(got, ref)
    out = []
    if got.get("steps", len(got["step_losses"])) != ref.get("steps", len(ref["step_losses"])):
        out.append(f"steps: {got.get('steps')} != {ref.get('steps')}")
    if d["loss"] > tol["loss"]:
        out.append(f"losses: largest relative difference {d['loss']:.2e} > {tol['loss']:.2e} over "
                   f"{len(ref['step_losses'])} steps and the test loss")
    if d["accuracy"] > tol["accuracy"]:
        out.append(f"test_acc: difference {d['accuracy']:.2e} > {tol['accuracy']:.2e}")
    return out


# --- what the README says of the measurements ---------------------------------------------------------------

README_START = "<!-- tolerances: written by `python -m polyattn tolerance --measure` from data/tolerances; do not edit -->"
README_END = "<!-- end of tolerances -->"


def readme_block(short: dict | None = None, epoch: dict | None = None) -> str:
    """The README's lines on the measured spreads, per CPU model, and the tolerances they give."""
    short = short or stored_short()
    epoch = epoch or stored_spread()
    noise, signal, tol = short["spread_between_instruction_sets"], short["effect_of_one_lr_step"], short["tolerance"]
    epoch_loss = max(epoch["spread_between_instruction_sets"][k] for k in LOSS_KEYS)
    lines = [
        f"- **{short['cpu']}, the first {short['steps']} steps** of `{short['record']}` under the instruction "
        f"sets {', '.join(short['runs'])}: the losses move by at most {noise['loss']:.1e} (relative) between "
        f"instruction sets, and by {signal['loss']:.1e} when the learning-rate schedule is read one step "
        f"ahead. The tolerance, halfway between ten times the first and the second on a log scale, is "
        f"{tol['loss']:.1e}; test accuracy is held to {tol['accuracy']:.3f}.",
        f"- **{epoch['cpu']}, one whole epoch** of `{epoch['record']}`: the losses move by up to "
        f"{epoch_loss:.1e} between instruction sets.",
    ]
    for cpu, other in sorted(epoch.get("other_cpu_models", {}).items()):
        worst = max(other["spread_to_committed"][k] for k in LOSS_KEYS)
        lines.append(f"- **{cpu}, one whole epoch**: its record `{other['record']}`, rerun on the "
                     f"{epoch['cpu']}, is {worst:.1e} (relative) from its committed first epoch: another "
                     f"order of summation, grown over an epoch.")
    return "\n".join(lines)


def replace_readme_block(text: str, block: str) -> str:
    """``text`` (the README) with its tolerances block replaced by ``block``."""
    if README_START not in text or README_END not in text:
        raise ValueError(f"the README has no tolerances block: add the lines {README_START!r} and {README_END!r}")
    head, rest = text.split(README_START, 1)
    return head + README_START + "\n" + block + "\n" + README_END + rest.split(README_END, 1)[1]
