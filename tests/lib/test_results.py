import json
import warnings

import pytest

from polyattn import results, runs
from polyattn.config import TrainConfig

REPO = results.REPO_ROOT


def _config(**kw):
    return TrainConfig(experiment="unit", preset="smoke", **kw)


def _fake_runner(calls):
    def runner(config, **kw):
        calls.append(config)
        return {"schema": 1, "experiment": config.experiment, "config": results.config_dict(config),
                "config_hash": config.hash, "seed": config.seed, "preset": config.preset, "status": "ok",
                "diverged_step": None, "metrics": [{"epoch": 1, "test_acc": 0.5 + 0.1 * config.seed}],
                "probes": [], "provenance": results.provenance()}
    return runner


def test_hash_ignores_seed_device_threads_but_not_the_computation():
    a = _config(seed=0)
    assert a.hash == _config(seed=3, device="cuda", threads=2).hash
    assert a.hash != _config(activation="poly:p=3").hash
    assert a.hash != _config(lr=0.5).hash
    # the canonical spec is what is hashed
    assert _config(activation="poly:p=3,c=2/28").hash == _config(activation="poly:p=3,c=1/14").hash


def test_load_or_run_stores_then_loads(tmp_path):
    calls = []
    c = _config(seed=1)
    r1 = runs.load_or_run(c, root=tmp_path, runner=_fake_runner(calls))
    r2 = runs.load_or_run(c, root=tmp_path, runner=_fake_runner(calls))
    assert len(calls) == 1 and r1["metrics"] == r2["metrics"]
    path = results.record_path(c, tmp_path)
    assert path.name == f"{c.hash}-seed1.json"
    rec = json.loads(path.read_text())
    for key in ("git_commit", "git_dirty", "packages", "hardware", "started"):
        assert key in rec["provenance"]
    runs.load_or_run(c, root=tmp_path, runner=_fake_runner(calls), recompute=True)
    assert len(calls) == 2


@pytest.mark.parametrize("damage", ["truncate", "garbage", "wrong_schema", "other_config"])
def test_corrupt_record_is_detected_and_recomputed(tmp_path, damage):
    calls = []
    c = _config()
    runs.load_or_run(c, root=tmp_path, runner=_fake_runner(calls))
    path = results.record_path(c, tmp_path)
    text = path.read_text()
    if damage == "truncate":
        path.write_text(text[: len(text) // 2])
    elif damage == "garbage":
        path.write_bytes(b"\x00\xff not json")
    elif damage == "wrong_schema":
        path.write_text(text.replace('"schema": 1', '"schema": 99'))
    else:
        rec = json.loads(text)
        rec["config_hash"] = "0" * 12
        path.write_text(json.dumps(rec))
    with pytest.warns(UserWarning, match="invalid"):
        rec = runs.load_or_run(c, root=tmp_path, runner=_fake_runner(calls))
    assert len(calls) == 2 and rec["status"] == "ok"
    results.load(path, c)  # repaired on disk


def test_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "x" / "r.json"
    results.write_atomic(path, {"a": 1})

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(results.json, "dump", boom)
    with pytest.raises(OSError):
        results.write_atomic(path, {"a": 2})
    assert json.loads(path.read_text()) == {"a": 1}
    assert list(path.parent.iterdir()) == [path]  # no temp files left behind


def test_smoke_records_never_land_in_data_results(monkeypatch):
    monkeypatch.delenv("POLYATTN_RESULTS", raising=False)
    assert "smoke-results" in str(results.results_root("smoke"))
    assert str(results.results_root("book")).endswith("data/results")


def test_load_or_run_all_and_load_records(tmp_path):
    calls = []
    configs = [_config(seed=s) for s in range(3)]
    recs = runs.load_or_run_all(configs, root=tmp_path, runner=_fake_runner(calls))
    assert [r["seed"] for r in recs] == [0, 1, 2] and len(calls) == 3
    runs.load_or_run_all(configs, root=tmp_path, runner=_fake_runner(calls))
    assert len(calls) == 3
    (tmp_path / "unit" / "broken.json").write_text("{")
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert len(results.load_records("unit", root=tmp_path)) == 3


def test_page_records_read_stored_runs_at_book_and_run_the_grid_under_smoke(tmp_path):
    calls = []
    configs = [_config(seed=s) for s in range(3)]
    assert runs.page_records(configs, "book", root=tmp_path, runner=_fake_runner(calls)) == [] and calls == []
    runs.load_or_run(configs[1], root=tmp_path, runner=_fake_runner(calls))
    assert [r["seed"] for r in runs.page_records(configs, "book", root=tmp_path)] == [1] and len(calls) == 1
    recs = runs.page_records(configs, "smoke", root=tmp_path, runner=_fake_runner(calls), progress=False)
    assert [r["seed"] for r in recs] == [0, 1, 2] and len(calls) == 3
    runs.page_records(configs, "book", recompute=True, root=tmp_path, runner=_fake_runner(calls), progress=False)
    assert len(calls) == 6


@pytest.mark.committed
def test_every_committed_record_keeps_its_hash():
    """The hash of each committed record, recomputed from its stored config, is its file's name."""
    paths = sorted((REPO / "data" / "results").glob("*/*.json"))
    assert len(paths) >= 114
    for path in paths:
        rec = json.loads(path.read_text())
        assert results.config_hash(rec["config"]) == rec["config_hash"], path
        assert path.name == f"{rec['config_hash']}-seed{rec['seed']}.json"
        # and through the dataclass, as load_or_run computes it
        assert TrainConfig.from_dict(rec["config"]).hash == rec["config_hash"], path


def test_fields_added_at_their_default_leave_the_hash_alone():
    base = _config()
    legacy = {k: v for k, v in results.config_dict(base).items()
              if k not in ("task", "optimizer", "lbfgs_max_iter", "lbfgs_from_epoch", "eval_every", "options")}
    assert results.config_hash(legacy) == base.hash
    assert _config(optimizer="lbfgs").hash != base.hash
    assert _config(options={"max_len": 64}).hash != base.hash
    assert _config(eval_every=2).hash != base.hash


def test_unknown_config_field_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown config field"):
        TrainConfig.from_dict({"activation": "softmax", "learning_rate": 1})


def test_old_records_describe_themselves_when_loaded():
    path = next((REPO / "data" / "results" / "vit_table1").glob("*.json"))
    rec = results.load(path, evidence=True)
    cfg = rec["config"]
    assert rec["task"] == "images"
    assert rec["seq_lens"] == {"seq_len": (cfg["image_size"] // cfg["patch_size"]) ** 2 + 1}
    spec = {m["name"]: m for m in rec["metrics_spec"]}
    assert spec["test_acc"]["higher_is_better"] and not spec["test_loss"]["higher_is_better"]


def test_dirty_book_records_are_not_evidence(tmp_path):
    calls = []
    c = TrainConfig(experiment="unit", preset="book")
    rec = _fake_runner(calls)(c)
    rec["provenance"]["git_dirty"] = True
    results.validate(rec, c)                       # well-formed
    with pytest.raises(results.InvalidRecord, match="dirty tree"):
        results.validate(rec, c, evidence=True)    # but not evidence
    rec["provenance"]["git_dirty"] = False
    results.validate(rec, c, evidence=True)
    smoke = _fake_runner(calls)(_config())
    smoke["provenance"]["git_dirty"] = True
    results.validate(smoke, evidence=True)         # smoke records are never evidence anyway


def test_storage_imports_no_training_code():
    import subprocess
    import sys

    code = ("import sys, polyattn.results, polyattn.config; "
            "print(any(m in sys.modules for m in ('polyattn.train', 'polyattn.runs')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
