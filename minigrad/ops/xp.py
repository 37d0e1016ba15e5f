"""The functions derivative formulas call: each works on NumPy arrays (the plain backward) and on
Tensors (`create_graph=True`, when the backward pass is itself recorded), so a formula is written once.

`xp` is the array-API name for "the array namespace": these are NumPy's functions, made to accept
minigrad Tensors too. Anything that is not a Tensor is treated as an array.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtypes
from .._broadcast import expandable, sum_to, summed_dims  # noqa: F401 (formulas use them as xp.*)
from .._tensor import Tensor, make
from .operands import in_opmath, with_number
from .registry import REGISTRY


def is_t(x) -> bool:
    return isinstance(x, Tensor)


def either(kernel, op):
    """A function for formulas: `kernel(*arrays)` on arrays, `op(*tensors)` (which records its node) as soon
    as one argument is a Tensor; the first two arguments are the tensor operands, the rest are numbers."""

    def call(a, b, *args):
        if a.__class__ is np.ndarray and b.__class__ is np.ndarray:
            return kernel(a, b, *args)
        ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
        if ta or tb:
            return op(a if ta else make(np.asarray(a)), b if tb else make(np.asarray(b)), *args)
        return kernel(a, b, *args)  # NumPy scalars

    call.__name__ = getattr(op, "__name__", "either")
    return call


def expand(g, shape: tuple):
    if is_t(g):
        return g.expand(shape)
    if g.ndim == 0 and math.prod(shape) <= _FILL_LIMIT:
        # a small filled array: cheaper to make than a broadcast view, and writeable
        out = np.empty(shape, g.dtype)
        out.fill(g)
        return out
    return broadcast_view(g, shape)


def broadcast_view(a, shape: tuple):
    """`np.broadcast_to(a, shape)`: the same read-only view, built directly for the contiguous arrays a
    training loop meets (np.broadcast_to's argument handling costs more than the view); anything else goes
    to NumPy."""
    if a.__class__ is not np.ndarray:
        return np.broadcast_to(a, shape)
    if a.ndim == 0:  # a scalar gradient spread over a shape: the most common case
        strides = (0,) * len(shape)
    elif a.size == 0 or len(shape) < a.ndim or not a.flags.c_contiguous:
        return np.broadcast_to(a, shape)
    else:  # PyTorch's expand strides (inferExpandGeometry), from the last dim: an expanded dim gets 0, a kept one
        strides = [0] * len(shape)  # its own, a new size-1 dim the stride of the block after it
        lead = len(shape) - a.ndim
        for i in range(len(shape) - 1, -1, -1):
            if i >= lead:
                n, st = a.shape[i - lead], a.strides[i - lead]
            else:
                n, st = 1, shape[i + 1] * strides[i + 1] if i + 1 < len(shape) else a.itemsize
            if n != shape[i]:
                if n != 1:
                    return np.broadcast_to(a, shape)  # NumPy's error
                st = 0
            strides[i] = st
        strides = tuple(strides)
    out = np.ndarray(shape, a.dtype, a, 0, strides)
    out.setflags(write=False)
    return out


_FILL_LIMIT = 1 << 16  # above this, a read-only broadcast view saves the memory


def unsqueeze_dims(g, dims: tuple):
    """Re-insert the dims a non-keepdim reduction removed (dims sorted, non-negative)."""
    if is_t(g):
        for d in sorted(dims):
            g = g.unsqueeze(d)
        return g
    return np.expand_dims(g, tuple(dims))


def unsqueeze_to(g, sizes: tuple, dims: tuple | None = None):
    """Squeeze's backward: `g` with the size-1 dims of `sizes` (those among `dims`, if given) put back. PyTorch
    unsqueezes them one at a time (an UnsqueezeBackward0 each under create_graph); on arrays one reshape does it."""
    if not is_t(g):
        return np.reshape(g, sizes)
    n = len(sizes)
    for d in sorted({d % n for d in dims} if dims is not None and n else range(n)):
        if sizes[d] == 1:
            g = g.unsqueeze(d)
    return g


def reduced_expand(grad, sizes: tuple, dims: tuple, keepdim: bool):
    """Backward of a reduction over `dims`: spread the gradient back over the reduced dims."""
    if not keepdim and len(sizes) > 0:
        grad = unsqueeze_dims(grad, tuple(d % len(sizes) for d in dims))
    return expand(grad, sizes)


def transpose(g, d0: int, d1: int):
    if is_t(g):
        return g.transpose(d0, d1)
    return np.swapaxes(g, d0, d1) if g.ndim else g  # a 0-d tensor's transpose(0, -1) is itself


def t(g):
    return g.t() if is_t(g) else g.T  # (a NumPy scalar too: the gradient of a 0-d tensor)


def mm(a, b):
    """A 2-D matrix product; on arrays `dot2d` (np.dot for small matrices, np.matmul for large ones)."""
    if a.__class__ is np.ndarray and b.__class__ is np.ndarray:
        return dot2d(a, b)
    return a @ b


def bmm(a, b):
    """A batched matrix product (bmm itself on Tensors: BmmBackward0, not matmul's views around it)."""
    if is_t(a) or is_t(b):
        return (a if is_t(a) else make(a)).bmm(b if is_t(b) else make(b))
    return np.matmul(a, b)


_MATMUL_FROM = 1 << 18  # multiply-adds (m * k * n) from which np.matmul is the faster call


def dot2d(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A product of two matrices with the cheaper of NumPy's two calls of BLAS's gemm. For a teaching network's
    small matrices np.dot, which skips the ufunc machinery (0.3-0.4 µs a call, more than a 32x32x32 product); from
    about 64x64x64 on np.matmul, whose BLAS call is faster (3-8% on W3's 256x1024 @ 1024x1024 and its transposed
    products, OpenBLAS, one thread; docs/performance.md).

    Where one matrix is 1x1, np.matmul: np.dot then multiplies by it as by a scalar and drops the nan of 0 * inf,
    which np.matmul and PyTorch keep. An (m, 1) @ (1, n) product (m, n > 1) is PyTorch's gemm with one term, which
    keeps its sign (0 * -1 is -0); BLAS adds it to +0, so it is the plain product here."""
    if a.size == 1 or b.size == 1:
        return np.matmul(a, b)
    if a.shape[1] == 1:
        return np.multiply(a, b)
    if a.size * b.shape[1] >= _MATMUL_FROM:
        return np.matmul(a, b)
    return a.dot(b)  # (np.dot's own, without np.dot's __array_function__ dispatch: 0.2-0.3 µs a call)


def permute(g, dims):
    return g.permute(tuple(dims)) if is_t(g) else np.transpose(g, dims)


def reshape(g, shape):
    return g.reshape(tuple(shape))


def squeeze_dims(g, dims):
    if is_t(g):
        for d in sorted(dims, reverse=True):
            g = g.squeeze(d)
        return g
    return np.squeeze(g, axis=tuple(dims)) if dims else g


def outer(a, b):
    """PyTorch's outer: `a.reshape(n, 1) * b` (ViewBackward0 and MulBackward0 under create_graph)."""
    if is_t(a) or is_t(b):
        return a.reshape(a.shape[0], 1) * b if is_t(a) else a[..., None] * b
    return np.multiply.outer(a, b)


def _unary(name: str, np_fn):
    def f(x):
        if is_t(x):
            return getattr(x, name)()
        if x.dtype.kind != "f":  # an integer or bool array computes in the default float, as the Tensor op does
            x = x.astype(_dtypes.default_np())
        return in_opmath(np_fn, x)
    f.__name__ = name
    return f


exp = _unary("exp", np.exp)
log = _unary("log", np.log)
sin = _unary("sin", np.sin)
cos = _unary("cos", np.cos)
sqrt = _unary("sqrt", np.sqrt)
reciprocal = _unary("reciprocal", np.reciprocal)
rsqrt = _unary("rsqrt", lambda x: 1 / np.sqrt(x))
sinh = _unary("sinh", np.sinh)
cosh = _unary("cosh", np.cosh)


def sign_array(x: np.ndarray) -> np.ndarray:
    """PyTorch's sign: -1, 0 or 1, with 0 (not NaN) for NaN and +0. for -0. (NumPy's sign gives NaN and -0.)."""
    x = np.asarray(x)
    if x.dtype.kind == "b":
        return x.copy()
    return ((x > 0).astype(x.dtype) - (x < 0)).astype(x.dtype, copy=False)


sign = _unary("sign", sign_array)
tanh = _unary("tanh", np.tanh)
sigmoid = _unary("sigmoid", lambda x: 1 / (1 + np.exp(-x)))


def where(cond, a, b):
    """`cond` is always a plain boolean array (masks carry no gradient)."""
    if is_t(a) or is_t(b):
        return _tensor_op("where")(cond, a, b)
    return np.where(cond, a, b)


_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def keep_where(keep, grad):
    """`where(keep, grad, 0)`: the gradient where `keep`, +0 elsewhere, as PyTorch's formulas mask gradients.

    A product `grad * keep` is not the same: an inf gradient times 0 is NaN (relu's mask would turn sqrt's inf
    at 0 into NaN), and a negative one times 0 is -0. `np.where` is exact but branches on every element, which
    is slow on random masks like relu's; so on float arrays the dropped elements have their bits cleared
    instead: the bits times the mask (1 where `keep`, 0 elsewhere), as fast as the product and exact, with no
    array beside the mask and the result."""
    return _masked(keep, grad, True)


def zero_where(drop, grad):
    """`grad.masked_fill(drop, 0)`: the gradient with +0 where `drop` (see `keep_where`)."""
    return _masked(drop, grad, False)


def _masked(mask, grad, keep: bool):
    if is_t(grad):
        return where(mask, grad, 0.0) if keep else where(mask, 0.0, grad)
    grad = np.asarray(grad)
    uint = _UINT.get(grad.dtype.itemsize) if grad.dtype.kind == "f" else None
    if uint is None:
        zero = grad.dtype.type(0)
        return np.where(mask, grad, zero) if keep else np.where(mask, zero, grad)
    kept = mask if keep else np.logical_not(mask)
    return np.multiply(grad.view(uint), kept, dtype=uint).view(grad.dtype)


def data(x):
    """The array behind a value (masks and comparisons never need a graph)."""
    return x._data if is_t(x) else x


def zeros_like(x):
    if is_t(x):
        return make(np.zeros_like(x._data))
    return np.zeros_like(x)


def cast(x, like):
    """`x` in `like`'s dtype (`Tensor.to`, recorded as ToCopyBackward0 when it converts a tensor requiring grad)."""
    dtype = data(like).dtype
    if is_t(x):
        return x if x._data.dtype == dtype else x.to(_dtypes.FROM_NP[dtype])
    return x if x.dtype == dtype else x.astype(dtype)


def zeros(shape: tuple, like):
    """Zeros of `shape` in `like`'s dtype, a Tensor (that requires no grad) if `like` is one."""
    out = np.zeros(shape, data(like).dtype)
    return make(out) if is_t(like) else out


def scatter_into(g, shape: tuple, key, accumulate: bool, name: str):
    """A zero tensor of `shape` with `g` placed at `key`: backward of select/slice/indexing."""
    if is_t(g):
        return _tensor_op("index_backward")(g, tuple(shape), key, accumulate, name)
    out = np.zeros(shape, dtype=g.dtype)
    if accumulate:
        with np.errstate(invalid="ignore", over="ignore"):  # (inf + -inf: nan, silently)
            np.add.at(out, key, g)
    else:
        out[key] = g
    return out


def stack(values, dim: int):
    if any(is_t(v) for v in values):
        if not all(is_t(v) for v in values):
            values = [v if is_t(v) else make(np.asarray(v)) for v in values]
        return _tensor_op("stack")(values, dim)
    return np.stack(values, dim)


def erf(x):
    if is_t(x):
        return x.erf()
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def sum_keep(g, dim: int):
    return g.sum(dim, keepdim=True) if is_t(g) else g.sum(axis=dim, keepdims=True)


def cumsum(g, dim: int):
    return g.cumsum(dim) if is_t(g) else cumsum_array(g, dim)


_CUMULATE = {np.dtype(np.float16): np.dtype(np.float32), np.dtype(np.float32): np.dtype(np.float64)}


def cumsum_array(a: np.ndarray, axis: int, dtype=None) -> np.ndarray:
    """np.cumsum as PyTorch's CPU kernel: its sums start from +0, so a leading -0. becomes +0. (NumPy copies it),
    and float16 / float32 add up in float32 / float64 (its accumulate type), each running sum rounded once."""
    want = np.dtype(dtype) if dtype is not None else a.dtype
    wide = _CUMULATE.get(want)
    out = np.cumsum(a, axis=axis, dtype=wide or dtype)
    if wide is not None:
        out = out.astype(want)
    if out.dtype.kind == "f":
        np.add(out, 0.0, out=out)
    return out


def cumprod(g, dim: int):
    return g.cumprod(dim) if is_t(g) else np.cumprod(g, dim)


def reverse_cumsum(g, dim: int):
    """Sums from each element to the end along `dim` (cumsum's backward, as PyTorch computes it: flip, cumsum,
    flip, and the gradient itself when there is at most one element along `dim`; `sum - cumsum + g` would make nan
    of an inf)."""
    if np.ndim(g) == 0 or math.prod(g.shape) <= 1 or g.shape[dim] == 1:
        return g
    return flip(cumsum(flip(g, dim), dim), dim)


def abs(x):
    return x.abs() if is_t(x) else np.abs(x)


def narrow(g, dim: int, start: int, length: int):
    if is_t(g):
        return g.narrow(dim, start, length)
    return g[(slice(None),) * dim + (slice(start, start + length),)]


def select(g, dim: int, i: int):
    return g[(slice(None),) * dim + (i,)]


def cat(values, dim: int):
    if any(is_t(v) for v in values):
        return _tensor_op("cat")([v if is_t(v) else make(np.asarray(v)) for v in values], dim)
    return np.concatenate(values, dim)


def gather(g, dim: int, index):
    if is_t(g):
        return g.gather(dim, make(index))
    return gather_array(g, dim, index)


def gather_array(x: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    """torch.gather on arrays. The index may be smaller than the input in the other dims: only that corner of the
    input is read. A 0-d input and index are gathered as 1-element ones, as PyTorch's. An empty index reads
    nothing (its dims may be any)."""
    if not index.size:
        return np.zeros(index.shape, x.dtype)
    if x.ndim == 0:
        return gather_array(x.reshape(1), 0, np.reshape(index, 1)).reshape(np.shape(index))
    corner = tuple(slice(None) if i == dim else slice(0, n) for i, n in enumerate(index.shape))
    return np.take_along_axis(x[corner], index, axis=dim)


def scatter(x, dim: int, index, src):
    """A copy of `x` with `src` (an array or a number; only the index's extent of an array) written at `index`
    along `dim`: torch.scatter."""
    if is_t(x):
        return x.scatter(dim, make(index), src if is_t(src) or not isinstance(src, np.ndarray) else make(src))
    out = np.array(x, copy=True)
    if not index.size:  # nothing written (the index's dims may be any)
        return out
    if out.ndim == 0:
        return np.array(src, out.dtype).reshape(())  # (a copy: never src's memory)
    if isinstance(src, np.ndarray):
        src = src[tuple(slice(0, n) for n in index.shape)]
    corner = tuple(slice(None) if i == dim else slice(0, n) for i, n in enumerate(index.shape))
    np.put_along_axis(out[corner], index.astype(np.intp, copy=False), src, axis=dim)  # (a view of `out`)
    return out


def scatter_add_zeros(g, dim: int, index, shape):
    if not shape:  # a 0-d input (gathered at its only element)
        return g
    if is_t(g):
        return _tensor_op("scatter_add")(make(np.zeros(shape, g._data.dtype)), dim, make(index), g)
    out = np.zeros(shape, g.dtype)
    scatter_add_into(out, dim, index, g)
    return out


def scatter_add_into(out: np.ndarray, dim: int, idx: np.ndarray, src: np.ndarray) -> None:
    """out[..., idx[i, j], ...] += src[i, j] along `dim` (torch.scatter_add_ on arrays)."""
    if not np.size(idx):  # nothing added (the index's dims may be any)
        return
    if out.ndim == 0:  # a 0-d input, index and source: one element, added when the index holds one
        if idx.size:  # the element itself (NumPy's sum of one -0. is +0.: -0. + -0. must stay -0.)
            out[...] += np.asarray(src).reshape(-1)[0]
        return
    grid = list(np.indices(idx.shape, sparse=True))
    grid[dim] = idx
    with np.errstate(invalid="ignore", over="ignore"):  # (inf + -inf is nan, silently as in PyTorch)
        np.add.at(out, tuple(grid), src[tuple(slice(0, s) for s in idx.shape)])


def _scalar(name: str, kernel):
    def f(x, s):
        return _tensor_op(name)(x, s) if is_t(x) else kernel(x, s)

    f.__name__ = name
    return f


# `x * s`, `x / s`, `x + s`, `x - s` for a Python number `s`, as PyTorch's C++ formulas write them: on a Tensor the
# Scalar overloads, recorded as MulBackward1 / DivBackward1 / AddBackward1 / SubBackward1 (where `x * s` in Python is
# MulBackward0). A formula may simply write `x * s`: while formulas run under create_graph, the operators take
# these overloads for a float tensor and a Python number (ops/arithmetic.py, `_common`); these functions remain for
# helpers that also run outside formulas, and for an integer tensor.
mul_scalar = _scalar("mul_scalar", lambda x, s: with_number(np.multiply, x, s))
div_scalar = _scalar("div_scalar", lambda x, s: with_number(np.true_divide, x, s))
add_scalar = _scalar("add_scalar", lambda x, s: x + s)
sub_scalar = _scalar("sub_scalar", lambda x, s: x - s)


def sgn(x):
    """PyTorch's sgn (sign, for real numbers); on a Tensor it records SgnBackward0, as abs's formula does."""
    return _tensor_op("sgn")(x) if is_t(x) else sign_array(x)


def masked_fill(x, mask, value: float):
    """`x.masked_fill(mask, value)` (`mask` a plain boolean array): PyTorch's formulas' `masked_fill_`, recorded
    as MaskedFillBackward0 on a Tensor."""
    if is_t(x):
        return x.masked_fill(make(np.asarray(mask)), value)
    return np.where(mask, x.dtype.type(value), x)


def flip(g, dim: int):
    """A flipped copy, as PyTorch's flip makes (NumPy's is a view with a negative stride, which no tensor has)."""
    return g.flip(dim) if is_t(g) else np.flip(g, dim).copy()


def _tensor_op(name: str):
    """The Tensor version of a declared op: the ops' modules sit above this one, so it is looked up in the
    registry (filled as they load) rather than imported."""
    return REGISTRY[name].function
