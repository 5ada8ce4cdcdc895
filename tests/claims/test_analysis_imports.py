"""The analysis reads records and the claim register only.

No module of :mod:`polyattn.analysis` imports the grids (``polyattn.experiments``), the training
loop (``polyattn.train``), the models (``polyattn.models``) or the tasks (``polyattn.tasks``), at
the top of a module or inside a function.  What the analysis needs of them lives in small
modules that import none of them: run labels and lookups from a config in
:mod:`polyattn.labels`, metric declarations in :mod:`polyattn.metric_specs`, the learning-rate
schedule in :mod:`polyattn.schedule`, model size tables in :mod:`polyattn.model_sizes`.  There is
no exception: the tasks' metric declarations that the analysis names live in
:mod:`polyattn.metric_specs` too.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import polyattn

PACKAGE_DIR = Path(polyattn.__file__).parent
ANALYSIS_DIR = PACKAGE_DIR / "analysis"
FORBIDDEN = ("polyattn.experiments", "polyattn.train", "polyattn.models", "polyattn.tasks")


def _is_forbidden(module: str) -> bool:
    return any(module == f or module.startswith(f + ".") for f in FORBIDDEN)


def forbidden_imports(source: str, package: str) -> list[str]:
    """``line: module`` for every import of a forbidden module in ``source``, a module of
    ``package``: import statements anywhere (relative ones resolved against ``package``; ``from
    .. import train`` imports ``polyattn.train``) and ``importlib.import_module`` or
    ``__import__`` calls with a literal name."""
    parts = package.split(".")
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = parts[:len(parts) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names = [module] if _is_forbidden(module) else [f"{module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if called in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                names = [node.args[0].value]
        found += [f"{node.lineno}: {n}" for n in dict.fromkeys(names) if _is_forbidden(n)]
    return found


ANALYSIS_MODULES = sorted(ANALYSIS_DIR.glob("*.py"))


def test_the_analysis_package_has_modules_to_check():
    assert len(ANALYSIS_MODULES) > 10 and ANALYSIS_DIR / "__init__.py" in ANALYSIS_MODULES


@pytest.mark.parametrize("path", ANALYSIS_MODULES, ids=lambda p: p.name)
def test_no_analysis_module_imports_grids_training_models_or_tasks(path):
    assert forbidden_imports(path.read_text(), "polyattn.analysis") == [], (
        f"{path.name} imports grid, training, model or task code; read the record's config and use "
        "polyattn.labels, polyattn.metric_specs, polyattn.schedule or polyattn.model_sizes instead")


@pytest.mark.parametrize("source,hits", [
    ("from ..train import lr_at", ["1: polyattn.train"]),
    ("def f():\n    from ..experiments.lra import task_of\n", ["2: polyattn.experiments.lra"]),
    ("from .. import models", ["1: polyattn.models"]),
    ("import polyattn.tasks.base", ["1: polyattn.tasks.base"]),
    ("import importlib\nimportlib.import_module('polyattn.tasks')", ["2: polyattn.tasks"]),
    ("from ..training_notes import x\nfrom .. import activations\nfrom .stats import t_interval", []),
    ("from ..labels import lra_task\nfrom ..schedule import lr_at", []),
])
def test_the_check_finds_every_kind_of_forbidden_import(source, hits):
    assert forbidden_imports(source, "polyattn.analysis") == hits


def test_importing_the_analysis_loads_no_grid_training_model_or_task_module():
    code = ("import sys, polyattn.analysis\n"
            "from polyattn.analysis import architectures, causal, critique_runs, detection, lra, physics, recall\n"
            f"print(sorted(m for m in sys.modules if m.startswith({FORBIDDEN!r})))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE_DIR.parent),
                                                                     os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "[]"
