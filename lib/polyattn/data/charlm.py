"""Character-level language-model data from a mapping ``book name -> text``.

The mapping is ordered (e.g. the books of the King James Bible in canonical order, as
``polyattn.data.bible.books()`` returns them); everything here takes it as an argument.

Split, by book so that no test text is seen in training (1-based position p in the
mapping): p = 10, 20, 30, ... go to test; the book right after each, p = 11, 21, 31, ...,
to validation; all others to train.  For the 66 books of the Bible in canonical order
that is test = 2 Samuel, Proverbs, Amos, Matthew, Philippians, 1 Peter and validation =
1 Kings, Ecclesiastes, Obadiah, Mark, Colossians, 2 Peter: narrative, wisdom, prophecy,
gospel and epistle on both sides.  Fewer than 10 (11) books leave test (validation) empty.

Vocabulary: the characters (Unicode code points) of the training split, sorted, after
id 0, which is the unknown character: any character outside the training text encodes
to 0 and decodes to U+FFFD.  Each split is one stream: its books in order, joined by
one newline, so a book's last character is followed by a separator rather than by the
next book's first.

Windows: ``random_windows`` draws training batches (x, y), y = x shifted by one
character, at uniformly random offsets from a seeded ``torch.Generator``;
``eval_windows`` cuts a split into consecutive non-overlapping windows of
``multiple * context`` characters (1x, 2x, 4x the training context for length
generalisation), dropping the incomplete tail so every multiple sees whole windows.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Mapping

import torch

UNK = 0
UNK_CHAR = "\ufffd"
SEPARATOR = "\n"
TEST_EVERY = 10
EVAL_MULTIPLES = (1, 2, 4)
SPLITS = ("train", "validation", "test")


def split_books(books: Mapping[str, str], test_every: int = TEST_EVERY) -> dict[str, list[str]]:
    """Book names per split (see the module docstring), each in the mapping's order."""
    if test_every < 2:
        raise ValueError(f"test_every must be >= 2, got {test_every}")
    out = {s: [] for s in SPLITS}
    for p, name in enumerate(books, start=1):
        if p % test_every == 0:
            out["test"].append(name)
        elif p > test_every and p % test_every == 1:
            out["validation"].append(name)
        else:
            out["train"].append(name)
    if not out["train"]:
        raise ValueError("no book left for training")
    return out


@dataclass(frozen=True)
class Vocabulary:
    """Characters <-> ids; id 0 is the unknown character."""

    chars: tuple[str, ...]
    _index: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if len(set(self.chars)) != len(self.chars) or UNK_CHAR in self.chars:
            raise ValueError("vocabulary characters must be distinct and exclude U+FFFD")
        object.__setattr__(self, "_index", {c: i + 1 for i, c in enumerate(self.chars)})

    @classmethod
    def from_text(cls, text: str) -> "Vocabulary":
        return cls(tuple(sorted(set(text) - {UNK_CHAR})))

    def __len__(self) -> int:
        return len(self.chars) + 1

    def encode(self, text: str) -> torch.Tensor:
        idx = self._index
        return torch.tensor([idx.get(c, UNK) for c in text], dtype=torch.long)

    def decode(self, ids) -> str:
        chars = self.chars
        return "".join(chars[i - 1] if 0 < i <= len(chars) else UNK_CHAR for i in torch.as_tensor(ids).tolist())


@dataclass
class CharCorpus:
    """Encoded train / validation / test streams and the books behind them."""

    vocab: Vocabulary
    books: dict[str, list[str]]
    streams: dict[str, torch.Tensor]

    def stream(self, split: str) -> torch.Tensor:
        if split not in self.streams:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        return self.streams[split]


def build_corpus(books: Mapping[str, str], test_every: int = TEST_EVERY) -> CharCorpus:
    """Split ``books`` by book, build the vocabulary from the training books, encode."""
    names = split_books(books, test_every)
    texts = {s: SEPARATOR.join(books[n] for n in names[s]) for s in SPLITS}
    vocab = Vocabulary.from_text(texts["train"] + SEPARATOR)
    return CharCorpus(vocab, names, {s: vocab.encode(texts[s]) for s in SPLITS})


def random_windows(stream: torch.Tensor, context: int, batch_size: int, generator: torch.Generator):
    """One batch (x, y) of ``[batch_size, context]`` ids, y[:, t] = the character after x[:, t]."""
    if context < 1 or batch_size < 1:
        raise ValueError(f"context and batch_size must be >= 1, got {context}, {batch_size}")
    if len(stream) < context + 1:
        raise ValueError(f"a stream of {len(stream)} characters has no window of {context} + 1")
    starts = torch.randint(0, len(stream) - context, (batch_size,), generator=generator)
    idx = starts[:, None] + torch.arange(context + 1)
    chunk = stream[idx]
    return chunk[:, :-1], chunk[:, 1:]


def batches(stream: torch.Tensor, context: int, batch_size: int, seed: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """An endless, seeded sequence of :func:`random_windows` batches."""
    g = torch.Generator().manual_seed(seed)
    while True:
        yield random_windows(stream, context, batch_size, g)


def eval_windows(stream: torch.Tensor, context: int, multiple: int = 1, max_windows: int | None = None):
    """Consecutive non-overlapping (x, y) windows of ``multiple * context`` ids, ``[W, L]``,
    from the start of the stream (the first ``max_windows`` when given)."""
    if multiple < 1 or context < 1:
        raise ValueError(f"context and multiple must be >= 1, got {context}, {multiple}")
    length = multiple * context
    count = (len(stream) - 1) // length
    if max_windows is not None:
        count = min(count, max_windows)
    if count < 1:
        raise ValueError(f"a stream of {len(stream)} characters has no window of {length} + 1")
    x = stream[: count * length].view(count, length)
    y = stream[1: count * length + 1].view(count, length)
    return x, y
