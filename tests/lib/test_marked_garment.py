"""The marked-garment scenes: layout, label, marker, floor and reproducibility."""
import pytest
import torch

from polyattn.data import load_dataset
from polyattn.data.marked import CANVAS, CELL, MARKER, garment_set_floor, marked_scenes


def _garments(m=40):
    g = torch.Generator().manual_seed(0)
    images = torch.randint(0, 200, (m, CELL, CELL), generator=g, dtype=torch.uint8)  # never white
    labels = torch.arange(m) % 10
    return images, labels


def test_each_quarter_holds_its_garment_and_the_label_is_the_marked_ones_class():
    images, labels = _garments()
    x, y, classes, marked = marked_scenes(images, labels, 64, seed=3)
    assert x.shape == (64, 1, CANVAS, CANVAS) and x.dtype == torch.uint8
    for i in range(64):
        assert y[i] == classes[i, marked[i]]
        for q in range(4):
            r, c = (q // 2) * CELL, (q % 2) * CELL
            quarter = x[i, 0, r:r + CELL, c:c + CELL]
            source = [j for j in range(len(labels)) if torch.equal(images[j, MARKER:, MARKER:],
                                                                   quarter[MARKER:, MARKER:])
                      or torch.equal(images[j, :CELL - MARKER, :CELL - MARKER], quarter[:CELL - MARKER, :CELL - MARKER])]
            assert source and labels[source[0]] == classes[i, q]


def test_only_the_marked_quarter_carries_the_white_block_at_its_outer_corner():
    images, labels = _garments()
    x, _, _, marked = marked_scenes(images, labels, 32, seed=1)
    corners = {0: (0, 0), 1: (0, CANVAS - MARKER), 2: (CANVAS - MARKER, 0), 3: (CANVAS - MARKER, CANVAS - MARKER)}
    for i in range(32):
        white = [q for q, (r, c) in corners.items() if bool((x[i, 0, r:r + MARKER, c:c + MARKER] == 255).all())]
        assert white == [int(marked[i])]
    assert (x == 255).sum() == 32 * MARKER * MARKER  # nothing else is white


def test_the_same_seed_gives_the_same_scenes_and_another_seed_others():
    images, labels = _garments()
    a = marked_scenes(images, labels, 16, seed=5)
    b = marked_scenes(images, labels, 16, seed=5)
    c = marked_scenes(images, labels, 16, seed=6)
    assert all(torch.equal(u, v) for u, v in zip(a, b))
    assert not torch.equal(a[0], c[0])


def test_the_garment_set_floor_counts_the_most_frequent_class_of_four():
    classes = torch.tensor([[1, 2, 3, 4], [5, 5, 6, 7], [8, 8, 8, 8]])
    assert garment_set_floor(classes) == pytest.approx(100 * (1 / 4 + 2 / 4 + 1) / 3)


def test_bad_input_is_refused_with_its_fix():
    images, labels = _garments()
    with pytest.raises(ValueError, match="at least one scene"):
        marked_scenes(images, labels, 0, seed=0)
    with pytest.raises(ValueError, match=r"28 x 28 images as \[M, 28, 28\]"):
        marked_scenes(images[:, None], labels, 4, seed=0)


def test_the_in_memory_dataset_has_the_scenes_asked_for_and_their_own_statistics():
    data = load_dataset("fashion_marked", 300, 100)
    assert data.train_x.shape == (300, 1, CANVAS, CANVAS) and data.test_x.shape == (100, 1, CANVAS, CANVAS)
    assert data.num_classes == 10 and 0 < data.mean < 1 and data.std > 0
    assert torch.equal(load_dataset("fashion_marked", 300, 100).train_x, data.train_x)


def test_the_grids_train_a_patch_7_vit_on_65_tokens_and_the_probe_pairs_softmax_with_uniform():
    from polyattn.experiments import GRIDS
    from polyattn.model_sizes import image_seq_len

    probe = GRIDS["vit_marked_probe_10"]("book")
    assert [c.activation for c in probe] == ["softmax", "uniform"]
    assert [c.epochs for c in GRIDS["vit_marked_probe"]("book")] == [10, 10, 30, 30]
    book = GRIDS["vit_marked"]("book")
    assert {c.activation for c in book} == {"softmax", "poly:p=3", "poly:p=3,c=1", "uniform"}
    assert sorted({c.seed for c in book}) == [0, 1, 2, 3, 4]
    assert {image_seq_len(c) for c in probe + book} == {65}
    assert {c.clip_grad for c in probe + book} == {0.0} and GRIDS["vit_marked"]("paper") == []
