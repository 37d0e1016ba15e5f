"""Forward-mode AD, as `torch.autograd.forward_ad`: dual tensors carry a tangent through every op.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)   # a view of primal that carries tangent
        y = f(x)                                    # each op computes its output's tangent as it runs
        value, jvp = forward_ad.unpack_dual(y)      # jvp = J_f(primal) @ tangent

Tangents are computed during the forward pass by each op's forward rule (ops/dual.py), never by a
backward pass: a dual tensor that does not require grad records no node. One level is active at a time,
as in PyTorch; when it exits, the tangents made under it are gone.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .._state import DUAL
from .._tensor import Tensor
from ..ops import dual as _dual
from ..ops.indexing import alias as _alias
from ..ops.views import view_as as _view_as
from .grad_mode import _DecoratorContextManager

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

_current_level = -1  # PyTorch's public number: 0 while a level is active, else -1


class _Level:
    """The token of one entered level: tangents made under it carry it, and are stale once it is gone."""

    __slots__ = ("number",)

    def __init__(self, number: int):
        self.number = number


def enter_dual_level() -> int:
    """Enter a new forward grad level (only one at a time, as in PyTorch); returns its number."""
    global _current_level
    if DUAL[0] is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level += 1
    DUAL[0] = _Level(_current_level)
    _dual.install(True)
    return _current_level


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit the forward grad level `level` (the current one by default): its tangents are deleted."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    DUAL[0] = None
    _dual.install(False)
    _current_level = level - 1


def _token(level: int | None):
    if level is None:
        level = _current_level
    if level < 0 or DUAL[0] is None:
        return None
    if level != DUAL[0].number:
        raise RuntimeError(f"Invalid level given {level}: only the current level {DUAL[0].number} is supported.")
    return DUAL[0]


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A new tensor aliased to `tensor` (a view of it) that carries `tangent` at the current level.

    Given `f` with Jacobian J, `unpack_dual(f(make_dual(x, v))).tangent` is J v."""
    token = _token(level)
    if token is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if tensor._data.dtype.kind not in "fc":
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if tangent._data.dtype.kind not in "fc":
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if _dual.tangent_of(tensor, token) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {token.number} is not supported.")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           "Tensor, this is not supported. Tensor is of size "
                           f"{list(tensor._data.shape)} while the given forward gradient is of size "
                           f"{list(tangent._data.shape)}.")
    DUAL[0] = None  # the alias is a plain view (its node, when `tensor` requires grad, is PyTorch's ViewBackward0)
    try:
        out = _view_as(tensor, tensor) if tensor._requires_grad else _alias(tensor)
    finally:
        DUAL[0] = token
    _dual.set_tangent(out, tangent, token)
    return out


class UnpackedDualTensor(NamedTuple):
    """What `unpack_dual` returns: the primal (a view of the tensor, with no tangent) and the tangent, or None."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent) of a dual tensor: the primal is a view of `tensor` without its tangent; the tangent is
    the tensor's tangent as it is (None when it has none at this level)."""
    token = _token(level)
    if token is None:
        return UnpackedDualTensor(tensor, None)
    tangent = _dual.tangent_of(tensor, token)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    DUAL[0] = None
    try:
        primal = _alias(tensor)
    finally:
        DUAL[0] = token
    return UnpackedDualTensor(primal, tangent)


class dual_level(_DecoratorContextManager):
    """Context manager for forward AD: all forward AD computation happens inside it. Levels do not nest (as in
    PyTorch); for higher-order forward derivatives, nest `jvp`s (torch.func)."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        exit_dual_level()
