"""`torch.utils.data.dataset`: the names of PyTorch"s module that minigrad has (defined in `minigrad.utils.data`),
for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ._data import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split

__all__ = ["ConcatDataset", "Dataset", "IterableDataset", "Subset", "TensorDataset", "random_split"]

__getattr__ = missing_name(__name__, "torch.utils.data.dataset")
