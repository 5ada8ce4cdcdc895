import json
import warnings

import pytest

from polyattn import results
from polyattn.train import TrainConfig


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
    r1 = results.load_or_run(c, root=tmp_path, runner=_fake_runner(calls))
    r2 = results.load_or_run(c, root=tmp_path, runner=_fake_runner(calls))
    assert len(calls) == 1 and r1["metrics"] == r2["metrics"]
    path = results.record_path(c, tmp_path)
    assert path.name == f"{c.hash}-seed1.json"
    rec = json.loads(path.read_text())
    for key in ("git_commit", "git_dirty", "packages", "hardware", "started"):
        assert key in rec["provenance"]
    results.load_or_run(c, root=tmp_path, runner=_fake_runner(calls), recompute=True)
    assert len(calls) == 2


@pytest.mark.parametrize("damage", ["truncate", "garbage", "wrong_schema", "other_config"])
def test_corrupt_record_is_detected_and_recomputed(tmp_path, damage):
    calls = []
    c = _config()
    results.load_or_run(c, root=tmp_path, runner=_fake_runner(calls))
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
        rec = results.load_or_run(c, root=tmp_path, runner=_fake_runner(calls))
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
    recs = results.load_or_run_all(configs, root=tmp_path, runner=_fake_runner(calls))
    assert [r["seed"] for r in recs] == [0, 1, 2] and len(calls) == 3
    results.load_or_run_all(configs, root=tmp_path, runner=_fake_runner(calls))
    assert len(calls) == 3
    (tmp_path / "unit" / "broken.json").write_text("{")
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert len(results.load_records("unit", root=tmp_path)) == 3
