"""`torch.nn.modules.pixelshuffle`: the classes in it that minigrad has, for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ..layers import PixelShuffle

__all__ = ["PixelShuffle"]

__getattr__ = missing_name(__name__, "torch.nn.modules.pixelshuffle")
