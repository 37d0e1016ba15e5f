"""Elementwise ops: arithmetic, comparisons and math functions, with PyTorch's type promotion.

Each op computes with NumPy and, only when grad mode is on and an input requires grad, records
the node its table row defines. The `if` in front of `record` is the whole cost of autograd
for tensors that do not require grad.
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import _dtypes
from .._state import GRAD
from .._tensor import Tensor, make
from . import _dual as D
from . import derivatives as R
from ._record import record

_SCALAR = (builtins.int, builtins.float, builtins.bool)


def as_operand(x):
    """Python scalars stay scalars (weak types); arrays and lists become constant tensors."""
    if isinstance(x, (Tensor, builtins.int, builtins.float)):
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return make(x)
    if isinstance(x, (list, tuple)):
        from .._creation import tensor

        return tensor(x)
    raise TypeError(f"unsupported operand type: {type(x).__name__}")


_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}


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


def _tier_dtypes(ops) -> np.dtype:
    dims, zero_dims, scalars = [], [], []
    for o in ops:
        if isinstance(o, Tensor):
            (dims if o._data.ndim else zero_dims).append(o._data.dtype)
        else:
            scalars.append(o)
    return _dtypes.promote(_within_tier(dims), _within_tier(zero_dims), scalars)


def prep(a, b, to_float: bool = False):
    """Arrays (or scalars) for NumPy, cast to the dtype PyTorch's promotion gives."""
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
    rt = _tier_dtypes((a, b))
    if to_float and rt.kind != "f":
        rt = _dtypes.default_np()
    if isinstance(a, Tensor):
        ad = ad.astype(rt, copy=False)
    elif rt.kind == "b":
        ad = builtins.bool(ad)
    if isinstance(b, Tensor):
        bd = bd.astype(rt, copy=False)
    elif rt.kind == "b":
        bd = builtins.bool(bd)
    return ad, bd


def broadcast_error(a, b) -> RuntimeError:
    sa = np.shape(a._data if isinstance(a, Tensor) else a)
    sb = np.shape(b._data if isinstance(b, Tensor) else b)
    n = max(len(sa), len(sb))
    pa = (1,) * (n - len(sa)) + tuple(sa)
    pb = (1,) * (n - len(sb)) + tuple(sb)
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                                f"non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(sa)} and {list(sb)} cannot be broadcast together")


def operands(self, other):
    """(other, self array, other array) for a binary op; the common same-dtype cases return at once."""
    if other.__class__ is Tensor:
        ad, bd = self._data, other._data
        if ad.dtype is bd.dtype:
            return other, ad, bd
    elif other.__class__ is builtins.float:
        ad = self._data
        if ad.dtype.kind == "f":
            return other, ad, other
    other = as_operand(other)
    ad, bd = prep(self, other)
    return other, ad, bd


_F64 = np.dtype(np.float64)
_SCALARS: dict = {}  # float -> read-only 0-d float64 array


def _scalar64(v: float):
    """`v` for arithmetic with a float64 array: a cached 0-d array, which NumPy 2 combines with an array
    faster than a Python float (no weak-scalar conversion), with the same float64 result. 0.0 and -0.0
    compare equal and NaN never does, so those stay Python floats."""
    z = _SCALARS.get(v)
    if z is None:
        if not v or v != v:
            return v
        if len(_SCALARS) >= 256:
            _SCALARS.clear()
        z = _SCALARS[v] = np.array(v)
        z.flags.writeable = False
    return z


_NO_ARGS: dict = {}


def _same_dtype(self, ufunc, other, node_cls, args: dict = _NO_ARGS) -> Tensor:
    """`self <op> other` for two tensors of one dtype (nothing to promote): the common case of + - *."""
    try:
        res = GRAD.quiet.run(ufunc, self._data, other._data)
    except ValueError:
        raise broadcast_error(self, other) from None
    if (self._requires_grad or other._requires_grad) and GRAD.mode > 0:
        return record(node_cls, res, (self, other), **args)
    return make(res)


def _with_float(self, ufunc, other: float, node_cls, args: dict = _NO_ARGS) -> Tensor:
    """`self <op> other` for a floating tensor and a Python float (`x * 2.0`): the scalar case of + - * /."""
    d = self._data
    res = GRAD.quiet.run(ufunc, d, _scalar64(other) if d.dtype is _F64 else other)
    if self._requires_grad and GRAD.mode > 0:
        return record(node_cls, res, (self, other), **args)
    return make(res)


def _needs(a, b) -> bool:
    return GRAD.mode > 0 and ((isinstance(a, Tensor) and a._requires_grad)
                               or (isinstance(b, Tensor) and b._requires_grad))


# -- arithmetic -------------------------------------------------------------------------------------
def add(self, other, *, alpha=1, out=None):
    if alpha == 1:
        cls = other.__class__
        if cls is Tensor and self._data.dtype is other._data.dtype:
            return _same_dtype(self, np.add, other, R.AddBackward0)
        if cls is builtins.float and self._data.dtype.kind == "f":
            return _with_float(self, np.add, other, R.AddBackward0)
    other, ad, bd = operands(self, other)
    try:
        res = GRAD.quiet.run(np.add, ad, bd if alpha == 1 else bd * alpha)
    except ValueError:
        raise broadcast_error(self, other) from None
    if _needs(self, other):
        return record(R.AddBackward0, res, (self, other), **({} if alpha == 1 else {"alpha": alpha}))
    return make(res)


def sub(self, other, *, alpha=1):
    if alpha == 1 and self._data.dtype.kind == "f":  # (a bool tensor gets PyTorch's errors below)
        cls = other.__class__
        if cls is Tensor and self._data.dtype is other._data.dtype:
            return _same_dtype(self, np.subtract, other, R.SubBackward0)
        if cls is builtins.float:
            return _with_float(self, np.subtract, other, R.SubBackward0)
    other = as_operand(other)
    if self._data.dtype.kind == "b" and isinstance(other, Tensor) and other._data.dtype.kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if self._data.dtype.kind == "b" or (isinstance(other, Tensor) and other._data.dtype.kind == "b"):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    ad, bd = prep(self, other)
    try:
        res = GRAD.quiet.run(np.subtract, ad, bd if alpha == 1 else bd * alpha)
    except ValueError:
        raise broadcast_error(self, other) from None
    if _needs(self, other):
        return record(R.SubBackward0, res, (self, other), **({} if alpha == 1 else {"alpha": alpha}))
    return make(res)


def rsub(self, other, *, alpha=1):
    """`other - self` for a scalar `other` (PyTorch's RsubBackward1)."""
    cls = other.__class__
    if (cls is builtins.float or cls is builtins.int) and alpha == 1 and self._data.dtype.kind == "f":
        res = GRAD.quiet.run(np.subtract, other, self._data)  # `1 - x`: the scalar fast path
        if self._requires_grad and GRAD.mode > 0:
            return record(R.RsubBackward1, res, (self,))
        return make(res)
    other = as_operand(other)
    if isinstance(other, Tensor):
        return sub(other, self, alpha=alpha)
    ad, bd = prep(self, other)
    res = bd - ad if alpha == 1 else bd - ad * alpha
    if _needs(self, None):
        return record(R.RsubBackward1, res, (self,), alpha=alpha)
    return make(res)


def mul(self, other):
    cls = other.__class__
    if cls is Tensor and self._data.dtype is other._data.dtype:
        return _same_dtype(self, np.multiply, other, R.MulBackward0)
    if cls is builtins.float and self._data.dtype.kind == "f":
        return _with_float(self, np.multiply, other, R.MulBackward0)
    other, ad, bd = operands(self, other)
    try:
        res = GRAD.quiet.run(np.multiply, ad, bd)
    except ValueError:
        raise broadcast_error(self, other) from None
    if _needs(self, other):
        return record(R.MulBackward0, res, (self, other))
    return make(res)


def div(self, other, *, rounding_mode=None):
    other = as_operand(other)
    if rounding_mode is not None:
        return _div_rounded(self, other, rounding_mode)
    if other.__class__ is builtins.float and self._data.dtype.kind == "f":
        return _with_float(self, np.true_divide, other, R.DivBackward0)
    ad, bd = prep(self, other, to_float=True)
    try:
        res = GRAD.quiet.run(np.true_divide, ad, bd)
    except ValueError:
        raise broadcast_error(self, other) from None
    if _needs(self, other):
        return record(R.DivBackward0, res, (self, other))
    return make(res)


def _div_rounded(self, other, mode: str):
    if mode not in ("floor", "trunc"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{mode}'")
    res = _rounded(self, other, mode)
    if _needs(self, other):
        return record(R.DivBackward2, res, (self, other), rounding_mode=mode)
    return make(res)


def _rounded(self, other, mode: str) -> np.ndarray:
    ad, bd = prep(self, other)
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            if mode == "floor":
                res = np.floor_divide(ad, bd)
            elif np.asarray(ad).dtype.kind in "iu" and np.asarray(bd).dtype.kind in "iu":
                res = np.trunc(np.true_divide(ad, bd)).astype(np.result_type(ad, bd))
            else:
                res = np.trunc(ad / bd)
    except ValueError:
        raise broadcast_error(self, other) from None
    return np.asarray(res)


def rdiv(self, other):
    """`other / self`: PyTorch computes it as `self.reciprocal() * other` (so MulBackward0)."""
    other = as_operand(other)
    if isinstance(other, Tensor):
        return div(other, self)
    return mul(reciprocal(self), other)


def neg(self):
    if self._data.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    res = -self._data
    if self._requires_grad and GRAD.mode > 0:
        return record(R.NegBackward0, res, (self,))
    return make(res)


def reciprocal(self):
    ad = self._data if self._data.dtype.kind == "f" else self._data.astype(_dtypes.default_np())
    res = GRAD.quiet.run(np.reciprocal, ad)
    if self._requires_grad and GRAD.mode > 0:
        return record(R.ReciprocalBackward0, res, (self,))
    return make(res)


def pow(self, exponent):
    if not isinstance(self, Tensor):  # minigrad.pow(2.0, x)
        return rpow(exponent, self)
    exponent = as_operand(exponent)
    if isinstance(exponent, Tensor):
        ad, bd = prep(self, exponent)
        try:
            with np.errstate(invalid="ignore", divide="ignore"):
                res = np.power(ad, bd)
        except ValueError:
            raise broadcast_error(self, exponent) from None
        if _needs(self, exponent):
            return record(R.PowBackward1, res, (self, exponent))
        return make(res)
    ad, bd = prep(self, exponent)
    if np.asarray(ad).dtype.kind in "iu" and isinstance(bd, builtins.int) and bd < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    with np.errstate(invalid="ignore", divide="ignore"):
        res = ad ** bd
    if self._requires_grad and GRAD.mode > 0:
        return record(R.PowBackward0, res, (self,), exponent=exponent)
    return make(res)


def rpow(self, base):
    """`base ** self` for a scalar base (PowBackward2)."""
    base = as_operand(base)
    if isinstance(base, Tensor):
        return pow(base, self)
    bd, ed = prep(base, self)
    with np.errstate(invalid="ignore", divide="ignore"):
        res = np.power(bd, ed)
    if self._requires_grad and GRAD.mode > 0:
        return record(R.PowBackward2, res, (self,), self=base)
    return make(np.asarray(res))


def square(self):
    return pow(self, 2)


# -- math functions -----------------------------------------------------------------------------------
def _float_data(t: Tensor) -> np.ndarray:
    d = t._data
    return d if d.dtype.kind == "f" else d.astype(_dtypes.default_np())


def _unary(np_fn, node_cls, name: str, warns: bool = True):
    """The op `name`: `np_fn` elementwise, recorded as `node_cls`. Functions that can warn (log(0),
    exp overflow) run where NumPy is quiet, as PyTorch returns inf/nan silently; the rest run directly."""
    def op(self):
        d = self._data
        if d.dtype.kind != "f":
            d = d.astype(_dtypes.default_np())
        res = GRAD.quiet.run(np_fn, d) if warns else np_fn(d)
        if self._requires_grad and GRAD.mode > 0:
            return record(node_cls, res, (self,))
        return make(res)
    op.__name__ = name
    op.__qualname__ = f"Tensor.{name}"
    op.__doc__ = f"Elementwise {name}; its gradient rule is {node_cls.__name__} in ops/derivatives.py."
    return op


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # split by sign so that exp never overflows
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1 / (1 + np.exp(-x[pos]))
    e = np.exp(x[~pos])
    out[~pos] = e / (1 + e)
    return out


def tanh_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    """PyTorch's fused `tanh_backward` (what TanhBackward0 computes under create_graph)."""
    res = D.tanh_backward(grad_output._data, output._data)
    return _fused(R.TanhBackwardBackward0, res, grad_output, output)


def sigmoid_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    """PyTorch's fused `sigmoid_backward`."""
    res = D.sigmoid_backward(grad_output._data, output._data)
    return _fused(R.SigmoidBackwardBackward0, res, grad_output, output)


def _fused(cls, res, grad_output: Tensor, output: Tensor) -> Tensor:
    if GRAD.mode > 0 and (grad_output._requires_grad or output._requires_grad):
        return record(cls, res, (grad_output, output))
    return make(res)


exp = _unary(np.exp, R.ExpBackward0, "exp")
log = _unary(np.log, R.LogBackward0, "log")
sin = _unary(np.sin, R.SinBackward0, "sin")
cos = _unary(np.cos, R.CosBackward0, "cos")
tanh = _unary(np.tanh, R.TanhBackward0, "tanh", warns=False)
sigmoid = _unary(_sigmoid, R.SigmoidBackward0, "sigmoid")
sqrt = _unary(np.sqrt, R.SqrtBackward0, "sqrt")


def relu(self):
    res = np.maximum(self._data, 0) if self._data.dtype.kind != "b" else self._data.copy()
    if self._requires_grad and GRAD.mode > 0:
        return record(R.ReluBackward0, res, (self,))
    return make(res)


def abs(self):
    res = np.abs(self._data)
    if self._requires_grad and GRAD.mode > 0:
        return record(R.AbsBackward0, res, (self,))
    return make(res)


def where(condition, input, other):
    """Elementwise choice; the condition carries no gradient."""
    from ._record import record as rec

    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype.kind != "b":
        from .inplace import kind_name

        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{kind_name(cond.dtype)}")
    input, other = as_operand(input), as_operand(other)
    ad, bd = prep(input, other)
    res = np.where(cond, ad, bd)
    if _needs(input, other):
        return rec(WhereBackward0, res, (input, other), condition=cond)
    return make(res)


from ._record import rule as _rule  # noqa: E402

WhereBackward0 = _rule("WhereBackward0", "self other", saves="condition",
                       text="grad_self = where(condition, grad, 0), grad_other = where(condition, 0, grad)",
                       self=lambda grad, condition: grad * condition,
                       other=lambda grad, condition: grad * ~condition)


# -- comparisons (bool results, never differentiable) -------------------------------------------------
def _compare(np_fn, name: str):
    def op(self, other):
        other = as_operand(other)
        ad, bd = prep(self, other)
        try:
            return make(np.asarray(np_fn(ad, bd)))
        except ValueError:
            raise broadcast_error(self, other) from None
    op.__name__ = name
    return op


eq = _compare(np.equal, "eq")
ne = _compare(np.not_equal, "ne")
lt = _compare(np.less, "lt")
le = _compare(np.less_equal, "le")
gt = _compare(np.greater, "gt")
ge = _compare(np.greater_equal, "ge")


def _logical(np_fn, name: str):
    def op(self, other):
        other = as_operand(other)
        ad, bd = prep(self, other)
        if np.asarray(ad).dtype.kind == "f" or np.asarray(bd).dtype.kind == "f":
            raise TypeError(f"unsupported operand type(s) for {name}: float tensors (use a bool or integer tensor)")
        return make(np.asarray(np_fn(ad, bd)))
    op.__name__ = name
    return op


bitwise_and = _logical(np.bitwise_and, "&")
bitwise_or = _logical(np.bitwise_or, "|")
bitwise_xor = _logical(np.bitwise_xor, "^")


def bitwise_not(self):
    if self._data.dtype.kind == "f":
        raise TypeError("~ (bitwise_not) is only supported for integer and bool tensors")
    return make(np.invert(self._data))


def logical_not(self):
    return make(np.logical_not(self._data))


def floordiv(self, other):
    """`a // b`: no derivative; PyTorch records a NotImplemented node that refuses backward."""
    other = as_operand(other)
    res = _rounded(self, other, "floor")
    if _needs(self, other):
        if isinstance(other, Tensor):
            return record(R.not_implemented(2), res, (self, other), _op="floor_divide")
        return record(R.not_implemented(1), res, (self,), _op="floor_divide")
    return make(res)


def rfloordiv(self, other):
    other = as_operand(other)
    if isinstance(other, Tensor):
        return floordiv(other, self)
    res = _rounded(other, self, "floor")
    if _needs(self, None):
        return record(R.not_implemented(1), res, (self,), _op="floor_divide")
    return make(res)


def _mod(ad, bd) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.mod(ad, bd))


def remainder(self, other):
    """Python's `%` (the sign of the divisor): RemainderBackward0 (scalar divisor) / RemainderBackward1."""
    other = as_operand(other)
    ad, bd = prep(self, other)
    try:
        res = _mod(ad, bd)
    except ValueError:
        raise broadcast_error(self, other) from None
    if _needs(self, other):
        if isinstance(other, Tensor):
            return record(R.RemainderBackward1, res, (self, other))
        return record(R.RemainderBackward0, res, (self,))
    return make(res)


def rremainder(self, other):
    other = as_operand(other)
    if isinstance(other, Tensor):
        return remainder(other, self)
    ad, bd = prep(other, self)
    res = _mod(ad, bd)
    if _needs(self, None):
        return record(R.not_implemented(1), res, (self,), _op="remainder")
    return make(res)


def rsub_op(self, other):
    return rsub(self, other)


# -- the rest of the elementwise set -------------------------------------------------------------------
log1p = _unary(np.log1p, R.Log1PBackward0, "log1p")
tan = _unary(np.tan, R.TanBackward0, "tan")
rsqrt = _unary(lambda x: 1 / np.sqrt(x), R.RsqrtBackward0, "rsqrt")
exp2 = _unary(np.exp2, R.Exp2Backward0, "exp2")
erf = _unary(lambda x: np.vectorize(__import__("math").erf, otypes=[x.dtype])(x) if x.size else x.copy(),
             R.ErfBackward0, "erf")


def _piecewise(np_fn, node_cls, name: str):
    """Ops whose derivative is zero almost everywhere (sign, floor, ...): keep the dtype."""
    def op(self):
        res = np_fn(self._data)
        if self._requires_grad and GRAD.mode > 0:
            return record(node_cls, res, (self,))
        return make(np.asarray(res))
    op.__name__ = name
    return op


sign = _piecewise(np.sign, R.SignBackward0, "sign")
floor = _piecewise(np.floor, R.FloorBackward0, "floor")
ceil = _piecewise(np.ceil, R.CeilBackward0, "ceil")
trunc = _piecewise(np.trunc, R.TruncBackward0, "trunc")


def round(self, decimals=None):
    res = np.round(self._data, decimals or 0)  # NumPy rounds half to even, as PyTorch does
    if self._requires_grad and GRAD.mode > 0:
        return record(R.RoundBackward0 if decimals is None else R.RoundBackward1, res, (self,))
    return make(np.asarray(res))


def clamp(self, min=None, max=None):
    """Clamp to [min, max]: scalar bounds give ClampBackward1, tensor bounds ClampBackward0."""
    if min is None and max is None:
        raise RuntimeError("minigrad.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = as_operand(min) if min is not None else None
        hi = as_operand(max) if max is not None else None
        res = self._data
        if lo is not None:
            res = np.maximum(res, lo._data if isinstance(lo, Tensor) else lo)
        if hi is not None:
            res = np.minimum(res, hi._data if isinstance(hi, Tensor) else hi)
        res = np.asarray(res).astype(_tier_dtypes([t for t in (self, lo, hi) if t is not None]), copy=False)
        if GRAD.mode > 0 and builtins.any(isinstance(t, Tensor) and t._requires_grad for t in (self, lo, hi)):
            return record(R.ClampBackward0, res, (self, lo, hi))
        return make(res)
    res = np.clip(self._data, min, max)
    if res.dtype != self._data.dtype and self._data.dtype.kind != "f":
        res = res.astype(_tier_dtypes([self] + [v for v in (min, max) if v is not None]))
    if self._requires_grad and GRAD.mode > 0:
        return record(R.ClampBackward1, res, (self,), min=min, max=max)
    return make(np.asarray(res))


def clamp_min(self, min):
    """`clamp_min(x, m)`: ClampMinBackward0 (scalar bound) / ClampMinBackward1 (tensor bound)."""
    return _clamp_one(self, min, np.maximum, R.ClampMinBackward0, R.ClampMinBackward1)


def clamp_max(self, max):
    return _clamp_one(self, max, np.minimum, R.ClampMaxBackward0, R.ClampMaxBackward1)


def _clamp_one(self, bound, np_fn, scalar_node, tensor_node):
    bound = as_operand(bound)
    if isinstance(bound, Tensor):
        try:
            res = np.asarray(np_fn(self._data, bound._data)).astype(_tier_dtypes([self, bound]), copy=False)
        except ValueError:
            raise broadcast_error(self, bound) from None
        if _needs(self, bound):
            return record(tensor_node, res, (self, bound))
        return make(res)
    res = np.asarray(np_fn(self._data, bound))
    if res.dtype != self._data.dtype:
        res = res.astype(_tier_dtypes([self, bound]))
    if self._requires_grad and GRAD.mode > 0:
        return record(scalar_node, res, (self,), **{"min" if np_fn is np.maximum else "max": bound})
    return make(res)


def maximum(self, other):
    ad, bd = prep(self, other)
    try:
        res = np.maximum(ad, bd)
    except ValueError:
        raise broadcast_error(self, other) from None
    if _needs(self, other):
        return record(R.MaximumBackward0, res, (self, other))
    return make(res)


def minimum(self, other):
    ad, bd = prep(self, other)
    try:
        res = np.minimum(ad, bd)
    except ValueError:
        raise broadcast_error(self, other) from None
    if _needs(self, other):
        return record(R.MinimumBackward0, res, (self, other))
    return make(res)


def masked_fill(self, mask, value):
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype.kind != "b":
        from .linalg import _name

        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {_name(make(m))}")
    value = as_operand(value)
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value._data.ndim} dimension(s).")
    v = value._data if isinstance(value, Tensor) else value
    try:
        res = np.where(m, np.asarray(v, self._data.dtype), self._data)
    except ValueError:
        raise broadcast_error(self, make(m)) from None
    if res.shape != self._data.shape:
        raise RuntimeError(f"The size of tensor a ({self._data.shape[-1]}) must match the size of tensor b "
                           f"({m.shape[-1]}) at non-singleton dimension {len(res.shape) - 1}")
    if isinstance(value, Tensor) and value._requires_grad and GRAD.mode > 0:
        return record(R.MaskedFillBackward1, res, (self, value), mask=m)
    if self._requires_grad and GRAD.mode > 0:
        return record(R.MaskedFillBackward0, res, (self,), mask=m)
    return make(res)


def leaky_relu(self, negative_slope: float = 0.01):
    res = np.where(self._data > 0, self._data, self._data * negative_slope).astype(self._data.dtype)
    if self._requires_grad and GRAD.mode > 0:
        return record(R.LeakyReluBackward0, res, (self,), negative_slope=negative_slope)
    return make(res)


def gelu(self, approximate: str = "none"):
    import math

    x = self._data
    vec_erf = np.vectorize(math.erf, otypes=[x.dtype])
    res = (0.5 * x * (1 + vec_erf(x / math.sqrt(2)))).astype(x.dtype) if x.size else x.copy()
    if self._requires_grad and GRAD.mode > 0:
        return record(R.GeluBackward0, res, (self,), approximate=approximate)
    return make(res)


def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    ad, bd = prep(self, as_operand(other))
    out = make(np.asarray(np.isclose(ad, bd, rtol=rtol, atol=atol, equal_nan=equal_nan)))
    out._bump_version()  # PyTorch builds the result with in-place ops: its version is 1
    return out


def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    ad, bd = prep(self, as_operand(other))
    try:
        return builtins.bool(np.allclose(ad, bd, rtol=rtol, atol=atol, equal_nan=equal_nan))
    except ValueError:
        raise broadcast_error(self, other) from None


def equal(self, other) -> bool:
    return self._data.shape == other._data.shape and builtins.bool(np.array_equal(self._data, other._data))


def isnan(self):
    return make(np.isnan(self._data))


def isinf(self):
    return make(np.isinf(self._data))


def isfinite(self):
    return make(np.isfinite(self._data))


def logical_and(self, other):
    return make(np.logical_and(self._data, as_operand(other)._data))


def logical_or(self, other):
    return make(np.logical_or(self._data, as_operand(other)._data))


def all(self, dim=None, keepdim: bool = False):
    return make(np.asarray(np.all(self._data, axis=dim, keepdims=keepdim)))


def any(self, dim=None, keepdim: bool = False):
    return make(np.asarray(np.any(self._data, axis=dim, keepdims=keepdim)))
