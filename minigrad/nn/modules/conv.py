"""`torch.nn.modules.conv`: the classes in it that minigrad has, for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ..convolution import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d, LazyConv1d, LazyConv2d

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "LazyConv1d", "LazyConv2d"]

__getattr__ = missing_name(__name__, "torch.nn.modules.conv")
