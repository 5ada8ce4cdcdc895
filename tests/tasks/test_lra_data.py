import os
import shutil

import numpy as np
import pytest
import torch

from polyattn.data import bible
from polyattn.data.errors import DatasetMissing
from polyattn.data.fashion_mnist import DEBIAN_DIR
from polyattn.data.lra import listops, load_lra, pathfinder, retrieval, text
from polyattn.data.lra.common import LRASplit, majority_chance
from polyattn.data.lra.image import grey

HAS_BIBLE = shutil.which("bible") is not None and bible.DATA_FILE.exists()
needs_bible = pytest.mark.skipif(not HAS_BIBLE, reason="bible-kjv is not installed")


@pytest.fixture(scope="module", autouse=True)
def private_cache(tmp_path_factory):
    # generated data go to a folder of this module's own, never into the book's data/cache
    old = os.environ.get("POLYATTN_CACHE")
    os.environ["POLYATTN_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if old is None:
        del os.environ["POLYATTN_CACHE"]
    else:
        os.environ["POLYATTN_CACHE"] = old


# ---------------------------------------------------------------- ListOps

def test_listops_evaluates_hand_written_expressions():
    assert listops.evaluate("[MAX 2 9 [MIN 4 7 ] 0 ]") == 9
    assert listops.evaluate("[SM 5 6 7]") == 8
    assert listops.evaluate("[MED 1 2 3 4]") == 2           # median 2.5, integer part
    assert listops.evaluate("[MED 7 1 3]") == 3
    assert listops.evaluate("[MED 9 8]") == 8                # 8.5
    assert listops.evaluate("[MIN [SM 9 9 ] [MAX 1 [MED 6 6 0 ] ] 7 ]") == 6   # min(8, 6, 7)
    assert listops.evaluate("4") == 4
    ids = listops.encode("[MAX 2 9 [MIN 4 7 ] 0 ]")
    assert ids == [12, 3, 10, 11, 5, 8, 15, 1, 15]
    assert listops.decode(ids) == "[MAX 2 9 [MIN 4 7 ] 0 ]"
    assert listops.evaluate(np.array(ids)) == 9              # ids of any integer type
    for bad in ("[MAX 2 9", "[MAX ]", "[FOO 1 2 ]", "[SM 10 2 ]", "1 2", "]"):
        with pytest.raises(ValueError):
            listops.evaluate(bad)


def _nesting(ids):
    depth = top = 0
    for t in ids:
        if listops.VOCAB[t] in listops.OPERATORS:
            depth += 1
            top = max(top, depth)
        elif listops.VOCAB[t] == listops.END:
            depth -= 1
    return top


def _arities(ids):
    stack, out = [], []
    for t in ids:
        tok = listops.VOCAB[t]
        if tok in listops.OPERATORS:
            stack.append(0)
        elif tok == listops.END:
            out.append(stack.pop())
            if stack:
                stack[-1] += 1
        elif stack:
            stack[-1] += 1
    return out


def test_listops_generator_follows_the_published_rules_and_reports_statistics():
    sample = listops.generate(300, seed=0)
    stats = listops.statistics_of(sample)
    assert stats["n"] == 300 and stats["rejected_duplicates"] == 0
    assert 500 < stats["length"]["min"] and stats["length"]["max"] < 2000
    assert sum(stats["length"]["histogram"]) == 300
    # a tree is an operator at the root with probability 0.25, and then usually short
    assert 0.04 < stats["acceptance_rate"] < 0.15
    assert stats["rejected_too_short"] > 5 * stats["rejected_too_long"]
    # MIN drags values to 0 and MAX to 9, so those two are the common labels, but no label dominates
    frac = stats["label_fractions"]
    assert all(f > 0 for f in frac) and stats["majority_fraction"] < 0.3
    assert min(frac[0], frac[9]) > max(frac[1:9]) - 0.03
    for ids, label in zip(sample.ids, sample.labels):
        assert listops.evaluate(ids) == label
        assert _nesting(ids) <= 9                            # depth 10 holds only values
        assert all(2 <= a <= 10 for a in _arities(ids))
    assert len({tuple(x) for x in sample.ids}) == 300
    again = listops.generate(300, seed=0)
    assert again.ids == sample.ids and again.labels == sample.labels
    assert listops.generate(20, seed=1).ids != sample.ids[:20]


def test_listops_splits_are_disjoint_and_the_test_split_does_not_depend_on_the_training_size():
    small = listops.generate_splits((20, 10, 10), seed=3, min_length=20, max_length=80)
    large = listops.generate_splits((60, 10, 10), seed=3, min_length=20, max_length=80)
    assert large["test"].ids == small["test"].ids and large["val"].ids == small["val"].ids
    keys = {k: {tuple(x) for x in v.ids} for k, v in large.items()}
    assert not (keys["train"] & keys["test"]) and not (keys["train"] & keys["val"]) and not (keys["val"] & keys["test"])
    assert all(20 < len(x) < 80 for v in large.values() for x in v.ids)


def test_load_lra_listops_pads_with_a_mask_and_caches(tmp_path):
    kw = dict(train=40, val=8, test=8, seed=5, min_length=30, max_length=120)
    data = load_lra("listops", **kw)
    assert data.vocab_size == 16 and data.num_classes == 10 and data.max_len == 120
    tr = data.train
    assert tr.tokens.dtype == torch.int64 and tr.key_padding_mask.dtype == torch.bool
    assert tr.tokens.shape == tr.key_padding_mask.shape == (40, 120)
    assert torch.equal(tr.tokens == 0, ~tr.key_padding_mask)
    for row, n, y in zip(tr.tokens, tr.lengths, tr.labels):
        assert listops.evaluate(row[:n].tolist()) == int(y)
    assert list(os.scandir(os.path.join(os.environ["POLYATTN_CACHE"], "lra")))
    again, fresh = load_lra("listops", **kw), load_lra("listops", cache=False, **kw)
    for other in (again, fresh):
        assert torch.equal(other.test.tokens, data.test.tokens)
        assert torch.equal(other.test.key_padding_mask, data.test.key_padding_mask)
    assert data.description["statistics"]["train"]["n"] == 40
    assert data.chance == majority_chance(data.train, data.test)
    with pytest.raises(ValueError, match="max_len"):
        load_lra("listops", 4, 2, 2, max_len=50, min_length=30, max_length=120)


# ---------------------------------------------------------------- Pathfinder

def _marker(img, r, c):
    img[r - 1:r + 2, c - 1:c + 2] = 255


def test_connectivity_checker_on_hand_built_images():
    img = np.zeros((32, 32), dtype=np.uint8)
    _marker(img, 5, 5)
    _marker(img, 25, 25)
    assert path_label_of(img) == 0
    for k in range(7, 24):                # a diagonal line: pixels meet only at corners
        img[k, k] = 120
    assert path_label_of(img) == 1
    assert pathfinder.connected(img, (5, 5), (25, 25))
    assert not pathfinder.connected(img, (5, 5), (25, 25), threshold=130)   # the line is dimmer
    img[15, 15] = 0                       # one missing pixel breaks the path
    assert path_label_of(img) == 0
    img[15, 14] = img[16, 15] = 60        # a detour of two dim pixels joins it again
    assert path_label_of(img) == 1
    other = np.zeros((32, 32), dtype=np.uint8)
    _marker(other, 5, 5)
    _marker(other, 5, 25)
    other[5, 7:16] = 150                  # two contours, one pixel apart: not joined
    other[5, 17:24] = 150
    assert path_label_of(other) == 0
    assert pathfinder.find_markers(other) in ([(5, 5), (5, 25)], [(5, 25), (5, 5)])


def path_label_of(img):
    return pathfinder.path_label(img)


@pytest.mark.parametrize("length,n", [(6, 16), (14, 8)])
def test_pathfinder_images_are_labelled_by_connectivity(length, n):
    cfg = pathfinder.preset(length)
    out = pathfinder.generate(n, seed=7, cfg=cfg)
    images, labels, markers = out["images"], out["labels"], out["markers"]
    assert images.shape == (n, 32, 32) and images.dtype == torch.uint8
    assert labels.sum() == n // 2                        # balanced by construction
    for img, y, m in zip(images.numpy(), labels.tolist(), markers.numpy()):
        assert img[tuple(m[0])] == 255 and img[tuple(m[1])] == 255
        assert pathfinder.path_label(img, m) == y         # negatives' markers lie on two contours
        assert pathfinder.path_label(img) == y            # the same from the image alone
        drawn = (img > 0).mean()
        assert 0.08 < drawn < 0.6                         # contours and distractors, not a blank or a flood
    assert (out["distractors"] >= 1).all()
    assert torch.equal(pathfinder.generate(3, seed=7, cfg=cfg)["images"], images[:3])   # image i depends on i only
    assert not torch.equal(pathfinder.generate(3, seed=8, cfg=cfg)["images"], images[:3])


def test_pathfinder_workers_make_the_same_images():
    cfg = pathfinder.preset(6)
    one, two = pathfinder.generate(6, seed=2, cfg=cfg), pathfinder.generate(6, seed=2, cfg=cfg, workers=2)
    assert all(torch.equal(one[k], two[k]) for k in one)


def test_load_lra_pathfinder_tokens_keep_black_pixels():
    data = load_lra("pathfinder_6", 6, 2, 2, seed=1)
    assert data.vocab_size == 256 and data.num_classes == 2 and data.max_len == 1024
    assert data.train.key_padding_mask.all() and (data.train.tokens == 0).any()
    assert data.description["config"]["contour_length"] == 6 and data.description["config"]["num_distractors"] == 10


# ---------------------------------------------------------------- Image

def test_grey_levels_use_the_published_weights():
    rgb = torch.tensor([[[[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255], [0, 0, 0]]]], dtype=torch.uint8)
    assert grey(rgb).tolist() == [[[76, 150, 29, 255, 0]]]


def test_image_cifar10_without_the_data_names_the_layout(tmp_path):
    with pytest.raises(DatasetMissing, match="cifar-10-batches-py"):
        load_lra("image_cifar10", 10, 2, 2, root=tmp_path)


@pytest.mark.skipif(not DEBIAN_DIR.exists(), reason="dataset-fashion-mnist is not installed")
def test_image_tokens_are_fashion_mnist_pixels(tmp_path):
    from polyattn.data import load_fashion_mnist
    data = load_lra("image", 50, 10, 20, seed=2, root=tmp_path)
    assert data.vocab_size == 256 and data.num_classes == 10
    tr = data.train
    assert tr.tokens.shape == (50, 784) and tr.tokens.dtype == torch.int64
    assert tr.key_padding_mask.all() and (tr.tokens == 0).float().mean() > 0.2   # black pixels are tokens
    assert int(tr.tokens.max()) <= 255
    images, labels, _, _ = load_fashion_mnist(root=tmp_path)
    flat = images.reshape(len(images), -1).to(torch.int64)
    first = (flat == tr.tokens[0]).all(1).nonzero().flatten()
    assert len(first) >= 1 and int(labels[first[0]]) == int(tr.labels[0])



def test_downsampled_images_are_2x2_means():
    from polyattn.data.lra.image import downsample
    x = torch.arange(2 * 4 * 4, dtype=torch.uint8).reshape(2, 4, 4)
    d = downsample(x, 2)
    assert d.shape == (2, 2, 2) and d.dtype == torch.uint8
    assert d[0].tolist() == [[round((0 + 1 + 4 + 5) / 4), round((2 + 3 + 6 + 7) / 4)],
                             [round((8 + 9 + 12 + 13) / 4), round((10 + 11 + 14 + 15) / 4)]]
    assert torch.equal(downsample(x, 4), x)
    with pytest.raises(ValueError, match="side"):
        downsample(x, 5)


@pytest.mark.skipif(not DEBIAN_DIR.exists(), reason="dataset-fashion-mnist is not installed")
def test_image_side_option_gives_fewer_tokens(tmp_path):
    data = load_lra("image", 20, 4, 8, seed=2, root=tmp_path, side=14)
    assert data.train.tokens.shape == (20, 196) and data.description["image_size"] == [14, 14]
    full = load_lra("image", 20, 4, 8, seed=2, root=tmp_path)
    from polyattn.data.lra.image import downsample
    assert torch.equal(data.train.tokens, downsample(full.train.tokens.reshape(20, 28, 28).to(torch.uint8), 14)
                       .reshape(20, -1).to(torch.int64))


# ---------------------------------------------------------------- Bible, Text, Retrieval

SAMPLE_OUTPUT = """
Genesis 1

  1 In the beginning God created the heaven and the earth.
  2 And the earth was without form, and void.

Song of Solomon 2

  1 I am the rose of Sharon.
"""


def test_bible_output_is_parsed_into_books_and_verses():
    parsed = bible.parse(SAMPLE_OUTPUT)
    assert list(parsed) == ["Genesis", "Song of Solomon"]
    assert parsed["Genesis"][1] == (1, 2, "And the earth was without form, and void.")
    assert parsed["Song of Solomon"] == [(2, 1, "I am the rose of Sharon.")]
    with pytest.raises(ValueError):
        bible.parse("no heading here\n")


def test_missing_bible_names_the_package(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYATTN_CACHE", str(tmp_path))
    monkeypatch.setattr(bible.shutil, "which", lambda name: None)
    with pytest.raises(DatasetMissing, match="apt-get install bible-kjv"):
        bible.books()


@needs_bible
def test_bible_books_are_whole_and_carry_no_names():
    books = bible.books()
    assert list(books) == [b for members in bible.DIVISIONS.values() for b in members]
    assert books["Genesis"].startswith("In the beginning God created the heaven and the earth.\n")
    assert books["Revelation"].rstrip().endswith("Amen.")
    assert sum(t.count("\n") for t in books.values()) == bible.N_VERSES
    assert "Genesis 1" not in books["Genesis"] and not any(c.isdigit() for c in books["Genesis"][:2000])


def _book_of(passage: bytes, books: dict) -> str:
    found = [b for b, t in books.items() if passage in t]
    assert len(found) == 1, found
    return found[0]


@needs_bible
def test_bible_text_task_is_balanced_and_its_test_text_is_unseen():
    data = load_lra("text", 36, 12, 12, seed=4)
    assert data.vocab_size == 257 and data.num_classes == 6 and data.max_len == 4096
    assert data.description["label_counts"]["train"] == [6] * 6
    assert data.chance == pytest.approx(1 / 6)
    books = {b: t.encode() for b, t in bible.books().items()}
    parts = text.split_blocks(text.blocks(), seed=4)
    train_text = [b.text for b in parts["train"]]
    for split in ("train", "test"):
        s = data.splits[split]
        assert ((1024 <= s.lengths) & (s.lengths <= 4096)).all()
        assert torch.equal(s.tokens == 0, ~s.key_padding_mask)
        for row, n, y in zip(s.tokens, s.lengths, s.labels):
            passage = bytes((row[:n] - 1).tolist())
            assert bible.division_of(_book_of(passage, books)) == text.CLASSES[int(y)]
            if split == "test":
                assert not any(passage in t for t in train_text)


@needs_bible
def test_bible_retrieval_pairs_share_a_book_exactly_when_labelled_so():
    data = load_lra("retrieval", 20, 6, 10, seed=6)
    assert data.train.paired and data.num_classes == 2 and data.vocab_size == 257
    assert data.description["label_counts"]["test"] == [5, 5]
    books = {b: t.encode() for b, t in bible.books().items()}
    s = data.test
    assert s.tokens2.shape == s.key_padding_mask2.shape == s.tokens.shape
    for a, na, b, nb, y in zip(s.tokens, s.lengths, s.tokens2, s.lengths2, s.labels):
        pa, pb = bytes((a[:na] - 1).tolist()), bytes((b[:nb] - 1).tolist())
        assert (_book_of(pa, books) == _book_of(pb, books)) == bool(y)
        assert pa not in pb and pb not in pa


def test_imdb_and_aan_loaders_read_the_stated_layouts(tmp_path):
    with pytest.raises(DatasetMissing, match="aclImdb"):
        load_lra("text_imdb", root=tmp_path)
    with pytest.raises(DatasetMissing, match="new_aan_pairs"):
        load_lra("retrieval_aan", root=tmp_path)
    for split in ("train", "test"):
        for c in ("neg", "pos"):
            d = tmp_path / "aclImdb" / split / c
            d.mkdir(parents=True)
            for i in range(3):
                (d / f"{i}_1.txt").write_bytes(f"{c} review {i} \u00e9".encode())
    data = load_lra("text_imdb", None, 2, None, root=tmp_path, max_len=64)
    assert data.description["sizes"] == {"train": 4, "val": 2, "test": 6}
    row, n = data.test.tokens[0], int(data.test.lengths[0])
    review = bytes((row[:n] - 1).tolist()).decode()
    assert review.startswith(("neg", "pos")) and review.endswith("\u00e9")
    assert int(data.test.labels[0]) == review.startswith("pos")
    aan = tmp_path / "lra_release" / "tsv_data"
    aan.mkdir(parents=True)
    for name in retrieval.AAN_FILES.values():
        (aan / name).write_text("1.0\tp1\tp2\tfirst text\tsecond\n0.0\tp3\tp4\tthird\tfourth text\n")
    data = load_lra("retrieval_aan", root=tmp_path, max_len=16)
    assert data.train.labels.tolist() == [1, 0]
    assert bytes((data.train.tokens2[1][:11] - 1).tolist()) == b"fourth text"
    assert data.train.lengths.tolist() == [10, 5]


# ---------------------------------------------------------------- the entry point

def test_load_lra_rejects_unknown_tasks_and_options():
    with pytest.raises(ValueError, match="valid tasks: listops, text, text_imdb, retrieval"):
        load_lra("pathx")
    with pytest.raises(ValueError, match="no option depth; its options: min_length"):
        load_lra("listops", depth=3)


def test_chance_is_the_test_accuracy_of_the_training_majority():
    def split(labels):
        labels = torch.tensor(labels)
        return LRASplit(torch.zeros(len(labels), 1, dtype=torch.int64), torch.ones(len(labels), 1, dtype=torch.bool), labels)
    assert majority_chance(split([2, 2, 1]), split([2, 0, 0, 0])) == 0.25
    assert majority_chance(split([1, 0]), split([0, 1, 1])) == pytest.approx(1 / 3)   # a tie goes to 0
