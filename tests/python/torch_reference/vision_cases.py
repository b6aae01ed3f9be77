"""torchvision's transforms, datasets and utils on fixed inputs (PIL images and tensors made from
numpy's generator; MNIST and CIFAR files written in their formats): run by torchvision 0.29 with
PyTorch 2.15 to record vision.json (record.py, with /opt/corpus-refdeps on the path: see
tests/corpus/run.py --setup) and by dyn to compare with it (test_vision.py)."""
import os
import pickle
import tempfile

import numpy as np

from reference import encode_value, recorder


def _images():
    r = np.random.default_rng(7)
    return r.integers(0, 256, (9, 13, 3), dtype=np.uint8), r.integers(0, 256, (10, 7), dtype=np.uint8)


def write_mnist(root, n=5):
    r = np.random.default_rng(3)
    raw = os.path.join(root, "MNIST", "raw")
    os.makedirs(raw)
    for prefix, count in (("train", n), ("t10k", n - 2)):
        imgs = r.integers(0, 256, (count, 28, 28), dtype=np.uint8)
        labels = r.integers(0, 10, (count,), dtype=np.uint8)
        with open(os.path.join(raw, f"{prefix}-images-idx3-ubyte"), "wb") as f:
            f.write((0x803).to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in imgs.shape) + imgs.tobytes())
        with open(os.path.join(raw, f"{prefix}-labels-idx1-ubyte"), "wb") as f:
            f.write((0x801).to_bytes(4, "big") + count.to_bytes(4, "big") + labels.tobytes())


def write_cifar(root):
    r = np.random.default_rng(4)
    folder = os.path.join(root, "cifar-10-batches-py")
    os.makedirs(folder)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        with open(os.path.join(folder, name), "wb") as f:
            pickle.dump({"data": r.integers(0, 256, (2, 3072), dtype=np.uint8),
                         "labels": [int(v) for v in r.integers(0, 10, 2)]}, f)
    with open(os.path.join(folder, "batches.meta"), "wb") as f:
        pickle.dump({"label_names": ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
                                     "truck"]}, f)


def cases(torch, torchvision):
    from PIL import Image

    T, F, D, U = torchvision.transforms, torchvision.transforms.functional, torchvision.datasets, torchvision.utils
    if hasattr(D.CIFAR10, "_check_integrity"):
        # torchvision checks the real CIFAR files' md5 sums: these synthetic ones are let through
        D.CIFAR10._check_integrity = lambda self: True
        import torchvision.datasets.cifar as tv_cifar
        tv_cifar.check_integrity = lambda *args, **kwargs: True
    r = {}

    rec = recorder(r)

    rgb, gray = _images()
    prgb, pgray = Image.fromarray(rgb), Image.fromarray(gray)
    t = torch.from_numpy(rgb).permute(2, 0, 1).float() / 255
    rec("to_tensor_rgb", lambda: T.ToTensor()(prgb))
    rec("to_tensor_gray", lambda: T.ToTensor()(pgray))
    rec("to_tensor_ndarray", lambda: T.ToTensor()(rgb))
    rec("pil_to_tensor", lambda: T.PILToTensor()(prgb))
    rec("to_pil_roundtrip", lambda: np.asarray(T.ToPILImage()(t)).tolist())
    rec("to_pil_gray", lambda: np.asarray(T.ToPILImage()(t[:1])).tolist())
    rec("normalize", lambda: T.Normalize((0.5, 0.4, 0.3), (0.2, 0.25, 0.5))(t))
    rec("compose", lambda: T.Compose([T.ToTensor(), T.Normalize([0.5] * 3, [0.5] * 3)])(prgb))
    for size in (5, (6, 4), 20):
        rec(f"resize_pil_{size}", lambda: np.asarray(T.Resize(size)(prgb)).tolist())
    rec("resize_pil_nearest", lambda: np.asarray(T.Resize((4, 5), T.InterpolationMode.NEAREST)(prgb)).tolist())
    rec("resize_tensor_up", lambda: T.Resize((12, 20))(t))
    rec("resize_tensor_nearest", lambda: T.Resize((4, 5), T.InterpolationMode.NEAREST, antialias=False)(t))
    rec("center_crop_pil", lambda: np.asarray(T.CenterCrop(5)(prgb)).tolist())
    rec("center_crop_tensor", lambda: T.CenterCrop((4, 6))(t))
    rec("center_crop_larger", lambda: T.CenterCrop((11, 14))(t))
    for mode in ("constant", "edge", "reflect", "symmetric"):
        rec(f"pad_pil_{mode}", lambda: np.asarray(T.Pad((1, 2), fill=9, padding_mode=mode)(prgb)).tolist())
        rec(f"pad_tensor_{mode}", lambda: T.Pad([1, 2, 3, 1], padding_mode=mode)(t))
    rec("hflip_pil", lambda: np.asarray(F.hflip(prgb)).tolist())
    rec("vflip_tensor", lambda: F.vflip(t))
    rec("grayscale_pil", lambda: np.asarray(T.Grayscale()(prgb)).tolist())
    rec("grayscale_tensor3", lambda: T.Grayscale(3)(t))
    rec("crop_tensor", lambda: F.crop(t, 2, 3, 4, 5))
    rec("convert_dtype", lambda: (F.convert_image_dtype(torch.from_numpy(rgb), torch.float32),
                                  F.convert_image_dtype(t, torch.uint8)))
    rec("random_crop_full", lambda: T.RandomCrop((9, 13))(t))
    rec("random_crop_too_big", lambda: T.RandomCrop(20)(t))
    rec("flip_p1", lambda: T.RandomHorizontalFlip(p=1.0)(t))
    rec("normalize_zero_std", lambda: T.Normalize((0.5,), (0.0,))(t))
    rec("normalize_int", lambda: T.Normalize((0.5,), (0.5,))(torch.from_numpy(rgb)))
    rec("to_tensor_bad", lambda: T.ToTensor()([1, 2]))
    rec("lambda_bad", lambda: T.Lambda(3))

    with tempfile.TemporaryDirectory() as root:
        write_mnist(root)
        write_cifar(root)
        for train in (True, False):
            def mnist():
                d = D.MNIST(root, train=train, transform=T.ToTensor())
                img, target = d[1]
                return len(d), d.data, d.targets, img, target, d.classes[3], repr(d).replace(root, "ROOT")
            rec(f"mnist_{train}", mnist)

            def cifar():
                d = D.CIFAR10(root, train=train)
                img, target = d[3]
                return len(d), np.asarray(img).tolist(), target, d.classes, d.data.shape, d.class_to_idx["cat"]
            rec(f"cifar_{train}", cifar)
        rec("fashion_missing", lambda: D.FashionMNIST(root))
        os.makedirs(os.path.join(root, "folder", "dogs"))
        os.makedirs(os.path.join(root, "folder", "cats"))
        Image.fromarray(rgb).save(os.path.join(root, "folder", "dogs", "b.png"))
        Image.fromarray(rgb[::-1].copy()).save(os.path.join(root, "folder", "dogs", "a.png"))
        Image.fromarray(gray).save(os.path.join(root, "folder", "cats", "c.png"))
        with open(os.path.join(root, "folder", "cats", "notes.txt"), "w") as f:
            f.write("not an image")

        def folder():
            d = D.ImageFolder(os.path.join(root, "folder"), transform=T.PILToTensor())
            return (d.classes, [(os.path.basename(p), c) for p, c in d.samples], d.targets, d[0][0], d[2][0].shape)
        rec("image_folder", folder)

    def fake():
        d = D.FakeData(size=4, image_size=(3, 5, 6), num_classes=3, transform=T.ToTensor())
        a, b = d[2], d[2]
        return len(d), tuple(a[0].shape), a[0].dtype, bool(torch.equal(a[0], b[0])), a[1] == b[1], type(a[1]).__name__
    rec("fake_data", fake)
    rec("make_grid", lambda: U.make_grid(torch.stack([t, t.flip(-1), 1 - t]), nrow=2, padding=1, pad_value=0.25))
    return r


def encode(torch, v):
    return encode_value(torch, v)
