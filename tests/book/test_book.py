"""The book: notebook pairing, parameters, caching, failures, the smoke build and a browser check."""
import ast
import functools
import html as html_module
import http.server
import json
import os
import re
import shutil
import socketserver
import subprocess
import sys
import threading
from pathlib import Path

import jupytext
import nbformat
import pytest

from polyattn import book

ROOT = book.REPO_ROOT
CHAPTERS = ROOT / "chapters"


def _jupytext_chapters():
    return sorted(p for p in CHAPTERS.glob("*.md") if book.is_jupytext_markdown(p))


def _notebook_entries():
    return [e for e in book.discover(ROOT) if e.kind == "notebook"]


# --- (a) pairing and clean notebooks ---------------------------------------------------------

@pytest.mark.parametrize("md", _jupytext_chapters(), ids=lambda p: p.name)
def test_jupytext_chapter_has_a_paired_notebook_with_the_same_cells(md):
    ipynb = md.with_suffix(".ipynb")
    assert ipynb.exists(), f"{ipynb.name} missing: run jupytext --sync {md.relative_to(ROOT)}"
    a, b = jupytext.read(md), jupytext.read(ipynb)
    assert [(c.cell_type, c.source.strip()) for c in a.cells] == [(c.cell_type, c.source.strip()) for c in b.cells], (
        f"{md.name} and {ipynb.name} have drifted apart: run jupytext --sync {md.relative_to(ROOT)}")
    assert book.pair_drift(md) == []


@pytest.mark.parametrize("ipynb", sorted(CHAPTERS.glob("*.ipynb")) + sorted(ROOT.glob("*.ipynb")), ids=lambda p: p.name)
def test_committed_notebooks_carry_no_outputs(ipynb):
    nb = nbformat.read(str(ipynb), as_version=4)
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
    assert not dirty, f"{ipynb.name} has outputs in cells {dirty}: store inputs only (jupytext --sync writes them)"


def test_pair_drift_notices_an_edited_markdown(tmp_path):
    md = tmp_path / "01_activations.md"
    shutil.copy(CHAPTERS / "01_activations.md", md)
    shutil.copy(CHAPTERS / "01_activations.ipynb", tmp_path / "01_activations.ipynb")
    assert book.pair_drift(md) == []
    md.write_text(md.read_text().replace("device = \"cpu\"", "device = \"cuda\""))
    drift = book.pair_drift(md)
    assert drift and "differs" in drift[0]
    (tmp_path / "01_activations.ipynb").unlink()
    assert "missing" in book.pair_drift(md)[0]


# --- (b) parameters --------------------------------------------------------------------------

@pytest.mark.parametrize("entry", _notebook_entries(), ids=lambda e: e.name)
def test_every_chapter_starts_with_the_parameters_cell(entry):
    nb = book.read_notebook(entry.source)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and "parameters" in code[0].metadata.get("tags", []), \
        f"the first code cell of {entry.name} must be tagged parameters"
    names = book.parameter_names(nb)
    assert names is not None and set(book.PARAMETER_NAMES) <= set(names), \
        f"{entry.name}: the parameters cell sets {names}, it must set {book.PARAMETER_NAMES}"
    book.check_chapter(entry)


def test_parameter_names_reads_assignments_only():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("preset = 'book'\nseeds: list = None\nprint(1)",
                                          metadata={"tags": ["parameters"]})]
    assert book.parameter_names(nb) == ["preset", "seeds"]
    nb.cells[0].metadata["tags"] = []
    assert book.parameter_names(nb) is None


# --- TOC handling ----------------------------------------------------------------------------

def _mini_book(tmp_path, chapter_source, name="01_mini", extra_toc=()):
    """A book folder with an intro page and one notebook chapter."""
    root = tmp_path / "book"
    (root / "chapters").mkdir(parents=True)
    shutil.copy(ROOT / "_config.yml", root / "_config.yml")
    shutil.copy(ROOT / "references.bib", root / "references.bib")
    (root / "intro.md").write_text("# Mini\n\n% polyattn:verdict-table\n")
    files = "\n".join(f"  - file: {f}" for f in (f"chapters/{name}", *extra_toc))
    (root / "_toc.yml").write_text(f"format: jb-book\nroot: intro\nchapters:\n{files}\n")
    if isinstance(chapter_source, nbformat.NotebookNode):
        nbformat.write(chapter_source, str(root / "chapters" / f"{name}.ipynb"))
    else:
        shutil.copy(chapter_source, root / "chapters" / f"{name}.ipynb")
    return root


def _tiny_notebook(*extra_cells):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# Tiny"),
                nbformat.v4.new_code_cell('preset = "book"\nrecompute = False\nseeds = None\ndevice = "cpu"',
                                          metadata={"tags": ["parameters"]}),
                *extra_cells]
    return nb


def test_discover_reads_kinds_and_reports_missing_entries(tmp_path):
    root = _mini_book(tmp_path, _tiny_notebook(), extra_toc=("chapters/02_later", "chapters/notes"))
    (root / "chapters" / "notes.md").write_text("# Notes\n")
    kinds = {e.docname: e.kind for e in book.discover(root)}
    assert kinds == {"intro": "page", "chapters/01_mini": "notebook", "chapters/02_later": "missing",
                     "chapters/notes": "page"}
    pruned = book._prune_toc(book.read_toc(root), {"intro", "chapters/01_mini"})
    assert [c["file"] for c in pruned["chapters"]] == ["chapters/01_mini"]


def test_records_table_counts_clean_records_and_names_the_reading_chapters(tmp_path, monkeypatch):
    from polyattn import experiments, results
    from polyattn.book import status
    from polyattn.config import TrainConfig

    nb = _tiny_notebook()
    nb.metadata["polyattn"] = {"results": ["unit_grid"]}
    root = _mini_book(tmp_path, nb)
    configs = [TrainConfig(experiment="unit_grid", preset="book", seed=s) for s in range(3)]
    monkeypatch.setattr(experiments, "GRIDS", {"unit_grid": lambda preset, seeds: configs})
    configs += [TrainConfig(experiment="unit_grid", preset="book", seed=0, epochs=7),   # another cost class
                TrainConfig(experiment="unit_grid", preset="book", seed=0, model="mini")]  # another shape
    for c, dirty in zip(configs[:2], (False, True)):
        rec = {"schema": 1, "experiment": c.experiment, "config": results.config_dict(c), "config_hash": c.hash,
               "seed": c.seed, "preset": "book", "status": "ok", "diverged_step": None,
               "metrics": [{"epoch": 1, "test_acc": 0.5}], "probes": [],
               "provenance": {**results.provenance(), "git_dirty": dirty, "wall_s": 5400.0}}
        results.write_atomic(results.record_path(c, root / "data" / "results"), rec)
    (row,) = status.records_table(root)
    # the dirty record does not count; seed 2 costs what seed 0 cost; the 7-epoch run is priced from
    # its shape's measured rate (5 epochs took 1.5 h, so 7 take 2.1 h); the mini model has no rate
    assert row == {"grid": "unit_grid", "book runs": 5, "stored": 1, "state": "4 to run", "core-hours stored": "1.5",
                   "core-hours to run (est.)": ">= 5.1 (1 run of unknown cost)", "read by": "01_mini"}
    to_run = row["core-hours to run (est.)"]
    row = f"| unit grid (grid unit_grid) | 1 of 5 (4 to run) | 1.5 stored, {to_run} to run | chapter 01 |"
    assert row in status.records_markdown(root)
    # a step ratio measured against the stored class prices the mini model: 5400 s / 50 steps x 2 x 100 steps = 6 h
    from polyattn import step_cost

    ratio = {"reference": step_cost.cost_class_key(configs[0]), "step_ratio": 2.0, "steps": 100,
             "reference_steps": 50, "cpu": "unit CPU", "measured": "2026-01-01T00:00:00+00:00"}
    results.write_atomic(root / step_cost.RATIOS_FILE,
                         {"schema": 1, "ratios": {step_cost.cost_class_key(configs[4]): ratio}})
    (row,) = status.records_table(root)
    assert row["core-hours to run (est.)"] == f"11.1{status.RATIO_MARK}"
    note = status.rates_note(root)
    assert "(1 run)" in note and "unit CPU, 2026-01-01" in note
    assert status._core_hours(0.0, [None, None]) == ("0.0", "unknown (2 runs of unknown cost)")
    assert status._core_hours(7200.0, []) == ("2.0", "")


def test_real_toc_lists_the_first_chapter_and_the_status_page():
    entries = {e.docname: e for e in book.discover(ROOT)}
    assert entries["chapters/01_activations"].kind == "notebook"
    assert entries["chapters/status"].kind == "page"
    assert entries["intro"].kind == "page"


# --- caching ---------------------------------------------------------------------------------

def test_second_run_executes_nothing_and_a_change_in_an_imported_module_executes_again(tmp_path, monkeypatch, capsys):
    lib = tmp_path / "fakelib"
    lib.mkdir()
    (lib / "mod.py").write_text("from . import helper\nX = 1\n")
    (lib / "helper.py").write_text("Y = 1\n")
    (lib / "other.py").write_text("Z = 1\n")
    monkeypatch.setattr(book.common, "PACKAGE_DIR", lib)
    # the chapter imports polyattn.mod (the stand-in's mod.py), which imports helper.py; not other.py
    cell = "try:\n    from polyattn import mod  # noqa: F401\nexcept ImportError:\n    pass\nprint(preset)"
    root = _mini_book(tmp_path, _tiny_notebook(nbformat.v4.new_code_cell(cell)))
    first = book.run(preset="smoke", html=False, root=root)
    assert first.executed == ["01_mini"] and first.cached == []
    second = book.run(preset="smoke", html=False, root=root)
    assert second.executed == [] and second.cached == ["01_mini"]
    out = capsys.readouterr().out
    assert "01_mini: cached" in out and "executed in" in out
    manifest = json.loads(book.manifest_path(root).read_text())
    rec = manifest["chapters"]["01_mini"]
    assert rec["status"] == "ok" and rec["preset"] == "smoke" and rec["state"] == "cached" and rec["seconds"] > 0
    executed = nbformat.read(str(root / "_build" / "executed" / "01_mini.ipynb"), as_version=4)
    assert any("smoke" in o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.outputs)
    # a change in a module the chapter imports, directly or through another, re-executes; a change
    # in a module it never imports does not; another preset re-executes
    (lib / "other.py").write_text("Z = 2\n")
    assert book.run(preset="smoke", html=False, root=root).executed == []
    (lib / "helper.py").write_text("Y = 2\n")
    assert book.run(preset="smoke", html=False, root=root).executed == ["01_mini"]
    (lib / "mod.py").write_text("from . import helper\nX = 2\n")
    assert book.run(preset="smoke", html=False, root=root).executed == ["01_mini"]
    assert book.run(preset="book", html=False, root=root).executed == ["01_mini"]
    assert book.run(preset="book", html=False, root=root).executed == []
    assert book.run(preset="book", html=False, root=root, force=True).executed == ["01_mini"]
    status = book.status_table(root)
    assert status.loc[0, "chapter"] == "01_mini" and status.loc[0, "preset"] == "book"


def test_declared_results_enter_the_key(tmp_path, monkeypatch):
    nb = _tiny_notebook()
    nb.metadata["polyattn"] = {"results": ["exp_a"]}
    assert book.declared_results(nb) == ["exp_a"]
    monkeypatch.setenv("POLYATTN_RESULTS", str(tmp_path / "results"))
    (tmp_path / "results" / "exp_a").mkdir(parents=True)
    h0 = book.results_hash(["exp_a"], "book")
    (tmp_path / "results" / "exp_a" / "abc-seed0.json").write_text("{}")
    h1 = book.results_hash(["exp_a"], "book")
    (tmp_path / "results" / "exp_b").mkdir()
    (tmp_path / "results" / "exp_b" / "x.json").write_text("{}")
    assert h0 != h1 and book.results_hash(["exp_a"], "book") == h1
    assert book.results_hash([], "book") == ""


def test_records_written_by_a_later_chapter_do_not_execute_an_earlier_one_again(tmp_path, monkeypatch):
    results = tmp_path / "results"
    monkeypatch.setenv("POLYATTN_RESULTS", str(results))
    reader = _tiny_notebook(nbformat.v4.new_code_cell("print('reads exp_shared')"))
    reader.metadata["polyattn"] = {"results": ["exp_shared"]}
    root = _mini_book(tmp_path, reader, name="01_reader")
    writer = _tiny_notebook(nbformat.v4.new_code_cell(
        "import os, pathlib\n"
        "d = pathlib.Path(os.environ['POLYATTN_RESULTS']) / 'exp_shared'\n"
        "d.mkdir(parents=True, exist_ok=True)\n"
        "(d / f'{len(list(d.iterdir()))}-seed0.json').write_text('{}')"))
    writer.metadata["polyattn"] = {"results": ["exp_shared"]}
    nbformat.write(writer, str(root / "chapters" / "02_writer.ipynb"))
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n"
                                   "  - file: chapters/01_reader\n  - file: chapters/02_writer\n")
    assert book.run(preset="smoke", html=False, root=root).executed == ["01_reader", "02_writer"]
    again = book.run(preset="smoke", html=False, root=root)
    assert again.executed == [] and again.cached == ["01_reader", "02_writer"]
    # a record that appears between runs executes its readers again
    (results / "exp_shared" / "new-seed1.json").write_text("{}")
    assert book.run(preset="smoke", html=False, root=root).executed == ["01_reader", "02_writer"]



def _three_chapter_book(tmp_path, cells: dict, alone=()):
    """A book with chapters 01_a, 02_b and 03_c, each running ``cells[name]``."""
    root = None
    for name in ("01_a", "02_b", "03_c"):
        nb = _tiny_notebook(nbformat.v4.new_code_cell(cells[name]))
        if name in alone:
            nb.metadata["polyattn"] = {"alone": True}
        if root is None:
            root = _mini_book(tmp_path, nb, name=name, extra_toc=("chapters/02_b", "chapters/03_c"))
        else:
            nbformat.write(nb, str(root / "chapters" / f"{name}.ipynb"))
    return root


def test_jobs_execute_chapters_at_once_and_a_timing_chapter_alone_after_them(tmp_path, monkeypatch):
    for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(v, raising=False)
    marks = tmp_path / "marks"
    marks.mkdir()
    # each of 01_a and 02_b waits for the other to start: they only both finish when they run at once
    wait_for = ("import os, pathlib, time\n"
                f"m = pathlib.Path({str(marks)!r})\n"
                "(m / '{me}.start').write_text(os.environ.get('OMP_NUM_THREADS', 'unset'))\n"
                "deadline = time.time() + 120\n"
                "while not (m / '{other}.start').exists() and time.time() < deadline:\n"
                "    time.sleep(0.1)\n"
                "(m / '{me}.end').write_text('met' if (m / '{other}.start').exists() else 'alone')\n")
    alone = ("import os, pathlib\n"
             f"m = pathlib.Path({str(marks)!r})\n"
             "(m / 'c.start').write_text(' '.join(sorted(p.name for p in m.iterdir())) + ' | '\n"
             "                           + os.environ.get('OMP_NUM_THREADS', 'unset'))\n")
    root = _three_chapter_book(tmp_path, {"01_a": wait_for.format(me="a", other="b"),
                                          "02_b": wait_for.format(me="b", other="a"), "03_c": alone},
                               alone=("03_c",))
    report = book.run(preset="smoke", html=False, root=root, jobs=2)
    assert report.executed == ["01_a", "02_b", "03_c"]
    assert (marks / "a.end").read_text() == "met" and (marks / "b.end").read_text() == "met"
    assert (marks / "a.start").read_text() == str(max(1, (os.cpu_count() or 1) // 2))
    seen, threads = (marks / "c.start").read_text().split(" | ")
    assert seen.split() == ["a.end", "a.start", "b.end", "b.start"] and threads == "unset"
    manifest = json.loads((root / "_build" / "executed" / "manifest.json").read_text())
    assert {k: v["status"] for k, v in manifest["chapters"].items()} == {"01_a": "ok", "02_b": "ok", "03_c": "ok"}


def test_a_failing_chapter_among_jobs_fails_the_run_and_starts_no_later_one(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    touch = f"import pathlib; pathlib.Path({str(marks)!r}, '{{}}').write_text('ran')"
    root = _three_chapter_book(tmp_path, {"01_a": "raise ValueError('planted failure')",
                                          "02_b": touch.format("b"), "03_c": touch.format("c")}, alone=("03_c",))
    with pytest.raises(book.BookError, match=r"chapter 01_a failed at cell 3 .*ValueError: planted failure"):
        book.run(preset="smoke", html=False, root=root, jobs=2)
    manifest = json.loads((root / "_build" / "executed" / "manifest.json").read_text())
    assert manifest["chapters"]["01_a"]["status"] == "failed"
    assert not (marks / "c").exists()
    with pytest.raises(book.BookError, match="--jobs 0"):
        book.run(preset="smoke", html=False, root=root, jobs=0)


def test_the_site_leaves_out_the_cell_papermill_injects(tmp_path):
    root = _mini_book(tmp_path, _tiny_notebook(nbformat.v4.new_code_cell("print(preset)")))
    book.run(preset="smoke", html=False, root=root)
    executed = root / "_build" / "executed" / "01_mini.ipynb"
    injected = [c for c in nbformat.read(str(executed), as_version=4).cells
                if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "smoke" in injected[0].source
    src = book.assemble(book.discover(root), {"01_mini": executed}, root, root)
    cells = nbformat.read(str(src / "chapters" / "01_mini.ipynb"), as_version=4).cells
    removed = [c.source for c in cells if "remove-cell" in c.metadata.get("tags", [])]
    assert removed == [injected[0].source]
    own = next(c for c in cells if "parameters" in c.metadata.get("tags", []))
    assert "remove-cell" not in own.metadata["tags"]
    # the executed notebook keeps papermill's cell as written: failing cells are numbered against it
    again = nbformat.read(str(executed), as_version=4).cells
    assert not any("remove-cell" in c.metadata.get("tags", []) for c in again)

# --- (d) a broken cell names chapter and cell ------------------------------------------------

def test_a_failing_cell_fails_the_command_naming_chapter_and_cell(tmp_path):
    nb = nbformat.read(str(CHAPTERS / "01_activations.ipynb"), as_version=4)
    params = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    broken = nbformat.v4.new_code_cell("x = 1\nraise RuntimeError('deliberately broken cell')")
    nb.cells.insert(params + 1, broken)  # fail early: the cells after it never run
    root = _mini_book(tmp_path, nb, name="01_activations")
    proc = subprocess.run([sys.executable, "-m", "polyattn.book", "--root", str(root), "--preset", "smoke",
                           "--no-html"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failure = [line for line in proc.stderr.splitlines() if "FAILED" in line]
    assert len(failure) == 1, proc.stderr
    line = failure[0]
    cell_no = params + 2  # 1-based, counting the chapter's own cells
    code_no = sum(c.cell_type == "code" for c in nb.cells[:params + 2])
    assert "chapter 01_activations" in line and f"cell {cell_no} " in line and f"code cell {code_no}" in line
    assert "RuntimeError: deliberately broken cell" in line
    manifest = json.loads(book.manifest_path(root).read_text())
    assert manifest["chapters"]["01_activations"]["status"] == "failed"


def test_unknown_preset_and_chapter_are_refused(tmp_path):
    root = _mini_book(tmp_path, _tiny_notebook())
    with pytest.raises(book.BookError, match="unknown preset"):
        book.run(preset="huge", html=False, root=root)
    with pytest.raises(book.BookError, match="no notebook chapter matches"):
        book.run(preset="smoke", html=False, root=root, chapters=["07"])


def test_a_chapter_without_parameters_is_refused(tmp_path):
    nb = _tiny_notebook()
    nb.cells[1].metadata["tags"] = []
    root = _mini_book(tmp_path, nb)
    with pytest.raises(book.BookError, match="tagged 'parameters'"):
        book.run(preset="smoke", html=False, root=root)


# --- verdicts --------------------------------------------------------------------------------

def _verdict_notebook(path, summary="one-hot rows attain $\\sqrt{N}$", form="holds", preset="book", claim="thm41_1"):
    nb = nbformat.v4.new_notebook()
    nb.metadata["papermill"] = {"parameters": {"preset": preset}}
    nb.cells = [nbformat.v4.new_code_cell("", outputs=[
        nbformat.v4.new_output("display_data", data={"text/markdown": summary,
                                                     "text/plain": "<IPython.core.display.Markdown object>"},
                               metadata={"scrapbook": {"name": f"verdict_{claim}", "mime_prefix": ""}}),
        nbformat.v4.new_output("display_data", data={"text/plain": repr(form)},
                               metadata={"scrapbook": {"name": f"verdict_{claim}_form", "mime_prefix": ""}})])]
    nbformat.write(nb, str(path))
    return nb


def test_verdict_checks_its_claim_form_and_the_table_pastes_or_says_pending(tmp_path):
    with pytest.raises(ValueError, match="unknown claim"):
        book.verdict("thm9", "holds", form="holds")
    with pytest.raises(ValueError, match="non-empty"):
        book.verdict("thm41_1", " ", form="holds")
    with pytest.raises(ValueError, match="unknown verdict form"):
        book.verdict("thm41_1", "it matches", form="matches")
    path = tmp_path / "02_proofs.ipynb"
    nb = _verdict_notebook(path)
    assert book.glued_keys(nb) == {"verdict_thm41_1", "verdict_thm41_1_form"}
    # rows come from the verdicts file; a chapter's glue is read only for the machine-dependent cost row
    rows_in = {"thm41_1": {"form": "holds", "summary": "one-hot rows attain $\\sqrt{N}$", "chapter": "02_proofs",
                           "preset": "book"}}
    table = book.verdict_table({"02_proofs": path}, verdicts=rows_in)
    rows = {line.split("|")[1].strip(): line for line in table.splitlines()[2:]}
    assert len(rows) == len(book.CLAIMS)
    assert "**holds**: one-hot rows attain $\\sqrt{N}$" in table
    thm412 = next(line for line in table.splitlines() if line.startswith("| Thm 4.1(2)"))
    assert "pending: chapter 02" in thm412
    assert "pending: chapter 08" in book.verdict_table({}, verdicts={})
    costs = tmp_path / "08_costs.ipynb"
    nb = _verdict_notebook(costs, summary="x³ takes 1.2× softmax's time", form="measured", claim="cost")
    cost_row = next(line for line in book.verdict_table({"08_costs": costs}, verdicts={}).splitlines()
                    if "cost of polynomial attention" in line)
    assert "**measured**: x³ takes 1.2× softmax's time" in cost_row


@pytest.mark.slow
@pytest.mark.book
def test_the_verdicts_file_and_a_measured_cost_reach_the_intro_of_the_built_site(tmp_path):
    nb = _tiny_notebook(nbformat.v4.new_code_cell(
        "from polyattn.book import verdict\n"
        "verdict('cost', 'the cubic takes 1.5 times the time of softmax', form='measured')"))
    root = _mini_book(tmp_path, nb, name="08_costs")
    (root / "data").mkdir(exist_ok=True)
    (root / "data" / "verdicts.json").write_text(json.dumps({"thm41_1": {
        "chapter": "02_proofs", "form": "holds", "preset": "book",
        "summary": "holds in 1000 of 1000 random matrices, up to $\\sqrt{N}$"}}))
    report = book.run(preset="smoke", root=root)
    intro = (report.html / "intro.html").read_text()
    assert "holds in 1000 of 1000 random matrices" in intro
    assert "the cubic takes 1.5 times the time of softmax" in intro
    assert "pending: chapter 04" in intro and "polyattn:verdict-table" not in intro
    page = (report.html / "chapters" / "08_costs.html").read_text()
    assert "recompute" in page and "# Parameters" not in page, "papermill's injected cell is on the page"


# --- (c) smoke execution of every chapter and the site ---------------------------------------

def _glued_texts(path):
    """The text glued under each key of an executed notebook (Markdown values as their source)."""
    nb = nbformat.read(str(path), as_version=4)
    out = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []) if cell.cell_type == "code" else []:
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            # glue stores its value under a prefixed mime type (application/papermill.record/text/plain)
            data = o.get("data", {})
            markdown = [v for k, v in data.items() if k.endswith("text/markdown")]
            plain = [v for k, v in data.items() if k.endswith("text/plain")]
            if name and markdown:
                out[name] = markdown[0]
            elif name and plain:
                try:  # a glued text is a Python literal; a glued table or figure shows its repr
                    value = ast.literal_eval(plain[0])
                except (ValueError, SyntaxError):
                    continue
                if isinstance(value, str):
                    out[name] = value
    return out


def _words_of(markdown: str) -> str:
    """The longest stretch of a summary outside its maths and code spans, as the rendered page shows it."""
    return max(re.split(r"\$[^$]*\$|`[^`]*`", markdown), key=len).strip()[:30]


@pytest.fixture(scope="module")
def smoke_book(tmp_path_factory):
    """Every chapter of _toc.yml executed under preset smoke and the site built (warnings are errors)."""
    build_root = tmp_path_factory.mktemp("smoke-book")
    report = book.run(preset="smoke", root=ROOT, build_root=build_root, jobs=2)
    return report, build_root


@pytest.mark.slow
@pytest.mark.book
def test_smoke_build_executes_every_chapter_and_builds_the_site(smoke_book):
    report, build_root = smoke_book
    chapters = [e.name for e in _notebook_entries()]
    assert sorted(report.executed) == sorted(chapters), "every chapter of _toc.yml is executed under smoke"
    html = build_root / "_build" / "html"
    assert (html / "index.html").exists()
    for e in book.discover(ROOT):
        if e.kind != "missing":
            assert (html / f"{e.docname}.html").exists(), f"no page for {e.docname}"
    manifest = json.loads(book.manifest_path(build_root).read_text())
    assert all(manifest["chapters"][c]["status"] == "ok" for c in chapters)
    status = (html / "chapters" / "status.html").read_text()
    assert all(c in status for c in chapters) and "smoke" in status and "papermill" in status
    intro = html_module.unescape((html / "intro.html").read_text())
    # Sphinx's smart quotes make typographic quotes, dashes and ellipses of the pasted text
    intro = intro.translate(str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
                                           "\u2013": "--", "\u2014": "---", "\u2026": "..."}))
    assert "polyattn:verdict-table" not in intro, "the verdict table's marker is left in the intro"
    assert "<table" in intro and "raised by" in intro and "checked in" in intro, "the intro has no verdict table"
    # a verdict counts when the chapter the claim names glued it (the table pastes no other)
    delivered = {c.id: _glued_texts(build_root / "_build" / "executed" / f"{c.chapter}.ipynb").get(f"verdict_{c.id}")
                 if c.chapter in chapters else None for c in book.CLAIMS}
    pending = {c.chapter.split("_", 1)[0] for c in book.CLAIMS if delivered[c.id] is None}
    for c in book.CLAIMS:
        number = c.chapter.split("_", 1)[0]
        if delivered[c.id] is not None:
            assert _words_of(delivered[c.id]) in intro, f"the verdict on {c.id} is not in the intro"
        if number in pending:
            assert f"pending: chapter {number}" in intro, f"the row of {c.id} says neither verdict nor pending"
        else:
            assert f"pending: chapter {number}" not in intro, f"chapter {number} delivered, yet a row is pending"
    # a second run finds everything cached
    again = book.run(preset="smoke", root=ROOT, build_root=build_root, html=False)
    assert again.executed == [] and sorted(again.cached) == sorted(chapters)


# --- (e) the site in a real browser ----------------------------------------------------------

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def served_site(smoke_book):
    html = smoke_book[1] / "_build" / "html"
    handler = functools.partial(_QuietHandler, directory=str(html))
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", html
    server.shutdown()
    server.server_close()


@pytest.fixture
def browser(tmp_path):
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        pytest.skip("Debian's chromium and chromium-driver are not installed; `make test` installs them "
                    "(apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -r requirements.txt)")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                 f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1280,1600"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=opts)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def _wait(driver, script, timeout=30.0):
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if driver.execute_script(script):
            return True
        time.sleep(0.25)
    return False


#: The longest a page may be, in screens of a 1400 x 900 viewport: "about fifteen" screens of the book's
#: pages, whose smoke builds (checked here) differ from the book's by up to a screen.
PAGE_SCREENS = 16

# The page's height, and on the intro the three answers (the first ordered list after "The answer")
# and how many rows of the answer table end within the first screen.
_FIRST_SCREEN_JS = r"""
const heading = Array.from(document.querySelectorAll('h1, h2'))
  .find(h => h.textContent.trim().replace(/#$/, '').trim() === 'The answer');
let answers = 0, bottom = 0, rows = 0;
if (heading) {
  const list = Array.from(document.querySelectorAll('ol')).find(
    o => heading.compareDocumentPosition(o) & Node.DOCUMENT_POSITION_FOLLOWING);
  if (list) { answers = list.children.length; bottom = list.getBoundingClientRect().bottom + window.scrollY; }
  const table = Array.from(document.querySelectorAll('table')).find(
    t => heading.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING);
  if (table) rows = Array.from(table.querySelectorAll('tbody tr'))
    .filter(r => r.getBoundingClientRect().bottom + window.scrollY <= window.innerHeight).length;
}
return JSON.stringify({height: document.documentElement.scrollHeight, answers: answers,
                       answers_bottom: Math.round(bottom), rows_on_screen: rows});
"""

# What a reader sees on a page, gathered in one script per page: the visible text of the article
# outside code (cell inputs, inline code, literal blocks, rendered maths; a cell's printed output
# counts), block by block; every visible table with its width against its container and the
# article; and where the intro's answer table starts.
_READER_VIEW_JS = r"""
const article = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
const skip = 'code, .cell_input, script, style, mjx-container, .math, .MathJax, svg, .headerlink';
const block = 'p, li, td, th, caption, figcaption, h1, h2, h3, h4, h5, h6, dt, dd, summary, div, section, article';
const shown = el => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
const texts = new Map();
const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  const parent = n.parentElement;
  if (!parent || parent.closest(skip) || !shown(parent)) continue;
  const pre = parent.closest('pre, div.highlight');  // a literal block is code; a cell's printed output is not
  if (pre && !pre.closest('.cell_output')) continue;
  const owner = parent.closest(block) || article;
  texts.set(owner, (texts.get(owner) || '') + n.data);
}
const a = article.getBoundingClientRect();
const tables = Array.from(article.querySelectorAll('table')).filter(shown).map(t => {
  const box = t.parentElement;
  const r = t.getBoundingClientRect();
  return {where: (t.innerText || '').replace(/\s+/g, ' ').trim().slice(0, 80),
          width: t.scrollWidth, container: box.clientWidth, overflow: getComputedStyle(box).overflowX,
          right: r.right, article_right: a.right, article_width: a.width};
});
let answer = null;
const heading = Array.from(article.querySelectorAll('h1, h2, h3'))
  .find(h => h.textContent.trim().replace(/#$/, '').trim() === 'The answer');
if (heading) {
  const later = Array.from(article.querySelectorAll('table'))
    .find(t => heading.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING);
  const head = later && (later.querySelector('thead') || later);
  answer = later ? {top: later.getBoundingClientRect().top + window.scrollY,
                    head_bottom: head.getBoundingClientRect().bottom + window.scrollY, screen: window.innerHeight,
                    where: (later.innerText || '').replace(/\s+/g, ' ').trim().slice(0, 80)} : {top: null};
}
const headers = Array.from(article.querySelectorAll('th')).filter(th => shown(th) && !th.closest(skip))
  .map(th => (th.innerText || '').trim());
return JSON.stringify({blocks: Array.from(texts.values()), tables: tables, headers: headers, answer: answer});
"""

#: What must not reach a reader's eye outside code: TeX left unrendered, a Python repr of a
#: sentence, pandas' raw float format, a backtick of Markdown that was pasted as plain text.
_RAW_TEXT = (
    ("TeX between dollar signs", re.compile(r"\$[^$\n]*[\\^_{}][^$\n]*\$")),
    ("a TeX command", re.compile(r"\\[A-Za-z]+")),
    # a quoted sentence carrying maths or escapes, or a block that is nothing but a quoted sentence
    ("a Python repr of a string", re.compile(r"""['"\u2018\u201c][^'"\u2019\u201d]*?(?:\$|\\)[^'"\u2019\u201d]*['"\u2019\u201d]"""
                                             r"""|^['"\u2018\u201c][^'"\u2019\u201d]{20,}['"\u2019\u201d]$""")),
    ("an unformatted float", re.compile(r"\b\d\.\d{4,}e[+-]?\d+\b|\b\d+\.\d{7,}\b")),
    ("a number in e-notation", re.compile(r"(?<![\w.])\d+(?:\.\d+)?e[+-]\d+\b")),
    ("a hyphen for a minus sign", re.compile(r"(?:^|(?<=[\s(\[]))-\d")),
    ("a literal backtick", re.compile(r"`")),
    ("a dollar sign of maths left unrendered", re.compile(r"\$")),
    ("a pandas repr", re.compile(r"\bdtype: |\bName: \w+, dtype|object at 0x[0-9a-f]+|<pandas\.|Styler object")),
    # a table cell that holds nothing but a missing value as Python or pandas print it
    ("a missing value printed raw", re.compile(r"^(?:nan|NaN|None|NaT|<NA>)$")),
    ("a tensor repr", re.compile(r"\btensor\(")),
    # an activation's spec string or a claim id where its display name belongs
    ("an internal id", re.compile(r"(?<![A-Za-z])(?:poly|poly_cap|poly_norm|softmax|ssmax|relu_n|sigmoid):[a-z]+="
                                  r"|\b[a-z]+_vs_[a-z]+\b")),
)

#: A column heading that reads as code: a DataFrame shown with its programmatic column names.
_CODE_HEADING = re.compile(r"^[a-z]+(?:_[a-z0-9]+)+$")


def _where(text, start, width=80):
    text = re.sub(r"\s+", " ", text).strip()
    return text[max(0, start - 20):][:width] if start > 20 else text[:width]


def _reader_view_problems(page, view, slack=4):
    """Problems of what a reader sees on `page`, each as 'page: what, where (first 80 characters)'."""
    problems = []
    for raw in view["blocks"]:
        text = re.sub(r"\s+", " ", raw).strip()
        if not text:
            continue
        found = [(what, m) for what, pattern in _RAW_TEXT if (m := pattern.search(text))]
        if found:
            first = min(m.start() for _, m in found)
            problems.append(f"{page}: {', '.join(w for w, _ in found)} in the text, at {_where(text, first)!r}")
    code_headings = sorted({h for h in view.get("headers", []) if _CODE_HEADING.match(h)})
    if code_headings:
        problems.append(f"{page}: column headings that read as code: {code_headings[:6]}")
    for t in view["tables"]:
        if t["width"] > t["container"] + slack or t["right"] > t["article_right"] + slack:
            column = min(t["container"], round(t["article_width"]))
            problems.append(f"{page}: a table {t['width']}px wide in a column of {column}px, at {t['where']!r}")
    return problems


# Every SVG image of the article: where it comes from, the width it is shown at, its alt text.
_FIGURES_JS = r"""
const article = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
return JSON.stringify(Array.from(article.querySelectorAll('img')).filter(i => i.src.endsWith('.svg'))
  .filter(i => i.getClientRects().length > 0)
  .map(i => ({src: new URL(i.src).pathname, shown: i.getBoundingClientRect().width, alt: i.alt || ''})));
"""


def _svg_smallest_points(svg: str, shown_px: float) -> float:
    """The smallest text of a matplotlib SVG (its user unit is the point) in points as the page shows it,
    ``shown_px`` CSS pixels wide (a point is 4/3 px); infinity for an SVG without text."""
    width = re.search(r'<svg\b[^>]*\bwidth="([\d.]+)pt"', svg)
    sizes = [float(s) for s in re.findall(r"font-size:\s*([\d.]+)px", svg)]
    if not width or not sizes:
        return float("inf")
    return min(sizes) * shown_px / (float(width.group(1)) * 4 / 3)


def _figure_problems(page, fig, html: Path) -> list[str]:
    path = html / fig["src"].lstrip("/")
    problems = []
    if path.is_file():
        points = _svg_smallest_points(path.read_text(encoding="utf-8", errors="replace"), fig["shown"])
        if points < 9 - 0.05:
            problems.append(f"{page}: a figure's smallest text is {points:.1f} pt as shown ({path.name})")
    if not fig["alt"] or fig["alt"].endswith(".svg") or fig["alt"] == path.name:
        problems.append(f"{page}: a figure's alt text is {fig['alt']!r}, not what it shows")
    return problems


def test_the_figure_check_reads_the_smallest_text_at_the_shown_width(tmp_path):
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="600pt" height="200pt" viewBox="0 0 600 200">'
           '<text style="font-size: 12px">N</text><text style="font-size: 9px">tick</text></svg>')
    assert _svg_smallest_points(svg, 800) == 9            # 600 pt = 800 px: drawn at its size
    assert round(_svg_smallest_points(svg, 600), 2) == 6.75  # shrunk to 3/4
    (tmp_path / "f.svg").write_text(svg)
    assert _figure_problems("p.html", {"src": "/f.svg", "shown": 800, "alt": "Figure: accuracy against N"}, tmp_path) == []
    found = _figure_problems("p.html", {"src": "/f.svg", "shown": 600, "alt": "f.svg"}, tmp_path)
    assert len(found) == 2 and "6.8 pt" in found[0] and "alt text" in found[1]


def test_the_reader_view_check_names_what_a_reader_should_not_see():
    table = {"where": "activation seed pairs", "width": 600, "container": 700, "overflow": "auto", "right": 650,
             "article_right": 700, "article_width": 700}
    clean = {"blocks": ["The cubic is 0.31 points worse than softmax, [−0.5, +1.1].", "−0.24 [−0.49, +0.01]", "n/a",
                        "A run that diverged (a NaN loss) stays in the table."],
             "tables": [table], "headers": ["activation", "seed pairs", "N", "Δ, points [95% CI]"]}
    assert _reader_view_problems("p.html", clean) == []
    for block, what in (("takes 1.45 times at $N=$ 8192", "dollar sign"), ("metric ap Name: 0, dtype: object", "pandas repr"),
                        ("nan", "missing value"), ("NaN", "missing value"), (r"gap $1 - \sqrt{N}$", "TeX"),
                        ("<pandas.io.formats.style.Styler object at 0x7f3a>", "pandas repr"),
                        ("the search gets within 1.1e-06 of it", "e-notation"), ("+0.18 [-0.07, +0.44]", "hyphen"),
                        ("tensor([[0.5774, 0.0722]])", "tensor repr"), ("The sweep trains poly:p=3,c=C here", "internal id"),
                        ("attention sinks: sinks_poly:p=3,c=1/14_row (±0.125)", "internal id"),
                        ("the register's for lm_vs_softmax", "internal id")):
        found = _reader_view_problems("p.html", {**clean, "blocks": [block]})
        assert len(found) == 1 and what in found[0], (block, found)
    found = _reader_view_problems("p.html", {**clean, "headers": ["p", "ratio_ci_lo", "relative_to_first_d"]})
    assert found == ["p.html: column headings that read as code: ['ratio_ci_lo', 'relative_to_first_d']"]
    wide = {**table, "width": 900}
    assert "900px wide" in _reader_view_problems("p.html", {**clean, "tables": [wide]})[0]


@pytest.mark.slow
@pytest.mark.book
def test_every_page_renders_in_chromium(served_site, browser):
    base, html = served_site
    shots = ROOT / "_build" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    pages = ["intro.html"] + [f"{e.docname}.html" for e in book.discover(ROOT)
                              if e.kind != "missing" and e.docname != "intro"]

    browser.get(f"{base}/index.html")
    assert _wait(browser, "return location.pathname.endsWith('intro.html') && document.readyState === 'complete'"), \
        "index.html does not lead to the intro"
    nav = browser.execute_script(
        "return Array.from(document.querySelectorAll('nav.bd-docs-nav a.reference.internal, .bd-sidebar a.reference.internal'))"
        ".map(a => new URL(a.href).pathname.replace(/^\\//, ''))")
    missing = [p for p in pages if p != "intro.html" and p not in nav]
    assert not missing, f"the navigation does not link to {missing} (links: {nav})"

    problems, widths = [], []
    for page in pages:
        browser.get(f"{base}/{page}")
        _wait(browser, "return document.readyState === 'complete'")
        name = page.replace("/", "__").removesuffix(".html")
        has_math = bool(browser.execute_script("return document.querySelectorAll('.math').length"))
        if has_math:
            rendered = _wait(browser, "return document.querySelectorAll('mjx-container').length > 0 && "
                                      "document.querySelectorAll('.math:not(:has(mjx-container))').length === 0")
            if not rendered:
                problems.append(f"{page}: maths not rendered by MathJax")
            errors = browser.execute_script("return document.querySelectorAll('mjx-merror').length")
            if errors:
                problems.append(f"{page}: {errors} MathJax errors")
        broken = browser.execute_script(
            "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
        if broken:
            problems.append(f"{page}: images not loaded: {broken}")
        if "Error response" in browser.title or "404" in browser.title:
            problems.append(f"{page}: not served ({browser.title})")
        # what the reader sees: at a 1280x900 window, so that "the first screen" is that window's
        browser.set_window_size(1280, 900)
        view = json.loads(browser.execute_script(_READER_VIEW_JS))
        problems += _reader_view_problems(page, view)
        if page == "intro.html":
            answer = view["answer"]
            if answer is None:
                problems.append(f"{page}: no heading 'The answer'")
            elif answer["top"] is None:
                problems.append(f"{page}: no table after the heading 'The answer'")
            elif answer["top"] > 2 * answer["screen"]:  # the three answers come first; the table right after
                problems.append(f"{page}: the answer table starts {round(answer['top'])}px down, past the second "
                                f"screen of {answer['screen']}px, at {answer['where']!r}")
        # at a 1400 x 900 viewport: the intro's first screen holds the three answers; no page is longer
        # than about fifteen such screens
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        first = json.loads(browser.execute_script(_FIRST_SCREEN_JS))
        # every figure, in the same viewport: its smallest text as the page shows it (at least 9 pt), and an
        # alt text that is not its file name
        for fig in json.loads(browser.execute_script(_FIGURES_JS)):
            problems += _figure_problems(page, fig, html)
            widths.append(fig["shown"])
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        if first["height"] > PAGE_SCREENS * 900:
            problems.append(f"{page}: {first['height']}px long, more than {PAGE_SCREENS} screens of 900px")
        if page == "intro.html":
            if first["answers"] != 3 or first["answers_bottom"] > 900:
                problems.append(f"{page}: the first screen does not show the three answers ({first})")
        height = browser.execute_script("return Math.min(document.body.scrollHeight, 12000)")
        browser.set_window_size(1280, max(800, int(height)))
        browser.save_screenshot(str(shots / f"{name}.png"))
        browser.set_window_size(1280, 1600)
        severe = [e["message"] for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
        # Chromium may probe /favicon.ico at the server root before it reads the page's own
        # icon link; the page must declare its icon, and that probe is not the page's error
        icons = browser.execute_script("return document.querySelectorAll('link[rel~=\"icon\"]').length")
        if not icons:
            problems.append(f"{page}: no icon declared")
        severe = [m for m in severe if not (icons and m.split(" ", 1)[0].endswith("/favicon.ico"))]
        if severe:
            problems.append(f"{page}: console errors: {severe}")
    assert widths and max(widths) <= 800, f"figures shown up to {max(widths, default=0):.0f}px wide at 1400 x 900"
    assert not problems, f"{len(problems)} problems on the pages:\n" + "\n".join(problems)


# --- the README's findings block: one source with the verdict table ---------------------------

def test_findings_are_collected_from_the_glued_verdicts(tmp_path):
    path = tmp_path / "02_proofs.ipynb"
    _verdict_notebook(path, summary="adversarial search stays below $\\sqrt{N}$", form="holds")
    verdicts = book.collect_verdicts({"02_proofs": path})
    assert verdicts == {"thm41_1": {"form": "holds", "summary": "adversarial search stays below $\\sqrt{N}$",
                                    "chapter": "02_proofs", "preset": "book"}}
    block = book.findings_markdown(verdicts)
    assert "**holds**. adversarial search stays below $\\sqrt{N}$" in block
    assert "pending (chapter 04)" in block
    cost = next(line for line in block.splitlines() if "cost of polynomial attention" in line)
    assert "measured on the machine that builds the book" in cost
    readme = f"intro\n{book.FINDINGS_START}\nold\n{book.FINDINGS_END}\noutro\n"
    assert book.replace_findings(readme, "new") == f"intro\n{book.FINDINGS_START}\nnew\n{book.FINDINGS_END}\noutro\n"
    with pytest.raises(ValueError, match="no findings markers"):
        book.replace_findings("no markers here", "new")


@pytest.mark.committed
def test_readme_findings_block_is_the_one_the_committed_verdicts_give():
    verdicts = json.loads((ROOT / book.VERDICTS_FILE).read_text())
    readme = (ROOT / "README.md").read_text()
    block = readme.split(book.FINDINGS_START, 1)[1].split(book.FINDINGS_END, 1)[0].strip()
    assert block == book.findings_markdown(verdicts).strip(), \
        "README.md's findings differ from data/verdicts.json: run `python -m polyattn verdicts`"
    assert all(v["preset"] == "book" for v in verdicts.values())


def test_unread_records_are_those_no_grid_names(tmp_path, monkeypatch):
    from polyattn import experiments, results
    from polyattn.book import status
    from polyattn.config import TrainConfig

    configs = [TrainConfig(experiment="unit_grid", preset="book", seed=s) for s in range(2)]
    monkeypatch.setattr(experiments, "GRIDS", {"unit_grid": lambda preset, seeds: configs})
    store = tmp_path / "data" / "results"
    named = results.record_path(configs[1], store)
    superseded = results.record_path(TrainConfig(experiment="unit_grid", preset="book", seed=0, epochs=7), store)
    for path in (named, superseded):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    assert status.unread_records(tmp_path) == [superseded]


def test_every_committed_record_is_named_by_a_grid():
    from polyattn.book import status

    assert status.unread_records(ROOT) == [], "records of superseded settings: remove them from data/results"


def test_the_records_command_prints_every_grid():
    from polyattn.experiments import GRIDS

    out = subprocess.run([sys.executable, "-m", "polyattn", "records"], capture_output=True, text=True, check=True,
                         cwd=ROOT).stdout
    table, note = out.split("\n\n")
    lines = table.splitlines()
    assert lines[0].split()[:2] == ["grid", "book"] and len(lines) == 1 + len(GRIDS)
    assert note.startswith("Estimates are one-thread wall times") and "runs)" in note
    assert all(any(line.startswith(name + " ") for line in lines) for name in GRIDS)


def test_chapters_execute_over_local_sockets_without_a_transport_warning(tmp_path, capfd):
    from polyattn.book.execute import execute_chapter
    from polyattn.book.toc import Entry

    source = tmp_path / "a.ipynb"
    nbformat.write(_tiny_notebook(nbformat.v4.new_code_cell("import os\nprint(os.getpid() > 0)")), str(source))
    execute_chapter(Entry("chapters/a", "notebook", source), {"preset": "smoke"}, tmp_path / "out.ipynb", cwd=tmp_path)
    assert nbformat.read(str(tmp_path / "out.ipynb"), 4).cells[-1].outputs[0]["text"] == "True\n"
    assert "without encryption" not in capfd.readouterr().err
    assert not list(tmp_path.glob("kernel*")), "IPC sockets belong in a private temporary folder"


def test_the_status_page_names_claims_and_comparisons_in_words():
    from polyattn.book import status
    from polyattn.claims.register import REGISTER

    cid, claim = next((k, c) for k, c in REGISTER.items() if any(":" in x.id for x in c.comparisons))
    comp = next(x for x in claim.comparisons if ":" in x.id)
    assert status.comparison_name(cid, comp.id) == comp.label and ":" not in status.claim_name(cid).split(" ")[0]
    assert status.grid_name("vit_converged") == "converged tier (grid vit_converged)"
    assert status.comparison_name("no_such_claim", "a_b") == "a b"
    assert status.chapter_names("04_vit, 09_critiques") == "chapters 04, 09"
    assert status.chapter_names("no chapter yet") == "no chapter yet"


def test_a_claim_beside_its_table_keeps_its_verdict_and_terms_not_its_rows():
    from polyattn.book.deliver import beside_table

    text = ("**Inconclusive at this power**. x/√N − x³/√N: +0.72 [−4.40, +5.83] points (3 pairs), inconclusive; "
            "x²/√N − x³/√N: +1.65 [−1.07, +4.37] points (3 pairs), inconclusive. Margin ±1; the converged tier "
            "decides. *Registered late: on 2 December.*")
    assert beside_table(text) == ("**Inconclusive at this power**. Its comparisons are the table's rows. Margin ±1; "
                                  "the converged tier decides. *Registered late: on 2 December.*")
    assert beside_table("**Holds**. One sentence without terms.") == "**Holds**."


def test_the_site_gives_each_svg_figure_its_title_as_alt_text(tmp_path):
    from types import SimpleNamespace

    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    from polyattn.book.site import _svg_alt

    (tmp_path / "fig.svg").write_text('<svg width="10pt"><title>Figure: accuracy &amp; N</title></svg>')
    (tmp_path / "plain.svg").write_text('<svg width="10pt"></svg>')
    doc = new_document("page", get_default_settings(Parser))
    shown, plain, photo = nodes.image(uri="fig.svg"), nodes.image(uri="plain.svg"), nodes.image(uri="a.png")
    doc += [shown, plain, photo]
    env = SimpleNamespace(relfn2path=lambda uri, docname: (uri, str(tmp_path / uri)))
    _svg_alt(SimpleNamespace(srcdir=str(tmp_path / "src"), env=env), doc, "page")
    assert shown["alt"] == "Figure: accuracy & N" and "alt" not in plain and "alt" not in photo


def test_a_succeeding_execution_logs_no_error_line_and_its_kernel_is_not_interrupted(tmp_path, capfd):
    """jupyter_client interrupts a kernel before shutting it down; a kernel that the SIGINT finds in a
    message handler logs "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel.".  The last cell
    makes the kernel answer SIGINT with that line (and a file), so an interrupt at shutdown shows."""
    from polyattn.book.execute import execute_chapter
    from polyattn.book.toc import Entry

    flag = tmp_path / "interrupted"
    plant = (f"import sys\n"
             f"def _on_sigint(signum, frame):\n"
             f"    open({str(flag)!r}, 'w').close()\n"
             f"    print('[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel.', file=sys.__stderr__, flush=True)\n"
             f"get_ipython().kernel.saved_sigint_handler = _on_sigint  # what SIGINT runs once the cell is done\n"
             f"print('planted')")
    source = tmp_path / "a.ipynb"
    nbformat.write(_tiny_notebook(nbformat.v4.new_code_cell(plant)), str(source))
    execute_chapter(Entry("chapters/a", "notebook", source), {"preset": "smoke"}, tmp_path / "out.ipynb", cwd=tmp_path)
    assert nbformat.read(str(tmp_path / "out.ipynb"), 4).cells[-1].outputs[0]["text"] == "planted\n"
    log = capfd.readouterr()
    errors = [line for line in (log.out + log.err).splitlines() if "ERROR" in line]
    assert not errors, f"a succeeding execution logged {errors}"
    assert not flag.exists(), "the kernel was interrupted on its way out"
