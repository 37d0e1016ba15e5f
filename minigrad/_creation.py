"""Creating tensors: `tensor`, `ones`, `arange`, `randn`, `*_like`, ... with PyTorch's dtype rules."""

from __future__ import annotations

import builtins
import itertools
import math
import warnings

import numpy as np

from . import _dtypes, _linspace
from ._device import check as _check_device
from ._hint import hint
from ._layout import torch_layout
from ._random import default_generator
from ._state import GRAD
from ._tensor import Size, Tensor, _as_array_data, make

# minigrad.func's hook for a random factory called inside vmap (its `randomness`: refuse, draw per sample or once),
# set when minigrad.func is imported: called as hook(draw, shape), draw(shape) making the tensor; NotImplemented:
# draw as usual.
RANDOM_HOOK: list = [None]

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
            if not x:  # as PyTorch's inference: an empty sequence counts as the default float
                kinds.add("f")
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


_NUMBER_TYPES = {builtins.bool, builtins.int, builtins.float}


def _number_types(data) -> set | None:
    """The types in a list (or tuple) of Python numbers, or in a list of such lists (a dataset's rows), read in
    C-speed passes; None for anything else (deeper nesting, tensors, arrays), which `_infer_np` walks."""
    if not isinstance(data, (list, tuple)):
        return None
    types = set(map(type, data))
    if types and types <= {list, tuple}:
        empty_row = not all(data)  # as PyTorch's inference, an empty row counts as the default float
        types = set(map(type, itertools.chain.from_iterable(data)))
        if empty_row:
            types.add(builtins.float)
    return types if types <= _NUMBER_TYPES else None


def _number_dtype(types: set) -> np.dtype:
    """`_infer_np`'s rule for Python numbers: bool < int64 < the default float (an empty list: the default float)."""
    if builtins.float in types or not types:
        return _dtypes.default_np()
    return np.dtype("int64") if builtins.int in types else np.dtype("bool")


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of `data` (nested lists, scalars, arrays or tensors)."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "minigrad.tensor(sourceTensor).", UserWarning, stacklevel=2)
        arr = np.array(data._data, dtype=_dtypes.to_np(dtype) if dtype is not None else None, copy=True,
                       order="C")
        arr = _preserved(arr, data._data)  # (PyTorch copies as `clone` does: an expanded tensor's dims in its order)
        return _finish(arr, requires_grad, device)
    numbers = None
    if isinstance(data, np.ndarray):
        np_dtype = _dtypes.to_np(dtype) if dtype is not None else _np_supported(data.dtype)
    elif isinstance(data, np.generic):
        np_dtype = _dtypes.to_np(dtype) if dtype is not None else _np_supported(data.dtype)
    else:
        numbers = _number_types(data)
        if numbers is not None:  # Python numbers in lists: nothing to convert, the dtype from their types
            np_dtype = _dtypes.to_np(dtype) if dtype is not None else _number_dtype(numbers)
        else:
            np_dtype = _dtypes.to_np(dtype) if dtype is not None else _infer_np(data)
    try:
        with np.errstate(over="ignore"):  # a float beyond float32's range becomes inf, as in PyTorch, silently
            arr = np.array(data if numbers is not None else _as_array_data(data), dtype=np_dtype, copy=True)
    except OverflowError:  # an integer beyond int64 (tensor(2**63))
        raise ValueError("Overflow when unpacking long long") from None
    except ValueError:  # a ragged list: PyTorch's error, or an empty tensor if it has no elements
        sizes = _sizes(data)
        _check_nesting(data, sizes, 0, np.dtype(np_dtype).kind == "f")
        arr = np.zeros(sizes, np_dtype)
    if arr.dtype == object:
        raise TypeError("tensor(): data must be numbers or nested sequences of numbers of the same length")
    return _finish(arr, requires_grad, device)


def _sizes(data) -> list:
    """The shape PyTorch reads off nested sequences: the length at each depth, following first elements."""
    sizes = []
    while isinstance(data, (list, tuple)):
        sizes.append(len(data))
        if not data:
            return sizes
        data = data[0]
    if isinstance(data, (Tensor, np.ndarray)):
        sizes.extend(data.shape)
    return sizes


def _check_nesting(obj, sizes: list, dim: int, floating: bool) -> None:
    """Every sequence at depth `dim` has the length `sizes[dim]`, with PyTorch's errors (checked only when NumPy
    finds the data ragged; PyTorch looks at no element of a tensor that has none). A sequence where a number
    belongs is refused as PyTorch's conversion to the inferred dtype refuses it (`floating`: a float dtype)."""
    if dim == len(sizes):
        if isinstance(obj, (list, tuple)):
            name = type(obj).__name__
            raise TypeError(f"must be real number, not {name}" if floating
                            else f"'{name}' object cannot be interpreted as an integer")
        return
    if isinstance(obj, (Tensor, np.ndarray)):
        got = obj.shape[0] if obj.ndim else 0
        if list(obj.shape) != sizes[dim:]:
            raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {got})")
        return
    if not isinstance(obj, (list, tuple)):
        raise TypeError("not a sequence")
    if len(obj) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(obj)})")
    if math.prod(sizes):
        for item in obj:
            _check_nesting(item, sizes, dim + 1, floating)


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


def _size(size, name: str = "zeros") -> tuple:
    """The sizes as ints, with PyTorch's TypeError for a float, bool or out-of-range size (`randn(2.5)` is not
    a tensor of 2 elements)."""
    packed = len(size) == 1 and isinstance(size[0], (tuple, list))
    items = tuple(size[0]) if packed else size
    return tuple(_one_size(s, i, name, packed, len(size)) for i, s in enumerate(items))


def _one_size(s, i: int, name: str, packed: bool, n_args: int) -> int:
    if s.__class__ is builtins.int and -2**63 <= s < 2**63:
        return s
    try:
        if isinstance(s, (builtins.bool, np.bool_)) and i == 0:  # (PyTorch takes a later one as 1 or 0)
            raise TypeError
        v = s.__index__()
    except (TypeError, AttributeError):
        kind = type(s).__name__
        if packed:
            msg = f"argument 'size' (position 1) must be tuple of ints, but found element of type {kind} at pos {i}"
        elif n_args == 1:
            msg = f"argument 'size' (position 1) must be tuple of ints, not {kind}"
        elif i == 0:
            raise TypeError(f"{name}() takes 1 positional argument but {n_args} were given") from None
        else:
            msg = f"argument 'size' failed to unpack the object at pos {i + 1} with error \"type must be tuple of " \
                  f"ints,but got {kind}\""
        raise TypeError(f"{name}(): {msg}") from None
    if not -2**63 <= v < 2**63:
        raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with error \"Overflow "
                        f"when unpacking long long")  # (PyTorch's message is cut there by a C++ traceback)
    return v


def _allocated(fill, shape: tuple, dtype: np.dtype):
    """`fill(shape, dtype)`, with PyTorch's error when the memory cannot be had (NumPy's MemoryError is not one)."""
    return _memory(lambda: fill(shape, dtype), math.prod(shape) * np.dtype(dtype).itemsize)


def _memory(make_array, nbytes: int):
    try:
        return make_array()
    except (MemoryError, ValueError) as e:
        if isinstance(e, ValueError) and "too big" not in str(e) and "Maximum allowed size" not in str(e):
            raise
        raise RuntimeError(f"[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
                           f"memory: you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)") \
            from None


def _int_arg(v, name: str, arg: str) -> int:
    """An int argument (`randperm(n)`, `eye(n)`, `linspace(steps)`) as PyTorch's parser takes it."""
    if isinstance(v, (builtins.bool, np.bool_)) or not hasattr(v, "__index__"):
        raise TypeError(f"{name}(): argument '{arg}' (position 1) must be int, not {type(v).__name__}")
    v = v.__index__()
    if not -2**63 <= v < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return v


def _size_arg(name: str, positional: tuple, kwargs: dict) -> tuple:
    """`zeros(2, 3)`, `zeros((2, 3))` or `zeros(size=(2, 3))`, as PyTorch accepts them."""
    size = kwargs.pop("size", None)
    for key in kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    if size is None:
        return positional
    if positional:
        if name.startswith("rand"):  # (PyTorch's argument parser words this one differently)
            got = ", ".join(type(p).__name__ for p in positional)
            raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}, size="
                            f"{type(size).__name__}), but expected one of:\n * (tuple of ints size, *, "
                            "minigrad.Generator generator, minigrad.dtype dtype = None, minigrad.device device = None, "
                            "bool requires_grad = False)\n")
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,)


def _dt(dtype, default=None) -> np.dtype:
    if dtype is not None:
        return _dtypes.to_np(dtype)
    return default if default is not None else _dtypes.default_np()


def _filled(fill, size, dtype, requires_grad, device, name: str) -> Tensor:
    shape = _size(size, name)
    _check_negative(shape, name)
    return _finish(_allocated(fill, shape, _dt(dtype)), requires_grad, device)


def _check_negative(shape: tuple, name: str) -> None:
    if any(s < 0 for s in shape):
        if name == "zeros":  # (PyTorch's zeros words it its own way)
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")


def ones(*size, dtype=None, device=None, requires_grad=False, out=None, **kwargs) -> Tensor:
    return _filled(np.ones, _size_arg("ones", size, kwargs), dtype, requires_grad, device, "ones")


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None, **kwargs) -> Tensor:
    return _filled(np.zeros, _size_arg("zeros", size, kwargs), dtype, requires_grad, device, "zeros")


def empty(*size, dtype=None, device=None, requires_grad=False, memory_format=None, **kwargs) -> Tensor:
    # zeros, not garbage: "uninitialised" memory would make notebooks non-deterministic
    return _filled(np.zeros, _size_arg("empty", size, kwargs), dtype, requires_grad, device, "empty")


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    if dtype is None:
        dtype = _infer_np(fill_value)
    d = _dtypes.to_np(dtype)
    shape = _size((size,), "full")
    _check_negative(shape, "full")
    value = _dtypes.checked(fill_value, d)
    return _finish(_memory(lambda: np.full(shape, value, dtype=d), math.prod(shape) * d.itemsize), requires_grad,
                   device)


def _preserved(arr: np.ndarray, like: np.ndarray) -> np.ndarray:
    """`arr` laid out as `like` is (PyTorch's memory_format=torch.preserve_format, the *_like default)."""
    return arr if like.flags.c_contiguous else torch_layout(arr, like)


def _like(fill):
    def like(input: Tensor, *, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
        d = _dtypes.to_np(dtype) if dtype is not None else input._data.dtype
        return _finish(_preserved(fill(input._data.shape, d), input._data), requires_grad, device)
    return like


ones_like = _like(np.ones)
zeros_like = _like(np.zeros)
empty_like = _like(np.zeros)


def full_like(input: Tensor, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    d = _dtypes.to_np(dtype) if dtype is not None else input._data.dtype
    return _finish(_preserved(np.full(input._data.shape, _dtypes.checked(fill_value, d), dtype=d), input._data),
                   requires_grad, device)


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
    if not all(-2**63 <= v < 2**63 for v in vals if isinstance(v, builtins.int)):
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    n = math.ceil((end - start) / step)
    arr = _memory(lambda: (start + step * np.arange(n, dtype=np.float64)) if np.dtype(_dtypes.to_np(dtype)).kind == "f"
                  else np.arange(start, end, step), n * 8)
    return _finish(arr.astype(_dtypes.to_np(dtype)), requires_grad, device)


def range_(start, end, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """`torch.range` (exported under that name; here it would hide Python's `range`): deprecated, as in PyTorch,
    because its end is included; always floating point unless `dtype` says otherwise."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = math.floor((end - start) / step) + 1
    d = _dtypes.to_np(dtype) if dtype is not None else _dtypes.default_np()
    arr = _memory(lambda: start + step * np.arange(n, dtype=np.float64), n * 8)
    return _finish(arr.astype(d), requires_grad, device)


def real(input: Tensor) -> Tensor:
    """The real part: minigrad has no complex dtypes, so it is the tensor itself (PyTorch returns `input` too)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"real(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input


def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    if isinstance(steps, (builtins.bool, builtins.float, np.bool_, np.floating)) or (
            isinstance(steps, Tensor) and steps.dtype.is_floating_point):
        raise TypeError(f"linspace() received an invalid combination of arguments - got ({type(start).__name__}, "
                        f"{type(end).__name__}, {type(steps).__name__}), but expected one of:")
    steps = _int_arg(steps, "linspace", "steps")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    d = _dt(dtype)
    if steps < 2:
        arr = np.array([start] * steps, dtype=np.float64)
    elif d.kind not in "fiu":
        raise NotImplementedError(f"\"linspace_cpu\" not implemented for '{_dtypes.FROM_NP[d]._legacy[:-6]}'")
    else:  # PyTorch's kernel, bit for bit: the first half from `start`, the second from `end`, fused multiply-adds
        lo, hi = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
        arr = _memory(lambda: _linspace.kernel(lo, hi, steps, d), steps * 8)
    return _finish(arr.astype(d), requires_grad, device)


def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    n = _int_arg(n, "eye", "n")
    m = n if m is None else _int_arg(m, "eye", "m")
    for k, v in (("n", n), ("m", m)):
        if v < 0:
            raise RuntimeError(f"{k} must be greater or equal to 0, got {v}")
    return _finish(_memory(lambda: np.eye(n, m, dtype=_dt(dtype)), n * m * _dt(dtype).itemsize), requires_grad, device)


def _gen(generator):
    return (generator or default_generator)._np


def _in_vmap(factory, shape: tuple, **options):
    """`factory(*shape, **options)` as vmap's randomness says, when a vmap is running; else NotImplemented."""
    hook = RANDOM_HOOK[0]
    if hook is None:
        return NotImplemented
    return hook(lambda s: factory(*s, **options), shape)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, **kwargs) -> Tensor:
    d = _dt(dtype)
    shape = _size(_size_arg("rand", size, kwargs), "rand")
    _check_negative(shape, "rand")
    out = _in_vmap(rand, shape, generator=generator, dtype=dtype, device=device, requires_grad=requires_grad)
    if out is not NotImplemented:
        return out
    return _finish(_memory(lambda: _gen(generator).random(shape).astype(d), math.prod(shape) * d.itemsize),
                   requires_grad, device)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, **kwargs) -> Tensor:
    d = _dt(dtype)
    shape = _size(_size_arg("randn", size, kwargs), "randn")
    _check_negative(shape, "randn")
    out = _in_vmap(randn, shape, generator=generator, dtype=dtype, device=device, requires_grad=requires_grad)
    if out is not NotImplemented:
        return out
    return _finish(_memory(lambda: _gen(generator).standard_normal(shape).astype(d), math.prod(shape) * d.itemsize),
                   requires_grad, device)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    shape = _size((size,), "randint")
    _check_negative(shape, "randint")
    out = _in_vmap(lambda *s, **o: randint(low, high, s, **o), shape, generator=generator, dtype=dtype)
    if out is not NotImplemented:
        return out
    arr = _memory(lambda: _gen(generator).integers(low, high, size=shape), math.prod(shape) * 8)
    return _finish(arr.astype(_dt(dtype, np.dtype("int64"))), requires_grad, device)


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    n = _int_arg(n, "randperm", "n")
    _check_negative((n,), "randperm")
    out = _in_vmap(_permutations, (n,), generator=generator, dtype=dtype)
    if out is not NotImplemented:
        return out
    arr = _memory(lambda: _gen(generator).permutation(n), n * 8)
    return _finish(arr.astype(_dt(dtype, np.dtype("int64"))), requires_grad, device)


def _permutations(*shape, generator=None, dtype=None) -> Tensor:
    """Permutations of range(shape[-1]), one per row of the leading dims (randperm inside vmap: one per sample)."""
    arr = np.argsort(_gen(generator).random(shape), axis=-1, kind="stable")
    return _finish(arr.astype(_dt(dtype, np.dtype("int64"))), False, None)


def rand_like(input: Tensor, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    out = rand(*input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)
    out._data = _preserved(out._data, input._data)
    return out


def randn_like(input: Tensor, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    out = randn(*input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)
    out._data = _preserved(out._data, input._data)
    return out


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input._data.size


# -- sampling: multinomial and normal ------------------------------------------------------------------------
def _scalar_type(d: np.dtype) -> str:
    """PyTorch's C++ name of a dtype, as its kernel errors print it ('Long', 'Float', ...)."""
    return _dtypes.FROM_NP[d]._legacy.removesuffix("Tensor")


def multinomial(input: Tensor, num_samples: int, replacement: builtins.bool = False, *, generator=None,
                out=None) -> Tensor:
    """Draw category indices with probabilities proportional to each row of `input` (int64 result).

    Without replacement (and for a single draw) each row's categories are ranked by p / E with
    E ~ Exponential(1), PyTorch's method, which draws without replacement in proportion to p; with
    replacement each draw inverts the row's cumulative distribution. Checks and messages are PyTorch's.
    """
    if out is not None:
        raise NotImplementedError("minigrad: multinomial(out=...) is not implemented; use the returned tensor.")
    if not isinstance(num_samples, builtins.int) or isinstance(num_samples, builtins.bool):
        raise TypeError(f"multinomial(): argument 'num_samples' (position 2) must be int, not "
                        f"{type(num_samples).__name__}")
    p = input._data
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if p.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_scalar_type(p.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = p.shape[-1]
    if not replacement and num_samples > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rows = p.reshape(-1, n_cat).astype(np.float64)
    shape = (num_samples,) if p.ndim == 1 else (p.shape[0], num_samples)
    if rows.shape[0] == 0:
        return make(np.zeros(shape, np.int64))
    rng = _gen(generator)
    if not replacement or num_samples == 1:
        if n_cat == 0 or not (np.all(rows >= 0) and np.all(rows < np.inf)):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if np.any(rows.sum(axis=1) == 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        with np.errstate(divide="ignore"):
            keys = rows / rng.exponential(size=rows.shape)
        idx = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    else:
        if not np.all(rows >= 0):  # (nan fails this first check too, as in PyTorch's kernel)
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not np.all(np.isfinite(rows)):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        cdf = np.cumsum(rows, axis=1)
        total = cdf[:, -1:]
        if n_cat == 0 or np.any(total <= 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        u = rng.random((rows.shape[0], num_samples)) * total
        idx = np.stack([np.searchsorted(c, r, side="right") for c, r in zip(cdf, u)])
        last_nonzero = n_cat - 1 - np.argmax(rows[:, ::-1] > 0, axis=1)  # rounding can never pick a zero
        idx = np.minimum(idx, last_nonzero[:, None])
    return make(idx.reshape(shape).astype(np.int64))


_NORMAL_SIGNATURES = (
    " * (Tensor mean, Tensor std, *, minigrad.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, minigrad.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, minigrad.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, minigrad.Generator generator = None, Tensor out = None, "
    "minigrad.dtype dtype = None, minigrad.layout layout = None, minigrad.device device = None, "
    "bool pin_memory = False, bool requires_grad = False)\n")


def _broadcast_shape(a: tuple, b: tuple) -> tuple:
    n = builtins.max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            raise RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                               f"non-singleton dimension {i}")
    return tuple(builtins.max(x, y) for x, y in zip(pa, pb))


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory: builtins.bool = False, requires_grad: builtins.bool = False) -> Tensor:
    """Samples from N(mean, std²): PyTorch's four overloads (tensor or float mean and std; floats need `size`).

    A tensor mean or std broadcasts; the result has the tensor mean's dtype (else the tensor std's).
    Gradients through the samples (PyTorch's NormalBackward nodes) are not implemented yet.
    """

    def kind(x) -> str:
        if isinstance(x, Tensor):
            return "Tensor"
        return "float" if isinstance(x, (builtins.int, builtins.float)) and not isinstance(x, builtins.bool) else ""

    km, ks = kind(mean), kind(std)
    both_floats = km == ks == "float"
    size_ok = isinstance(size, (tuple, list)) and builtins.all(isinstance(s, builtins.int) for s in size)
    factory_args = dtype is not None or requires_grad or layout is not None or pin_memory
    if (not km or not ks or (both_floats and not size_ok) or (not both_floats and size is not None)
            or (not both_floats and factory_args)):
        got = ", ".join([type(mean).__name__ if km != "Tensor" else "Tensor",
                         type(std).__name__ if ks != "Tensor" else "Tensor"]
                        + ([f"size={type(size).__name__}" if not both_floats else type(size).__name__]
                           if size is not None else []))
        raise TypeError(f"normal() received an invalid combination of arguments - got ({got}), but expected one "
                        f"of:\n{_NORMAL_SIGNATURES}")
    if out is not None:
        raise NotImplementedError("minigrad: normal(out=...) is not implemented; use the returned tensor.")
    _check_device(device)
    if km == "Tensor" or ks == "Tensor":
        if GRAD.mode > 0 and any(isinstance(t, Tensor) and t._requires_grad for t in (mean, std)):
            raise NotImplementedError(
                "minigrad does not implement gradients of torch.normal yet (PyTorch records NormalBackward1/2/3 "
                "when mean or std requires grad).\n" + hint("write the sample as mean + std * torch.randn_like(mean), "
                                                           "or draw it under torch.no_grad() if no gradient should "
                                                           "flow."))
    if ks == "Tensor":
        s = std._data
        if not np.all(s >= 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    out_np = mean._data.dtype if km == "Tensor" else std._data.dtype if ks == "Tensor" else _dt(dtype)
    if out_np.kind != "f":
        raise NotImplementedError(f'"normal_kernel_cpu" not implemented for \'{_scalar_type(out_np)}\'')
    if both_floats:
        shape = tuple(size)
        drawn = _in_vmap(lambda *s, **o: normal(mean, std, s, **o), shape, generator=generator, dtype=dtype)
        if drawn is not NotImplemented:
            return drawn
    else:
        shape = _broadcast_shape(np.shape(mean._data) if km == "Tensor" else (),
                                 np.shape(std._data) if ks == "Tensor" else ())
    m = mean._data.astype(np.float64) if km == "Tensor" else mean
    s = std._data.astype(np.float64) if ks == "Tensor" else std
    values = m + s * _gen(generator).standard_normal(shape)
    return _finish(np.asarray(values, dtype=out_np).reshape(shape), requires_grad, None)


Tensor.multinomial = multinomial  # `probs.multinomial(1)`, as PyTorch's method


def bernoulli(input: Tensor, p: float | None = None, *, generator=None) -> Tensor:
    """1 with probability `input` (or `p`), else 0, elementwise, in `input`'s dtype (Bernoulli's sample)."""
    if input._data.dtype.kind != "f":
        kind = _scalar_type(input._data.dtype)
        raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{kind}\'')
    probs = np.full(input._data.shape, p) if p is not None else input._data
    if not np.all((probs >= 0) & (probs <= 1)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    draws = _gen(generator).random(probs.shape) < probs
    return make(draws.astype(input._data.dtype))


Tensor.bernoulli = bernoulli


# -- Tensor.new_*: a new tensor with this tensor's dtype (and device) unless told otherwise ----------------------
def _own_dtype(self: Tensor, dtype):
    return self.dtype if dtype is None else dtype


def new_zeros(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False, **kwargs) -> Tensor:
    return zeros(*size, dtype=_own_dtype(self, dtype), device=device, requires_grad=requires_grad, **kwargs)


def new_ones(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False, **kwargs) -> Tensor:
    return ones(*size, dtype=_own_dtype(self, dtype), device=device, requires_grad=requires_grad, **kwargs)


def new_empty(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False, **kwargs) -> Tensor:
    return empty(*size, dtype=_own_dtype(self, dtype), device=device, requires_grad=requires_grad, **kwargs)


def new_full(self: Tensor, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return full(size, fill_value, dtype=_own_dtype(self, dtype), device=device, requires_grad=requires_grad)


def new_tensor(self: Tensor, data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """tensor(data) in this tensor's dtype (data that is a tensor is copied, with PyTorch's warning)."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        data = data.detach().numpy()
    return tensor(data, dtype=_own_dtype(self, dtype), device=device, requires_grad=requires_grad)


def new(self: Tensor, *args) -> Tensor:
    """The legacy constructor `x.new(...)`: sizes give a new tensor of x's dtype (zeros here, uninitialised in
    PyTorch), a list gives its values, a tensor gives a tensor sharing its memory, nothing gives an empty one."""
    if len(args) == 1 and isinstance(args[0], Tensor):
        return make(args[0]._data)
    if len(args) == 1 and isinstance(args[0], (list, tuple)) and not isinstance(args[0], Size):
        return tensor(args[0], dtype=self.dtype)
    sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], Size) else args
    return zeros(sizes or (0,), dtype=self.dtype)


Tensor.new = new
Tensor.new_zeros, Tensor.new_ones, Tensor.new_empty = new_zeros, new_ones, new_empty
Tensor.new_full, Tensor.new_tensor = new_full, new_tensor
