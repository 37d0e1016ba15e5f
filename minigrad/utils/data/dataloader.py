"""`torch.utils.data.dataloader`: the names of PyTorch"s module that minigrad has (defined in `minigrad.utils.data`),
for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ._data import DataLoader, default_collate, default_convert

__all__ = ["DataLoader", "default_collate", "default_convert"]

__getattr__ = missing_name(__name__, "torch.utils.data.dataloader")
