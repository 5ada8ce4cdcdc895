"""The one training loop: ``fit(config)`` trains any task and returns its result record.

``fit`` owns what every task shares: seeding, optimiser groups (the model declares which
parameters decay), the learning-rate schedule, a closure step that serves AdamW and L-BFGS
alike, gradient clipping (an explicit config value, off by default), probes, divergence (a
non-finite loss ends the run with status ``diverged`` and its step), a checkpoint at every
evaluation and resume after an interruption, DistributedDataParallel under ``torchrun``
(each global batch split into equal shards, one per rank), a progress bar and the record.
What differs between tasks (data, model, loss, evaluation, metric declarations) comes from
the task (:mod:`polyattn.tasks`).
"""
from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Optional

import torch

from .config import TrainConfig
from .kernels import compiled as compiled_kernels
from .models.blocks import decay_groups
from .presets import seed_everything
from .probes import Recorder
from .qk_controls import qk_decay_step, scale_out_init, scale_qk_init
from .results import REPO_ROOT, config_dict, provenance
from .schedule import lr_at
from .tasks import get_task

__all__ = ["Interrupted", "TrainConfig", "fit", "run", "seed_everything"]


class Interrupted(RuntimeError):
    """Raised by ``stop_after_epoch`` in tests to simulate an interruption."""


class _Diverged(RuntimeError):
    pass


def checkpoint_path(config: TrainConfig) -> Path:
    return REPO_ROOT / "data" / "checkpoints" / config.experiment / f"{config.hash}-seed{config.seed}.pt"


def _dist():
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return 1, 0
    import torch.distributed as dist

    if not dist.is_initialized():
        backend = "nccl" if torch.cuda.is_available() and os.environ.get("POLYATTN_BACKEND") != "gloo" else "gloo"
        dist.init_process_group(backend)
    return dist.get_world_size(), dist.get_rank()


def make_optimizer(model, config: TrainConfig, kind: str):
    """AdamW over the model's decay groups, or L-BFGS with a strong-Wolfe line search."""
    if kind == "lbfgs":
        return torch.optim.LBFGS([p for p in model.parameters() if p.requires_grad], lr=config.lr,
                                 max_iter=config.lbfgs_max_iter, line_search_fn="strong_wolfe")
    groups = model.decay_groups() if hasattr(model, "decay_groups") else decay_groups(model)
    decay, keep = groups
    return torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                              {"params": keep, "weight_decay": 0.0}], lr=config.lr)


def _optimizer_kind(config: TrainConfig, epoch: int) -> str:
    if config.optimizer == "adamw_lbfgs":
        return "lbfgs" if epoch >= config.lbfgs_from_epoch else "adamw"
    return config.optimizer


def _closure(task, net, model, batch, config, opt, recorder, step, probe_rows, first: dict):
    """The step's closure (AdamW calls it once, L-BFGS also at its line search's trial points).

    The first evaluation is the one probed and counted: its statistics go into ``first``.
    A non-finite loss raises :class:`_Diverged` before any update.
    """
    def closure():
        if recorder is not None and not first:
            recorder.attach()
        opt.zero_grad(set_to_none=True)
        loss, stats = task.loss(net, batch, config)
        if not torch.isfinite(loss):
            if recorder is not None and recorder.attached:
                recorder.detach()
            raise _Diverged
        loss.backward()
        if not first:
            first.update(stats=stats, loss=loss.item())
            if recorder is not None:
                probe_rows.extend(recorder.collect(step))
                recorder.detach()
        if config.clip_grad:
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip_grad)
        return loss

    return closure


#: Set (by the book build at the book preset) when every run must come from a stored record:
#: ``fit`` then refuses to train, so a build never retrains anything and leaves the tree as it was.
STORED_ONLY = "POLYATTN_STORED_ONLY"


def fit(config: TrainConfig, progress: bool = True, stop_after_epoch: Optional[int] = None,
        data=None, resume: bool = True, return_model: bool = False, epochs_limit: Optional[int] = None,
        steps_limit: Optional[int] = None) -> dict:
    """Train and evaluate ``config``'s task; return the result record (see :mod:`polyattn.results`).

    ``data``: the task's loaded data, to share one load between runs (tests, chapters).
    ``stop_after_epoch`` raises :class:`Interrupted` after that epoch's checkpoint (tests use it
    to simulate an interruption); a later call resumes from the checkpoint.
    ``return_model=True`` adds the trained model under ``record["model"]`` (for figures that
    need weights); such a record is not JSON-serialisable, do not store it.
    ``epochs_limit=k`` trains only the first k epochs of the full schedule and returns a partial
    record (``"partial": k``) that reproduces the first k evaluations of the full run.
    ``steps_limit=k`` trains only the first k optimiser steps of the full schedule, evaluates once,
    and returns a partial record (``"partial_steps": k``) with each step's training loss under
    ``"step_losses"``: the short reproduction of :mod:`polyattn.reproduce`, too short for the order
    of float summation to have grown into the numbers.
    """
    from tqdm.auto import tqdm

    if os.environ.get(STORED_ONLY):
        raise RuntimeError(
            f"{config.experiment} seed {config.seed} ({config.activation}) has no valid stored record, and this "
            f"build reads stored records only: compute it with `python -m polyattn grid {config.experiment} "
            f"--seeds {config.seed}` from a clean tree and commit it, or build with --recompute")
    task = get_task(config.task)
    if config.threads:
        torch.set_num_threads(config.threads)
    world, rank = _dist()
    if config.batch_size % world:
        raise ValueError(f"batch_size {config.batch_size} must be divisible by the number of processes ({world})")
    device = torch.device(config.device)
    if world > 1 and device.type == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    seed_everything(config.seed)
    if data is None:
        data = task.load(config, world, rank)
    model = task.build_model(config, data).to(device)
    if config.qk_init_scale != 1.0:
        scale_qk_init(model, config.qk_init_scale)
    if config.out_init_scale != 1.0:
        scale_out_init(model, config.out_init_scale)
    net = model
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel as DDP

        net = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    kind = _optimizer_kind(config, 0)
    opt = make_optimizer(model, config, kind)
    steps_per_epoch = task.steps_per_epoch(config, data)
    if steps_per_epoch < 1:
        raise ValueError(f"batch_size {config.batch_size} exceeds the training set")
    total_steps = steps_per_epoch * config.epochs
    warmup = int(round(config.warmup_epochs * steps_per_epoch))
    state = task.prepare(config, data) if hasattr(task, "prepare") else None

    metrics, probe_rows, start_epoch, wall_before = [], [], 0, 0.0
    status, diverged_step = "ok", None
    ckpt = checkpoint_path(config)
    if steps_limit is not None and steps_limit < 1:
        raise ValueError(f"steps_limit must be at least 1, got {steps_limit}")
    step_losses = []
    if resume and ckpt.exists() and steps_limit is None:
        saved = torch.load(ckpt, map_location="cpu", weights_only=True)
        model.load_state_dict(saved["model"])
        start_epoch = saved["epoch"]
        kind = _optimizer_kind(config, start_epoch)
        opt = make_optimizer(model, config, kind)
        opt.load_state_dict(saved["optimizer"])
        torch.set_rng_state(saved["rng"])
        metrics, probe_rows, wall_before = saved["metrics"], saved["probes"], saved["wall_s"]
    prov = provenance(str(device))
    t0 = time.perf_counter()

    recorder = None
    if config.probe_every:
        recorder = Recorder(model, metrics=config.probe_metrics, param_probes=config.param_probes)

    bar = tqdm(total=total_steps, initial=start_epoch * steps_per_epoch, disable=not progress or rank != 0,
               desc=f"{config.activation} seed {config.seed}", unit="step", leave=False)
    step = start_epoch * steps_per_epoch
    model.train()
    last_epoch = config.epochs if epochs_limit is None else min(config.epochs, epochs_limit)
    for epoch in range(start_epoch, last_epoch):
        if _optimizer_kind(config, epoch) != kind:
            kind = _optimizer_kind(config, epoch)
            opt = make_optimizer(model, config, kind)
        sums, seen = {}, 0
        for b, batch in enumerate(task.batches(config, data, epoch, world, rank, state)):
            batch = batch.to(device)
            if kind == "adamw":
                for g in opt.param_groups:
                    g["lr"] = lr_at(step, total_steps, warmup, config.lr, config.min_lr)
            probing = recorder is not None and (step % config.probe_every == 0 or step == total_steps - 1)
            first = {}
            closure = _closure(task, net, model, batch, config, opt, recorder if probing else None, step,
                               probe_rows, first)
            try:
                opt.step(closure)
            except _Diverged:
                status, diverged_step = "diverged", step
                break
            if config.qk_weight_decay is not None:
                qk_decay_step(model, opt.param_groups[0]["lr"], config.weight_decay, config.qk_weight_decay)
            for k, v in first["stats"].items():
                sums[k] = sums.get(k, 0.0) + v
            seen += batch.size
            step += 1
            step_losses.append(first["loss"])
            bar.update(1)
            if b % 10 == 0:
                bar.set_postfix(loss=f"{first['loss']:.3f}", epoch=epoch + 1)
            if steps_limit is not None and step >= steps_limit:
                break
        if status == "diverged":
            break
        stopped = steps_limit is not None and step >= steps_limit
        if (epoch + 1) % config.eval_every and epoch + 1 < config.epochs and not stopped:
            continue
        if world > 1:
            import torch.distributed as dist

            keys = sorted(sums)
            t = torch.tensor([sums[k] for k in keys] + [seen], dtype=torch.float64, device=device)
            dist.all_reduce(t)
            sums, seen = dict(zip(keys, t[:-1].tolist())), t[-1].item()
        evaluation = task.evaluate(model, config, data, device)
        if not all(math.isfinite(v) for v in evaluation.values()):
            status, diverged_step = "diverged", step
        metrics.append({"epoch": epoch + 1, "step": step, **{k: v / seen for k, v in sums.items()},
                        **evaluation, "lr": opt.param_groups[0]["lr"],
                        "wall_s": wall_before + time.perf_counter() - t0})
        if status == "diverged" or stopped:
            break
        if rank == 0 and epoch + 1 < last_epoch:
            ckpt.parent.mkdir(parents=True, exist_ok=True)
            tmp = ckpt.with_suffix(".tmp")
            torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "rng": torch.get_rng_state(),
                        "metrics": metrics, "probes": probe_rows, "epoch": epoch + 1,
                        "wall_s": wall_before + time.perf_counter() - t0}, tmp)
            os.replace(tmp, ckpt)
        if stop_after_epoch is not None and epoch + 1 == stop_after_epoch:
            bar.close()
            raise Interrupted(f"stopped after epoch {epoch + 1}")
    bar.close()
    if rank == 0 and last_epoch == config.epochs and steps_limit is None:
        ckpt.unlink(missing_ok=True)
    prov["wall_s"] = wall_before + time.perf_counter() - t0
    # which attention implementation ran (the compiled and PyTorch forms differ in float rounding)
    prov["compiled_extension"] = compiled_kernels.status()
    prov["world_size"] = world
    record = {"schema": 1, "experiment": config.experiment, "config": config_dict(config), "config_hash": config.hash,
              "seed": config.seed, "preset": config.preset, "status": status, "diverged_step": diverged_step,
              "task": task.name, "seq_lens": task.seq_lens(config),
              "metrics_spec": [m.as_dict() for m in task.metrics(config)],
              "metrics": metrics, "probes": probe_rows, "provenance": prov, "rank": rank,
              "n_params": sum(p.numel() for p in model.parameters())}
    if status == "ok" and rank == 0 and hasattr(task, "summarise"):
        record["final"] = task.summarise(model, config, data, device)
    scales = learned_head_scales(model)
    if scales:
        record["learned_head_scales"] = scales
    if epochs_limit is not None and last_epoch < config.epochs:
        record["partial"] = last_epoch
    if steps_limit is not None and steps_limit < total_steps:
        record["partial_steps"] = step
        record["step_losses"] = step_losses
    if return_model:
        record["model"] = model
    return record


def learned_head_scales(model) -> list:
    """The learned factor g_h of every head, one list per attention layer in module order (empty
    when no activation learns a scale): the scale g_h / sqrt(N) ends this far from 1/sqrt(N)."""
    return [[float(v) for v in m.head_scale.detach().cpu()] for m in model.modules()
            if getattr(m, "head_scale", None) is not None]


#: The name the image experiments have always used.
run = fit


def train_with_model(config, data=None):
    """Train ``config`` (no stored record, no resume) and return ``(record, model)`` in eval mode."""
    rec = fit(config, progress=False, resume=False, data=data, return_model=True)
    model = rec.pop("model")
    model.eval()
    return rec, model
