"""`torch.utils.data.sampler`: the names of PyTorch"s module that minigrad has (defined in `minigrad.utils.data`),
for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ._data import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler

__all__ = [
    "BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler", "WeightedRandomSampler",
]

__getattr__ = missing_name(__name__, "torch.utils.data.sampler")
