"""Long Range Arena classification (:mod:`polyattn.data.lra`) with padding masks throughout.

``config.dataset`` names the LRA task (``listops``, ``text``, ``retrieval``, ``image``,
``pathfinder``, ...); ``train_subset`` / ``test_subset`` size the training and test splits.
Options (``config.options``):

    val        validation examples (default 500)
    max_len    padded length (default: the task's bound)
    data       a dict of generator options passed to :func:`polyattn.data.lra.load_lra`
    trim       cut each batch to its longest real sequence (default True; never under
               ``n_mode="padded"``, where N is the padded length by definition)

The model is :class:`polyattn.models.seq_classifier.SequenceClassifier` of size
``config.model`` (``nystromformer``: the published harness's 2 layers, width 64), or with
``config.model == "pixel_cnn"`` the attention-free :class:`~polyattn.models.seq_classifier.PixelCNN`
reference for the image tasks.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..data.lra import load_lra, options
from ..metric_specs import VAL_ACCURACY  # noqa: F401  (re-exported: the task's validation accuracy)
from ..task_declarations import lra_metrics, lra_seq_lens
from .base import Batch


def _trim(config) -> bool:
    return config.options.get("trim", True) and config.n_mode != "padded"


def _cut(tokens, mask, trim: bool):
    if not trim:
        return tokens, mask
    longest = int(mask.sum(1).max().clamp_min(1))
    return tokens[:, :longest], mask[:, :longest]


class LongRangeArena:
    name = "lra"

    def metrics(self, config):
        return lra_metrics(config)

    def seq_lens(self, config):
        declared = lra_seq_lens(config)
        if declared is not None:
            return declared
        data = load_lra(config.dataset, 1, 1, 1, seed=0, **data_options(config))
        return {"seq_len": int(data.train.tokens.shape[1])}

    def load(self, config, world, rank):
        return load_lra(config.dataset, config.train_subset, config.options.get("val", 500), config.test_subset,
                        max_len=config.options.get("max_len"), seed=0, **data_options(config))

    def build_model(self, config, data):
        from ..models.seq_classifier import SequenceClassifier

        if config.model == "pixel_cnn":
            from ..models.seq_classifier import PixelCNN

            return PixelCNN(data.train.tokens.shape[1], data.num_classes)
        return SequenceClassifier(data.vocab_size, data.train.tokens.shape[1], data.num_classes, config.activation,
                                  config.model, pair=data.train.paired, n_mode=config.n_mode)

    def steps_per_epoch(self, config, data):
        return len(data.train) // config.batch_size

    def _batch(self, split, idx, trim):
        t, m = _cut(split.tokens[idx], split.key_padding_mask[idx], trim)
        if split.paired:
            t2, m2 = _cut(split.tokens2[idx], split.key_padding_mask2[idx], trim)
            return Batch((t, t2), split.labels[idx], split.labels[idx], key_padding_mask=(m, m2), size=len(idx))
        return Batch(t, split.labels[idx], split.labels[idx], key_padding_mask=m, size=len(idx))

    def batches(self, config, data, epoch, world, rank, state=None):
        shard = config.batch_size // world
        order = torch.randperm(len(data.train), generator=torch.Generator().manual_seed(config.seed * 100003 + epoch))
        for b in range(self.steps_per_epoch(config, data)):
            idx = order[b * config.batch_size:(b + 1) * config.batch_size][rank * shard:(rank + 1) * shard]
            yield self._batch(data.train, idx, _trim(config))

    def loss(self, model, batch, config):
        logits = model(batch.inputs, batch.key_padding_mask).float()
        loss = F.cross_entropy(logits, batch.target, label_smoothing=config.label_smoothing)
        return loss, {"train_loss": loss.item() * batch.size,
                      "train_acc": (logits.argmax(-1) == batch.label).sum().item()}

    @torch.no_grad()
    def _predict(self, model, split, config, device, batch_size=64):
        """``(predicted labels [M], summed cross-entropy)`` over a split, in order."""
        model.eval()
        total_loss, preds = 0.0, []
        for i in range(0, len(split), batch_size):
            b = self._batch(split, torch.arange(i, min(i + batch_size, len(split))), _trim(config)).to(device)
            logits = model(b.inputs, b.key_padding_mask).float()
            total_loss += F.cross_entropy(logits, b.target, reduction="sum").item()
            preds.append(logits.argmax(-1).cpu())
        model.train()
        return (torch.cat(preds) if preds else torch.zeros(0, dtype=torch.int64)), total_loss

    def _accuracy(self, model, split, config, device, batch_size=64):
        preds, total_loss = self._predict(model, split, config, device, batch_size)
        return (preds == split.labels).sum().item() / len(split), total_loss / len(split)

    def evaluate(self, model, config, data, device):
        test_acc, test_loss = self._accuracy(model, data.test, config, device)
        val_acc, _ = self._accuracy(model, data.val, config, device)
        return {"test_acc": test_acc, "val_acc": val_acc, "test_loss": test_loss}

    def summarise(self, model, config, data, device):
        """The final model's answer on every test example, for accuracy against length and
        paired comparisons between records on the same test set.

        ``test_lengths``: real tokens per example (both documents' for retrieval);
        ``test_pred``: one character per example, the predicted class (0-9);
        ``test_correct``: ``"1"`` where the prediction is right, ``"0"`` where it is wrong;
        ``length_bins``: accuracy in :data:`LENGTH_BINS` bins of equal count over the test
        lengths (one bin where every example has the same length)."""
        preds, _ = self._predict(model, data.test, config, device)
        lengths = data.test.lengths
        if data.test.paired:
            lengths = lengths + data.test.lengths2
        correct = (preds == data.test.labels)
        return {"test_lengths": lengths.tolist(), "test_pred": "".join(str(int(p)) for p in preds.tolist()),
                "test_correct": "".join("1" if c else "0" for c in correct.tolist()),
                "length_bins": length_bins(lengths.tolist(), correct.tolist())}


#: Bins of equal count over the test lengths in :meth:`LongRangeArena.summarise`.
LENGTH_BINS = 4


def length_bins(lengths, correct, bins: int = LENGTH_BINS) -> list[dict]:
    """Accuracy per length bin: ``bins`` bins of (nearly) equal count over the sorted lengths,
    ties kept in one bin; each row ``{lo, hi, n, correct, acc}`` (``lo``/``hi`` inclusive)."""
    pairs = sorted(zip((int(v) for v in lengths), (bool(c) for c in correct)))
    if not pairs:
        return []
    out, start, n = [], 0, len(pairs)
    for b in range(1, bins + 1):
        end = round(b * n / bins) if b < bins else n
        while 0 < end < n and pairs[end][0] == pairs[end - 1][0]:
            end += 1
        if end <= start:
            continue
        chunk = pairs[start:end]
        k = sum(c for _, c in chunk)
        out.append({"lo": chunk[0][0], "hi": chunk[-1][0], "n": len(chunk), "correct": k, "acc": k / len(chunk)})
        start = end
    return out


def data_options(config) -> dict:
    """The loader's options of a config: ``options["data"]``, plus ``config.data_root`` as the
    ``root`` of the tasks read from user-supplied files (IMDb, AAN, CIFAR-10)."""
    opts = dict(config.options.get("data", {}))
    if config.data_root and "root" in options(config.dataset) and "root" not in opts:
        opts["root"] = config.data_root
    return opts
