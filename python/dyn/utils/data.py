"""dyn.utils.data: datasets, samplers, collation and the DataLoader, as torch.utils.data (one process)."""
import bisect
import collections.abc
import copy
import math
import warnings

import numpy as np

import dyn

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "RandomSampler",
    "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
    "default_collate", "default_convert", "get_worker_info", "random_split",
]


# Note [sampler randomness]
# Samplers and random_split draw as PyTorch's do: dyn.randperm / dyn.randint / dyn.multinomial
# with generator= (None: the global RNG, so dyn.manual_seed replays the same orders). A
# RandomSampler without a generator first takes one seed from the global RNG and draws the epoch
# from its own dyn.Generator, so random ops run while iterating do not change its order. The
# orders differ from PyTorch's for the same seed (another RNG); reproducibility is what holds.
def _randperm(n, generator):
    return dyn.randperm(n, generator=generator).tolist()


def get_worker_info():
    """Information about the current worker process: always None, dyn loads data in the main process."""
    return None


# ---- datasets ----


class Dataset:
    """A map-style dataset: subclasses define __getitem__(index) and usually __len__."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream of samples: subclasses define __iter__."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample i is (t[i] for t in tensors); all tensors must have the same size in dimension 0."""

    def __init__(self, *tensors):
        if any(t.size(0) != tensors[0].size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class ConcatDataset(Dataset):
    """The samples of several map-style datasets, one after the other."""

    @staticmethod
    def cumsum(sequence):
        out, total = [], 0
        for d in sequence:
            total += len(d)
            out.append(total)
        return out

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        return self.datasets[which][idx - (self.cumulative_sizes[which - 1] if which else 0)]


class ChainDataset(IterableDataset):
    """The samples of several iterable datasets, one stream after the other."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        return sum(len(d) for d in self.datasets)


class Subset(Dataset):
    """The samples of dataset at the given indices, in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Splits dataset into non-overlapping random Subsets of the given lengths (counts, or fractions summing to 1)."""
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= n:
        counts = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(int(math.floor(n * frac)))
        for i in range(n - sum(counts)):  # the remainder, one each, round-robin
            counts[i % len(counts)] += 1
        lengths = counts
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.")
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = _randperm(n, generator)
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, indices[start:start + length]))
        start += length
    return out


# ---- samplers ----


def _check_positive_int(name, value):
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


class Sampler:
    """Iterates over dataset indices (or, for a batch sampler, lists of them)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices: a fresh permutation per epoch, or num_samples draws with replacement."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        _check_positive_int("num_samples", self.num_samples)

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            generator = dyn.Generator()
            generator.manual_seed(int(dyn.randint(0, 2**62, ()).item()))
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from dyn.randint(0, n, (32,), generator=generator).tolist()
            yield from dyn.randint(0, n, (self.num_samples % 32,), generator=generator).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from _randperm(n, generator)
        yield from _randperm(n, generator)[: self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order, a fresh one per epoch."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _randperm(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """num_samples indices drawn with probability proportional to weights (as torch.multinomial)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _check_positive_int("num_samples", num_samples)
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = np.asarray(weights.detach().numpy() if dyn.is_tensor(weights) else weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights = dyn.from_numpy(w.copy())
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        # torch.multinomial's checks, which dyn.multinomial does not make.
        w = self.weights.numpy().tolist()
        if any(not math.isfinite(x) or x < 0 for x in w):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if sum(w) <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not self.replacement:
            if self.num_samples > len(w):
                raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
            if self.num_samples > sum(x > 0 for x in w):
                raise RuntimeError(
                    "invalid multinomial distribution (with replacement=False, not enough non-negative category "
                    "to sample)"
                )
        draw = dyn.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from draw.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of sampler into lists of batch_size (the last one shorter unless drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        _check_positive_int("batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


class _InfiniteConstantSampler(Sampler):
    """None forever: the DataLoader's sampler for an IterableDataset, which ignores indices."""

    def __iter__(self):
        while True:
            yield None


# ---- collation ----

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _numpy_to_tensor(a):
    """A dyn tensor for a numpy array or scalar, sharing its memory, of its dtype.

    The unsigned types dyn lacks (uint16, uint32, uint64) become int64 (uint64 values above
    2**63 - 1 wrap), float128 becomes float64; PyTorch would keep them."""
    a = np.asarray(a)
    if a.dtype.kind == "u" and a.dtype != np.uint8:
        a = a.astype(np.int64)
    elif a.dtype.kind == "f" and a.dtype.itemsize > 8:
        a = a.astype(np.float64)
    elif not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return dyn.from_numpy(a)


def _is_numpy_numeric(x):
    return isinstance(x, (np.ndarray, np.number, np.bool_)) and np.asarray(x).dtype.kind in "biuf"


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _rebuild_mapping(like, converted):
    """A mapping of like's type holding converted: a copy of like updated in place when mutable, else type(like)(...),
    falling back to the plain dict when that type cannot be built from one."""
    if isinstance(like, collections.abc.MutableMapping):
        clone = copy.copy(like)
        clone.update(converted)
        return clone
    try:
        return type(like)(converted)
    except TypeError:
        return converted


def _rebuild_sequence(like, converted):
    """A sequence of like's type holding converted (a list), as _rebuild_mapping does for mappings."""
    if isinstance(like, collections.abc.MutableSequence):
        clone = copy.copy(like)
        clone[:] = converted
        return clone
    try:
        return type(like)(converted)
    except TypeError:
        return converted


def default_convert(data):
    """Converts numpy arrays and numbers in data (recursively) to tensors; leaves everything else."""
    if isinstance(data, dyn.Tensor):
        return data
    if _is_numpy_numeric(data):
        return _numpy_to_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        converted = {k: default_convert(v) for k, v in data.items()}
        return _rebuild_mapping(data, converted)
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        converted = [default_convert(d) for d in data]
        return _rebuild_sequence(data, converted)
    return data


def default_collate(batch):
    """Stacks a list of samples into a batch: tensors by dyn.stack, numbers into tensors, containers by field."""
    elem = batch[0]
    if isinstance(elem, dyn.Tensor):
        return dyn.stack(batch, 0)
    if isinstance(elem, np.ndarray) and elem.dtype.kind in "SaUO":
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    if isinstance(elem, np.ndarray):
        return default_collate([_numpy_to_tensor(b) for b in batch])
    if isinstance(elem, (np.number, np.bool_)):
        return _numpy_to_tensor(np.array(batch))
    if isinstance(elem, float):
        return dyn.tensor(batch, dtype=dyn.float64)
    if isinstance(elem, int):  # bool included: [True, False] -> a bool tensor, as torch.tensor gives
        return dyn.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        return _rebuild_mapping(elem, collated)
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        collated = [default_collate(list(samples)) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return collated  # PyTorch turns tuples into lists here
        return _rebuild_sequence(elem, collated)
    raise TypeError(default_collate_err_msg_format.format(type(elem)))


# ---- the loader ----

_warned_about_workers = False


class DataLoader:
    """Batches of a dataset: indices from a sampler, samples fetched and collated, all in this process."""

    _frozen = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        # pin_memory, timeout, worker_init_fn, multiprocessing_context, prefetch_factor,
        # persistent_workers and in_order only matter with worker processes or a GPU: accepted, ignored.
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable "
                "multiprocessing, otherwise set prefetch_factor to None."
            )
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if num_workers > 0:
            _warn_about_workers(num_workers)

        iterable = isinstance(dataset, IterableDataset)
        if iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(
                        f"DataLoader with IterableDataset: expected unspecified {name} option, but got {name}={value}"
                    )
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
            )
        if sampler is None:
            if iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.num_workers, self.pin_memory, self.timeout = num_workers, pin_memory, timeout
        self.worker_init_fn, self.generator, self.prefetch_factor = worker_init_fn, generator, prefetch_factor
        self.persistent_workers = persistent_workers
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if batch_sampler is not None else default_convert
        )
        self._initialized = True

    def __setattr__(self, name, value):
        if self.__dict__.get("_initialized") and name in self._frozen:
            raise ValueError(f"{name} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
            return n
        return len(self._index_sampler)

    def __iter__(self):
        return _DataLoaderIter(self)

    def _batches(self):
        if isinstance(self.dataset, IterableDataset):
            yield from self._stream_batches()
            return
        dataset, collate = self.dataset, self.collate_fn
        if not self._auto_collation:
            for index in self.sampler:
                yield collate(dataset[index])
            return
        getitems = getattr(dataset, "__getitems__", None)
        for indices in self.batch_sampler:
            yield collate(getitems(indices) if callable(getitems) else [dataset[i] for i in indices])

    def _stream_batches(self):
        it = iter(self.dataset)
        if not self._auto_collation:
            for sample in it:
                yield self.collate_fn(sample)
            return
        for indices in self.batch_sampler:
            batch = [s for _, s in zip(indices, it)]
            if not batch or (self.drop_last and len(batch) < len(indices)):
                return
            yield self.collate_fn(batch)
            if len(batch) < len(indices):
                return


class _DataLoaderIter:
    """One pass over a DataLoader."""

    def __init__(self, loader):
        self._loader = loader
        self._batches = loader._batches()
        self._num_yielded = 0

    def __iter__(self):
        return self

    def __next__(self):
        batch = next(self._batches)
        self._num_yielded += 1
        return batch

    def __len__(self):
        return len(self._loader)


def _warn_about_workers(num_workers):
    global _warned_about_workers
    if _warned_about_workers:
        return
    _warned_about_workers = True
    warnings.warn(
        f"DataLoader(num_workers={num_workers}): dyn has no worker processes, so batches are loaded in the main "
        "process one at a time (same batches, no parallelism); this warning is shown once",
        RuntimeWarning,
        stacklevel=3,
    )


# PyTorch's torch.utils.data is a package (torch.utils.data.dataloader, .dataset, .sampler); here it
# is one module. An empty __path__ lets those submodule imports reach dyn's torch finder, which maps
# them onto this module.
__path__ = []
