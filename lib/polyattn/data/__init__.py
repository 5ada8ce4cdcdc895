"""Datasets: Fashion-MNIST (offline, from Debian's dataset-fashion-mnist), CIFAR-10 and
ImageFolder datasets supplied by the user, and DeiT-style augmentation."""
from .errors import DatasetMissing
from .fashion_mnist import load_fashion_mnist
from .images import load_cifar10, load_image_folder
from .tensors import SIZES, TensorImages, load_dataset, split_sizes

__all__ = ["SIZES", "DatasetMissing", "TensorImages", "load_cifar10", "load_dataset", "load_fashion_mnist",
           "load_image_folder", "split_sizes"]
