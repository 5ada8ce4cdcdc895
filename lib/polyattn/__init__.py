"""polyattn: polynomial and other softmax alternatives for attention, with probes,
theory checks and reproducible experiments.

``polyattn.activations`` and ``polyattn.get_activation`` are loaded on first use, so that importing
a torch-free module of the package (the analysis, the claims, the display, :mod:`polyattn.specs`)
does not import torch."""
from __future__ import annotations

import importlib

__version__ = "0.1.0"
__all__ = ["activations", "get_activation", "__version__"]


def __getattr__(name):
    if name == "activations":
        return importlib.import_module(".activations", __name__)
    if name == "get_activation":
        return importlib.import_module(".activations", __name__).get
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
