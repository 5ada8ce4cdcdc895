"""The multi-query associative recall task (``mqar``): training, the query-only loss and
metric, deterministic data and evaluation, option errors, and its grid."""
import json

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from polyattn.config import TrainConfig
from polyattn.data.mqar import IGNORE_INDEX
from polyattn.models.char_lm import CharLM
from polyattn.tasks import get_task
from polyattn.tasks.mqar import set_names
from polyattn.train import fit

TINY = {"vocab_size": 64, "train_mix": [[16, 2, 128], [32, 4, 32]], "test_sets": [[16, 2], [32, 4]],
        "test_examples": 24, "eval_batch": 16}


def _cfg(**kw):
    options = {**TINY, **kw.pop("options", {})}
    base = dict(experiment="unit_mqar", preset="smoke", task="mqar", dataset="mqar", model="micro", epochs=3,
                batch_size=16, lr=5e-3, weight_decay=0.0, warmup_epochs=0.2, threads=1, options=options)
    return TrainConfig(**{**base, **kw})


def test_trains_and_the_loss_decreases():
    rec = fit(_cfg(), progress=False, resume=False)
    assert rec["status"] == "ok" and rec["task"] == "mqar"
    assert [m["name"] for m in rec["metrics_spec"]] == ["acc", "acc_L16", "acc_L32", "test_loss"]
    assert rec["seq_lens"] == {"seq_len": 32, "eval_len_L16": 16, "eval_len_L32": 32}
    losses = [m["train_loss"] for m in rec["metrics"]]
    assert losses[-1] < losses[0]
    last = rec["metrics"][-1]
    assert all(0 <= last[k] <= 1 for k in ("acc", "acc_L16", "acc_L32", "train_acc"))
    # the pooled accuracy weighs each test set by its number of queries (2 and 4 per example)
    assert last["acc"] == pytest.approx((2 * last["acc_L16"] + 4 * last["acc_L32"]) / 6)
    by_distance = rec["final"]["acc_by_distance"]
    assert set(by_distance) == {"L16", "L32"}
    assert sum(b["queries"] for b in by_distance["L32"].values()) == 24 * 4
    json.dumps(rec)


def test_batches_are_causal_single_length_and_labelled_only_at_queries():
    task, cfg = get_task("mqar"), _cfg()
    data = task.load(cfg, 1, 0)
    batches = list(task.batches(cfg, data, 0, 1, 0))
    assert len(batches) == task.steps_per_epoch(cfg, data) == 128 // 16 + 32 // 16
    assert {b.inputs.shape[1] for b in batches} == {16, 32}
    for b in batches:
        assert b.causal and b.size == len(b.inputs) == 16
        queries = b.target != IGNORE_INDEX
        pairs = 2 if b.inputs.shape[1] == 16 else 4
        assert (queries.sum(1) == pairs).all()
        # a query position holds a key that appeared earlier in the sequence
        assert (b.inputs[queries] < 32).all() and (b.inputs[queries] >= 1).all()


def test_loss_is_the_cross_entropy_at_query_positions_only():
    task, cfg = get_task("mqar"), _cfg()
    data = task.load(cfg, 1, 0)
    batch = next(iter(task.batches(cfg, data, 0, 1, 0)))
    torch.manual_seed(0)
    model = task.build_model(cfg, data)
    loss, stats = task.loss(model, batch, cfg)
    logits = model(batch.inputs)
    at = batch.target != IGNORE_INDEX
    assert loss.item() == pytest.approx(F.cross_entropy(logits[at], batch.target[at]).item(), rel=1e-5)
    # the gradient reaches the logits at query positions only
    logits = model(batch.inputs).detach().requires_grad_()
    F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=-100).backward()
    assert torch.all(logits.grad[~at] == 0) and torch.any(logits.grad[at] != 0)
    assert 0 <= stats["train_acc"] <= batch.size


class _Lookup(nn.Module):
    """Predicts from a table of the test sequences: ``right`` puts the label at query positions
    and a wrong token elsewhere; otherwise the reverse."""

    def __init__(self, segments, vocab, right):
        super().__init__()
        self.table = {tuple(x.tolist()): y for seg in segments for x, y in zip(seg.inputs, seg.labels)}
        self.vocab, self.right = vocab, right

    def forward(self, tokens):
        rows = []
        for x in tokens:
            y = self.table[tuple(x.tolist())]
            query = y != IGNORE_INDEX
            target = torch.where(query, y, torch.zeros_like(y))
            if not self.right:     # right everywhere a label is ignored, wrong at every query
                target = torch.where(query, (y + 1) % self.vocab, torch.ones_like(y))
            rows.append(F.one_hot(target, self.vocab).float())
        return torch.stack(rows)


def test_accuracy_counts_query_positions_only():
    task, cfg = get_task("mqar"), _cfg()
    data = task.load(cfg, 1, 0)
    right = task.evaluate(_Lookup(data.test, 64, True), cfg, data, "cpu")
    wrong = task.evaluate(_Lookup(data.test, 64, False), cfg, data, "cpu")
    assert right["acc"] == right["acc_L16"] == right["acc_L32"] == 1.0
    assert wrong["acc"] == wrong["acc_L16"] == wrong["acc_L32"] == 0.0


def test_data_and_evaluation_are_deterministic_and_train_test_disjoint():
    task, cfg = get_task("mqar"), _cfg()
    a, b = task.load(cfg, 1, 0), task.load(cfg, 1, 0)
    for x, y in zip(a.train + a.test, b.train + b.test):
        assert torch.equal(x.inputs, y.inputs) and torch.equal(x.labels, y.labels)
    train_rows = {tuple(r.tolist()) for seg in a.train for r in seg.inputs}
    assert not train_rows & {tuple(r.tolist()) for seg in a.test for r in seg.inputs}
    other = task.load(_cfg(options={"data_seed": 1}), 1, 0)
    assert not torch.equal(a.test[0].inputs, other.test[0].inputs)
    torch.manual_seed(0)
    model = task.build_model(cfg, a)
    assert task.evaluate(model, cfg, a, "cpu") == task.evaluate(model, cfg, b, "cpu")
    # batch order: the same per (seed, epoch), another for another epoch
    first = [x.inputs for x in task.batches(cfg, a, 0, 1, 0)]
    assert all(torch.equal(x, y.inputs) for x, y in zip(first, task.batches(cfg, b, 0, 1, 0)))
    assert not all(torch.equal(x, y.inputs) for x, y in zip(first, task.batches(cfg, a, 1, 1, 0)))


def test_resampling_draws_new_training_examples_each_epoch():
    task = get_task("mqar")
    fixed, fresh = _cfg(), _cfg(options={"resample": True})
    data = task.load(fresh, 1, 0)
    rows = lambda c, e: {tuple(r.tolist()) for b in task.batches(c, data, e, 1, 0) for r in b.inputs}  # noqa: E731
    assert rows(fixed, 1) == rows(fixed, 0) == rows(fresh, 0)
    assert not rows(fresh, 1) & rows(fresh, 0)
    assert rows(fresh, 2) == rows(fresh, 2)


def test_metric_names_separate_test_sets_of_one_length():
    assert set_names([(64, 4), (64, 8), (128, 8)]) == ["L64_K4", "L64_K8", "L128"]
    cfg = _cfg(options={"test_sets": [[16, 2], [16, 4], [32, 4]]})
    assert [m.name for m in get_task("mqar").metrics(cfg)] == ["acc", "acc_L16_K2", "acc_L16_K4", "acc_L32",
                                                               "test_loss"]


@pytest.mark.parametrize("options, match", [
    ({"vocab": 64}, "unknown mqar option"),
    ({"vocab_size": 32}, "vocab_size must exceed seq_len"),
    ({"vocab_size": 0}, "'vocab_size' must be an integer >= 1"),
    ({"train_mix": [[16, 5, 128]]}, "'train_mix' entry \\(16, 5, 128\\): need 1 <= num_kv_pairs"),
    ({"train_mix": [[15, 2, 128]]}, "seq_len must be even"),
    ({"train_mix": [[16, 2, 8]]}, "fewer than one batch"),
    ({"train_mix": [16, 2, 128]}, "each entry must be \\(seq_len, kv_pairs, examples\\)"),
    ({"train_mix": []}, "at least one"),
    ({"test_sets": [[16, 2, 5]]}, "each entry must be \\(seq_len, kv_pairs\\)"),
    ({"test_sets": [[16, 2], [16, 2]]}, "repeats an entry"),
    ({"test_examples": 0}, "'test_examples' must be an integer >= 1"),
    ({"power_a": 0}, "'power_a' must be a number > 0"),
    ({"resample": "yes"}, "'resample' must be true or false"),
    ({"data_seed": -1}, "'data_seed' must be an integer >= 0"),
])
def test_bad_options_are_one_line_errors(options, match):
    with pytest.raises(ValueError, match=match) as err:
        get_task("mqar").metrics(_cfg(options=options))
    assert "\n" not in str(err.value)


def test_the_dataset_must_be_mqar():
    with pytest.raises(ValueError, match="dataset must be 'mqar'"):
        get_task("mqar").load(_cfg(dataset="bible_kjv"), 1, 0)


def test_tied_embeddings_share_the_head():
    tied, untied = CharLM(64, tie_embeddings=True), CharLM(64)
    assert tied.head.weight is tied.embed.weight and untied.head.weight is not untied.embed.weight
    assert untied.logit_scale == 1.0 and tied.logit_scale == pytest.approx(64 ** -0.5)
    assert sum(p.numel() for p in tied.parameters()) == sum(p.numel() for p in untied.parameters()) - 64 * 64
    decay, keep = tied.decay_groups()
    assert any(p is tied.embed.weight for p in keep) and not any(p is tied.embed.weight for p in decay)


def test_the_grid_builds_and_its_smoke_config_trains(tmp_path, monkeypatch):
    from polyattn.experiments import GRIDS
    from polyattn.experiments.causal import CHARLM_VARIANTS
    from polyattn.runs import load_or_run

    book = GRIDS["causal_mqar"]("book")
    assert len(book) == 3 * len(CHARLM_VARIANTS) == len({(c.hash, c.seed) for c in book})
    assert all(c.task == "mqar" and c.preset == "book" and c.threads == 1 and c.device == "cpu" for c in book)
    assert {L for L, _ in book[0].options["test_sets"]} == {64, 128, 256}
    paper = GRIDS["causal_mqar"]("paper")
    assert paper[0].options["vocab_size"] == 8192 and paper[0].device == "cuda"
    for c in book + paper:
        get_task("mqar").metrics(c)          # every preset's options are valid
    smoke = GRIDS["causal_mqar"]("smoke", seeds=[0])
    monkeypatch.setenv("POLYATTN_RESULTS", str(tmp_path))
    rec = load_or_run(smoke[0], progress=False)
    assert rec["status"] == "ok" and rec["metrics"] and "acc" in rec["metrics"][-1]


def test_the_recall_grid_trains_at_one_length_and_load_and_tests_at_it_and_twice_the_load():
    from polyattn.claims.topics.language import MQAR_RECALL
    from polyattn.experiments import GRIDS
    from polyattn.experiments.mqar import RECALL_VARIANTS

    book = GRIDS["causal_mqar_recall"]("book")
    assert len(book) == 3 * len(RECALL_VARIANTS) == len({(c.hash, c.seed) for c in book})
    assert [c.seed for c in book[:len(RECALL_VARIANTS)]] == [0] * len(RECALL_VARIANTS)   # seed-major
    (train_len, pairs, _), = book[0].options["train_mix"]
    assert book[0].options["test_sets"] == ((train_len, pairs), (train_len, 2 * pairs))
    assert book[0].options["vocab_size"] > train_len and book[0].model == "recall"
    for c in book + GRIDS["causal_mqar_recall"]("smoke") + GRIDS["causal_mqar_recall"]("paper"):
        get_task("mqar").metrics(c)          # every preset's options are valid
    # the register judges every seed against the plateau of the pairs this grid trains with
    assert MQAR_RECALL.chance == 100.0 / pairs
    assert {c.metric for c in MQAR_RECALL.comparisons} <= {m.name for m in get_task("mqar").metrics(book[0])}
