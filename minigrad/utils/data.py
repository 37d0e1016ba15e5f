"""`minigrad.utils.data`: Dataset, TensorDataset and a single-process DataLoader, as torch.utils.data.

A DataLoader draws indices (shuffled with `generator=`, or with a seed taken from minigrad's
global generator, so `minigrad.manual_seed` makes runs repeatable), fetches samples and stacks
them into batch tensors with `default_collate`.
"""

from __future__ import annotations

import collections.abc
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .. import _random
from .._missing import missing_name
from .._state import GRAD
from .._tensor import Tensor, make

__all__ = ["DataLoader", "Dataset", "TensorDataset", "default_collate", "random_split"]


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


class Subset(Dataset):
    """The samples of `dataset` at `indices`."""

    __module__ = "minigrad.utils.data"

    def __init__(self, dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset, lengths: Sequence, generator=None) -> list[Subset]:
    """Split into non-overlapping Subsets of the given lengths (or fractions summing to 1)."""
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = _rng(generator).permutation(n).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + length]))
        offset += length
    return out


def _rng(generator) -> np.random.Generator:
    """The NumPy generator for one shuffle: the given one, or a fresh one seeded from minigrad's global stream."""
    if generator is not None:
        return generator._np
    seed = int(_random.default_generator._np.integers(0, 2**63 - 1))
    return np.random.Generator(np.random.PCG64(seed))


def default_collate(batch: list) -> Any:
    """Stack a list of samples into a batch: tensors stack, numbers become a tensor, tuples/dicts recurse.

    As PyTorch: ints give int64, floats float64, and a batch of tuples becomes a list of batches.
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        from ..ops.joining import stack

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


class DataLoader:
    """Iterate over a data set in batches: `for x, y in DataLoader(ds, batch_size=32, shuffle=True)`.

    Runs in the calling process (`num_workers` is accepted and ignored).
    """

    __module__ = "minigrad.utils.data"

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None, sampler=None,
                 batch_sampler=None, num_workers: int = 0, collate_fn: Callable | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0, worker_init_fn=None,
                 generator=None, **kwargs) -> None:
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = bool(shuffle)
        self.sampler = sampler
        self.drop_last = drop_last
        self.num_workers = num_workers
        self.collate_fn = collate_fn if collate_fn is not None else default_collate
        self.generator = generator
        self.batch_sampler = batch_sampler

    def _indices(self) -> list:
        if self.sampler is not None:
            return list(iter(self.sampler))
        n = len(self.dataset)
        if self.shuffle:
            return _rng(self.generator).permutation(n).tolist()
        return list(range(n))

    def _batches(self) -> Iterator[list]:
        if self.batch_sampler is not None:
            yield from self.batch_sampler
            return
        idx = self._indices()
        bs = self.batch_size
        for start in range(0, len(idx), bs):
            chunk = idx[start:start + bs]
            if len(chunk) < bs and self.drop_last:
                return
            yield chunk

    def __iter__(self) -> Iterator:
        if self.batch_size is None and self.batch_sampler is None:
            for i in self._indices():
                yield self.dataset[i]
            return
        fast = type(self.dataset) is TensorDataset and self.collate_fn is default_collate and not (
            GRAD.mode > 0 and any(t._requires_grad for t in self.dataset.tensors))
        for chunk in self._batches():
            if fast:
                # the same batch default_collate would stack, indexed in one step
                key = np.asarray(chunk, np.int64)
                yield [make(t._data[key]) for t in self.dataset.tensors]
            else:
                yield self.collate_fn([self.dataset[i] for i in chunk])

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


__getattr__ = missing_name(__name__, "torch.utils.data")
