"""The presets and the seeding, once for the whole library.

``smoke``: seconds, for CI; never evidence.  ``book``: CPU-sized runs with several seeds;
committed records, the book's evidence.  ``paper``: the paper's configurations, for GPUs;
listed and runnable, not run here.

Seeding: :func:`seed_everything` for a training run (global generators, deterministic
kernels), :func:`generator` for every derived random stream (a generator keyed by the seed
and labels that say what the stream is for, so adding a stream never shifts another).

:func:`prologue` is what a chapter's first cell calls: the preset's banner, the prefix its
verdicts carry under ``smoke``, whether training runs at all, and the device override.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

PRESETS = ("smoke", "book", "paper")
#: Presets whose committed records are evidence (when computed from a clean tree).
EVIDENCE_PRESETS = ("book", "paper")
#: Seeds a grid uses when the caller gives none.
DEFAULT_SEEDS = {"smoke": (0,), "book": (0, 1, 2), "paper": (0,)}


def check(preset: str) -> str:
    """``preset`` if it is known; a one-line error listing the presets otherwise."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    return preset


def seeds_for(preset: str, seeds: Optional[Iterable[int]] = None, defaults: Optional[dict] = None) -> tuple:
    """``seeds`` when given, else the preset's defaults (``defaults`` overrides :data:`DEFAULT_SEEDS`)."""
    check(preset)
    if seeds is not None:
        return tuple(int(s) for s in seeds)
    return tuple((defaults or DEFAULT_SEEDS)[preset])


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and torch's global generators; make CPU kernels deterministic."""
    import random

    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True, warn_only=True)


def generator(seed: int, *labels):
    """A CPU ``torch.Generator`` keyed by ``seed`` and ``labels`` (strings and numbers): one
    independent stream per computation, the same on every run and machine."""
    import torch

    digest = hashlib.sha256(repr((int(seed),) + tuple(labels)).encode()).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") & ((1 << 63) - 1))


@dataclass(frozen=True)
class Prologue:
    """What a chapter needs to know about its preset (see :func:`prologue`)."""
    preset: str
    device: str = "cpu"
    trains: bool = True
    prefix: str = ""
    banner: str = ""
    not_run: str = ""

    def on_device(self, configs: Sequence):
        """The configs with the chapter's ``device`` parameter applied."""
        return [c.replace(device=self.device) for c in configs] if self.device != "cpu" else list(configs)

    def show(self) -> None:
        """Display the banner (if any) in the notebook."""
        if self.banner:
            from IPython.display import Markdown, display

            display(Markdown(self.banner))


def prologue(preset: str, device: str = "cpu", trains_under_paper: bool = False,
             paper_note: str = "the paper's configurations need ImageNet and GPUs") -> Prologue:
    """The chapter's prologue: under ``smoke`` a banner and a verdict prefix that say the numbers
    are not evidence; under ``paper`` (unless the chapter trains there) that nothing is trained."""
    check(preset)
    trains = preset != "paper" or trains_under_paper
    banner = ""
    if preset == "smoke":
        banner = "**Preset smoke: tiny runs, a pipeline check. The numbers on this page are not evidence.**"
    elif not trains:
        banner = f"**Preset paper: nothing is trained on this page ({paper_note}).**"
    return Prologue(preset, device, trains, "preset smoke, not evidence: " if preset == "smoke" else "", banner,
                    f"not run under preset paper ({paper_note})")
