"""The chapters are essays: mostly prose, no helper defined in a chapter, little visible code."""
import ast
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
HIDDEN = {"hide-input", "remove-input", "remove-cell", "hide-cell"}
#: At most this share of a chapter's code inputs is shown to the reader.
VISIBLE_SHARE = 0.25
#: At most this share of a chapter's non-blank source lines is code.
CODE_SHARE = 0.40


def _code_cells(md: Path):
    return [c for c in jupytext.read(md).cells if c.cell_type == "code"]


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.stem)
def test_a_chapter_defines_no_function_or_class(md):
    defined = [f"cell {i}: {node.name}" for i, c in enumerate(_code_cells(md))
               for node in ast.walk(ast.parse(c.source))
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    assert not defined, f"{md.name} defines {defined}: move it into its page module in lib/polyattn/pages"


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.stem)
def test_a_chapter_shows_at_most_a_quarter_of_its_code_and_is_mostly_prose(md):
    cells = _code_cells(md)
    visible = [c for c in cells if not HIDDEN & set(c.metadata.get("tags", []))]
    assert len(visible) <= VISIBLE_SHARE * len(cells), \
        f"{md.name}: {len(visible)} of {len(cells)} code inputs visible; tag the rest hide-input or remove-input"
    lines = [line for line in md.read_text().splitlines() if line.strip()]
    code = sum(len([x for x in c.source.splitlines() if x.strip()]) for c in cells)
    assert code <= CODE_SHARE * len(lines), f"{md.name}: {code} of {len(lines)} lines are code"
