"""`minigrad.nn`: modules, parameters, losses and initialisers, as `torch.nn`.

    import minigrad as torch
    import minigrad.nn as nn
    import minigrad.nn.functional as F

    model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    loss = nn.CrossEntropyLoss()(model(x), y)
"""

from . import functional, init
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .layers import GELU, Dropout, Flatten, Identity, LeakyReLU, Linear, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .parameter import Parameter
from .sparse import Embedding

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "CrossEntropyLoss", "Dropout", "Embedding",
    "Flatten", "GELU", "Identity", "L1Loss", "LayerNorm",
    "LeakyReLU", "Linear", "LogSoftmax", "MSELoss", "Module", "ModuleDict", "ModuleList", "NLLLoss", "Parameter",
    "ParameterDict", "ParameterList", "ReLU",
    "Sequential", "Sigmoid", "Softmax", "Tanh", "functional", "init",
]


from .._missing import missing_name  # noqa: E402

__getattr__ = missing_name(__name__, "torch.nn")
