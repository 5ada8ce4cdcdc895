"""The registry of experiment grids: a grid's name -> ``grid(preset, seeds)``, the list of configs
it plans.  Each study's grids register here when :mod:`polyattn.experiments` is imported (as timm's
model files register models), so that what reads records by grid (the claim register, the
measured claims, the status page) needs no import of the studies, which build models and data.

A name not yet registered makes :func:`grid` import :mod:`polyattn.experiments` once, so a reader
who calls the claim register directly (a script, a notebook) needs no import of their own; the
import is lazy because the studies load torch, which a reader of stored records never needs."""
from __future__ import annotations

from typing import Callable, Iterable, Optional

#: name -> grid(preset, seeds) -> list of configs; filled by :mod:`polyattn.experiments`.
GRIDS: dict[str, Callable] = {}


def register(name: str, grid: Callable) -> Callable:
    """Register ``grid`` under ``name`` (a name registered twice for another grid is refused)."""
    if name in GRIDS and GRIDS[name] is not grid:
        raise ValueError(f"grid {name!r} is registered already ({GRIDS[name].__qualname__}); choose another name")
    GRIDS[name] = grid
    return grid


def _register_the_books_grids() -> None:
    from . import experiments  # noqa: F401  (importing it registers every grid of the book)


def grid(name: str) -> Callable:
    """The registered grid ``name`` (registering the book's grids on first need); a one-line error
    naming the registered grids otherwise."""
    if name not in GRIDS:
        _register_the_books_grids()
    if name not in GRIDS:
        known = ", ".join(sorted(GRIDS)) or "none (import polyattn.experiments, which registers the book's grids)"
        raise ValueError(f"unknown grid {name!r}; grids: {known}")
    return GRIDS[name]


def configs(name: str, preset: str, seeds: Optional[Iterable[int]] = None) -> list:
    """The configs grid ``name`` plans at ``preset`` (all its seeds when ``seeds`` is None)."""
    return list(grid(name)(preset, seeds))
