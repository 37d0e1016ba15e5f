"""Creating tensors: `tensor`, `ones`, `arange`, `randn`, `*_like`, ... with PyTorch's dtype rules."""

from __future__ import annotations

import builtins
import math

import numpy as np

from . import _dtypes
from ._device import check as _check_device
from ._random import default_generator
from ._tensor import Tensor, _as_array_data, make

REQUIRES_GRAD_DTYPE = "Only Tensors of floating point and complex dtype can require gradients"


def _finish(arr: np.ndarray, requires_grad: bool, device=None) -> Tensor:
    _check_device(device)
    if requires_grad and arr.dtype.kind != "f":
        raise RuntimeError(REQUIRES_GRAD_DTYPE)
    return make(arr, None, builtins.bool(requires_grad))


def _infer_np(data) -> np.dtype:
    """The dtype `tensor(data)` gets: bool < int64 < default float, over all the Python scalars."""
    kinds = set()

    def walk(x):
        if isinstance(x, (list, tuple)):
            for e in x:
                walk(e)
        elif isinstance(x, Tensor):
            kinds.add(x._data.dtype)
        elif isinstance(x, np.ndarray):
            kinds.add(x.dtype)
        elif isinstance(x, builtins.bool) or isinstance(x, np.bool_):
            kinds.add("b")
        elif isinstance(x, (builtins.int, np.integer)):
            kinds.add("i")
        elif isinstance(x, (builtins.float, np.floating)):
            kinds.add("f")
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}")

    walk(data)
    arrays = [k for k in kinds if isinstance(k, np.dtype)]
    if arrays and len(kinds) == len(arrays):
        out = arrays[0]
        for a in arrays[1:]:
            out = np.promote_types(out, a)
        return out
    if "f" in kinds or any(isinstance(k, np.dtype) and k.kind == "f" for k in kinds):
        return _dtypes.default_np()
    if "i" in kinds or any(isinstance(k, np.dtype) and k.kind in "iu" for k in kinds):
        return np.dtype("int64")
    if "b" in kinds:
        return np.dtype("bool")
    return _dtypes.default_np()  # empty list


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of `data` (nested lists, scalars, arrays or tensors)."""
    if isinstance(data, Tensor):
        import warnings

        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() or "
                      "sourceTensor.clone().detach().requires_grad_(True), rather than "
                      "minigrad.tensor(sourceTensor).", UserWarning, stacklevel=2)
        arr = np.array(data._data, dtype=_dtypes.to_np(dtype) if dtype is not None else None, copy=True)
        return _finish(arr, requires_grad, device)
    if isinstance(data, np.ndarray):
        np_dtype = _dtypes.to_np(dtype) if dtype is not None else _np_supported(data.dtype)
    elif isinstance(data, np.generic):
        np_dtype = _dtypes.to_np(dtype) if dtype is not None else _np_supported(data.dtype)
    else:
        np_dtype = _dtypes.to_np(dtype) if dtype is not None else _infer_np(data)
    arr = np.array(_as_array_data(data), dtype=np_dtype, copy=True)
    if arr.dtype == object:
        raise TypeError("tensor(): data must be numbers or nested sequences of numbers of the same length")
    return _finish(arr, requires_grad, device)


def _np_supported(d: np.dtype) -> np.dtype:
    if d not in _dtypes.FROM_NP:
        raise TypeError(f"can't convert np.ndarray of type numpy.{d}. The only supported types are: float64, "
                        "float32, float16, int64, int32, int16, int8, uint8, and bool.")
    return d


def as_tensor(data, dtype=None, device=None) -> Tensor:
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or _dtypes.to_np(dtype) == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(arr: np.ndarray) -> Tensor:
    """A tensor sharing memory with `arr` (changes to one show in the other)."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    _np_supported(arr.dtype)
    return make(arr)


def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(builtins.int(s) for s in size)


def _dt(dtype, default=None) -> np.dtype:
    if dtype is not None:
        return _dtypes.to_np(dtype)
    return default if default is not None else _dtypes.default_np()


def _filled(fill, size, dtype, requires_grad, device) -> Tensor:
    shape = _size(size)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
    return _finish(fill(shape, _dt(dtype)), requires_grad, device)


def ones(*size, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    return _filled(np.ones, size, dtype, requires_grad, device)


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    return _filled(np.zeros, size, dtype, requires_grad, device)


def empty(*size, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    # zeros, not garbage: "uninitialised" memory would make notebooks non-deterministic
    return _filled(np.zeros, size, dtype, requires_grad, device)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    if dtype is None:
        dtype = _infer_np(fill_value)
    return _finish(np.full(_size((size,)), fill_value, dtype=_dtypes.to_np(dtype)), requires_grad, device)


def _like(fill):
    def like(input: Tensor, *, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
        d = _dtypes.to_np(dtype) if dtype is not None else input._data.dtype
        return _finish(fill(input._data.shape, d), requires_grad, device)
    return like


ones_like = _like(np.ones)
zeros_like = _like(np.zeros)
empty_like = _like(np.zeros)


def full_like(input: Tensor, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    d = _dtypes.to_np(dtype) if dtype is not None else input._data.dtype
    return _finish(np.full(input._data.shape, fill_value, dtype=d), requires_grad, device)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        is_float = any(isinstance(v, builtins.float) for v in vals)
        dtype = _dtypes.default_np() if is_float else np.dtype("int64")
    n = math.ceil((end - start) / step)
    arr = (start + step * np.arange(n, dtype=np.float64)) if np.dtype(_dtypes.to_np(dtype)).kind == "f" \
        else np.arange(start, end, step)
    return _finish(arr.astype(_dtypes.to_np(dtype)), requires_grad, device)


def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    d = _dt(dtype)
    if steps == 1:
        arr = np.array([start], dtype=np.float64)
    else:
        # PyTorch fills the first half from `start` and the second half from `end`
        step = (end - start) / (steps - 1)
        i = np.arange(steps, dtype=np.float64)
        half = steps // 2
        arr = np.where(i < half, start + step * i, end - step * (steps - 1 - i))
    return _finish(arr.astype(d), requires_grad, device)


def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.eye(n, m if m is not None else n, dtype=_dt(dtype)), requires_grad, device)


def _gen(generator):
    return (generator or default_generator)._np


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    d = _dt(dtype)
    return _finish(_gen(generator).random(_size(size)).astype(d), requires_grad, device)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    d = _dt(dtype)
    return _finish(_gen(generator).standard_normal(_size(size)).astype(d), requires_grad, device)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    arr = _gen(generator).integers(low, high, size=tuple(size))
    return _finish(arr.astype(_dt(dtype, np.dtype("int64"))), requires_grad, device)


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(_gen(generator).permutation(n).astype(_dt(dtype, np.dtype("int64"))), requires_grad, device)


def rand_like(input: Tensor, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return rand(*input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return randn(*input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input._data.size
