"""`torch.nn.modules.activation`: the classes in it that minigrad has, for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ..attention import MultiheadAttention
from ..layers import ELU, GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh

__all__ = ["ELU", "GELU", "LeakyReLU", "LogSoftmax", "MultiheadAttention", "ReLU", "SiLU", "Sigmoid", "Softmax", "Tanh"]

__getattr__ = missing_name(__name__, "torch.nn.modules.activation")
