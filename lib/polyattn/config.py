"""The configuration of one training run: a frozen dataclass, hashed to name its record.

One config type serves every task.  The fields above ``task`` are the ones the image
experiments have always had (a record's hash covers all of them); the fields from ``task``
on were added later and enter the hash only where they differ from their default, so the
hash of every earlier record is unchanged (:data:`HASHED_ALWAYS`, :func:`hash_fields`).
Task-specific settings of the newer tasks live in ``options`` (a plain mapping that the
task validates).

Image-classification fields (``dataset`` .. ``label_smoothing``) are read by the images task;
other tasks ignore them or read ``dataset``, ``train_subset`` and ``test_subset`` in their
own sense.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from . import specs
from .task_declarations import seq_lens

AUGMENTS = ("none", "deit")
#: The ViT sizes of :mod:`polyattn.models.vit` (the only models that take ``qk_norm``).
_BOOK_VITS = ("micro", "mini", "tiny", "small", "base")
OPTIMIZERS = ("adamw", "lbfgs", "adamw_lbfgs")

#: Fields the hash always covers (the original set): their values are hashed even when equal
#: to today's default, so changing a default never renames a record.
HASHED_ALWAYS = (
    "experiment", "activation", "dataset", "train_subset", "test_subset", "image_size", "patch_size", "model",
    "pool", "n_mode", "drop_path", "epochs", "batch_size", "lr", "weight_decay", "warmup_epochs", "min_lr",
    "clip_grad", "augment", "label_smoothing", "probe_every", "probe_metrics", "param_probes",
)
#: Fields that never change the computation (recorded, not hashed; the seed names the file).
NOT_HASHED = ("seed", "device", "threads", "preset", "data_root", "num_workers")


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
    clip_grad: float = 0.0
    augment: str = "none"
    label_smoothing: float = 0.0
    probe_every: int = 0
    probe_metrics: tuple = ("attn_fro", "act_jac_fro", "grad_attn_fro")
    param_probes: int = 0
    # --- added later: hashed only where they differ from these defaults ---
    task: str = "images"
    optimizer: str = "adamw"
    lbfgs_max_iter: int = 20
    lbfgs_from_epoch: int = 0
    eval_every: int = 1
    options: Mapping[str, Any] = field(default_factory=dict)
    qk_init_scale: float = 1.0                 # see polyattn.qk_controls
    qk_weight_decay: Optional[float] = None    # None: the Q/K rows decay like every other weight
    qk_norm: bool = False                      # LayerNorm on each head's queries and keys (book ViTs)
    out_init_scale: float = 1.0                # see polyattn.qk_controls.scale_out_init
    # --- not hashed ---
    seed: int = 0
    preset: str = "book"
    device: str = "cpu"
    threads: Optional[int] = None
    data_root: Optional[str] = None
    num_workers: int = 4

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "activation", specs.canonical(self.activation))
        set_(self, "probe_metrics", tuple(self.probe_metrics))
        set_(self, "options", dict(self.options or {}))
        if self.augment not in AUGMENTS:
            raise ValueError(f"augment must be one of {AUGMENTS}, got {self.augment!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if self.task == "images" and self.image_size % self.patch_size:
            raise ValueError(f"image_size {self.image_size} is not divisible by patch_size {self.patch_size}")
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError("epochs and batch_size must be positive")
        if self.eval_every < 1:
            raise ValueError(f"eval_every must be a positive number of epochs, got {self.eval_every}")
        if self.warmup_epochs > self.epochs:
            raise ValueError(f"warmup_epochs ({self.warmup_epochs}) exceeds epochs ({self.epochs})")
        if self.clip_grad < 0:
            raise ValueError(f"clip_grad must be 0 (off) or a positive norm, got {self.clip_grad}")
        if self.optimizer == "adamw_lbfgs" and not 0 < self.lbfgs_from_epoch < self.epochs:
            raise ValueError(f"optimizer 'adamw_lbfgs' switches to L-BFGS at lbfgs_from_epoch, which must lie in "
                             f"1..{self.epochs - 1}; got {self.lbfgs_from_epoch}")

        if self.qk_norm and (self.task != "images" or self.model not in _BOOK_VITS):
            raise ValueError(f"qk_norm is implemented for the book's own ViTs ({', '.join(_BOOK_VITS)}) on the "
                             f"images task; got task {self.task!r}, model {self.model!r}")
        if not self.qk_init_scale > 0:
            raise ValueError(f"qk_init_scale must be positive, got {self.qk_init_scale}")
        if not self.out_init_scale > 0:
            raise ValueError(f"out_init_scale must be positive, got {self.out_init_scale}")
        if self.qk_weight_decay is not None and (self.qk_weight_decay < 0 or self.optimizer != "adamw"):
            raise ValueError(f"qk_weight_decay needs optimizer 'adamw' and a value >= 0, got {self.qk_weight_decay} "
                             f"with optimizer {self.optimizer!r}")

    __hash__ = None  # ``options`` is a mapping; configs are identified by :attr:`hash`

    @property
    def hash(self) -> str:
        return config_hash(self)

    @property
    def seq_lens(self) -> dict:
        """The model's sequence length(s) N, as the task declares them (``{"seq_len": ...}``)."""
        lens = seq_lens(self.task, self)
        if lens is None:
            # only the task can tell (it reads its data or measures its model)
            from .tasks import get_task

            lens = get_task(self.task).seq_lens(self)
        return lens

    @property
    def seq_len(self) -> int:
        return self.seq_lens["seq_len"]

    def replace(self, **kw) -> "TrainConfig":
        return dataclasses.replace(self, **kw)

    @classmethod
    def from_dict(cls, d: Mapping) -> "TrainConfig":
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"unknown config field(s) {unknown}; valid fields: {sorted(names)}")
        return cls(**{k: (tuple(v) if k == "probe_metrics" else v) for k, v in d.items()})


def hash_fields(config) -> dict:
    """The fields a config's hash covers: :data:`HASHED_ALWAYS`, plus later fields that differ
    from their default (so adding a field never changes an existing hash)."""
    d = dataclasses.asdict(config) if dataclasses.is_dataclass(config) else dict(config)
    defaults = {f.name: (f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default)
                for f in dataclasses.fields(TrainConfig)}
    out = {}
    for k, v in d.items():
        if k in NOT_HASHED:
            continue
        if k in HASHED_ALWAYS or k not in defaults or v != defaults[k]:
            out[k] = v
    return out


def config_hash(config) -> str:
    """The 12 hex digits that identify a config's result: sha256 over :func:`hash_fields` as
    sorted, compact JSON."""
    d = hash_fields(config)
    blob = json.dumps(d, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:12]
