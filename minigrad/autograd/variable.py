"""The legacy `Variable`: since PyTorch 0.4 every Tensor is a Variable, and `Variable(t)` just
returns a tensor on the same storage. Kept so that old tutorials run unchanged."""

from __future__ import annotations

import warnings

from .._creation import tensor
from .._tensor import Tensor, make


class _VariableMeta(type):
    def __instancecheck__(cls, obj) -> bool:

        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """`Variable(t, requires_grad=False, volatile=False)` -> a Tensor sharing `t`'s storage."""

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with minigrad.no_grad():` instead.",
                          UserWarning, stacklevel=2)
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if data is None:
            data = tensor([])
        if not isinstance(data, Tensor):
            raise TypeError("Variable data has to be a tensor, but got " + type(data).__name__)
        t = make(data._data)
        t.requires_grad = requires_grad
        return t
