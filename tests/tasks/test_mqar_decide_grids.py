"""The MQAR softmax probes and the decision grid: what they hold, that their smoke configs train, and the
``positions`` option of the MQAR task."""
from __future__ import annotations

import dataclasses
import json

import pytest

from polyattn.experiments import GRIDS, mqar_decide

PROBE_GRIDS = [f"causal_mqar_probe2_{name}" for name in mqar_decide.PROBE2_SETTINGS]


def _steps(c):
    (_, _, examples), = c.options["train_mix"]
    return c.epochs * (examples // c.batch_size)


@pytest.mark.parametrize("name", PROBE_GRIDS)
def test_each_probe_is_softmax_at_one_setting_in_three_seeds(name):
    book = GRIDS[name]("book")
    setting = mqar_decide.PROBE2_SETTINGS[name.removeprefix("causal_mqar_probe2_")]
    assert {c.activation for c in book} == {"softmax"} and [c.seed for c in book] == [0, 1, 2]
    assert len({c.hash for c in book}) == 1
    c = book[0]
    assert c.options["train_mix"] == ((setting["L"], setting["K"], setting["examples"]),)
    assert c.options["test_sets"] == ((setting["L"], setting["K"]),) and c.options["resample"] is True
    assert (c.lr, c.epochs, c.options["positions"], c.options["vocab_size"]) == (
        setting["lr"], setting["epochs"], setting["positions"], setting["vocab"])
    assert c.epochs % c.eval_every == 0 and c.model == "recall" and c.threads == 1
    assert GRIDS[name]("paper") == []


def test_the_union_holds_every_probe_and_no_two_settings_share_a_record():
    union = GRIDS["causal_mqar_probe2"]("book")
    assert [c.hash for c in union] == [c.hash for g in PROBE_GRIDS for c in GRIDS[g]("book")]
    assert len({c.hash for c in union}) == len(PROBE_GRIDS)


def test_the_decision_grid_has_five_arms_at_the_chosen_setting_and_five_seeds():
    grid = GRIDS["causal_mqar_decide"]("book")
    assert {(c.activation, c.n_mode) for c in grid} == {("softmax", "row"), ("poly:p=3", "row"),
                                                        ("poly:p=3", "fixed"), ("poly:p=3,c=1/14", "row"),
                                                        ("uniform", "row")}
    assert {c.seed for c in grid} == set(range(5)) and len(grid) == 25
    probe = GRIDS[f"causal_mqar_probe2_{mqar_decide.DECIDE_SETTING}"]("book")[0]
    same = {k for k, v in dataclasses.asdict(grid[0]).items() if dataclasses.asdict(probe)[k] != v}
    assert same == {"experiment"}           # the setting exactly, in its own records
    with pytest.raises(ValueError, match="unknown MQAR probe setting 'nope'"):
        mqar_decide.setting_fields("book", "nope")


@pytest.mark.parametrize("name", [*PROBE_GRIDS, "causal_mqar_decide"])
def test_every_smoke_config_trains(name, tmp_path, monkeypatch):
    from polyattn.runs import load_or_run

    monkeypatch.setenv("POLYATTN_RESULTS", str(tmp_path))
    smoke = GRIDS[name]("smoke", seeds=[0])
    assert smoke and all(c.preset == "smoke" for c in smoke)
    for c in smoke:
        rec = load_or_run(c, progress=False)
        assert rec["status"] == "ok" and 0.0 <= rec["metrics"][-1]["acc"] <= 1.0


def test_mqar_positions_reach_the_model_and_bad_ones_raise():
    from polyattn.tasks import get_task

    task = get_task("mqar")
    cfg = GRIDS["causal_mqar_probe2_lr3_rope"]("smoke", seeds=[0])[0]
    data = task.load(cfg, 1, 0)
    model = task.build_model(cfg, data)
    assert model.positions == "rope" and all(b.attn.rope for b in model.blocks)
    old = GRIDS["causal_mqar_recall"]("smoke", seeds=[0])[0]
    assert "positions" not in old.options and task.build_model(old, task.load(old, 1, 0)).positions == "sinusoidal"
    bad = dataclasses.replace(cfg, options={**cfg.options, "positions": "alibi"})
    with pytest.raises(ValueError, match="mqar option 'positions' must be one of"):
        task.load(bad, 1, 0)


def test_the_earlier_mqar_grids_keep_their_committed_record_names(repo_root):
    for name, folder in (("causal_mqar", "causal_mqar"), ("causal_mqar_long", "causal_mqar_long"),
                         ("causal_mqar_probe", "mqar_probe")):
        stored = {json.loads(p.read_text())["config_hash"] for p in (repo_root / "data/results" / folder).glob("*.json")}
        assert stored and stored <= {c.hash for c in GRIDS[name]("book")}, name
