"""Chapter 05: the Long Range Arena, shortened for the book's budget: the paper's fixed scale
$x^3/14$ against softmax, which $N$ scales a padded row, and the tasks given more training steps."""
from __future__ import annotations

from ..constants import CHANCE_LATE, CUBE_14, CUBE_SQRT_N, LRA_CHANCE, SOFTMAX
from ..spec import RegisteredClaim, vs

LRA_FIXED_SCALE = RegisteredClaim(
    "lra_fixed_scale",
    "Long Range Arena: $x^3/14$, the fixed scale the paper ran, performs on par with softmax",
    "paper, LRA table", "05_lra",
    registered="2026-11-30",
    comparisons=tuple(
        vs("lra", {**CUBE_14, "dataset": task, "n_mode": "row"}, {**SOFTMAX, "dataset": task, "n_mode": "row"}, task,
           f"x³/14 − softmax, {task}", "equivalent", chance=LRA_CHANCE[task])
        for task in ("listops", "text", "retrieval", "image", "pathfinder")),
    margin=2.0, margin_commit="8d7d791", chance_registered_after=CHANCE_LATE,
    scale="shortened LRA tasks, book preset",
    headline="x³/14 matches on Long Range Arena", answer_row=15, verdict_row=9, topic="LRA",
)

N_UNDER_PADDING = RegisteredClaim(
    "n_under_padding",
    "Under padding, whether $N$ in $x^3/\\sqrt{N}$ is the valid keys or the padded length makes no difference",
    "review ICLR 2025", "05_lra",
    registered="2026-11-30",
    comparisons=tuple(
        vs("lra", {**CUBE_SQRT_N, "dataset": task, "n_mode": "padded"}, {**CUBE_SQRT_N, "dataset": task, "n_mode": "row"},
           task, f"x³/√N, N padded − N valid, {task}", "equivalent", chance=LRA_CHANCE[task])
        for task in ("listops", "text", "retrieval")),
    margin=2.0, margin_commit="8d7d791", chance_registered_after=CHANCE_LATE,
    scale="shortened LRA tasks with padding, book preset",
    verdict_row=10,
)

LRA_LONG = RegisteredClaim(
    "lra_long",
    "With more training steps, $x^3/14$ and $x^3/\\sqrt{N}$ match softmax on ListOps and Retrieval",
    "paper (LRA table)", "05_lra",
    registered="2026-12-02",
    comparisons=tuple(
        vs("lra_long", {**act, "dataset": task}, {**SOFTMAX, "dataset": task}, f"{name}_{task}",
           f"{label} − softmax, {task} (longer)", "equivalent", chance=LRA_CHANCE[task])
        for task in ("listops", "retrieval")
        for name, act, label in (("cube_14", CUBE_14, "x³/14"), ("cube_sqrt_n", CUBE_SQRT_N, "x³/√N"))
    ),
    margin=2.0,
    chance_registered_after="the tasks' chance levels were added to this claim on 3 December, after its runs",
    scale="shortened LRA, ListOps at 5 and Retrieval at 2 times the book's steps, book preset",
    topic="LRA",
)

#: In the order chapter 05 takes them up.
CLAIMS = (LRA_FIXED_SCALE, N_UNDER_PADDING, LRA_LONG)
