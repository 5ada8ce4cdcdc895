"""What a book run with no stored run of its kind will cost: the time of one training step,
measured side by side with a stored configuration's step, scales that configuration's stored
wall time (``python -m polyattn records --measure``).

A missing run whose cost class (its configuration but activation and seed) has stored runs is
priced at their mean wall time, and one whose shape has stored runs at the shape's rate (see
:mod:`polyattn.book.status`).  For the rest, this module picks the stored cost class of the same
task whose configuration differs least, times training steps of both in one process, alternated
round by round, and keeps the median ratio.  The estimate is then

    (mean wall time of the reference's stored runs) / (reference's training steps)
        x (step-time ratio) x (missing run's training steps).

It leaves out what a step does not show (evaluation, probes, L-BFGS phases), so it is an
estimate of the order of the cost, stated as such wherever it is shown.  The measured ratios
are kept in :data:`RATIOS_FILE` with the machine that measured them.
"""
from __future__ import annotations

import json
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Optional

from .config import hash_fields
from .presets import seed_everything
from .results import REPO_ROOT, hardware, packages, write_atomic

#: Where measured step ratios are kept (committed with the records they price).
RATIOS_FILE = Path("data") / "step_ratios.json"


def cost_class_key(config) -> str:
    """A stable name for a run's cost class: its hashed fields but activation and seed (hashes
    cover later fields only where they differ from their default, so adding a field keeps it)."""
    d = {k: v for k, v in hash_fields(config).items() if k not in ("activation", "seed")}
    return json.dumps(d, sort_keys=True, default=str, separators=(",", ":"))


def _stepper(config, threads: int):
    """(one training step as a function of nothing, the run's total training steps)."""
    import torch

    from .tasks import get_task
    from .train import _closure, _optimizer_kind, make_optimizer

    torch.set_num_threads(threads)
    task = get_task(config.task)
    seed_everything(config.seed)
    data = task.load(config, 1, 0)
    model = task.build_model(config, data)
    opt = make_optimizer(model, config, _optimizer_kind(config, 0))
    state = task.prepare(config, data) if hasattr(task, "prepare") else None
    total = task.steps_per_epoch(config, data) * config.epochs
    batches = iter(())

    def step():
        nonlocal batches
        batch = next(batches, None)
        if batch is None:
            batches = iter(task.batches(config, data, 0, 1, 0, state))
            batch = next(batches)
        opt.step(_closure(task, model, model, batch, config, opt, None, 0, [], {}))

    return step, total


def measure_step_ratio(config, reference, steps: int = 3, rounds: int = 5, threads: int = 1) -> dict:
    """``{"step_ratio", "steps", "reference_steps", "step_s", "reference_step_s"}``: the median over
    ``rounds`` of (time of ``steps`` training steps of ``config``) / (the same for ``reference``),
    the two timed alternately in this process after one warm-up step each, on ``threads`` threads;
    ``steps`` and ``reference_steps`` are the two runs' total training steps."""
    if steps < 1 or rounds < 1:
        raise ValueError(f"steps and rounds must be >= 1, got {steps} and {rounds}")
    step_a, total_a = _stepper(config, threads)
    step_b, total_b = _stepper(reference, threads)
    step_a()
    step_b()
    ratios, times_a, times_b = [], [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(steps):
            step_a()
        t1 = time.perf_counter()
        for _ in range(steps):
            step_b()
        t2 = time.perf_counter()
        times_a.append((t1 - t0) / steps)
        times_b.append((t2 - t1) / steps)
        ratios.append((t1 - t0) / (t2 - t1))
    return {"step_ratio": statistics.median(ratios), "steps": total_a, "reference_steps": total_b,
            "step_s": statistics.median(times_a), "reference_step_s": statistics.median(times_b)}


def _differing(a, b) -> int:
    da, db = hash_fields(a), hash_fields(b)
    return sum(da.get(k) != db.get(k) for k in set(da) | set(db) if k not in ("activation", "seed"))


def nearest_reference(config, stored: list):
    """The stored configuration of ``config``'s task that differs from it in the fewest hashed
    fields (ties: one of the same grid first); None when the task has no stored run."""
    same_task = [c for c in stored if c.task == config.task]
    if not same_task:
        return None
    return min(same_task, key=lambda c: (_differing(config, c), c.experiment != config.experiment,
                                         cost_class_key(c)))


def load_ratios(root: Path = REPO_ROOT) -> dict:
    """The measured step ratios by the missing cost class's key ({} when none were measured;
    a file that is not valid JSON is reported, not silently ignored)."""
    path = Path(root) / RATIOS_FILE
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text())["ratios"]
    except (ValueError, KeyError) as e:
        raise ValueError(f"{path} is not a valid step-ratio file ({e}); delete it and run "
                         f"`python -m polyattn records --measure` again") from None


def measure_missing(missing: list, stored: list, root: Path = REPO_ROOT, steps: int = 3, rounds: int = 5,
                    progress: Optional[Callable[[str], None]] = print) -> dict:
    """Measure a step ratio for each cost class in ``missing`` (configs) that has none yet,
    against its :func:`nearest_reference` among ``stored``; write them to :data:`RATIOS_FILE`
    (atomically, with the machine and time) and return the whole mapping."""
    ratios = dict(load_ratios(root))
    todo: dict[str, object] = {}
    for c in missing:
        todo.setdefault(cost_class_key(c), c)
    for i, (key, c) in enumerate(sorted(todo.items())):
        if key in ratios:
            continue
        ref = nearest_reference(c, stored)
        if ref is None:
            if progress:
                progress(f"{c.experiment} ({c.activation}): no stored run of task {c.task!r} to compare with")
            continue
        if progress:
            progress(f"[{i + 1}/{len(todo)}] {c.experiment} ({c.activation}) against {ref.experiment} "
                     f"({ref.activation}) ...")
        m = measure_step_ratio(c, ref, steps=steps, rounds=rounds)
        ratios[key] = {"grid": c.experiment, "reference": cost_class_key(ref), "reference_grid": ref.experiment,
                       **m, "timed_steps": steps, "rounds": rounds,
                       "cpu": hardware("cpu").get("cpu"), "torch": packages().get("torch"),
                       "measured": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        if progress:
            progress(f"    one step takes {m['step_ratio']:.2f} x the reference's")
        path = Path(root) / RATIOS_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, {"schema": 1, "ratios": ratios})
    return ratios


def estimate_seconds(key: str, ratios: dict, class_walls: dict) -> Optional[float]:
    """A missing run's estimated wall time from its class's measured ratio and the reference's
    stored runs (``class_walls``: cost-class key -> wall seconds of its stored runs); None when
    either is missing."""
    r = ratios.get(key)
    walls = class_walls.get(r["reference"]) if r else None
    if not walls or not r.get("reference_steps"):
        return None
    return sum(walls) / len(walls) / r["reference_steps"] * r["step_ratio"] * r["steps"]
