"""The Long Range Arena experiments of chapter 05 as config grids, per preset.

Six attention activations on the five LRA classification tasks (:mod:`polyattn.data.lra`),
with the Nyströmformer harness's model (2 layers, width 64, 2 heads, mean pooling):

* softmax;
* x^3/sqrt(N) with N each query row's number of valid (non-padding) keys (``n_mode="row"``);
* x^3/sqrt(N) with N the padded length (``n_mode="padded"``; batches are then never trimmed);
* x^3/14, the fixed constant the paper ran (``poly:p=3,c=1/14``);
* x/sqrt(N), the linear-time member of the family (``poly:p=1``);
* sigmoid with bias -log N.

On Image and Pathfinder every token is real, so the two readings of N coincide there and the
padded runs repeat the row runs (a check, not a comparison); the readings differ on ListOps,
Text and Retrieval, whose sequences vary in length.

``smoke``: seconds per run on tiny generated data, for CI; never evidence.

``book``: 3 seeds; Image and Text sized so that their runs take about 1-2 CPU-minutes each,
ListOps given the 800 steps it needs to be learned (about 5 CPU-minutes a run), Retrieval the
2,400 steps it needs (about 10 CPU-minutes a run).
The tasks are SHORTENED, and the chapter says so; per task (see :data:`BOOK_TASKS`):

* ListOps: expressions of 101-255 tokens (published 501-1,999), depth at most 10 as published;
* Text: Bible passages of 128-256 bytes (published: IMDb reviews cut at 1,000 or 4,000 bytes);
* Retrieval: pairs of Bible passages of 96-192 bytes each (published: AAN papers, 4,000 bytes each);
* Image: Fashion-MNIST averaged down to 14 x 14 = 196 tokens (published: CIFAR-10 grey, 1,024);
* Pathfinder: 18 x 18 images (324 tokens), contours of 4 paddles, seeds 4 px apart
  (published: 32 x 32, contour length 14);

and train for 240-405 steps of 32 examples (a few thousand examples, 2-3 epochs; ListOps: one
epoch of 25,600 examples, 800 steps; Retrieval: three epochs of 25,600 pairs, 2,400 steps) at a
learning rate ten times the published one (1e-3, cosine decay after half an epoch of warm-up, a
quarter for ListOps and Retrieval, weight decay 0.01,
gradients clipped at 1); validation 500 and test 1,000 examples per task, the same
for every run.  Measured CPU seconds per training step on one thread (the range over the
variants, x/sqrt(N) cheapest, sigmoid dearest): Image 0.16-0.22, ListOps 0.20-0.37, Text
0.21-0.32, Retrieval 0.27-0.43, Pathfinder about 0.36 (estimated from its length); so a run
costs about 85-120 CPU seconds (ListOps about 300, Retrieval about 600).

Single softmax trials (seed 0, on a heavily shared machine) are in :data:`BOOK_TRIALS`.  At
this budget softmax learns Image (38% test accuracy against 10% chance, in a trial of 600 steps
before the grid was cut to 405) and Text (39% against 17%, at the book setting), but not
ListOps at 600 steps of 6,400 examples (18.4% against 15.8%), Retrieval at 240 steps of 2,560
pairs (50.4% against 50%; that setting's 18 records, six variants by three seeds, left
``data/results`` when the book moved to 25,600 pairs and stay in the history, listed by
``git log --diff-filter=D --stat -- data/results/lra``) or Pathfinder (50.0% against 50%, one
class predicted, at the book setting).  A longer ListOps trial (25,600 examples, 3 epochs)
reached 32.8% after its first 800 steps and 31.5% at the end, so the book's ListOps is that first epoch.  Retrieval on 25,600
pairs reached 52.7%, 55.5% and 56.5% test accuracy after epochs 1-3 (validation 54.4% at the
end), so the book's Retrieval runs three epochs.  Pathfinder is kept at the best affordable
setting and is uninformative at this budget: the chapter tests whether softmax learned each
task before reading any comparison on it, and a budget check (:func:`pathfinder_budget`, the
``lra_pathfinder_budget`` grid) asks why: the transformer on 5.3 times the images, with and
without distractors, beside an attention-free CNN on the same images.

``paper``: the Nyströmformer LRA harness's published per-task configuration (``lra_config.py``
of mlpen/Nystromformer): batch 32 (ListOps, Text, Retrieval) or 256 (Image, Pathfinder),
learning rate 1e-4, weight decay 0, dropout 0.1, and 5,000 / 20,000 / 30,000 / 35,000 / 62,400
steps with 1,000 / 8,000 / 800 / 175 / 312 warm-up steps, full-length data (ListOps 2,000
tokens, Text and Retrieval 4,000 bytes, Image 1,024 pixels, Pathfinder-32).  Steps are given
here as whole epochs of the published training sets (rounded up), warm-up as fractions of an
epoch, and the harness's linear decay is this library's cosine decay.  Text, Retrieval and
Image use the supplied published data (``text_imdb``, ``retrieval_aan``, ``image_cifar10``).
Listed for GPUs, not run here.
"""
from __future__ import annotations

import math

from ..config import TrainConfig
from ..grid_constants import LRA_BOOK_TRIALS
from ..labels import LRA_TASKS, LRA_VARIANTS, PATHFINDER_BUDGET
from ..labels import lra_label as variant_label  # noqa: F401  (re-exported: the grid's labels)
from ..labels import lra_task as task_of
from ..labels import pathfinder_budget_label as budget_label  # noqa: F401  (re-exported)
from ..presets import seeds_for

#: Tasks whose sequences vary in length (where the readings of N differ).
VARIABLE_LENGTH_TASKS = ("listops", "text", "retrieval")

_COMMON = dict(task="lra", model="nystromformer", weight_decay=0.01, clip_grad=1.0, min_lr=1e-5, threads=1)

#: Per task and preset: the TrainConfig fields and the task's options.
BOOK_TASKS = {
    "listops": dict(dataset="listops", train_subset=25600, test_subset=1000, epochs=1, batch_size=32, lr=1e-3,
                    warmup_epochs=0.25,
                    options=dict(val=500, data=dict(min_length=100, max_length=256))),
    "text": dict(dataset="text", train_subset=3520, test_subset=1000, epochs=3, batch_size=32, lr=1e-3,
                 warmup_epochs=0.5,
                 options=dict(val=500, data=dict(min_bytes=128, max_bytes=256))),
    "retrieval": dict(dataset="retrieval", train_subset=25600, test_subset=1000, epochs=3, batch_size=32, lr=1e-3,
                      warmup_epochs=0.25,
                      options=dict(val=500, data=dict(min_bytes=96, max_bytes=192))),
    "image": dict(dataset="image", train_subset=4320, test_subset=1000, epochs=3, batch_size=32, lr=1e-3,
                  warmup_epochs=0.5,
                  options=dict(val=500, data=dict(side=14))),
    "pathfinder": dict(dataset="pathfinder", train_subset=4800, test_subset=1000, epochs=2, batch_size=32, lr=1e-3,
                       warmup_epochs=0.5,
                       options=dict(val=500, data=dict(size=18, contour_length=4, seed_distance=4.0))),
}

SMOKE_TASKS = {
    "listops": dict(dataset="listops", options=dict(val=16, data=dict(min_length=10, max_length=40, max_depth=4))),
    "text": dict(dataset="text", options=dict(val=16, data=dict(min_bytes=24, max_bytes=48))),
    "retrieval": dict(dataset="retrieval", options=dict(val=16, data=dict(min_bytes=24, max_bytes=48))),
    "image": dict(dataset="image", options=dict(val=16, data=dict(side=7))),
    "pathfinder": dict(dataset="pathfinder", options=dict(val=16, data=dict(size=18, contour_length=4,
                                                                                seed_distance=4.0))),
}
_SMOKE_SCALE = dict(train_subset=64, test_subset=32, epochs=2, batch_size=16, lr=1e-3, warmup_epochs=0.5,
                    model="tiny")

#: The published harness, per task: (data set, train / dev / test sizes, batch, steps, warm-up
#: steps, max length).  Sizes None: the task's published default.
PAPER_HARNESS = {
    "listops": ("listops", (96_000, 2_000, 2_000), 32, 5_000, 1_000, 2_000),
    "text": ("text_imdb", (25_000, 25_000, 25_000), 32, 20_000, 8_000, 4_000),
    "retrieval": ("retrieval_aan", (147_086, 18_090, 17_437), 32, 30_000, 800, 4_000),
    "image": ("image_cifar10", (45_000, 5_000, 10_000), 256, 35_000, 175, 1_024),
    "pathfinder": ("pathfinder", (160_000, 20_000, 20_000), 256, 62_400, 312, 1_024),
}

#: What single softmax trials reached (seed 0; documentation only, and each task's chance level):
#: :data:`polyattn.grid_constants.LRA_BOOK_TRIALS`.
BOOK_TRIALS = LRA_BOOK_TRIALS


#: What each task is in the published LRA, for the chapter's task table.
PUBLISHED = {
    "listops": "ListOps, 501-1,999 tokens, 96,000 / 2,000 / 2,000",
    "text": "IMDb bytes, cut at 4,000 (harness), 25,000 / 25,000 / 25,000",
    "retrieval": "AAN paper pairs, 4,000 bytes each, 147,086 / 18,090 / 17,437",
    "image": "CIFAR-10 grey, 32 x 32 = 1,024 pixels, 45,000 / 5,000 / 10,000",
    "pathfinder": "Pathfinder-32, contour length 14, 1,024 pixels, 160,000 / 20,000 / 20,000",
}


def deviation(config) -> str:
    """How a config's task departs from the published LRA setting, in words (from its options)."""
    task = task_of(config)
    data = dict(config.options.get("data", {}))
    steps = f"{config.train_subset:,} training examples x {config.epochs} epochs" if config.train_subset else ""
    if config.dataset in ("text_imdb", "retrieval_aan", "image_cifar10"):
        what = "the published data"
    elif task == "listops":
        lo, hi = data.get("min_length", 500) + 1, data.get("max_length", 2000) - 1
        what = f"expressions of {lo}-{hi} tokens (published 501-1,999)"
    elif task == "text":
        what = (f"King James Bible passages of {data.get('min_bytes', 1024)}-{data.get('max_bytes', 4096)} bytes, "
                "6 divisions (published: IMDb reviews, 2 classes)")
    elif task == "retrieval":
        what = (f"pairs of Bible passages of {data.get('min_bytes', 1024)}-{data.get('max_bytes', 4096)} bytes, "
                "same book? (published: AAN citation pairs)")
    elif task == "image":
        side = data.get("side", 28)
        what = f"Fashion-MNIST at {side} x {side} = {side * side} pixels (published: CIFAR-10 grey, 1,024)"
    elif task == "pathfinder":
        size = data.get("size", 32)
        what = (f"{size} x {size} = {size * size} pixels, contour length {data.get('contour_length', 14)} "
                "(published: 32 x 32, length 14)")
    else:
        what = config.dataset
    return f"{what}; {steps}" if steps else what


def _paper_task(name: str) -> dict:
    dataset, sizes, batch, steps, warmup, max_len = PAPER_HARNESS[name]
    per_epoch = sizes[0] // batch
    return dict(dataset=dataset, train_subset=sizes[0], test_subset=sizes[2], batch_size=batch, lr=1e-4,
                epochs=math.ceil(steps / per_epoch), warmup_epochs=round(warmup / per_epoch, 3), weight_decay=0.0,
                clip_grad=0.0, options=dict(val=sizes[1], max_len=max_len))


def task_settings(name: str, preset: str = "book") -> dict:
    """The TrainConfig fields of task ``name`` under ``preset``."""
    if preset == "smoke":
        return {**_COMMON, **_SMOKE_SCALE, **SMOKE_TASKS[name]}
    if preset == "book":
        return {**_COMMON, **BOOK_TASKS[name]}
    if preset == "paper":
        return {**_COMMON, **_paper_task(name)}
    raise ValueError(f"unknown preset {preset!r}")


def lra(preset: str = "book", seeds=None, tasks=LRA_TASKS) -> list[TrainConfig]:
    """One sequence classifier per task, variant and seed (seed-major, then task, so a partial
    run set has every task and variant of the first seeds)."""
    out = []
    for s in seeds_for(preset, seeds):
        for task in tasks:
            settings = task_settings(task, preset)
            for _, act, mode in LRA_VARIANTS:
                out.append(TrainConfig(experiment="lra", preset=preset, activation=act, n_mode=mode, seed=s,
                                       device="cuda" if preset == "paper" else "cpu", **settings))
    return out


#: The negative results made sure: ListOps at five times its book steps, Retrieval at twice,
#: for softmax, x^3/sqrt(N) and x^3/14.
LONG_TASKS = {"listops": 5, "retrieval": 2}
LONG_VARIANTS = ("softmax", "poly:p=3", "poly:p=3,c=1/14")


def lra_long(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """:func:`lra` for :data:`LONG_TASKS` and :data:`LONG_VARIANTS` with the epochs multiplied
    (book; smoke unchanged), as its own experiment."""
    out = []
    for c in lra(preset, seeds, tasks=tuple(LONG_TASKS)):
        if c.activation in LONG_VARIANTS and c.n_mode == "row":
            factor = LONG_TASKS[c.dataset] if preset == "book" else 1
            out.append(c.replace(experiment="lra_long", epochs=c.epochs * factor))
    return out


#: The budget check (:data:`~polyattn.labels.PATHFINDER_BUDGET`) trains on this many images, for this many
#: epochs (book preset).
PATHFINDER_BUDGET_SCALE = dict(train_subset=25600, epochs=2)


def pathfinder_budget(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """The configs of :data:`~polyattn.labels.PATHFINDER_BUDGET` per seed: the grid's Pathfinder settings,
    with :data:`PATHFINDER_BUDGET_SCALE` at the book preset (the smoke preset keeps its tiny scale)."""
    settings = task_settings("pathfinder", preset)
    if preset == "book":
        settings.update(PATHFINDER_BUDGET_SCALE)
    out = []
    for s in seeds_for(preset, seeds):
        for _, model, extra in PATHFINDER_BUDGET:
            opts = dict(settings["options"])
            opts["data"] = {**opts.get("data", {}), **extra}
            cfg = {**settings, "options": opts}
            if model == "pixel_cnn":
                cfg["model"] = model
            out.append(TrainConfig(experiment="lra_pathfinder_budget", preset=preset, activation="softmax", seed=s,
                                   device="cuda" if preset == "paper" else "cpu", **cfg))
    return out


def paper_table() -> list[dict]:
    """One row per task of the published harness: what would run, for how long."""
    rows = []
    for name in LRA_TASKS:
        dataset, sizes, batch, steps, warmup, max_len = PAPER_HARNESS[name]
        rows.append({"task": name, "data": dataset, "train": sizes[0], "val": sizes[1], "test": sizes[2],
                     "max length": max_len, "batch": batch, "steps": steps, "warm-up steps": warmup, "lr": 1e-4})
    return rows
