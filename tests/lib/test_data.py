import gzip
import shutil

import pytest
import torch

from polyattn.data import DatasetMissing, load_cifar10, load_dataset, load_fashion_mnist, load_image_folder
from polyattn.data.augment import DeiTAugment
from polyattn.data.fashion_mnist import DEBIAN_DIR, FILES


def _fake_idx_source(tmp_path, n=12):
    """Four gzipped IDX files in Debian's layout, with n random images."""
    src = tmp_path / "src"
    src.mkdir()
    g = torch.Generator().manual_seed(0)
    for name in FILES:
        images = "images" in name
        header = (2051 if images else 2049).to_bytes(4, "big") + n.to_bytes(4, "big")
        if images:
            header += (28).to_bytes(4, "big") * 2
            body = (torch.rand(n, 28, 28, generator=g) * 255).to(torch.uint8).numpy().tobytes()
        else:
            body = torch.arange(n, dtype=torch.uint8).remainder(10).numpy().tobytes()
        with gzip.open(src / f"{name}.gz", "wb") as f:
            f.write(header + body)
    return src


def test_fashion_mnist_is_staged_from_gzipped_idx_files(tmp_path):
    src = _fake_idx_source(tmp_path)
    tx, ty, vx, vy = load_fashion_mnist(root=tmp_path / "root", source=src)
    assert tx.shape == (12, 28, 28) and tx.dtype == torch.uint8
    assert ty.tolist() == [i % 10 for i in range(12)]
    assert sorted(p.name for p in (tmp_path / "root" / "FashionMNIST" / "raw").iterdir()) == sorted(FILES)
    shutil.rmtree(src)  # once staged, the source is no longer needed
    assert torch.equal(load_fashion_mnist(root=tmp_path / "root", source=src)[0], tx)


def test_processes_staging_at_once_do_not_collide(tmp_path):
    # two grids started together both stage the dataset; neither may fail
    import multiprocessing

    from polyattn.data.fashion_mnist import _stage_raw
    src = _fake_idx_source(tmp_path)
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        assert pool.starmap(_stage_raw, [(tmp_path / "root", src)] * 8) == [True] * 8
    raw = tmp_path / "root" / "FashionMNIST" / "raw"
    assert sorted(p.name for p in raw.iterdir()) == sorted(FILES)       # no temporary left behind
    for name in FILES:
        assert (raw / name).read_bytes() == gzip.open(src / f"{name}.gz").read()


def test_missing_fashion_mnist_names_the_debian_package(tmp_path, monkeypatch):
    from torchvision.datasets import FashionMNIST

    def offline(self, *a, **k):
        raise RuntimeError("no network")

    monkeypatch.setattr(FashionMNIST, "download", offline)
    with pytest.raises(DatasetMissing, match="apt-get install dataset-fashion-mnist"):
        load_fashion_mnist(root=tmp_path / "root", source=tmp_path / "absent")


@pytest.mark.skipif(not DEBIAN_DIR.exists(), reason="dataset-fashion-mnist is not installed")
def test_real_fashion_mnist_subsets_are_fixed():
    a = load_dataset("fashion_mnist", 100, 50)
    b = load_dataset("fashion_mnist", 100, 50)
    assert a.train_x.shape == (100, 1, 28, 28) and a.test_x.shape == (50, 1, 28, 28)
    assert torch.equal(a.train_x, b.train_x) and torch.equal(a.test_y, b.test_y)
    full = load_dataset("fashion_mnist")
    assert len(full.train_y) == 60000 and len(full.test_y) == 10000
    assert abs(full.normalise(full.train_x[:5000]).mean().item()) < 0.05


def test_user_supplied_datasets_explain_the_expected_layout(tmp_path):
    with pytest.raises(DatasetMissing, match="cifar-10-batches-py"):
        load_cifar10(tmp_path)
    with pytest.raises(DatasetMissing, match="val_annotations"):
        load_image_folder(tmp_path, "val")
    with pytest.raises(DatasetMissing, match="fashion_mnist"):
        load_dataset("mnist")


def test_deit_augmentation_gives_soft_targets():
    torch.manual_seed(0)
    images = (torch.rand(8, 1, 28, 28) * 255).to(torch.uint8)
    labels = torch.arange(8) % 10
    x, y = DeiTAugment(10, 0.286, 0.353)(images, labels)
    assert x.shape == (8, 1, 28, 28) and x.dtype == torch.float32
    assert y.shape == (8, 10)
    torch.testing.assert_close(y.sum(-1), torch.ones(8))
    assert (y.max(-1).values < 1).any()  # mixed, not one-hot
