"""`torch.nn.modules.instancenorm`: the classes in it that minigrad has, for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ..normalization import InstanceNorm1d, InstanceNorm2d

__all__ = ["InstanceNorm1d", "InstanceNorm2d"]

__getattr__ = missing_name(__name__, "torch.nn.modules.instancenorm")
