"""The rule for comparing a rerun with committed numbers: a whole epoch exactly on the record's own
machine; the first steps within a measured tolerance on any machine."""
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


def test_the_epoch_tolerance_is_the_factor_times_the_largest_spread_of_each_kind():
    tol = reproduce.tolerance(_measured(loss=2e-5, acc=5e-4))
    assert tol["train_loss"] == tol["test_loss"] == pytest.approx(reproduce.FACTOR * 2e-5)
    assert tol["train_acc"] == tol["test_acc"] == pytest.approx(reproduce.FACTOR * 5e-4)


def test_on_the_records_own_machine_the_rerun_must_be_exact():
    rec = _record(results.cpu_model(), torch.backends.cpu.get_cpu_capability())
    got = dict(rec["metrics"][0])
    assert reproduce.mismatches(got, rec) == []
    got["test_loss"] = 1.5 * (1 + 1e-7)
    assert [m.split(":")[0] for m in reproduce.mismatches(got, rec)] == ["test_loss"]


def test_a_whole_epoch_is_not_compared_on_another_instruction_set():
    rec = _record(results.cpu_model(), "SOME_OTHER_ISA")
    with pytest.raises(ValueError, match="short_mismatches"):
        reproduce.mismatches(dict(rec["metrics"][0]), rec)


def _short(losses, test_loss=2.0, test_acc=0.2):
    return {"steps": len(losses), "step_losses": list(losses), "test_loss": test_loss, "test_acc": test_acc}


def test_the_short_tolerance_sits_halfway_between_noise_and_signal_on_a_log_scale():
    tol = reproduce.short_tolerance({"loss": 1e-6, "accuracy": 0.0}, {"loss": 1e-2, "accuracy": 0.1}, 1 / 2000)
    assert tol["loss"] == pytest.approx((reproduce.FACTOR * 1e-6 * 1e-2) ** 0.5)
    assert tol["accuracy"] == pytest.approx(reproduce.FACTOR / 2000)
    # a spread measured as zero is taken as float32 rounding, never as exactness
    zero = reproduce.short_tolerance({"loss": 0.0, "accuracy": 0.0}, {"loss": 1e-2, "accuracy": 0.1}, 1 / 2000)
    assert zero["loss"] == pytest.approx((reproduce.FACTOR * reproduce.FLOAT32_ROUNDING * 1e-2) ** 0.5)


def test_noise_and_signal_too_close_for_a_tolerance_are_refused():
    with pytest.raises(ValueError, match="cannot separate rounding from a real change"):
        reproduce.short_tolerance({"loss": 1e-5, "accuracy": 0.0}, {"loss": 1e-3, "accuracy": 0.1}, 1 / 2000)


def test_the_short_comparison_takes_the_worst_step_and_the_test_loss():
    ref = _short([2.0, 2.1, 2.2])
    assert reproduce.short_difference(ref, _short([2.0, 2.1 * (1 + 3e-5), 2.2]))["loss"] == pytest.approx(3e-5, rel=1e-3)
    assert reproduce.short_difference(ref, _short([2.0, 2.1, 2.2], test_loss=2.0 * (1 + 4e-5)))["loss"] == \
        pytest.approx(4e-5, rel=1e-3)
    measured = {"reference": ref, "tolerance": {"loss": 1e-5, "accuracy": 0.005}}
    assert reproduce.short_mismatches(_short([2.0, 2.1, 2.2 * (1 + 5e-6)]), measured) == []
    assert [m.split(":")[0] for m in reproduce.short_mismatches(_short([2.0, 2.1, 2.2 * (1 + 5e-5)]), measured)] == \
        ["losses"]
    assert [m.split(":")[0] for m in reproduce.short_mismatches(_short([2.0, 2.1, 2.2], test_acc=0.21), measured)] \
        == ["test_acc"]
    assert [m.split(":")[0] for m in reproduce.short_mismatches(_short([2.0, 2.1]), measured)][0] == "steps"


def test_the_stored_short_measurement_separates_rounding_from_a_real_change():
    measured = reproduce.stored_short()
    assert {"default", "avx2", "native"} <= set(measured["runs"])
    assert len({r["capability"] for r in measured["runs"].values()}) == len(measured["runs"])
    assert measured["steps"] == reproduce.SHORT_STEPS == len(measured["reference"]["step_losses"])
    noise = reproduce.FACTOR * max(measured["spread_between_instruction_sets"]["loss"], reproduce.FLOAT32_ROUNDING)
    tol, signal = measured["tolerance"]["loss"], measured["effect_of_one_lr_step"]["loss"]
    assert noise * reproduce.SHORT_HEADROOM <= tol <= signal / reproduce.SHORT_HEADROOM
    committed = json.loads((reproduce.REPO_ROOT / measured["record"]).read_text())
    assert measured["config_hash"] == committed["config_hash"]
    assert measured["record_cpu"] == committed["provenance"]["hardware"]["cpu"] == measured["cpu"]


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
    with pytest.raises(FileNotFoundError, match="python -m polyattn tolerance --measure"):
        reproduce.stored_short(tmp_path / "nope.json")


def test_the_readme_states_the_stored_measurements():
    text = (reproduce.REPO_ROOT / "README.md").read_text()
    block = text.split(reproduce.README_START, 1)[1].split(reproduce.README_END, 1)[0].strip()
    assert block == reproduce.readme_block().strip()
    assert reproduce.replace_readme_block(text, reproduce.readme_block()) == text


def test_a_readme_without_the_block_says_what_to_add():
    with pytest.raises(ValueError, match="no tolerances block"):
        reproduce.replace_readme_block("# nothing here\n", "x")
