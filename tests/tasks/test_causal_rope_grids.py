"""The RoPE length sweep, its softmax probes and the dose-response: what the grids hold, that their smoke
configs train, the per-position test loss, and that the earlier causal grids keep their record names."""
from __future__ import annotations

import json
import math

import pytest
import torch

from polyattn.experiments import GRIDS, causal_rope

NEW_GRIDS = ["causal_length_probe", *(f"causal_length_probe_{s}" for s in causal_rope.PROBE_STEPS["book"]),
             "causal_length_rope", "causal_dose_response"]


def _steps(c):
    return c.epochs * (c.options["windows"] // c.batch_size)


@pytest.mark.parametrize("name", NEW_GRIDS)
def test_each_new_grid_trains_rope_models_at_4096_characters_a_step(name):
    book = GRIDS[name]("book")
    assert book and all(c.options["positions"] == "rope" and c.task == "charlm" and c.clip_grad == 0.0
                        and c.threads == 1 and c.preset == "book" for c in book)
    assert all(c.batch_size * c.options["context"] == 4096 for c in book)
    assert len({(c.hash, c.seed) for c in book}) == len(book)
    assert GRIDS[name]("paper") == []


def test_the_probes_are_softmax_at_every_length_and_budget_and_each_budget_is_its_own_grid():
    probes = GRIDS["causal_length_probe"]("book")
    assert {c.activation for c in probes} == {"softmax"} and {c.seed for c in probes} == {0}
    assert {(c.options["context"], _steps(c)) for c in probes} == {
        (t, s) for t in causal_rope.ROPE_CONTEXTS["book"] for s in causal_rope.PROBE_STEPS["book"]}
    for s in causal_rope.PROBE_STEPS["book"]:
        one = GRIDS[f"causal_length_probe_{s}"]("book", seeds=[0, 1])
        assert {_steps(c) for c in one} == {s} and len(one) == 2 * len(causal_rope.ROPE_CONTEXTS["book"])
        assert {c.hash for c in one} <= {c.hash for c in probes}


def test_the_sweep_has_five_arms_at_three_lengths_and_five_seeds():
    grid = GRIDS["causal_length_rope"]("book")
    arms = {(c.activation, c.n_mode) for c in grid}
    assert arms == {("softmax", "row"), ("poly:p=3,c=1", "row"), ("poly:p=3", "row"), ("poly:p=3", "fixed"),
                    ("uniform", "row")}
    assert {c.options["context"] for c in grid} == {64, 256, 1024} and {c.seed for c in grid} == set(range(5))
    assert {_steps(c) for c in grid} == {causal_rope.ROPE_STEPS["book"]} and len(grid) == 75
    # probes and sweep never share a record, even at the same budget
    assert not {c.hash for c in grid} & {c.hash for c in GRIDS["causal_length_probe"]("book")}


def test_the_dose_response_starts_softmax_k_at_softmax_s_function_and_has_the_three_cubes():
    grid = GRIDS["causal_dose_response"]("book", seeds=[0])
    got = {(c.activation, c.out_init_scale) for c in grid}
    assert got == {("softmax:k=1/8", 8.0), ("softmax:k=1/2", 2.0), ("softmax", 1.0), ("softmax:k=2", 0.5),
                   ("softmax:k=8", 0.125), ("poly:p=3", 1.0), ("poly_cap:p=3", 1.0), ("poly_unit:p=3", 1.0)}
    assert {c.options["context"] for c in grid} == {256} and {c.n_mode for c in grid} == {"row"}
    assert len(GRIDS["causal_dose_response"]("book")) == 5 * 8


@pytest.mark.parametrize("name", NEW_GRIDS)
def test_every_smoke_config_trains_in_seconds_and_stores_the_loss_by_position(name, tmp_path, monkeypatch):
    from polyattn.runs import load_or_run

    monkeypatch.setenv("POLYATTN_RESULTS", str(tmp_path))
    smoke = GRIDS[name]("smoke", seeds=[0])
    assert smoke and all(c.preset == "smoke" and c.dataset == "synthetic" for c in smoke)
    for c in smoke:
        rec = load_or_run(c, progress=False)
        assert rec["status"] == "ok" and math.isfinite(rec["metrics"][-1]["test_bpc"])
        pos = rec["final"]["position_bpc"]
        assert pos["edges"][0] == 0 and pos["edges"][-1] == c.options["context"]
        assert len(pos["bpc"]) == len(pos["chars"]) == len(pos["edges"]) - 1


def test_position_edges_are_powers_of_two_ending_at_the_window():
    from polyattn.tasks.charlm import position_edges

    assert position_edges(1) == [0, 1]
    assert position_edges(64) == [0, 1, 2, 4, 8, 16, 32, 64]
    assert position_edges(100) == [0, 1, 2, 4, 8, 16, 32, 64, 100]
    with pytest.raises(ValueError, match="at least one position"):
        position_edges(0)


def test_the_loss_by_position_averages_to_the_test_loss_and_sees_late_positions():
    from polyattn.config import TrainConfig
    from polyattn.tasks.charlm import CharLanguageModel

    task = CharLanguageModel()
    cfg = TrainConfig(task="charlm", dataset="synthetic", preset="smoke", options={"context": 32, "eval_windows": 8,
                                                                                  "positions": "rope"})
    data = task.load(cfg, 1, 0)
    torch.manual_seed(0)
    model = task.build_model(cfg, data)
    pos = task.position_bpc(model, data.stream("test"), 32, 8, "cpu")
    whole = task._bpc(model, data.stream("test"), 32, 1, 8, "cpu")
    mean = sum(b * n for b, n in zip(pos["bpc"], pos["chars"])) / sum(pos["chars"])
    assert sum(pos["chars"]) == 8 * 32 and math.isclose(mean, whole, rel_tol=1e-6)

    # a model that is right only at positions >= 16 scores 0 there and not before
    class Late(torch.nn.Module):
        def forward(self, x):
            y = torch.roll(data.stream("test")[: x.numel() + 1][1:].view_as(x), 0)
            logits = torch.zeros(*x.shape, len(data.vocab))
            logits.scatter_(-1, y[..., None], 100.0)
            logits[:, :16] = 0.0
            return logits

    late = task.position_bpc(Late(), data.stream("test"), 32, 1, "cpu")
    assert late["edges"][-2:] == [16, 32] and late["bpc"][-1] < 1e-6
    assert all(math.isclose(b, math.log2(len(data.vocab)), rel_tol=1e-6) for b in late["bpc"][:-1])


def test_the_earlier_causal_grids_keep_their_committed_record_names(repo_root):
    """Adding the ``rope`` positions and the per-position loss renames no stored record."""
    for name, folder in (("causal_length_sweep", "causal_length_sweep"), ("causal_charlm_nope", "causal_charlm_nope"),
                         ("causal_mqar_recall", "causal_mqar_recall")):
        stored = {json.loads(p.read_text())["config_hash"] for p in (repo_root / "data/results" / folder).glob("*.json")}
        assert stored and stored <= {c.hash for c in GRIDS[name]("book")}, name


def test_the_registered_rope_claims_read_the_budget_and_lengths_the_grids_train():
    """The claims name their arms by config fields; a change of the grids' budget must move them too."""
    from polyattn.claims.topics.language import ROPE_BOOK_STEPS, rope_at
    from polyattn.experiments.causal_rope import ROPE_CONTEXTS, ROPE_STEPS

    assert ROPE_BOOK_STEPS == ROPE_STEPS["book"]
    trained = {str(c.options) for c in GRIDS["causal_length_rope"]("book")}
    assert {str(rope_at(t)["options"]) for t in ROPE_CONTEXTS["book"]} == trained
