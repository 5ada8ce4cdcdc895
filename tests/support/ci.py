"""Skipping where CI must fail: a test whose prerequisite is missing skips on a person's machine
but fails under CI (which sets ``CI=true``), where every prerequisite is installed and a silent
skip would hide a test that never ran."""
from __future__ import annotations

import importlib
import os

import pytest


def in_ci() -> bool:
    """Whether the tests run under CI (``CI`` set to anything but empty, ``0`` or ``false``)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def skip_unless_ci(reason: str, allow_module_level: bool = False):
    """Skip with ``reason`` locally; fail with it under CI."""
    if in_ci():
        pytest.fail(f"{reason} (under CI this fails instead of skipping)", pytrace=False)
    pytest.skip(reason, allow_module_level=allow_module_level)


def require_module(name: str, install: str = "pip install -r requirements.txt"):
    """The imported module ``name``; where it is missing, skip the calling test module locally and
    fail under CI, naming the install command."""
    try:
        return importlib.import_module(name)
    except ImportError:
        skip_unless_ci(f"{name} is not installed ({install})", allow_module_level=True)
