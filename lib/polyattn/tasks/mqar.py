"""Multi-query associative recall (MQAR), the Zoology benchmark's synthetic recall task, as a
causal language-modelling task (recall accuracy at the query positions, higher is better).

Data: :mod:`polyattn.data.mqar` (Zoology's rules).  The training set is a mixture of
(sequence length, key-value pairs, examples) segments and the test sets are (sequence
length, key-value pairs) segments of ``test_examples`` each, as in Zoology; both are
generated from seeds derived from ``data_seed`` with different labels, so training and
test data come from disjoint random streams and are the same for every run seed (the run
seed sets the initialisation and the batch order).  A batch holds examples of one
segment (one length, no padding), so N in x^p/sqrt(N) under ``n_mode="fixed"`` is that
batch's sequence length.

Model: :class:`polyattn.models.char_lm.CharLM` (causal mask, sinusoidal positions) over the
MQAR vocabulary, with the output head tied to the token embedding as in Zoology's model
(untied, the head must learn each of the V/2 value tokens from its own rare labels, which
in small runs slowed learning to copy a value from the context severalfold).

Loss: cross-entropy at the query positions only (every other label is the ignore index).
Metrics: recall accuracy over all test queries (``acc``, each test set weighted by its
queries), per test set (``acc_L64``, ``acc_L128``, ...; ``acc_L64_K8`` where two test sets
share a length), and the test cross-entropy at the query positions (``test_loss``).

Options (``config.options``):

    vocab_size     tokens (default 512; Zoology uses 8192, too wide an output layer for CPU
                   runs; the generator needs vocab_size > every sequence length)
    train_mix      [(seq_len, kv_pairs, examples), ...] (default (64, 4, 4096),
                   (128, 8, 1024), (256, 16, 512))
    test_sets      [(seq_len, kv_pairs), ...] (default (64, 4), (128, 8), (256, 16))
    test_examples  examples per test set (default 256; Zoology: 1000)
    power_a        the query-gap power law's exponent a (default 0.01, Zoology's)
    data_seed      seed of the generated training and test data (default 0)
    resample       draw a new training mixture every epoch (default False: one fixed training
                   set, passed over every epoch, as in Zoology); epoch e's examples come from
                   their own seed, so a run with resampling sees fresh examples throughout
    eval_batch     examples per evaluation forward pass (default 64)
    positions      ``sinusoidal`` (default), ``none`` or ``rope`` (rotary), as for the character model

At the end of training the record also holds (under ``final``) the test accuracy per test
set and distance from the query back to its key (in tokens, binned by powers of two).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..data.mqar import _check, mixture
from ..labels import MQAR_DEFAULTS as DEFAULTS
from ..labels import mqar_set_names as set_names
from ..presets import generator
from ..task_declarations import mqar_metrics, mqar_seq_lens
from .base import Batch


def _int(name, value, low):
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"mqar option {name!r} must be an integer >= {low}, got {value!r}")
    return value


def _entries(name, value, width, what):
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ValueError(f"mqar option {name!r} must be a list of ({what}) entries, got {value!r}")
    out = []
    for e in value:
        if (isinstance(e, (str, bytes)) or not hasattr(e, "__len__") or len(e) != width
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in e)):
            raise ValueError(f"mqar option {name!r}: each entry must be ({what}) integers, got {e!r}")
        out.append(tuple(e))
    if not out:
        raise ValueError(f"mqar option {name!r} must hold at least one ({what}) entry")
    return tuple(out)


def options(config) -> dict:
    """The task's options with defaults filled in, validated (a one-line ``ValueError`` otherwise)."""
    unknown = sorted(set(config.options) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown mqar option(s) {unknown}; valid options: {sorted(DEFAULTS)}")
    o = {**DEFAULTS, **config.options}
    for k in ("vocab_size", "test_examples", "eval_batch"):
        _int(k, o[k], 1)
    _int("data_seed", o["data_seed"], 0)
    if not isinstance(o["resample"], bool):
        raise ValueError(f"mqar option 'resample' must be true or false, got {o['resample']!r}")
    from ..models.char_lm import POSITIONS

    if o["positions"] not in POSITIONS:
        raise ValueError(f"mqar option 'positions' must be one of {POSITIONS}, got {o['positions']!r}")
    if isinstance(o["power_a"], bool) or not isinstance(o["power_a"], (int, float)) or not o["power_a"] > 0:
        raise ValueError(f"mqar option 'power_a' must be a number > 0, got {o['power_a']!r}")
    o["train_mix"] = _entries("train_mix", o["train_mix"], 3, "seq_len, kv_pairs, examples")
    o["test_sets"] = _entries("test_sets", o["test_sets"], 2, "seq_len, kv_pairs")
    for name, entries in (("train_mix", o["train_mix"]), ("test_sets", o["test_sets"])):
        for e in entries:
            n = e[2] if len(e) == 3 else o["test_examples"]
            try:
                _check(n, e[0], e[1], o["vocab_size"], o["power_a"])
            except ValueError as exc:
                raise ValueError(f"mqar option {name!r} entry {e}: {exc}") from None
    for e in o["train_mix"]:
        if e[2] < config.batch_size:
            raise ValueError(f"mqar option 'train_mix' entry {e}: {e[2]} examples are fewer than one batch "
                             f"(batch_size {config.batch_size})")
    if len(set(o["test_sets"])) < len(o["test_sets"]):
        raise ValueError(f"mqar option 'test_sets' repeats an entry: {list(o['test_sets'])}")
    return o


def data_seeds(data_seed: int, epoch: int = 0) -> tuple[int, int]:
    """The (training, test) generator seeds: independent streams keyed by ``data_seed`` (and,
    for resampled training data, the epoch; epoch 0 is the fixed training set)."""
    train = ("train",) if epoch == 0 else ("train", epoch)
    return tuple(generator(data_seed, "mqar", *labels).initial_seed() for labels in (train, ("test",)))


def training_set(o: dict, epoch: int = 0) -> list:
    """The training segments of ``epoch`` (epoch 0's without resampling)."""
    seed = data_seeds(o["data_seed"], epoch if o["resample"] else 0)[0]
    return mixture(o["train_mix"], o["vocab_size"], seed=seed, power_a=o["power_a"])


class MQARData:
    """The generated training segments and test sets (lists of :class:`polyattn.data.mqar.MQARBatch`)."""

    def __init__(self, train, test, names, vocab_size, options):
        self.train, self.test, self.names, self.vocab_size, self.options = train, test, names, vocab_size, options


class MultiQueryRecall:
    name = "mqar"

    def metrics(self, config):
        return mqar_metrics(options(config))

    def seq_lens(self, config):
        return mqar_seq_lens(options(config))

    def load(self, config, world, rank):
        if config.dataset != "mqar":
            raise ValueError(f"the mqar task generates its data; dataset must be 'mqar', got {config.dataset!r}")
        o = options(config)
        train = training_set(o)
        test = mixture([(L, K, o["test_examples"]) for L, K in o["test_sets"]], o["vocab_size"],
                       seed=data_seeds(o["data_seed"])[1], power_a=o["power_a"])
        return MQARData(train, test, set_names(o["test_sets"]), o["vocab_size"], o)

    def build_model(self, config, data):
        from ..models.char_lm import CharLM

        return CharLM(data.vocab_size, config.activation, config.model, config.n_mode,
                      max(s.inputs.shape[1] for s in data.train), tie_embeddings=True,
                      positions=options(config)["positions"])

    def steps_per_epoch(self, config, data):
        return sum(len(s) // config.batch_size for s in data.train)

    def batches(self, config, data, epoch, world, rank, state=None):
        """Each segment shuffled and cut into whole batches; the batches of all segments in a
        seeded random order (a batch holds one sequence length)."""
        g = generator(config.seed, "mqar_batches", epoch)
        o = options(config)
        train = training_set(o, epoch) if o["resample"] and epoch else data.train
        chunks = []
        for i, seg in enumerate(train):
            order = torch.randperm(len(seg), generator=g)
            chunks += [(i, order[b * config.batch_size:(b + 1) * config.batch_size])
                       for b in range(len(seg) // config.batch_size)]
        shard = config.batch_size // world
        for c in torch.randperm(len(chunks), generator=g).tolist():
            i, idx = chunks[c]
            idx = idx[rank * shard:(rank + 1) * shard]
            seg = train[i]
            yield Batch(seg.inputs[idx], seg.labels[idx], seg.labels[idx], causal=True, size=len(idx))

    def loss(self, model, batch, config):
        logits, loss = model(batch.inputs, batch.target)
        at = batch.target != -100
        correct = (logits.argmax(-1)[at] == batch.target[at]).float().mean().item()
        return loss, {"train_loss": loss.item() * batch.size, "train_acc": correct * batch.size}

    @torch.no_grad()
    def _predict(self, model, seg, step, device):
        """(predictions, labels, loss sum) at the query positions of one test set, in example order."""
        preds, labels, loss = [], [], 0.0
        for i in range(0, len(seg), step):
            y = seg.labels[i:i + step].to(device)
            logits = model(seg.inputs[i:i + step].to(device)).float()
            at = y != -100
            loss += F.cross_entropy(logits[at], y[at], reduction="sum").item()
            preds.append(logits.argmax(-1).cpu())
            labels.append(y.cpu())
        return torch.cat(preds), torch.cat(labels), loss

    def evaluate(self, model, config, data, device):
        model.eval()
        step = options(config)["eval_batch"]
        out, correct, count, loss = {}, 0, 0, 0.0
        for name, seg in zip(data.names, data.test):
            pred, y, seg_loss = self._predict(model, seg, step, device)
            at = y != -100
            hits = (pred[at] == y[at]).sum().item()
            out[f"acc_{name}"] = hits / at.sum().item()
            correct, count, loss = correct + hits, count + at.sum().item(), loss + seg_loss
        model.train()
        return {"acc": correct / count, **out, "test_loss": loss / count if math.isfinite(loss) else math.nan}

    @torch.no_grad()
    def summarise(self, model, config, data, device) -> dict:
        """Test accuracy per test set and per distance from the query back to its key
        (bins [1, 2), [2, 4), [4, 8), ...: the lower edge names the bin)."""
        model.eval()
        step = options(config)["eval_batch"]
        by_distance = {}
        for name, seg in zip(data.names, data.test):
            pred, y, _ = self._predict(model, seg, step, device)
            pairs = torch.arange(seg.num_kv_pairs)
            distance = (seg.query_positions - 2 * pairs).flatten()          # query minus its key's position
            hit = (pred.gather(1, seg.query_positions) == seg.values).flatten()
            bins = torch.floor(torch.log2(distance.double())).long()
            by_distance[name] = {str(2 ** int(b)): {"acc": hit[bins == b].float().mean().item(),
                                                    "queries": int((bins == b).sum())}
                                 for b in bins.unique().tolist()}
        model.train()
        return {"acc_by_distance": by_distance}
