"""The LRA grid of chapter 05: its size, its names, and one smoke run end to end."""
from __future__ import annotations

import json

import pytest

from polyattn.experiments import GRIDS
from polyattn.experiments.lra import LRA_TASKS, LRA_VARIANTS, lra, paper_table, task_of, variant_label


def test_book_grid_has_ninety_distinct_configs():
    configs = GRIDS["lra"]("book")
    assert len(configs) == len(LRA_TASKS) * len(LRA_VARIANTS) * 3 == 90
    assert len({(c.hash, c.seed) for c in configs}) == 90
    assert len({c.hash for c in configs}) == 30
    assert {task_of(c) for c in configs} == set(LRA_TASKS)
    assert {variant_label(c) for c in configs} == {v[0] for v in LRA_VARIANTS}
    assert all(c.model == "nystromformer" and c.threads == 1 and c.experiment == "lra" for c in configs)
    padded = [c for c in configs if c.n_mode == "padded"]
    assert len(padded) == 15 and all(c.activation == "poly:p=3" for c in padded)


def test_paper_grid_lists_the_published_harness():
    configs = lra("paper")
    assert len(configs) == 30 and all(c.device == "cuda" and c.lr == 1e-4 for c in configs)
    by_task = {task_of(c): c for c in configs}
    assert by_task["listops"].batch_size == 32 and by_task["image"].batch_size == 256
    assert by_task["text"].dataset == "text_imdb" and by_task["text"].options["max_len"] == 4000
    assert [r["task"] for r in paper_table()] == list(LRA_TASKS)


def test_smoke_grid_runs_one_config(tmp_path, monkeypatch):
    from polyattn.runs import load_or_run

    monkeypatch.setenv("POLYATTN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLYATTN_RESULTS", str(tmp_path / "results"))
    configs = GRIDS["lra"]("smoke")
    assert len(configs) == 30
    cfg = next(c for c in configs if task_of(c) == "listops" and c.activation == "poly:p=3" and c.n_mode == "row")
    rec = load_or_run(cfg, progress=False)
    assert rec["status"] == "ok" and len(rec["metrics"]) == cfg.epochs
    final = rec["final"]
    assert len(final["test_pred"]) == len(final["test_correct"]) == len(final["test_lengths"]) == cfg.test_subset
    assert sum(b["n"] for b in final["length_bins"]) == cfg.test_subset
    assert abs(final["test_correct"].count("1") / cfg.test_subset - rec["metrics"][-1]["test_acc"]) < 1e-9
    json.dumps(rec)


@pytest.mark.parametrize("task", LRA_TASKS)
def test_smoke_settings_load(task, tmp_path, monkeypatch):
    from polyattn.tasks import get_task

    monkeypatch.setenv("POLYATTN_CACHE", str(tmp_path))
    cfg = lra("smoke", tasks=(task,))[0]
    try:
        data = get_task("lra").load(cfg, 1, 0)
    except Exception as exc:   # the Fashion-MNIST package may be missing on a CI machine
        if type(exc).__name__ == "DatasetMissing":
            pytest.skip(str(exc))
        raise
    assert len(data.train) == cfg.train_subset and len(data.test) == cfg.test_subset


def test_paper_configs_read_user_supplied_data_from_data_root(tmp_path):
    from dataclasses import replace

    from polyattn.data.errors import DatasetMissing
    from polyattn.tasks import get_task
    from polyattn.tasks.lra import data_options

    by_task = {task_of(c): c for c in lra("paper")}
    text = replace(by_task["text"], data_root=str(tmp_path))
    assert data_options(text)["root"] == str(tmp_path)
    assert "root" not in data_options(replace(by_task["listops"], data_root=str(tmp_path)))  # generated: no files
    with pytest.raises(DatasetMissing, match=str(tmp_path)):
        get_task("lra").load(replace(text, train_subset=4, test_subset=4), 1, 0)


def test_pathfinder_budget_grid_scales_up_the_book_pathfinder():
    from polyattn.experiments.lra import PATHFINDER_BUDGET, PATHFINDER_BUDGET_SCALE, budget_label, pathfinder_budget

    configs = pathfinder_budget("book")
    grid = next(c for c in lra("book", [0]) if task_of(c) == "pathfinder" and c.activation == "softmax")
    assert len(configs) == 3 * len(PATHFINDER_BUDGET) and len({(c.hash, c.seed) for c in configs}) == len(configs)
    assert [budget_label(c) for c in configs[:3]] == [label for label, _, _ in PATHFINDER_BUDGET]
    for c in configs:
        assert c.train_subset == PATHFINDER_BUDGET_SCALE["train_subset"] > grid.train_subset
        assert c.epochs == PATHFINDER_BUDGET_SCALE["epochs"] and c.lr == grid.lr and c.activation == "softmax"
        assert c.options["data"]["size"] == grid.options["data"]["size"]
    nodist = [c for c in configs if budget_label(c).endswith("no distractors")]
    assert all(c.options["data"]["num_distractors"] == 0 and c.model == "nystromformer" for c in nodist)
    assert {c.model for c in configs if budget_label(c) == "CNN reference"} == {"pixel_cnn"}
    with pytest.raises(ValueError, match="not a config of the Pathfinder budget check"):
        budget_label(grid.replace(options={**grid.options, "data": {"num_distractors": 3}}))


def test_pixel_cnn_classifies_square_images_and_refuses_what_it_cannot_read():
    import torch

    from polyattn.models.seq_classifier import PixelCNN

    model = PixelCNN(324, 2)
    tokens = torch.randint(0, 256, (5, 324))
    assert model(tokens, torch.ones(5, 324, dtype=torch.bool)).shape == (5, 2)
    decay, keep = model.decay_groups()
    assert all(p.ndim >= 2 for p in decay) and all(p.ndim == 1 for p in keep) and decay and keep
    with pytest.raises(ValueError, match="not a square number"):
        PixelCNN(300, 2)
    with pytest.raises(ValueError, match="padding"):
        mask = torch.ones(5, 324, dtype=torch.bool)
        mask[0, -1] = False
        model(tokens, mask)
    with pytest.raises(ValueError, match="paired tasks"):
        model((tokens, tokens))


def test_smoke_pathfinder_budget_runs_the_cnn(tmp_path, monkeypatch):
    from polyattn.experiments.lra import budget_label, pathfinder_budget
    from polyattn.runs import load_or_run

    monkeypatch.setenv("POLYATTN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLYATTN_RESULTS", str(tmp_path / "results"))
    cfg = next(c for c in pathfinder_budget("smoke", [0]) if budget_label(c) == "CNN reference")
    rec = load_or_run(cfg, progress=False)
    assert rec["status"] == "ok" and len(rec["final"]["test_pred"]) == cfg.test_subset
    assert budget_label(rec["config"]) == "CNN reference"
