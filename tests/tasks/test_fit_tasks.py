"""``fit`` beyond images: toy tasks with padding masks and L-BFGS, resume, divergence, and the
reproduction of a committed book record."""
import json

import pytest
import torch
from support.toy_tasks import register_toy_tasks

from polyattn import activations, probes, reproduce, results
from polyattn.config import TrainConfig
from polyattn.models.blocks import Encoder
from polyattn.tasks import get_task
from polyattn.train import Interrupted, checkpoint_path, fit

register_toy_tasks()
REPO = results.REPO_ROOT


def _seq(**kw):
    base = dict(experiment="unit_fit", preset="smoke", task="toy_seq", epochs=3, batch_size=32, lr=3e-3,
                warmup_epochs=0.5, threads=1)
    return TrainConfig(**{**base, **kw})


def _reg(**kw):
    base = dict(experiment="unit_fit", preset="smoke", task="toy_regression", optimizer="lbfgs", lr=1.0,
                epochs=6, batch_size=64, warmup_epochs=0.0, threads=1)
    return TrainConfig(**{**base, **kw})


def test_unknown_task_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown task 'nope'"):
        get_task("nope")


def test_sequence_task_trains_and_describes_itself():
    rec = fit(_seq(), progress=False)
    assert rec["status"] == "ok" and rec["task"] == "toy_seq"
    assert rec["seq_lens"] == {"seq_len": 12}
    assert [m["name"] for m in rec["metrics_spec"]] == ["test_acc"]
    assert len(rec["metrics"]) == 3 and {"train_loss", "test_acc", "lr"} <= set(rec["metrics"][-1])
    results.validate(rec)


def test_records_say_whether_the_compiled_extension_ran(monkeypatch):
    from polyattn.kernels import compiled

    monkeypatch.setenv("POLYATTN_COMPILED", "0")
    assert fit(_seq(seed=3), progress=False)["provenance"]["compiled_extension"] == "switched off"
    monkeypatch.setenv("POLYATTN_COMPILED", "1")
    monkeypatch.setattr(compiled, "_STATE", {})
    assert fit(_seq(seed=3), progress=False)["provenance"]["compiled_extension"] == "not loaded"
    monkeypatch.setattr(compiled, "_STATE", {"module": object()})
    assert fit(_seq(seed=3), progress=False)["provenance"]["compiled_extension"] == "loaded"
    monkeypatch.setattr(compiled, "_STATE", {"error": "OSError: no g++"})
    assert compiled.status() == "failed: OSError: no g++"


@pytest.mark.parametrize("make", [_seq, _reg])
def test_resumed_run_matches_uninterrupted(make):
    cfg = make(seed=5)
    full = fit(cfg, progress=False, resume=False)
    checkpoint_path(cfg).unlink(missing_ok=True)
    with pytest.raises(Interrupted):
        fit(cfg, progress=False, stop_after_epoch=2)
    assert checkpoint_path(cfg).exists()
    resumed = fit(cfg, progress=False)
    assert not checkpoint_path(cfg).exists()
    strip = lambda ms: [{k: v for k, v in m.items() if k != "wall_s"} for m in ms]  # noqa: E731
    assert strip(resumed["metrics"]) == strip(full["metrics"])


def test_sequence_divergence_is_recorded_with_its_step():
    rec = fit(_seq(options={"poison_epoch": 1}), progress=False)
    assert rec["status"] == "diverged" and rec["diverged_step"] == 4      # 128 / 32 steps per epoch
    assert len(rec["metrics"]) == 1
    results.validate(rec)


def test_lbfgs_closure_step_reduces_the_error():
    rec = fit(_reg(), progress=False)
    errs = [m["test_rmse"] for m in rec["metrics"]]
    assert rec["status"] == "ok" and len(errs) == 6
    assert errs[-1] < 0.2 * errs[0]
    assert rec["metrics_spec"][0]["higher_is_better"] is False


def test_lbfgs_divergence_inside_the_line_search_is_recorded():
    rec = fit(_reg(options={"infinite_below": 0.05}), progress=False)
    assert rec["status"] == "diverged" and isinstance(rec["diverged_step"], int)


def test_adamw_then_lbfgs_switches_optimiser():
    rec = fit(_reg(optimizer="adamw_lbfgs", lbfgs_from_epoch=2, lr=1e-2), progress=False)
    assert rec["status"] == "ok"
    # AdamW's schedule sets lr per step; L-BFGS keeps the configured lr
    assert rec["metrics"][-1]["lr"] == pytest.approx(1e-2)
    with pytest.raises(ValueError, match="lbfgs_from_epoch"):
        _reg(optimizer="adamw_lbfgs", lbfgs_from_epoch=0)


def test_probes_through_fit_on_a_padded_task():
    rec = fit(_seq(epochs=1, probe_every=2, probe_metrics=("attn_fro", "attn_first_token", "attn_entropy")),
              progress=False)
    metrics = {r["metric"] for r in rec["probes"]}
    assert {"attn_fro", "attn_fro_over_sqrt_n", "attn_first_token", "attn_entropy"} <= metrics


@pytest.mark.parametrize("spec", activations.BOOK_SPECS)
def test_padded_keys_get_zero_weight_through_the_blocks(spec):
    """A key-padding mask given to the encoder reaches every layer's attention."""
    torch.manual_seed(0)
    enc = Encoder(16, 2, 2, spec)
    x = torch.randn(3, 7, 16) * 3
    kpm = torch.ones(3, 7, dtype=torch.bool)
    kpm[0, 4:] = False
    kpm[2, 1:] = False
    seen = []
    with probes.capture(enc, lambda i, s, out: seen.append(s.weights)):
        enc(x, key_padding_mask=kpm)
    assert len(seen) == 2
    for w in seen:
        assert torch.all(w[0, :, :, 4:] == 0) and torch.all(w[2, :, :, 1:] == 0)
        assert torch.any(w[1] != 0)


def test_causal_flag_reaches_the_attention():
    torch.manual_seed(0)
    enc = Encoder(16, 1, 2, "poly:p=3")
    seen = []
    with probes.capture(enc, lambda i, s, out: seen.append(s.weights)):
        enc(torch.randn(2, 5, 16), causal=True)
    assert torch.all(seen[0].triu(diagonal=1) == 0)


@pytest.mark.committed
def test_a_committed_book_record_is_reproduced_exactly_on_its_own_machine():
    """One epoch of the cheapest committed book record computed on this CPU model and instruction
    set gives its first-epoch metrics bit for bit.  Under another instruction set (the second pass
    of ``.ci/run``) or on a CPU model with no records there is no such record; the short
    reproduction below is the check there."""
    try:
        _, rec = reproduce.cheapest_record(results.cpu_model(), capability=torch.backends.cpu.get_cpu_capability())
    except LookupError as exc:
        pytest.skip(f"{exc}: the first-steps reproduction checks this machine")
    got = reproduce.first_epoch(rec)
    assert reproduce.mismatches(got, rec) == []


@pytest.mark.committed
def test_the_first_steps_of_a_committed_record_are_reproduced_on_any_cpu():
    """The first ``SHORT_STEPS`` steps of a committed record's configuration give the stored
    reference within the measured tolerance, on any CPU and instruction set
    (``data/tolerances/first_steps.json``, ``python -m polyattn tolerance``)."""
    measured = reproduce.stored_short()
    path, rec = reproduce.short_record()
    assert measured["config_hash"] == rec["config_hash"] and measured["record"].endswith(path.name)
    got = reproduce.first_steps(rec)
    assert reproduce.short_mismatches(got, measured) == []


@pytest.mark.slow
def test_the_short_reproduction_catches_a_learning_rate_schedule_one_step_off():
    """The check is strict enough to catch a real change to the training loop: the same steps with
    the learning-rate schedule read one step ahead fail it."""
    _, rec = reproduce.short_record()
    got = reproduce.first_steps(rec, lr_shift=1)
    assert any(m.startswith("losses") for m in reproduce.short_mismatches(got))


def test_records_name_the_instruction_set_of_their_cpu_kernels():
    assert results.hardware()["cpu_capability"] == torch.backends.cpu.get_cpu_capability()


def test_character_lm_trains_evaluates_generates_and_measures_sinks():
    cfg = TrainConfig(experiment="unit_fit", preset="smoke", task="charlm", dataset="synthetic", model="micro",
                      activation="poly:p=3", epochs=2, batch_size=16, lr=3e-3, warmup_epochs=0.5, threads=1,
                      options={"context": 32, "windows": 160, "eval_windows": 8, "sample_chars": 30})
    rec = fit(cfg, progress=False)
    assert rec["status"] == "ok" and rec["task"] == "charlm"
    assert rec["seq_lens"] == {"seq_len": 32, "eval_len_x1": 32, "eval_len_x2": 64, "eval_len_x4": 128}
    last = rec["metrics"][-1]
    for name in ("val_bpc", "test_bpc", "test_bpc_x2", "test_bpc_x4"):
        assert 0 < last[name] < 8
    assert all(not m["higher_is_better"] for m in rec["metrics_spec"])
    # a model that learned something: better than the uniform code over the vocabulary
    assert last["val_bpc"] < rec["metrics"][0]["val_bpc"] or last["val_bpc"] < 4.0
    final = rec["final"]
    assert len(final["sample"]) == 30 and 0 <= final["sinks"]["sink_rate"] <= 1
    amap = final["attention_map"]
    weights = torch.tensor(amap["weights"])
    assert weights.shape == (4, 32, 32) and len(amap["text"]) == 32
    assert (weights.triu(1) == 0).all() and (weights.tril() != 0).any()     # causal: nothing above the diagonal
    json.dumps(rec)   # the whole record is storable


@pytest.mark.parametrize("dataset, n_mode", [("listops", "row"), ("listops", "padded"), ("retrieval", "row")])
def test_lra_tasks_train_with_padding_masks(dataset, n_mode, tmp_path, monkeypatch):
    monkeypatch.setenv("POLYATTN_CACHE", str(tmp_path))
    data_opts = {"listops": {"min_length": 20, "max_length": 60, "max_depth": 4},
                 "retrieval": {"min_bytes": 40, "max_bytes": 80}}[dataset]
    cfg = TrainConfig(experiment="unit_fit", preset="smoke", task="lra", dataset=dataset, model="tiny",
                      activation="poly:p=3", n_mode=n_mode, train_subset=64, test_subset=32, epochs=1, batch_size=16,
                      lr=1e-3, warmup_epochs=0.5, threads=1, options={"val": 16, "data": data_opts})
    rec = fit(cfg, progress=False)
    assert rec["status"] == "ok" and rec["task"] == "lra"
    assert {"test_acc", "val_acc", "test_loss"} <= set(rec["metrics"][-1])
    assert rec["seq_lens"]["seq_len"] >= 40


@pytest.mark.parametrize("model", ["micro", "pinn_micro"])
def test_physics_task_fits_with_lbfgs_and_keeps_the_field(model):
    cfg = TrainConfig(experiment="unit_fit", preset="smoke", task="pde", dataset="convection:beta=1", model=model,
                      activation="poly:p=3", optimizer="lbfgs", lr=1.0, lbfgs_max_iter=5, epochs=3, batch_size=1,
                      warmup_epochs=0.0, threads=1, options={"grid": [9, 9], "test_grid": [11, 11]})
    rec = fit(cfg, progress=False)
    assert rec["status"] in ("ok", "diverged")
    if rec["status"] == "ok":
        assert {"rMAE", "rRMSE", "loss_residual", "loss_initial", "loss_boundary"} <= set(rec["metrics"][-1])
        assert rec["metrics"][-1]["train_loss"] <= rec["metrics"][0]["train_loss"] + 1e-9
        assert len(rec["final"]["prediction"]) == 51 * 51
        assert ("attention" in rec["final"]) == (model == "micro")
    assert rec["seq_lens"] == {"seq_len": 5 if model == "micro" else 1}
    assert not any(m["higher_is_better"] for m in rec["metrics_spec"])


def test_physics_divergence_inside_lbfgs_is_recorded_with_its_step(monkeypatch):
    """A PDE loss that turns non-finite during the third L-BFGS step ends the run there."""
    import polyattn.physics as physics
    from polyattn.tasks.pde import PhysicsInformed

    epochs_started = []
    real_batches, real_loss = PhysicsInformed.batches, physics.pde_loss

    def batches(self, config, data, epoch, *args, **kwargs):
        epochs_started.append(epoch)
        return real_batches(self, config, data, epoch, *args, **kwargs)

    def pde_loss(*args, **kwargs):
        total, parts = real_loss(*args, **kwargs)
        return (total * float("inf"), parts) if epochs_started[-1] >= 2 else (total, parts)

    monkeypatch.setattr(PhysicsInformed, "batches", batches)
    monkeypatch.setattr(physics, "pde_loss", pde_loss)
    cfg = TrainConfig(experiment="unit_fit", preset="smoke", task="pde", dataset="convection:beta=1", model="micro",
                      activation="softmax", optimizer="lbfgs", lr=1.0, lbfgs_max_iter=3, epochs=5, batch_size=1,
                      warmup_epochs=0.0, threads=1, options={"grid": [7, 7], "test_grid": [9, 9]})
    rec = fit(cfg, progress=False, resume=False)
    assert rec["status"] == "diverged" and rec["diverged_step"] == 2
    assert [m["epoch"] for m in rec["metrics"]] == [1, 2] and "final" not in rec
    results.validate(rec)


@pytest.mark.parametrize("name", ["vit_converged", "vit_unclipped", "vit_norm_intervention", "vit_scale_long",
                                  "critique_powers", "vit_table2_converged", "vit_intervention_unclipped"])
def test_new_grids_build_and_their_smoke_configs_train(name, tmp_path, monkeypatch):
    from polyattn.experiments import GRIDS
    from polyattn.runs import load_or_run

    book = GRIDS[name]("book")
    assert len(book) >= 9 and len({c.hash for c in book}) == len({(c.activation, c.patch_size, c.train_subset)
                                                                    for c in book})
    assert all(c.preset == "book" and c.threads == 1 for c in book)
    smoke = GRIDS[name]("smoke", seeds=[0])
    monkeypatch.setenv("POLYATTN_RESULTS", str(tmp_path))
    rec = load_or_run(smoke[-1].replace(test_subset=64), progress=False)
    assert rec["status"] in ("ok", "diverged") and rec["metrics"]


def test_table2_at_the_converged_scale_differs_from_the_converged_tier_only_in_its_recipe():
    from dataclasses import asdict

    from polyattn.experiments import vit

    conv = {(c.activation, c.seed): c for c in vit.converged("book")}
    deit = vit.table2_converged("book")
    assert sorted({c.activation for c in deit}) == ["poly:p=3", "softmax"] and len(deit) == 10
    for c in deit:
        base = asdict(conv[(c.activation, c.seed)])
        differ = {k for k, v in asdict(c).items() if base[k] != v}
        assert differ == {"experiment", "augment", "drop_path"}
        assert (c.augment, c.drop_path, c.clip_grad) == ("deit", 0.1, 1.0)


def test_the_output_compensated_intervention_starts_as_softmax_and_lifts_the_bound():
    """8·softmax with the output projection started 8 times smaller computes softmax's function at
    initialisation (same seed), while its attention rows sum to 8."""
    from polyattn.experiments import vit
    from polyattn.qk_controls import scale_out_init

    cfg = vit.intervention_unclipped("smoke", seeds=[0])[0]
    assert cfg.activation == "softmax:k=8" and cfg.out_init_scale == 0.125 and cfg.clip_grad == 0.0
    from polyattn.models import build_vit

    x = torch.randn(2, 1, 28, 28, generator=torch.Generator().manual_seed(1))
    outs = []
    for spec, gain in (("softmax", 1.0), ("softmax:k=8", 0.125)):
        torch.manual_seed(0)
        model = build_vit("micro", image_size=28, patch_size=7, in_chans=1, num_classes=10, activation=spec).eval()
        if gain != 1.0:
            scale_out_init(model, gain)
        outs.append(model(x))
    assert torch.allclose(outs[0], outs[1], atol=1e-5)
    rows = activations.get(cfg.activation)(torch.randn(3, 5)).sum(-1)
    assert torch.allclose(rows, torch.full((3,), 8.0))
    # a config that leaves the field at its default keeps its old hash; one that sets it gets a new one
    from polyattn.config import hash_fields

    assert "out_init_scale" not in hash_fields(cfg.replace(out_init_scale=1.0))
    assert cfg.hash != cfg.replace(out_init_scale=1.0).hash


def test_ablated_attention_reads_the_mean_of_the_visible_values():
    from polyattn.attention import attention

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 6, 4, generator=g) for _ in range(3))
    kpm = torch.tensor([[True, True, True, True, False, False]])
    out = attention(q, k, v, "uniform", key_padding_mask=kpm)
    assert torch.allclose(out, v[:, :, :4].mean(2, keepdim=True).expand_as(out), atol=1e-6)
    causal = attention(q, k, v, "uniform", causal=True)
    assert torch.allclose(causal[0, 0, 2], v[0, 0, :3].mean(0), atol=1e-6)


def test_the_positive_control_grids_ablate_attention_in_the_softmax_runs():
    from polyattn.experiments import GRIDS

    for name, base in (("physics_ablated", "physics"), ("detection_ablated", "detection_proxy")):
        ablated = GRIDS[name]("book")
        softmax = {c.hash for c in GRIDS[base]("book") if c.activation == "softmax"}
        assert ablated and all(c.activation == "uniform" for c in ablated)
        for c in ablated:
            assert c.replace(experiment=base, activation="softmax").hash in softmax
