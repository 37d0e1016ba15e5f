"""`nn.Parameter`: a leaf tensor that a Module registers as one of its weights."""

from __future__ import annotations

import numpy as np

from .. import _dtypes
from .._tensor import Tensor, make


class Parameter(Tensor):
    """A Tensor that requires grad by default and that assigning to a Module attribute registers.

    `Parameter(t)` shares `t`'s storage, as in PyTorch; math on a parameter gives plain Tensors.
    """

    __slots__ = ()
    __module__ = "minigrad.nn.parameter"

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            arr = np.empty((0,), _dtypes.default_np())
        elif isinstance(data, Tensor):
            arr = data._data
        else:
            raise TypeError(f"Parameter(data) expects a Tensor, got {type(data).__name__}")
        if requires_grad and arr.dtype.kind != "f":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        return make(arr, None, bool(requires_grad), cls=cls)

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # everything happened in __new__ (Tensor.__init__ is the legacy constructor)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._data, self._requires_grad))


def _rebuild_parameter(data: np.ndarray, requires_grad: bool) -> Parameter:
    return make(data, None, requires_grad, cls=Parameter)



class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (a lazy module's, until its first forward): `materialize(shape)`
    gives it values and makes it a plain Parameter."""

    __slots__ = ()
    __module__ = "minigrad.nn.parameter"
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        arr = np.empty((0,), _dtypes.to_np(dtype) if dtype is not None else _dtypes.default_np())
        return make(arr, None, bool(requires_grad), cls=cls)

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        pass

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the parameter zeros of `shape` (its module then initialises them) and make it a Parameter."""
        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
        self._data = np.zeros(shape, self._data.dtype if dtype is None else _dtypes.to_np(dtype))
        self.__class__ = self.cls_to_become

    def __repr__(self) -> str:
        return "<UninitializedParameter>"

    __str__ = __repr__

    def numel(self) -> int:
        raise ValueError("Attempted to use an uninitialized parameter in numel. This error happens when you are "
                         "using a `LazyModule` or explicitly manipulating "
                         "`minigrad.nn.parameter.UninitializedParameter` objects. When using LazyModules Call "
                         "`forward` with a dummy batch to initialize the parameters before calling minigrad functions")


def is_lazy(param) -> bool:
    return isinstance(param, UninitializedParameter)
