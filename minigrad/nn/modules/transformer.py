"""`torch.nn.modules.transformer`: the classes in it that minigrad has, for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ..transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer",
]

__getattr__ = missing_name(__name__, "torch.nn.modules.transformer")
