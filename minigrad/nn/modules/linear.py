"""`torch.nn.modules.linear`: the classes in it that minigrad has, for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ..attention import NonDynamicallyQuantizableLinear
from ..layers import Identity, Linear
from ..lazy import LazyLinear

__all__ = ["Identity", "LazyLinear", "Linear", "NonDynamicallyQuantizableLinear"]

__getattr__ = missing_name(__name__, "torch.nn.modules.linear")
