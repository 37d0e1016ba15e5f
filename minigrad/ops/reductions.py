"""Reductions: sum and mean over all elements or over `dim` (int or tuple), with `keepdim`."""

from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .. import _dtypes
from .._layout import c_order
from .._stacklevel import user_stacklevel
from .._state import FUNC_BACKWARD, FUNC_FORWARD, GRAD
from .._tensor import Tensor, _wrap_dim, make
from . import xp
from .arithmetic import NotImplemented1, _not_implemented
from .fused import fused_op
from .operands import kind_name
from .recording import SavedArg, record, rule
from .registry import Sample, declare
from .selection import maximum, minimum
from .views import named_varargs, view
from .xp import expandable, summed_dims

# == derivative rows, and the helpers their formulas use ======================================================
# -- reductions -------------------------------------------------------------------------------------
SumBackward0 = rule("SumBackward0", "self", saves="self_sym_sizes",
                    forward="linear", text="grad_self = grad expanded to self's shape (every element gets grad)",
                    self=lambda grad, self_sym_sizes: xp.expand(grad, self_sym_sizes))
SumBackward1 = rule("SumBackward1", "self", saves="dim keepdim self_sym_sizes",
                    forward="linear", text="grad_self = grad expanded back over the summed dims",
                    self=lambda grad, dim, keepdim, self_sym_sizes:
                    xp.reduced_expand(grad, self_sym_sizes, dim, keepdim))
MeanBackward0 = rule("MeanBackward0", "self", saves="self_sym_numel self_sym_sizes",
                     forward="linear", text="grad_self = grad / numel, expanded to self's shape",
                     self=lambda grad, self_sym_numel, self_sym_sizes:
                     _mean_spread(grad, self_sym_sizes, self_sym_numel))
MeanBackward1 = rule("MeanBackward1", "self", saves="dim keepdim self_sym_numel self_sym_sizes",
                     forward="linear", text="grad_self = grad / (count over dim), expanded back over dim",
                     self=lambda grad, dim, keepdim, self_sym_numel, self_sym_sizes:
                     xp.reduced_expand(grad, self_sym_sizes, dim, keepdim) / _reduced_count(self_sym_sizes, dim))


def _mean_spread(grad, sizes: tuple, n: int):
    """grad / n over `sizes`. PyTorch expands, then divides by the number (DivBackward1 after ExpandBackward0); on
    arrays dividing the one value first gives the same numbers for less work."""
    if xp.is_t(grad):
        return xp.expand(grad, sizes) / n
    return xp.expand(grad / n, sizes)


def _reduced_count(sizes: tuple, dims: tuple) -> int:
    n = 1
    for d in dims:
        n *= sizes[d % len(sizes)] if sizes else 1
    return n



# -- more reductions -------------------------------------------------------------------------------------
ProdBackward0 = rule("ProdBackward0", "self", saves="self result",
                     forward=lambda self_t, self, result: _prod_forward(self_t, self, result, None, False),
                     text="grad_self = grad * result / self  (the product of the other elements)",
                     self=lambda grad, self, result: _prod_grad(grad, self, result, None, False))
ProdBackward1 = rule("ProdBackward1", "self", saves="self result dim keepdim",
                     forward=lambda self_t, self, result, dim, keepdim:
                     _prod_forward(self_t, self, result, dim, keepdim),
                     text="grad_self = grad * (product of the other elements along dim)",
                     self=lambda grad, self, result, dim, keepdim: _prod_grad(grad, self, result, dim, keepdim))
MaxBackward1 = rule("MaxBackward1", "self", saves="self result",
                    forward=lambda self_t, self, result: _evenly_read(self_t, self, result),
                    text="grad_self = grad at the max element(s), 0 elsewhere (ties share it)",
                    self=lambda grad, self, result: _evenly(grad, self, result))
MinBackward1 = rule("MinBackward1", "self", saves="self result",
                    forward=lambda self_t, self, result: _evenly_read(self_t, self, result),
                    text="grad_self = grad at the min element(s), 0 elsewhere (ties share it)",
                    self=lambda grad, self, result: _evenly(grad, self, result))
MaxBackward0 = rule("MaxBackward0", "self", saves="dim keepdim indices self_sym_sizes", tensor_args="indices",
                    forward=lambda self_t, dim, keepdim, indices: _gathered(self_t, dim, keepdim, indices),
                    text="grad_self = grad scattered to the argmax along dim, 0 elsewhere",
                    self=lambda grad, dim, keepdim, indices, self_sym_sizes:
                    _select_back(grad, dim, keepdim, indices, self_sym_sizes))
MinBackward0 = rule("MinBackward0", "self", saves="dim keepdim indices self_sym_sizes", tensor_args="indices",
                    forward=lambda self_t, dim, keepdim, indices: _gathered(self_t, dim, keepdim, indices),
                    text="grad_self = grad scattered to the argmin along dim, 0 elsewhere",
                    self=lambda grad, dim, keepdim, indices, self_sym_sizes:
                    _select_back(grad, dim, keepdim, indices, self_sym_sizes))
AmaxBackward0 = rule("AmaxBackward0", "self", saves="self result dim keepdim",
                     forward=lambda self_t, self, result, dim, keepdim:
                     _amax_tangent(self_t, self, result, dim, keepdim),
                     text="grad_self = grad split evenly among the max elements along dim",
                     self=lambda grad, self, result, dim, keepdim: _amax_grad(grad, self, result, dim, keepdim))
AminBackward0 = rule("AminBackward0", "self", saves="self result dim keepdim",
                     forward=lambda self_t, self, result, dim, keepdim:
                     _amax_tangent(self_t, self, result, dim, keepdim),
                     text="grad_self = grad split evenly among the min elements along dim",
                     self=lambda grad, self, result, dim, keepdim: _amax_grad(grad, self, result, dim, keepdim))
VarBackward0 = rule("VarBackward0", "self", saves="self correction dim keepdim",
                    forward="reduction", text="grad_self = grad * 2 * (self - mean) / (N - correction)",
                    self=lambda grad, self, correction, dim, keepdim: _var_grad(grad, self, correction, dim, keepdim))
StdBackward0 = rule("StdBackward0", "self", saves="self result correction dim keepdim",
                    forward=lambda self_t, self, result, correction, dim, keepdim:
                    _safe_div(_var_tangent(self_t, self, correction, dim, keepdim), result * 2.0, xp.data(result) == 0),
                    text="grad_self = grad * (self - mean) / ((N - correction) * result)",
                    self=lambda grad, self, result, correction, dim, keepdim:
                    _var_grad(_safe_div(grad, result * 2.0, xp.data(result) == 0), self, correction, dim,
                              keepdim))
LinalgVectorNormBackward0 = rule("LinalgVectorNormBackward0", "self", saves="self result ord dim keepdim",
                                 forward="reduction", text="grad_self = grad * self * |self|^(ord-2) / result^(ord-1)  "
                                      "(ord 2: self / result)",
                                 self=lambda grad, self, result, ord, dim, keepdim:
                                 _norm_grad(grad, self, result, ord, dim, keepdim))
LogsumexpBackward0 = rule("LogsumexpBackward0", "self", saves="self result dim keepdim",
                          forward=lambda self_t, self, dim, keepdim: _logsumexp_tangent(self_t, self, dim, keepdim),
                          text="grad_self = grad * exp(self - result)",
                          self=lambda grad, self, result, dim, keepdim:
                          _keep(grad, dim, keepdim, self) * xp.exp(self - _keep(result, dim, keepdim, self)))
# PyTorch's fused backward ops of softmax and log_softmax (`_softmax_backward_data`, ...): what their rows call,
# so that a create_graph backward records SoftmaxBackwardDataBackward0 / LogSoftmaxBackwardDataBackward0
def _softmax_backward_data(grad_output, output, dim):
    return output * (grad_output - xp.sum_keep(grad_output * output, dim))


def _log_softmax_backward_data(grad_output, output, dim):
    return grad_output - xp.exp(output) * _lastdim_sum(grad_output, dim)


def _lastdim_sum(g, dim: int):
    """Σ g over `dim`; over an array's last dim as PyTorch's last-dim kernel sums, from the first element (not from
    +0.), so a row of -0.s sums to -0. (and `g - exp(y)·Σ` is then +0. there)."""
    s = xp.sum_keep(g, dim)
    if xp.is_t(g) or not g.size or (g.ndim and dim % g.ndim != g.ndim - 1):
        return s
    negative = np.signbit(g).all(axis=dim, keepdims=True) if g.ndim else np.signbit(g)
    return np.where((s == 0) & negative, -0.0, s).astype(s.dtype, copy=False)


softmax_backward_data = fused_op("softmax_backward_data", _softmax_backward_data, rule(
    "SoftmaxBackwardDataBackward0", "grad_output output", saves="grad_output output dim",
    text="grad_grad_output = softmax_backward(grad), grad_output = grad * grad_output - sum(output * grad_output) * "
         "grad - grad_output * sum(output * grad)",
    forward=lambda grad_output_t, output_t, grad_output, output, dim:  # d[y (g - Σ g y)], the product rule
    softmax_backward_data(grad_output_t, output, dim)
    + output_t * (grad_output - xp.sum_keep(grad_output * output, dim))
    - output * xp.sum_keep(grad_output * output_t, dim),
    grad_output=lambda grad, output, dim: softmax_backward_data(grad, output, dim),
    output=lambda grad, grad_output, output, dim:
    grad_output * grad - xp.sum_keep(output * grad_output, dim) * grad - grad_output * xp.sum_keep(output * grad, dim)),
    ("dim",))
log_softmax_backward_data = fused_op("log_softmax_backward_data", _log_softmax_backward_data, rule(
    "LogSoftmaxBackwardDataBackward0", "grad_output output", saves="grad_output output dim",
    text="grad_grad_output = grad - sum(grad * exp(output)), grad_output = -grad * exp(output) * sum(grad_output)",
    forward=lambda grad_output_t, output_t, grad_output, output, dim:  # d[g - exp(y) Σ g]
    log_softmax_backward_data(grad_output_t, output, dim) - xp.exp(output) * output_t * xp.sum_keep(grad_output, dim),
    grad_output=lambda grad, output, dim: grad - xp.sum_keep(grad * xp.exp(output), dim),
    output=lambda grad, grad_output, output, dim: -xp.sum_keep(grad_output, dim) * xp.exp(output) * grad),
    ("dim",))

SoftmaxBackward0 = rule("SoftmaxBackward0", "self", saves="result dim",
                        text="grad_self = result * (grad - sum(grad * result, dim))",
                        forward=lambda self_t, result, dim: result * (self_t - xp.sum_keep(self_t * result, dim)),
                        self=lambda grad, result, dim: softmax_backward_data(grad, result, dim))
LogSoftmaxBackward0 = rule("LogSoftmaxBackward0", "self", saves="result dim",
                           text="grad_self = grad - exp(result) * sum(grad, dim)",
                           forward=lambda self_t, result, dim: self_t - xp.sum_keep(self_t * xp.exp(result), dim),
                           self=lambda grad, result, dim: log_softmax_backward_data(grad, result, dim))
CumsumBackward0 = rule("CumsumBackward0", "self", saves="dim",
                       forward="linear", text="grad_self = reversed cumulative sum of grad along dim",
                       self=lambda grad, dim: xp.reverse_cumsum(grad, dim))
CumprodBackward0 = rule("CumprodBackward0", "self", saves="self dim result",
                        text="grad_self = reversed cumsum(grad * result, dim) / self  (with a zero: products of "
                             "the other elements, no division)",
                        forward=lambda self_t, self, dim, result: _cumprod_tangent(self_t, self, dim, result),
                        self=lambda grad, self, dim, result: _cumprod_grad(grad, self, dim, result))


def _cumprod_tangent(self_t, self, dim, result):
    """PyTorch's cumprod_jvp: result * cumsum(self_t / self) where no zero came before; from a line's first zero
    on, the product rule leaves only the term of that zero: the cumprod of self with the zero replaced by its
    tangent (a 0-d self: self_t there, and self_t / self * result elsewhere, nan at inf)."""
    s = xp.data(self)
    zeros = s == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if s.ndim == 0:
            return xp.where(zeros, self_t, self_t / self * result)
        tangent = xp.cumsum(self_t / self, dim) * result
    if not zeros.any():
        return tangent
    first = zeros & (np.cumsum(zeros, dim) == 1)
    return xp.where(np.cumsum(first, dim) > 0, xp.cumprod(xp.where(first, self_t, self), dim), tangent)


def _keep(g, dim, keepdim, like):
    """Put the reduced dims back (size 1) so `g` broadcasts against the input."""
    nd = len(like.shape)
    if dim is None:  # a 0-d value broadcasts as it is (PyTorch's formulas add no view)
        return g
    dims = tuple(d % nd for d in ((dim,) if isinstance(dim, int) else dim)) if nd else ()
    return g if keepdim or not dims else xp.unsqueeze_dims(g, dims)


def _sizes(x):
    return tuple(x.shape)


def _evenly(grad, self, result):
    """Gradient of a full max/min: shared equally between all elements equal to the result."""
    import numpy as np

    s, r = xp.data(self), xp.data(result)
    mask = np.isnan(s) if np.isnan(r) else (s == r)
    if FUNC_BACKWARD[0] > 0:  # torch.func: PyTorch's branch for wrapped tensors, mask * (grad / count): -0. where
        count = np.asarray(mask.sum(), s.dtype)  # the share is negative, NaN where it is not finite
        return (make(mask) if xp.is_t(grad) else mask) * (grad / (make(count) if xp.is_t(grad) else count))
    if xp.is_t(grad):  # as PyTorch: zeros.masked_fill_(mask, grad / mask.sum()), the count an int64 tensor (so
        share = grad / make(np.asarray(mask.sum()))  # DivBackward0 with no edge to it, then MaskedFillBackward1)
        return make(np.zeros(s.shape, s.dtype)).masked_fill_(make(mask), share)
    share = grad / int(mask.sum())
    return np.where(mask, share, np.zeros((), s.dtype))


def _evenly_read(self_t, self, result):
    """PyTorch's evenly_read_jvp, sum(mask * (self_t / count)) with mask = (self == result): a NaN result equals
    no element, so its tangent is nan (the backward rule gives the NaNs the gradient); so is an inf tangent's."""
    mask = xp.data(self) == xp.data(result)
    share = self_t / int(mask.sum())
    return ((make(mask) if xp.is_t(share) else mask) * share).sum()


def _gathered(self_t, dim, keepdim, indices):
    """PyTorch's gather_with_keepdimed_indices for max(dim)/min(dim): the tangent at the selected index (the
    other elements' tangents, an inf or nan among them, do not reach it)."""
    import numpy as np

    if not len(self_t.shape):
        return self_t
    dim = dim % len(self_t.shape)
    out = xp.gather(self_t, dim, indices if keepdim else np.expand_dims(indices, dim))
    return out if keepdim else xp.squeeze_dims(out, (dim,))


def _amax_tangent(self_t, self, result, dim, keepdim):
    """PyTorch's amaxamin_jvp: where(mask, self_t, 0).sum(dim) / mask.sum(dim), the mean of the tangents at the
    elements equal to the result (a NaN result: 0 / 0; the others' tangents do not reach it)."""
    import numpy as np

    s = xp.data(self)
    mask = s == _restore_reduced(xp.data(result), dim, keepdim)
    axes = tuple(d % s.ndim for d in dim) if s.ndim else None
    picked = xp.where(mask, self_t, np.zeros((), s.dtype))
    count = mask.sum(axis=axes, keepdims=keepdim)
    if xp.is_t(picked):
        return picked.sum(axes, keepdim=keepdim) / make(count)
    return picked.sum(axis=axes, keepdims=keepdim) / count


def _select_back(grad, dim, keepdim, indices, sizes):
    """max(dim)/min(dim): PyTorch's value_selecting_reduction_backward, zeros with the gradient scattered to the
    selected index (the other elements get 0, even next to an inf)."""
    import numpy as np

    if not sizes:  # a 0-d input: the only element was selected
        return grad
    dim = dim % len(sizes)
    idx = indices if keepdim else np.expand_dims(indices, dim)
    g = grad if keepdim else xp.unsqueeze_dims(grad, (dim,))
    return xp.scatter(xp.zeros(sizes, g), dim, idx, g)


def _amax_grad(grad, self, result, dim, keepdim):
    """PyTorch's scale_grad_by_count: the gradient, reshaped back to the reduced dims (restore_reduced_dims),
    divided by how many elements equal the result, kept where they do (grad / count * mask)."""
    s = xp.data(self)
    mask = s == _restore_reduced(xp.data(result), dim, keepdim)
    count = mask.sum(axis=tuple(d % s.ndim for d in dim) if s.ndim else None, keepdims=True).astype(s.dtype)
    return _restore_reduced(grad, dim, keepdim) / count * mask


def _restore_reduced(x, dims: tuple, keepdim: bool):
    """PyTorch's restore_reduced_dims: `x` reshaped with size-1 dims where `dims` were reduced."""
    if keepdim:
        return x
    n = len(x.shape) + len(dims)
    rest = iter(x.shape)
    reduced = {d % n for d in dims}
    return xp.reshape(x, tuple(1 if i in reduced else next(rest) for i in range(n)))


def _var_grad(grad, self, correction, dim, keepdim):
    import numpy as np

    s = xp.data(self)
    dims = tuple(range(s.ndim)) if dim is None else tuple(d % builtins.max(s.ndim, 1) for d in dim)
    n = int(np.prod([s.shape[d] for d in dims])) if s.ndim else 1
    if (dim is None or s.ndim == 0) and n - correction <= 0:
        # PyTorch's var_backward over everything with no degrees of freedom: 2 / dof is taken as inf, which
        # gives nan where self equals the mean (inf * 0) and inf elsewhere
        with np.errstate(invalid="ignore"):
            return grad * np.where(s == _quiet_mean(s, None, False), np.nan, np.inf).astype(s.dtype)
    whole = dim is None or s.ndim == 0  # PyTorch's var_backward: the mean over everything (a 0-d self too)
    if xp.is_t(self):
        centered = self - (self.mean() if whole else self.mean(dims, keepdim=True))
    else:
        centered = self - _quiet_mean(s, dims, True)
    scale = 2.0 / (n - correction) if n != correction else math.inf  # 2 / 0 is inf in PyTorch's formula
    # PyTorch puts the reduced dims back only for a self of 2 dims or more (a 1-d self's 0-d grad broadcasts)
    back = None if whole or s.ndim <= 1 else dims
    return xp.mul_scalar(_keep(grad, back, keepdim, s), scale) * centered  # (a user's number)


def _var_tangent(self_t, self, correction, dim, keepdim):
    """PyTorch's var_jvp: Σ over each group of 2 (self - mean) / (N - correction) · self_t (0 over no elements)."""
    import numpy as np

    ones = np.ones(np.shape(_group_sum(xp.data(self), dim, keepdim)), xp.data(self).dtype)
    return _group_sum(_var_grad(ones, self, correction, dim, keepdim) * self_t, dim, keepdim)


def _logsumexp_tangent(self_t, self, dim, keepdim):
    """PyTorch's logsumexp_jvp: Σ exp(self - amax) · self_t / Σ exp(self - amax) over each group (the shift
    cancels, so it is a constant here; over no elements: 0 / 0, nan)."""
    import numpy as np

    s = xp.data(self)
    with np.errstate(invalid="ignore"):
        shift = np.amax(s, axis=_axes(dim, s.ndim), keepdims=True) if s.size else np.zeros((), s.dtype)
    e = xp.exp(self - (make(shift) if xp.is_t(self) else shift))
    return _group_sum(e * self_t, dim, keepdim) / _group_sum(e, dim, keepdim)


def _axes(dim, ndim: int) -> tuple:
    """The reduced dims, non-negative (None: all of them)."""
    if dim is None:
        return tuple(range(ndim))
    return tuple(d % builtins.max(ndim, 1) for d in ((dim,) if isinstance(dim, int) else dim)) if ndim else ()


def _group_sum(x, dim, keepdim: bool):
    """x summed over the reduced dims (a Tensor or an array)."""
    axes = _axes(dim, len(x.shape))
    if xp.is_t(x):
        return x.sum(axes, keepdim=bool(keepdim)) if axes else x
    return x.sum(axis=axes, keepdims=bool(keepdim))


def _quiet_mean(s, axis, keepdims: bool):
    """NumPy's mean without its "Mean of empty slice" warning (nan over nothing, as PyTorch gives silently)."""
    import numpy as np

    n = s.size if axis is None else int(np.prod([s.shape[d] for d in axis]))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.true_divide(s.sum(axis=axis, keepdims=keepdims), n, dtype=s.dtype)


def _safe_div(a, b, zero_mask):
    """a / b, with 0 where b is 0 (PyTorch's std and norm at 0).

    Written as PyTorch writes it, `(a / b).masked_fill_(b == 0, 0)`: the division itself is not
    protected, so the second derivative at 0 is nan exactly where PyTorch's is.
    """
    import numpy as np

    if xp.is_t(a) or xp.is_t(b):
        return xp.masked_fill(a / b, zero_mask, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(zero_mask, 0.0, a / b).astype(np.result_type(a, b))


def _norm_grad(grad, self, result, ord, dim, keepdim):
    """PyTorch's norm_backward, case by case (p = 0 gives no gradient at all: `.grad` stays None)."""
    import numpy as np

    s = xp.data(self)
    g = _keep(grad, dim, keepdim, s)
    r = _keep(result, dim, keepdim, s)
    if ord == 0:
        return None
    if ord == 1:
        return xp.sgn(self) * g
    if ord == 2:
        return g * _safe_div(self, r, xp.data(r) == 0)
    if ord in (float("inf"), float("-inf")):
        absx = np.abs(s)
        mask = (absx == xp.data(r)) | np.isnan(absx)
        count = mask.sum(axis=None if dim is None else tuple(d % s.ndim for d in dim), keepdims=True)
        sign = xp.sgn(self)  # recorded under create_graph (SgnBackward0), as PyTorch's self.sgn()
        return sign * ((g / count) * mask)
    sign = xp.sgn(self)  # the graphs a create_graph backward records are PyTorch's: sgn, masked_fill
    if ord < 1:  # |self|^(p-1) is inf at 0: those elements get 0
        scaled = sign * xp.masked_fill(xp.abs(self) ** (ord - 1), s == 0, 0.0)
        return scaled * g * r ** (1 - ord)
    scale = xp.masked_fill(g / r ** (ord - 1), xp.data(r) == 0, 0.0)
    if ord < 2:
        return sign * xp.abs(self) ** (ord - 1) * scale
    return self * xp.abs(self) ** (ord - 2) * scale


def _prod_forward(self_t, self, result, dim, keepdim):
    """PyTorch's formula: prod_backward on a gradient of ones, times the tangent, summed over each product's
    elements. Under torch.func prod_backward sees wrapped tensors and always takes the product of the other elements
    (no division: an infinite input gives an infinite tangent, not inf / inf = NaN); plain forward AD divides."""
    ones = xp.zeros_like(result) + 1
    term = _prod_grad(ones, self, result, dim, keepdim, FUNC_FORWARD[0] > 0) * self_t
    if dim is None:
        return term.sum()
    return term.sum(dim, keepdim=keepdim) if xp.is_t(term) else term.sum(axis=dim, keepdims=keepdim)


def _prod_grad(grad, self, result, dim, keepdim, safe: bool = False):
    """PyTorch's prod_backward: grad * result / self when the input has no zero (and not `safe`: a wrapped tensor);
    otherwise the product of the other elements (`_prod_safe_zeros`), over the flattened input when no dim was
    given. The plain backward of a full product with two zeros or more is all zeros at once; under create_graph
    PyTorch still builds the products, so the graph recorded, and every higher derivative, is PyTorch's."""
    s = xp.data(self)
    if s.ndim == 0:  # the product of one element: the other elements' product is 1
        return grad
    if dim is not None and not keepdim:  # put the reduced dim back, as PyTorch's grad.unsqueeze(dim)
        grad, result = _keep(grad, dim, False, s), _keep(result, dim, False, s)
    if not safe and not (s == 0).any():
        return grad * (result / self)
    if dim is not None:
        return _prod_safe_zeros(grad, self, dim % s.ndim)
    if not xp.is_t(self):
        if np.count_nonzero(s == 0) > 1:  # every product of the others has a zero
            return np.zeros_like(s)
        return np.reshape(_prod_safe_zeros(grad, s.reshape(-1), 0), s.shape)
    return _prod_safe_zeros(grad, self.contiguous().view(-1), 0).view(s.shape)  # PyTorch's view(-1), view_as


def _prod_safe_zeros(grad, inp, dim: int):
    """PyTorch's prod_safe_zeros_backward: grad times the product of the other elements along `dim`, made of the
    exclusive cumulative products from the front and from the back, with no division (exact with zeros):
    [a, b, c] gives [1, a, ab] * [bc, c, 1]."""
    shape = tuple(inp.shape)
    n = shape[dim]
    if n == 1:
        return grad
    ones = np.ones(shape[:dim] + (1,) + shape[dim + 1:], xp.data(grad).dtype)
    front = xp.cumprod(xp.cat([ones, xp.narrow(inp, dim, 0, n - 1)], dim), dim)
    back = xp.flip(xp.cumprod(xp.cat([ones, xp.flip(xp.narrow(inp, dim, 1, n - 1), dim)], dim), dim), dim)
    return grad * (front * back)


def _cumprod_grad(grad, self, dim, result):
    """PyTorch's cumprod_backward. Without zeros: the reversed cumulative sum of result * grad, divided by self.
    A zero breaks the division; the plain backward then uses `_cumprod_grad_zeros`, and a create_graph backward
    runs PyTorch's O(n²) loop (`_cumprod_grad_graph`), so that the graph it records is PyTorch's."""
    s = xp.data(self)
    if xp.data(grad).dtype != s.dtype:  # PyTorch's grad.to(self.scalar_type()): cumprod(x, dtype=...)
        grad = grad.to(_dtypes.FROM_NP[s.dtype]) if xp.is_t(grad) else grad.astype(s.dtype)
    if s.size <= 1 or s.shape[dim] == 1:
        return grad
    if not (s == 0).any():
        return xp.reverse_cumsum(result * grad, dim) / self
    if xp.is_t(self):
        return _cumprod_grad_graph(grad, self, dim)
    return _cumprod_grad_zeros(grad, s, dim, result)


def _cumprod_grad_zeros(grad, x, dim: int, result):
    """cumprod's gradient on arrays when `x` has zeros, in O(n) (PyTorch's masked formula). Along `dim`, with z1
    and z2 the first two zeros (z2 the end if there is one): before z1, the reversed cumulative sum of
    result * grad up to z1, divided by x; at z1, prod(x[:z1]) * sum of grad[j] * prod(x[z1+1 .. j]) for j in
    [z1, z2); after z1, 0 (every product through such an element also goes through x[z1] = 0)."""
    zeros_seen = np.cumsum(x == 0, axis=dim)
    before = zeros_seen == 0
    out = np.zeros(x.shape, np.result_type(grad, x))
    np.divide(xp.reverse_cumsum(np.where(before, result * grad, 0), dim), x, out=out, where=before)
    run = zeros_seen == 1  # [z1, z2)
    first = run & (x == 0)
    after_first = np.cumprod(np.where(run & (x != 0), x, 1), axis=dim)  # prod(x[z1+1 .. j]) for j in [z1, z2)
    at_first = (after_first * np.where(run, grad, 0)).sum(axis=dim, keepdims=True)
    z1 = np.argmax(first, axis=dim, keepdims=True)
    until_first = np.where(z1 > 0, np.take_along_axis(result, np.maximum(z1 - 1, 0), axis=dim), 1)  # prod(x[:z1])
    return np.where(first, until_first * at_first, out).astype(out.dtype, copy=False)


def _cumprod_grad_graph(grad, x, dim: int):
    """cumprod's gradient with zeros under create_graph, as PyTorch computes it there: position k gets
    sum over j >= k of grad[j] * prod(x[i] for i <= j, i != k), the product of x before k times the cumulative
    product after k; one slice, prod, cumprod, cat and CopySlices per position (O(n²), as PyTorch's)."""
    n = x.shape[dim]
    dtype = grad._data.dtype
    out = make(np.zeros(x.shape, dtype))
    ones = make(np.ones(tuple(x.shape[:dim]) + (1,) + tuple(x.shape[dim + 1:]), dtype))
    for k in range(n):
        if k == 0:
            omitted = xp.cat([ones, x.narrow(dim, 1, n - 1).cumprod(dim)], dim)
        else:
            until_k = x.narrow(dim, 0, k).prod(dim, keepdim=True)
            if k == n - 1:
                omitted = until_k
            else:
                after_k = x.narrow(dim, k + 1, n - k - 1).cumprod(dim)
                omitted = xp.cat([until_k, until_k.expand_as(after_k) * after_k], dim)
        out[(slice(None),) * dim + (k,)] = (grad.narrow(dim, k, n - k) * omitted).sum(dim)
    return out


def norm_dims(dim, ndim: int) -> tuple:
    """`dim` as a tuple of non-negative axes; accepts an int, a tuple or a list (PyTorch's checks). A 0-d tensor
    accepts dim 0 or -1 and has no axis to reduce: `()`, which NumPy reduces over nothing."""
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    out = tuple(_wrap_dim(int(d), ndim) for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
    return out if ndim else ()


def _saved_dim(dim) -> tuple:
    return (int(dim),) if isinstance(dim, (int, np.integer)) else tuple(int(d) for d in dim)


def _sum_dtype(d: np.ndarray, dtype) -> np.dtype | None:
    if dtype is not None:
        return _dtypes.to_np(dtype)
    return np.dtype("int64") if d.dtype.kind in "biu" else None


def sum(self, dim=None, keepdim: bool = False, *, dtype=None, axis=None):
    """Sum of all elements (SumBackward0) or over `dim` (SumBackward1)."""
    d = c_order(self._data)
    if dim is None and axis is None and dtype is None and not keepdim and d.dtype.kind == "f":
        res = GRAD.quiet.run(np.add.reduce, d, None)  # `x.sum()` of floats: ndarray.sum wraps this in Python
        if self._requires_grad and GRAD.mode > 0:
            return record(SumBackward0, res, (self,), self_sym_sizes=d.shape)
        return make(res)
    if axis is not None:
        dim = axis
    acc = _sum_dtype(d, dtype)
    if dim is None:
        res = np.asarray(GRAD.quiet.run(d.sum, dtype=acc))  # inf - inf is nan, silently (as in PyTorch)
        if keepdim:
            res = res.reshape((1,) * d.ndim)
        if self._requires_grad and GRAD.mode > 0:
            if keepdim:
                return record(SumBackward1, res, (self,), dim=tuple(range(d.ndim)), keepdim=True,
                              self_sym_sizes=d.shape)
            return record(SumBackward0, res, (self,), self_sym_sizes=d.shape)
        return make(res)
    axes = norm_dims(dim, d.ndim)
    res = np.asarray(GRAD.quiet.run(d.sum, axis=axes if d.ndim else None, keepdims=keepdim, dtype=acc))
    if self._requires_grad and GRAD.mode > 0:
        return record(SumBackward1, res, (self,), dim=_saved_dim(dim), keepdim=keepdim, self_sym_sizes=d.shape)
    return make(res)


def mean(self, dim=None, keepdim: bool = False, *, dtype=None):
    d = c_order(self._data)
    if dtype is not None:
        d = d.astype(_dtypes.to_np(dtype))
    if d.dtype.kind != "f":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_dtypes.FROM_NP[d.dtype]._legacy[:-6]}")
    if dim is None:
        res = GRAD.quiet.run(_mean_all, d) if d.size else np.asarray(np.nan, d.dtype)
        if keepdim:
            res = np.reshape(res, (1,) * d.ndim)
        if self._requires_grad and GRAD.mode > 0:
            if keepdim:
                return record(MeanBackward1, res, (self,), dim=tuple(range(d.ndim)), keepdim=True,
                              self_sym_numel=d.size, self_sym_sizes=d.shape)
            return record(MeanBackward0, res, (self,), self_sym_numel=d.size, self_sym_sizes=d.shape)
        return make(res)
    axes = norm_dims(dim, d.ndim)
    if d.size:
        res = GRAD.quiet.run(d.mean, axes if d.ndim else None, None, None, keepdim)
    else:  # the mean over nothing is nan; NumPy would also warn about it
        res = np.full(np.sum(d, axis=axes if d.ndim else None, keepdims=keepdim).shape, np.nan, d.dtype)
    if self._requires_grad and GRAD.mode > 0:
        return record(MeanBackward1, res, (self,), dim=_saved_dim(dim), keepdim=keepdim, self_sym_numel=d.size,
                      self_sym_sizes=d.shape)
    return make(res)


def _mean_all(d: np.ndarray):
    """`d.mean()` without NumPy's Python-level wrapper (the same sum, then the same division)."""
    if d.dtype.itemsize < 4:  # float16 sums in float32, as NumPy's mean does
        return d.mean()
    return np.add.reduce(d, axis=None) / d.size


def sum_to_size(self, *size, **named):
    """Sum this tensor down to `size` (the reverse of broadcasting), as PyTorch's sum_to_size."""
    size = named_varargs(size, named, "size", "sum_to_size")
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)

    shape = self._data.shape
    if not expandable(size, shape):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, shape))}}}.")
    if shape == size:
        return self
    dims = summed_dims(size, shape)
    out = sum(self, dims, keepdim=True) if dims else self
    lead = len(shape) - len(size)
    if lead:

        out = view(out, size)
    return out


# -- the rest of the reductions ------------------------------------------------------------------------
class StructSeq(tuple):
    """A `minigrad.return_types` tuple. PyTorch's are C structseqs, whose errors give the full name
    (`'torch.return_types.max' object does not support item assignment`); a tuple subclass's say `'max'`."""

    def __setitem__(self, key, value):
        raise TypeError(f"'minigrad.return_types.{type(self).__name__}' object does not support item assignment")

    def __delitem__(self, key):
        raise TypeError(f"'minigrad.return_types.{type(self).__name__}' object doesn't support item deletion")


class _ReturnType(StructSeq):
    """`minigrad.return_types.max(values=..., indices=...)`: a named pair, printed as PyTorch does."""

    _kind = "max"

    def __new__(cls, values, indices):
        return tuple.__new__(cls, (values, indices))

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self) -> str:
        return f"minigrad.return_types.{self._kind}(\nvalues={self[0]!r},\nindices={self[1]!r})"


def _return_type(kind: str):
    return type(kind, (_ReturnType,), {"_kind": kind, "__module__": "minigrad.return_types"})


MaxResult, MinResult = _return_type("max"), _return_type("min")
_tracked = lambda t: t._requires_grad and GRAD.mode > 0  # noqa: E731


def prod(self, dim=None, keepdim: bool = False, *, dtype=None):
    d = c_order(self._data)
    acc = _sum_dtype(d, dtype)
    if dim is None:
        res = np.asarray(GRAD.quiet.run(d.prod, dtype=acc))  # inf * 0 is nan, silently (as in PyTorch)
        if _tracked(self):
            return record(ProdBackward0, res, (self,))
        return make(res)
    axis = norm_dims(dim, d.ndim)
    res = np.asarray(GRAD.quiet.run(d.prod, axis=axis, keepdims=keepdim, dtype=acc))
    if _tracked(self):
        return record(ProdBackward1, res, (self,), dim=int(dim), keepdim=keepdim)
    return make(res)


class _Extreme(NamedTuple):
    """What max and min differ in: the NumPy reduction and arg-reduction, the nodes for a full and a per-dim
    reduction, the (values, indices) result type, and the elementwise op `max(a, b)` means."""

    np_red: Callable
    np_arg: Callable
    full_node: type
    dim_node: type
    result_cls: type
    pairwise: Callable


def _extreme(self, dim, keepdim, other, kind: _Extreme):
    np_red, np_arg, full_node, dim_node, result_cls, pairwise = kind
    if isinstance(dim, Tensor):  # max(a, b): the elementwise maximum
        other, dim = dim, None
    if other is not None:
        return pairwise(self, other)
    d = self._data
    if dim is None:
        if d.size == 0:
            raise RuntimeError(f"{np_red.__name__[1:] if np_red.__name__.startswith('a') else np_red.__name__}(): "
                               "Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                               "dim with the 'dim' argument.")
        res = np.asarray(np_red(d))
        if _tracked(self):
            return record(full_node, res, (self,))
        return make(res)
    ax = _wrap_dim(int(dim), d.ndim)
    _check_extent(np_red.__name__, d, (ax,))
    src = d if d.ndim else d.reshape(1)
    idx = np_arg(src, axis=ax, keepdims=True)
    vals = np.take_along_axis(src, idx, axis=ax)
    if not keepdim or not d.ndim:
        idx, vals = np.squeeze(idx, ax), np.squeeze(vals, ax)
    if not d.ndim:
        idx, vals = idx.reshape(()), vals.reshape(())
    indices = make(np.asarray(idx, np.int64))
    if _tracked(self):
        values = record(dim_node, np.asarray(vals), (self,), dim=int(dim), keepdim=keepdim,
                        indices=SavedArg(np.asarray(idx), (indices,)),
                        self_sym_sizes=d.shape)
    else:
        values = make(np.asarray(vals))
    return result_cls(values, indices)


_MAX = _Extreme(np.max, np.argmax, MaxBackward1, MaxBackward0, MaxResult, maximum)
_MIN = _Extreme(np.min, np.argmin, MinBackward1, MinBackward0, MinResult, minimum)


def max(self, dim=None, keepdim: bool = False, *, other=None):
    return _extreme(self, dim, keepdim, other, _MAX)


def min(self, dim=None, keepdim: bool = False, *, other=None):
    return _extreme(self, dim, keepdim, other, _MIN)


def _check_extent(name: str, d: np.ndarray, dims: tuple, given=None) -> None:
    """A max or min over an empty dim has no value: PyTorch's IndexError (amax names the dim as `given`)."""
    for i, k in enumerate(dims):
        if d.ndim and d.shape[k] == 0:
            shown = k if given is None else ((given,) if isinstance(given, int) else tuple(given))[i]
            raise IndexError(f"{name}(): Expected reduction dim {shown} to have non-zero size.")


def _amax_like(np_red, node):
    name = "amax" if np_red is np.max else "amin"

    def op(self, dim=(), keepdim: bool = False):
        d = c_order(self._data)
        if dim in ((), None):
            if d.size == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                                   "Specify the reduction dim with the 'dim' argument.")
            dims = tuple(range(d.ndim))
        else:
            dims = norm_dims(dim, d.ndim)
            _check_extent(name, d, dims, dim)
        res = np.asarray(np_red(d, axis=dims if d.ndim else None, keepdims=keepdim))
        if res.dtype.kind == "f" and d.ndim and not res.all():
            res = _first_zero_sign(res, d, dims)
        if _tracked(self):
            if dim in ((), None):
                dims = tuple(range(d.ndim))
            elif not d.ndim:  # a 0-d input reduced over dim 0 (or -1): PyTorch's gradient is restored to shape (1,)
                dims = (0,) * len(_saved_dim(dim))
            return record(node, res, (self,), dim=dims, keepdim=keepdim)
        return make(res)
    return op


def _first_zero_sign(res: np.ndarray, d: np.ndarray, dims: tuple) -> np.ndarray:
    """Where a max or min is zero, PyTorch's is the first zero of its slice (+0. or -0.); NumPy's may be another."""
    moved = np.moveaxis(d, dims, tuple(range(d.ndim - len(dims), d.ndim)))  # the reduced dims last
    rows = moved.reshape(moved.shape[:d.ndim - len(dims)] + (-1,))
    first = np.take_along_axis(rows, np.argmax(rows == 0, axis=-1)[..., None], -1)[..., 0]
    flat = res.reshape(first.shape)
    return np.where(flat == 0, first, flat).reshape(res.shape)


amax = _amax_like(np.max, AmaxBackward0)
amin = _amax_like(np.min, AminBackward0)


def _arg_extreme(self, dim, keepdim: bool, np_arg) -> Tensor:
    d = self._data
    name = np_arg.__name__
    if d.dtype.kind == "b":
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        if d.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        return make(np.asarray(np_arg(d), np.int64).reshape((1,) * d.ndim if keepdim else ()))
    ax = _wrap_dim(dim, d.ndim)
    _check_extent(name, d, (ax,))
    return make(np.asarray(np_arg(d, axis=ax if d.ndim else None, keepdims=keepdim), np.int64))


def argmax(self, dim=None, keepdim: bool = False):
    return _arg_extreme(self, dim, keepdim, np.argmax)


def argmin(self, dim=None, keepdim: bool = False):
    return _arg_extreme(self, dim, keepdim, np.argmin)


def _correction(unbiased, correction) -> float:
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _variance(self: Tensor, dim, correction, keepdim: bool, name: str) -> tuple:
    """(variance array, normalised dims) for var and std, with PyTorch's checks and its warning when there are
    no degrees of freedom left (NumPy's own warning never reaches the learner)."""
    d = c_order(self._data)
    if d.dtype.kind != "f":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = None if dim is None else norm_dims(dim, d.ndim)
    axes = tuple(range(d.ndim)) if dims is None else dims
    n = 1
    for a in axes:
        n *= d.shape[a]
    if n - correction <= 0 or d.size == 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      "factor (input numel divided by output numel).", UserWarning, stacklevel=user_stacklevel())
    if d.dtype.itemsize < 8:  # PyTorch accumulates float32 in double: var([0, 1e30, 0]) is 3.3e59, its std 5.8e29
        d = d.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):  # as np.var computes it, without its warnings
        mean = np.add.reduce(d, axis=axes, keepdims=True) / d.dtype.type(n)
        centered = d - mean
        res = np.add.reduce(centered * centered, axis=axes, keepdims=keepdim) / d.dtype.type(builtins.max(
            n - correction, 0))
    return np.asarray(res), dims


def var(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    if isinstance(dim, bool):  # var(unbiased) positional form
        unbiased, dim = dim, None
    c = _correction(unbiased, correction)
    res, dims = _variance(self, dim, c, keepdim, "var")
    with np.errstate(over="ignore"):
        res = res.astype(self._data.dtype, copy=False)
    if _tracked(self):
        return record(VarBackward0, res, (self,), correction=c, dim=dims, keepdim=keepdim)
    return make(res)


def std(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    c = _correction(unbiased, correction)
    res, dims = _variance(self, dim, c, keepdim, "std")
    with np.errstate(over="ignore"):
        res = np.sqrt(res).astype(self._data.dtype, copy=False)
    if _tracked(self):
        return record(StdBackward0, res, (self,), correction=c, dim=dims, keepdim=keepdim)
    return make(res)


def norm(self, p="fro", dim=None, keepdim: bool = False, dtype=None):
    """Vector norm (p=2 by default) over all elements or `dim` (LinalgVectorNormBackward0)."""
    ord = 2.0 if p in ("fro", None) else float("inf") if p == "inf" else float(p)
    d = c_order(self._data)
    if d.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_dtypes.FROM_NP[d.dtype]._legacy[:-6]}")
    dims = None if dim is None else norm_dims(dim, d.ndim)
    if (ord < 0 or ord == float("inf")) and 0 in d.shape:  # a max, min or sum of inverses over nothing
        given = None if dim is None else (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
        where = "an empty tensor" if dims is None else next(  # (the dim named as it was given)
            (f"the dimension {g}" for k, g in zip(dims, given) if d.shape[k] == 0), None)
        if where is not None:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on {where}"
                               f"{' ' if dims is None else ''}because "
                               f"{'the operation' if dims is None else 'this dimension is empty and the operation'} "
                               "does not have an identity")
    a = np.abs(d)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if ord == float("inf"):
            res = a.max(axis=dims, keepdims=keepdim)
        elif ord == float("-inf"):
            res = a.min(axis=dims, keepdims=keepdim)
        elif ord == 0:
            res = (a != 0).sum(axis=dims, keepdims=keepdim).astype(d.dtype)
        elif dims != () and (d.size if dims is None else math.prod(d.shape[k] for k in dims)) == 1:
            # one element per norm: |x| itself, as PyTorch (no x² overflow; a 0-d tensor given a dim takes the sum)
            res = a.sum(axis=dims, keepdims=keepdim)
        elif ord == 2:
            res = np.sqrt((a * a).sum(axis=dims, keepdims=keepdim))
        else:
            res = (a ** ord).sum(axis=dims, keepdims=keepdim) ** (1 / ord)
    res = np.asarray(res, d.dtype)
    if _tracked(self):
        return record(LinalgVectorNormBackward0, res, (self,), ord=ord, dim=dims, keepdim=keepdim)
    return make(res)


def logsumexp(self, dim, keepdim: bool = False):
    d = c_order(self._data if self._data.dtype.kind == "f" else self._data.astype(_dtypes.default_np()))
    dims = norm_dims(dim, d.ndim)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m = np.max(d, axis=dims, keepdims=True) if d.size else np.zeros((1,) * d.ndim, d.dtype)
        m = np.where(np.isfinite(m), m, 0)
        res = np.log(np.sum(np.exp(d - m), axis=dims, keepdims=True)) + m
    if not keepdim:
        res = np.squeeze(res, axis=dims)
    res = np.asarray(res, d.dtype)
    if _tracked(self):
        return record(LogsumexpBackward0, res, (self,), dim=_saved_dim(dim), keepdim=keepdim)
    return make(res)


def _softmax_dim(dim, ndim: int) -> int:
    if dim is None:
        import warnings

        warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X "
                      "as an argument.", UserWarning, stacklevel=3)
        dim = 0 if ndim in (0, 1, 3) else 1
    return _wrap_dim(dim, ndim)


def _softmax_input(self: Tensor, dim, dtype, name: str) -> tuple:
    """(array, axis) for softmax and log_softmax, with PyTorch's error for an integer or bool input (its kernel
    name tells whether the dim is the last one)."""
    d = c_order(self._data if dtype is None else self._data.astype(_dtypes.to_np(dtype)))
    ax = _softmax_dim(dim, d.ndim)
    if d.dtype.kind != "f" and d.size:
        kernel = f"{name}_lastdim_kernel_impl" if ax >= d.ndim - 1 else f"{name}_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{kind_name(d.dtype)}'")
    return d, ax


def softmax(self, dim=None, dtype=None):
    d, ax = _softmax_input(self, dim, dtype, "softmax")
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf is nan, silently (as in PyTorch)
        e = np.exp(d - d.max(axis=ax, keepdims=True)) if d.size else d.copy()
        res = e / e.sum(axis=ax, keepdims=True) if d.size else e
    if _tracked(self):
        return record(SoftmaxBackward0, res, (self,), dim=ax)
    return make(res)


def log_softmax(self, dim=None, dtype=None):
    d, ax = _softmax_input(self, dim, dtype, "log_softmax")
    if d.size:
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            shifted = d - d.max(axis=ax, keepdims=True)
            res = shifted - np.log(np.exp(shifted).sum(axis=ax, keepdims=True))
    else:
        res = d.copy()
    if _tracked(self):
        return record(LogSoftmaxBackward0, res, (self,), dim=ax)
    return make(res)


def cumsum(self, dim, *, dtype=None):
    d = c_order(self._data)
    ax = _wrap_dim(dim, d.ndim)
    with np.errstate(invalid="ignore", over="ignore"):  # inf + -inf is nan, silently (as in PyTorch)
        res = xp.cumsum_array(d, ax, _sum_dtype(d, dtype)) if d.ndim else d.astype(_sum_dtype(d, dtype) or d.dtype)
    if _tracked(self):
        return record(CumsumBackward0, res, (self,), dim=ax)
    return make(res)


_ACCUMULATE = {np.dtype("float16"): np.dtype("float32"), np.dtype("float32"): np.dtype("float64")}


def cumprod(self, dim, *, dtype=None):
    """The cumulative product along `dim` (CumprodBackward0). Integers and bools give int64, as in sum; floats
    multiply in a wider type, as PyTorch's kernel does (float32 products in double: [1e30, 1e30, 0] ends in 0,
    where float32 products would give inf * 0 = nan)."""
    d = c_order(self._data)
    ax = _wrap_dim(dim, d.ndim)
    out = _sum_dtype(d, dtype) or d.dtype
    with np.errstate(invalid="ignore", over="ignore"):  # inf * 0 is nan, silently (as in PyTorch)
        res = np.cumprod(d, axis=ax, dtype=_ACCUMULATE.get(out, out)).astype(out, copy=False) if d.ndim \
            else d.astype(out)
    if _tracked(self):
        return record(CumprodBackward0, res, (self,), dim=ax)
    return make(res)


# == declarations ===============================================================================================
def _over(domain: str, *calls) -> tuple:
    """Samples of a reduction on a (3, 4) tensor of `domain`: each call is (args, kwargs)."""
    return tuple(Sample((((3, 4), domain),), args, kwargs) for args, kwargs in calls)


_ALL, _DIM, _KEEP, _DIMS = ((), {}), ((1,), {}), ((0,), {"keepdim": True}), (((0, 1),), {})
declare("sum", sum, nodes=(SumBackward0, SumBackward1), samples=_over("real", _ALL, _DIM, _KEEP, _DIMS))
declare("mean", mean, nodes=(MeanBackward0, MeanBackward1), samples=_over("real", _ALL, _DIM, _KEEP, _DIMS))
declare("sum_to_size", sum_to_size, namespace="Tensor", nodes=(SumBackward1,),
        samples=_over("real", ((1, 4), {}), ((4,), {})))
declare("prod", prod, nodes=(ProdBackward0, ProdBackward1), samples=_over("away", _ALL, _DIM, _KEEP))
declare("max", max, nodes=(MaxBackward0, MaxBackward1), samples=_over("distinct", _ALL, _DIM, _KEEP))
declare("min", min, nodes=(MinBackward0, MinBackward1), samples=_over("distinct", _ALL, _DIM, _KEEP))
declare("amax", amax, nodes=(AmaxBackward0,), samples=_over("distinct", _ALL, _DIM, _KEEP))
declare("amin", amin, nodes=(AminBackward0,), samples=_over("distinct", _ALL, _DIM, _KEEP))
declare("argmax", argmax, samples=_over("distinct", _ALL, _DIM), differentiable=False)
declare("argmin", argmin, samples=_over("distinct", _ALL, _DIM), differentiable=False)
declare("var", var, nodes=(VarBackward0,), samples=_over("real", _ALL, _DIM, _KEEP, ((), {"correction": 0})))
declare("std", std, nodes=(StdBackward0,), samples=_over("real", _ALL, _DIM, _KEEP))
declare("norm", norm, nodes=(LinalgVectorNormBackward0,), numpy_names=False,
        samples=_over("away", _ALL, ((3,), {}), ((2, 1), {}), ((1, (0, 1)), {"keepdim": True})))
declare("logsumexp", logsumexp, nodes=(LogsumexpBackward0,), samples=_over("real", _DIM, _KEEP))
declare("softmax", softmax, functional=True, nodes=(SoftmaxBackward0,), samples=_over("real", _DIM, ((0,), {})))
declare("log_softmax", log_softmax, functional=True, nodes=(LogSoftmaxBackward0,),
        samples=_over("real", _DIM, ((0,), {})))
declare("cumsum", cumsum, nodes=(CumsumBackward0,), samples=_over("real", _DIM, ((0,), {})))
declare("cumprod", cumprod, nodes=(CumprodBackward0,), samples=_over("real", _DIM, ((0,), {})))


# -- trace ---------------------------------------------------------------------------------------------------------
TraceBackward0 = rule("TraceBackward0", "self", saves="self_sym_sizes", forward="linear",
                      text="grad_self = grad on the main diagonal, 0 elsewhere",
                      self=lambda grad, self_sym_sizes: xp.keep_where(np.eye(*self_sym_sizes, dtype=builtins.bool),
                                                                      xp.expand(grad, self_sym_sizes)))


def _trace_sum(d: np.ndarray) -> np.ndarray:
    """PyTorch's CPU trace: the diagonal added one by one from +0 in the accumulate type (float32 in float64,
    float16 in float32; integers in int64), then cast back (an integer trace stays int64)."""
    out = np.int64 if d.dtype.kind in "iu" else d.dtype
    diag = np.diagonal(d)
    if not diag.size:
        return np.zeros((), out)
    with np.errstate(invalid="ignore", over="ignore"):  # (inf + -inf is nan, silently as in PyTorch)
        total = np.cumsum(diag, dtype=np.int64 if d.dtype.kind in "iu" else _ACCUMULATE.get(d.dtype, d.dtype))[-1]
        return np.asarray(total + 0, dtype=out)  # (+ 0: a sum from +0 of -0. terms is +0.)


def trace(self: Tensor) -> Tensor:
    """The sum of a matrix's main diagonal (integers sum to int64, as PyTorch's)."""
    if self._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self._data.ndim}")
    d = self._data
    if d.dtype.kind == "b":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    res = _trace_sum(d)
    if self._requires_grad and GRAD.mode > 0:
        return record(TraceBackward0, res, (self,), self_sym_sizes=d.shape)
    return make(res)


declare("trace", trace, nodes=(TraceBackward0,), samples=(Sample((((3, 4), "real"),)), Sample((((3, 3), "real"),))))


# -- bincount ------------------------------------------------------------------------------------------------------
def bincount(self: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0..max occurs in a 1-d tensor of non-negative integers (or the sum of its `weights`);
    at least `minlength` bins. Counts are int64; weights sum in float32 if they are float32, else float64."""
    x = self._data
    if x.dtype.kind == "f":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{kind_name(x.dtype)}'")
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return make(np.bincount(x.astype(np.int64), minlength=minlength).astype(np.int64))
    w = weights._data
    if w.ndim != 1 or w.shape != x.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out = np.float32 if w.dtype == np.float32 else np.float64
    res = np.bincount(x.astype(np.int64), w.astype(np.float64), minlength).astype(out)
    if GRAD.mode > 0 and weights._requires_grad:  # PyTorch's NotImplemented node: backward through it raises
        return _not_implemented(NotImplemented1, res, (weights,), "bincount")
    return make(res)


declare("bincount", bincount, differentiable=False, nodes=(NotImplemented1,))
