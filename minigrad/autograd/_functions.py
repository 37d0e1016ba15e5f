"""PyTorch's Python-level autograd Functions behind Tensor methods (torch/autograd/_functions): the deprecated
out-of-place `Tensor.resize`, whose node is `ResizeBackward`, a custom Function's node."""

from __future__ import annotations

import math
import warnings

from .._tensor import Tensor
from .function import Function


class Resize(Function):
    """A reshape that keeps the number of elements; its backward reshapes the gradient back."""

    @staticmethod
    def forward(ctx, tensor, sizes):
        numel = math.prod(sizes)
        if tensor.numel() != numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but the given tensor "
                f"has a size of {'x'.join(map(str, tensor.size()))} ({tensor.numel()} elements). autograd's resize "
                "can only change the shape of a given tensor, while preserving the number of elements. ")
        ctx.input_sizes = tensor.size()
        return tensor.contiguous().view(*sizes)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.contiguous().view(ctx.input_sizes), None


def resize(self: Tensor, *sizes) -> Tensor:
    """`x.resize(2, 3)`: deprecated in PyTorch (it warns), kept because old tutorials call it."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return Resize.apply(self, sizes)


Tensor.resize = resize
