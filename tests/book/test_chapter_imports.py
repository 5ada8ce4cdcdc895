"""What a chapter's cache key covers: the library files it imports, transitively."""
from pathlib import Path

from polyattn.book import keys


def _package(root: Path) -> Path:
    pkg = root / "polyattn"
    for rel, text in {
        "__init__.py": "from . import base\n",
        "base.py": "X = 1\n",
        "analysis/__init__.py": "",
        "analysis/stats.py": "from ..base import X\n",
        "analysis/tables.py": "def table():\n    from .stats import X  # imported inside a function\n    return X\n",
        "analysis/unused.py": "Y = 2\n",
        "claims/__init__.py": "",
        "claims/spec.py": "import importlib\n",
        "measures/__init__.py": "",
        "measures/theorems.py": "from ..analysis import tables\n",
        "book/__init__.py": "",
        "book/pages.py": "Z = 3\n",
    }.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    return pkg


def _names(files, pkg):
    return {f.relative_to(pkg).as_posix() for f in files}


def test_imports_are_followed_through_packages_relative_imports_and_functions(tmp_path):
    pkg = _package(tmp_path)
    files = keys.imported_files("from polyattn.analysis import tables\n", pkg)
    assert _names(files, pkg) == {"__init__.py", "base.py", "analysis/__init__.py", "analysis/tables.py",
                                  "analysis/stats.py"}
    assert "analysis/unused.py" not in _names(keys.imported_files("import polyattn.book.pages\n", pkg), pkg)


def test_modules_loaded_by_name_are_covered(tmp_path):
    pkg = _package(tmp_path)
    names = _names(keys.imported_files("from polyattn.claims import spec\n", pkg), pkg)
    assert {"measures/theorems.py", "analysis/tables.py"} <= names


def test_a_chapter_key_changes_with_an_imported_file_only(tmp_path):
    pkg = _package(tmp_path)
    chapter = tmp_path / "01_x.md"
    chapter.write_text("---\njupytext:\n  text_representation:\n    format_name: myst\nkernelspec:\n  name: python3\n"
                       "  display_name: Python 3\n---\n\n# X\n\n```{code-cell} ipython3\nfrom polyattn import base\n```\n")
    before = keys.chapter_library_hash(chapter, pkg)
    (pkg / "analysis" / "unused.py").write_text("Y = 3\n")
    assert keys.chapter_library_hash(chapter, pkg) == before
    (pkg / "base.py").write_text("X = 2\n")
    assert keys.chapter_library_hash(chapter, pkg) != before


def test_a_chapter_reaches_the_measure_modules_of_its_own_claims_and_of_those_it_names(tmp_path):
    pkg = _package(tmp_path)
    (pkg / "measures" / "costs.py").write_text("Q = 1\n")
    (pkg / "measures" / "norms.py").write_text("R = 1\n")
    (pkg / "pages").mkdir()
    (pkg / "pages" / "__init__.py").write_text("")
    (pkg / "pages" / "norms.py").write_text("from ..claims import spec\nCLAIMS = ('trained_norms',)\n")
    (pkg / "claims" / "register_measured.py").write_text(
        "from .spec import MeasuredClaim\n"
        "A = MeasuredClaim('thm41_1', 'statement', 'paper', '02_proofs', measure='measures.theorems:thm41_1')\n"
        "B = MeasuredClaim('cost', 'statement', 'paper', '08_costs', measure='measures.costs:cost')\n"
        "C = MeasuredClaim('trained_norms', 'statement', 'paper', '03_norms', measure='measures.norms:trained_norms')\n")
    code = "from polyattn.claims import spec\n"
    assert {"measures/theorems.py", "analysis/tables.py"} <= _names(keys.imported_files(code, pkg, "02_proofs"), pkg)
    own = _names(keys.imported_files(code, pkg, "08_costs"), pkg)
    assert "measures/costs.py" in own and "measures/theorems.py" not in own and "measures/norms.py" not in own
    named = _names(keys.imported_files(code + "deliver('thm41_1')\n", pkg, "08_costs"), pkg)
    assert {"measures/costs.py", "measures/theorems.py"} <= named
    # a page module naming a claim counts like the chapter's own code
    paged = _names(keys.imported_files("from polyattn.pages import norms\n", pkg, "05_lra"), pkg)
    assert "measures/norms.py" in paged and "measures/costs.py" not in paged


def test_an_analysis_module_of_one_chapter_enters_only_that_chapters_key():
    """Editing a module that one chapter imports re-executes that chapter alone: the real chapters'
    key files, computed from their code."""
    root = Path(__file__).resolve().parents[2]
    package = root / "lib" / "polyattn"
    files = {md.stem[:2]: _names(keys.imported_files(keys.chapter_code(md), package, md.stem), package)
             for md in sorted((root / "chapters").glob("[0-9][0-9]_*.md"))}
    readers = {module: sorted(ch for ch, names in files.items() if module in names)
               for module in ("analysis/length_sweep.py", "analysis/recall.py", "analysis/physics.py",
                              "analysis/intervention.py", "analysis/architectures.py", "measures/costs.py")}
    assert readers == {"analysis/length_sweep.py": ["07"], "analysis/recall.py": ["07"],
                       "analysis/physics.py": ["06"], "analysis/intervention.py": ["03"],
                       "analysis/architectures.py": ["10"], "measures/costs.py": ["08"]}
