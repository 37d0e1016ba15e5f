"""In-place ops (`add_`, `x += y`, `zero_`, ...): they keep the tensor's identity and storage,
bump its version counter, and — when autograd records them — give it a new grad_fn whose input
is the tensor's previous value, exactly as PyTorch rebases a tensor after an in-place op."""

from __future__ import annotations

import numpy as np

from .. import _dtypes
from .._tensor import Tensor, make
from ..autograd.grad_mode import STATE
from . import pointwise as P
from .index import _adopt, _write, check_inplace


def _tracked(self: Tensor, args) -> bool:
    return STATE.mode > 0 and (self._requires_grad or any(isinstance(a, Tensor) and a._requires_grad for a in args))


def _store(self: Tensor, res: np.ndarray) -> None:
    """Write an out-of-place result back into `self`, with PyTorch's cast and shape rules."""
    if res.dtype != self._data.dtype and not np.can_cast(res.dtype, self._data.dtype, "same_kind"):
        raise RuntimeError(f"result type {_kind_name(res.dtype)} can't be cast to the desired output type "
                           f"{_kind_name(self._data.dtype)}")
    if res.shape != self._data.shape:
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                           f"{list(res.shape)}")
    _write(self, Ellipsis, res)


def _kind_name(d: np.dtype) -> str:
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "bool": "Bool",
            "float16": "Half", "uint8": "Byte", "int8": "Char", "int16": "Short"}[_dtypes.FROM_NP[d].name]


def _ufunc_in_place(self: Tensor, ufunc, other) -> bool:
    """The untracked fast path of add_/sub_/mul_/div_: one NumPy pass writing into self.

    Returns False when the case needs the general path (promotion to a wider kind, broadcasting
    self itself, a read-only expanded tensor), which then gives PyTorch's exact errors.
    """
    d = self._data
    od = other._data if isinstance(other, Tensor) else other
    if not d.flags.writeable or (isinstance(other, Tensor) and not np.can_cast(od.dtype, d.dtype, "same_kind")):
        return False
    if isinstance(od, float) and d.dtype.kind != "f":
        return False
    try:
        STATE.quiet.run(ufunc, d, od, out=d, casting="same_kind")
    except (ValueError, TypeError):  # UFuncTypeError is a TypeError
        return False
    return True


def inplace_of(op, name: str, ufunc=None):
    """Make `name_` from the out-of-place `op` (and, untracked, the NumPy `ufunc` writing in place)."""

    def method(self, *args, **kwargs):
        check_inplace(self)
        if self.is_inference() and STATE.mode >= 0:
            raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can make "
                               "a clone to get a normal tensor before doing inplace update.See "
                               "https://github.com/pytorch/rfcs/pull/17 for more details.")
        if ufunc is not None and len(args) == 1 and not kwargs and not _tracked(self, args) and \
                _ufunc_in_place(self, ufunc, args[0]):
            self._bump()
            return self
        if not _tracked(self, args):
            prev = STATE.mode
            STATE.mode = 0 if prev > 0 else prev
            try:
                res = op(self, *args, **kwargs)._data
            finally:
                STATE.mode = prev
            _store(self, res)
            self._bump()
            return self
        if self._base is not None and (self._base._requires_grad or self._requires_grad):
            raise RuntimeError("minigrad does not yet support in-place operations on a view of a tensor that "
                               "requires grad.\nhint: clone() the view first, or apply the operation out of place.")
        old = make(self._data.copy(), self._grad_fn, self._requires_grad)
        old._out_nr = self._out_nr
        out = op(old, *args, **kwargs)
        _store(self, out._data)
        _adopt(self, out)
        return self

    method.__name__ = name
    return method


add_ = inplace_of(P.add, "add_", np.add)
sub_ = inplace_of(P.sub, "sub_", np.subtract)
mul_ = inplace_of(P.mul, "mul_", np.multiply)
div_ = inplace_of(P.div, "div_", np.true_divide)
pow_ = inplace_of(P.pow, "pow_")
neg_ = inplace_of(P.neg, "neg_")
exp_ = inplace_of(P.exp, "exp_")
log_ = inplace_of(P.log, "log_")
sin_ = inplace_of(P.sin, "sin_")
cos_ = inplace_of(P.cos, "cos_")
tanh_ = inplace_of(P.tanh, "tanh_")
sigmoid_ = inplace_of(P.sigmoid, "sigmoid_")
relu_ = inplace_of(P.relu, "relu_")
abs_ = inplace_of(P.abs, "abs_")
sqrt_ = inplace_of(P.sqrt, "sqrt_")
reciprocal_ = inplace_of(P.reciprocal, "reciprocal_")
clamp_ = inplace_of(P.clamp, "clamp_")
masked_fill_ = inplace_of(P.masked_fill, "masked_fill_")
log1p_ = inplace_of(P.log1p, "log1p_")


def _fill_value(self: Tensor, value) -> np.ndarray:
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        value = value._data
    return np.full(self._data.shape, value, dtype=self._data.dtype)


def _write_untracked(self: Tensor, values: np.ndarray) -> Tensor:
    check_inplace(self)
    _write(self, Ellipsis, values)
    self._bump()
    if STATE.mode > 0 and self._grad_fn is not None:
        # the old values no longer flow into this tensor: it is cut from the graph, as PyTorch's
        # zero_/fill_ give a node (ZeroBackward0/FillBackward0) whose gradient is zero
        from ._record import record

        out = record(_FILL_NODE, self._data.copy(), (make(self._data, self._grad_fn, True),))
        _adopt(self, out)
    return self


_FILL_NODE = None


def zero_(self):
    return _write_untracked(self, np.zeros_like(self._data))


def fill_(self, value):
    return _write_untracked(self, _fill_value(self, value))


def copy_(self, src, non_blocking: bool = False):
    """Copy `src` (broadcast) into self; differentiable w.r.t. src (CopyBackwards)."""
    check_inplace(self)
    src = P.as_operand(src)
    sdata = src._data if isinstance(src, Tensor) else np.asarray(src)
    try:
        vals = np.broadcast_to(sdata, self._data.shape).astype(self._data.dtype)
    except ValueError:
        raise P.broadcast_error(self, src) from None
    if not _tracked(self, (src,)):
        _write(self, Ellipsis, vals)
        self._bump()
        return self
    from ._record import record

    old = make(self._data.copy(), self._grad_fn, self._requires_grad)
    old._out_nr = self._out_nr
    out = record(_COPY_NODE, vals.copy(), (old, src), (self._data.dtype,))
    _write(self, Ellipsis, vals)
    _adopt(self, out)
    return self


def _make_nodes():
    from . import _dual as D
    from ._record import rule

    fill = rule("FillBackward0", "self", self=lambda grad: D.zeros_like(grad))
    copy = rule("CopyBackwards", "self src", "src_dtype",
                self=lambda grad: D.zeros_like(grad),
                src=lambda grad, src_dtype: grad if D.data(grad).dtype == src_dtype else
                (grad.to(src_dtype) if D.is_t(grad) else grad.astype(src_dtype)))
    return fill, copy


_FILL_NODE, _COPY_NODE = _make_nodes()


def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None):
    from .._random import default_generator

    gen = generator or default_generator
    return _random_fill(self, gen._np.uniform(a, b, self._data.shape))


def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None):
    from .._random import default_generator

    gen = generator or default_generator
    return _random_fill(self, gen._np.normal(mean, std, self._data.shape))


def _random_fill(self: Tensor, values: np.ndarray) -> Tensor:
    check_inplace(self)
    _write(self, Ellipsis, values.astype(self._data.dtype))
    self._bump()
    return self


_ = make
