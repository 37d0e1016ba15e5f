"""`torch.nn.modules.batchnorm`: the classes in it that minigrad has, for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ..normalization import BatchNorm1d, BatchNorm2d

__all__ = ["BatchNorm1d", "BatchNorm2d"]

__getattr__ = missing_name(__name__, "torch.nn.modules.batchnorm")
