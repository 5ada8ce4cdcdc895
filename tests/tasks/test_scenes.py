"""The synthetic detection scenes: annotations agree with the pasted items, seeds, errors, cache."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from support.scene_fixtures import blob_items, fake_fashion_mnist

from polyattn.data import DatasetMissing
from polyattn.data.scenes import SceneSpec, compose_scenes, load_scenes, mask_boxes, resize_item

SPEC = SceneSpec(canvas=48, min_items=1, max_items=4, min_side=14, max_side=26)


def test_annotations_agree_with_the_pasted_items():
    items, classes = blob_items()
    scenes = compose_scenes(items, classes, 60, SPEC, seed=3)
    assert scenes.images.shape == (60, 1, 48, 48) and scenes.images.dtype == torch.uint8
    counts = scenes.counts()
    assert counts.min() >= 1 and counts.max() <= 4 and (counts > 1).any()
    assert (scenes.instances.amax((1, 2)).long() == counts).all()          # no id beyond the scene's items
    for s in range(len(scenes)):
        t = scenes.target(s)
        n = int(counts[s])
        assert t["masks"].shape == (n, 48, 48) and t["masks"].dtype == torch.bool
        assert (t["masks"].sum(0) <= 1).all()                              # disjoint
        assert torch.equal(t["labels"], classes[scenes.sources[s, :n]])    # the class of the source item
        for k in range(n):
            m = t["masks"][k]
            rows, cols = np.nonzero(m.numpy())
            x0, y0, x1, y1 = t["boxes"][k].tolist()
            assert (x0, y0, x1, y1) == (cols.min(), rows.min(), cols.max() + 1, rows.max() + 1)   # tight box
            inside = torch.zeros_like(m)
            inside[int(y0):int(y1), int(x0):int(x1)] = True
            assert not (m & ~inside).any()                                 # mask inside its box
            y, x, side = scenes.placements[s, k].tolist()
            assert 0 <= y and 0 <= x and y + side <= 48 and x + side <= 48 and 14 <= side <= 26
            pasted = resize_item(items[scenes.sources[s, k]], side)
            own = torch.zeros_like(m)
            own[y:y + side, x:x + side] = pasted > SPEC.threshold
            assert not (m & ~own).any()                                    # visible part of the item's own mask
            assert m.sum() >= SPEC.min_visible * own.sum()                 # occlusion limited
            canvas = torch.zeros(48, 48, dtype=torch.uint8)
            canvas[y:y + side, x:x + side] = pasted
            assert torch.equal(scenes.images[s, 0][m], canvas[m])          # the pixels are the item's
            later = t["masks"][k + 1:].any(0) if k + 1 < n else torch.zeros_like(m)
            assert torch.equal(m, own & ~later)                            # lost exactly what later items cover
        background = scenes.instances[s] == 0
        assert (scenes.images[s, 0][background] == 0).all()
        assert (scenes.labels[s, n:] == -1).all() and (scenes.sources[s, n:] == -1).all()


def test_mask_boxes_of_a_one_pixel_mask_and_an_empty_one():
    m = torch.zeros(2, 5, 5, dtype=torch.bool)
    m[0, 2, 3] = True
    m[1, 1:3, 0:4] = True
    assert mask_boxes(m).tolist() == [[3, 2, 4, 3], [0, 1, 4, 3]]
    with pytest.raises(ValueError, match="mask 0 is empty"):
        mask_boxes(torch.zeros(1, 5, 5, dtype=torch.bool))


def test_same_seed_same_scenes_and_different_seeds_differ():
    items, classes = blob_items()
    a = compose_scenes(items, classes, 20, SPEC, seed=7)
    b = compose_scenes(items, classes, 20, SPEC, seed=7)
    c = compose_scenes(items, classes, 20, SPEC, seed=8)
    for f in ("images", "instances", "labels", "sources", "placements"):
        assert torch.equal(getattr(a, f), getattr(b, f))
    assert not torch.equal(a.images, c.images) and not torch.equal(a.sources, c.sources)


@pytest.mark.parametrize("kw,match", [
    (dict(max_side=40, canvas=32), "max_side .* exceeds the canvas"),
    (dict(min_items=3, max_items=2), "min_items .* exceeds max_items"),
    (dict(min_side=20, max_side=16), "min_side .* exceeds max_side"),
    (dict(threshold=300), "threshold"),
    (dict(min_visible=0.0), "min_visible"),
    (dict(canvas=4), "canvas"),
    (dict(max_items=2.5), "max_items"),
])
def test_bad_parameters_are_one_line_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        SceneSpec(**kw)


def test_bad_counts_items_and_splits():
    items, classes = blob_items(4)
    with pytest.raises(ValueError, match="number of scenes"):
        compose_scenes(items, classes, 0, SPEC)
    with pytest.raises(ValueError, match="items must be"):
        compose_scenes(items.float(), classes, 2, SPEC)
    with pytest.raises(ValueError, match="split must be one of"):
        load_scenes("val", 2, SPEC, source=(items, classes))
    empty = torch.zeros(3, 28, 28, dtype=torch.uint8)
    with pytest.raises(ValueError, match="no item could be placed"):
        compose_scenes(empty, classes[:3], 2, SPEC)


def test_load_scenes_reads_fashion_mnist_splits_and_caches(tmp_path, monkeypatch):
    src, items, classes = fake_fashion_mnist(tmp_path)
    monkeypatch.setenv("POLYATTN_DATA", str(tmp_path / "root"))
    monkeypatch.setenv("POLYATTN_FASHION_MNIST_SOURCE", str(src))
    monkeypatch.setenv("POLYATTN_CACHE", str(tmp_path / "cache"))
    train = load_scenes("train", 12, SPEC, seed=1)
    cached = list((tmp_path / "cache" / "scenes").glob("train-*.pt"))
    assert len(cached) == 1
    again = load_scenes("train", 12, SPEC, seed=1)
    assert torch.equal(train.images, again.images) and torch.equal(train.instances, again.instances)
    test = load_scenes("test", 12, SPEC, seed=1)
    assert not torch.equal(train.images, test.images)        # the splits draw from their own streams
    assert torch.equal(train.labels[train.labels >= 0], classes[train.sources[train.sources >= 0]])
    fresh = load_scenes("train", 12, SPEC, seed=1, use_cache=False)
    assert torch.equal(fresh.images, train.images)


def test_missing_fashion_mnist_names_the_package(tmp_path, monkeypatch):
    from torchvision.datasets import FashionMNIST

    monkeypatch.setattr(FashionMNIST, "download", lambda self, *a, **k: (_ for _ in ()).throw(RuntimeError("offline")))
    monkeypatch.setenv("POLYATTN_DATA", str(tmp_path / "root"))
    monkeypatch.setenv("POLYATTN_FASHION_MNIST_SOURCE", str(tmp_path / "absent"))
    monkeypatch.setenv("POLYATTN_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DatasetMissing, match="apt-get install dataset-fashion-mnist"):
        load_scenes("train", 4, SPEC)
