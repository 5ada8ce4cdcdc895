"""The library's layers are one-way, and no import circle remains in it.

(a) The layers that read records and state results (the analysis, the claim register, the
measured claims, the display names, the labels, the spec grammar, the record store, the
metric and task declarations, the book's answer and verdict pages) import, directly or through
anything they import, neither torch nor the tasks, the models, the data loaders, the training
loop or the grids.  Each module is imported in a fresh interpreter of its layer, one after
another; a module that brings in a forbidden one is named with the chain of imports that did.

(b) The graph of the imports of every module of :mod:`polyattn`, those inside functions counted
too, has no strongly connected component of more than one module.  ``from . import x`` is an
import of the submodule ``x``; a module that reads names from an ancestor package's ``__init__``
(``from .. import name`` with ``name`` no submodule) imports that package, while importing a
sibling through the ancestor (``from ..spec import X``) does not, since the ancestor is already
initialising.  Imports under ``if TYPE_CHECKING:`` are left out, and so are the few lazy imports
of :data:`LAZY_IMPORTS`, each with the reason its laziness is the point.

(c) An import of a module of the library inside a function is lazy for a reason: the module it
imports loads a heavy package (:data:`HEAVY`: torch and what is built on it, plotting, SciPy) that
the importing module does not load, so that importing the light module stays light.  Any other
import of the library belongs at module level, where the reader sees it and (b) sees it too.
"""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "lib"
PACKAGE = LIB / "polyattn"
FORBIDDEN = ("torch", "polyattn.tasks", "polyattn.models", "polyattn.data", "polyattn.train",
             "polyattn.experiments")


def module_name(path: Path, root: Path = LIB) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules_under(*names: str) -> list[str]:
    """Each named module, and every module of each named package (recursively), sorted."""
    out = []
    for name in names:
        path = LIB.joinpath(*name.split("."))
        if path.is_dir():
            out += [module_name(p) for p in sorted(path.rglob("*.py"))]
        else:
            out.append(name)
    return sorted(dict.fromkeys(out))


# --- (a) what each layer loads ------------------------------------------------------------------------

LAYERS = {
    "analysis": modules_under("polyattn.analysis"),
    "claims": modules_under("polyattn.claims"),
    "measures": modules_under("polyattn.measures"),
    "book pages of the register": ["polyattn.book.answer", "polyattn.book.verdicts"],
    "names, records and declarations": ["polyattn.specs", "polyattn.display", "polyattn.labels", "polyattn.results",
                                        "polyattn.metric_specs", "polyattn.task_declarations",
                                        "polyattn.grid_constants", "polyattn.model_sizes", "polyattn.config",
                                        "polyattn.plotting", "polyattn"],
}

#: Imports each module in turn and stops at the first that loads a forbidden module (until then,
#: every module loaded was checked when it was first imported, so each module's whole closure is
#: checked).  Which module's import statement first loaded each module is recorded, so that the
#: chain from the checked module to the forbidden one can be named.
_CHECK = textwrap.dedent("""
    import builtins, importlib, importlib.util, json, sys

    modules, forbidden = json.loads(sys.argv[1]), tuple(json.loads(sys.argv[2]))
    first = {}
    _import = builtins.__import__

    def _recording(name, globals=None, locals=None, fromlist=(), level=0):
        g = globals or {}
        try:
            base = importlib.util.resolve_name("." * level + name, g.get("__package__")) if level else name
        except (ImportError, ValueError):
            base = name
        parts = base.split(".")
        wanted = [".".join(parts[:i + 1]) for i in range(len(parts))]
        wanted += [base + "." + x for x in (fromlist or ()) if x != "*"]
        for w in wanted:
            if w not in sys.modules:
                first.setdefault(w, g.get("__name__", "?"))
        return _import(name, globals, locals, fromlist, level)

    builtins.__import__ = _recording

    def bad():
        return sorted(m for m in sys.modules if any(m == f or m.startswith(f + ".") for f in forbidden))

    def chain(target, start):
        out, seen = [target], {target}
        while out[-1] != start and out[-1] in first and first[out[-1]] not in seen:
            out.append(first[out[-1]])
            seen.add(out[-1])
        return " > ".join(reversed(out))

    for i, name in enumerate(modules):
        importlib.import_module(name)
        loaded = bad()
        if loaded:
            tops = [m for m in loaded if m in forbidden] or loaded
            print(json.dumps({"index": i, "module": name, "loaded": tops,
                              "chains": [chain(m, name) for m in tops[:4]]}))
            sys.exit(0)
    print(json.dumps({"index": len(modules)}))
""")


def forbidden_loads(modules: list[str], forbidden=FORBIDDEN, path: Path = LIB) -> dict[str, dict]:
    """``{module: {"loaded": [forbidden names], "chains": ["a > b > torch", ...]}}`` for every module of
    ``modules`` whose import, in a fresh interpreter after the modules before it, loads a module of
    ``forbidden`` (a name or a package); after an offender the next modules start a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(path), os.environ.get("PYTHONPATH")]))}
    found, start = {}, 0
    while start < len(modules):
        out = subprocess.run([sys.executable, "-c", _CHECK, json.dumps(modules[start:]), json.dumps(list(forbidden))],
                             capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode == 0, f"importing {modules[start:]} failed:\n{out.stderr[-3000:]}"
        result = json.loads(out.stdout.strip().splitlines()[-1])
        if "module" in result:
            found[result["module"]] = {"loaded": result["loaded"], "chains": result["chains"]}
        start += result["index"] + 1
    return found


def _report(found: dict) -> str:
    return "\n".join(f"  {m} loads {', '.join(v['loaded'])}, through " + "; ".join(v["chains"])
                     for m, v in found.items())


def test_every_layer_lists_modules():
    assert len(LAYERS["analysis"]) > 10 and len(LAYERS["claims"]) > 10 and "polyattn.claims.topics.lra" in LAYERS["claims"]


@pytest.mark.parametrize("layer", LAYERS)
def test_the_layer_loads_no_torch_task_model_data_training_or_grid_module(layer):
    found = forbidden_loads(LAYERS[layer])
    assert not found, (f"modules of the {layer} layer load torch, tasks, models, data, training or grids "
                       "(use polyattn.specs, polyattn.labels, polyattn.metric_specs, polyattn.task_declarations or "
                       "polyattn.grid_constants, or import inside the function that needs it):\n" + _report(found))


def test_the_layer_check_names_the_chain_that_loads_a_forbidden_module(tmp_path):
    pkg = tmp_path / "planted"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "clean.py").write_text("import json\n")
    (pkg / "top.py").write_text("from . import middle\n")
    (pkg / "middle.py").write_text("def f():\n    import xml.dom\nimport email.mime.text\n")
    (pkg / "after.py").write_text("from .clean import json\n")
    found = forbidden_loads(["planted.clean", "planted.top", "planted.after"], ("email.mime",), tmp_path)
    assert list(found) == ["planted.top"]
    assert found["planted.top"]["chains"][0] == "planted.top > planted.middle > email.mime"
    assert found["planted.top"]["loaded"] == ["email.mime"]


# --- (b) no import circle ---------------------------------------------------------------------------

#: Imports inside functions that the circle check (b) leaves out, as ``(importing module, imported
#: module): reason``.  Each loads torch and the data layer lazily on purpose: the torch-free record
#: layer calls up into the tasks only for what no declaration can tell, and only then pays for it.
LAZY_IMPORTS = {
    ("polyattn.config", "polyattn.tasks"):
        "the N of a config whose task cannot declare it without its data or model (LRA without max_len, timm)",
    ("polyattn.results", "polyattn.tasks"):
        "completing an old record whose task, N or metrics only the task can tell",
    ("polyattn.grids", "polyattn.experiments"):
        "the grids registry fills itself on first need: the studies that register into it load torch",
}

#: Packages whose import is heavy (seconds, or a GPU runtime) and optional for much of the library:
#: a module of the library that loads one of them may be imported inside a function of a module that
#: does not, so that the light module stays light (torch-free analysis, claims and book pages).
HEAVY = ("torch", "torchvision", "timm", "triton", "scipy", "matplotlib")



def _statements(nodes, functions: bool = True, in_function: bool = False):
    """``(statement, in_function)`` for every statement of ``nodes`` and the blocks inside them,
    function bodies included when ``functions``; never what runs under ``if TYPE_CHECKING:``."""
    for node in nodes:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _statements(node.orelse, functions, in_function)
            continue
        is_function = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        if is_function and not functions:
            continue
        yield node, in_function
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _statements(inner, functions, in_function or is_function)


def _module_level(nodes):
    """The statements that run when a module is imported: not function bodies, not ``if TYPE_CHECKING:``."""
    return (node for node, _ in _statements(nodes, functions=False))


def _targets(node, name: str, own_pkg: str, paths) -> list[str]:
    """The modules of the library an import statement imports (in the graph's sense, above)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base_parts = own_pkg.split(".")[:len(own_pkg.split(".")) - node.level + 1]
        base = ".".join(base_parts + ([node.module] if node.module else []))
    else:
        base = node.module
    subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in paths]
    return [base] + subs


def import_graph(root: Path = LIB, package: str = "polyattn", functions: bool = True,
                 lazy: dict = LAZY_IMPORTS) -> dict[str, dict[str, tuple[int, str]]]:
    """``{module: {imported module: (line, statement)}}`` over the modules of ``package`` under
    ``root``: the imports of modules of the package, those inside functions too unless not
    ``functions``, less the edges of ``lazy`` (see the module's docstring)."""
    paths = {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}
    graph = {}
    for name, path in paths.items():
        is_pkg = path.name == "__init__.py"
        own_pkg = name if is_pkg else name.rpartition(".")[0]
        ancestors = {".".join(own_pkg.split(".")[:i]) for i in range(1, own_pkg.count(".") + 2)}
        edges = {}

        def add(target, node):
            # importing a.b.c runs a and a.b first; an ancestor is already initialising
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                t = ".".join(parts[:i])
                if t in paths and t != name and t not in ancestors:
                    edges.setdefault(t, (node.lineno, ast.unparse(node)))

        for node, _ in _statements(ast.parse(path.read_text(), str(path)).body, functions):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(alias.name, node)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = own_pkg.split(".")[:len(own_pkg.split(".")) - node.level + 1]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module
                add(base, node)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    if sub in paths:
                        add(sub, node)
                    elif base in ancestors and base != name and base in paths:
                        # names read from an ancestor package's __init__: that package is imported
                        edges.setdefault(base, (node.lineno, ast.unparse(node)))
        graph[name] = {t: e for t, e in edges.items() if (name, t) not in lazy}
    return graph


def circles(graph: dict) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return out


def describe_circle(graph: dict, comp: list[str]) -> str:
    """One cycle through the component's first module, each step with the line that imports."""
    start, members = comp[0], set(comp)
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in graph[v]:
            if w == start:
                path, x = [v], v
                while prev[x] is not None:
                    x = prev[x]
                    path.append(x)
                path.reverse()
                steps = [f"{a} (line {graph[a][b][0]}: {graph[a][b][1]})"
                         for a, b in zip(path, path[1:] + [start])]
                return " -> ".join(steps + [start])
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return ", ".join(comp)


def test_the_graph_covers_the_library():
    graph = import_graph()
    assert len(graph) > 100
    assert "polyattn.activation_core" in graph["polyattn.activations_extra"]
    assert "polyattn.specs" in graph["polyattn.activations"]


def test_no_import_circle_in_the_library():
    graph = import_graph()
    found = circles(graph)
    assert not found, "import circles in lib/polyattn:\n" + "\n".join("  " + describe_circle(graph, c) for c in found)


def _plant(tmp_path, files: dict) -> dict:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return import_graph(tmp_path, "pkg")


def test_the_circle_check_finds_a_planted_circle_and_names_its_lines(tmp_path):
    graph = _plant(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from . import b\n",
                              "pkg/b.py": "import os\nfrom .c import x\n", "pkg/c.py": "from .a import y\n"})
    found = circles(graph)
    assert found == [["pkg.a", "pkg.b", "pkg.c"]]
    assert describe_circle(graph, found[0]) == ("pkg.a (line 1: from . import b) -> pkg.b (line 2: from .c import x) "
                                                "-> pkg.c (line 1: from .a import y) -> pkg.a")


def test_the_circle_check_counts_function_level_imports_and_ignores_type_checking_ones(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/a.py": "from . import b\n",
             "pkg/b.py": """\
                 from typing import TYPE_CHECKING
                 if TYPE_CHECKING:
                     from .a import T
                 def f():
                     if True:
                         from . import a
                 class C:
                     from . import c
                 """,
             "pkg/c.py": ""}
    graph = _plant(tmp_path, files)
    assert circles(graph) == [["pkg.a", "pkg.b"]] and set(graph["pkg.b"]) == {"pkg.a", "pkg.c"}
    assert describe_circle(graph, ["pkg.a", "pkg.b"]).endswith("pkg.b (line 6: from . import a) -> pkg.a")
    # counting module-level imports alone, or leaving the lazy edge out by name, there is none
    assert circles(import_graph(tmp_path, "pkg", functions=False)) == []
    assert circles(import_graph(tmp_path, "pkg", lazy={("pkg.b", "pkg.a"): "why"})) == []


def test_reading_names_from_an_ancestor_init_is_an_edge_and_a_sibling_through_it_is_not(tmp_path):
    files = {"pkg/__init__.py": "from .sub import register\n", "pkg/sub/__init__.py": "from .register import R\n",
             "pkg/sub/register.py": "from .topics import T\n", "pkg/sub/topics/__init__.py": "from . import lra\n",
             "pkg/sub/spec.py": "", "pkg/sub/topics/lra.py": "from ..spec import S\n"}
    graph = _plant(tmp_path, files)
    assert circles(graph) == []
    assert set(graph["pkg.sub.topics.lra"]) == {"pkg.sub.spec"}
    # the same topic reading a name of its ancestor's __init__ closes a circle through it
    graph = _plant(tmp_path, {**files, "pkg/sub/topics/lra.py": "from .. import R\n"})
    assert circles(graph) == [["pkg.sub", "pkg.sub.register", "pkg.sub.topics", "pkg.sub.topics.lra"]]


# --- (c) imports inside functions are lazy for a reason ----------------------------------------------

def _external(path: Path) -> set[str]:
    """The top-level names of the packages outside the library a module imports at module level."""
    out = set()
    for node in _module_level(ast.parse(path.read_text(), str(path)).body):
        if isinstance(node, ast.Import):
            out |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out


def needless_lazy_imports(root: Path = LIB, package: str = "polyattn", heavy=HEAVY,
                          skip: tuple = ()) -> list[str]:
    """``"module (line N: statement)"`` for each import of a module of ``package`` inside a function
    that brings in no package of ``heavy`` the importing module does not load at module level
    already (modules under a name of ``skip`` left out)."""
    paths = {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}
    graph = import_graph(root, package, functions=False, lazy={})
    loads: dict[str, set] = {}

    def heavy_of(name: str) -> set:
        # what importing ``name`` loads of ``heavy``: its own imports, its packages' and its
        # imports' in turn (a circle, if any, is (b)'s to report)
        if name not in loads:
            loads[name] = set()
            found = _external(paths[name]) & set(heavy)
            parents = [".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)]
            for dep in [*graph.get(name, {}), *parents]:
                if dep in paths:
                    found |= heavy_of(dep)
            loads[name] = found
        return loads[name]

    found = []
    for name, path in paths.items():
        if name.startswith(skip):
            continue
        own_pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node, in_function in _statements(ast.parse(path.read_text(), str(path)).body):
            if not (in_function and isinstance(node, (ast.Import, ast.ImportFrom))):
                continue
            targets = [t for t in _targets(node, name, own_pkg, paths) if t in paths]
            if targets and not set().union(*(heavy_of(t) for t in targets)) - heavy_of(name):
                found.append(f"{name} (line {node.lineno}: {ast.unparse(node)})")
    return found


def test_imports_of_the_library_inside_functions_are_lazy_only_where_they_load_a_heavy_package():
    found = needless_lazy_imports()
    assert not found, ("imports inside functions that load nothing heavy the module does not load already; move "
                       "them to the top of the module (where a circle results, the layers are wrong):\n  "
                       + "\n  ".join(found))


def test_the_lazy_import_check_tells_a_needless_lazy_import_from_one_that_keeps_torch_out(tmp_path):
    _plant(tmp_path, {"pkg/__init__.py": "", "pkg/light.py": "import json\n",
                      "pkg/net.py": "import torch\n", "pkg/deep.py": "from . import net\n",
                      "pkg/user.py": """\
                          def f():
                              from . import light
                          def g():
                              from .deep import x
                          """,
                      "pkg/heavy_user.py": "import torch\ndef f():\n    from . import net\n"})
    assert needless_lazy_imports(tmp_path, "pkg") == ["pkg.heavy_user (line 3: from . import net)",
                                                      "pkg.user (line 2: from . import light)"]
    assert needless_lazy_imports(tmp_path, "pkg", skip=("pkg.user",)) == ["pkg.heavy_user (line 3: from . import net)"]


def test_the_lazy_imports_left_out_of_the_circle_check_exist():
    graph = import_graph(lazy={})
    for (a, b), reason in LAZY_IMPORTS.items():
        assert b in graph[a] and reason, f"{a} no longer imports {b}: take the pair off LAZY_IMPORTS"
