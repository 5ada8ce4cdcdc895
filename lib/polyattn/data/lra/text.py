"""Byte-level document classification: the Long Range Arena's Text task.

The published task classifies IMDb reviews (positive or negative) from their bytes.  IMDb
does not install offline, so the default here is the same kind of task on the King James
Bible (Debian's ``bible-kjv``): which of six divisions a passage of 1-4 KB comes from.

* Classes (books in canonical order, see :data:`polyattn.data.bible.DIVISIONS`):
  0 Law (Genesis-Deuteronomy, 5 books), 1 History (Joshua-Esther, 12), 2 Wisdom (Job-Song of
  Solomon, 5), 3 Prophets (Isaiah-Malachi, 17), 4 Gospels and Acts (5), 5 Epistles and
  Revelation (Romans-Revelation, 22).  Every split has the same number of passages of each
  class (within one).
* Unseen test text: each book is cut at verse boundaries into blocks of about 16 KB; within
  each division the blocks are shuffled (seeded) and dealt out by bytes, 80% / 10% / 10%, to
  training, validation and test; a passage lies inside one block, so no test byte is in
  training.
* A passage starts at a verse and runs for a length drawn uniformly from 1,024-4,096 bytes
  (less only when its whole block is shorter); verses are separated by newlines and carry no
  chapter, verse or book names.
* Tokens: byte b is id b + 1 and 0 pads (vocabulary 257), a padding mask marks real bytes.

:func:`load_imdb` reads the real IMDb data when it is supplied (Maas et al.'s ``aclImdb``).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .. import bible
from ..errors import DatasetMissing
from ..fashion_mnist import default_root

CLASSES = tuple(bible.DIVISIONS)
DEFAULTS = dict(min_bytes=1024, max_bytes=4096, block_bytes=16384, fractions=(0.8, 0.1, 0.1))
IMDB_LAYOUT = ("IMDb not found under {root}. Download aclImdb_v1.tar.gz (https://ai.stanford.edu/~amaas/data/sentiment/) "
               "and extract it there, so that {root}/aclImdb/train/pos/*.txt, train/neg, test/pos and test/neg exist.")


@dataclass
class Block:
    """Consecutive verses of one book: ``text`` (bytes) and where each verse starts in it."""
    book: str
    division: str
    text: bytes
    starts: list[int]


def blocks(block_bytes: int = 16384, books: dict | None = None) -> list[Block]:
    """Every book cut at verse boundaries into blocks of at least ``block_bytes`` (a book's
    remainder under half that joins its last block; a short book is one block)."""
    books = books if books is not None else bible.books()
    out = []
    for book, text in books.items():
        lines = text.encode().splitlines(keepends=True)
        current, starts, size, mine = [], [], 0, []
        for line in lines:
            starts.append(size)
            current.append(line)
            size += len(line)
            if size >= block_bytes:
                mine.append((b"".join(current), starts))
                current, starts, size = [], [], 0
        if current:
            if mine and size < block_bytes // 2:
                text0, starts0 = mine.pop()
                mine.append((text0 + b"".join(current), starts0 + [len(text0) + s for s in starts]))
            else:
                mine.append((b"".join(current), starts))
        division = bible.division_of(book)
        out.extend(Block(book, division, t, s) for t, s in mine)
    return out


def split_blocks(all_blocks: Sequence[Block], seed: int = 0, fractions: Sequence[float] = (0.8, 0.1, 0.1)) -> dict:
    """Blocks dealt to train / val / test by bytes, division by division, in a seeded order."""
    rng = random.Random(f"bible-split-{seed}")
    out = {"train": [], "val": [], "test": []}
    edges = [sum(fractions[:k + 1]) / sum(fractions) for k in range(3)]
    for division in CLASSES:
        mine = [b for b in all_blocks if b.division == division]
        rng.shuffle(mine)
        total, done = sum(len(b.text) for b in mine), 0
        for b in mine:
            share = done / total
            name = "train" if share < edges[0] else "val" if share < edges[1] else "test"
            out[name].append(b)
            done += len(b.text)
    return out


def passage(rng: random.Random, block: Block, min_bytes: int, max_bytes: int) -> tuple[bytes, int]:
    """``(bytes, start)``: a passage of uniform length in [min_bytes, max_bytes] starting at a verse."""
    length = min(rng.randint(min_bytes, max_bytes), len(block.text))
    fits = [s for s in block.starts if s + length <= len(block.text)]
    start = rng.choice(fits)
    return block.text[start:start + length], start


def pick_block(rng: random.Random, pool: Sequence[Block]) -> Block:
    """A block drawn in proportion to its length, so every byte is equally likely to be used."""
    return rng.choices(pool, weights=[len(b.text) for b in pool])[0]


def balanced_labels(rng: random.Random, n: int, k: int) -> list[int]:
    labels = [i % k for i in range(n)]
    rng.shuffle(labels)
    return labels


def bible_passages(sizes: Sequence[int], seed: int = 0, *, min_bytes: int = 1024, max_bytes: int = 4096,
                   block_bytes: int = 16384, fractions: Sequence[float] = (0.8, 0.1, 0.1)) -> dict:
    """Split name -> ``(passages as bytes, division labels)``, with the statistics of the split."""
    if not 0 < min_bytes <= max_bytes:
        raise ValueError(f"need 0 < min_bytes <= max_bytes, got {min_bytes}, {max_bytes}")
    parts = split_blocks(blocks(block_bytes), seed, fractions)
    out = {}
    for name, n in zip(("train", "val", "test"), sizes):
        rng = random.Random(f"bible-text-{seed}-{name}")
        labels = balanced_labels(rng, n, len(CLASSES))
        pools = {c: [b for b in parts[name] if b.division == CLASSES[c]] for c in range(len(CLASSES))}
        docs = [passage(rng, pick_block(rng, pools[y]), min_bytes, max_bytes)[0] for y in labels]
        out[name] = (docs, labels)
    out["blocks"] = {name: {"blocks": len(v), "bytes": sum(len(b.text) for b in v),
                            "books": sorted({b.book for b in v}, key=_book_order)} for name, v in parts.items()}
    return out


def _book_order(book: str) -> int:
    return [b for m in bible.DIVISIONS.values() for b in m].index(book)


def load_imdb(root: str | Path | None = None, sizes: Sequence[int | None] = (None, 0, None), seed: int = 0) -> dict:
    """Split name -> ``(reviews as bytes, labels 1 = positive)`` from ``<root>/aclImdb``.

    The validation reviews, if any, are a seeded draw from the training reviews; ``None`` sizes
    take all that remain."""
    root = Path(root) if root is not None else default_root()
    base = root / "aclImdb"
    if not all((base / s / c).is_dir() for s in ("train", "test") for c in ("pos", "neg")):
        raise DatasetMissing(IMDB_LAYOUT.format(root=root))

    def read(split):
        items = []
        for label, c in ((0, "neg"), (1, "pos")):
            for f in sorted((base / split / c).glob("*.txt")):
                items.append((f.read_bytes(), label))
        return items

    train, test = read("train"), read("test")
    rng = random.Random(f"imdb-{seed}")
    rng.shuffle(train)
    rng.shuffle(test)
    n_val = sizes[1] or 0
    val, train = train[:n_val], train[n_val:]
    train = train[:sizes[0]] if sizes[0] is not None else train
    test = test[:sizes[2]] if sizes[2] is not None else test
    return {name: ([d for d, _ in v], [y for _, y in v]) for name, v in (("train", train), ("val", val), ("test", test))}

