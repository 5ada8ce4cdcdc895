"""Chapter 02's grid sizes per preset, the base seed, and one random stream per computation."""
from __future__ import annotations

from dataclasses import dataclass

from ..presets import check, generator  # noqa: F401  (one seeding scheme for the library)


@dataclass(frozen=True)
class TheoryPreset:
    """Grid sizes and repetition counts for chapter 02; ``seed`` is the default seed."""

    name: str
    seed: int
    # Thm 4.1
    softmax_ns: tuple            # N grid of the Jacobian survey
    softmax_reps: int            # random / peaked matrices per N
    ascent_ns: tuple             # N for the adversarial searches (a subset of softmax_ns)
    ascent_steps: int
    ascent_restarts: int
    # Thm 4.2 / Cor 4.3
    ps: tuple                    # powers p
    thm42_ns: tuple              # N grid at fixed D
    thm42_d_at_n: int            # that fixed D
    thm42_ds: tuple              # D grid at fixed N
    thm42_n_at_d: int            # that fixed N
    thm42_small_d: tuple         # small D where lower-order terms matter
    thm42_n_large: int           # the N at which the small-D violation is measured
    thm42_reps: int
    sigma_grid: tuple            # score standard deviations ("init-like" scales)
    sigma_n: int                 # N for the score-scale comparison
    sigma_reps: int
    # Thm 4.4 / Cor 4.5
    thm44_ns: tuple
    thm44_dims: tuple            # (D, d) pairs
    thm44_reps: int
    # assumptions
    corr_rhos: tuple
    corr_sizes: tuple            # (N, D, d)
    corr_reps: int
    vit_batch: int


PRESETS = {
    "smoke": TheoryPreset(
        name="smoke", seed=0,
        softmax_ns=(2, 8, 32), softmax_reps=2, ascent_ns=(2, 8, 32), ascent_steps=60, ascent_restarts=4,
        ps=(1, 2, 3), thm42_ns=(8, 16, 32), thm42_d_at_n=16, thm42_ds=(4, 8, 16), thm42_n_at_d=16,
        thm42_small_d=(1, 2, 4), thm42_n_large=32, thm42_reps=20,
        sigma_grid=(0.1, 1.0, 2.0), sigma_n=32, sigma_reps=4,
        thm44_ns=(8, 16, 32), thm44_dims=((16, 8),), thm44_reps=10,
        corr_rhos=(0.0, 1.0), corr_sizes=(32, 64, 16), corr_reps=4, vit_batch=4,
    ),
    "book": TheoryPreset(
        name="book", seed=0,
        softmax_ns=(2, 4, 8, 16, 32, 64, 128, 256, 512), softmax_reps=8,
        ascent_ns=(2, 4, 8, 16, 32, 64, 128, 256), ascent_steps=300, ascent_restarts=8,
        ps=(1, 2, 3), thm42_ns=(8, 16, 32, 64, 128, 256), thm42_d_at_n=64,
        thm42_ds=(4, 8, 16, 32, 64, 128, 256), thm42_n_at_d=64,
        thm42_small_d=(1, 2, 4, 8, 16, 64), thm42_n_large=128, thm42_reps=400,
        sigma_grid=(0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 1.5, 2.0, 3.0), sigma_n=196, sigma_reps=16,
        thm44_ns=(8, 16, 32, 64, 128, 256), thm44_dims=((64, 16), (64, 64)), thm44_reps=100,
        corr_rhos=(0.0, 0.25, 0.5, 0.75, 0.9, 1.0), corr_sizes=(196, 768, 64), corr_reps=24,
        vit_batch=32,
    ),
    "paper": TheoryPreset(
        name="paper", seed=0,
        softmax_ns=(2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), softmax_reps=32,
        ascent_ns=(2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), ascent_steps=1000, ascent_restarts=16,
        ps=(1, 2, 3, 4), thm42_ns=(8, 16, 32, 64, 128, 256, 512), thm42_d_at_n=64,
        thm42_ds=(4, 8, 16, 32, 64, 128, 256, 512), thm42_n_at_d=64,
        thm42_small_d=(1, 2, 4, 8, 16, 64), thm42_n_large=256, thm42_reps=1000,
        sigma_grid=(0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 1.5, 2.0, 3.0), sigma_n=196, sigma_reps=64,
        thm44_ns=(8, 16, 32, 64, 128, 256, 512), thm44_dims=((64, 16), (64, 64)), thm44_reps=400,
        corr_rhos=(0.0, 0.25, 0.5, 0.75, 0.9, 1.0), corr_sizes=(196, 768, 64), corr_reps=100,
        vit_batch=128,
    ),
}


def preset(name: str) -> TheoryPreset:
    """The grid sizes of a preset (smoke, book or paper)."""
    return PRESETS[check(name)]


def resolve_seed(seeds, theory_preset: TheoryPreset) -> int:
    """The base seed: the preset's default for ``None``, an int as given, a sequence's first entry."""
    if seeds is None:
        return theory_preset.seed
    if isinstance(seeds, (list, tuple)):
        if not seeds:
            raise ValueError("seeds is an empty sequence; pass None (preset default), an int or a non-empty list")
        seeds = seeds[0]
    try:
        return int(seeds)
    except (TypeError, ValueError):
        raise ValueError(f"seeds must be None, an int or a list of ints, got {seeds!r}") from None
