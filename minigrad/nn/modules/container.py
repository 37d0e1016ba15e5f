"""`torch.nn.modules.container`: the classes in it that minigrad has, for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ..container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]

__getattr__ = missing_name(__name__, "torch.nn.modules.container")
