"""Fixtures shared across the test folders.

The suite is arranged by layer: ``lib/`` (activations, attention, kernels, models, training,
storage), ``tasks/`` (data sets, tasks and their grids), ``claims/`` (analysis, the claim register
and its rule), ``book/`` (execution, site, README blocks, browser check). Helpers that several
modules use live in ``support/``; no test module imports another.
"""
from pathlib import Path

import pytest

import polyattn.experiments  # noqa: F401  (registers the book's grids in polyattn.grids, as the book's entry points do)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository's top folder (its README, chapters and committed records)."""
    return ROOT


@pytest.fixture
def planted_grid(monkeypatch):
    """Register a grid of planted configurations under a name, for this test only:
    ``planted_grid("unit_claims", configs)``; the grid honours a seed filter like the real ones."""
    from polyattn import experiments

    def register(name, configs):
        configs = list(configs)
        monkeypatch.setitem(experiments.GRIDS, name,
                            lambda preset, seeds: [c for c in configs if seeds is None or c.seed in seeds])
        return configs

    return register
