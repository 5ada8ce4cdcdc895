"""Training: one ``run(config)`` that trains and evaluates a ViT and returns a result record.

AdamW (weight decay always explicit), cosine schedule with linear warmup, gradient
clipping, probes every K steps, deterministic seeding, a checkpoint every epoch and
resume after an interruption.  A NaN/inf loss ends the run with status ``diverged`` and
its step.  Under ``torchrun`` (WORLD_SIZE > 1) it trains with DistributedDataParallel:
each global batch is split into equal contiguous shards, one per rank.
"""
from __future__ import annotations

import dataclasses
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import torch
import torch.nn.functional as F

from . import activations
from .results import REPO_ROOT, config_dict, config_hash, provenance

AUGMENTS = ("none", "deit")
IN_MEMORY = ("fashion_mnist",)


@dataclass(frozen=True)
class TrainConfig:
    experiment: str = "scratch"
    activation: str = "softmax"
    dataset: str = "fashion_mnist"
    train_subset: Optional[int] = None
    test_subset: Optional[int] = None
    image_size: int = 28
    patch_size: int = 4
    model: str = "micro"
    pool: str = "cls"
    n_mode: str = "row"
    drop_path: float = 0.0
    epochs: int = 5
    batch_size: int = 128
    lr: float = 1e-3
    weight_decay: float = 0.05
    warmup_epochs: float = 1.0
    min_lr: float = 1e-5
    clip_grad: float = 1.0
    augment: str = "none"
    label_smoothing: float = 0.0
    probe_every: int = 0
    probe_metrics: tuple = ("attn_fro", "act_jac_fro", "grad_attn_fro")
    param_probes: int = 0
    seed: int = 0
    preset: str = "book"
    device: str = "cpu"
    threads: Optional[int] = None
    data_root: Optional[str] = None
    num_workers: int = 4

    def __post_init__(self):
        object.__setattr__(self, "activation", activations.canonical(self.activation))
        object.__setattr__(self, "probe_metrics", tuple(self.probe_metrics))
        if self.augment not in AUGMENTS:
            raise ValueError(f"augment must be one of {AUGMENTS}, got {self.augment!r}")
        if self.image_size % self.patch_size:
            raise ValueError(f"image_size {self.image_size} is not divisible by patch_size {self.patch_size}")
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError("epochs and batch_size must be positive")
        if self.warmup_epochs > self.epochs:
            raise ValueError(f"warmup_epochs ({self.warmup_epochs}) exceeds epochs ({self.epochs})")

    @property
    def hash(self) -> str:
        return config_hash(self)

    @property
    def seq_len(self) -> int:
        return (self.image_size // self.patch_size) ** 2 + (self.pool == "cls")

    def replace(self, **kw) -> "TrainConfig":
        return dataclasses.replace(self, **kw)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: (tuple(v) if k == "probe_metrics" else v) for k, v in d.items() if k in names})


class Interrupted(RuntimeError):
    """Raised by a ``stop_after_epoch`` callback in tests to simulate an interruption."""


def seed_everything(seed: int) -> None:
    """Seed torch's global generator and make CPU kernels deterministic."""
    import random

    import numpy as np

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True, warn_only=True)


def checkpoint_path(config: TrainConfig) -> Path:
    return REPO_ROOT / "data" / "checkpoints" / config.experiment / f"{config.hash}-seed{config.seed}.pt"


def _lr_at(step: int, total: int, warmup: int, base: float, min_lr: float) -> float:
    if warmup and step < warmup:
        return base * (step + 1) / warmup
    t = (step - warmup) / max(1, total - warmup)
    return min_lr + 0.5 * (base - min_lr) * (1 + math.cos(math.pi * min(1.0, t)))


def _dist():
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return 1, 0
    import torch.distributed as dist

    if not dist.is_initialized():
        backend = "nccl" if torch.cuda.is_available() and os.environ.get("POLYATTN_BACKEND") != "gloo" else "gloo"
        dist.init_process_group(backend)
    return dist.get_world_size(), dist.get_rank()


def build_model(config: TrainConfig, num_classes: int, in_chans: int):
    from .models import build_vit

    return build_vit(config.model, image_size=config.image_size, patch_size=config.patch_size, in_chans=in_chans,
                     num_classes=num_classes, pool=config.pool, drop_path=config.drop_path,
                     activation=config.activation, n_mode=config.n_mode)


@torch.no_grad()
def evaluate(model, data, device, batch_size=500) -> tuple[float, float]:
    """Test loss and accuracy on an in-memory dataset or on a streamed test set."""
    model.eval()
    total_loss, correct, n = 0.0, 0, 0
    if isinstance(data, _Streamed):
        batches = data.test_loader()
    else:
        batches = ((data.normalise(data.test_x[i:i + batch_size]), data.test_y[i:i + batch_size])
                   for i in range(0, len(data.test_y), batch_size))
    for x, y in batches:
        x, y = x.to(device), y.to(device)
        logits = model(x).float()
        total_loss += F.cross_entropy(logits, y, reduction="sum").item()
        correct += (logits.argmax(-1) == y).sum().item()
        n += len(y)
    model.train()
    return total_loss / n, correct / n


class _Streamed:
    """A dataset read from disk through DataLoaders, sharded across ranks (paper preset)."""

    def __init__(self, config, world, rank):
        from .data.augment import batch_mix
        from .data.streaming import streaming_datasets

        self.train, self.test, self.num_classes, self.in_chans = streaming_datasets(
            config.dataset, config.data_root, config.image_size, config.augment)
        self.config, self.world, self.rank = config, world, rank
        self.mix = batch_mix(self.num_classes) if config.augment == "deit" else None

    def steps_per_epoch(self):
        return len(self.train) // self.config.batch_size

    def epoch(self, epoch):
        from torch.utils.data import DataLoader, DistributedSampler

        sampler = DistributedSampler(self.train, self.world, self.rank, shuffle=True, seed=self.config.seed,
                                     drop_last=True)
        sampler.set_epoch(epoch)
        loader = DataLoader(self.train, batch_size=self.config.batch_size // self.world, sampler=sampler,
                            num_workers=self.config.num_workers, drop_last=True,
                            pin_memory=torch.cuda.is_available())
        for x, y in loader:
            yield (*self.mix(x, y), y) if self.mix is not None else (x, y, y)

    def test_loader(self):
        from torch.utils.data import DataLoader

        return DataLoader(self.test, batch_size=256, num_workers=self.config.num_workers)


def _in_memory_epoch(data, config, augment, epoch, world, rank):
    """Batches of one epoch: a seeded permutation, each global batch split into equal shards."""
    shard = config.batch_size // world
    order = torch.randperm(len(data.train_y), generator=torch.Generator().manual_seed(config.seed * 100003 + epoch))
    for b in range(len(data.train_y) // config.batch_size):
        idx = order[b * config.batch_size:(b + 1) * config.batch_size][rank * shard:(rank + 1) * shard]
        xb, yb = data.train_x[idx], data.train_y[idx]
        yield (*augment(xb, yb), yb) if augment is not None else (data.normalise(xb), yb, yb)


def run(config: TrainConfig, progress: bool = True, stop_after_epoch: Optional[int] = None,
        data=None, resume: bool = True, return_model: bool = False) -> dict:
    """Train and evaluate; return the result record (see :mod:`polyattn.results`).

    ``stop_after_epoch`` raises :class:`Interrupted` after that epoch's checkpoint (tests use it
    to simulate an interruption); a later call resumes from the checkpoint.
    ``return_model=True`` adds the trained model under ``record["model"]`` (for figures that
    need weights, e.g. attention maps); such a record is not JSON-serialisable, do not store it.
    """
    from tqdm.auto import tqdm

    from .data import load_dataset
    from .data.augment import DeiTAugment

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
        if config.dataset in IN_MEMORY:
            data = load_dataset(config.dataset, config.train_subset, config.test_subset)
        else:
            data = _Streamed(config, world, rank)
    streamed = isinstance(data, _Streamed)
    in_chans = data.in_chans if streamed else data.train_x.shape[1]
    model = build_model(config, data.num_classes, in_chans).to(device)
    net = model
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel as DDP

        net = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "pos_embed" not in n and "cls_token" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "pos_embed" not in n and "cls_token" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=config.lr)
    steps_per_epoch = data.steps_per_epoch() if streamed else len(data.train_y) // config.batch_size
    if steps_per_epoch < 1:
        raise ValueError(f"batch_size {config.batch_size} exceeds the training set")
    total_steps = steps_per_epoch * config.epochs
    warmup = int(round(config.warmup_epochs * steps_per_epoch))
    augment = DeiTAugment(data.num_classes, data.mean, data.std) if config.augment == "deit" and not streamed else None

    metrics, probe_rows, start_epoch, wall_before = [], [], 0, 0.0
    status, diverged_step = "ok", None
    ckpt = checkpoint_path(config)
    if resume and ckpt.exists():
        state = torch.load(ckpt, map_location="cpu", weights_only=True)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["rng"])
        metrics, probe_rows = state["metrics"], state["probes"]
        start_epoch, wall_before = state["epoch"], state["wall_s"]
    prov = provenance(str(device))
    t0 = time.perf_counter()

    recorder = None
    if config.probe_every:
        from .probes import Recorder

        recorder = Recorder(model, metrics=config.probe_metrics, param_probes=config.param_probes)

    bar = tqdm(total=total_steps, initial=start_epoch * steps_per_epoch, disable=not progress or rank != 0,
               desc=f"{config.activation} seed {config.seed}", unit="step", leave=False)
    step = start_epoch * steps_per_epoch
    model.train()
    for epoch in range(start_epoch, config.epochs):
        loss_sum, correct, seen = 0.0, 0, 0
        batches = data.epoch(epoch) if streamed else _in_memory_epoch(data, config, augment, epoch, world, rank)
        for b, (x, target, yb) in enumerate(batches):
            x, target, yb = x.to(device), target.to(device), yb.to(device)
            for g in opt.param_groups:
                g["lr"] = _lr_at(step, total_steps, warmup, config.lr, config.min_lr)
            probing = recorder is not None and (step % config.probe_every == 0 or step == total_steps - 1)
            if probing:
                recorder.attach()
            logits = net(x).float()
            loss = F.cross_entropy(logits, target, label_smoothing=config.label_smoothing)
            if not torch.isfinite(loss):
                status, diverged_step = "diverged", step
                if probing:
                    recorder.detach()
                break
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if probing:
                probe_rows.extend(recorder.collect(step))
                recorder.detach()
            if config.clip_grad:
                torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip_grad)
            opt.step()
            loss_sum += loss.item() * len(yb)
            correct += (logits.argmax(-1) == yb).sum().item()
            seen += len(yb)
            step += 1
            bar.update(1)
            if b % 10 == 0:
                bar.set_postfix(loss=f"{loss.item():.3f}", epoch=epoch + 1)
        if status == "diverged":
            break
        if world > 1:
            import torch.distributed as dist

            t = torch.tensor([loss_sum, correct, seen], dtype=torch.float64, device=device)
            dist.all_reduce(t)
            loss_sum, correct, seen = t.tolist()
        test_loss, test_acc = evaluate(model, data, device)
        metrics.append({"epoch": epoch + 1, "step": step, "train_loss": loss_sum / seen, "train_acc": correct / seen,
                        "test_loss": test_loss, "test_acc": test_acc, "lr": opt.param_groups[0]["lr"],
                        "wall_s": wall_before + time.perf_counter() - t0})
        if rank == 0 and epoch + 1 < config.epochs:
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
    if rank == 0:
        ckpt.unlink(missing_ok=True)
    prov["wall_s"] = wall_before + time.perf_counter() - t0
    prov["world_size"] = world
    record = {"schema": 1, "experiment": config.experiment, "config": config_dict(config), "config_hash": config.hash,
              "seed": config.seed, "preset": config.preset, "status": status, "diverged_step": diverged_step,
              "metrics": metrics, "probes": probe_rows, "provenance": prov, "rank": rank,
              "n_params": sum(p.numel() for p in model.parameters())}
    if return_model:
        record["model"] = model
    return record
