"""Replacing a library function in a test wherever the library holds it: a module that imports a
name at module level binds the object itself, so patching the defining module alone would not reach it."""
from __future__ import annotations

import sys


def patch_everywhere(monkeypatch, module, name: str, value) -> None:
    """Set ``module.name`` to ``value``, and every binding of the same object in a loaded module of the
    library (under any name) too, unless it is a number or a string; undone with ``monkeypatch``."""
    original = getattr(module, name)
    monkeypatch.setattr(module, name, value)
    if isinstance(original, (int, float, str, bytes, type(None))):  # the same object elsewhere by chance
        return
    for loaded in list(sys.modules.values()):
        if loaded is module or not getattr(loaded, "__name__", "").startswith("polyattn"):
            continue
        for attr, held in list(vars(loaded).items()):
            if held is original:
                monkeypatch.setattr(loaded, attr, value)
