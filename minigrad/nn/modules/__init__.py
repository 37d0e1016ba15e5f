"""`torch.nn.modules`: the package PyTorch defines its layers in. Code that names a layer by its full path
(`nn.modules.linear.Linear`, `isinstance(m, nn.modules.conv.Conv2d)`) finds minigrad's classes here, the same
objects as `minigrad.nn`'s."""

from __future__ import annotations

from ..._missing import missing_name
from . import (
    activation,
    batchnorm,
    container,
    conv,
    dropout,
    flatten,
    instancenorm,
    linear,
    loss,
    module,
    normalization,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    transformer,
)

__all__ = [
    "activation", "batchnorm", "container", "conv", "dropout", "flatten", "instancenorm", "linear", "loss", "module",
    "normalization", "pixelshuffle", "pooling", "rnn", "sparse", "transformer",
]

__getattr__ = missing_name(__name__, "torch.nn.modules")
