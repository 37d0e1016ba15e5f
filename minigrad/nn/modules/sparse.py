"""`torch.nn.modules.sparse`: the classes in it that minigrad has, for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ..sparse import Embedding

__all__ = ["Embedding"]

__getattr__ = missing_name(__name__, "torch.nn.modules.sparse")
