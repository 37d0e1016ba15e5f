"""Matrix products. `matmul` dispatches by rank exactly as PyTorch's does, so the same nodes
(DotBackward0, MvBackward0, MmBackward0, BmmBackward0, UnsafeViewBackward0) appear in the graph."""

from __future__ import annotations

import numpy as np

from .. import _dtypes
from .._state import GRAD
from .._tensor import Tensor, make
from . import xp
from .arithmetic import mul
from .dual import forward_aware
from .operands import as_operand, broadcast_error, kind_name
from .recording import record, rule
from .registry import Sample, declare
from .views import _expand_target, _unsafe_view, contiguous, expand, reshape, t, transpose
from .xp import expandable


# == derivative rows, and the helpers their formulas use ======================================================
# -- linear algebra ---------------------------------------------------------------------------------
def _element_strides(node, byte_strides: tuple) -> tuple:
    """mm saves NumPy's byte strides (cheap to read); introspection shows PyTorch's element strides."""
    size = node._input_metadata[0][1].itemsize
    return tuple(st // size for st in byte_strides)


# PyTorch computes the gradient of a column-major matrix (a transposed contiguous one: strides (1, rows) in units
# of `unit`, 1 for elements or the item size for NumPy's bytes) transposed too, the layout BLAS prefers.
# On arrays (every backward without create_graph) both go straight to `xp.dot2d`, one call where `xp.mm` and
# `xp.t` would dispatch three times; on Tensors the same products, recorded (create_graph's higher orders).
def mm_mat1_grad(grad, mat2, sizes: tuple, strides: tuple, unit: int = 1):
    """PyTorch's mm_mat1_backward: grad @ mat2ᵀ, computed as (mat2 @ gradᵀ)ᵀ for a column-major mat1."""
    col = len(strides) == 2 and strides[0] == unit and strides[1] == sizes[0] * unit
    if grad.__class__ is np.ndarray and mat2.__class__ is np.ndarray:
        return xp.dot2d(mat2, grad.T).T if col else xp.dot2d(grad, mat2.T)
    return xp.t(xp.mm(mat2, xp.t(grad))) if col else xp.mm(grad, xp.t(mat2))


def mm_mat2_grad(grad, mat1, sizes: tuple, strides: tuple, unit: int = 1):
    """PyTorch's mm_mat2_backward: mat1ᵀ @ grad, computed as (gradᵀ @ mat1)ᵀ for a column-major mat2."""
    col = len(strides) == 2 and strides[0] == unit and strides[1] == sizes[0] * unit
    if grad.__class__ is np.ndarray and mat1.__class__ is np.ndarray:
        return xp.dot2d(grad.T, mat1).T if col else xp.dot2d(mat1.T, grad)
    return xp.t(xp.mm(xp.t(grad), mat1)) if col else xp.mm(xp.t(mat1), grad)


MmBackward0 = rule("MmBackward0", "self mat2",
                   saves="self mat2 self_sym_sizes self_sym_strides mat2_sym_sizes mat2_sym_strides",
                   forward="bilinear", text="grad_self = grad @ mat2ᵀ, grad_mat2 = selfᵀ @ grad",
                   self=lambda grad, mat2, self_sym_sizes, self_sym_strides:
                   mm_mat1_grad(grad, mat2, self_sym_sizes, self_sym_strides, grad.itemsize),
                   mat2=lambda grad, self, mat2_sym_sizes, mat2_sym_strides:
                   mm_mat2_grad(grad, self, mat2_sym_sizes, mat2_sym_strides, grad.itemsize),
                   shown={"self_sym_strides": _element_strides, "mat2_sym_strides": _element_strides})
MvBackward0 = rule("MvBackward0", "self vec", saves="self vec",
                   forward="bilinear", text="grad_self = outer(grad, vec), grad_vec = selfᵀ @ grad",
                   self=lambda grad, vec: xp.outer(grad, vec),
                   vec=lambda grad, self: xp.t(self) @ grad)
DotBackward0 = rule("DotBackward0", "self tensor", saves="self tensor",
                    forward="bilinear", text="grad_self = grad * tensor, grad_tensor = grad * self",
                    self=lambda grad, tensor: grad * tensor,
                    tensor=lambda grad, self: grad * self)
BmmBackward0 = rule("BmmBackward0", "self mat2", saves="self mat2",
                    text="grad_self = grad @ mat2ᵀ (per batch), grad_mat2 = selfᵀ @ grad (per batch)",
                    forward="bilinear",
                    self=lambda grad, mat2: xp.bmm(grad, xp.transpose(mat2, 1, 2)),
                    mat2=lambda grad, self: xp.bmm(xp.transpose(self, 1, 2), grad))


def _times(g, alpha):
    """PyTorch's maybe_multiply: a Scalar product (MulBackward1 on Tensors) unless the factor is 1."""
    return g if alpha == 1 else xp.mul_scalar(g, alpha)  # (alpha may be a NumPy number: the Scalar overload still)


BaddbmmBackward0 = rule(
    "BaddbmmBackward0", "self batch1 batch2", saves="alpha batch1 batch2 beta",
    text="grad_self = grad * beta (summed to self's shape), grad_batch1 = grad @ batch2ᵀ * alpha (per batch), "
         "grad_batch2 = batch1ᵀ @ grad * alpha (per batch)",
    forward=lambda self_t, batch1_t, batch2_t, batch1, batch2, alpha, beta:
    _times(self_t, beta) + _times(xp.bmm(batch1_t, batch2) + xp.bmm(batch1, batch2_t), alpha),
    self=lambda grad, beta: _times(grad, beta),
    batch1=lambda grad, batch2, alpha: _times(xp.bmm(grad, xp.transpose(batch2, 1, 2)), alpha),
    batch2=lambda grad, batch1, alpha: _times(xp.bmm(xp.transpose(batch1, 1, 2), grad), alpha))


SqueezeBackward4 = rule("SqueezeBackward4", "self", saves="dim self_sym_sizes",
                        forward="linear", text="grad_self = grad.unsqueeze(dim)",  # squeeze_(dim), in place
                        self=lambda grad, dim, self_sym_sizes: xp.reshape(grad, self_sym_sizes))


# -- linear (torch.nn.functional.linear): bias + input @ weightᵀ ------------------------------------------------
AddmmBackward0 = rule(
    "AddmmBackward0", "self mat1 mat2",
    saves="mat1 mat2 alpha beta mat1_sym_sizes mat1_sym_strides mat2_sym_sizes mat2_sym_strides",
    text="grad_self = grad * beta (summed to self's shape), grad_mat1 = grad @ mat2ᵀ * alpha, "
         "grad_mat2 = mat1ᵀ @ grad * alpha",
    forward=lambda self_t, mat1_t, mat2_t, mat1, mat2, alpha, beta:
    _times(self_t, beta) + _times(xp.mm(mat1_t, mat2) + xp.mm(mat1, mat2_t), alpha),
    self=lambda grad, beta: _times(grad, beta),
    mat1=lambda grad, mat2, alpha, mat1_sym_sizes, mat1_sym_strides:
    _times(mm_mat1_grad(grad, mat2, mat1_sym_sizes, mat1_sym_strides), alpha),
    mat2=lambda grad, mat1, alpha, mat2_sym_sizes, mat2_sym_strides:
    _times(mm_mat2_grad(grad, mat1, mat2_sym_sizes, mat2_sym_strides), alpha))




def _addmm_op(bias: Tensor, mat1: Tensor, mat2: Tensor) -> Tensor:
    """bias + mat1 @ mat2 in one node (AddmmBackward0), as nn.Linear computes it."""
    a, b = mat1._data, mat2._data
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {a.ndim}-D tensor" if a.ndim != 2
                           else f"mat2 must be a matrix, got {b.ndim}-D tensor")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    if a.dtype != b.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {kind_name(a.dtype)} and "
                           f"{kind_name(b.dtype)}")
    if bias._data.dtype != a.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {kind_name(bias._data.dtype)} and "
                           f"{kind_name(a.dtype)}")
    try:
        with np.errstate(all="ignore"):  # inf * 0 is nan, silently (as in PyTorch)
            res = a @ b
            if a.shape[1]:
                np.add(res, bias._data, out=res)
            else:  # an empty product: PyTorch's gemm only copies the bias in (so a -0. stays -0.)
                res[...] = bias._data
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({res.shape[-1]}) must match the existing size "
                           f"({bias._data.shape[-1]}) at non-singleton dimension {bias._data.ndim - 1}.  Target "
                           f"sizes: [{res.shape[0]}, {res.shape[1]}].  Tensor sizes: "
                           f"[{', '.join(map(str, bias._data.shape))}]") from None
    if _recording(bias, mat1, mat2):
        return record(AddmmBackward0, res, (bias, mat1, mat2), alpha=1, beta=1, mat1_sym_sizes=a.shape,
                      mat1_sym_strides=_strides(a), mat2_sym_sizes=b.shape, mat2_sym_strides=_strides(b))
    return make(res)


_addmm = forward_aware(_addmm_op, (AddmmBackward0,), "addmm")  # carries tangents: linear is made of it


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = x W^T + b, with PyTorch's graph: AddmmBackward0 (2-D input), ViewBackward0 around it otherwise."""
    nd = input._data.ndim
    if bias is not None and nd == 2:
        return _addmm(bias, input, weight.t())
    if bias is not None and nd >= 1 and input._data.flags.c_contiguous and (nd == 3 or bias._data.ndim == 1):
        lead = input._data.shape[:-1]
        rows = 1
        for s in lead:
            rows *= s
        out = _addmm(bias, input.reshape(rows, input._data.shape[-1]), weight.t())
        return out.view(*lead, out._data.shape[1])
    out = matmul(input, weight.t())
    return out if bias is None else out.add_(bias)  # PyTorch adds the bias in place (so its errors, its version)


def _recording(*ts) -> bool:
    return GRAD.mode > 0 and any(isinstance(t, Tensor) and t._requires_grad for t in ts)


_dot = xp.dot2d


_BOOL_KERNEL = {"mm": "addmm_impl_cpu_", "mv": "addmv_impl_cpu", "dot": "dot", "bmm": "bmm"}


def _dtype_check(a: Tensor, b: Tensor, what: str) -> None:
    """PyTorch's dtype checks of the products, each op with its own message; bool has no kernel."""
    da, db = a._data.dtype, b._data.dtype
    if what == "bmm" and da.kind == "b" and a._data.size and b._data.size:  # bmm looks for a kernel first
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    if da != db:
        if what == "mm":
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_name(a)} != {_name(b)}")
        if what == "mv":
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {kind_name(db)}, "
                               f"{kind_name(da)}, and {kind_name(db)}")
        if what == "dot":
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {kind_name(da)} and "
                               f"{kind_name(db)}")
        raise RuntimeError(f"expected scalar type {kind_name(da)} but found {kind_name(db)}")
    # an empty product runs no kernel, except dot's, which dispatches on the dtype first
    if da.kind == "b" and (what == "dot" or (a._data.size and b._data.size)):
        raise NotImplementedError(f"\"{_BOOL_KERNEL[what]}\" not implemented for 'Bool'")


def _name(t: Tensor) -> str:
    return _dtypes.CPP_NAMES[t._data.dtype.name]


def _needs(a: Tensor, b: Tensor) -> bool:
    return GRAD.mode > 0 and (a._requires_grad or b._requires_grad)


def mm(self, mat2):
    a, b = self._data, mat2._data
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({self._data.shape[0]}x{self._data.shape[1]} "
                           f"and {mat2._data.shape[0]}x{mat2._data.shape[1]})")
    if a.dtype is not b.dtype or a.dtype.kind == "b":
        _dtype_check(self, mat2, "mm")
    res = GRAD.quiet.run(_dot, a, b)  # np.dot or np.matmul, whichever is faster for the size (xp.dot2d)
    if (self._requires_grad or mat2._requires_grad) and GRAD.mode > 0:
        # the sizes, and the strides of the inputs that need a gradient (PyTorch saves `()` for the others):
        # NumPy's byte strides, shown in elements by `_saved_*_sym_strides` (MmBackward0)
        return record(MmBackward0, res, (self, mat2), self_sym_sizes=a.shape,
                      self_sym_strides=a.strides if self._requires_grad else (), mat2_sym_sizes=b.shape,
                      mat2_sym_strides=b.strides if mat2._requires_grad else ())
    return make(res)


def mv(self, vec):
    if self._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self._data.ndim}, {vec._data.ndim}")
    if self._data.shape[1] != vec._data.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({self._data.shape[0]}), mat ({self._data.shape[0]}x"
                           f"{self._data.shape[1]}), vec ({vec._data.shape[0]})")
    _dtype_check(self, vec, "mv")
    res = GRAD.quiet.run(np.matmul, self._data, vec._data)
    if _needs(self, vec):
        return record(MvBackward0, res, (self, vec))
    return make(res)


def dot(self, tensor):
    if self._data.ndim != 1 or tensor._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {self._data.ndim}D and {tensor._data.ndim}D tensors")
    if self._data.shape[0] != tensor._data.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{self._data.shape[0]}] and src "
                           f"[{tensor._data.shape[0]}] to have the same number of elements, but got "
                           f"{self._data.shape[0]} and {tensor._data.shape[0]} elements respectively")
    _dtype_check(self, tensor, "dot")
    res = np.asarray(GRAD.quiet.run(np.matmul, self._data, tensor._data))
    if _needs(self, tensor):
        return record(DotBackward0, res, (self, tensor))
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
    res = GRAD.quiet.run(np.matmul, self._data, mat2._data)
    if _needs(self, mat2):
        return record(BmmBackward0, res, (self, mat2))
    return make(res)


def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    """beta * self + alpha * (batch1 @ batch2) per batch, `self` broadcast to the product's shape (b, n, p)."""
    for name, batch in (("batch1", batch1), ("batch2", batch2)):
        if batch._data.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    b1, n, m = batch1._data.shape
    b2, m2, p = batch2._data.shape
    if not expandable(self._data.shape, (b1, n, p)):  # PyTorch's order: self's shape, its dtype, the batches'
        _expand_target((b1, n, p), self._data.shape, 3 - self._data.ndim)  # (raises its error)
    if self._data.dtype != batch1._data.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_name(self)}, batch1: {_name(batch1)}, "
                           f"batch2: {_name(batch2)}")
    if b1 != b2 or m != m2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b1}, {m}] but got: "
                           f"[{b2}, {m2}].")
    if batch2._data.dtype != self._data.dtype:  # (the kernel's own check)
        raise RuntimeError(f"expected scalar type {kind_name(self._data.dtype)} but found "
                           f"{kind_name(batch2._data.dtype)}")
    res = GRAD.quiet.run(_baddbmm, self._data, batch1._data, batch2._data, alpha, beta)  # (inf * 0 is nan, silently
    if GRAD.mode > 0 and (self._requires_grad or batch1._requires_grad or batch2._requires_grad):
        return record(BaddbmmBackward0, res, (self, batch1, batch2), alpha=alpha, beta=beta)
    return make(res)


def _baddbmm(a: np.ndarray, b1: np.ndarray, b2: np.ndarray, alpha, beta) -> np.ndarray:
    res = np.matmul(b1, b2)
    if alpha != 1:
        res *= alpha
    if beta != 0:  # beta = 0: self is ignored (its NaNs too), as PyTorch
        res += a if beta == 1 else a * beta
    return res


def outer(self, vec2):
    """PyTorch computes outer as `self.reshape(n, 1) * vec2` (so its nodes are MulBackward0 over ViewBackward0)."""
    if self._data.ndim != 1 or vec2._data.ndim != 1:
        bad, which = (self, "self") if self._data.ndim != 1 else (vec2, "vec2")
        raise RuntimeError(f"outer: Expected 1-D argument {which}, but got {bad._data.ndim}-D")
    return mul(reshape(self, (self._data.shape[0], 1)), vec2)


def _strides(a: np.ndarray) -> tuple:
    """Strides in elements, as PyTorch reports them (NumPy counts bytes)."""
    st, size = a.strides, a.itemsize
    if len(st) == 2:
        return (st[0] // size, st[1] // size)
    return tuple([s // size for s in st])


def _should_fold(t1: Tensor, t2: Tensor) -> bool:
    """at::matmul's choice between folding the batch into mm/mv and a broadcast bmm (PyTorch's should_fold)."""
    larger = t1._data.ndim >= t2._data.ndim
    big = t1._data if larger else np.swapaxes(t2._data, -1, -2)
    dim_small = t2._data.ndim if larger else t1._data.ndim
    if not (big.ndim >= 3 and dim_small <= 2):
        return False
    if (t2 if larger else t1)._requires_grad:
        return True
    if t1._data.ndim == 2:
        return False
    if big.size == 0:
        return True
    shape, st = big.shape, _strides(big)
    return all(st[i] == st[i + 1] * shape[i + 1] for i in range(big.ndim - 2))


def _squeeze0_(t: Tensor) -> Tensor:
    """`t.squeeze_(0)` on a fresh result: SqueezeBackward1, and the version counter moves to 1 (as PyTorch)."""
    res = t._data.reshape(t._data.shape[1:])
    if t._requires_grad and GRAD.mode > 0:
        out = record(SqueezeBackward4, res, (t,), dim=0, self_sym_sizes=t._data.shape)
    else:
        out = make(res)
    out._bump_version()
    return out


_squeeze0_ = forward_aware(_squeeze0_, (SqueezeBackward4,), "squeeze_")


def matmul(self, other):
    """Rank dispatch exactly as at::matmul, so the graph has the same nodes as PyTorch's:
    1-D @ 1-D is dot, 2-D @ 1-D mv, 1-D @ 2-D an unsqueezed mm, 2-D @ 2-D mm; a batch against a
    matrix or vector folds into mm/mv when PyTorch folds; everything else broadcasts and runs bmm.
    Under forward AD the ops it runs carry the tangents (Tensor's methods for the ones with a `dim`), so a
    reshaped operand that a node saves has its tangent too (forward over reverse reads it)."""
    if other.__class__ is not Tensor:
        other = as_operand(other)
        if not isinstance(other, Tensor):
            raise TypeError("matmul(): argument 'other' must be Tensor")
    d1, d2 = self._data.ndim, other._data.ndim
    if d1 == 2 and d2 == 2:  # first: a training loop's most common product
        return mm(self, other)
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(self, other)
    if d1 == 2 and d2 == 1:
        return mv(self, other)
    if d1 == 1 and d2 == 2:
        return _squeeze0_(mm(self.unsqueeze(0), other))
    if d1 == 2 and d2 == 2:
        return mm(self, other)
    if _should_fold(self, other):
        swap = d2 > d1
        t1 = transpose(other, -2, -1) if swap else self
        t2 = (t(self) if d1 == 2 else self) if swap else other
        sizes_1 = t1._data.shape
        output_shape = sizes_1[:-1]
        folded = int(np.prod(output_shape))
        t1_folded = reshape(t1, (folded, sizes_1[-1]))
        if t2._data.ndim == 2:
            output = _unsafe_view(mm(t1_folded, t2), output_shape + (t2._data.shape[1],))
            return contiguous(transpose(output, -2, -1)) if swap else output
        return _unsafe_view(mv(t1_folded, t2), output_shape)
    # broadcast the batch dims, fold them into one, bmm, unfold
    shape1, shape2 = self._data.shape, other._data.shape
    n = shape1[-2] if d1 > 1 else 1
    m1 = shape1[-1]
    m2 = shape2[0] if d2 == 1 else shape2[-2]
    p = shape2[-1] if d2 > 1 else 1
    batch1, batch2 = shape1[:max(d1 - 2, 0)], shape2[:max(d2 - 2, 0)]
    try:
        batch = tuple(np.broadcast_shapes(batch1, batch2))
    except ValueError:

        raise broadcast_error(make(np.empty(batch1)), make(np.empty(batch2))) from None
    bsz = int(np.prod(batch))
    a3 = reshape(expand(self, batch + (n, m1)), (bsz, n, m1))
    if d2 == 1:
        b3 = reshape(expand(other, batch + (m2,)), (bsz, m2)).unsqueeze(2)
    else:
        b3 = reshape(expand(other, batch + (m2, p)), (bsz, m2, p))
    out_shape = batch + ((n,) if d1 > 1 else ()) + ((p,) if d2 > 1 else ())
    out = bmm(a3, b3)
    return _unsafe_view(out.squeeze(-1) if d2 == 1 else out, out_shape)


def rmatmul(self, other):
    other = as_operand(other)
    return matmul(other, self)


def _two_matrices(self, other):
    """`x @ W`'s fast path, which the plain operator tries first (ops/__init__.py `_operator`; no level of forward AD
    is active then): two matrices go to mm itself, past matmul's rank dispatch and mm's forward-AD wrapper. None for
    any other operands."""
    if other.__class__ is Tensor and self._data.ndim == 2 and other._data.ndim == 2:
        return _mm(self, other)
    return None


_mm = mm  # (mm's declaration below makes the module's `mm` its forward-AD wrapper)
matmul.fast_path = _two_matrices

# == declarations ===============================================================================================
declare("matmul", matmul, operators={"__matmul__": matmul, "__rmatmul__": rmatmul},
        nodes=(MmBackward0, MvBackward0, DotBackward0, BmmBackward0, SqueezeBackward4), forward_nodes=(),
        samples=(Sample((((3, 4), "real"), ((4, 2), "real"))), Sample((((3, 4), "real"), ((4,), "real"))),
                 Sample((((4,), "real"), ((4,), "real"))), Sample((((4,), "real"), ((4, 2), "real"))),
                 Sample((((2, 3, 4), "real"), ((4, 2), "real"))), Sample((((2, 3, 4), "real"), ((2, 4, 5), "real")))))
declare("mm", mm, nodes=(MmBackward0,), samples=(Sample((((3, 4), "real"), ((4, 2), "real"))),))
declare("mv", mv, nodes=(MvBackward0,), samples=(Sample((((3, 4), "real"), ((4,), "real"))),))
declare("dot", dot, nodes=(DotBackward0,), samples=(Sample((((4,), "real"), ((4,), "real"))),))
declare("bmm", bmm, nodes=(BmmBackward0,), samples=(Sample((((2, 3, 4), "real"), ((2, 4, 5), "real"))),))
declare("baddbmm", baddbmm, nodes=(BaddbmmBackward0,),
        samples=(Sample((((2, 3, 5), "real"), ((2, 3, 4), "real"), ((2, 4, 5), "real"))),
                 Sample((((1, 3, 5), "real"), ((2, 3, 4), "real"), ((2, 4, 5), "real")),
                        kwargs={"beta": 0.5, "alpha": 2.0}),
                 Sample((((5,), "real"), ((2, 3, 4), "real"), ((2, 4, 5), "real")))))
declare("outer", outer, aliases=("ger",), samples=(Sample((((3,), "real"), ((4,), "real"))),))
declare("linear", linear, namespace="nn.functional", method=False, nodes=(AddmmBackward0,), forward_nodes=(),
        samples=(Sample((((5, 3), "real"), ((4, 3), "real"), ((4,), "real"))),
                 Sample((((2, 5, 3), "real"), ((4, 3), "real"), ((4,), "real"))),
                 Sample((((3,), "real"), ((4, 3), "real"))), Sample((((5, 3), "real"), ((4, 3), "real")))))


# -- einsum ------------------------------------------------------------------------------------------------------
def _einsum_parse(equation: str, ndims: list) -> tuple[list, str]:
    """The operands' subscripts and the output's, with `...` spelled out as letters and an implicit output
    (`"ij,jk"`) made explicit (its letters that appear once, in order), as NumPy and PyTorch read it."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    subs = lhs.split(",")
    if len(subs) != len(ndims):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(ndims) > len(subs) else "einsum(): fewer operands were provided than specified "
                           "in the equation")
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in eq]
    width = max((n - len(s.replace("...", "")) for s, n in zip(subs, ndims) if "..." in s), default=0)
    ell = "".join(spare[:width])
    subs = [s.replace("...", ell[width - (n - len(s.replace("...", ""))):]) for s, n in zip(subs, ndims)]
    if arrow:
        out = out.replace("...", ell)
    else:
        out = ell + "".join(sorted(c for c in set("".join(subs)) if c not in ell and "".join(subs).count(c) == 1))
    for s in subs:
        if len(set(s)) != len(s):
            raise NotImplementedError(f"minigrad does not implement einsum with an index repeated in one operand "
                                      f"({equation!r}, a diagonal)")
    return subs, out


def _einsum_grad(grad, tensors, subs: list, out: str, i: int):
    """d/d operand i: grad contracted with the other operands onto operand i's letters; a letter only operand i
    has (summed away) comes back by broadcasting."""
    others = [j for j in range(len(subs)) if j != i]
    keep = "".join(c for c in subs[i] if c in out or any(c in subs[j] for j in others))
    eq = ",".join([out] + [subs[j] for j in others]) + "->" + keep
    r = einsum(eq, grad, *(tensors[j] for j in others)) if xp.is_t(grad) else \
        np.einsum(eq, grad, *(xp.data(tensors[j]) for j in others))
    shape = tuple(xp.data(tensors[i]).shape)
    if keep == subs[i]:
        return r
    folded = tuple(shape[k] if c in keep else 1 for k, c in enumerate(subs[i]))
    return r.reshape(folded).expand(*shape) if xp.is_t(r) else np.broadcast_to(r.reshape(folded), shape).copy()


EinsumBackward = rule("EinsumBackward", "tensors[]", saves="tensors _subs _out",
                      text="grad_tensors[i] = einsum(grad with the other operands -> operand i's indices)",
                      tensors=lambda grad, tensors, _subs, _out:
                      [_einsum_grad(grad, tensors, _subs, _out, i) for i in range(len(tensors))])


def einsum(equation: str, *operands) -> Tensor:
    """Sums of products named by index letters: `einsum("ij,jk->ik", a, b)` is a @ b. minigrad computes it in one
    step (one EinsumBackward node) where PyTorch records the permutes, views and bmm it is made of."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ts = [as_operand(t) for t in operands]
    subs, out = _einsum_parse(equation, [t._data.ndim for t in ts])
    eq = ",".join(subs) + "->" + out
    dt = np.result_type(*(t._data.dtype for t in ts))
    res = np.asarray(np.einsum(eq, *(t._data.astype(dt, copy=False) for t in ts)), dt)
    if GRAD.mode > 0 and any(t._requires_grad for t in ts):
        return record(EinsumBackward, res, tuple(ts), _subs=subs, _out=out)
    return make(res)


declare("einsum", einsum, method=False, nodes=(EinsumBackward,))


# -- cdist -------------------------------------------------------------------------------------------------------
def _unsq(x, dim: int):
    return x.unsqueeze(dim) if xp.is_t(x) else np.expand_dims(x, dim)


def _cdist_grad(grad, x1, x2, p: float, result):
    """d/dx1 of ‖x1_i - x2_j‖_p, as PyTorch's _cdist_backward: each difference's sign(d)·|d|^(p-1) / dist^(p-1)
    (0 where a distance is 0, NaN where d is; p = 1 is grad·sign(d) alone), weighted by grad, summed over j from +0.
    x2's gradient is this with the roles swapped (so its differences are x2_j - x1_i, as PyTorch's)."""
    diff = _unsq(x1, -2) - _unsq(x2, -3)  # (..., P, R, M)
    dist = _unsq(result, -1)
    if p == 1:
        dd = xp.data(diff)
        weighted = xp.where(np.isnan(dd), dd, xp.sign(diff)) * _unsq(grad, -1)
    else:
        safe = xp.where(xp.data(dist) == 0, 1.0, dist)
        ratio = diff / safe if p == 2 else xp.sign(diff) * xp.abs(diff) ** (p - 1) / safe ** (p - 1)
        weighted = xp.where(xp.data(dist) == 0, 0.0, ratio) * _unsq(grad, -1)
    total = weighted.sum(-2)
    return total if xp.is_t(total) else total + 0.0  # (a sum of -0.s is +0. in PyTorch's accumulator)


CdistBackward0 = rule("CdistBackward0", "x1 x2", saves="x1 x2 p result",
                      text="grad_x1[i] = Σ_j grad[i,j] · sign(d)|d|^(p-1) / dist[i,j]^(p-1), d = x1[i] - x2[j]; "
                           "grad_x2 the same with the roles swapped",
                      x1=lambda grad, x1, x2, p, result: _cdist_grad(grad, x1, x2, p, result),
                      x2=lambda grad, x1, x2, p, result:
                      _cdist_grad(xp.transpose(grad, -1, -2), x2, x1, p, xp.transpose(result, -1, -2)))


def _cdist(a: np.ndarray, b: np.ndarray, p: float) -> np.ndarray:
    diff = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return (diff != 0).sum(-1).astype(a.dtype)
    if p == np.inf:
        return diff.max(-1, initial=0)
    return (diff ** p).sum(-1) ** (1 / p)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each row of x1 (..., P, M) and each row of x2 (..., R, M): (..., P, R).
    (minigrad always takes the direct path, PyTorch's for small inputs; PyTorch's matmul path for p = 2 and more
    than 25 rows records other nodes.)"""
    a, b = x1._data, x2._data
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}")
    res = np.asarray(GRAD.quiet.run(_cdist, a, b, p), np.result_type(a, b))  # (inf - inf is nan, as PyTorch's)
    if GRAD.mode > 0 and (x1._requires_grad or x2._requires_grad):
        return record(CdistBackward0, res, (x1, x2), p=p)
    return make(res)


declare("cdist", cdist, method=False, nodes=(CdistBackward0,),
        samples=(Sample((((3, 4), "real"), ((5, 4), "real")), second_order=False),
                 Sample((((2, 3, 4), "real"), ((2, 5, 4), "real")), (1.0,), second_order=False),
                 Sample((((3, 2), "real"), ((4, 2), "real")), (3.0,), second_order=False)))
