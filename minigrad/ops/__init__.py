"""The ops. Each family module declares its ops in the registry (`ops/registry.py`) as it is imported; this
module then gives Tensor its methods and Python operators from the registry, so `x.exp()`, `Tensor.exp(x)`
and `minigrad.exp(x)` are one function.

    arithmetic    + - * / ** // %          elementwise  exp, log, tanh, relu, ...
    comparison    == < & ~ isclose ...      selection    clamp, maximum, where, masked_fill
    reductions    sum, mean, max, softmax   views        view, reshape, transpose, expand, ...
    indexing      x[key], x[key] = value    joining      cat, stack, split, gather, repeat
    linalg        matmul, mm, linear        losses       mse_loss, cross_entropy, ...
    inplace       the in-place machinery (versions, CopySlices), zero_, fill_, copy_
    arrange       tril, triu, roll, flip, pad    sorting      sort, argsort, topk, histogram
    normalization layer_norm, batch_norm         embedding    F.embedding
    convolution   conv1d/2d and transposes,      pooling      max, average and adaptive average pooling
                  unfold, fold                   attention    scaled_dot_product_attention, _safe_softmax
"""

from __future__ import annotations

import types

from .._tensor import Tensor
from . import (
    arithmetic,
    arrange,
    attention,
    comparison,
    convolution,
    dual,
    elementwise,
    embedding,
    indexing,
    inplace,
    joining,
    linalg,
    losses,
    normalization,
    pooling,
    reductions,
    selection,
    sorting,
    views,
)
from .registry import REGISTRY, node_forward_rule, node_rule

# Tensor methods PyTorch writes in Python (torch/_tensor.py): Python's own TypeErrors name them
# `Tensor.norm()` ("Tensor.norm() got multiple values for argument 'p'"), where `minigrad.norm` says `norm()`.
PYTHON_METHODS = ("norm", "split", "unflatten")


def _tensor_method(function, name: str):
    """`function` as the method `Tensor.<name>`: for PYTHON_METHODS, the same code under PyTorch's qualified name
    (`__wrapped__` is the declared function)."""
    if name not in PYTHON_METHODS:
        return function
    if hasattr(function, "forward_of"):  # the method is made of the op itself, then carries tangents as it does
        inner, rewrap = function.forward_of
        return rewrap(_tensor_method(inner, name))
    method = types.FunctionType(function.__code__, function.__globals__, name, function.__defaults__,
                                function.__closure__)
    method.__kwdefaults__, method.__doc__ = function.__kwdefaults__, function.__doc__
    method.__qualname__, method.__wrapped__ = f"Tensor.{name}", function
    return method


def _attach_methods() -> None:
    """Tensor.<name> (and aliases), Tensor.<name>_ and the Python operators of every public op. Tensor gets each
    op's own function; the forward-AD-aware one (ops/dual.py) takes its place while a dual level is active
    (dual.install), so that methods and operators cost nothing more when forward AD is not in use."""
    for op in REGISTRY.values():
        if not op.public:
            continue
        if op.method or op.namespace == "Tensor":
            for name in (op.name, *op.aliases):
                _set_method(name, _tensor_method(op.named(name), name))
        if op.inplace is not None:
            for name in (op.name, *op.aliases):
                _set_method(name + "_", op.inplace)
        for name, fn in op.operators.items():
            _set_method(name, fn)


def _set_method(name: str, fn) -> None:
    """Tensor.<name> = the op's own function, and the pair (own, forward-aware) for dual.install. A binary operator
    is wrapped to give way to the other operand's `__torch_function__` (`_operator`)."""
    plain = fn.forward_of[0] if hasattr(fn, "forward_of") else fn
    if name in _BINARY:  # (the fast path is the plain operator's: forward AD's operator runs the op)
        plain, fn = _operator(plain, getattr(plain, "fast_path", None)), (_operator(fn) if fn is not plain else None)
        fn = fn or plain
    setattr(Tensor, name, plain)
    dual.TENSOR_METHODS[name] = (plain, fn)


_BINARY = {"__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
           "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
           "__ge__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__"}


def _operator(fn, fast_path=None):
    """A binary operator that gives way to the other operand's `__torch_function__` when it is not a Tensor (vmap's
    BatchedTensor, a user's tensor-like class), as PyTorch's operators do. With the op's `fast_path` (+ - * /,
    ops/arithmetic.py; @, ops/linalg.py), the operator tries it first on a floating tensor, a call or two fewer for
    most of a training loop's ops: it returns None for operands it does not take (anything but a Tensor or a Python
    number among them), which then meet the check and the op."""

    def operator(self, other):
        kind = other.__class__
        if kind is not Tensor and kind is not float and kind is not int and hasattr(kind, "__torch_function__"):
            return kind.__torch_function__(fn, (kind,), (self, other), {})
        return fn(self, other)

    def fast(self, other):
        if self._data.dtype.kind == "f":
            res = fast_path(self, other)
            if res is not None:
                return res
        return operator(self, other)

    made = operator if fast_path is None else fast
    made.__name__, made.__qualname__, made.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    made.__wrapped__ = fn
    return made


_attach_methods()
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = elementwise.abs
dual.TENSOR_METHODS["__abs__"] = (elementwise.abs, REGISTRY["abs"].function)
Tensor.where = lambda self, condition, other: selection.where(condition, self, other)
Tensor.T = property(views.T)
Tensor.mT = property(views.mT)

__all__ = ["REGISTRY", "node_rule", "node_forward_rule",
           "arithmetic", "arrange", "comparison", "convolution", "elementwise", "embedding",
           "indexing", "inplace", "joining", "linalg", "losses", "normalization", "pooling", "reductions", "selection",
           "sorting", "views"]
