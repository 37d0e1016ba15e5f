"""`minigrad.utils.data`: datasets, samplers and a single-process DataLoader, as torch.utils.data.

A DataLoader asks its batch sampler for one list of indices at a time (a `SequentialSampler`, a
`RandomSampler` shuffled with `generator=` or with a seed taken from minigrad's global generator,
so `minigrad.manual_seed` makes runs repeatable, or any sampler you pass, endless ones included),
fetches those samples and stacks them into batch tensors with `default_collate`.
"""

from __future__ import annotations

import collections.abc
import itertools
import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ... import _random
from ..._creation import as_tensor, multinomial
from ..._state import GRAD
from ..._tensor import Tensor, make
from ...ops.joining import stack

__all__ = [
    "BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "RandomSampler", "Sampler",
    "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "default_collate",
    "default_convert", "random_split",
]


class Dataset:
    """A map-style data set: subclasses define `__getitem__(index)` and `__len__()`."""

    __module__ = "minigrad.utils.data"

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Samples are rows: item i is `tuple(t[i] for t in tensors)`; all tensors share the first dim."""

    __module__ = "minigrad.utils.data"

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class ConcatDataset(Dataset):
    """Several data sets one after the other."""

    __module__ = "minigrad.utils.data"

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]))

    def __len__(self) -> int:
        return int(self.cumulative_sizes[-1])

    def __getitem__(self, idx: int):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        i = int(np.searchsorted(self.cumulative_sizes, idx, side="right"))
        start = 0 if i == 0 else int(self.cumulative_sizes[i - 1])
        return self.datasets[i][idx - start]


class IterableDataset(Dataset):
    """A stream of samples: subclasses define `__iter__` (the DataLoader batches it in order, no sampler)."""

    __module__ = "minigrad.utils.data"

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class Subset(Dataset):
    """The samples of `dataset` at `indices`."""

    __module__ = "minigrad.utils.data"

    def __init__(self, dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset, lengths: Sequence, generator=None) -> list[Subset]:
    """Split into non-overlapping Subsets of the given lengths, or of fractions summing to 1 (as PyTorch).

    Fractions become floor(frac * len) each, and the remainder is handed out one by one from the
    first split on, so `[0.7, 0.3]` of 11 samples gives 8 and 3.
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(int(math.floor(len(dataset) * frac)))
        for i in range(len(dataset) - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              UserWarning, stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = _rng(generator).permutation(sum(lengths)).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + length]))
        offset += length
    return out


def _rng(generator) -> np.random.Generator:
    """The NumPy generator for one pass: the given one, or a fresh one seeded from minigrad's global stream."""
    if generator is not None:
        return generator._np
    seed = int(_random.default_generator._np.integers(0, 2**63 - 1))
    return np.random.Generator(np.random.PCG64(seed))


# -- samplers: iterables of indices (or of lists of indices), drawn one at a time ---------------------------
class Sampler:
    """Base class of samplers: an iterable of dataset indices (subclasses define `__iter__`, maybe `__len__`)."""

    __module__ = "minigrad.utils.data"

    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1, in that order (what a DataLoader uses when it does not shuffle)."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices: a fresh permutation per pass, or `num_samples` draws with replacement.

    Indices are drawn lazily (32 at a time with replacement, one permutation at a time without),
    so `num_samples=int(1e10)` makes an endless stream that starts at once, as makemore uses it.
    """

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        rng = _rng(self.generator)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from rng.integers(0, n, size=32).tolist()
            yield from rng.integers(0, n, size=self.num_samples % 32).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from rng.permutation(n).tolist()
            if self.num_samples % n:  # (PyTorch draws this last permutation even when it keeps none of it)
                yield from rng.permutation(n).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (a fresh one per pass), without replacement."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        rng = self.generator._np if self.generator is not None else _random.default_generator._np
        for i in rng.permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probabilities proportional to `weights` (`multinomial` underneath)."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")

        weights_tensor = as_tensor(weights, dtype=np.float64)
        if weights_tensor.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:

        yield from multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator).tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Group the indices of another sampler into lists of `batch_size` (the last one shorter unless `drop_last`)."""

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        it = iter(self.sampler)  # one batch at a time: an endless sampler works
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


def default_collate(batch: list) -> Any:
    """Stack a list of samples into a batch: tensors stack, numbers become a tensor, tuples/dicts recurse.

    As PyTorch: ints give int64, floats float64, and a batch of tuples becomes a list of batches.
    """
    elem = batch[0]
    if isinstance(elem, Tensor):

        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OUS":
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                            f"found {elem.dtype}")
        return make(np.stack(batch, 0))
    if isinstance(elem, np.generic):
        return make(np.asarray(batch))
    if isinstance(elem, bool):
        return make(np.asarray(batch, np.bool_))
    if isinstance(elem, int):
        return make(np.asarray(batch, np.int64))
    if isinstance(elem, float):
        return make(np.asarray(batch, np.float64))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
                    f"{type(elem)}")


def default_convert(data: Any) -> Any:
    """Without batching (`batch_size=None`): NumPy arrays and scalars become tensors, containers recurse."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OUS":
        return make(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return make(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, list):
        return [default_convert(d) for d in data]
    return data


class DataLoader:
    """Iterate over a data set in batches: `for x, y in DataLoader(ds, batch_size=32, shuffle=True)`.

    As in PyTorch, a sampler yields indices (`SequentialSampler`, or `RandomSampler` with `shuffle=True`,
    or yours), a `BatchSampler` groups them, and `collate_fn` turns each group of samples into a batch.
    Indices are drawn one batch at a time, so an endless sampler works. Runs in the calling process
    (`num_workers` is accepted and ignored).
    """

    __module__ = "minigrad.utils.data"

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None, sampler=None,
                 batch_sampler=None, num_workers: int = 0, collate_fn: Callable | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, **kwargs) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                                 "drop_last")
        elif not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> Iterator:
        if self.pin_memory:  # (PyTorch warns when the iterator is made, without an accelerator to pin for)
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", UserWarning, stacklevel=2)
        if self._iterable:
            yield from self._iter_stream()
            return
        if not self._auto_collation:
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])
            return
        fast = type(self.dataset) is TensorDataset and self.collate_fn is default_collate and not (
            GRAD.mode > 0 and any(t._requires_grad for t in self.dataset.tensors))
        for chunk in self.batch_sampler:
            if fast:
                # the same batch default_collate would stack, indexed in one step
                key = np.asarray(chunk, np.int64)
                yield [make(t._data[key]) for t in self.dataset.tensors]
            else:
                yield self.collate_fn([self.dataset[i] for i in chunk])

    def _iter_stream(self) -> Iterator:
        it = iter(self.dataset)
        if self.batch_size is None:
            for sample in it:
                yield self.collate_fn(sample)
            return
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
        return len(self._index_sampler)


class _InfiniteConstantSampler(Sampler):
    """What an IterableDataset's loader holds as its sampler: None forever (the dataset decides the order)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None



