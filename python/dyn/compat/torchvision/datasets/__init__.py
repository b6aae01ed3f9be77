"""torchvision.datasets: MNIST, FashionMNIST, KMNIST, CIFAR10, CIFAR100 read from their real on-disk
formats (idx-ubyte files, gzipped or not; CIFAR's pickled batches), ImageFolder/DatasetFolder and
FakeData, with torchvision's attributes (data, targets, classes, class_to_idx) and items (a PIL image
and an int target, then the transforms). dyn downloads nothing: download=True uses the files when
they are there and otherwise says which files to put where."""
import gzip
import os
import pickle

import numpy as np

import dyn
from dyn.utils.data import Dataset

from ..transforms import functional as _F


class VisionDataset(Dataset):
    _repr_indent = 4

    def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
        self.root = os.path.expanduser(root) if isinstance(root, str) else root
        self.transform, self.target_transform = transform, target_transform
        self.transforms = transforms

    def _apply(self, img, target):
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def extra_repr(self):
        return ""

    def __repr__(self):
        # torchvision's layout, which indents only the first line of its transforms' block
        lines = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            lines.append(f"Root location: {self.root}")
        lines += self.extra_repr().splitlines()
        if self.transform is not None or self.target_transform is not None:
            block = ["StandardTransform"]
            for head, t in (("Transform: ", self.transform), ("Target transform: ", self.target_transform)):
                if t is not None:
                    rows = repr(t).splitlines()
                    block += [head + rows[0]] + [" " * len(head) + row for row in rows[1:]]
            lines.append("\n".join(block))
        return "\n".join([f"Dataset {type(self).__name__}"] + [" " * self._repr_indent + x for x in lines])


def _missing(name, folder, files, download):
    what = ", ".join(files)
    if download:
        return RuntimeError(f"{name}: dyn does not download datasets (download=True needs the network and "
                            f"torchvision's downloader). Put {what} in {folder} and run again, or run under "
                            f"--real-torch")
    return RuntimeError(f"Dataset not found. You can use download=True to download it (dyn reads {what} from "
                        f"{folder}; it downloads nothing)")


def _read(path):
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            with (gzip.open(p, "rb") if p.endswith(".gz") else open(p, "rb")) as f:
                return f.read()
    return None


def _idx(data, expect_dims):
    """An idx-ubyte array (LeCun's format: magic, dims, big-endian sizes, then the values)."""
    magic = int.from_bytes(data[0:4], "big")
    nd, ty = magic % 256, magic // 256
    if ty != 8 or nd != expect_dims:
        raise RuntimeError(f"not an idx-ubyte file of {expect_dims} dims of uint8 (magic {magic:#x})")
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * nd).reshape(dims).copy()


class MNIST(VisionDataset):
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]
    training_file, test_file = "training.pt", "test.pt"
    _files = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
              False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        images, labels = self._files[train]
        raw_i, raw_l = _read(os.path.join(self.raw_folder, images)), _read(os.path.join(self.raw_folder, labels))
        if raw_i is None or raw_l is None:
            raise _missing(type(self).__name__, self.raw_folder, [images + "[.gz]", labels + "[.gz]"], download)
        self.data = dyn.from_numpy(_idx(raw_i, 3))
        self.targets = dyn.from_numpy(_idx(raw_l, 1).astype(np.int64))

    @property
    def raw_folder(self):
        return os.path.join(self.root, type(self).__name__, "raw")

    @property
    def processed_folder(self):
        return os.path.join(self.root, type(self).__name__, "processed")

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    @property
    def train_data(self):
        return self.data

    @property
    def train_labels(self):
        return self.targets

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        img = _F._pil().fromarray(self.data[index].numpy(), mode="L")
        return self._apply(img, int(self.targets[index]))

    def extra_repr(self):
        return f"Split: {'Train' if self.train else 'Test'}"


class FashionMNIST(MNIST):
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


class KMNIST(MNIST):
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]


class CIFAR10(VisionDataset):
    base_folder = "cifar-10-batches-py"
    train_list = [f"data_batch_{i}" for i in range(1, 6)]
    test_list = ["test_batch"]
    meta = {"filename": "batches.meta", "key": "label_names"}
    _labels = "labels"

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        folder = os.path.join(self.root, self.base_folder)
        names = self.train_list if train else self.test_list
        if not all(os.path.exists(os.path.join(folder, n)) for n in names):
            raise _missing(type(self).__name__, folder, names, download)
        data, targets = [], []
        for n in names:
            with open(os.path.join(folder, n), "rb") as f:
                entry = pickle.load(f, encoding="latin1")
            data.append(entry["data"])
            targets.extend(entry[self._labels])
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))
        self.targets = targets
        meta = os.path.join(folder, self.meta["filename"])
        if os.path.exists(meta):
            with open(meta, "rb") as f:
                self.classes = pickle.load(f, encoding="latin1")[self.meta["key"]]
        else:
            self.classes = [str(i) for i in range(max(targets) + 1)]
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        return self._apply(_F._pil().fromarray(self.data[index]), self.targets[index])

    def extra_repr(self):
        return f"Split: {'Train' if self.train else 'Test'}"


class CIFAR100(CIFAR10):
    base_folder = "cifar-100-python"
    train_list = ["train"]
    test_list = ["test"]
    meta = {"filename": "meta", "key": "fine_label_names"}
    _labels = "fine_labels"


class FakeData(VisionDataset):
    """Random images: item i is the same each time (the generator seeded with i + random_offset)."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None, target_transform=None,
                 random_offset=0):
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size, self.num_classes, self.image_size = size, num_classes, image_size
        self.random_offset = random_offset

    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError(f"{type(self).__name__} index out of range")
        state = dyn.get_rng_state()
        dyn.manual_seed(index + self.random_offset)
        img = dyn.randn(*self.image_size)
        target = dyn.randint(0, self.num_classes, size=(1,), dtype=dyn.long)[0]
        dyn.set_rng_state(state)
        return self._apply(_F.to_pil_image(img), target.item())

    def __len__(self):
        return self.size


IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def pil_loader(path):
    with open(path, "rb") as f:
        return _F._pil().open(f).convert("RGB")


default_loader = pil_loader


class DatasetFolder(VisionDataset):
    """root/class_x/xxx.ext: samples (path, class index), classes sorted by name."""

    def __init__(self, root, loader, extensions=None, transform=None, target_transform=None, is_valid_file=None,
                 allow_empty=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.classes, self.class_to_idx = self.find_classes(self.root)
        if extensions is not None and is_valid_file is not None:
            raise ValueError("Both extensions and is_valid_file cannot be None or not None at the same time")
        valid = is_valid_file or (lambda p: p.lower().endswith(tuple(extensions)))
        self.samples = []
        for c in self.classes:
            for dirpath, _, files in sorted(os.walk(os.path.join(self.root, c), followlinks=True)):
                for name in sorted(files):
                    if valid(os.path.join(dirpath, name)):
                        self.samples.append((os.path.join(dirpath, name), self.class_to_idx[c]))
        if not self.samples and not allow_empty:
            raise FileNotFoundError(f"Found no valid file for the classes {', '.join(self.classes)}. Supported "
                                    f"extensions are: {', '.join(extensions or ())}")
        self.loader, self.extensions = loader, extensions
        self.imgs = self.samples
        self.targets = [s[1] for s in self.samples]

    @staticmethod
    def find_classes(directory):
        classes = sorted(e.name for e in os.scandir(directory) if e.is_dir())
        if not classes:
            raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
        return classes, {c: i for i, c in enumerate(classes)}

    def __getitem__(self, index):
        path, target = self.samples[index]
        return self._apply(self.loader(path), target)

    def __len__(self):
        return len(self.samples)


class ImageFolder(DatasetFolder):
    def __init__(self, root, transform=None, target_transform=None, loader=default_loader, is_valid_file=None,
                 allow_empty=False):
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None, transform=transform,
                         target_transform=target_transform, is_valid_file=is_valid_file, allow_empty=allow_empty)


__all__ = ["VisionDataset", "MNIST", "FashionMNIST", "KMNIST", "CIFAR10", "CIFAR100", "FakeData", "DatasetFolder",
           "ImageFolder"]
