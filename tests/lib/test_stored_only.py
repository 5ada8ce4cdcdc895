"""The book build at the book preset reads stored records only: training inside it is refused."""
import os

import pytest

from polyattn.book.execute import stored_only
from polyattn.config import TrainConfig
from polyattn.train import STORED_ONLY, fit


def test_fit_refuses_to_train_when_only_stored_records_may_be_read(monkeypatch):
    monkeypatch.setenv(STORED_ONLY, "1")
    cfg = TrainConfig(experiment="unit_grid", preset="smoke", seed=3)
    with pytest.raises(RuntimeError, match=r"no valid stored record.*python -m polyattn grid unit_grid --seeds 3"):
        fit(cfg, progress=False)


def test_stored_only_sets_the_flag_for_kernels_started_inside_and_removes_it_after(monkeypatch):
    monkeypatch.delenv(STORED_ONLY, raising=False)
    with stored_only(True):
        assert os.environ[STORED_ONLY] == "1"
    assert STORED_ONLY not in os.environ
    with stored_only(False):
        assert STORED_ONLY not in os.environ


def test_the_book_preset_build_executes_under_the_flag_and_recompute_lifts_it(tmp_path, monkeypatch):
    from polyattn.book import pipeline

    seen = []
    monkeypatch.delenv(STORED_ONLY, raising=False)
    monkeypatch.setattr(pipeline, "execute_all", lambda *a, **k: seen.append(os.environ.get(STORED_ONLY)))
    monkeypatch.setattr(pipeline, "write_verdicts", lambda *a, **k: [])
    for recompute in (False, True):
        pipeline.run(preset="book", chapters=["01"], html=False, build_root=tmp_path, recompute=recompute)
    pipeline.run(preset="smoke", chapters=["01"], html=False, build_root=tmp_path)
    assert seen == ["1", None, None]
