"""The container every Long Range Arena task returns, padding, and the on-disk cache."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import torch

from ..cache import atomic_write, cache_key, cache_root

PAD = 0  # the padding id of every task that pads (ListOps, Text, Retrieval)
SPLITS = ("train", "val", "test")


@dataclass
class LRASplit:
    """One split.  ``key_padding_mask`` is True on real tokens; retrieval fills the ``*2`` fields
    with the second document of each pair."""
    tokens: torch.Tensor                      # int64 [M, L]
    key_padding_mask: torch.Tensor            # bool [M, L]
    labels: torch.Tensor                      # int64 [M]
    tokens2: Optional[torch.Tensor] = None
    key_padding_mask2: Optional[torch.Tensor] = None

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def lengths(self) -> torch.Tensor:
        return self.key_padding_mask.sum(1)

    @property
    def lengths2(self) -> Optional[torch.Tensor]:
        return None if self.key_padding_mask2 is None else self.key_padding_mask2.sum(1)

    @property
    def paired(self) -> bool:
        return self.tokens2 is not None


@dataclass
class LRAData:
    """A task's three splits with what a model and a chapter need to know about them.

    ``chance`` is the test accuracy of always answering the most frequent training label."""
    name: str
    train: LRASplit
    val: LRASplit
    test: LRASplit
    vocab_size: int
    num_classes: int
    chance: float = 0.0
    description: dict = field(default_factory=dict)

    @property
    def splits(self) -> dict:
        return {"train": self.train, "val": self.val, "test": self.test}

    @property
    def max_len(self) -> int:
        return self.train.tokens.shape[1]


def pad_sequences(seqs: Sequence[Sequence[int]], max_len: int, offset: int = 0) -> tuple[torch.Tensor, torch.Tensor, int]:
    """``(tokens [M, max_len], mask, number truncated)``: each sequence (plus ``offset``) from the
    left, then :data:`PAD`; longer sequences are cut at ``max_len``."""
    tokens = torch.full((len(seqs), max_len), PAD, dtype=torch.int64)
    cut = 0
    for i, s in enumerate(seqs):
        n = min(len(s), max_len)
        cut += len(s) > max_len
        if n:
            tokens[i, :n] = torch.as_tensor(list(s[:n]), dtype=torch.int64) + offset
    lengths = torch.tensor([min(len(s), max_len) for s in seqs], dtype=torch.int64)
    mask = torch.arange(max_len)[None, :] < lengths[:, None]
    return tokens, mask, int(cut)


def byte_split(docs: Sequence[bytes], labels: Sequence[int], max_len: int,
               docs2: Optional[Sequence[bytes]] = None) -> tuple[LRASplit, int]:
    """Documents as byte tokens (byte b is id b + 1, 0 pads), with the count of truncated ones."""
    t, m, cut = pad_sequences(docs, max_len, offset=1)
    t2 = m2 = None
    if docs2 is not None:
        t2, m2, cut2 = pad_sequences(docs2, max_len, offset=1)
        cut += cut2
    return LRASplit(t, m, torch.as_tensor(list(labels), dtype=torch.int64), t2, m2), cut


def label_counts(labels: torch.Tensor, num_classes: int) -> list[int]:
    return torch.bincount(labels, minlength=num_classes).tolist()


def majority_chance(train: LRASplit, test: LRASplit) -> float:
    """Test accuracy of always guessing the most frequent training label (ties: the smallest)."""
    if len(train) == 0 or len(test) == 0:
        return 0.0
    majority = Counter(train.labels.tolist()).most_common()
    best = max(c for _, c in majority)
    label = min(k for k, c in majority if c == best)
    return float((test.labels == label).float().mean())


def finish(name: str, splits: dict, vocab_size: int, num_classes: int, description: dict) -> LRAData:
    """The :class:`LRAData`, with split sizes, label counts and chance added to the description."""
    description = dict(description)
    description["sizes"] = {k: len(v) for k, v in splits.items()}
    description["label_counts"] = {k: label_counts(v.labels, num_classes) for k, v in splits.items()}
    description["max_len"] = splits["train"].tokens.shape[1]
    chance = majority_chance(splits["train"], splits["test"])
    description["chance"] = chance
    return LRAData(name, splits["train"], splits["val"], splits["test"], vocab_size, num_classes, chance, description)


def _pack(split: LRASplit) -> dict:
    """Small on disk: tokens in the narrowest integer type, prefix masks as lengths."""
    out = {}
    for suffix in ("", "2"):
        tokens, mask = getattr(split, "tokens" + suffix), getattr(split, "key_padding_mask" + suffix)
        if tokens is None:
            continue
        top = int(tokens.max()) if tokens.numel() else 0
        out["tokens" + suffix] = tokens.to(torch.uint8 if top < 256 else torch.int16 if top < 32768 else torch.int64)
        lengths = mask.sum(1)
        if torch.equal(mask, torch.arange(mask.shape[1])[None, :] < lengths[:, None]):
            out["lengths" + suffix] = lengths
        else:
            out["key_padding_mask" + suffix] = mask
    out["labels"] = split.labels
    return out


def _unpack(stored: dict) -> LRASplit:
    fields = {"labels": stored["labels"]}
    for suffix in ("", "2"):
        if "tokens" + suffix not in stored:
            continue
        tokens = stored["tokens" + suffix].to(torch.int64)
        fields["tokens" + suffix] = tokens
        if "lengths" + suffix in stored:
            lengths = stored["lengths" + suffix]
            fields["key_padding_mask" + suffix] = torch.arange(tokens.shape[1])[None, :] < lengths[:, None]
        else:
            fields["key_padding_mask" + suffix] = stored["key_padding_mask" + suffix]
    return LRASplit(**fields)


def cached(task: str, params: dict, build: Callable[[], dict], use_cache: bool = True) -> dict:
    """``build()`` (a dict of split name -> :class:`LRASplit` plus a ``"description"``), kept in
    ``<cache>/lra/<task>-<hash of params>.pt`` so that a generated data set is made once."""
    if not use_cache:
        return build()
    path = cache_root() / "lra" / f"{task}-{cache_key(params)}.pt"
    if path.exists():
        try:
            stored = torch.load(path, weights_only=True)
            out = {k: _unpack(stored[k]) for k in SPLITS}
            out["description"] = stored["description"]
            return out
        except Exception:  # a file from an older layout or a broken write: make it again
            pass
    out = build()
    stored = {k: _pack(out[k]) for k in SPLITS}
    stored["description"] = out["description"]
    atomic_write(path, lambda tmp: torch.save(stored, tmp))
    return out
