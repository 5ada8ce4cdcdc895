"""Two toy tasks that exercise the task protocol beyond images: a padded-sequence classifier
(AdamW, key-padding masks through the shared blocks) and a 1-D regression fitted with L-BFGS
(lower-is-better metric)."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from polyattn.models.blocks import Encoder, decay_groups
from polyattn.tasks import Batch, Metric, register

PAD, VOCAB, MAX_LEN = 0, 8, 12


class ToySeqModel(nn.Module):
    def __init__(self, activation):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.pos = nn.Parameter(torch.zeros(1, MAX_LEN, 16))
        self.encoder = Encoder(16, 1, 2, activation)
        self.head = nn.Linear(16, 2)

    def decay_groups(self):
        return decay_groups(self, no_decay=("pos", "embed"))

    def forward(self, tokens, key_padding_mask):
        x = self.encoder(self.embed(tokens) + self.pos, key_padding_mask=key_padding_mask)
        w = key_padding_mask.float()[..., None]
        return self.head((x * w).sum(1) / w.sum(1))


class ToySequences:
    """Label: whether the first token is at least 4; lengths 3..12, padded with token 0."""
    name = "toy_seq"

    def metrics(self, config):
        return [Metric("test_acc", "%", True, 100.0)]

    def seq_lens(self, config):
        return {"seq_len": MAX_LEN}

    def load(self, config, world, rank):
        g = torch.Generator().manual_seed(99)
        n = 160
        lengths = torch.randint(3, MAX_LEN + 1, (n,), generator=g)
        tokens = torch.randint(1, VOCAB, (n, MAX_LEN), generator=g)
        mask = torch.arange(MAX_LEN)[None] < lengths[:, None]
        tokens = tokens.masked_fill(~mask, PAD)
        return {"tokens": tokens, "mask": mask, "labels": (tokens[:, 0] >= 4).long()}

    def build_model(self, config, data):
        return ToySeqModel(config.activation)

    def steps_per_epoch(self, config, data):
        return 128 // config.batch_size

    def batches(self, config, data, epoch, world, rank, state=None):
        order = torch.randperm(128, generator=torch.Generator().manual_seed(config.seed * 7 + epoch))
        for b in range(self.steps_per_epoch(config, data)):
            idx = order[b * config.batch_size:(b + 1) * config.batch_size]
            poison = epoch >= config.options.get("poison_epoch", config.epochs)
            yield Batch(data["tokens"][idx], data["labels"][idx], data["labels"][idx],
                        key_padding_mask=data["mask"][idx], size=len(idx), extra={"poison": poison})

    def loss(self, model, batch, config):
        logits = model(batch.inputs, batch.key_padding_mask)
        if batch.extra["poison"]:       # a stand-in for a run that blows up at a known step
            logits = logits * float("nan")
        loss = F.cross_entropy(logits, batch.target)
        return loss, {"train_loss": loss.item() * batch.size}

    @torch.no_grad()
    def evaluate(self, model, config, data, device):
        model.eval()
        logits = model(data["tokens"][128:], data["mask"][128:])
        model.train()
        return {"test_acc": (logits.argmax(-1) == data["labels"][128:]).float().mean().item()}


class ToyRegression:
    """u(x) = sin(2 pi x) on [0, 1] by a small tanh network, full batch; test error lower is better."""
    name = "toy_regression"

    def metrics(self, config):
        return [Metric("test_rmse", "", False, 1.0)]

    def seq_lens(self, config):
        return {"seq_len": 1}

    def load(self, config, world, rank):
        x = torch.linspace(0, 1, 64)[:, None]
        xt = torch.linspace(0, 1, 101)[:, None]
        return {"x": x, "y": torch.sin(2 * math.pi * x), "xt": xt, "yt": torch.sin(2 * math.pi * xt)}

    def build_model(self, config, data):
        return nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))

    def steps_per_epoch(self, config, data):
        return 1

    def batches(self, config, data, epoch, world, rank, state=None):
        yield Batch(data["x"], data["y"], size=len(data["x"]))

    def loss(self, model, batch, config):
        below = config.options.get("infinite_below")
        pred = model(batch.inputs)
        loss = (pred - batch.target).pow(2).mean()
        if below is not None and loss.item() < below:   # the line search meets a non-finite loss
            loss = loss * float("inf")
        return loss, {"train_loss": loss.item() * batch.size}

    @torch.no_grad()
    def evaluate(self, model, config, data, device):
        return {"test_rmse": (model(data["xt"]) - data["yt"]).pow(2).mean().sqrt().item()}


def register_toy_tasks():
    register(ToySequences())
    register(ToyRegression())
