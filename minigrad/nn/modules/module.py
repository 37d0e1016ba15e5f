"""`torch.nn.modules.module`: the classes in it that minigrad has, for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ..module import Module

__all__ = ["Module"]

__getattr__ = missing_name(__name__, "torch.nn.modules.module")
