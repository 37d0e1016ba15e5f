"""`minigrad.nn`: modules, parameters, losses and initialisers, as `torch.nn`.

    import minigrad as torch
    import minigrad.nn as nn
    import minigrad.nn.functional as F

    model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    loss = nn.CrossEntropyLoss()(model(x), y)
"""

from . import functional, init, modules, utils
from .attention import MultiheadAttention
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .convolution import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d, LazyConv1d, LazyConv2d
from .layers import (
    ELU,
    GELU,
    Dropout,
    Dropout2d,
    Flatten,
    Identity,
    LeakyReLU,
    Linear,
    LogSoftmax,
    PixelShuffle,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
    Upsample,
    ZeroPad2d,
)
from .lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyLinear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, InstanceNorm1d, InstanceNorm2d, LayerNorm
from .parameter import Parameter, UninitializedParameter
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding
from .transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss",
    "BatchNorm1d", "BatchNorm2d", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "CrossEntropyLoss",
    "GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase",
    "Dropout", "Dropout2d", "ELU", "Embedding", "Flatten", "GELU", "Identity",
    "InstanceNorm1d", "InstanceNorm2d", "KLDivLoss", "L1Loss", "LayerNorm",
    "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyConv1d",
    "LazyConv2d", "LazyLinear", "LeakyReLU", "Linear", "LogSoftmax", "MSELoss", "MaxPool1d", "MaxPool2d", "Module",
    "ModuleDict", "ModuleList", "MultiheadAttention", "NLLLoss", "Parameter", "PixelShuffle", "ParameterDict",
    "ParameterList",
    "ReLU", "SiLU", "Sequential", "Sigmoid", "SmoothL1Loss", "Softmax", "Softplus", "Tanh", "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer",
    "UninitializedParameter", "Upsample", "ZeroPad2d", "functional", "init", "utils"
]


from .._missing import missing_name  # noqa: E402

__getattr__ = missing_name(__name__, "torch.nn")
