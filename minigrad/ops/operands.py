"""Turning an op's arguments into NumPy operands, with PyTorch's type promotion and errors.

A Python number stays a number (PyTorch's "weak" scalar: `float32_tensor * 2.5` stays float32);
lists and NumPy arrays become constant tensors; a NumPy scalar counts as a Python number.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import _dtypes
from .._creation import tensor
from .._tensor import Tensor, make

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}  # bool < integer < floating


class WrappedFloat(float):
    """A Python number an op saved as an input (`x * 0.5` saves 0.5), as a formula reads it under create_graph.
    PyTorch wraps such a number in a 0-d tensor, so the formula `grad * other` records MulBackward0; a number
    written in a formula (`grad * 2`) is a C++ Scalar instead, MulBackward1 (ops/arithmetic.py, `_common`, tells
    them apart by class; `as_operand` turns this one back into a plain number)."""

    __slots__ = ()


class WrappedInt(int):
    """`WrappedFloat` for an integer."""

    __slots__ = ()


WRAPPED = {float: WrappedFloat, int: WrappedInt}  # a saved number's class -> its class in formulas


def as_operand(x):
    """Python scalars stay scalars (weak types); NumPy scalars become Python ones; arrays and lists become
    constant tensors."""
    if isinstance(x, np.generic):  # before the Python types: np.float64 is a float, but a strong one in NumPy
        return x.item()
    if x.__class__ is WrappedFloat or x.__class__ is WrappedInt:  # a plain number again (NumPy: weak)
        return x.__class__.__base__(x)
    if isinstance(x, (Tensor, builtins.int, builtins.float)):
        return x
    if isinstance(x, np.ndarray):
        return make(x)
    if isinstance(x, (list, tuple)):

        return tensor(x)
    raise TypeError(f"unsupported operand type: {type(x).__name__}")


def _within_tier(dts: list) -> list:
    """PyTorch's promotion inside one tier: a higher category wins outright (int64 with float32 is float32,
    where NumPy says float64); dtypes of the same category promote as NumPy does."""
    if len(dts) < 2:
        return dts
    top = builtins.max(_CATEGORY[d.kind] for d in dts)
    d = None
    for x in dts:
        if _CATEGORY[x.kind] == top:
            d = x if d is None else np.promote_types(d, x)
    return [d]


def result_dtype(operands) -> np.dtype:
    """PyTorch's result type of a mix of tensors and Python scalars: dimensioned tensors, then 0-d tensors,
    then scalars, each tier counting only when it has a higher category than the tiers above it."""
    dims, zero_dims, scalars = [], [], []
    for o in operands:
        if isinstance(o, Tensor):
            (dims if o._data.ndim else zero_dims).append(o._data.dtype)
        else:
            scalars.append(o)
    return _dtypes.promote(_within_tier(dims), _within_tier(zero_dims), scalars)


def promoted(a, b, to_float: bool = False):
    """The arrays (or scalars) NumPy computes `a <op> b` on, cast to the dtype PyTorch's promotion gives
    (`to_float`: an integer result becomes the default float, as true division does)."""
    ad = a._data if isinstance(a, Tensor) else a
    bd = b._data if isinstance(b, Tensor) else b
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        if ad.dtype == bd.dtype and (not to_float or ad.dtype.kind == "f"):
            return ad, bd
    elif isinstance(a, Tensor):
        if ad.dtype.kind == "f" and type(bd) is not builtins.bool:
            return ad, bd
    elif bd.dtype.kind == "f" and type(ad) is not builtins.bool:
        return ad, bd
    rt = result_dtype((a, b))
    if to_float and rt.kind != "f":
        rt = _dtypes.default_np()
    if isinstance(a, Tensor):
        ad = ad.astype(rt, copy=False)
    elif rt.kind == "b":
        ad = builtins.bool(ad)
    elif rt.kind in "iu" and ad.__class__ is builtins.int:
        ad = _dtypes.wrapped(ad, rt)
    if isinstance(b, Tensor):
        bd = bd.astype(rt, copy=False)
    elif rt.kind == "b":
        bd = builtins.bool(bd)
    elif rt.kind in "iu" and bd.__class__ is builtins.int:
        bd = _dtypes.wrapped(bd, rt)
    return ad, bd


def broadcast_error(a, b) -> RuntimeError:
    """PyTorch's message for shapes that do not broadcast."""
    sa = np.shape(a._data if isinstance(a, Tensor) else a)
    sb = np.shape(b._data if isinstance(b, Tensor) else b)
    n = builtins.max(len(sa), len(sb))
    pa = (1,) * (n - len(sa)) + tuple(sa)
    pb = (1,) * (n - len(sb)) + tuple(sb)
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                                f"non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(sa)} and {list(sb)} cannot be broadcast together")


_F64 = np.dtype(np.float64)
_SCALARS: dict = {}  # float -> read-only 0-d float64 array


_F16 = np.dtype(np.float16)
_OPMATH = (np.multiply, np.true_divide)


def with_number(ufunc, d: np.ndarray, v):
    """`ufunc(d, v)` for an array and a Python number, as PyTorch's CPU kernels compute it: a float16 tensor times
    or divided by a number is computed in float32 with the number as a float32 (the kernel's `opmath` and the
    scalar's original value), then rounded once; NumPy would round the number to float16 first. (add and sub
    take the number in the tensor's dtype, as NumPy does.)"""
    if d.dtype is _F16 and ufunc in _OPMATH and isinstance(v, (builtins.float, builtins.int)):
        return ufunc(d.astype(np.float32), np.float32(v)).astype(np.float16)
    return ufunc(d, v)


def in_opmath(fn, d: np.ndarray) -> np.ndarray:
    """`fn(d)` for a pointwise kernel written with NumPy: a float16 array is computed in float32 and rounded once, as
    PyTorch's CPU kernels compute float16 (their `opmath` type); NumPy would round each step of `fn` to float16."""
    if d.dtype is _F16:
        return fn(d.astype(np.float32)).astype(np.float16)
    return fn(d)


def float_operand(d: np.ndarray, v: float):
    """A Python float `v` ready to combine with the floating array `d`: for float64, a cached 0-d array,
    which NumPy combines with an array faster than a Python float (the same float64 result). A cache keyed
    by value cannot tell 0.0 from -0.0 (equal keys), so -0.0 and NaN stay Python floats."""
    if d.dtype is not _F64:
        return v
    z = _SCALARS.get(v)
    if z is not None and (v or math.copysign(1.0, v) > 0):  # (-0.0 finds 0.0's array: it is equal)
        return z
    if v != v or (v == 0.0 and math.copysign(1.0, v) < 0):
        return v
    if len(_SCALARS) >= 256:
        _SCALARS.clear()
    z = _SCALARS[v] = np.array(v)
    z.flags.writeable = False
    return z


def kind_name(d: np.dtype) -> str:
    """PyTorch's scalar type name (Float, Double, Long, ...), as its error messages print it."""
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "bool": "Bool",
            "float16": "Half", "uint8": "Byte", "int8": "Char", "int16": "Short"}[_dtypes.FROM_NP[np.dtype(d)].name]


def float_data(t: Tensor) -> np.ndarray:
    """The tensor's array, as the default float when it is an integer or bool tensor (what exp, log, ...
    compute on)."""
    d = t._data
    return d if d.dtype.kind == "f" else d.astype(_dtypes.default_np())


def check_tensor(value, name: str, position: int, argument: str = "other") -> None:
    """PyTorch's argument parser refusing a non-Tensor where an op takes only tensors (maximum, atan2, hypot: no
    Python or NumPy numbers). `position` counts from 1 as PyTorch does: `other` is argument 2 of the function
    `minigrad.maximum(input, other)` but argument 1 of the method `x.maximum(other)`."""
    if not isinstance(value, Tensor):
        kind = type(value)
        shown = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be Tensor, not {shown}")


def tensor_method(function, name: str):
    """`Tensor.<name>(other)` for a two-tensor op: the function, with the method's count of arguments in its
    error (`other` is argument 1 of the method); declared as the op's `operators` entry, with `method=False`."""
    def method(self, other):
        check_tensor(other, name, 1)
        return function(self, other)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = function.__doc__
    return method
