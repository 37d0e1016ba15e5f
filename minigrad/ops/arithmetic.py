"""Arithmetic: + - * / ** // % and their functions (add, sub, mul, div, pow, ...), with PyTorch's type
promotion, each op declared beside its derivative rows.

The common cases come first in each op: two tensors of one dtype (nothing to promote), and a floating
tensor with a Python float (`x * 2.0`); everything else goes through `promoted`, which applies
PyTorch's promotion rules. A node is recorded only when grad mode is on and an operand requires grad.
"""

from __future__ import annotations

import builtins
import functools
import math

import numpy as np

from .._dtypes import checked
from .._layout import laid_out, torch_layout
from .._state import GRAD
from .._tensor import Tensor, make
from ..autograd.graph import ACCUMULATE_GRAD_SEQUENCE_NR
from . import xp
from .dual import ZERO
from .inplace import check_inference, check_overlap, inplace_of, renew_view_nodes, run_inplace
from .operands import as_operand, broadcast_error, float_data, float_operand, promoted, with_number
from .recording import exact_zeros, record, rule, same_tangent
from .registry import Sample, declare

# -- derivative rows ----------------------------------------------------------------------------------------
AddBackward0 = rule("AddBackward0", "self other", saves="alpha", defaults={"alpha": 1},
                    elementwise=True, text="grad_self = grad, grad_other = grad * alpha",
                    self=lambda grad: grad,
                    other=lambda grad, alpha: grad if alpha == 1 else grad * alpha)
SubBackward0 = rule("SubBackward0", "self other", saves="alpha", defaults={"alpha": 1},
                    elementwise=True, text="grad_self = grad, grad_other = -grad * alpha",
                    self=lambda grad: grad,
                    other=lambda grad, alpha: -grad if alpha == 1 else -grad * alpha)
RsubBackward1 = rule("RsubBackward1", "self", saves="alpha", defaults={"alpha": 1}, elementwise=True,
                     text="grad_self = -grad * alpha",
                     self=lambda grad, alpha: -grad if alpha == 1 else -grad * alpha)
MulBackward0 = rule("MulBackward0", "self other", saves="self other",
                    elementwise=True, text="grad_self = grad * other, grad_other = grad * self",
                    self=lambda grad, other: grad * other,
                    other=lambda grad, self: grad * self)
DivBackward0 = rule("DivBackward0", "self other", saves="self other",
                    elementwise=True, text="grad_self = grad / other, grad_other = -grad * self / other²",
                    # PyTorch's forward formula, not the derived ẋ/y - ẏ·x/y²: its zeros' signs (d / d: -0. at -1)
                    # and in place it reads self's new value, so `y.div_(y)`'s tangent is 0
                    forward=exact_zeros(lambda self_t, other_t, result, other: (self_t - other_t * result) / other),
                    self=lambda grad, other: grad / other,
                    other=lambda grad, self, other: -grad * ((self / other) / other))  # PyTorch's grouping
DivBackward2 = rule("DivBackward2", "self other", saves="self other rounding_mode",
                    text="grad_self = 0, grad_other = 0  (rounded division is flat almost everywhere)",
                    forward="derived",
                    # (what each formula reads is what PyTorch's reads, so the same tensors are kept and checked)
                    self=lambda grad, other: xp.zeros_like(grad),
                    other=lambda grad, self, other: xp.zeros_like(grad))
NegBackward0 = rule("NegBackward0", "self", elementwise=True, text="grad_self = -grad", self=lambda grad: -grad)
ReciprocalBackward0 = rule("ReciprocalBackward0", "self", saves="result", elementwise=True,
                           text="grad_self = -grad * result²",
                           self=lambda grad, result: -grad * (result * result))
PowBackward0 = rule("PowBackward0", "self", saves="self exponent",
                    elementwise=True, text="grad_self = grad * exponent * self^(exponent - 1)",
                    self=lambda grad, self, exponent:
                    xp.zeros_like(grad) if exponent == 0 else grad * xp.mul_scalar(_pow_number(self, exponent - 1),
                                                                                   exponent))
BOOL_SUBTRACTION = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
                    "mask, use the `~` or `logical_not()` operator instead.")


def _minus_one(exponent):
    """`exponent - 1` in pow's gradient, which PyTorch computes on the exponent as it is: a bool one refuses."""
    if xp.data(exponent).dtype.kind == "b":
        raise RuntimeError(BOOL_SUBTRACTION)
    return xp.sub_scalar(exponent, 1)  # SubBackward1 under create_graph, as PyTorch's scalar subtraction


def _pow_self_grad(grad, self, exponent):
    return xp.where(xp.data(exponent) == 0, 0.0, grad * (exponent * self ** _minus_one(exponent)))


def _pow_exponent_grad_t(grad, self, exponent, result):
    return grad * xp.where((xp.data(self) == 0) & (xp.data(exponent) >= 0), 0.0,
                           result * xp.log(xp.cast(self, result)))  # (an integer base: log in result's dtype)


def _pow_tangent(self_t, exponent_t, self, exponent, result):
    """PyTorch's forward formula of pow, pow_backward_self(self_t) + pow_backward_exponent(exponent_t): a plain
    base's term is +0. all the same (its `where` makes the zero tensor a tensor of zeros), so the sum has no -0."""
    first = xp.zeros_like(result) if self_t is ZERO else _pow_self_grad(self_t, self, exponent)
    return first + (exponent_t if exponent_t is ZERO else _pow_exponent_grad_t(exponent_t, self, exponent, result))


PowBackward1 = rule("PowBackward1", "self exponent", saves="self exponent result",
                    text="grad_self = grad * exponent * self^(exponent - 1), grad_exponent = grad * result * log(self)",
                    forward=exact_zeros(lambda self_t, exponent_t, self, exponent, result:
                                        _pow_tangent(self_t, exponent_t, self, exponent, result)),
                    self=lambda grad, self, exponent: _pow_self_grad(grad, self, exponent),
                    exponent=lambda grad, self, exponent, result: _pow_exponent_grad_t(grad, self, exponent, result))
PowBackward2 = rule("PowBackward2", "exponent", saves="exponent result self",
                    forward="derived", text="grad_exponent = grad * result * log(self)  (self is a number)",
                    exponent=lambda grad, self, exponent, result: grad * _pow_exponent_grad(self, exponent, result))
RemainderBackward0 = rule("RemainderBackward0", "self", forward=same_tangent(lambda self_t: self_t),
                          text="grad_self = grad  (other is a number)", self=lambda grad: grad)
RemainderBackward1 = rule("RemainderBackward1", "self other", saves="self other",
                          forward="derived", text="grad_self = grad, grad_other = -grad * floor(self / other)",
                          self=lambda grad: grad,
                          other=lambda grad, self, other: -grad * _floor_div(self, other))
FmodBackward0 = rule("FmodBackward0", "self", forward=same_tangent(lambda self_t: self_t),
                     text="grad_self = grad  (other is a number)", self=lambda grad: grad)
FmodBackward1 = rule("FmodBackward1", "self other", saves="self other",
                     forward="derived", text="grad_self = grad, grad_other = -grad * trunc(self / other)",
                     self=lambda grad: grad,
                     other=lambda grad, self, other: -grad * _trunc_div(self, other))


# -- a Tensor and a Python number, as PyTorch's C++ derivative formulas combine them ------------------------------
# `grad * 2.0` in Python makes the number a 0-d tensor (MulBackward0); PyTorch's C++ formulas call the Scalar
# overloads instead (at::mul(Tensor, Scalar): MulBackward1, ...), so the graph a create_graph backward records holds
# these. Formulas reach them through `xp.mul_scalar` / `xp.div_scalar` / `xp.add_scalar` / `xp.sub_scalar`.
MulBackward1 = rule("MulBackward1", "self", saves="other", elementwise=True,
                    text="grad_self = grad * other  (other is a number)",
                    self=lambda grad, other: xp.mul_scalar(grad, other))
DivBackward1 = rule("DivBackward1", "self", saves="other", elementwise=True,
                    text="grad_self = grad / other  (other is a number)",
                    self=lambda grad, other: xp.div_scalar(grad, other))
AddBackward1 = rule("AddBackward1", "self", elementwise=True, text="grad_self = grad  (other is a number)",
                    self=lambda grad: grad)
SubBackward1 = rule("SubBackward1", "self", elementwise=True, text="grad_self = grad  (other is a number)",
                    self=lambda grad: grad)


def _scalar_op(name: str, ufunc, node_cls, saves_other: bool):
    def op(self: Tensor, other) -> Tensor:
        d = self._data
        res = GRAD.quiet.run(with_number, ufunc, d, float_operand(d, other) if d.dtype.kind == "f" else other)
        if self._requires_grad and GRAD.mode > 0:
            return record(node_cls, res, (self,), **({"other": other} if saves_other else {}))
        return make(res)

    op.__name__ = op.__qualname__ = name
    declare(name, op, method=False, public=False, nodes=(node_cls,))
    return op


mul_scalar = _scalar_op("mul_scalar", np.multiply, MulBackward1, True)
div_scalar = _scalar_op("div_scalar", np.divide, DivBackward1, True)
add_scalar = _scalar_op("add_scalar", np.add, AddBackward1, False)
sub_scalar = _scalar_op("sub_scalar", np.subtract, SubBackward1, False)
SCALAR_OVERLOADS = {np.multiply: mul_scalar, np.true_divide: div_scalar, np.add: add_scalar, np.subtract: sub_scalar}


def _no_derivative(grad, _op):
    raise RuntimeError(f"derivative for aten::{_op} is not implemented")


# PyTorch's `NotImplemented` node: what an op without a derivative (floor division) records; backward through
# it raises. `_op` names the op in the message.
# Forward AD refuses it too ("refused"), naming the op the same way.
NotImplemented1 = rule("NotImplemented", "self", saves="_op", text="no derivative: backward through this op raises",
                       forward="refused", self=_no_derivative)
NotImplemented2 = rule("NotImplemented", "self other", saves="_op", forward="refused",
                       text="no derivative: backward through this op raises", self=_no_derivative,
                       other=_no_derivative)
NotImplemented1.name = NotImplemented2.name = lambda self: "minigrad::autograd::NotImplemented"
# PyTorch's error nodes share AccumulateGrad's sequence number (the highest) and, like it, never come first by
# themselves in the ready queue: backward reaches them before the leaves next to them (so a leaf's .grad stays None)
NotImplemented1.__lt__ = NotImplemented2.__lt__ = lambda self, other: False


def _not_implemented(node_cls, res, inputs: tuple, op: str) -> Tensor:
    out = record(node_cls, res, inputs, _op=op)
    out._grad_fn._sequence_number = ACCUMULATE_GRAD_SEQUENCE_NR
    return out


def _floor_div_arrays(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.floor_divide(a, b)


# PyTorch's remainder formula calls `self.div(other, rounding_mode="floor")`: on Tensors (create_graph) that records
# DivBackward2, so the gradient requires grad as PyTorch's does, though its derivative is 0
_floor_div = xp.either(_floor_div_arrays, lambda a, b: div(a, b, rounding_mode="floor"))


def _trunc_div_arrays(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.trunc(np.true_divide(a, b))


# fmod's, likewise: `self.div(other, rounding_mode="trunc")`
_trunc_div = xp.either(_trunc_div_arrays, lambda a, b: div(a, b, rounding_mode="trunc"))


def _pow_exponent_grad(base: float, exponent, result):
    """result * log(base) for a number `base` (MulBackward1 under create_graph); 0 where base is 0 and exponent >= 0,
    as PyTorch's pow_backward_exponent (which selects only when base is 0)."""
    scaled = xp.mul_scalar(result, _log_scalar(base))
    return xp.where(xp.data(exponent) >= 0, 0.0, scaled) if base == 0 else scaled


def _log_scalar(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf if x == 0 else math.nan


_F16 = np.dtype(np.float16)


def _recording(a, b) -> bool:
    return GRAD.mode > 0 and ((isinstance(a, Tensor) and a._requires_grad)
                              or (isinstance(b, Tensor) and b._requires_grad))


def _binary(self, other, ufunc, node_cls, to_float: bool = False, **args) -> Tensor:
    """`self <ufunc> other` for every operand mix, with PyTorch's promotion and broadcast error."""
    other = as_operand(other)
    ad, bd = promoted(self, other, to_float)
    try:
        res = GRAD.quiet.run(ufunc, ad, bd)
    except ValueError:
        raise broadcast_error(self, other) from None
    res = laid_out(res, self, other)
    if _recording(self, other):
        return record(node_cls, res, (self, other), **args)
    return make(res)


# -- + - * / -------------------------------------------------------------------------------------------------
def _common(ufunc, node_cls, self: Tensor, other) -> Tensor | None:
    """`self <ufunc> other` in the common cases, which add, sub, mul and div try first: two tensors of one dtype
    (nothing to promote), and a floating tensor with a Python number. None in every other case. Their operators
    (`x * 2.0`) try it themselves before calling the op (`fast_path` below).

    A number inside a derivative formula (`grad * 2`, under create_graph) takes PyTorch's Scalar overload
    (MulBackward1, ...), as PyTorch's C++ formulas do (see `rule` in ops/recording.py)."""
    cls = other.__class__
    d = self._data
    if cls is Tensor:
        if d.dtype is not other._data.dtype:
            return None
        try:
            res = GRAD.quiet.run(ufunc, d, other._data)
        except ValueError:
            raise broadcast_error(self, other) from None
        if not (d.flags.c_contiguous and other._data.flags.c_contiguous):
            res = torch_layout(res, d, other._data)  # PyTorch's layout (NumPy's differs)
        if (self._requires_grad or other._requires_grad) and GRAD.mode > 0:
            return record(node_cls, res, (self, other))
        return make(res)
    dtype = d.dtype
    if (cls is not builtins.float and cls is not builtins.int) or dtype.kind != "f":
        return None
    if GRAD.formula and GRAD.mode > 0:
        return SCALAR_OVERLOADS[ufunc](self, other)
    if cls is builtins.int:
        return None
    other = float_operand(d, other)  # saved as such: backward's `grad * other` is faster with it too
    res = GRAD.quiet.run(ufunc, d, other) if dtype is not _F16 else GRAD.quiet.run(with_number, ufunc, d, other)
    if self._requires_grad and GRAD.mode > 0:
        return record(node_cls, res, (self, other))
    return make(res)


def add(self, other, *, alpha=1, out=None):
    """self + alpha * other."""
    if alpha == 1:
        res = _common(np.add, AddBackward0, self, other)
        return res if res is not None else _binary(self, other, np.add, AddBackward0)
    other = as_operand(other)
    ad, bd = promoted(self, other)
    _check_alpha(ad, alpha)
    if np.result_type(ad, bd).kind == "b":  # a bool result takes alpha as a bool (PyTorch: True for any nonzero)
        alpha = builtins.bool(alpha)
    try:
        res = GRAD.quiet.run(lambda: np.add(ad, bd * checked(alpha, np.result_type(ad, bd))))  # (1e300 * 2 is inf)
    except ValueError:
        raise broadcast_error(self, other) from None
    res = laid_out(res, self, other)
    if _recording(self, other):
        return record(AddBackward0, res, (self, other), alpha=alpha)
    return make(res)


def _check_alpha(ad, alpha) -> None:
    """PyTorch's alpha_check on the result dtype: a bool alpha only for bool results, no float alpha for integers."""
    kind = np.result_type(ad).kind
    if isinstance(alpha, (builtins.bool, np.bool_)) and kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if kind != "f" and isinstance(alpha, (builtins.float, np.floating)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _check_sub(self, other, **_) -> None:
    """PyTorch's sub_check: no bool operand (made before any other check, in sub_ too)."""
    if self._data.dtype.kind == "b" and isinstance(other, Tensor) and other._data.dtype.kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if self._data.dtype.kind == "b" or (isinstance(other, Tensor) and other._data.dtype.kind == "b"):
        raise RuntimeError(BOOL_SUBTRACTION)


def sub(self, other, *, alpha=1):
    """self - alpha * other."""
    if alpha == 1 and self._data.dtype.kind == "f":  # (a bool tensor gets PyTorch's errors below)
        res = _common(np.subtract, SubBackward0, self, other)
        if res is not None:
            return res
    other = as_operand(other)
    _check_sub(self, other)
    ad, bd = promoted(self, other)
    if alpha != 1:
        _check_alpha(ad, alpha)
    try:
        res = GRAD.quiet.run(np.subtract, ad, bd if alpha == 1 else bd * checked(alpha, np.result_type(ad, bd)))
    except ValueError:
        raise broadcast_error(self, other) from None
    res = laid_out(res, self, other)
    if _recording(self, other):
        return record(SubBackward0, res, (self, other), **({} if alpha == 1 else {"alpha": alpha}))
    return make(res)


def rsub(self, other, *, alpha=1):
    """`other - self` for a number `other` (PyTorch's RsubBackward1)."""
    other = as_operand(other)
    if isinstance(other, Tensor):
        return sub(other, self, alpha=alpha)
    _check_sub(self, other)  # (a bool tensor: PyTorch's error, as for `-`)
    ad, bd = promoted(self, other)
    res = GRAD.quiet.run(np.subtract, bd, ad if alpha == 1 else ad * checked(alpha, np.result_type(ad, bd)))
    if _recording(self, None):
        return record(RsubBackward1, res, (self,), **({} if alpha == 1 else {"alpha": alpha}))
    return make(res)


def mul(self, other):
    """self * other."""
    res = _common(np.multiply, MulBackward0, self, other)
    return res if res is not None else _binary(self, other, np.multiply, MulBackward0)


def div(self, other, *, rounding_mode=None):
    """self / other (true division: integers give the default float), or rounded ("floor", "trunc")."""
    if rounding_mode is not None:
        return _div_rounded(self, as_operand(other), rounding_mode)
    if other.__class__ is not Tensor:  # (two tensors of one dtype may be integers: true division makes floats)
        res = _common(np.true_divide, DivBackward0, self, other)
        if res is not None:
            return res
    return _binary(self, other, np.true_divide, DivBackward0, to_float=True)


def _div_rounded(self, other, mode: str):
    if mode not in ("floor", "trunc"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{mode}'")
    res = _rounded(self, other, mode)
    if _recording(self, other):
        return record(DivBackward2, res, (self, other), rounding_mode=mode)
    return make(res)


def _integer_checks(ad, bd, kernel: str) -> None:
    """PyTorch's errors for integer division: bool operands have no kernel, and a zero divisor raises (NumPy
    would give 0)."""
    kind = np.result_type(ad, bd).kind
    if kind == "b":
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for 'Bool'")
    if kind in "iu" and np.size(ad) and np.size(bd) and not np.all(bd):
        if 0 not in np.broadcast_shapes(np.shape(ad), np.shape(bd)):
            raise RuntimeError("ZeroDivisionError")


def _rounded(self, other, mode: str) -> np.ndarray:
    ad, bd = promoted(self, other)
    _integer_checks(ad, bd, "div_floor" if mode == "floor" else "div_trunc")
    try:
        with np.errstate(all="ignore"):  # (1e300 // 1e-300 overflows to inf, silently as in PyTorch)
            if mode == "floor":
                res = np.floor_divide(ad, bd)
            elif np.asarray(ad).dtype.kind in "iu" and np.asarray(bd).dtype.kind in "iu":
                res = np.trunc(np.true_divide(ad, bd)).astype(np.result_type(ad, bd))
            else:
                res = np.trunc(ad / bd)
    except ValueError:
        raise broadcast_error(self, other) from None
    return laid_out(np.asarray(res), self, other)


def rdiv(self, other):
    """`other / self`: PyTorch computes it as `self.reciprocal() * other` (so MulBackward0)."""
    other = as_operand(other)
    if isinstance(other, Tensor):
        return div(other, self)
    return mul(reciprocal(self), other)


def neg(self):
    """-self."""
    if self._data.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    res = -self._data
    if self._requires_grad and GRAD.mode > 0:
        return record(NegBackward0, res, (self,))
    return make(res)


def reciprocal(self):
    """1 / self."""
    res = GRAD.quiet.run(np.reciprocal, float_data(self))
    if self._requires_grad and GRAD.mode > 0:
        return record(ReciprocalBackward0, res, (self,))
    return make(res)


# -- powers ---------------------------------------------------------------------------------------------------
def pow(self, exponent):
    """self ** exponent: PowBackward0 (a number exponent), PowBackward1 (a tensor), PowBackward2 (a number
    base: `pow(2.0, x)`)."""
    if not isinstance(self, Tensor):  # minigrad.pow(2.0, x)
        return rpow(exponent, self)
    exponent = as_operand(exponent)
    if isinstance(exponent, Tensor):
        ad, bd = promoted(self, exponent)
        if np.result_type(ad, bd).kind == "b":
            raise NotImplementedError("\"pow\" not implemented for 'Bool'")
        try:
            res = GRAD.quiet.run(_power, ad, bd)
        except ValueError:
            raise broadcast_error(self, exponent) from None
        res = laid_out(res, self, exponent)
        if _recording(self, exponent):
            return record(PowBackward1, res, (self, exponent))
        return make(res)
    _check_pow(self, exponent)
    ad, bd = promoted(self, exponent)
    if np.asarray(ad).dtype.kind in "iu":
        checked(exponent, ad.dtype)
    res = GRAD.quiet.run(_pow_number, ad, bd)
    if self._requires_grad and GRAD.mode > 0:
        return record(PowBackward0, res, (self,), exponent=exponent)
    return make(res)


def _pow_number(a, exponent):
    """`a ** exponent` for a number exponent, as PyTorch's kernel computes it: -0.5 is rsqrt (-0. ** -0.5 is -inf,
    -inf ** -0.5 is nan), which np.power is not. A Tensor `a` (a create_graph formula) goes through pow itself."""
    if isinstance(a, Tensor):
        return a ** exponent
    if exponent == -0.5 and np.asarray(a).dtype.kind == "f":
        return np.reciprocal(np.sqrt(a))
    return np.power(a, exponent)


def _check_pow(self, exponent) -> None:
    """PyTorch's check of an integer tensor to a negative number's power (made first, in pow_ too)."""
    if self._data.dtype.kind in "iub" and isinstance(exponent, builtins.int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def rpow(self, base):
    """`base ** self` for a number base (PowBackward2)."""
    base = as_operand(base)
    if isinstance(base, Tensor):
        return pow(base, self)
    bd, ed = promoted(base, self)
    res = GRAD.quiet.run(_power, bd, ed)
    if self._requires_grad and GRAD.mode > 0:
        return record(PowBackward2, res, (self,), self=base)
    return make(np.asarray(res))


def _power(base, exp):
    """np.power, with PyTorch's integer powers: a negative exponent gives 1 / base^-exp truncated toward zero (0,
    except for a base of 1 or -1), where NumPy raises."""
    kind = np.result_type(base, exp).kind
    if kind == "f" and np.size(exp) == 1:
        # a one-element exponent would take NumPy's scalar shortcuts (x ** 0.5 is sqrt: -0. for -0.); PyTorch's tensor
        # exponents go through pow itself (+0.), so the exponent is spelled out, one per element
        shape = np.broadcast_shapes(np.shape(base), np.shape(exp))
        return np.power(base, np.broadcast_to(exp, shape or (1,)).copy()).reshape(shape)
    if kind not in "iu" or not np.any(np.asarray(exp) < 0):
        return np.power(base, exp)
    negative = np.asarray(exp) < 0
    positive = np.power(base, np.where(negative, 0, exp))
    inverse = np.where(base == 1, 1, np.where(base == -1, np.where(np.asarray(exp) % 2 == 0, 1, -1), 0))
    return np.where(negative, inverse, positive).astype(positive.dtype)


def square(self):
    """self ** 2 (PowBackward0, as PyTorch records it)."""
    return pow(self, 2)


# -- // and % --------------------------------------------------------------------------------------------------
def floor_divide(self, other):
    """`a // b`: no derivative; PyTorch records a NotImplemented node that refuses backward."""
    return _floor_divide(self, other, "floor_divide")


def _floor_divide(self, other, name: str):
    """floor_divide, whose NotImplemented node names `name` (the in-place op's says `floor_divide_`, as PyTorch's)."""
    other = as_operand(other)
    res = _rounded(self, other, "floor")
    if _recording(self, other):  # an edge for each input that requires grad, as PyTorch's NotImplemented node has
        needing = [t for t in (self, other) if isinstance(t, Tensor) and t._requires_grad]
        if len(needing) == 2:
            return _not_implemented(NotImplemented2, res, (self, other), name)
        return _not_implemented(NotImplemented1, res, (needing[0],), name)
    return make(res)


def rfloordiv(self, other):
    other = as_operand(other)
    if isinstance(other, Tensor):
        return floor_divide(other, self)
    res = _rounded(other, self, "floor")
    if _recording(self, None):
        return _not_implemented(NotImplemented1, res, (self,), "floor_divide")
    return make(res)


def _mod(ad, bd) -> np.ndarray:
    """PyTorch's remainder: for floats fmod, moved into the divisor's sign when it is not 0 (so a zero keeps
    the dividend's sign: `0. % -1.` is 0., where np.mod gives -0.)."""
    _integer_checks(ad, bd, "remainder")
    if np.result_type(ad, bd).kind != "f":
        return np.asarray(np.mod(ad, bd))
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.fmod(ad, bd)
        return np.asarray(np.where((m != 0) & ((bd < 0) != (m < 0)), m + bd, m))


def remainder(self, other):
    """Python's `%` (the sign of the divisor): RemainderBackward0 (a number divisor) / RemainderBackward1."""
    other = as_operand(other)
    ad, bd = promoted(self, other)
    try:
        res = laid_out(_mod(ad, bd), self, other)
    except ValueError:
        raise broadcast_error(self, other) from None
    if _recording(self, other):
        if isinstance(other, Tensor):
            return record(RemainderBackward1, res, (self, other))
        return record(RemainderBackward0, res, (self,))
    return make(res)


def _fmod(ad, bd) -> np.ndarray:
    """C's fmod (the sign of the dividend), with PyTorch's integer errors."""
    _integer_checks(ad, bd, "fmod")
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.fmod(ad, bd))


def fmod(self, other):
    """C's fmod, the remainder of truncating division (the sign of the dividend): FmodBackward0 (a number
    divisor) / FmodBackward1."""
    if not isinstance(self, Tensor):  # unlike remainder, PyTorch's fmod has no overload for a number dividend
        raise TypeError(f"fmod() received an invalid combination of arguments - got ({type(self).__name__}, "
                        f"{type(other).__name__}), but expected one of:\n * (Tensor input, Tensor other)\n"
                        " * (Tensor input, Number other)")
    other = as_operand(other)
    ad, bd = promoted(self, other)
    try:
        res = laid_out(_fmod(ad, bd), self, other)
    except ValueError:
        raise broadcast_error(self, other) from None
    if _recording(self, other):
        if isinstance(other, Tensor):
            return record(FmodBackward1, res, (self, other))
        return record(FmodBackward0, res, (self,))
    return make(res)


def rremainder(self, other):
    other = as_operand(other)
    if isinstance(other, Tensor):
        return remainder(other, self)
    ad, bd = promoted(other, self)
    res = _mod(ad, bd)
    if _recording(self, None):
        return _not_implemented(NotImplemented1, res, (self,), "remainder")
    return make(res)


# -- in place: add_ sub_ mul_ div_ (+= -= *= /=) -----------------------------------------------------------------
def _ufunc_in_place(self: Tensor, ufunc, other) -> bool:
    """One NumPy pass writing into `self` (the SGD update `p -= lr * p.grad` under no_grad). Returns False when
    the case needs the general in-place path (a wider kind, broadcasting `self` itself, a read-only expanded
    tensor), which gives PyTorch's exact errors."""
    d = self._data
    if ufunc is np.subtract and (d.dtype.kind == "b" or (isinstance(other, Tensor) and other._data.dtype.kind == "b")):
        return False  # PyTorch refuses to subtract booleans
    if isinstance(other, Tensor):
        od = other._data
        if od.dtype is not d.dtype and not np.can_cast(od.dtype, d.dtype, "same_kind"):
            return False
        if d.base is not None or od.base is not None:  # (two arrays owning their memory share none of it)
            check_overlap(d, (other,))
    else:
        od = other
        if isinstance(od, builtins.float) and d.dtype.kind != "f":
            return False
    try:  # out=d; a ufunc casts "same_kind"; a read-only `d` raises ValueError
        GRAD.quiet.run(ufunc, d, od, d)
    except (ValueError, TypeError, OverflowError):  # UFuncTypeError is a TypeError; an int the dtype cannot hold
        return False
    return True


def _inplace_arithmetic(op, name: str, ufunc, check=None):
    """`add_`, `sub_`, `mul_`, `div_` (and `+=` ...): when nothing is recorded, one NumPy call writing into the
    tensor; when something is, the general in-place path (`check`: the op's argument checks, made first)."""

    def method(self, other, **kwargs):
        if not kwargs and not ((self._requires_grad or (isinstance(other, Tensor) and other._requires_grad))
                               and GRAD.mode > 0):
            if self._extras is not None and self._extras.inference:
                check_inference(self)
            if _ufunc_in_place(self, ufunc, other):
                counter = self._version_counter
                if counter is not None and counter.views is None:  # no view of this memory to renew (SGD's case)
                    counter.value += 1
                else:
                    self._bump_version()
                    renew_view_nodes(self)
                return self
        return run_inplace(self, lambda src: op(src, other, **kwargs), (other,) + tuple(kwargs.values()),
                           check=None if check is None else lambda: check(self, other, **kwargs))

    method.__name__ = method.__qualname__ = name
    return method


add_ = _inplace_arithmetic(add, "add_", np.add)
sub_ = _inplace_arithmetic(sub, "sub_", np.subtract, _check_sub)
mul_ = _inplace_arithmetic(mul, "mul_", np.multiply)
div_ = _inplace_arithmetic(div, "div_", np.true_divide)
pow_ = inplace_of(pow, "pow_", _check_pow)
remainder_ = inplace_of(remainder, "remainder_")
fmod_ = inplace_of(fmod, "fmod_")
floor_divide_ = inplace_of(lambda self, other: _floor_divide(self, other, "floor_divide_"), "floor_divide_")


# -- xlogy: x * log(y), 0 where x is 0 (KL divergence and entropies need 0 log 0 = 0) -----------------------------
def _xlogy_arrays(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.multiply(x, np.log(y))
    return np.where((x == 0) & ~np.isnan(y), np.zeros((), out.dtype), out)


def _xlogy_self_grad(grad, self, other):
    """PyTorch's grad_self: xlogy(grad, other) (log(other) even where self is 0), 0 where self is 0 and other is
    not positive; for a number `other`, 0 wherever self is 0 unless other > 0 (nan included)."""
    g = _xlogy(grad, other)
    zero = xp.data(self) == 0
    if not xp.is_t(other) and not isinstance(other, np.ndarray):
        return g if other > 0 else xp.masked_fill(g, zero, 0.0)
    return xp.masked_fill(g, zero & (xp.data(other) <= 0), 0.0)


XlogyBackward0 = rule("XlogyBackward0", "self other", saves="self other", elementwise=True,
                      text="grad_self = xlogy(grad, other) (0 where self == 0 and other <= 0), "
                           "grad_other = grad * self / other",
                      self=_xlogy_self_grad,
                      other=lambda grad, self, other: grad * self / other)
XlogyBackward2 = rule("XlogyBackward2", "self", saves="self other", elementwise=True,
                      text="grad_self = xlogy(grad, other) (0 where self == 0, unless other > 0; other is a number)",
                      self=_xlogy_self_grad)


def xlogy(self, other) -> Tensor:
    """self * log(other), and 0 where self is 0 (unless other is nan): the `0 log 0 = 0` of entropies."""
    if isinstance(other, Tensor) or not isinstance(self, Tensor):
        return _binary(as_operand(self), other, _xlogy_arrays, XlogyBackward0, to_float=True)
    ad, _ = promoted(self, as_operand(other), True)
    res = GRAD.quiet.run(_xlogy_arrays, ad, np.asarray(other, ad.dtype))
    if self._requires_grad and GRAD.mode > 0:
        return record(XlogyBackward2, res, (self,), other=other)
    return make(res)


# (the declared xlogy, looked up when called: under forward AD it carries tangents)
_xlogy = xp.either(_xlogy_arrays, lambda a, b: xlogy(a, b))


# -- declarations -------------------------------------------------------------------------------------------------
def _pairs(a: str = "real", b: str = "real") -> tuple:
    """Samples of a binary op: equal shapes, broadcasting, a 0-d operand, a Python number."""
    return (Sample((((3, 4), a), ((3, 4), b))), Sample((((3, 1), a), ((1, 4), b))),
            Sample((((2, 3), a), ((), b))), Sample((((2, 3), a),), (1.5,)))


# The operators + - * / try the shared fast path themselves, before the op, on a floating tensor (where it serves
# add, sub, mul and div alike): one call fewer for most of a training loop's ops (ops/__init__.py `_operator`).
for _op, _ufunc, _node in ((add, np.add, AddBackward0), (sub, np.subtract, SubBackward0),
                           (mul, np.multiply, MulBackward0), (div, np.true_divide, DivBackward0)):
    _op.fast_path = functools.partial(_common, _ufunc, _node)

declare("add", add, operators={"__add__": add, "__radd__": add, "__iadd__": add_}, inplace=add_,
        nodes=(AddBackward0,), samples=_pairs() + (Sample((((3,), "real"), ((3,), "real")), kwargs={"alpha": 2}),))
declare("sub", sub, aliases=("subtract",), operators={"__sub__": sub, "__rsub__": rsub, "__isub__": sub_},
        inplace=sub_, nodes=(SubBackward0, RsubBackward1), samples=_pairs())
declare("mul", mul, aliases=("multiply",), operators={"__mul__": mul, "__rmul__": mul, "__imul__": mul_},
        inplace=mul_, nodes=(MulBackward0,), samples=_pairs())
declare("div", div, aliases=("divide", "true_divide"),
        operators={"__truediv__": div, "__rtruediv__": rdiv, "__itruediv__": div_}, inplace=div_,
        nodes=(DivBackward0, DivBackward2), samples=_pairs("real", "positive"))
declare("neg", neg, aliases=("negative",), operators={"__neg__": neg}, inplace=inplace_of(neg, "neg_"),
        nodes=(NegBackward0,), samples=(Sample((((3, 4), "real"),)), Sample((((), "real"),))))
declare("reciprocal", reciprocal, inplace=inplace_of(reciprocal, "reciprocal_"), nodes=(ReciprocalBackward0,),
        samples=(Sample((((3,), "positive"),)),))
declare("pow", pow, operators={"__pow__": pow, "__rpow__": rpow, "__ipow__": pow_}, inplace=pow_,
        nodes=(PowBackward0, PowBackward1, PowBackward2),
        samples=(Sample((((3, 4), "real"),), (2,)), Sample((((3,), "positive"),), (0.5,)),
                 Sample((((3, 4), "positive"), ((3, 4), "real"))), Sample((((3, 1), "positive"), ((4,), "real")))))
declare("square", square, inplace=inplace_of(square, "square_"), nodes=(PowBackward0,),
        samples=(Sample((((3, 2), "real"),)),))
declare("floor_divide", floor_divide, operators={"__floordiv__": floor_divide, "__rfloordiv__": rfloordiv,
                                                 "__ifloordiv__": floor_divide_},
        inplace=floor_divide_, nodes=(NotImplemented1, NotImplemented2), differentiable=False,
        forward_nodes=(NotImplemented1, NotImplemented2))  # (forward AD refuses it: its nodes say so)
declare("remainder", remainder, operators={"__mod__": remainder, "__rmod__": rremainder, "__imod__": remainder_},
        inplace=remainder_, nodes=(RemainderBackward0, RemainderBackward1),
        samples=(Sample((((5,), "real"),), (0.7,), second_order=False),))
declare("fmod", fmod, inplace=fmod_, nodes=(FmodBackward0, FmodBackward1),
        samples=(Sample((((5,), "real"),), (0.7,), second_order=False),
                 Sample((((3, 4), "real"), ((3, 4), "positive")), second_order=False),
                 Sample((((3, 1), "real"), ((1, 4), "positive")), second_order=False)))
declare("xlogy", xlogy, inplace=inplace_of(xlogy, "xlogy_"), nodes=(XlogyBackward0, XlogyBackward2),
        samples=(Sample((((3, 4), "real"), ((3, 4), "positive"))), Sample((((3, 1), "real"), ((1, 4), "positive"))),
                 Sample((((2, 3), "real"),), (1.5,))))


# -- addcmul, addcdiv: self + value * t1 * t2 (or / t2), the fused steps optimizers write ---------------------------
AddcmulBackward0 = rule("AddcmulBackward0", "self tensor1 tensor2", saves="tensor1 tensor2 value", forward="derived",
                        text="grad_self = grad, grad_tensor1 = grad * (tensor2 * value), "
                             "grad_tensor2 = grad * (tensor1 * value)",
                        self=lambda grad: grad,  # (PyTorch's brackets: they decide overflows and zeros' signs)
                        tensor1=lambda grad, tensor2, value: grad * (tensor2 * value),
                        tensor2=lambda grad, tensor1, value: grad * (tensor1 * value))
AddcdivBackward0 = rule("AddcdivBackward0", "self tensor1 tensor2", saves="tensor1 tensor2 value", forward="derived",
                        text="grad_self = grad, grad_tensor1 = grad * (value / tensor2), "
                             "grad_tensor2 = -grad * (value * tensor1 / tensor2²)",
                        self=lambda grad: grad,
                        tensor1=lambda grad, tensor2, value: grad * (value / tensor2),
                        tensor2=lambda grad, tensor1, tensor2, value: -grad * (value * tensor1 / (tensor2 * tensor2)))


def _addc(self, tensor1, tensor2, value, combine, node_cls) -> Tensor:
    ts = (self, as_operand(tensor1), as_operand(tensor2))
    dt = np.result_type(*(t._data.dtype for t in ts))
    a, b, c = (t._data.astype(dt, copy=False) for t in ts)
    try:
        res = GRAD.quiet.run(lambda: a + combine(value * b, c))  # PyTorch's kernel: self + value * t1 * t2 (or / t2)
    except ValueError:
        raise broadcast_error(ts[0], ts[1]) from None
    res = np.asarray(res, dt)
    if GRAD.mode > 0 and any(t._requires_grad for t in ts):
        return record(node_cls, res, ts, value=value)
    return make(res)


def addcmul(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """self + value * tensor1 * tensor2."""
    return _addc(self, tensor1, tensor2, value, np.multiply, AddcmulBackward0)


def addcdiv(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """self + value * tensor1 / tensor2."""
    return _addc(self, tensor1, tensor2, value, np.true_divide, AddcdivBackward0)


_ADDC = (Sample((((3, 4), "real"), ((3, 4), "real"), ((3, 4), "positive"))),
         Sample((((3, 4), "real"), ((3, 1), "real"), ((4,), "positive")), kwargs={"value": 0.5}))
declare("addcmul", addcmul, inplace=inplace_of(addcmul, "addcmul_"), nodes=(AddcmulBackward0,), samples=_ADDC)
declare("addcdiv", addcdiv, inplace=inplace_of(addcdiv, "addcdiv_"), nodes=(AddcdivBackward0,), samples=_ADDC)
