"""Stand-ins for torchvision.datasets: same item shapes and dtypes, random content, few samples."""
import numpy as np
import torch
from torch.utils.data import Dataset

# Samples per split. Real sizes: MNIST/FashionMNIST 60000/10000, CIFAR10 50000/10000.
SIZES = {"train": 2000, "test": 1000}


class _ImageDataset(Dataset):
    """Raw images are uint8 tensors (H, W) or (H, W, C), like torchvision's PIL images / .data."""
    image_shape = (28, 28)
    classes = [str(i) for i in range(10)]

    def __init__(self, root=None, train=True, transform=None, target_transform=None,
                 download=False, size=None, seed=None):
        n = size if size is not None else SIZES["train" if train else "test"]
        rng = np.random.default_rng((0 if seed is None else seed) + (1 if train else 2))
        self.data = torch.from_numpy(rng.integers(0, 256, size=(n,) + tuple(self.image_shape), dtype=np.uint8))
        self.targets = torch.from_numpy(rng.integers(0, len(self.classes), size=(n,), dtype=np.int64))
        self.transform = transform
        self.target_transform = target_transform
        self.train = train

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


class MNIST(_ImageDataset):
    image_shape = (28, 28)


class FashionMNIST(_ImageDataset):
    image_shape = (28, 28)
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
               "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


class CIFAR10(_ImageDataset):
    image_shape = (32, 32, 3)
    classes = ["airplane", "automobile", "bird", "cat", "deer",
               "dog", "frog", "horse", "ship", "truck"]


class FakeData(_ImageDataset):
    """torchvision.datasets.FakeData(size=1000, image_size=(3, 224, 224), num_classes=10)."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        self.image_shape = (image_size[1], image_size[2], image_size[0])
        self.classes = [str(i) for i in range(num_classes)]
        super().__init__(train=True, transform=transform, target_transform=target_transform,
                         size=size, seed=random_offset)
