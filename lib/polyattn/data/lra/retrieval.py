"""Document matching: the Long Range Arena's Retrieval task.

The published task asks whether two papers of the ACL Anthology Network (AAN) are linked by a
citation, from the bytes of both.  AAN does not install offline, so the default here asks
whether two passages of the King James Bible come from the same book.

* Passages are cut as for the Text task (:mod:`.text`): 1,024-4,096 bytes starting at a verse,
  inside one block of about 16 KB, blocks dealt to train / val / test, so test text is unseen.
* A book can take part in a split when its blocks in that split hold at least ``2 max_bytes``
  bytes.  Label 1 (half of the pairs, within one): a book drawn uniformly among those, two
  passages from it that do not overlap.  Label 0: two different books drawn uniformly, one
  passage from each.  Either way each passage's book is uniform over the same books, so one
  passage alone says nothing about the label.
* Both passages are byte tokens (byte b is id b + 1, 0 pads) with their own padding masks.

:func:`load_aan` reads the published pairs when they are supplied.
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Sequence

from ..errors import DatasetMissing
from ..fashion_mnist import default_root
from .text import Block, balanced_labels, blocks, passage, pick_block, split_blocks

AAN_FILES = {"train": "new_aan_pairs.train.tsv", "val": "new_aan_pairs.eval.tsv", "test": "new_aan_pairs.test.tsv"}
AAN_LAYOUT = ("AAN pairs not found under {root}. Download lra_release.gz (https://storage.googleapis.com/long-range-arena/"
              "lra_release.gz) and extract it in {root}, so that {root}/lra_release/tsv_data/new_aan_pairs."
              "{{train,eval,test}}.tsv exist (or put those three files in {root}/aan/); each line holds label, id1, id2, "
              "text1, text2, separated by tabs.")


def _two_from_one(rng: random.Random, pool: Sequence[Block], min_bytes: int, max_bytes: int, tries: int = 50):
    for _ in range(tries):
        b1, b2 = pick_block(rng, pool), pick_block(rng, pool)
        d1, s1 = passage(rng, b1, min_bytes, max_bytes)
        d2, s2 = passage(rng, b2, min_bytes, max_bytes)
        if b1 is not b2 or s1 + len(d1) <= s2 or s2 + len(d2) <= s1:
            return d1, d2
    raise RuntimeError("no two disjoint passages found; the book is too short for these lengths")


def bible_pairs(sizes: Sequence[int], seed: int = 0, *, min_bytes: int = 1024, max_bytes: int = 4096,
                block_bytes: int = 16384, fractions: Sequence[float] = (0.8, 0.1, 0.1)) -> dict:
    """Split name -> ``(first passages, second passages, labels 1 = same book)``, plus
    ``"books"``: the books that take part in each split."""
    if not 0 < min_bytes <= max_bytes:
        raise ValueError(f"need 0 < min_bytes <= max_bytes, got {min_bytes}, {max_bytes}")
    parts = split_blocks(blocks(block_bytes), seed, fractions)
    out, eligible = {}, {}
    for name, n in zip(("train", "val", "test"), sizes):
        by_book: dict[str, list[Block]] = {}
        for b in parts[name]:
            by_book.setdefault(b.book, []).append(b)
        books = sorted(k for k, v in by_book.items() if sum(len(b.text) for b in v) >= 2 * max_bytes)
        if n and len(books) < 2:
            raise ValueError(f"the {name} split has {len(books)} book(s) with {2 * max_bytes} bytes; use larger fractions")
        eligible[name] = books
        rng = random.Random(f"bible-retrieval-{seed}-{name}")
        first, second, labels = [], [], balanced_labels(rng, n, 2)
        for y in labels:
            if y == 1:
                d1, d2 = _two_from_one(rng, by_book[rng.choice(books)], min_bytes, max_bytes)
            else:
                a, b = rng.sample(books, 2)
                d1 = passage(rng, pick_block(rng, by_book[a]), min_bytes, max_bytes)[0]
                d2 = passage(rng, pick_block(rng, by_book[b]), min_bytes, max_bytes)[0]
            first.append(d1)
            second.append(d2)
        out[name] = (first, second, labels)
    out["books"] = eligible
    return out


def _aan_dir(root: Path) -> Path | None:
    # the archive unpacks to lra_release/ or, extracted once more, lra_release/lra_release/
    for d in (root / "lra_release" / "tsv_data", root / "lra_release" / "lra_release" / "tsv_data", root / "aan", root):
        if all((d / f).is_file() for f in AAN_FILES.values()):
            return d
    return None


def read_aan_tsv(path: Path, limit: int | None = None) -> tuple[list[bytes], list[bytes], list[int]]:
    """The published files have no quoting: fields are split at tabs only."""
    first, second, labels = [], [], []
    with open(path, "rb") as f:
        for line in f:
            fields = line.rstrip(b"\r\n").split(b"\t")
            if len(fields) < 5:
                continue
            labels.append(int(float(fields[0])))
            first.append(fields[3])
            second.append(fields[4])
            if limit is not None and len(labels) >= limit:
                break
    return first, second, labels


def load_aan(root: str | Path | None = None, sizes: Sequence[int | None] = (None, None, None)) -> dict:
    """Split name -> ``(first texts, second texts, labels)`` from the published AAN pairs, the
    first ``sizes`` lines of each file (``None``: all)."""
    root = Path(root) if root is not None else default_root()
    d = _aan_dir(root)
    if d is None:
        raise DatasetMissing(AAN_LAYOUT.format(root=root))
    return {name: read_aan_tsv(d / AAN_FILES[name], n) for name, n in zip(("train", "val", "test"), sizes)}
