"""Synthetic stand-ins for the data pipelines of the corpus programs (written for this corpus,
not taken from any of the programs).

The corpus rule is "data swapped for synthetic data of the same shape, model and training code
untouched". Programs that used `torchvision.datasets` / `torchvision.transforms` import these
instead: `datasets.MNIST(...)` yields what `torchvision.datasets.MNIST(..., transform=...)` would
(a uint8 "image" run through the given transform, and an int label), from random pixels, with
fewer samples (sizes below). Nothing is downloaded. Data are made with numpy's own generator, so
they neither depend on nor disturb the program's torch random stream.
"""
from . import datasets, transforms  # noqa: F401
