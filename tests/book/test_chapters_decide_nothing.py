"""No chapter decides a verdict: every claim's form comes from the library (the register's rule or a
measured claim's measure function), and a chapter only delivers it (``deliver``) and displays it."""
import ast
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
#: Functions that decide a claim's verdict or form; a chapter calls none of them.
DECIDING = {"verdict", "evaluate", "evaluate_all", "claim_form", "combine_forms", "combined_form", "comparison_result",
            "mechanism_verdict", "outcome"}
#: Modules whose functions are verdict rules; a chapter imports none of them.
RULE_MODULES = {"polyattn.analysis.critique_verdicts", "polyattn.analysis.results", "polyattn.claims.rule",
                "polyattn.claims.evaluate"}


def _calls_and_imports(path: Path):
    code = "\n".join(c.source for c in jupytext.read(str(path), fmt="md:myst").cells if c.cell_type == "code"
                     and not c.source.lstrip().startswith(("%", "!")))
    tree = ast.parse(code)
    calls, imports = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if name in DECIDING:
                calls.append(f"{name}() at line {node.lineno} of the chapter's code")
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported = {node.module} | {f"{node.module}.{a.name}" for a in node.names}
            imports += sorted(imported & (RULE_MODULES | {"polyattn.book.verdict", "polyattn.book.verdict_rows.verdict"}))
        elif isinstance(node, ast.Import):
            imports += [a.name for a in node.names if a.name in RULE_MODULES]
    return calls, imports


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_a_chapter_calls_no_function_that_decides_a_verdict(path):
    calls, imports = _calls_and_imports(path)
    assert not calls and not imports, (
        f"{path.name} decides a verdict itself ({'; '.join(calls + imports)}): compute it in the library "
        "(polyattn.measures or the register) and deliver it with polyattn.book.deliver.deliver")


def test_the_check_finds_a_deciding_call(tmp_path):
    chapter = tmp_path / "99_x.md"
    chapter.write_text("---\njupytext:\n  text_representation:\n    format_name: myst\n---\n\n"
                       "```{code-cell} ipython3\nfrom polyattn.book import verdict\n"
                       "verdict('thm41_1', 'holds', form='holds')\n```\n")
    calls, imports = _calls_and_imports(chapter)
    assert calls == ["verdict() at line 2 of the chapter's code"] and imports == ["polyattn.book.verdict"]
