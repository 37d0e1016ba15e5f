"""`torch.nn.modules.dropout`: the classes in it that minigrad has, for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ..layers import Dropout, Dropout2d

__all__ = ["Dropout", "Dropout2d"]

__getattr__ = missing_name(__name__, "torch.nn.modules.dropout")
