"""The README's layout names every folder and top-level module of the library, each folder on a line
of its own, and its Tests section describes the folders the suite has."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "lib" / "polyattn"


@pytest.fixture(scope="module")
def layout() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    return block.splitlines()


def test_every_folder_of_the_library_has_one_line_of_the_layout(layout):
    folders = sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*")
                     if p.is_dir() and p.name != "__pycache__")
    assert "pages" in folders and "measures" in folders
    for folder in folders:
        lines = [line for line in layout if line.strip().startswith(f"{folder}/ ")]
        assert len(lines) == 1, f"README.md's layout needs one line starting with '  {folder}/' (found {len(lines)})"


def test_every_top_level_module_is_named_in_the_layout(layout):
    named = {word for line in layout for word in line.split()}
    modules = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    missing = [m for m in modules if m not in named]
    assert not missing, f"README.md's layout does not name {missing}"


def test_the_tests_section_names_each_test_folder_and_no_one_module_per_module_rule():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Tests", 1)[1].split("\n## ", 1)[0]
    folders = sorted(p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and p.name != "__pycache__"
                     and not p.name.startswith("."))
    assert all(f"`tests/{f}`" in section for f in folders), f"the Tests section should name every folder of {folders}"
    assert "one test module per library module" not in text
