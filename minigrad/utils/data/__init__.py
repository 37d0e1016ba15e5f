"""`minigrad.utils.data`: datasets, samplers and a single-process DataLoader, as torch.utils.data (written in
`_data.py`); `dataloader`, `dataset` and `sampler` give the same classes under PyTorch's module paths."""

from __future__ import annotations

from ..._missing import missing_name
from . import dataloader, dataset, sampler
from ._data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    random_split,
)

__all__ = [
    "BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "RandomSampler", "Sampler",
    "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "default_collate",
    "default_convert", "random_split",
]

__getattr__ = missing_name(__name__, "torch.utils.data")
