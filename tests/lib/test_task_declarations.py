"""What the tasks declare from a config alone (:mod:`polyattn.task_declarations`): the tasks answer
with it, the committed records agree with it, and records written before they stored their
lengths and metrics are described from it without torch."""
import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from polyattn import results, task_declarations
from polyattn.config import TrainConfig
from polyattn.tasks import get_task

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"
FIELDS = ("task", "seq_lens", "metrics_spec")


def _records():
    out = []
    for path in sorted(RESULTS.rglob("*.json")):
        try:
            record = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("config"), dict):
            out.append((path, record))
    return out


RECORDS = _records()
OLD = [(p, r) for p, r in RECORDS if not all(f in r for f in FIELDS)]


def test_the_committed_records_include_old_ones_of_the_image_task():
    assert len(OLD) > 100 and all("task" not in r for _, r in OLD)


def test_old_records_are_described_as_their_task_describes_them():
    for path, record in OLD:
        config = TrainConfig.from_dict(record["config"])
        task = get_task(record.get("task", "images"))
        described = results.describe(copy.deepcopy(record))
        assert described["task"] == task.name, path
        assert described["seq_lens"] == task.seq_lens(config), path
        assert described["metrics_spec"] == [m.as_dict() for m in task.metrics(config)], path


def test_every_committed_record_agrees_with_its_task_s_declarations():
    checked = 0
    for path, record in RECORDS:
        if not all(f in record for f in FIELDS):
            continue
        config = TrainConfig.from_dict(record["config"])
        lens = task_declarations.seq_lens(record["task"], config)
        if lens is not None:
            assert lens == {k: int(v) for k, v in record["seq_lens"].items()}, path
            checked += 1
        declared = [m.as_dict() for m in task_declarations.metrics(record["task"], config)]
        assert declared == record["metrics_spec"], path
    assert checked > 300


def test_describing_every_committed_record_imports_no_task_model_or_torch():
    code = ("import json, pathlib, sys\nfrom polyattn import results\n"
            f"for p in sorted(pathlib.Path({str(RESULTS)!r}).rglob('*.json')):\n"
            "    try:\n        r = json.loads(p.read_text())\n    except ValueError:\n        continue\n"
            "    if isinstance(r, dict) and isinstance(r.get('config'), dict):\n        results.describe(r)\n"
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith(('polyattn.tasks', 'polyattn.models',"
            " 'polyattn.data'))))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "lib"), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


CONFIGS = [
    TrainConfig(),
    TrainConfig(model="mini", image_size=32, patch_size=8, pool="mean"),
    TrainConfig(task="charlm", dataset="synthetic", options={"context": 64, "eval_multiples": [1, 3]}),
    TrainConfig(task="charlm", dataset="synthetic"),
    TrainConfig(task="mqar", dataset="mqar", batch_size=8),
    TrainConfig(task="mqar", dataset="mqar", batch_size=8,
                options={"train_mix": [[32, 2, 64]], "test_sets": [[32, 2], [32, 4], [64, 8]], "vocab_size": 128}),
    TrainConfig(task="lra", dataset="listops", options={"max_len": 300}),
    TrainConfig(task="detection", dataset="scenes", image_size=64, patch_size=8),
    TrainConfig(task="pde", dataset="convection", model="micro"),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.task}-{c.model}-{sorted(c.options)}")
def test_the_tasks_answer_with_the_declarations(config):
    task = get_task(config.task)
    assert task_declarations.metrics(config.task, config) == task.metrics(config)
    declared = task_declarations.seq_lens(config.task, config)
    assert declared is None and config.task == "pde" or declared == task.seq_lens(config) == config.seq_lens


def test_lengths_only_the_task_knows_are_left_to_it():
    assert task_declarations.seq_lens("lra", TrainConfig(task="lra", dataset="listops")) is None
    assert task_declarations.seq_lens("images", {"model": "timm:deit_micro", "image_size": 32, "patch_size": 4}) is None
    assert task_declarations.seq_lens("toy_unknown", TrainConfig()) is None
    assert task_declarations.metrics("toy_unknown", TrainConfig()) is None


def test_a_record_of_a_task_without_declarations_is_described_by_the_task(monkeypatch):
    from polyattn import tasks

    class Planted:
        name = "planted_task"

        def metrics(self, config):
            return [task_declarations.Metric("score", "", True, 1.0, "planted score")]

        def seq_lens(self, config):
            return {"seq_len": 17}

    monkeypatch.setitem(tasks.TASKS, "planted_task", Planted())
    record = {"config": {**TrainConfig(task="planted_task").__dict__}, "task": "planted_task"}
    out = results.describe(record)
    assert out["seq_lens"] == {"seq_len": 17} and out["metrics_spec"][0]["name"] == "score"
