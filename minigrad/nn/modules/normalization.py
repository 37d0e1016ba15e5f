"""`torch.nn.modules.normalization`: the classes in it that minigrad has, for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ..normalization import LayerNorm

__all__ = ["LayerNorm"]

__getattr__ = missing_name(__name__, "torch.nn.modules.normalization")
