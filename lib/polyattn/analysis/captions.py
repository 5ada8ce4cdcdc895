"""Compute budget, configuration overviews, the deviations table and grid captions."""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Optional

import numpy as np
import pandas as pd

from ..config import config_hash
from ..model_sizes import VIT_SIZES
from ._common import _check_records


def compute_budget(records: Iterable[dict]) -> dict:
    """Total wall-clock time of the runs (hours, from ``provenance.wall_s``) and where they ran."""
    records = _check_records(records)
    walls = [float((r.get("provenance") or {}).get("wall_s", np.nan)) for r in records]
    hw = [(r.get("provenance") or {}).get("hardware", {}) for r in records]
    pk = [(r.get("provenance") or {}).get("packages", {}) for r in records]
    commits = sorted({str((r.get("provenance") or {}).get("git_commit"))[:12] for r in records})

    def uniq(vals):
        return sorted({str(v) for v in vals if v is not None})

    return {"n_runs": len(records), "wall_hours": float(np.nansum(walls)) / 3600.0,
            "wall_s_max": float(np.nanmax(walls)) if walls and np.isfinite(walls).any() else np.nan,
            "cpu": uniq(h.get("cpu") for h in hw), "cores": uniq(h.get("cores") for h in hw),
            "torch_threads": uniq(h.get("torch_threads") for h in hw), "device": uniq(h.get("device") for h in hw),
            "gpu": uniq(h.get("gpu") for h in hw), "torch": uniq(p.get("torch") for p in pk),
            "git_commits": commits,
            "git_dirty": any(bool((r.get("provenance") or {}).get("git_dirty")) for r in records)}


def budget_text(budget: dict) -> str:
    """One line: runs, wall-clock hours, hardware."""
    if not budget["n_runs"]:
        return "no runs"
    where = ", ".join(budget["gpu"] or budget["cpu"]) or "unknown hardware"
    cores = "/".join(budget["cores"])
    threads = "/".join(budget["torch_threads"])
    return (f"{budget['n_runs']} runs, {budget['wall_hours']:.2f} hours of wall-clock time in total "
            f"(longest run {budget['wall_s_max'] / 60:.1f} min) on {where} ({cores} cores, "
            f"{threads} torch thread(s) per run, torch {'/'.join(budget['torch'])})")


def _values(configs, name) -> list:
    return list(dict.fromkeys(getattr(c, name, None) for c in configs))


def _join(vals) -> str:
    return ", ".join(str(v) for v in vals)


OVERVIEW_FIELDS = ("dataset", "train_subset", "test_subset", "image_size", "patch_size", "model", "epochs",
                   "batch_size", "lr", "weight_decay", "warmup_epochs", "label_smoothing", "augment", "drop_path",
                   "activation", "seed", "clip_grad", "pool")


def config_overview(configs) -> dict:
    """The distinct values (in grid order) of the fields that describe a grid of :class:`TrainConfig`."""
    configs = list(configs)
    if not configs:
        raise ValueError("config_overview: no configurations")
    out = {name: _values(configs, name) for name in OVERVIEW_FIELDS}
    out["seq_len"] = _values(configs, "seq_len")
    return out


def _model_text(m, n_params=None) -> str:
    s = VIT_SIZES.get(m)
    if not s:
        return str(m)
    extra = f", {n_params[m] / 1e3:.0f}k parameters" if n_params and m in n_params else ""
    return f"{m} (dim {s['dim']}, depth {s['depth']}, heads {s['heads']}{extra})"


def _tokens_text(configs) -> str:
    seen = dict.fromkeys((c.image_size, c.patch_size, getattr(c, "pool", "cls") == "cls") for c in configs)
    return "; ".join(f"{i} px, patch {p}: {(i // p) ** 2} patches{' + CLS' if cls else ''}" for i, p, cls in seen)


def _subset_text(ov) -> str:
    def one(v):
        return "all" if v is None else str(v)
    return f"train subset {_join(one(v) for v in ov['train_subset'])}, test subset {_join(one(v) for v in ov['test_subset'])}"


def _seeds_per_config(configs) -> str:
    """The distinct numbers of seeds a configuration (everything but the seed) is run with."""
    return _join(set(Counter(config_hash(c) for c in configs).values()))


def deviations_table(configs, paper_configs, n_params: Optional[dict] = None) -> pd.DataFrame:
    """What the paper trained against what this book trains, both from configuration grids.

    ``configs``: the book's :class:`TrainConfig` grid; ``paper_configs``: the paper's (from
    :func:`polyattn.experiments.vit.paper_configs`); ``n_params``: optional
    ``{model: parameter count}`` (from the records).
    """
    book, paper = config_overview(configs), config_overview(paper_configs)

    def recipe(ov):
        return _join("DeiT-style augmentation" if a == "deit" else "no augmentation" for a in ov["augment"])

    rows = [
        ("dataset", f"{_join(paper['dataset'])}", f"{_join(book['dataset'])} ({_subset_text(book)})"),
        ("images and tokens", _tokens_text(paper_configs), _tokens_text(configs)),
        ("models", "; ".join(_model_text(m) for m in paper["model"]),
         "; ".join(_model_text(m, n_params) for m in book["model"])),
        ("epochs", _join(paper["epochs"]), _join(book["epochs"])),
        ("batch size", _join(paper["batch_size"]), _join(book["batch_size"])),
        ("learning rate (AdamW)", _join(paper["lr"]), _join(book["lr"])),
        ("weight decay", _join(paper["weight_decay"]), _join(book["weight_decay"])),
        ("warm-up epochs", _join(paper["warmup_epochs"]), _join(book["warmup_epochs"])),
        ("recipe", recipe(paper), recipe(book)),
        ("gradient clipping (max norm; 0 = off)", _join(paper["clip_grad"]), _join(book["clip_grad"])),
        ("label smoothing", _join(paper["label_smoothing"]), _join(book["label_smoothing"])),
        ("drop path (stochastic depth)", _join(paper["drop_path"]), _join(book["drop_path"])),
        ("activations", _join(paper["activation"]), _join(book["activation"])),
        ("seeds per configuration", _seeds_per_config(paper_configs), _seeds_per_config(configs)),
    ]
    return pd.DataFrame(rows, columns=["", "paper", "this book"])


def grid_caption(configs, records=(), preset: Optional[str] = None) -> str:
    """One line that states what a grid trains: dataset and subsets, tokens, models (with their
    parameter counts when records are given), epochs, optimiser, seeds, preset and compute."""
    configs = list(configs)
    ov = config_overview(configs)
    records = list(records)
    n_params = {}
    for r in records:
        n_params.setdefault(r["config"].get("model"), r.get("n_params"))
    n_params = {k: v for k, v in n_params.items() if v}
    preset = preset or _join(dict.fromkeys(getattr(c, "preset", None) for c in configs))
    recipe = _join("DeiT-style augmentation" if a == "deit" else "no augmentation" for a in ov["augment"])
    text = (f"{_join(ov['dataset'])} ({_subset_text(ov)}), {_tokens_text(configs)} "
            f"(N = {_join(ov['seq_len'])} tokens); model {'; '.join(_model_text(m, n_params) for m in ov['model'])}; "
            f"{_join(ov['epochs'])} epoch(s), batch {_join(ov['batch_size'])}, AdamW lr {_join(ov['lr'])}, "
            f"weight decay {_join(ov['weight_decay'])}, {recipe}; {len(ov['seed'])} seed(s) per configuration; "
            f"preset {preset}")
    if records:
        text += f"; compute: {budget_text(compute_budget(records))}"
    return text
