"""Matrix products. `matmul` dispatches by rank exactly as PyTorch's does, so the same nodes
(DotBackward0, MvBackward0, MmBackward0, BmmBackward0, UnsafeViewBackward0) appear in the graph."""

from __future__ import annotations

import numpy as np

from .. import _dtypes
from .._tensor import Tensor, make
from ..autograd.grad_mode import STATE
from . import derivatives as R
from ._record import record
from .pointwise import as_operand


def _dtype_check(a: Tensor, b: Tensor, what: str) -> None:
    if a._data.dtype != b._data.dtype:
        pair = "m1 and m2" if what == "mm" else "both vectors" if what == "dot" else "self and mat2"
        raise RuntimeError(f"expected {pair} to have the same dtype, but got: {_name(a)} != {_name(b)}")


def _name(t: Tensor) -> str:
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int"}.get(
        _dtypes.FROM_NP[t._data.dtype].name, _dtypes.FROM_NP[t._data.dtype].name)


def _needs(a: Tensor, b: Tensor) -> bool:
    return STATE.mode > 0 and (a._requires_grad or b._requires_grad)


def mm(self, mat2):
    if self._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self._data.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({self._data.shape[0]}x{self._data.shape[1]} "
                           f"and {mat2._data.shape[0]}x{mat2._data.shape[1]})")
    _dtype_check(self, mat2, "mm")
    res = self._data @ mat2._data
    if _needs(self, mat2):
        return record(R.MmBackward0, res, (self, mat2))
    return make(res)


def mv(self, vec):
    if self._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self._data.ndim}, {vec._data.ndim}")
    if self._data.shape[1] != vec._data.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({self._data.shape[0]}), mat ({self._data.shape[0]}x"
                           f"{self._data.shape[1]}), vec ({vec._data.shape[0]})")
    _dtype_check(self, vec, "mv")
    res = self._data @ vec._data
    if _needs(self, vec):
        return record(R.MvBackward0, res, (self, vec))
    return make(res)


def dot(self, tensor):
    if self._data.ndim != 1 or tensor._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {self._data.ndim}D and {tensor._data.ndim}D tensors")
    if self._data.shape[0] != tensor._data.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{self._data.shape[0]}] and src "
                           f"[{tensor._data.shape[0]}] to have the same number of elements, but got "
                           f"{self._data.shape[0]} and {tensor._data.shape[0]} elements respectively")
    _dtype_check(self, tensor, "dot")
    res = np.asarray(self._data @ tensor._data)
    if _needs(self, tensor):
        return record(R.DotBackward0, res, (self, tensor))
    return make(res)


def bmm(self, mat2):
    if self._data.ndim != 3 or mat2._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if self._data.ndim != 3 else "batch2 must be a 3D tensor")
    b1, n, m = self._data.shape
    b2, m2, p = mat2._data.shape
    if b1 != b2 or m != m2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b1}, {m}] but got: "
                           f"[{b2}, {m2}].")
    _dtype_check(self, mat2, "bmm")
    res = np.matmul(self._data, mat2._data)
    if _needs(self, mat2):
        return record(R.BmmBackward0, res, (self, mat2))
    return make(res)


def outer(self, vec2):
    """PyTorch computes outer as `self.unsqueeze(1) * vec2` (so its node is MulBackward0)."""
    from .pointwise import mul
    from .shape import unsqueeze

    return mul(unsqueeze(self, 1), vec2)


def matmul(self, other):
    """Rank dispatch as at::matmul: 1-D @ 1-D is dot, 2-D @ 1-D mv, 2-D @ 2-D mm, batches fold or bmm."""
    from .shape import _unsafe_view, expand, reshape, squeeze, unsqueeze

    other = as_operand(other)
    if not isinstance(other, Tensor):
        raise TypeError("matmul(): argument 'other' must be Tensor")
    d1, d2 = self._data.ndim, other._data.ndim
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(self, other)
    if d1 == 2 and d2 == 1:
        return mv(self, other)
    if d1 == 1 and d2 == 2:
        return squeeze(mm(unsqueeze(self, 0), other), 0)
    if d1 == 2 and d2 == 2:
        return mm(self, other)
    if d1 >= 3 and d2 in (1, 2):
        lead = self._data.shape[:-1]
        folded = reshape(self, (-1, self._data.shape[-1]))
        if d2 == 1:
            out = mv(folded, other)
            return _unsafe_view(out, lead)
        out = mm(folded, other)
        return _unsafe_view(out, lead + (other._data.shape[-1],))
    # batched: broadcast the batch dims, fold them into one, bmm, unfold
    a = self if d1 > 1 else unsqueeze(self, 0)
    b = other if d2 > 1 else unsqueeze(other, -1)
    batch_a, batch_b = a._data.shape[:-2], b._data.shape[:-2]
    try:
        batch = np.broadcast_shapes(batch_a, batch_b)
    except ValueError:
        from .pointwise import broadcast_error

        raise broadcast_error(make(np.empty(batch_a)), make(np.empty(batch_b))) from None
    n, m = a._data.shape[-2:]
    m2, p = b._data.shape[-2:]
    if m != m2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{int(np.prod(batch))}, {m}] but got: [{int(np.prod(batch))}, {m2}].")
    bsz = int(np.prod(batch)) if batch else 1
    a3 = reshape(expand(a, batch + (n, m)), (bsz, n, m))
    b3 = reshape(expand(b, batch + (m2, p)), (bsz, m2, p))
    out = bmm(a3, b3)
    shape = batch + ((n,) if d1 > 1 else ()) + ((p,) if d2 > 1 else ())
    return _unsafe_view(out, shape)


def rmatmul(self, other):
    other = as_operand(other)
    return matmul(other, self)
