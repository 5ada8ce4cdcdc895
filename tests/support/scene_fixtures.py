"""Items and a Fashion-MNIST stand-in for the scene and detection tests."""
from __future__ import annotations

import gzip

import torch

from polyattn.data.fashion_mnist import FILES


def blob_items(n=40, seed=0):
    """Items with an object in the middle (an ellipse of random size and brightness) and faint noise."""
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.arange(28.0), torch.arange(28.0), indexing="ij")
    items = []
    for _ in range(n):
        ry, rx = 4 + 9 * torch.rand(2, generator=g)
        inside = ((yy - 13.5) / ry) ** 2 + ((xx - 13.5) / rx) ** 2 <= 1
        level = 120 + 135 * torch.rand(1, generator=g)
        img = torch.where(inside, level, 20 * torch.rand(28, 28, generator=g))
        items.append(img.round().to(torch.uint8))
    return torch.stack(items), torch.arange(n) % 10


def fake_fashion_mnist(tmp_path, n=30):
    """Debian's gzipped IDX layout with blob items (train and test alike)."""
    src = tmp_path / "src"
    src.mkdir()
    items, classes = blob_items(n, seed=5)
    for name in FILES:
        header = (2051 if "images" in name else 2049).to_bytes(4, "big") + n.to_bytes(4, "big")
        if "images" in name:
            body = (28).to_bytes(4, "big") * 2 + items.numpy().tobytes()
        else:
            body = classes.to(torch.uint8).numpy().tobytes()
        with gzip.open(src / f"{name}.gz", "wb") as f:
            f.write(header + body)
    return src, items, classes
