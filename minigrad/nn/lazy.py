"""Lazy modules: layers whose input size is read from their first input (`nn.LazyLinear`, `nn.LazyConv2d`), as
d2l.ai writes its models. Until then their weights are `UninitializedParameter`s; the first forward gives them
their shapes, initialises them as the eager layer would, and turns the module into that layer
(`LazyLinear` -> `Linear`), so it prints and behaves as one from then on."""

from __future__ import annotations

from .. import _creation
from .._tensor import Tensor
from .layers import Linear
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d
from .parameter import UninitializedParameter, is_lazy


class LazyModuleMixin:
    """What lazy modules share: `initialize_parameters(input)` runs before the first forward, then the module
    becomes `cls_to_become`."""

    cls_to_become: type | None = None

    def has_uninitialized_params(self) -> bool:
        return any(is_lazy(p) for p in self._parameters.values() if p is not None)

    def initialize_parameters(self, *args, **kwargs) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params():
            self.initialize_parameters(*args, **kwargs)
            if self.cls_to_become is not None:
                self.__class__ = self.cls_to_become
        return Module.__call__(self, *args, **kwargs)


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear layer whose `in_features` is the last size of its first input."""

    __module__ = "minigrad.nn"
    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        self.in_features = int(input.shape[-1])
        self.weight.materialize((self.out_features, self.in_features))
        if self.bias is not None:
            self.bias.materialize((self.out_features,))
        self.reset_parameters()



class _LazyNormBase(LazyModuleMixin):
    """A batch norm whose num_features is the channel count (dim 1) of its first input."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, eps, momentum, affine, track_running_stats, device, dtype)
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        self.num_features = n = int(input.shape[1])
        if self.affine:
            self.weight.materialize((n,))
            self.bias.materialize((n,))
        if self.track_running_stats:
            like = self.running_mean.dtype
            self.register_buffer("running_mean", _creation.zeros(n, dtype=like))
            self.register_buffer("running_var", _creation.ones(n, dtype=like))
        self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """A BatchNorm1d whose num_features is read from the first input."""

    __module__ = "minigrad.nn"
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """A BatchNorm2d whose num_features is read from the first input."""

    __module__ = "minigrad.nn"
    cls_to_become = BatchNorm2d


__all__ = ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyLinear", "LazyModuleMixin"]
