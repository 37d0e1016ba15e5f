"""`minigrad.nn.utils`: gradient clipping and flattening parameters into one vector, as torch.nn.utils's.

    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)   # rescale all gradients together
    optimizer.step()

clip_grad_norm_ measures the norm of all the gradients taken together (as if concatenated into one vector),
and when it is above `max_norm` multiplies every gradient, in place, by max_norm / (norm + 1e-6); it returns
that total norm. clip_grad_value_ clamps each gradient element into [-clip_value, clip_value].
"""

from __future__ import annotations

import math

import numpy as np

from ..._tensor import Tensor, make
from ...autograd.grad_mode import no_grad
from ...ops.joining import cat
from . import rnn

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "rnn", "vector_to_parameters"]


def _grads(parameters) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _norm(a: np.ndarray, norm_type: float) -> np.ndarray:
    """The vector norm of all of `a`'s elements, summed in float64 (as PyTorch's CPU kernels accumulate), in
    `a`'s dtype."""
    dtype = a.dtype
    a = np.abs(a.reshape(-1).astype(np.float64))
    if norm_type == math.inf:
        out = a.max(initial=0.0)
    elif norm_type == -math.inf:
        out = a.min()
    elif norm_type == 0:
        out = (a != 0).sum()
    elif norm_type == 2:
        out = np.sqrt(np.dot(a, a))
    else:
        out = (a ** norm_type).sum() ** (1.0 / norm_type)
    return np.asarray(out, dtype)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale the gradients of `parameters` (an iterable of tensors, or one tensor) in place so that their total
    norm (of order `norm_type`) is at most `max_norm`; return the total norm before clipping (a 0-d tensor)."""
    grads = _grads(parameters)
    norm_type = float(norm_type)
    if not grads:
        return make(np.asarray(0.0, np.float32))
    with no_grad():
        norms = [_norm(g._data, norm_type) for g in grads]
        total = _norm(np.stack(norms), norm_type)
        if error_if_nonfinite and not np.isfinite(total):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
        coef = np.minimum(np.asarray(max_norm, total.dtype) / (total + np.asarray(1e-6, total.dtype)), 1.0)
        for g in grads:  # PyTorch multiplies every time, by 1.0 when the norm is small enough
            g.mul_(make(coef.astype(g._data.dtype)))
    return make(np.asarray(total))


def clip_grad_value_(parameters, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient element of `parameters` into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)


def parameters_to_vector(parameters) -> Tensor:
    """All the parameters, flattened and concatenated into one vector (differentiable)."""
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copy consecutive slices of `vec` into the parameters (their `.data`), in order."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    start = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[start:start + n].view_as(p).data
        start += n
