"""Image classification with a ViT: the book's first task.

Data: Fashion-MNIST in memory (fixed seeded subsets) or, for the paper preset, a dataset
streamed from disk through DataLoaders sharded across ranks.  Loss: cross-entropy (with
label smoothing); training statistics: loss and accuracy; evaluation: test loss and
accuracy; at the end of a run, the measurements ``options["measure"]`` asks for
(:func:`polyattn.attention_maps.measure`, stored as ``record["final"]``).  The sequence
length is the patch count plus the CLS token.  A config whose ``model`` is ``"timm:NAME"``
trains a timm model instead (:mod:`polyattn.models.timm_zoo`; ``options["n_rule"]`` chooses
XCiT's N), whose N is the architecture's own.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..attention_maps import check_measure, measure
from ..data import load_dataset
from ..task_declarations import IN_MEMORY, image_metrics, image_seq_lens, is_timm
from .base import Batch


class _Streamed:
    """A dataset read from disk through DataLoaders, sharded across ranks (paper preset)."""

    def __init__(self, config, world, rank):
        from ..data.augment import batch_mix
        from ..data.streaming import streaming_datasets

        self.train, self.test, self.num_classes, self.in_chans = streaming_datasets(
            config.dataset, config.data_root, config.image_size, config.augment)
        self.config, self.world, self.rank = config, world, rank
        self.mix = batch_mix(self.num_classes) if config.augment == "deit" else None

    def steps_per_epoch(self):
        return len(self.train) // self.config.batch_size

    def epoch(self, epoch):
        from torch.utils.data import DataLoader, DistributedSampler

        sampler = DistributedSampler(self.train, self.world, self.rank, shuffle=True, seed=self.config.seed,
                                     drop_last=True)
        sampler.set_epoch(epoch)
        loader = DataLoader(self.train, batch_size=self.config.batch_size // self.world, sampler=sampler,
                            num_workers=self.config.num_workers, drop_last=True,
                            pin_memory=torch.cuda.is_available())
        for x, y in loader:
            yield (*self.mix(x, y), y) if self.mix is not None else (x, y, y)

    def test_batches(self):
        from torch.utils.data import DataLoader

        return DataLoader(self.test, batch_size=256, num_workers=self.config.num_workers)


class ImageClassification:
    name = "images"

    def metrics(self, config):
        return image_metrics(config)

    def seq_lens(self, config) -> dict:
        declared = image_seq_lens(config)
        if declared is not None:
            return declared
        from ..models.timm_zoo import attention_lengths  # a timm model's N is measured on the model

        return attention_lengths(config.model, config.image_size, config.patch_size, config.options.get("n_rule"))

    def load(self, config, world, rank):
        if config.dataset in IN_MEMORY:
            return load_dataset(config.dataset, config.train_subset, config.test_subset)
        return _Streamed(config, world, rank)

    def build_model(self, config, data):
        from ..models import build_vit

        in_chans = data.in_chans if isinstance(data, _Streamed) else data.train_x.shape[1]
        if is_timm(config.model):
            from ..models.timm_zoo import build_timm

            return build_timm(config.model, image_size=config.image_size, patch_size=config.patch_size,
                              in_chans=in_chans, num_classes=data.num_classes, drop_path=config.drop_path,
                              activation=config.activation, n_mode=config.n_mode, n_rule=config.options.get("n_rule"))
        return build_vit(config.model, image_size=config.image_size, patch_size=config.patch_size,
                         in_chans=in_chans, num_classes=data.num_classes, pool=config.pool,
                         drop_path=config.drop_path, activation=config.activation, n_mode=config.n_mode,
                         qk_norm=config.qk_norm)

    def steps_per_epoch(self, config, data) -> int:
        if isinstance(data, _Streamed):
            return data.steps_per_epoch()
        return len(data.train_y) // config.batch_size

    def prepare(self, config, data):
        """Per-run state built after the model (the augmentation draws from the global RNG).

        Also checks ``options["measure"]`` before training, not after it
        (:func:`polyattn.attention_maps.check_measure`)."""
        check_measure(config)
        if config.augment == "deit" and not isinstance(data, _Streamed):
            from ..data.augment import DeiTAugment

            return DeiTAugment(data.num_classes, data.mean, data.std)
        return None

    def batches(self, config, data, epoch, world, rank, state=None):
        """One epoch: a seeded permutation, each global batch split into equal shards, one per rank."""
        if isinstance(data, _Streamed):
            for x, target, y in data.epoch(epoch):
                yield Batch(x, target, y, size=len(y))
            return
        shard = config.batch_size // world
        order = torch.randperm(len(data.train_y),
                               generator=torch.Generator().manual_seed(config.seed * 100003 + epoch))
        for b in range(len(data.train_y) // config.batch_size):
            idx = order[b * config.batch_size:(b + 1) * config.batch_size][rank * shard:(rank + 1) * shard]
            xb, yb = data.train_x[idx], data.train_y[idx]
            if state is not None:
                x, target = state(xb, yb)
            else:
                x, target = data.normalise(xb), yb
            yield Batch(x, target, yb, size=len(yb))

    def loss(self, model, batch, config):
        """Cross-entropy; statistics are sums over the batch (``fit`` divides by the examples seen)."""
        logits = model(batch.inputs).float()
        loss = F.cross_entropy(logits, batch.target, label_smoothing=config.label_smoothing)
        return loss, {"train_loss": loss.item() * batch.size,
                      "train_acc": (logits.argmax(-1) == batch.label).sum().item()}

    def summarise(self, model, config, data, device) -> dict:
        """``record["final"]``: the end-of-run measurements ``options["measure"]`` asks for
        (:func:`polyattn.attention_maps.measure`), ``{}`` when it asks for none."""
        if not (config.options or {}).get("measure"):
            return {}
        return measure(model, config, data, device, task=self)

    @torch.no_grad()
    def evaluate(self, model, config, data, device, batch_size: int = 500) -> dict:
        """Test loss and accuracy on the in-memory test set or the streamed one."""
        model.eval()
        total_loss, correct, n = 0.0, 0, 0
        if isinstance(data, _Streamed):
            batches = data.test_batches()
        else:
            batches = ((data.normalise(data.test_x[i:i + batch_size]), data.test_y[i:i + batch_size])
                       for i in range(0, len(data.test_y), batch_size))
        for x, y in batches:
            x, y = x.to(device), y.to(device)
            logits = model(x).float()
            total_loss += F.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(-1) == y).sum().item()
            n += len(y)
        model.train()
        return {"test_loss": total_loss / n, "test_acc": correct / n}
