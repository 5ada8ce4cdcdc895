"""What every step of the book shares: where it lives, the presets, the chapters' parameters
and the error a failed step raises."""
from __future__ import annotations

from pathlib import Path

from ..presets import PRESETS  # noqa: F401  (the one list of presets)

REPO_ROOT = Path(__file__).resolve().parents[3]
#: The polyattn package: the code the chapters import, hashed into every content key.
PACKAGE_DIR = Path(__file__).resolve().parents[1]
PARAMETER_NAMES = ("preset", "recompute", "seeds", "device")
#: The verdicts ``python -m polyattn verdicts`` computes from the records, under the repository's top.
VERDICTS_FILE = Path("data") / "verdicts.json"


class BookError(RuntimeError):
    """A chapter could not be executed or the site could not be built; the message says which."""


def register_grids() -> None:
    """Register the book's grids in :mod:`polyattn.grids` (the claim register and the measured
    claims read runs by grid).  The studies' grid modules load torch, so the book's modules that
    read the register call this when they run, and stay torch-free when imported."""
    from .. import experiments  # noqa: F401  (importing it registers every grid)
