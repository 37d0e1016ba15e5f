"""Pooling: F.max_pool1d/2d (MaxPool2DWithIndicesBackward0), F.avg_pool1d/2d (AvgPool2DBackward0),
F.adaptive_avg_pool1d/2d (AdaptiveAvgPool2DBackward0), on the strided windows of ops/convolution.py.

max pooling keeps each window's largest element and where it was (`indices`, into the flattened input), so
its backward adds each gradient at that place; under create_graph that is PyTorch's backward op, whose node
(MaxPool2DWithIndicesBackwardBackward0) gathers at the indices and has an edge to the input, with a zero derivative.
Average pooling divides each window's sum by its size (PyTorch's rules for the border and ceil_mode); it is
linear, so its backward is its adjoint (each window's gradient spread back over it), and the derivative of
that backward is the pooling again (AvgPool2DBackwardBackward0). Adaptive average pooling averages over
windows that tile the input as evenly as possible, window by window in both directions, in PyTorch's order
of operations (so its rounding, infinities and NaNs are PyTorch's).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import _dtypes
from .._state import GRAD
from .._tensor import Tensor, make
from . import xp
from .convolution import Geometry, scatter, windows
from .dual import tangent_of
from .recording import SavedArg, record, rule
from .reductions import mean
from .registry import Sample, declare


class Pool(NamedTuple):
    """A pooling's settings, as its node saves them (`stride` is () when the call gave none)."""

    kernel: tuple
    stride: tuple
    padding: tuple
    dilation: tuple
    ceil_mode: bool
    count_include_pad: bool = True
    divisor_override: int | None = None


def _pair(value, name: str) -> tuple:
    v = (int(value),) * 2 if isinstance(value, (int, np.integer)) else tuple(int(a) for a in value)
    if len(v) == 1:
        v = v * 2
    if len(v) != 2:
        raise RuntimeError(f"max_pool2d: {name} must either be a single int, or a tuple of two ints")
    return v


def _out_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling_output_shape: windows that start inside the (left-padded) input."""
    span = n + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _geometry(x: np.ndarray, pool: Pool, name: str) -> Geometry:
    stride = pool.stride or pool.kernel
    for k, p, d in zip(pool.kernel, pool.padding, pool.dilation):
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    big = x.shape[2:]
    small = tuple(_out_size(n, k, s, p, d, pool.ceil_mode)
                  for n, k, s, p, d in zip(big, pool.kernel, stride, pool.padding, pool.dilation))
    if any(m < 1 for m in small):
        raise RuntimeError(f"Given input size: ({x.shape[1]}x{'x'.join(map(str, big))}). Calculated output size: "
                           f"({x.shape[1]}x{'x'.join(map(str, small))}). Output size is too small")
    return Geometry(pool.kernel, stride, pool.padding, pool.dilation, tuple(big), small)


def _batched(x: np.ndarray, name: str) -> np.ndarray:
    """(N, C, H, W), or an unbatched (C, H, W) seen as one sample; only the batch may be empty (PyTorch's check)."""
    if x.ndim not in (3, 4):
        raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input to {name}")
    if 0 in x.shape[-3:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(x.shape)}")
    return x if x.ndim == 4 else x[None]


# -- max pooling -----------------------------------------------------------------------------------------------
def _max_pool_grad(grad, self, result1, disjoint: bool):
    """zeros(self's shape) with each gradient added at the input element its window picked (`disjoint`: the
    windows do not overlap, so no element is picked twice and writing is enough)."""
    shape = tuple(self.shape)
    flat_shape = shape[:-2] + (shape[-2] * shape[-1],)
    lead = flat_shape[:-1]
    if xp.is_t(grad):
        return max_pool2d_backward(grad, self, result1, disjoint)
    rows = math.prod(lead)
    where = (result1 + (np.arange(rows) * flat_shape[-1]).reshape(lead + (1, 1))).reshape(-1)
    out = np.zeros(rows * flat_shape[-1], grad.dtype)
    if disjoint:
        out[where] += grad.reshape(-1)  # (added to +0, as PyTorch's kernel: a -0. gradient arrives as +0.)
    else:
        np.add.at(out, where, grad.reshape(-1))  # overlapping windows may pick an element twice: add
    return out.reshape(shape)


def _max_pool_tangent(self_t, result1: np.ndarray):
    """Each window's tangent is its max element's: self_t gathered at the indices (into each plane's H * W)."""
    lead = result1.shape[:-2]
    picked = xp.gather(xp.reshape(self_t, lead + (-1,)), len(lead), result1.reshape(lead + (-1,)))
    return xp.reshape(picked, result1.shape)


def _disjoint(kernel_size: tuple, stride: tuple, dilation: tuple) -> bool:
    """Do the windows never overlap (each step at least as long as a dilated window)?"""
    return all(st >= d * (k - 1) + 1 for k, st, d in zip(kernel_size, stride or kernel_size, dilation))


MaxPool2DWithIndicesBackwardBackward0 = rule(
    "MaxPool2DWithIndicesBackwardBackward0", "grad_output self", saves="indices", tensor_args="indices",
    text="grad_grad_output = grad gathered at the indices (the backward is linear in grad_output); grad_self = 0",
    shown={"indices": lambda node, v: make(v)},
    forward=lambda grad_output_t, indices: _max_pool_tangent(grad_output_t, indices),
    grad_output=lambda grad, indices: _max_pool_tangent(grad, indices),
    self=lambda grad: xp.zeros_like(grad))


def max_pool2d_backward(grad_output: Tensor, self: Tensor, indices: np.ndarray, disjoint: bool) -> Tensor:
    """PyTorch's max_pool2d_with_indices_backward as an op on Tensors (what MaxPool2DWithIndicesBackward0 runs under
    create_graph): its node has an edge to `self` too, whose derivative is zero, so the gradient requires grad (and a
    double backward gives zeros) when `self` does, even where grad_output does not."""
    res = _max_pool_grad(grad_output._data, self._data, indices, disjoint)
    if (grad_output._requires_grad or self._requires_grad) and GRAD.mode > 0:
        return record(MaxPool2DWithIndicesBackwardBackward0, res, (grad_output, self), indices=indices)
    return make(res)


MaxPool2DWithIndicesBackward0 = rule(
    "MaxPool2DWithIndicesBackward0", "self", saves="self kernel_size stride padding dilation ceil_mode result1",
    tensor_args="result1",
    text="grad_self = zeros, with each window's grad added at its max element (indices)",
    shown={"result1": lambda node, v: make(v)},
    forward=lambda self_t, result1: _max_pool_tangent(self_t, result1),
    self=lambda grad, self, result1, kernel_size, stride, dilation:
    _max_pool_grad(grad, self, result1, _disjoint(kernel_size, stride, dilation)))


def _max_pool(x: np.ndarray, pool: Pool, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices into each sample's flattened H * W) of a max pooling of (N, C, H, W) or (C, H, W).

    One pass per kernel position over the strided windows keeps the best value so far and which position
    gave it: a later element wins only if it is larger or NaN, PyTorch's rule (the first of equal maxima).
    Padding never wins: while a window has seen only padding, its first element inside the input wins."""
    b = _batched(x, name)
    geo = _geometry(b, pool, name)
    fill = -np.inf if b.dtype.kind == "f" else np.iinfo(b.dtype).min
    w = windows(b, geo, fill)
    best = w[..., 0, 0].copy()
    positions = list(np.ndindex(*geo.kernel))
    small = np.int8 if len(positions) < 128 else np.int32  # which position won: small ints add fastest
    which = np.zeros(best.shape, small)
    better, nan = np.empty(best.shape, bool), np.empty(best.shape, bool)
    step = np.empty(best.shape, small)
    rows = np.arange(geo.small[0])[:, None] * geo.stride[0] - geo.padding[0]
    cols = np.arange(geo.small[1]) * geo.stride[1] - geo.padding[1]

    def inside(kh, kw):  # (out H, out W): which windows have this kernel position inside the input
        r, c = rows + kh * geo.dilation[0], cols + kw * geo.dilation[1]
        return (r >= 0) & (r < geo.big[0]) & (c >= 0) & (c < geo.big[1])

    seen = inside(0, 0)  # windows whose best so far is an input element, not padding
    for k, (kh, kw) in enumerate(positions[1:], 1):
        v = w[..., kh, kw]
        np.greater(v, best, out=better)
        if b.dtype.kind == "f":
            better |= np.isnan(v, out=nan)
        if not seen.all():
            first = inside(kh, kw) & ~seen
            better |= first
            seen |= first
        np.maximum(best, v, out=best)
        np.subtract(small(k), which, out=step)  # which = k where better (arithmetic: masked copies are slow)
        step *= better
        which += step
    offsets = np.array([kh * geo.dilation[0] * geo.big[1] + kw * geo.dilation[1] for kh, kw in positions], np.int64)
    indices = np.take(offsets, which)
    indices += rows * geo.big[1] + cols
    if x.ndim == 3:
        best, indices = best[0], indices[0]
    return best, indices


def _pool_args(kernel_size, stride, padding, dilation, ceil_mode, name: str) -> Pool:
    return Pool(_pair(kernel_size, "kernel_size"), () if stride is None or stride == [] else _pair(stride, "stride"),
                _pair(padding, "padding"), _pair(dilation, "dilation"), bool(ceil_mode))


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """The largest element of each kernel_size window (stride defaults to kernel_size); with return_indices,
    also where each was (into the flattened H * W)."""
    pool = _pool_args(kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")
    values, indices = _max_pool(input._data, pool, "max_pool2d")
    shown = make(indices)  # (the indices the caller may get, and write into)
    if input._requires_grad and GRAD.mode > 0:
        out = record(MaxPool2DWithIndicesBackward0, values, (input,), kernel_size=pool.kernel, stride=pool.stride,
                     padding=pool.padding, dilation=pool.dilation, ceil_mode=pool.ceil_mode,
                     result1=SavedArg(indices, (shown,)) if return_indices else indices)
    else:
        out = make(values)
    return (out, shown) if return_indices else out


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """max_pool2d over a (N, C, 1, L) view, as PyTorch computes it (SqueezeBackward1 over the 2-D node)."""
    def one(v):
        return (1, int(v if isinstance(v, (int, np.integer)) else v[0]))

    shape = list(input._data.shape)
    if len(shape) not in (2, 3) or 0 in shape[-2:]:
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{shape}")
    out = max_pool2d(input.unsqueeze(-2), one(kernel_size), None if stride is None else one(stride),
                     (0, one(padding)[1]), one(dilation), ceil_mode, return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    if (input._requires_grad and GRAD.mode > 0) or tangent_of(input) is not None:
        return out.squeeze(-2)
    return make(out._data.squeeze(-2))  # PyTorch's kernel without indices: a tensor of its own, not a view


# -- average pooling ---------------------------------------------------------------------------------------------
def _divisors(geo: Geometry, pool: Pool) -> np.ndarray:
    """Each window's divisor (PyTorch's avg_pool2d): the window clipped to the padded input
    (count_include_pad) or to the input itself, unless divisor_override."""
    if pool.divisor_override:
        return np.asarray(float(pool.divisor_override))
    sizes = []
    for n, m, k, s, p in zip(geo.big, geo.small, geo.kernel, geo.stride, geo.padding):
        start = np.arange(m) * s - p
        end = np.minimum(start + k, n + p)
        size = end - start if pool.count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        sizes.append(size)
    return np.multiply.outer(*sizes).astype(np.float64)


def _avg_pool(x: np.ndarray, pool: Pool) -> np.ndarray:
    b = _batched(x, "avg_pool2d")
    geo = _geometry(b, pool, "avg_pool2d")
    res = (GRAD.quiet.run(_window_sums, windows(b, geo)) / _divisors(geo, pool)).astype(x.dtype)
    return res[0] if x.ndim == 3 else res


def _window_sums(win: np.ndarray) -> np.ndarray:
    """Each window's sum in PyTorch's order, row by row from +0. (np.sum's order depends on the view's strides, so
    its rounding would not be PyTorch's: a window summing to 0 mathematically gives 2e-16 or 0.)."""
    sums = np.zeros(win.shape[:-2], win.dtype)
    for i in range(win.shape[-2]):
        for j in range(win.shape[-1]):
            sums += win[..., i, j]
    return sums


def _avg_pool_adjoint(grad: np.ndarray, shape: tuple, pool: Pool) -> np.ndarray:
    """Each window's gradient divided by its divisor and spread back over the window."""
    g = grad if grad.ndim == 4 else grad[None]
    b_shape = shape if len(shape) == 4 else (1,) + tuple(shape)
    geo = _geometry(np.empty(b_shape, grad.dtype), pool, "avg_pool2d")
    share = (g / _divisors(geo, pool)).astype(grad.dtype)
    patches = np.broadcast_to(share[:, :, None, None], share.shape[:2] + geo.kernel + share.shape[2:])
    out = scatter(patches, geo, b_shape[0], b_shape[1])
    return out if len(shape) == 4 else out[0]


def _avg_pool_backward(grad, self, pool: Pool):
    if xp.is_t(grad):
        return avg_pool2d_backward(grad, self, pool)
    return _avg_pool_adjoint(grad, tuple(self.shape), pool)


AvgPool2DBackwardBackward0 = rule(
    "AvgPool2DBackwardBackward0", "grad_output self", saves="_pool",
    text="grad_grad_output = avg_pool2d(grad)  (the backward is linear: its derivative is the pooling); grad_self = 0",
    forward="linear",
    grad_output=lambda grad, _pool: _avg_pool_of(grad, _pool),
    self=lambda grad: xp.zeros_like(grad))


def _avg_pool_of(grad, pool: Pool):
    if xp.is_t(grad):
        return avg_pool2d(grad, pool.kernel, pool.stride or None, pool.padding, pool.ceil_mode, pool.count_include_pad,
                          pool.divisor_override)
    return _avg_pool(grad, pool)


def avg_pool2d_backward(grad_output: Tensor, self: Tensor, pool: Pool) -> Tensor:
    """PyTorch's avg_pool2d_backward as an op on Tensors (what AvgPool2DBackward0 runs under create_graph): its node
    has an edge to `self` too (whose derivative is zero), so the gradient requires grad when `self` does."""
    res = _avg_pool_adjoint(grad_output._data, tuple(self.shape), pool)
    if (grad_output._requires_grad or self._requires_grad) and GRAD.mode > 0:
        return record(AvgPool2DBackwardBackward0, res, (grad_output, self), _pool=pool)
    return make(res)


AvgPool2DBackward0 = rule(
    "AvgPool2DBackward0", "self",
    saves="self kernel_size stride padding ceil_mode count_include_pad divisor_override _pool",
    forward="linear", text="grad_self = each window's grad / its size, spread back over the window",
    self=lambda grad, self, _pool: _avg_pool_backward(grad, self, _pool))


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each kernel_size window (stride defaults to kernel_size)."""
    base = _pool_args(kernel_size, stride, padding, 1, ceil_mode, "avg_pool2d")
    pool = base._replace(count_include_pad=bool(count_include_pad), divisor_override=divisor_override)
    res = _avg_pool(input._data, pool)
    if input._requires_grad and GRAD.mode > 0:
        return record(AvgPool2DBackward0, res, (input,), kernel_size=pool.kernel, stride=pool.stride,
                      padding=pool.padding, ceil_mode=pool.ceil_mode, count_include_pad=pool.count_include_pad,
                      divisor_override=divisor_override, _pool=pool)
    return make(res)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """avg_pool2d over a (N, C, 1, L) view, as PyTorch computes it."""
    def one(v):
        return (1, int(v if isinstance(v, (int, np.integer)) else v[0]))

    if input._data.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input._data.ndim}-dimensional tensor for argument "
                           "#1 'self' (while checking arguments for avg_pool1d)")
    out = avg_pool2d(input.unsqueeze(-2), one(kernel_size), None if stride is None else one(stride),
                     (0, one(padding)[1]), ceil_mode, count_include_pad)
    return out.squeeze(-2)


# -- adaptive average pooling -------------------------------------------------------------------------------------
def _window_means(x: np.ndarray, out: tuple) -> np.ndarray:
    """Each window's mean as PyTorch's kernel computes it: its cells added one by one in row-major order (float16 in
    float32), then divided by the window's height, then width. (A product with averaging matrices rounds otherwise:
    a mean that should be a tiny negative number came out positive, and an inf or nan spread over every window.)"""
    acc = np.float32 if x.dtype == np.float16 else x.dtype.type
    res = np.empty(x.shape[:-2] + tuple(out), x.dtype)
    cols = _bounds(x.shape[-1], out[1])
    for i, (r0, r1) in enumerate(_bounds(x.shape[-2], out[0])):
        for j, (c0, c1) in enumerate(cols):
            total = np.zeros(x.shape[:-2], acc)
            for r in range(r0, r1):
                for c in range(c0, c1):
                    total += x[..., r, c]
            res[..., i, j] = total / acc(r1 - r0) / acc(c1 - c0)
    return res


def _bounds(n: int, m: int) -> list[tuple[int, int]]:
    """The m windows that tile n elements: [floor(i*n/m), ceil((i+1)*n/m)), PyTorch's start and end index."""
    return [((i * n) // m, -(-((i + 1) * n) // m)) for i in range(m)]


def _adaptive_adjoint(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """The adjoint of adaptive average pooling, as PyTorch's kernel computes it: window by window (row-major),
    the output's gradient divided by the window's height, then width, added into the cells the window covers,
    in the gradient's dtype (so float16 rounds as PyTorch's does). Only those cells are summed: a product with
    the averaging matrices would multiply an infinite gradient by their zeros, giving nan."""
    out = np.zeros(grad.shape[:-2] + tuple(shape[-2:]), grad.dtype)
    cols = _bounds(shape[-1], grad.shape[-1])
    with np.errstate(all="ignore"):
        for i, (r0, r1) in enumerate(_bounds(shape[-2], grad.shape[-2])):
            for j, (c0, c1) in enumerate(cols):
                share = grad[..., i, j] / grad.dtype.type(r1 - r0) / grad.dtype.type(c1 - c0)
                out[..., r0:r1, c0:c1] += share[..., None, None]
    return out


def _adaptive_grad(grad, self):
    if xp.is_t(grad):
        return adaptive_avg_pool2d_backward(grad, self)
    return _adaptive_adjoint(grad, tuple(self.shape))


AdaptiveAvgPool2DBackwardBackward0 = rule(
    "AdaptiveAvgPool2DBackwardBackward0", "grad_output self", saves="_size", forward="linear",
    text="grad_grad_output = adaptive_avg_pool2d(grad)  (the backward is linear: its derivative is the pooling); "
         "grad_self = 0",
    grad_output=lambda grad, _size: adaptive_avg_pool2d(grad, _size) if xp.is_t(grad) else _adaptive_of(grad, _size),
    self=lambda grad: xp.zeros_like(grad))


def _adaptive_of(x: np.ndarray, size: tuple) -> np.ndarray:
    return GRAD.quiet.run(_window_means, x, tuple(size))


def adaptive_avg_pool2d_backward(grad_output: Tensor, self: Tensor) -> Tensor:
    """PyTorch's _adaptive_avg_pool2d_backward as an op on Tensors (what AdaptiveAvgPool2DBackward0 runs under
    create_graph): its node has an edge to `self` too, whose derivative is zero, as PyTorch's has."""
    res = _adaptive_adjoint(grad_output._data, tuple(self.shape))
    if (grad_output._requires_grad or self._requires_grad) and GRAD.mode > 0:
        return record(AdaptiveAvgPool2DBackwardBackward0, res, (grad_output, self), _size=tuple(grad_output.shape[-2:]))
    return make(res)


AdaptiveAvgPool2DBackward0 = rule(
    "AdaptiveAvgPool2DBackward0", "self", saves="self",
    forward="linear", text="grad_self = each output's grad shared evenly over its window (Aᵀ · grad · B)",
    self=lambda grad, self: _adaptive_grad(grad, self))


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average windows that tile (H, W) into `output_size` (None keeps that size); (1, 1) is a mean, as
    PyTorch computes it (MeanBackward1)."""
    x = input._data
    if x.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(x.shape)}")
    size = (output_size,) * 2 if isinstance(output_size, (int, np.integer)) or output_size is None else tuple(
        output_size)
    out = tuple(x.shape[-2 + i] if v is None else int(v) for i, v in enumerate(size))
    if out == (1, 1):
        return mean(input, (-1, -2), keepdim=True)
    res = GRAD.quiet.run(_window_means, x, out)
    if input._requires_grad and GRAD.mode > 0:
        return record(AdaptiveAvgPool2DBackward0, res, (input,))
    return make(res)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """adaptive_avg_pool2d over a (N, C, 1, L) view, as PyTorch computes it."""
    size = int(output_size if isinstance(output_size, (int, np.integer)) else output_size[0])
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


# == declarations ===============================================================================================
_F = "nn.functional"
_I = (((2, 3, 6, 5), "distinct"),)
declare("max_pool2d", max_pool2d, namespace=_F, method=False,
        nodes=(MaxPool2DWithIndicesBackward0, MaxPool2DWithIndicesBackwardBackward0),
        samples=(Sample(_I, (2,)), Sample(_I, (3, 2, 1)), Sample(_I, ((2, 3),), {"ceil_mode": True}),
                 Sample(_I, (2,), {"dilation": 2, "stride": 1}), Sample((((3, 6, 5), "distinct"),), (2,)),
                 Sample(_I, (2,), {"return_indices": True}), Sample(_I, (3, 2, 1), {"ceil_mode": True})))
declare("max_pool1d", max_pool1d, namespace=_F, method=False,
        samples=(Sample((((2, 3, 7), "distinct"),), (2,)), Sample((((2, 3, 7), "distinct"),), (3, 2, 1))))
declare("avg_pool2d", avg_pool2d, namespace=_F, method=False, nodes=(AvgPool2DBackward0, AvgPool2DBackwardBackward0),
        samples=(Sample((((2, 3, 6, 5), "real"),), (2,)), Sample((((2, 3, 6, 5), "real"),), (3, 2, 1)),
                 Sample((((2, 3, 5, 5), "real"),), (3, 2, 1), {"ceil_mode": True}),
                 Sample((((2, 3, 5, 5), "real"),), (3, 2, 1), {"ceil_mode": True, "count_include_pad": False}),
                 Sample((((1, 2, 4, 6), "real"),), ((2, 3),), {"divisor_override": 4}),
                 Sample((((3, 6, 5), "real"),), (2,))))
declare("avg_pool1d", avg_pool1d, namespace=_F, method=False,
        samples=(Sample((((2, 3, 7), "real"),), (3,)), Sample((((2, 3, 7), "real"),), (3, 2, 1))))
declare("adaptive_avg_pool2d", adaptive_avg_pool2d, namespace=_F, method=False, nodes=(AdaptiveAvgPool2DBackward0,),
        samples=(Sample((((2, 3, 6, 5), "real"),), ((2, 3),)), Sample((((2, 3, 6, 5), "real"),), (1,)),
                 Sample((((2, 3, 7, 5), "real"),), ((3, None),)), Sample((((3, 5, 5), "real"),), (4,))))
declare("adaptive_avg_pool2d_backward", adaptive_avg_pool2d_backward, method=False, public=False,
        nodes=(AdaptiveAvgPool2DBackwardBackward0,))
declare("adaptive_avg_pool1d", adaptive_avg_pool1d, namespace=_F, method=False,
        samples=(Sample((((2, 3, 7), "real"),), (3,)), Sample((((2, 3, 7), "real"),), (1,))))


# -- interpolate (mode="nearest"): each output element copies the input element it falls on ---------------------
def _nearest_index(n_in: int, n_out: int, scale) -> np.ndarray:
    """PyTorch's nearest source index: floor(dst * s) in float32, s = 1 / scale_factor when one was given, else
    n_in / n_out; at most n_in - 1."""
    s = np.float32(1.0 / scale if scale is not None else n_in / n_out)
    return np.minimum(np.floor(np.arange(n_out, dtype=np.float32) * s).astype(np.int64), n_in - 1)


def _nearest_grad(grad, self_sym_sizes: tuple, output_size: tuple, scales: tuple):
    """The copies' gradients summed back onto the input elements they came from, as PyTorch's kernel: from +0, in
    the order of the outputs (float16 in float32); a scatter_add, not a matmul (whose 0 * inf made every element
    of a row NaN when one output's gradient was infinite)."""
    flat = np.zeros((), np.int64)  # each output position's input position, in the flattened spatial dims
    for n_in, n_out, s in zip(self_sym_sizes[2:], output_size, scales):
        flat = flat[..., None] * n_in + _nearest_index(n_in, n_out, s)
    rows, n_in = int(np.prod(self_sym_sizes[:2])), int(np.prod(self_sym_sizes[2:]))
    index = np.ascontiguousarray(np.broadcast_to(flat.reshape(1, -1), (rows, flat.size)))
    g = xp.reshape(grad, (rows, flat.size))
    if xp.is_t(g):  # (under create_graph: recorded ops)
        wide = g.float() if g.dtype == _dtypes.float16 else g
        out = xp.scatter_add_zeros(wide, 1, index, (rows, n_in))
        return xp.reshape(out if wide is g else out.half(), tuple(self_sym_sizes))
    out = np.zeros((rows, n_in), np.float32 if g.dtype == np.float16 else g.dtype)
    xp.scatter_add_into(out, 1, index, g)
    return out.astype(g.dtype, copy=False).reshape(self_sym_sizes)


UpsampleNearest1DBackward0 = rule(
    "UpsampleNearest1DBackward0", "self", saves="output_size scales self_sym_sizes", forward="linear",
    text="grad_self[i] = Σ grad over the outputs that copied input i",
    self=lambda grad, output_size, scales, self_sym_sizes: _nearest_grad(grad, self_sym_sizes, output_size, (scales,)))
UpsampleNearest2DBackward0 = rule(
    "UpsampleNearest2DBackward0", "self", saves="output_size scales_h scales_w self_sym_sizes", forward="linear",
    text="grad_self[i, j] = Σ grad over the outputs that copied input (i, j)",
    self=lambda grad, output_size, scales_h, scales_w, self_sym_sizes:
    _nearest_grad(grad, self_sym_sizes, output_size, (scales_h, scales_w)))


def _interpolate_sizes(x: np.ndarray, size, scale_factor, recompute_scale_factor) -> tuple:
    """(output sizes, scales) of interpolate, with the checks and texts of PyTorch's functional (ValueError,
    TypeError) and of its upsample kernel (sizes greater than 0)."""
    spatial, given = x.ndim - 2, list(x.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (tuple, list)):
            if len(size) != spatial:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input with "
                                 f"spatial dimensions of {given} and output size of {size}. Please provide input "
                                 "tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
            if not all(isinstance(n, (int, np.integer)) for n in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, "
                                f"int], but got size with types {[type(n) for n in size]}")
        elif not isinstance(size, (int, np.integer)):
            raise TypeError(f"upsample_nearest{spatial}d() received an invalid combination of arguments - got (Tensor, "
                            "list, NoneType), but expected one of:")
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        out, scales = (tuple(size) if isinstance(size, (tuple, list)) else (size,) * spatial), (None,) * spatial
    elif scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    else:
        if isinstance(scale_factor, (tuple, list)) and len(scale_factor) != spatial:
            raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {given} and scale_factor of shape {scale_factor}. Please "
                             "provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in "
                             "(s1, s2, ...,sK) format.")
        scales = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * spatial
        out = tuple(int(np.floor(n * s)) for n, s in zip(x.shape[2:], scales))
        scales = tuple(float(s) for s in scales) if not recompute_scale_factor else (None,) * spatial
    if min(given + list(out)) <= 0:
        names = ("W",) if spatial == 1 else ("H", "W")
        pair = ", ".join(f"{k}: {n}" for k, n in zip(names, given)), ", ".join(f"{k}: {n}" for k, n in zip(names, out))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({pair[0]}) "
                           f"{'and ' if spatial == 1 else ''}output ({pair[1]})")
    if x.size == 0 and 0 in x.shape[1:]:
        raise RuntimeError(f"Non-empty {x.ndim}D data tensor expected but got a tensor with sizes {list(x.shape)}")
    return out, scales


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                recompute_scale_factor=None, antialias: bool = False) -> Tensor:
    """Resize the spatial dims of (N, C, L) or (N, C, H, W) inputs; minigrad has mode="nearest"."""
    x = input._data
    spatial = x.ndim - 2
    if mode != "nearest" or spatial not in (1, 2):
        raise NotImplementedError(f"minigrad does not implement interpolate(mode={mode!r}) for {x.ndim}-D input "
                                  "(it has mode='nearest' for 3-D and 4-D inputs)")
    if align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    out, scales = _interpolate_sizes(x, size, scale_factor, recompute_scale_factor)
    if antialias:
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    res = x
    for k, (n_in, n_out, s) in enumerate(zip(x.shape[2:], out, scales)):
        res = np.take(res, _nearest_index(n_in, n_out, s), axis=2 + k)
    res = np.ascontiguousarray(res)
    if not (input._requires_grad and GRAD.mode > 0):
        return make(res)
    if spatial == 1:
        return record(UpsampleNearest1DBackward0, res, (input,), output_size=out, scales=scales[0],
                      self_sym_sizes=x.shape)
    return record(UpsampleNearest2DBackward0, res, (input,), output_size=out, scales_h=scales[0], scales_w=scales[1],
                  self_sym_sizes=x.shape)


declare("interpolate", interpolate, namespace=_F, method=False,
        nodes=(UpsampleNearest1DBackward0, UpsampleNearest2DBackward0),
        samples=(Sample((((1, 2, 3, 4), "real"),), kwargs={"scale_factor": 2}),
                 Sample((((2, 1, 3, 4), "real"),), kwargs={"size": (5, 7)}),
                 Sample((((1, 2, 5), "real"),), kwargs={"scale_factor": 1.5})))


# -- pixel_shuffle: channels into space (super-resolution's upsampling) --------------------------------------------
def _shuffle(x, r: int, unshuffle: bool):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r), or back with `unshuffle`: reshapes and one permute, on arrays or
    Tensors (the backward of one is the other)."""
    *lead, c, h, w = x.shape
    n = len(lead)
    if unshuffle:
        y = xp.reshape(x, (*lead, c, h // r, r, w // r, r))
        y = xp.permute(y, (*range(n), n, n + 2, n + 4, n + 1, n + 3))
        return xp.reshape(y, (*lead, c * r * r, h // r, w // r))
    y = xp.reshape(x, (*lead, c // (r * r), r, r, h, w))
    y = xp.permute(y, (*range(n), n, n + 3, n + 1, n + 4, n + 2))
    return xp.reshape(y, (*lead, c // (r * r), h * r, w * r))


PixelShuffleBackward0 = rule("PixelShuffleBackward0", "self", saves="upscale_factor", forward="linear",
                             text="grad_self = pixel_unshuffle(grad): the gradient's pixels back into channels",
                             self=lambda grad, upscale_factor: _shuffle(grad, upscale_factor, True))


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearrange (*, C*r², H, W) into (*, C, H*r, W*r): each group of r² channels becomes an r x r block."""
    x, r = input._data, upscale_factor
    if x.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with {x.ndim} "
                           "dimension(s)")
    if x.shape[-3] % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={x.shape[-3]} is not divisible by {r * r}")
    res = np.ascontiguousarray(_shuffle(x, r, False))
    if input._requires_grad and GRAD.mode > 0:
        return record(PixelShuffleBackward0, res, (input,), upscale_factor=r)
    return make(res)


declare("pixel_shuffle", pixel_shuffle, method=False, nodes=(PixelShuffleBackward0,),
        samples=(Sample((((1, 8, 2, 3), "real"),), (2,)), Sample((((9, 2, 2), "real"),), (3,))))
