"""Convolution layers: Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d, and the lazy LazyConv1d, LazyConv2d
(whose in_channels is read from the first input), as torch.nn's: PyTorch's default initialisation
(kaiming_uniform_(a=sqrt(5)) weights, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) biases) and reprs."""

from __future__ import annotations

import math

from .. import _creation
from .._tensor import Tensor
from . import functional as F
from . import init
from .lazy import LazyModuleMixin
from .module import Module
from .parameter import Parameter, UninitializedParameter


def _tuple(value, n: int) -> tuple:
    if isinstance(value, (tuple, list)):
        return tuple(int(v) for v in value)
    return (int(value),) * n


class _ConvNd(Module):
    """What every convolution layer shares: its settings, parameters, initialisation and repr."""

    __module__ = "minigrad.nn"
    _dims = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None,
                 output_padding=0) -> None:
        super().__init__()
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            valid = {"same", "valid"}  # built as PyTorch builds it, so the message lists them in the same order
            if padding not in valid:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid}")
            if padding == "same" and any(s != 1 for s in _tuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode != "zeros":
            raise NotImplementedError(f"minigrad: padding_mode={padding_mode!r} is not implemented; only 'zeros'.")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _tuple(kernel_size, n)
        self.stride = _tuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n)
        self.dilation = _tuple(dilation, n)
        self.transposed = self._transposed
        self.output_padding = _tuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        shape = ((in_channels, out_channels // groups) if self._transposed else
                 (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = self._new_parameter(shape, dtype, device)
        if bias:
            self.bias = self._new_parameter((out_channels,), dtype, device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _new_parameter(self, shape: tuple, dtype, device) -> Parameter:
        return Parameter(_creation.empty(shape, dtype=dtype, device=device))

    def reset_parameters(self) -> None:
        """kaiming_uniform_(a=sqrt(5)) for the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        n = self._dims
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L) inputs."""

    __module__ = "minigrad.nn"
    _dims = 1

    def forward(self, input: Tensor) -> Tensor:
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W) inputs."""

    __module__ = "minigrad.nn"
    _dims = 2

    def forward(self, input: Tensor) -> Tensor:
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        if isinstance(padding, str):
            raise ValueError(f"padding={padding!r} is not supported by {type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, output_padding)


class ConvTranspose1d(_ConvTransposeNd):
    """The transpose (adjoint) of Conv1d: upsamples (N, C_in, L) to (N, C_out, L_out)."""

    __module__ = "minigrad.nn"
    _dims = 1

    def forward(self, input: Tensor) -> Tensor:
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                                  self.groups, self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """The transpose (adjoint) of Conv2d: upsamples (N, C_in, H, W) to (N, C_out, H_out, W_out)."""

    __module__ = "minigrad.nn"
    _dims = 2

    def forward(self, input: Tensor) -> Tensor:
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                                  self.groups, self.dilation)


class _LazyConv(LazyModuleMixin):
    """A convolution whose in_channels is the channel count of its first input."""

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                         device, dtype)

    def _new_parameter(self, shape: tuple, dtype, device) -> Parameter:
        return UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        batched = input.dim() == self._dims + 2
        self.in_channels = int(input.shape[1 if batched else 0])
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        self.weight.materialize((self.out_channels, self.in_channels // self.groups) + self.kernel_size)
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


class LazyConv1d(_LazyConv, Conv1d):
    """A Conv1d whose in_channels is read from the first input."""

    __module__ = "minigrad.nn"
    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A Conv2d whose in_channels is read from the first input."""

    __module__ = "minigrad.nn"
    cls_to_become = Conv2d
