# Written for the dynrepl corpus: a synthetic replacement for pytorch/examples super_resolution/data.py
# and dataset.py (which download BSDS300 and load its JPEGs with PIL). Same interface
# (get_training_set / get_test_set) and the same item shapes as the original with upscale_factor=3:
# input = the Y channel of a 256-crop (255 x 255) resized by 1/upscale_factor, target = the 255 x 255
# crop, both float tensors in [0, 1] of shape (1, H, W). 16 training and 8 test images (BSDS300 has
# 200 and 100), random pixels.
import numpy as np
import torch
import torch.utils.data as data


def calculate_valid_crop_size(crop_size, upscale_factor):
    return crop_size - (crop_size % upscale_factor)


class SyntheticSuperResolution(data.Dataset):
    def __init__(self, n, upscale_factor, seed):
        crop_size = calculate_valid_crop_size(256, upscale_factor)
        rng = np.random.default_rng(seed)
        self.targets = torch.from_numpy(rng.random((n, 1, crop_size, crop_size), dtype=np.float32))
        small = crop_size // upscale_factor
        self.inputs = torch.from_numpy(rng.random((n, 1, small, small), dtype=np.float32))

    def __getitem__(self, index):
        return self.inputs[index], self.targets[index]

    def __len__(self):
        return self.inputs.shape[0]


def get_training_set(upscale_factor):
    return SyntheticSuperResolution(16, upscale_factor, 0)


def get_test_set(upscale_factor):
    return SyntheticSuperResolution(8, upscale_factor, 1)
