"""Convolutions: `convolution` (ConvolutionBackward0, plain and transposed), F.conv1d/conv2d/conv_transpose1d/2d,
and F.unfold / F.fold (Im2ColBackward0 / Col2ImBackward0), over any number of spatial dims, on NumPy.

How a convolution runs here (im2col): the input is zero-padded, a strided view (`np.lib.stride_tricks`) lists
every window the kernel visits, one copy lays those windows out as columns (C * kernel elements, windows), and
one matrix product with the weight (a BLAS call per convolution, per group) computes every output at once.
The convolution's kernels keep the batch as the last axis, so that the product covers the whole batch and
the copies run over long rows. Its adjoint, the transposed convolution, goes the other way: one product gives
each window's contribution, and one strided add per kernel position puts the windows back into the image.
The weight's gradient copies the columns again rather than keeping the forward's: they are the largest array of
a step (25 times a 5x5 convolution's input), and a training step whose peak outgrows the heap the allocator keeps
between steps gets those pages from the system anew every step (for LeNet that cost half the step; the second
copy costs a fiftieth of it). F.unfold gives the columns in PyTorch's layout,
(N, C * kernel elements, windows), and F.fold (`scatter`) adds them back.

Three functions are written once and used for everything (`x` the big side, `y` the small one):
`_forward(x, w)` the convolution, `_adjoint(y, w)` the transposed convolution, `_weight_grad(x, y)` the
correlation of the two that gives the weight's gradient. A convolution's backward is `_adjoint` and
`_weight_grad`; a transposed convolution's forward is `_adjoint`, its backward `_forward` and `_weight_grad`.
They take arrays (the plain backward) or Tensors (under `create_graph=True`, through the unfold/fold ops,
which are each other's derivative), so second-order gradients come free.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np

from .. import _dtypes
from .._state import GRAD
from .._tensor import Tensor, make
from . import xp
from .dual import forward_aware
from .fused import joining_rule, joins
from .recording import record, rule
from .registry import Sample, declare


class Geometry(NamedTuple):
    """How a kernel visits an image: per spatial dim its size, step, zero border and spacing; the image's
    spatial sizes (`big`, unpadded) and the number of windows (`small`); how the channels split into groups."""

    kernel: tuple
    stride: tuple
    padding: tuple
    dilation: tuple
    big: tuple
    small: tuple
    groups: int = 1


# -- NumPy kernels -------------------------------------------------------------------------------------------
def _extent(geo: Geometry) -> tuple:
    """The padded image's spatial sizes: the zero border on both sides, and more on the right when the last
    window hangs over it (a pooling's ceil_mode)."""
    return tuple(max(b + 2 * p, st * (m - 1) + d * (k - 1) + 1)
                 for b, p, st, m, d, k in zip(geo.big, geo.padding, geo.stride, geo.small, geo.dilation, geo.kernel))


def _padded(x: np.ndarray, geo: Geometry, fill: float = 0.0) -> np.ndarray:
    """x inside a border of `fill` (zeros; -inf for a max pooling) of the padded extent (x itself when none)."""
    extent = _extent(geo)
    if extent == x.shape[2:]:
        return x
    out = np.full(x.shape[:2] + extent, fill, x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(p, p + n) for p, n in zip(geo.padding, x.shape[2:]))] = x
    return out


def windows(x: np.ndarray, geo: Geometry, fill: float = 0.0) -> np.ndarray:
    """A read-only (N, C, *small, *kernel) view of the padded x: element [n, c, i, k] is the image at
    i * stride + k * dilation - padding (per spatial dim), no copy."""
    xp_ = _padded(x, geo, fill)
    st = xp_.strides
    strides = st[:2] + tuple(s * step for s, step in zip(st[2:], geo.stride)) + tuple(
        s * d for s, d in zip(st[2:], geo.dilation))
    return np.lib.stride_tricks.as_strided(xp_, x.shape[:2] + geo.small + geo.kernel, strides, writeable=False)


def scatter(patches: np.ndarray, geo: Geometry, n: int, c: int) -> np.ndarray:
    """The adjoint of `windows`: `patches`, indexable as (N, C, *kernel, *small), added back into an
    (N, C, *big) image (overlapping windows sum, the border is cut off). One strided add per kernel position."""
    out = np.zeros((n, c) + _extent(geo), patches.dtype)
    for k in np.ndindex(*geo.kernel):
        where = tuple(slice(ki * d, ki * d + st * (m - 1) + 1, st)
                      for ki, d, st, m in zip(k, geo.dilation, geo.stride, geo.small))
        out[(slice(None), slice(None)) + where] += patches[(slice(None), slice(None)) + k]
    if out.shape[2:] != geo.big:
        out = np.ascontiguousarray(out[(slice(None), slice(None)) + tuple(slice(p, p + b)
                                                                         for p, b in zip(geo.padding, geo.big))])
    return out


def _cols_of(x: np.ndarray, geo: Geometry) -> np.ndarray:
    """im2col in PyTorch's layout (F.unfold): (N, C * kernel elements, windows)."""
    s = len(geo.kernel)
    w = windows(x, geo)
    perm = (0, 1) + tuple(range(2 + s, 2 + 2 * s)) + tuple(range(2, 2 + s))  # (N, C, *kernel, *small)
    return np.ascontiguousarray(w.transpose(perm)).reshape(
        x.shape[0], x.shape[1] * math.prod(geo.kernel), math.prod(geo.small))


def _cols_back(cols: np.ndarray, geo: Geometry) -> np.ndarray:
    """col2im in PyTorch's layout (F.fold): (N, C * kernel elements, windows) summed into (N, C, *big)."""
    n, ck = cols.shape[:2]
    c = ck // math.prod(geo.kernel)
    return scatter(cols.reshape((n, c) + geo.kernel + geo.small), geo, n, c)


# The convolution's own kernels work with the batch as the LAST axis: (C, *spatial, N). Then one matrix product
# (per group) covers the whole batch, and every strided copy or add runs over long contiguous rows (the window
# positions times the batch) instead of one short row per sample and channel, where most of the time went.
def _batch_last(a: np.ndarray) -> np.ndarray:
    """(N, C, *spatial) -> (C, *spatial, N), copied."""
    return np.ascontiguousarray(np.moveaxis(a, 0, -1))


def _batch_first(a: np.ndarray) -> np.ndarray:
    """(C, *spatial, N) -> (N, C, *spatial), copied."""
    return np.ascontiguousarray(np.moveaxis(a, -1, 0))


def _cols_last(x: np.ndarray, geo: Geometry) -> np.ndarray:
    """im2col with the batch last: (C * kernel elements, windows * N), rows C-major then the kernel."""
    n, c, s = x.shape[0], x.shape[1], len(geo.kernel)
    extent = _extent(geo)
    if extent == geo.big:
        xl = _batch_last(x)
    else:  # the zero border, and the batch moved last, in one copy
        xl = np.zeros((c,) + extent + (n,), x.dtype)
        xl[(slice(None),) + tuple(slice(p, p + b) for p, b in zip(geo.padding, geo.big))] = np.moveaxis(x, 0, -1)
    st = xl.strides
    view = np.lib.stride_tricks.as_strided(
        xl, (c,) + geo.kernel + geo.small + (n,),
        (st[0],) + tuple(st[1 + i] * geo.dilation[i] for i in range(s))
        + tuple(st[1 + i] * geo.stride[i] for i in range(s)) + (st[-1],), writeable=False)
    return np.ascontiguousarray(view).reshape(c * math.prod(geo.kernel), math.prod(geo.small) * n)  # (no -1: an
    # empty batch has a size NumPy cannot infer)


def _forward_np(x: np.ndarray, w: np.ndarray, geo: Geometry) -> np.ndarray:
    """The convolution on arrays: one product per group of the weight (O, C/groups * kernel) with im2col's
    columns (a temporary: gone before the result is copied out)."""
    o, g, n = w.shape[0], geo.groups, x.shape[0]
    cols = _cols_last(x, geo).reshape(g, x.shape[1] // g * math.prod(geo.kernel), math.prod(geo.small) * n)
    out = np.matmul(w.reshape(g, o // g, -1), cols)  # (g, O / g, windows * N)
    del cols
    return _batch_first(out.reshape((o,) + geo.small + (n,)))


def _negative_zeros(x: np.ndarray, w: np.ndarray, geo: Geometry) -> np.ndarray:
    """Where the convolution's sum is -0.: every product of its window is -0. (PyTorch's kernels sum the products
    from the first one, so -0. terms stay -0.; a matrix product starts from +0.). A product is -0. when one factor
    is ±0 and the signs differ: counted with four products of indicator matrices (exact: integers in float64)."""
    o, g = w.shape[0], geo.groups
    cols = _cols_last(x, geo).reshape(g, x.shape[1] // g * math.prod(geo.kernel), -1)
    wm = w.reshape(g, o // g, -1)

    def kinds(a):  # -0., +0., negative non-zero, positive non-zero (or nan)
        zero, neg = a == 0, np.signbit(a)
        return [(k).astype(np.float64) for k in (zero & neg, zero & ~neg, ~zero & neg, ~zero & ~neg)]

    (wn0, wp0, wneg, wpos), (cn0, cp0, cneg, cpos) = kinds(wm), kinds(cols)
    count = (np.matmul(wn0, cp0 + cpos) + np.matmul(wp0, cn0 + cneg) + np.matmul(wneg, cp0)
             + np.matmul(wpos, cn0))
    all_negative = count == wm.shape[-1]
    return _batch_first(all_negative.reshape((o,) + geo.small + (x.shape[0],)))


def _adjoint_np(y: np.ndarray, w: np.ndarray, geo: Geometry) -> np.ndarray:
    """The transposed convolution on arrays: each window's part (weightᵀ @ y), added back into the image, one
    strided add per kernel position."""
    o, g, n = w.shape[0], geo.groups, y.shape[0]
    c, s = w.shape[1] * g, len(geo.kernel)
    cols = np.matmul(w.reshape(g, o // g, -1).transpose(0, 2, 1),
                     _batch_last(y).reshape(g, o // g, math.prod(geo.small) * n))
    patches = cols.reshape((c,) + geo.kernel + geo.small + (n,))
    out = np.zeros((c,) + _extent(geo) + (n,), patches.dtype)
    for k in np.ndindex(*geo.kernel):
        where = tuple(slice(ki * d, ki * d + st * (m - 1) + 1, st)
                      for ki, d, st, m in zip(k, geo.dilation, geo.stride, geo.small))
        out[(slice(None),) + where] += patches[(slice(None),) + k]
    out = out[(slice(None),) + tuple(slice(p, p + b) for p, b in zip(geo.padding, geo.big))]
    return np.ascontiguousarray(np.moveaxis(out, s + 1, 0))


def _weight_grad_np(x: np.ndarray, y: np.ndarray, geo: Geometry) -> np.ndarray:
    """The weight's gradient on arrays: y (O, windows * N) times im2col's columns transposed, one product per
    group."""
    o, g = y.shape[1], geo.groups
    yl = _batch_last(y).reshape(g, o // g, math.prod(geo.small) * y.shape[0])
    cols = _cols_last(x, geo).reshape(g, x.shape[1] // g * math.prod(geo.kernel), yl.shape[-1])
    return np.matmul(yl, cols.transpose(0, 2, 1))


# -- unfold / fold: the ops (Tensors) behind the formulas under create_graph ---------------------------------
def _cols_back_of(grad, geo: Geometry):
    return col2im(grad, geo) if xp.is_t(grad) else _cols_back(grad, geo)


def _cols_of_of(grad, geo: Geometry):
    return im2col(grad, geo) if xp.is_t(grad) else _cols_of(grad, geo)


Im2ColBackward0 = rule("Im2ColBackward0", "self",
                       saves="dilation kernel_size padding self_sym_argsize_minus_1 self_sym_argsize_minus_2 stride "
                             "_geo",
                       text="grad_self = col2im(grad): every window's gradient added back where the window was",
                       forward="linear",
                       self=lambda grad, _geo: _cols_back_of(grad, _geo))
Col2ImBackward0 = rule("Col2ImBackward0", "self", saves="dilation kernel_size padding stride _geo",
                       forward="linear", text="grad_self = im2col(grad): the gradient read out window by window",
                       self=lambda grad, _geo: _cols_of_of(grad, _geo))


def im2col(input: Tensor, geo: Geometry) -> Tensor:
    """(N, C, *big) -> (N, C * kernel elements, windows): F.unfold of any number of spatial dims."""
    res = _cols_of(input._data, geo)
    if input._requires_grad and GRAD.mode > 0:
        return record(Im2ColBackward0, res, (input,), **_geo_args(geo), self_sym_argsize_minus_1=geo.big[-1],
                      self_sym_argsize_minus_2=geo.big[-2] if len(geo.big) > 1 else 1, _geo=geo)
    return make(res)


def col2im(input: Tensor, geo: Geometry) -> Tensor:
    """(N, C * kernel elements, windows) -> (N, C, *big), overlaps summed: F.fold of any number of spatial dims."""
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf in overlapping windows: NaN, no NumPy warning
        res = _cols_back(input._data, geo)
    if input._requires_grad and GRAD.mode > 0:
        return record(Col2ImBackward0, res, (input,), **_geo_args(geo), _geo=geo)
    return make(res)


# The convolution's formulas call these on Tensors: under forward AD (forward over reverse) they carry tangents
im2col = forward_aware(im2col, (Im2ColBackward0,), "im2col")
col2im = forward_aware(col2im, (Col2ImBackward0,), "col2im")


def _geo_args(geo: Geometry) -> dict:
    return {"dilation": geo.dilation, "kernel_size": geo.kernel, "padding": geo.padding, "stride": geo.stride}


# -- the three products on Tensors (under create_graph): unfold, fold and matmul, all differentiable ------------
def _rows(x: Tensor, geo: Geometry) -> Tensor:
    """(N, C, *big) -> rows (N * windows, C * kernel elements)."""
    cols = im2col(x, geo)
    return cols.transpose(1, 2).reshape(-1, cols.shape[1])


def _unrows(rows: Tensor, geo: Geometry, n: int, c: int) -> Tensor:
    """rows (N * windows, C * kernel elements) -> (N, C, *big), overlapping windows summed."""
    return col2im(rows.reshape(n, math.prod(geo.small), -1).transpose(1, 2), geo)


def _small_rows(y):
    """(N, O, *small) -> (N * windows, O)."""
    perm = (0,) + tuple(range(2, len(y.shape))) + (1,)
    return xp.reshape(xp.permute(y, perm), (-1, y.shape[1]))


def _small_image(rows, n: int, geo: Geometry):
    """(N * windows, O) -> (N, O, *small)."""
    s = len(geo.small)
    return xp.permute(xp.reshape(rows, (n,) + geo.small + (-1,)), (0, s + 1) + tuple(range(1, s + 1)))


def _per_group(a, groups: int):
    """(M, G * k) -> (G, M, k)."""
    return xp.permute(xp.reshape(a, (a.shape[0], groups, -1)), (1, 0, 2))


def _joined(a):
    """(G, M, k) -> (M, G * k)."""
    return xp.reshape(xp.permute(a, (1, 0, 2)), (a.shape[1], -1))


def _forward(x, w, geo: Geometry):
    """The convolution: (N, C, *big) with weight (O, C / groups, *kernel) -> (N, O, *small)."""
    if not xp.is_t(x):
        return _forward_np(x, w, geo)
    rows = _rows(x, geo)
    w2 = xp.reshape(w, (w.shape[0], -1))
    g = geo.groups
    if g == 1:
        out = xp.mm(rows, xp.t(w2))
    else:
        out = _joined(_per_group(rows, g) @ xp.transpose(xp.reshape(w2, (g, -1, w2.shape[1])), 1, 2))
    return _small_image(out, x.shape[0], geo)


def _adjoint(y, w, geo: Geometry):
    """The transposed convolution: (N, O, *small) with weight (O, C / groups, *kernel) -> (N, C, *big)."""
    if not xp.is_t(y):
        return _adjoint_np(y, w, geo)
    rows = _small_rows(y)
    w2 = xp.reshape(w, (w.shape[0], -1))
    g = geo.groups
    if g == 1:
        out = xp.mm(rows, w2)
    else:
        out = _joined(_per_group(rows, g) @ xp.reshape(w2, (g, -1, w2.shape[1])))
    return _unrows(out, geo, y.shape[0], w.shape[1] * g)


def _weight_grad(x, y, geo: Geometry, weight_shape: tuple):
    """The correlation of the big side x (N, C, *big) with the small side y (N, O, *small): the gradient of
    the weight (O, C / groups, *kernel) of the convolution x -> y."""
    if not xp.is_t(x) and not xp.is_t(y):
        return _weight_grad_np(x, y, geo).reshape(weight_shape)
    rows = _rows(x, geo)
    yrows = _small_rows(y)
    g = geo.groups
    if g == 1:
        out = xp.mm(xp.t(yrows), rows)
    else:
        out = xp.reshape(xp.transpose(_per_group(yrows, g), 1, 2) @ _per_group(rows, g), (weight_shape[0], -1))
    return xp.reshape(out, weight_shape)


def _input_grad(grad, weight, _geo, transposed):
    return _forward(grad, weight, _geo) if transposed else _adjoint(grad, weight, _geo)


def _weight_grad_of(grad, input, _geo, transposed, weight_shape):
    if transposed:
        return _weight_grad(grad, input, _geo, weight_shape)
    return _weight_grad(input, grad, _geo, weight_shape)


def _conv_tangent(tangents: tuple, input, weight, _geo, transposed):
    """The convolution is bilinear in (input, weight) and adds the bias per channel: its tangent is
    conv(input_t, weight) + conv(input, weight_t) + bias_t (a zero number for an absent bias)."""
    input_t, weight_t, bias_t = tangents
    conv = _adjoint if transposed else _forward
    with np.errstate(all="ignore"):
        total = conv(input_t, weight, _geo) + conv(input, weight_t, _geo)
    return total + xp.reshape(bias_t, (1, -1) + (1,) * (len(total.shape) - 2))


def _bias_grad(grad):
    dims = (0,) + tuple(range(2, len(grad.shape)))
    return grad.sum(dims) if xp.is_t(grad) else grad.sum(axis=dims)


ConvolutionBackwardBackward0 = joining_rule("ConvolutionBackwardBackward0", "grad_output input weight")
ConvolutionBackward0 = rule(
    "ConvolutionBackward0", "input weight bias",
    saves="input weight bias_sym_sizes_opt stride padding dilation transposed output_padding groups _geo _wshape",
    text="grad_input = transposed convolution of grad with weight;  grad_weight = correlation of input with grad;  "
         "grad_bias = Σ grad over batch and positions",
    forward=lambda input_t, weight_t, bias_t, input, weight, _geo, transposed:
    _conv_tangent((input_t, weight_t, bias_t), input, weight, _geo, transposed),
    # PyTorch's one formula (convolution_backward) saves input and weight for any of the three gradients, so a
    # write into either is refused whichever is asked for: each formula reads both (seed 1400 program 335)
    # under create_graph, each gradient requires grad when grad, input or weight does, as convolution_backward's
    # (`joins`: a constant one, grad_weight with only the weight requiring grad, gets its ConvolutionBackwardBackward0)
    input=joins(ConvolutionBackwardBackward0, lambda grad, input, weight, _geo, transposed:
                _input_grad(grad, weight, _geo, transposed)),
    weight=joins(ConvolutionBackwardBackward0, lambda grad, input, weight, _geo, transposed, _wshape:
                 _weight_grad_of(grad, input, _geo, transposed, _wshape)),
    bias=joins(ConvolutionBackwardBackward0, lambda grad, input, weight: _bias_grad(grad)))


# -- the op -------------------------------------------------------------------------------------------------------
def _type_name(d: np.dtype) -> str:
    return _dtypes.FROM_NP[d]._legacy[:-6]


def _sizes(what: str, value, s: int) -> tuple:
    v = (int(value),) * s if isinstance(value, (int, np.integer)) else tuple(int(a) for a in value)
    if len(v) == 1 and s > 1:
        v = v * s
    if len(v) != s:
        raise RuntimeError(f"expected {what} to be a single integer value or a list of {s} values to match the "
                           f"convolution dimensions, but got {what}={list(v)}")
    return v


def _check(input: np.ndarray, weight: np.ndarray, bias, groups: int, transposed: bool) -> None:
    shape = ", ".join(map(str, weight.shape))
    expected_channels = weight.shape[0] if transposed else weight.shape[1] * groups
    if input.shape[1] != expected_channels:
        what = (f"Given transposed=1, weight of size [{shape}], expected input[{', '.join(map(str, input.shape))}] "
                f"to have {expected_channels} channels" if transposed else
                f"Given groups={groups}, weight of size [{shape}], expected input[{', '.join(map(str, input.shape))}] "
                f"to have {expected_channels} channels")
        raise RuntimeError(f"{what}, but got {input.shape[1]} channels instead")
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and (bias._data.ndim != 1 or bias._data.shape[0] != out_channels):
        raise RuntimeError(f"Given weight of size [{shape}], expected bias to be 1-dimensional with {out_channels} "
                           f"elements, but got bias of size [{', '.join(map(str, bias._data.shape))}] instead")


# The batch size PyTorch's kernel heuristic sees when jacrev / jacfwd fold copies of one sample into N (PyTorch
# runs that sample's convolution plain); set by minigrad.func's convolution rule, None elsewhere.
SAMPLE_BATCH: list = [None]


def _onednn(x: np.ndarray, w: np.ndarray, groups: int) -> bool:
    """Whether PyTorch's CPU convolution takes its oneDNN kernel, whose type checks differ: a float32 input with
    groups, a kernel over 3 in both of its last two dims, a batch over one or a large input (PyTorch's heuristic
    on a machine of more than one thread; a 1-d convolution is a 2-d one of height 1 there)."""
    if x.dtype != np.float32 or x.size == 0:
        return False
    kernel = (1,) + w.shape[2:] if w.ndim == 3 else w.shape[2:]
    n = x.shape[0] if SAMPLE_BATCH[0] is None else SAMPLE_BATCH[0]
    lead = n * x.shape[1] * (math.prod(x.shape[2:4]) if x.ndim > 3 else x.shape[2])
    return groups > 1 or (kernel[-1] > 3 and kernel[-2] > 3) or n > 1 or lead > 20480


def _legacy(dtype: np.dtype) -> str:
    return f"minigrad.{_dtypes.FROM_NP[dtype]._legacy}"


def _check_types(x: np.ndarray, w: np.ndarray, bias, groups: int) -> None:
    """The weight's and bias's dtypes against the input's: oneDNN's kernel refuses either, naming the legacy
    types; the native kernel refuses a weight only ("expected scalar type") and adds any bias in the input's
    dtype."""
    if _onednn(x, w, groups):
        for kind, a in (("weight", w), ("bias", None if bias is None else bias._data)):
            if a is not None and a.dtype != x.dtype:
                raise RuntimeError(f"Input type ({_legacy(x.dtype)}) and {kind} type ({_legacy(a.dtype)}) should be "
                                   f"the same or input should be a MKLDNN tensor and {kind} is a dense tensor")
    if x.dtype != w.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(x.dtype)} but found {_type_name(w.dtype)}")


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride, padding, dilation, transposed: bool,
                output_padding, groups: int) -> Tensor:
    """PyTorch's one convolution op: batched input (N, C, *spatial); a transposed convolution when `transposed`
    (weight (C_in, C_out / groups, *kernel)), else weight (C_out, C_in / groups, *kernel)."""
    x, w = input._data, weight._data
    s = x.ndim - 2
    stride, padding, dilation = _sizes("stride", stride, s), _sizes("padding", padding, s), _sizes(
        "dilation", dilation, s)
    output_padding = _sizes("output_padding", output_padding, s)
    if any(v <= 0 for v in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(v < 0 for v in padding):
        raise RuntimeError("negative padding is not supported")
    if any(v <= 0 for v in dilation):
        raise RuntimeError("dilation should be greater than zero")
    _check(x, w, bias, groups, transposed)
    _check_types(x, w, bias, groups)
    kernel = w.shape[2:]
    if transposed:
        small = x.shape[2:]
        big = tuple((n - 1) * st - 2 * p + d * (k - 1) + op + 1
                    for n, st, p, d, k, op in zip(small, stride, padding, dilation, kernel, output_padding))
    else:
        big = x.shape[2:]
        padded = tuple(n + 2 * p for n, p in zip(big, padding))
        effective = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
        if any(e > n for e, n in zip(effective, padded)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                               f"size: ({' x '.join(map(str, effective))}). Kernel size can't be greater than actual "
                               "input size")
        small = tuple((n - e) // st + 1 for n, e, st in zip(padded, effective, stride))
    geo = Geometry(tuple(kernel), stride, padding, dilation, tuple(big), tuple(small), int(groups))
    recording = GRAD.mode > 0 and any(t is not None and t._requires_grad for t in (input, weight, bias))
    with np.errstate(all="ignore"):
        res = _adjoint_np(x, w, geo) if transposed else _forward_np(x, w, geo)
        if not transposed and res.dtype == np.float64 and res.size and (res == 0).any():  # (float32: oneDNN's
            res[(res == 0) & _negative_zeros(x, w, geo)] = -0.0  # choice, docs/differences.md)
        if bias is not None:
            res += bias._data.reshape((1, -1) + (1,) * s)
    if recording:
        return record(ConvolutionBackward0, res, (input, weight, bias),
                      bias_sym_sizes_opt=None if bias is None else bias._data.shape, stride=stride, padding=padding,
                      dilation=dilation, transposed=bool(transposed), output_padding=output_padding,
                      groups=int(groups), _geo=geo, _wshape=w.shape)
    return make(res)


# -- the functional interface: conv1d, conv2d, conv_transpose1d, conv_transpose2d -------------------------------
def _batched(input: Tensor, s: int, name: str) -> bool:
    """Is the input batched ((N, C, *spatial)) or not ((C, *spatial), which PyTorch unsqueezes)?"""
    nd = input._data.ndim
    if nd == s + 2:
        return True
    if nd == s + 1:
        return False
    raise RuntimeError(f"Expected {s + 1}D (unbatched) or {s + 2}D (batched) input to {name}, but got input of size: "
                       f"[{', '.join(map(str, input._data.shape))}]")


def _same_padding(input: Tensor, weight: Tensor, dilation: tuple, s: int, stride: tuple):
    """padding='same': the border that keeps the size; an odd total (an even kernel) pads the input itself on the
    right first, as PyTorch does (a ConstantPadNdBackward0 in the graph)."""
    if any(st != 1 for st in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    left, pad_nd, uneven = [], [0] * (2 * s), False
    for i in range(s):
        total = dilation[i] * (weight._data.shape[2 + i] - 1)
        lo, hi = total // 2, total - total // 2
        left.append(lo)
        if hi != lo:
            uneven = True
            pad_nd[2 * (s - 1 - i) + 1] = hi - lo
    if uneven:
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy "
                      "of the input be created", UserWarning, stacklevel=4)
        input = _pad(input, tuple(pad_nd))
    return input, tuple(left)


def _on_batch(input: Tensor, s: int, name: str, run) -> Tensor:
    """run(input) for a batched (N, C, *spatial) input; an unbatched (C, *spatial) one is unsqueezed first and
    squeezed after, as PyTorch does (SqueezeBackward1 in the graph)."""
    if _batched(input, s, name):
        return run(input)
    return run(input.unsqueeze(0)).squeeze(0)  # (Tensor's methods: under forward AD they carry tangents)


def _check_bias_type(input: Tensor, bias) -> None:
    """F.conv1d/conv2d with a numeric padding refuse a bias of another dtype before anything else, in PyTorch's
    words (the C++ type names); NumPy would promote the output to the bias's dtype."""
    if bias is not None and bias._data.dtype != input._data.dtype:
        names = _dtypes.CPP_NAMES
        raise RuntimeError(f"Input type ({names[input._data.dtype.name]}) and bias type "
                           f"({names[bias._data.dtype.name]}) should be the same")


def _conv(input: Tensor, weight: Tensor, bias, settings: tuple, groups: int) -> Tensor:
    """A convolution from F.conv1d/conv2d's arguments: settings = (stride, padding, dilation)."""
    s = input._data.ndim - 2
    stride, padding, dilation = settings
    stride, dilation = _sizes("stride", stride, s), _sizes("dilation", dilation, s)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * s
        elif padding == "same":
            input, padding = _same_padding(input, weight, dilation, s, stride)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    return convolution(input, weight, bias, stride, padding, dilation, False, (0,) * s, groups)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """1-D convolution of (N, C_in, L) (or (C_in, L)) with weight (C_out, C_in / groups, k); padding may be
    an int, a tuple, 'valid' or 'same'."""
    if not isinstance(padding, str):
        _check_bias_type(input, bias)
    return _on_batch(input, 1, "conv1d", lambda x: _conv(x, weight, bias, (stride, padding, dilation), groups))


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """2-D convolution of (N, C_in, H, W) (or (C_in, H, W)) with weight (C_out, C_in / groups, kH, kW); padding
    may be an int, a pair, 'valid' or 'same'."""
    if not isinstance(padding, str):
        _check_bias_type(input, bias)
    return _on_batch(input, 2, "conv2d", lambda x: _conv(x, weight, bias, (stride, padding, dilation), groups))


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The transpose (adjoint) of conv1d: weight (C_in, C_out / groups, k)."""
    return _on_batch(input, 1, "conv_transpose1d", lambda x: convolution(
        x, weight, bias, stride, padding, dilation, True, output_padding, groups))


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The transpose (adjoint) of conv2d: weight (C_in, C_out / groups, kH, kW)."""
    return _on_batch(input, 2, "conv_transpose2d", lambda x: convolution(
        x, weight, bias, stride, padding, dilation, True, output_padding, groups))


# -- F.unfold / F.fold (4-D inputs, as PyTorch) -------------------------------------------------------------------
def _pairs(*values) -> tuple:
    return tuple(_sizes("kernel_size", v, 2) for v in values)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """(N, C, H, W) -> (N, C * kH * kW, windows): every window the kernel visits, as a column (im2col); an
    unbatched (C, H, W) gives (C * kH * kW, windows), as PyTorch's."""
    n = input._data.ndim
    if n < 3:  # (PyTorch reads the size of dim n before it checks the rank)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {n})" if n
                         else "Dimension specified as 1 but tensor has no dimensions")
    if n == 3 or 0 in input._data.shape[1:] or n > 4:
        if n == 3 and 0 not in input._data.shape:
            return unfold(input.unsqueeze(0), kernel_size, dilation, padding, stride).squeeze(0)
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(input._data.shape)}")
    kernel, dilation, padding, stride = _pairs(kernel_size, dilation, padding, stride)
    big = input._data.shape[2:]
    small = tuple((n + 2 * p - d * (k - 1) - 1) // st + 1
                  for n, p, d, k, st in zip(big, padding, dilation, kernel, stride))
    if min(small) < 1:  # (PyTorch's check, before any window is taken)
        raise RuntimeError(f"Given input with spatial size {tuple(big)}, kernel_size={kernel}, dilation={dilation}, "
                           f"padding={padding}, calculated shape of the array of sliding blocks as {small}, but its "
                           "components must be at least one.")
    return im2col(input, Geometry(kernel, stride, padding, dilation, tuple(big), small))


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """(N, C * kH * kW, windows) -> (N, C, H, W): the columns added back into an image (col2im); an unbatched
    (C * kH * kW, windows) gives (C, H, W), as PyTorch's."""
    if input._data.ndim == 2 and 0 not in input._data.shape:
        return fold(input.unsqueeze(0), output_size, kernel_size, dilation, padding, stride).squeeze(0)
    if input._data.ndim != 3 or 0 in input._data.shape[1:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(input._data.shape)}")
    big, kernel, dilation, padding, stride = _pairs(output_size, kernel_size, dilation, padding, stride)
    small = tuple((n + 2 * p - d * (k - 1) - 1) // st + 1
                  for n, p, d, k, st in zip(big, padding, dilation, kernel, stride))
    _check_columns(input._data.shape, (big, kernel, dilation, padding, stride), small)
    return col2im(input, Geometry(kernel, stride, padding, dilation, big, small))


def _check_columns(shape: tuple, sizes: tuple, small: tuple) -> None:
    """fold's columns must be C * kH * kW by the number of windows, in PyTorch's words (NumPy's otherwise)."""
    big, kernel, dilation, padding, stride = sizes
    if shape[1] % (kernel[0] * kernel[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={shape[1]} and kernel_size={kernel}.")
    if shape[2] != small[0] * small[1]:
        raise RuntimeError(f"Given output_size={big}, kernel_size={kernel}, dilation={dilation}, padding={padding}, "
                           f"stride={stride}, expected size of input's dimension 2 to match the calculated number "
                           f"of sliding blocks {small[0]} * {small[1]} = {small[0] * small[1]}, but got "
                           f"input.size(2)={shape[2]}.")


def _pad(input: Tensor, pad: tuple) -> Tensor:
    """F.pad's op (arrange.py declares it; found in the registry, as xp finds Tensor ops)."""
    return xp._tensor_op("constant_pad_nd")(input, pad)


# == declarations ===============================================================================================
_X2, _W2, _B = ((2, 3, 6, 5), "real"), ((4, 3, 3, 2), "real"), ((4,), "real")
_X1, _W1 = ((2, 3, 7), "real"), ((4, 3, 3), "real")
_F = "nn.functional"
declare("convolution", convolution, method=False, nodes=(ConvolutionBackward0, ConvolutionBackwardBackward0),
        samples=(Sample((_X2, _W2, _B), ((1, 1), (0, 0), (1, 1), False, (0, 0), 1)),
                 Sample((((2, 4, 3, 3), "real"), ((4, 2, 2, 2), "real"), ((4,), "real")),
                        ((2, 1), (1, 0), (1, 1), True, (1, 0), 2))))
declare("conv2d", conv2d, namespace=_F, method=False, nodes=(ConvolutionBackward0,),
        forward_nodes=(),
        samples=(Sample((_X2, _W2, _B)), Sample((_X2, _W2)), Sample((_X2, _W2, _B), (2, 1)),
                 Sample((_X2, _W2), kwargs={"padding": (1, 2), "dilation": (2, 1)}),
                 Sample((((2, 4, 5, 5), "real"), ((6, 2, 3, 3), "real"), ((6,), "real")), kwargs={"groups": 2}),
                 Sample((_X2, ((4, 3, 3, 1), "real")), kwargs={"padding": "same"}), Sample((((3, 6, 5), "real"), _W2)),
                 Sample((((1, 2, 5, 4), "real"), ((2, 2, 2, 3), "real")), kwargs={"padding": "same"})))
declare("conv1d", conv1d, namespace=_F, method=False, nodes=(ConvolutionBackward0,),
        forward_nodes=(),
        samples=(Sample((_X1, _W1, ((4,), "real"))), Sample((_X1, _W1), kwargs={"stride": 3, "padding": 2}),
                 Sample((_X1, _W1), kwargs={"padding": "same", "dilation": 2}),
                 Sample((((2, 4, 6), "real"), ((4, 1, 3), "real")), kwargs={"groups": 4}),
                 Sample((((3, 7), "real"), _W1), kwargs={"padding": "valid"})))
declare("conv_transpose2d", conv_transpose2d, namespace=_F, method=False, nodes=(ConvolutionBackward0,),
        forward_nodes=(),
        samples=(Sample((((2, 4, 3, 3), "real"), ((4, 3, 2, 3), "real"), ((3,), "real"))),
                 Sample((((2, 4, 3, 3), "real"), ((4, 3, 3, 3), "real")), (None, 2, 1, 1)),
                 Sample((((2, 4, 3, 2), "real"), ((4, 1, 2, 2), "real")), kwargs={"groups": 2, "dilation": 2})))
declare("conv_transpose1d", conv_transpose1d, namespace=_F, method=False, nodes=(ConvolutionBackward0,),
        forward_nodes=(),
        samples=(Sample((((2, 4, 5), "real"), ((4, 3, 3), "real"), ((3,), "real")), kwargs={"stride": 2}),))
declare("unfold", unfold, namespace=_F, method=False, nodes=(Im2ColBackward0,),
        samples=(Sample((((2, 3, 5, 4), "real"),), ((2, 3),)),
                 Sample((((1, 2, 6, 6), "real"),), (3,), {"stride": 2, "padding": 1, "dilation": 1})))
declare("fold", fold, namespace=_F, method=False, nodes=(Col2ImBackward0,),
        samples=(Sample((((2, 12, 12), "real"),), ((5, 4), (2, 2))),
                 Sample((((1, 18, 9), "real"),), ((6, 6), 3), {"stride": 2, "padding": 1})))
