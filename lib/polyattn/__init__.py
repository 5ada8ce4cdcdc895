"""polyattn: polynomial and other softmax alternatives for attention, with probes,
theory checks and reproducible experiments."""
from . import activations
from .activations import get as get_activation

__version__ = "0.1.0"
__all__ = ["activations", "get_activation", "__version__"]
