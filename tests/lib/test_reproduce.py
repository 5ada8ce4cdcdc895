"""The rule for comparing a rerun with committed numbers: exact on the record's own machine,
within the measured instruction-set spread times a factor elsewhere."""
import json

import pytest
import torch

from polyattn import reproduce, results


def _record(cpu, capability, **first):
    metrics = {"step": 62, "lr": 0.002, "train_loss": 2.0, "test_loss": 1.5, "train_acc": 0.5, "test_acc": 0.25}
    return {"metrics": [{**metrics, **first}],
            "provenance": {"hardware": {"cpu": cpu, "cpu_capability": capability}}}


def _measured(loss=1e-5, acc=5e-4):
    return {"spread_between_instruction_sets": {"train_loss": loss / 10, "test_loss": loss, "train_acc": 0.0,
                                                "test_acc": acc}}


def test_the_tolerance_is_the_factor_times_the_largest_spread_of_each_kind():
    tol = reproduce.tolerance(_measured(loss=2e-5, acc=5e-4))
    assert tol["train_loss"] == tol["test_loss"] == pytest.approx(reproduce.FACTOR * 2e-5)
    assert tol["train_acc"] == tol["test_acc"] == pytest.approx(reproduce.FACTOR * 5e-4)


def test_on_the_records_own_machine_the_rerun_must_be_exact():
    rec = _record(results.cpu_model(), torch.backends.cpu.get_cpu_capability())
    got = dict(rec["metrics"][0])
    assert reproduce.mismatches(got, rec) == []
    got["test_loss"] = 1.5 * (1 + 1e-7)
    assert [m.split(":")[0] for m in reproduce.mismatches(got, rec)] == ["test_loss"]


def test_on_another_instruction_set_the_measured_tolerance_applies(monkeypatch):
    monkeypatch.setattr(reproduce, "stored_spread", lambda path=None: _measured(loss=1e-5, acc=5e-4))
    rec = _record(results.cpu_model(), "SOME_OTHER_ISA")
    got = {**rec["metrics"][0], "test_loss": 1.5 * (1 + 9e-5), "test_acc": 0.25 + 0.004}
    assert reproduce.mismatches(got, rec) == []
    got["test_loss"] = 1.5 * (1 + 2e-4)
    got["train_acc"] = 0.5 + 0.006
    assert sorted(m.split(":")[0] for m in reproduce.mismatches(got, rec)) == ["test_loss", "train_acc"]
    got = {**rec["metrics"][0], "step": 61}
    assert [m.split(":")[0] for m in reproduce.mismatches(got, rec)] == ["step"]


def test_the_spread_compares_every_pair_of_runs():
    runs = {"a": {"train_loss": 1.0, "test_loss": 2.0, "train_acc": 0.5, "test_acc": 0.1},
            "b": {"train_loss": 1.001, "test_loss": 2.0, "train_acc": 0.5, "test_acc": 0.1},
            "c": {"train_loss": 1.0, "test_loss": 2.0, "train_acc": 0.52, "test_acc": 0.1}}
    s = reproduce.spread(runs)
    assert s["train_loss"] == pytest.approx(1e-3, rel=1e-3) and s["train_acc"] == pytest.approx(0.02)
    assert s["test_loss"] == s["test_acc"] == 0.0


def test_the_stored_measurement_names_its_machine_and_instruction_sets():
    measured = reproduce.stored_spread()
    assert {"default", "avx2", "native"} <= set(measured["runs"])
    assert len({r["capability"] for r in measured["runs"].values()}) == len(measured["runs"])
    committed = json.loads((reproduce.REPO_ROOT / measured["record"]).read_text())
    assert measured["record_cpu"] == committed["provenance"]["hardware"]["cpu"] == measured["cpu"]


def test_a_missing_measurement_says_how_to_make_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m polyattn tolerance --measure"):
        reproduce.stored_spread(tmp_path / "nope.json")
