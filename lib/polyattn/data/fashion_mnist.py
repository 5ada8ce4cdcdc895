"""Fashion-MNIST without the network: Debian's ``dataset-fashion-mnist`` package ships the
gzipped IDX files; torchvision wants them gunzipped in ``<root>/FashionMNIST/raw``."""
from __future__ import annotations

import gzip
import os
import shutil
import threading
from pathlib import Path

from .errors import DatasetMissing

DEBIAN_DIR = Path("/usr/share/datasets/fashion-mnist")
#: The ten classes, by label (as the data set's authors name them).
CLASS_NAMES = ("T-shirt/top", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle boot")
FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
INSTALL_HINT = ("Fashion-MNIST is not on this machine. Install it with "
                "`sudo apt-get install dataset-fashion-mnist` (Debian/Ubuntu), or put the four IDX files "
                "(gzipped or not) in {raw}, or allow torchvision to download them.")


def default_root() -> Path:
    return Path(os.environ.get("POLYATTN_DATA", Path(__file__).resolve().parents[3] / "data" / "datasets"))


def _stage_raw(root: Path, source: Path = DEBIAN_DIR) -> bool:
    """Gunzip the Debian files into torchvision's raw/ folder; True when all four are there."""
    raw = root / "FashionMNIST" / "raw"
    if all((raw / f).exists() for f in FILES):
        return True
    if not all((source / f"{f}.gz").exists() for f in FILES):
        return False
    raw.mkdir(parents=True, exist_ok=True)
    for f in FILES:
        if (raw / f).exists():
            continue
        # a name of this process's own: processes staging at once each replace the file whole
        tmp = raw / f"{f}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            with gzip.open(source / f"{f}.gz", "rb") as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.replace(tmp, raw / f)
        finally:
            tmp.unlink(missing_ok=True)
    return True


def load_fashion_mnist(root: str | Path | None = None, source: str | Path | None = None):
    """``(train_images, train_labels, test_images, test_labels)`` as uint8 [N, 28, 28] and int64 [N]."""
    from torchvision.datasets import FashionMNIST

    root = Path(root) if root is not None else default_root()
    source = source if source is not None else os.environ.get("POLYATTN_FASHION_MNIST_SOURCE", DEBIAN_DIR)
    staged = _stage_raw(root, Path(source))
    try:
        train = FashionMNIST(str(root), train=True, download=not staged)
        test = FashionMNIST(str(root), train=False, download=not staged)
    except Exception as exc:  # torchvision raises RuntimeError/URLError offline
        raise DatasetMissing(INSTALL_HINT.format(raw=root / "FashionMNIST" / "raw") + f" (cause: {exc})") from None
    return train.data, train.targets, test.data, test.targets
