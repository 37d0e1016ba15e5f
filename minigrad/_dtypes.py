"""dtypes and PyTorch's type-promotion rules, on top of NumPy dtypes.

NumPy 2 already treats Python scalars as "weak" (NEP 50), which matches PyTorch for the common
cases. PyTorch differs in two places we must reproduce: integer tensors promoted by a Python
float (or true division) become the *default* float dtype (float32), and 0-d tensors only win
promotion when they are of a higher category (float beats int beats bool).
"""

from __future__ import annotations

import builtins
import math

import numpy as np

# the module names float/int/bool are dtypes, as in PyTorch; keep the Python types at hand
_py_float, _py_int, _py_bool = builtins.float, builtins.int, builtins.bool


class dtype:
    """A PyTorch-style dtype object: `minigrad.float32` prints as `minigrad.float32`."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize", "_legacy")

    def __init__(self, name: str, np_dtype: str, legacy: str | None):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.is_complex = False
        self.is_signed = self.np.kind in "fi"
        self.itemsize = self.np.itemsize
        self._legacy = legacy  # 'FloatTensor'-style type name, used by Tensor.type()

    def __repr__(self) -> str:
        return f"minigrad.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_complex(self):  # pragma: no cover - PyTorch API shape, no complex support here
        raise TypeError("minigrad does not support complex dtypes")


float16 = half = dtype("float16", "float16", "HalfTensor")
float32 = float = dtype("float32", "float32", "FloatTensor")
float64 = double = dtype("float64", "float64", "DoubleTensor")
uint8 = dtype("uint8", "uint8", "ByteTensor")
int8 = dtype("int8", "int8", "CharTensor")
int16 = short = dtype("int16", "int16", "ShortTensor")
int32 = int = dtype("int32", "int32", "IntTensor")
int64 = long = dtype("int64", "int64", "LongTensor")
bool = dtype("bool", "bool", "BoolTensor")

ALL = (float16, float32, float64, uint8, int8, int16, int32, int64, bool)
FROM_NP: dict[np.dtype, dtype] = {d.np: d for d in ALL}
_NAMES = {d.name: d for d in ALL}


def _by_name(name: str) -> dtype:
    return _NAMES[name]


_default = [float32]


def get_default_dtype() -> dtype:
    """The dtype of floats created without an explicit dtype (float32 unless changed)."""
    return _default[0]


def set_default_dtype(d: dtype) -> None:
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def default_np() -> np.dtype:
    return _default[0].np


def to_np(d) -> np.dtype:
    """Accept a minigrad dtype, a NumPy dtype or a Python type; return the NumPy dtype."""
    if isinstance(d, dtype):
        return d.np
    if d is _py_float:
        return _default[0].np
    if d is _py_int:
        return np.dtype("int64")
    if d is _py_bool:
        return np.dtype("bool")
    nd = np.dtype(d)
    if nd not in FROM_NP:
        raise TypeError(f"minigrad does not support the dtype {nd}")
    return nd



# category of a NumPy dtype kind: bool < integer < floating
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}


def scalar_np_dtype(v) -> np.dtype:
    """The dtype a Python scalar gets on its own (torch.tensor(2.5) -> default float)."""
    if isinstance(v, _py_bool):
        return np.dtype("bool")
    if isinstance(v, _py_int):
        return np.dtype("int64")
    return _default[0].np


def promote(dims: list[np.dtype], zero_dims: list[np.dtype], scalars: list) -> np.dtype:
    """PyTorch's result_type over three tiers: dimensioned tensors, 0-d tensors, Python scalars.

    A lower tier only matters when it has a higher category than every tier above it.
    """
    result = None
    for tier in (dims, zero_dims):
        if not tier:
            continue
        d = tier[0]
        for other in tier[1:]:
            d = np.promote_types(d, other)
        if result is None or _CATEGORY[d.kind] > _CATEGORY[result.kind]:
            result = d
    if scalars:
        d = None
        for s in scalars:
            sd = scalar_np_dtype(s)
            d = sd if d is None else (sd if _CATEGORY[sd.kind] > _CATEGORY[d.kind] else d)
        if result is None or _CATEGORY[d.kind] > _CATEGORY[result.kind]:
            result = d
    return result


def wrapped(n: int, dt: np.dtype) -> int:
    """A Python int as an integer tensor's arithmetic sees it: wrapped into the dtype's range, as C casts it
    (`uint8_tensor - 300` subtracts 44; NumPy would raise OverflowError)."""
    info = np.iinfo(dt)
    if info.min <= n <= info.max:
        return n
    if not -(1 << 63) <= n < 1 << 64:
        raise OverflowError("int too big to convert")
    span = 1 << (8 * dt.itemsize)
    return (n - info.min) % span + info.min


# The C++ type names some PyTorch messages print for a dtype ("expected m1 and m2 to have the same dtype, but got:
# unsigned char != double", "result type Float can't be cast to the desired output type long int")
CPP_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
             "float64": "double", "float32": "float", "float16": "c10::Half", "bool": "bool"}

_C_TYPES = {"int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t",
            "float64": "double", "float32": "float", "float16": "c10::Half", "bool": "bool"}


def checked(value, dt: np.dtype):
    """A Python number stored into a tensor of dtype `dt` (fill_, masked_fill, x[k] = v, ...), as PyTorch's
    checked conversion takes it: a value the dtype cannot hold raises ("value cannot be converted ... without
    overflow"); an int wraps into an unsigned dtype from as low as minus its maximum (uint8 takes -200 as 56)."""
    if isinstance(value, _py_bool) or dt.kind == "b" or not isinstance(value, (_py_int, _py_float)):
        return value
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if isinstance(value, _py_float):
            ok = math.isfinite(value) and info.min <= value <= info.max
        else:
            ok = (-info.max if dt.kind == "u" else info.min) <= value <= info.max
            value = wrapped(value, dt) if ok else value
    else:
        ok = not math.isfinite(value) or abs(value) <= _py_float(np.finfo(dt).max)  # (no NumPy cast warning)
    if not ok:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPES[dt.name]} without overflow")
    return value


class finfo:
    """A floating dtype's limits (`finfo(x.dtype).min`, `.eps`), as PyTorch's `torch.finfo`."""

    def __init__(self, type: dtype | None = None):  # noqa: A002 - PyTorch's name
        type = get_default_dtype() if type is None else type
        if not (isinstance(type, dtype) and type.is_floating_point):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        info = np.finfo(type.np)
        self.bits, self.dtype = info.bits, type.name
        self.eps, self.max, self.min = builtins.float(info.eps), builtins.float(info.max), builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={getattr(self, k):g}" for k in ("resolution", "min", "max", "eps", "smallest_normal",
                                                                "tiny"))
        return f"finfo({shown}, dtype={self.dtype})"


class iinfo:
    """An integer dtype's limits, as PyTorch's `torch.iinfo`."""

    def __init__(self, type: dtype):  # noqa: A002 - PyTorch's name
        if not isinstance(type, dtype) or type.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                            "'torch.iinfo'")
        info = np.iinfo(type.np) if type.np.kind != "b" else None
        self.bits, self.dtype = type.itemsize * 8, type.name
        self.min, self.max = (0, 1) if info is None else (builtins.int(info.min), builtins.int(info.max))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
