"""Executed chapters carry no progress bars: a kernel's stderr becomes text on the page."""
import os
import subprocess
import sys

from polyattn.book.execute import NO_PROGRESS, no_progress_bars

BAR = "from tqdm.auto import tqdm\nfor _ in tqdm(range(3), desc='runs'): pass\n"


def _stderr() -> str:
    return subprocess.run([sys.executable, "-c", BAR], capture_output=True, text=True, check=True).stderr


def test_processes_started_inside_draw_no_bar_and_the_variable_is_removed_after(monkeypatch):
    monkeypatch.delenv(NO_PROGRESS, raising=False)
    assert "runs: 100%" in _stderr()
    with no_progress_bars():
        assert os.environ[NO_PROGRESS] == "1" and _stderr() == ""
    assert NO_PROGRESS not in os.environ


def test_a_value_the_caller_set_is_left_alone(monkeypatch):
    monkeypatch.setenv(NO_PROGRESS, "yes")
    with no_progress_bars():
        assert os.environ[NO_PROGRESS] == "yes"
    assert os.environ[NO_PROGRESS] == "yes"


def test_the_book_build_executes_its_chapters_without_bars(tmp_path, monkeypatch):
    from polyattn.book import pipeline

    seen = []
    monkeypatch.delenv(NO_PROGRESS, raising=False)
    monkeypatch.setattr(pipeline, "execute_all", lambda *a, **k: seen.append(os.environ.get(NO_PROGRESS)))
    monkeypatch.setattr(pipeline, "write_verdicts", lambda *a, **k: [])
    pipeline.run(preset="smoke", chapters=["01"], html=False, build_root=tmp_path)
    assert seen == ["1"]
