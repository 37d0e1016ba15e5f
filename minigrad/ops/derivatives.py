"""The derivative table: one row per differentiable op, named as PyTorch names its node.

Read it like PyTorch's derivatives.yaml. A row names the node class, the op's inputs, the
non-tensor values the node keeps (PyTorch shows them as `_saved_<name>`), and for each input the
gradient formula. Formulas take `grad` and whatever else they read, by name; they use only
operators and `_dual` helpers, so they run on arrays and, for create_graph, on Tensors.
Gradients of broadcast inputs are summed back to the input's shape by the engine.
"""

from __future__ import annotations

from . import _dual as D
from ._record import rule

# -- arithmetic ---------------------------------------------------------------------------------
AddBackward0 = rule("AddBackward0", "self other", saves="alpha", defaults={"alpha": 1},
                    text="grad_self = grad, grad_other = grad * alpha",
                    self=lambda grad: grad,
                    other=lambda grad, alpha: grad if alpha == 1 else grad * alpha)
SubBackward0 = rule("SubBackward0", "self other", saves="alpha", defaults={"alpha": 1},
                    text="grad_self = grad, grad_other = -grad * alpha",
                    self=lambda grad: grad,
                    other=lambda grad, alpha: -grad if alpha == 1 else -grad * alpha)
RsubBackward1 = rule("RsubBackward1", "self", saves="alpha", defaults={"alpha": 1}, text="grad_self = -grad * alpha",
                     self=lambda grad, alpha: -grad if alpha == 1 else -grad * alpha)
MulBackward0 = rule("MulBackward0", "self other", saves="self other",
                    text="grad_self = grad * other, grad_other = grad * self",
                    self=lambda grad, other: grad * other,
                    other=lambda grad, self: grad * self)
DivBackward0 = rule("DivBackward0", "self other", saves="self other",
                    text="grad_self = grad / other, grad_other = -grad * self / other²",
                    self=lambda grad, other: grad / other,
                    other=lambda grad, self, other: -grad * self / (other * other))
DivBackward2 = rule("DivBackward2", "self other", saves="self other rounding_mode",
                    text="grad_self = 0, grad_other = 0  (rounded division is flat almost everywhere)",
                    self=lambda grad, self, other: D.zeros_like(grad),
                    other=lambda grad, self, other: D.zeros_like(grad))
RemainderBackward0 = rule("RemainderBackward0", "self", text="grad_self = grad  (other is a number)",
                          self=lambda grad: grad)
RemainderBackward1 = rule("RemainderBackward1", "self other", saves="self other",
                          text="grad_self = grad, grad_other = -grad * floor(self / other)",
                          self=lambda grad: grad,
                          other=lambda grad, self, other: -grad * _floor_div(D.data(self), D.data(other)))
NegBackward0 = rule("NegBackward0", "self", text="grad_self = -grad", self=lambda grad: -grad)
ReciprocalBackward0 = rule("ReciprocalBackward0", "self", saves="result", text="grad_self = -grad * result²",
                           self=lambda grad, result: -grad * result * result)
PowBackward0 = rule("PowBackward0", "self", saves="self exponent",
                    text="grad_self = grad * exponent * self^(exponent - 1)",
                    self=lambda grad, self, exponent:
                    D.zeros_like(grad) if exponent == 0 else grad * exponent * self ** (exponent - 1))
PowBackward1 = rule("PowBackward1", "self exponent", saves="self exponent result",
                    text="grad_self = grad * exponent * self^(exponent - 1), grad_exponent = grad * result * log(self)",
                    self=lambda grad, self, exponent:
                    D.where(D.data(exponent) == 0, 0.0, grad * exponent * self ** (exponent - 1)),
                    exponent=lambda grad, self, exponent, result:
                    grad * D.where((D.data(self) == 0) & (D.data(exponent) >= 0), 0.0, result * D.log(self)))
PowBackward2 = rule("PowBackward2", "exponent", saves="exponent result self",
                    text="grad_exponent = grad * result * log(self)  (self is a number)",
                    exponent=lambda grad, self, exponent, result:
                    grad * D.where((self == 0) & (D.data(exponent) >= 0), 0.0, result * _log_scalar(self)))

# -- elementwise functions ------------------------------------------------------------------------
ExpBackward0 = rule("ExpBackward0", "self", saves="result", text="grad_self = grad * result  (result = exp(self))",
                    self=lambda grad, result: grad * result)
LogBackward0 = rule("LogBackward0", "self", saves="self", text="grad_self = grad / self",
                    self=lambda grad, self: grad / self)
SinBackward0 = rule("SinBackward0", "self", saves="self", text="grad_self = grad * cos(self)",
                    self=lambda grad, self: grad * D.cos(self))
CosBackward0 = rule("CosBackward0", "self", saves="self", text="grad_self = grad * -sin(self)",
                    self=lambda grad, self: grad * -D.sin(self))
TanhBackward0 = rule("TanhBackward0", "self", saves="result", text="grad_self = grad * (1 - result²)",
                     self=lambda grad, result: D.tanh_backward(grad, result))
SigmoidBackward0 = rule("SigmoidBackward0", "self", saves="result", text="grad_self = grad * result * (1 - result)",
                        self=lambda grad, result: D.sigmoid_backward(grad, result))
# PyTorch's fused backward ops: with create_graph, the two rules above record one node each (as PyTorch)
TanhBackwardBackward0 = rule("TanhBackwardBackward0", "grad_output output", saves="grad_output output",
                             text="grad_grad_output = grad * (1 - output²), "
                                  "grad_output = grad * -2 * output * grad_output",
                             grad_output=lambda grad, output: D.tanh_backward(grad, output),
                             output=lambda grad, grad_output, output: grad * (-2 * output * grad_output))
SigmoidBackwardBackward0 = rule("SigmoidBackwardBackward0", "grad_output output", saves="grad_output output",
                                text="grad_grad_output = grad * output * (1 - output), "
                                     "grad_output = grad * grad_output * (1 - 2 * output)",
                                grad_output=lambda grad, output: D.sigmoid_backward(grad, output),
                                output=lambda grad, grad_output, output: grad * grad_output * (-2 * output + 1))
ReluBackward0 = rule("ReluBackward0", "self", saves="result", text="grad_self = grad * (result > 0)",
                     self=lambda grad, result: grad * (D.data(result) > 0))
AbsBackward0 = rule("AbsBackward0", "self", saves="self", text="grad_self = grad * sign(self)",
                    self=lambda grad, self: grad * D.sign(D.data(self)))
SqrtBackward0 = rule("SqrtBackward0", "self", saves="result", text="grad_self = grad / (2 * result)",
                     self=lambda grad, result: grad / (2 * result))

# -- reductions -------------------------------------------------------------------------------------
SumBackward0 = rule("SumBackward0", "self", saves="self_sym_sizes",
                    text="grad_self = grad expanded to self's shape (every element gets grad)",
                    self=lambda grad, self_sym_sizes: D.expand(grad, self_sym_sizes))
SumBackward1 = rule("SumBackward1", "self", saves="dim keepdim self_sym_sizes",
                    text="grad_self = grad expanded back over the summed dims",
                    self=lambda grad, dim, keepdim, self_sym_sizes:
                    D.reduced_expand(grad, self_sym_sizes, dim, keepdim))
MeanBackward0 = rule("MeanBackward0", "self", saves="self_sym_numel self_sym_sizes",
                     text="grad_self = grad / numel, expanded to self's shape",
                     self=lambda grad, self_sym_numel, self_sym_sizes:
                     D.expand(grad / self_sym_numel, self_sym_sizes))
MeanBackward1 = rule("MeanBackward1", "self", saves="dim keepdim self_sym_numel self_sym_sizes",
                     text="grad_self = grad / (count over dim), expanded back over dim",
                     self=lambda grad, dim, keepdim, self_sym_numel, self_sym_sizes:
                     D.reduced_expand(grad, self_sym_sizes, dim, keepdim) / _reduced_count(self_sym_sizes, dim))

# -- linear algebra ---------------------------------------------------------------------------------
def _element_strides(node, byte_strides: tuple) -> tuple:
    """mm saves NumPy's byte strides (cheap to read); introspection shows PyTorch's element strides."""
    size = node._input_metadata[0][1].itemsize
    return tuple(st // size for st in byte_strides)


MmBackward0 = rule("MmBackward0", "self mat2",
                   saves="self mat2 self_sym_sizes self_sym_strides mat2_sym_sizes mat2_sym_strides",
                   text="grad_self = grad @ mat2ᵀ, grad_mat2 = selfᵀ @ grad",
                   self=lambda grad, mat2: D.mm(grad, D.t(mat2)),
                   mat2=lambda grad, self: D.mm(D.t(self), grad),
                   shown={"self_sym_strides": _element_strides, "mat2_sym_strides": _element_strides})
MvBackward0 = rule("MvBackward0", "self vec", saves="self vec",
                   text="grad_self = outer(grad, vec), grad_vec = selfᵀ @ grad",
                   self=lambda grad, vec: D.outer(grad, vec),
                   vec=lambda grad, self: D.t(self) @ grad)
DotBackward0 = rule("DotBackward0", "self tensor", saves="self tensor",
                    text="grad_self = grad * tensor, grad_tensor = grad * self",
                    self=lambda grad, tensor: grad * tensor,
                    tensor=lambda grad, self: grad * self)
BmmBackward0 = rule("BmmBackward0", "self mat2", saves="self mat2",
                    text="grad_self = grad @ mat2ᵀ (per batch), grad_mat2 = selfᵀ @ grad (per batch)",
                    self=lambda grad, mat2: grad @ D.transpose(mat2, 1, 2),
                    mat2=lambda grad, self: D.transpose(self, 1, 2) @ grad)

# -- shape and views ----------------------------------------------------------------------------------
ViewBackward0 = rule("ViewBackward0", "self", saves="self_sym_sizes", text="grad_self = grad.reshape(self's shape)",
                     self=lambda grad, self_sym_sizes: D.reshape(grad, self_sym_sizes))
ReshapeAliasBackward0 = rule("ReshapeAliasBackward0", "self", saves="self_sym_sizes",
                             text="grad_self = grad.reshape(self's shape)",
                             self=lambda grad, self_sym_sizes: D.reshape(grad, self_sym_sizes))
UnsafeViewBackward0 = rule("UnsafeViewBackward0", "self", saves="self_sym_sizes",
                           text="grad_self = grad.reshape(self's shape)",
                           self=lambda grad, self_sym_sizes: D.reshape(grad, self_sym_sizes))
TBackward0 = rule("TBackward0", "self", text="grad_self = gradᵀ", self=lambda grad: D.t(grad))
TransposeBackward0 = rule("TransposeBackward0", "self", saves="dim0 dim1",
                          text="grad_self = grad.transpose(dim0, dim1)",
                          self=lambda grad, dim0, dim1: D.transpose(grad, dim0, dim1))
PermuteBackward0 = rule("PermuteBackward0", "self", saves="dims", text="grad_self = grad.permute(inverse of dims)",
                        self=lambda grad, dims: D.permute(grad, _inverse_perm(dims)))
ExpandBackward0 = rule("ExpandBackward0", "self", saves="self_sym_sizes",
                       text="grad_self = grad summed over the expanded dims",
                       self=lambda grad, self_sym_sizes: D.sum_to(grad, self_sym_sizes))
UnsqueezeBackward0 = rule("UnsqueezeBackward0", "self", saves="dim", text="grad_self = grad.squeeze(dim)",
                          self=lambda grad, dim: D.squeeze_dims(grad, (dim,)))
SqueezeBackward0 = rule("SqueezeBackward0", "self", saves="self_sym_sizes",
                        text="grad_self = grad.reshape(self's shape)",
                        self=lambda grad, self_sym_sizes: D.reshape(grad, self_sym_sizes))
SqueezeBackward1 = rule("SqueezeBackward1", "self", saves="dim self_sym_sizes", text="grad_self = grad.unsqueeze(dim)",
                        self=lambda grad, dim, self_sym_sizes: D.reshape(grad, self_sym_sizes))
SqueezeBackward2 = rule("SqueezeBackward2", "self", saves="dim self_sym_sizes", text="grad_self = grad.unsqueeze(dims)",
                        self=lambda grad, dim, self_sym_sizes: D.reshape(grad, self_sym_sizes))
UnbindBackward0 = rule("UnbindBackward0", "self", saves="dim",
                       text="grad_self = stack(grads, dim)  (missing pieces count as 0)", multi=True,
                       self=lambda grads, dim: D.stack(grads, dim))
CloneBackward0 = rule("CloneBackward0", "self", text="grad_self = grad", self=lambda grad: grad)
AliasBackward0 = rule("AliasBackward0", "self", text="grad_self = grad", self=lambda grad: grad)
ToCopyBackward0 = rule("ToCopyBackward0", "self", saves="self_dtype", text="grad_self = grad cast back to self's dtype",
                       self=lambda grad, self_dtype: _cast(grad, self_dtype))

# -- in-place fills and copies (the tensor's old value gets no gradient) ----------------------------------------
ZeroBackward0 = rule("ZeroBackward0", "self", text="grad_self = 0  (every element was overwritten)",
                     self=lambda grad: D.zeros_like(grad))
FillBackward2 = rule("FillBackward2", "self", text="grad_self = 0  (every element was overwritten)",
                     self=lambda grad: D.zeros_like(grad))
FillBackward3 = rule("FillBackward3", "self value", text="grad_self = 0  (overwritten), grad_value = sum(grad)",
                     self=lambda grad: D.zeros_like(grad),
                     value=lambda grad: grad.sum())
CopyBackwards = rule("CopyBackwards", "self src", text="grad_self = 0 (overwritten), grad_src = grad",
                     self=lambda grad: D.zeros_like(grad),
                     src=lambda grad: grad)
CopyBackwards.name = lambda self: "minigrad::autograd::CopyBackwards"
SqueezeBackward4 = rule("SqueezeBackward4", "self", saves="dim self_sym_sizes",
                        text="grad_self = grad.unsqueeze(dim)",  # squeeze_(dim), in place
                        self=lambda grad, dim, self_sym_sizes: D.reshape(grad, self_sym_sizes))

# -- indexing -----------------------------------------------------------------------------------------
SelectBackward0 = rule("SelectBackward0", "self", saves="dim index self_sym_sizes",
                       text="grad_self = zeros(self's shape) with grad written at [index] along dim",
                       self=lambda grad, dim, index, self_sym_sizes: D.scatter_into(
                           grad, self_sym_sizes, _select_key(dim, index), False, "SelectBackwardBackward0"))
SliceBackward0 = rule("SliceBackward0", "self", saves="dim start end step self_sym_sizes",
                      text="grad_self = zeros(self's shape) with grad written at [start:end:step] along dim",
                      self=lambda grad, dim, start, end, step, self_sym_sizes: D.scatter_into(
                          grad, self_sym_sizes, _slice_key(dim, start, end, step), False, "SliceBackwardBackward0"))
IndexBackward0 = rule("IndexBackward0", "self", saves="indices self_sym_sizes",
                      text="grad_self = zeros(self's shape) with grad added at the indexed places",
                      self=lambda grad, indices, self_sym_sizes: D.scatter_into(
                          grad, self_sym_sizes, indices, True, "IndexPutImplBackward0"))


# -- small helpers the formulas use ---------------------------------------------------------------------
def _floor_div(a, b):
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        return np.floor_divide(a, b)


def _no_derivative(grad, _op):
    raise RuntimeError(f"derivative for aten::{_op} is not implemented")


# PyTorch's `NotImplemented` node: an op without a derivative records it (passing `_op=` its name), and
# backward through it raises. One class per number of inputs.
_NOT_IMPLEMENTED = (
    rule("NotImplemented", "self", saves="_op", text="no derivative: backward through this op raises",
         self=_no_derivative),
    rule("NotImplemented", "self other", saves="_op", text="no derivative: backward through this op raises",
         self=_no_derivative, other=_no_derivative),
)
for _cls in _NOT_IMPLEMENTED:
    _cls.name = lambda self: "minigrad::autograd::NotImplemented"


def not_implemented(n_inputs: int) -> type:
    return _NOT_IMPLEMENTED[n_inputs - 1]


def _log_scalar(x):
    import math

    return math.log(x) if x > 0 else -math.inf if x == 0 else math.nan


def _reduced_count(sizes: tuple, dims: tuple) -> int:
    n = 1
    for d in dims:
        n *= sizes[d % len(sizes)] if sizes else 1
    return n


def _inverse_perm(dims):
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return tuple(inv)


def _cast(g, np_dtype):
    return g.to(np_dtype) if D.is_t(g) else g.astype(np_dtype)


def _select_key(dim: int, index: int):
    return (slice(None),) * dim + (index,)


def _slice_key(dim: int, start: int, end: int, step: int):
    return (slice(None),) * dim + (slice(start, end, step),)


# -- more elementwise (the full operator set) ----------------------------------------------------------
Log1PBackward0 = rule("Log1PBackward0", "self", saves="self", text="grad_self = grad / (self + 1)",
                      self=lambda grad, self: grad / (self + 1))
TanBackward0 = rule("TanBackward0", "self", saves="result", text="grad_self = grad * (1 + result²)",
                    self=lambda grad, result: grad * (1 + result * result))
RsqrtBackward0 = rule("RsqrtBackward0", "self", saves="result", text="grad_self = -0.5 * grad * result³",
                      self=lambda grad, result: -0.5 * grad * result * result * result)
Exp2Backward0 = rule("Exp2Backward0", "self", saves="result", text="grad_self = grad * result * ln 2",
                     self=lambda grad, result: grad * result * _LN2)
SignBackward0 = rule("SignBackward0", "self", text="grad_self = 0  (sign is flat almost everywhere)",
                     self=lambda grad: D.zeros_like(grad))
FloorBackward0 = rule("FloorBackward0", "self", text="grad_self = 0", self=lambda grad: D.zeros_like(grad))
CeilBackward0 = rule("CeilBackward0", "self", text="grad_self = 0", self=lambda grad: D.zeros_like(grad))
RoundBackward0 = rule("RoundBackward0", "self", text="grad_self = 0", self=lambda grad: D.zeros_like(grad))
RoundBackward1 = rule("RoundBackward1", "self", text="grad_self = 0", self=lambda grad: D.zeros_like(grad))
TruncBackward0 = rule("TruncBackward0", "self", text="grad_self = 0", self=lambda grad: D.zeros_like(grad))
ClampBackward1 = rule("ClampBackward1", "self", saves="self min max", text="grad_self = grad * (min <= self <= max)",
                      self=lambda grad, self, min, max: grad * _in_bounds(D.data(self), min, max))
ClampBackward0 = rule("ClampBackward0", "self min max", saves="self min max",
                      text="grad_self = grad * (min <= self <= max), grad_min = grad * (self < min), "
                           "grad_max = grad * (self > max)",
                      self=lambda grad, self, min, max: grad * _in_bounds(D.data(self), D.data(min), D.data(max)),
                      min=lambda grad, self, min, max: grad * _clamp_min_mask(D.data(self), D.data(min), D.data(max)),
                      max=lambda grad, self, min, max: grad * _clamp_max_mask(D.data(self), D.data(min), D.data(max)))
ClampMinBackward0 = rule("ClampMinBackward0", "self", saves="self min", text="grad_self = grad * (self >= min)",
                         self=lambda grad, self, min: grad * _in_bounds(D.data(self), min, None))
ClampMaxBackward0 = rule("ClampMaxBackward0", "self", saves="self max", text="grad_self = grad * (self <= max)",
                         self=lambda grad, self, max: grad * _in_bounds(D.data(self), None, max))
ClampMinBackward1 = rule("ClampMinBackward1", "self min", saves="self min",
                         text="grad_self = grad * (self >= min), grad_min = grad * (self < min)",
                         self=lambda grad, self, min: grad * (D.data(self) >= D.data(min)),
                         min=lambda grad, self, min: grad * (D.data(self) < D.data(min)))
ClampMaxBackward1 = rule("ClampMaxBackward1", "self max", saves="self max",
                         text="grad_self = grad * (self <= max), grad_max = grad * (self > max)",
                         self=lambda grad, self, max: grad * (D.data(self) <= D.data(max)),
                         max=lambda grad, self, max: grad * (D.data(self) > D.data(max)))
MaximumBackward0 = rule("MaximumBackward0", "self other", saves="self other",
                        text="grad_self = grad * (self > other) (ties: half), grad_other = grad * (other > self)",
                        self=lambda grad, self, other: grad * _pick_weight(D.data(self), D.data(other)),
                        other=lambda grad, self, other: grad * _pick_weight(D.data(other), D.data(self)))
MinimumBackward0 = rule("MinimumBackward0", "self other", saves="self other",
                        text="grad_self = grad * (self < other) (ties: half), grad_other = grad * (other < self)",
                        self=lambda grad, self, other: grad * _pick_weight(-D.data(self), -D.data(other)),
                        other=lambda grad, self, other: grad * _pick_weight(-D.data(other), -D.data(self)))
MaskedFillBackward0 = rule("MaskedFillBackward0", "self", saves="mask", text="grad_self = grad * ~mask",
                           self=lambda grad, mask: grad * ~mask)
MaskedFillBackward1 = rule("MaskedFillBackward1", "self value", saves="mask",
                           text="grad_self = grad * ~mask, grad_value = sum(grad * mask)",
                           self=lambda grad, mask: grad * ~mask,
                           value=lambda grad, mask: (grad * mask).sum())
LeakyReluBackward0 = rule("LeakyReluBackward0", "self", saves="self negative_slope",
                          text="grad_self = grad * (1 if self > 0 else negative_slope)",
                          self=lambda grad, self, negative_slope:
                          grad * D.where(D.data(self) > 0, 1.0, negative_slope))
GeluBackward0 = rule("GeluBackward0", "self", saves="self approximate", text="grad_self = grad * gelu'(self)",
                     self=lambda grad, self, approximate: grad * _gelu_grad(self))

_LN2 = 0.6931471805599453


def _in_bounds(x, lo, hi):
    """PyTorch's clamp gradient mask: 1 where min <= x <= max (so clamp(min=0)'(0) = 1)."""
    import numpy as np

    ok = np.ones(np.shape(x), bool)
    if lo is not None:
        ok &= x >= lo
    if hi is not None:
        ok &= x <= hi
    return ok


def _clamp_min_mask(x, lo, hi):
    """Where the lower bound wins (PyTorch: x < min, and min < max when both bounds are given)."""
    return (x < lo) if hi is None else (x < lo) & (lo < hi)


def _clamp_max_mask(x, lo, hi):
    """Where the upper bound wins (PyTorch: x > max, or max < min when both bounds are given)."""
    return (x > hi) if lo is None else (x > hi) | (hi < lo)


def _pick_weight(mine, other):
    """maximum's gradient: 1 where this input wins, 1/2 on ties (PyTorch splits ties evenly)."""
    import numpy as np

    return np.where(mine > other, 1.0, np.where(mine == other, 0.5, 0.0)).astype(np.result_type(mine, other))


def _gelu_grad(x):
    import math

    cdf = 0.5 * (1 + D.erf(x / math.sqrt(2)))
    pdf = D.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return cdf + x * pdf
ErfBackward0 = rule("ErfBackward0", "self", saves="self", text="grad_self = grad * 2/√π * exp(-self²)",
                    self=lambda grad, self: grad * 1.1283791670955126 * D.exp(-(self * self)))

# -- more reductions -------------------------------------------------------------------------------------
ProdBackward0 = rule("ProdBackward0", "self", saves="self result",
                     text="grad_self = grad * result / self  (the product of the other elements)",
                     self=lambda grad, self, result: _prod_grad(grad, self, result, None, False))
ProdBackward1 = rule("ProdBackward1", "self", saves="self result dim keepdim",
                     text="grad_self = grad * (product of the other elements along dim)",
                     self=lambda grad, self, result, dim, keepdim: _prod_grad(grad, self, result, dim, keepdim))
MaxBackward1 = rule("MaxBackward1", "self", saves="self result",
                    text="grad_self = grad at the max element(s), 0 elsewhere (ties share it)",
                    self=lambda grad, self, result: _evenly(grad, self, result))
MinBackward1 = rule("MinBackward1", "self", saves="self result",
                    text="grad_self = grad at the min element(s), 0 elsewhere (ties share it)",
                    self=lambda grad, self, result: _evenly(grad, self, result))
MaxBackward0 = rule("MaxBackward0", "self", saves="dim keepdim indices self_sym_sizes",
                    text="grad_self = grad scattered to the argmax along dim, 0 elsewhere",
                    self=lambda grad, dim, keepdim, indices, self_sym_sizes:
                    _select_back(grad, dim, keepdim, indices, self_sym_sizes))
MinBackward0 = rule("MinBackward0", "self", saves="dim keepdim indices self_sym_sizes",
                    text="grad_self = grad scattered to the argmin along dim, 0 elsewhere",
                    self=lambda grad, dim, keepdim, indices, self_sym_sizes:
                    _select_back(grad, dim, keepdim, indices, self_sym_sizes))
AmaxBackward0 = rule("AmaxBackward0", "self", saves="self result dim keepdim",
                     text="grad_self = grad split evenly among the max elements along dim",
                     self=lambda grad, self, result, dim, keepdim: _amax_grad(grad, self, result, dim, keepdim))
AminBackward0 = rule("AminBackward0", "self", saves="self result dim keepdim",
                     text="grad_self = grad split evenly among the min elements along dim",
                     self=lambda grad, self, result, dim, keepdim: _amax_grad(grad, self, result, dim, keepdim))
VarBackward0 = rule("VarBackward0", "self", saves="self correction dim keepdim",
                    text="grad_self = grad * 2 * (self - mean) / (N - correction)",
                    self=lambda grad, self, correction, dim, keepdim: _var_grad(grad, self, correction, dim, keepdim))
StdBackward0 = rule("StdBackward0", "self", saves="self result correction dim keepdim",
                    text="grad_self = grad * (self - mean) / ((N - correction) * result)",
                    self=lambda grad, self, result, correction, dim, keepdim:
                    _var_grad(_safe_div(grad, 2 * result, D.data(result) == 0), self, correction, dim, keepdim))
LinalgVectorNormBackward0 = rule("LinalgVectorNormBackward0", "self", saves="self result ord dim keepdim",
                                 text="grad_self = grad * self * |self|^(ord-2) / result^(ord-1)  "
                                      "(ord 2: self / result)",
                                 self=lambda grad, self, result, ord, dim, keepdim:
                                 _norm_grad(grad, self, result, ord, dim, keepdim))
LogsumexpBackward0 = rule("LogsumexpBackward0", "self", saves="self result dim keepdim",
                          text="grad_self = grad * exp(self - result)",
                          self=lambda grad, self, result, dim, keepdim:
                          _keep(grad, dim, keepdim, self) * D.exp(self - _keep(result, dim, keepdim, self)))
SoftmaxBackward0 = rule("SoftmaxBackward0", "self", saves="result dim",
                        text="grad_self = result * (grad - sum(grad * result, dim))",
                        self=lambda grad, result, dim: result * (grad - D.sum_keep(grad * result, dim)))
LogSoftmaxBackward0 = rule("LogSoftmaxBackward0", "self", saves="result dim",
                           text="grad_self = grad - exp(result) * sum(grad, dim)",
                           self=lambda grad, result, dim: grad - D.exp(result) * D.sum_keep(grad, dim))
CumsumBackward0 = rule("CumsumBackward0", "self", saves="dim",
                       text="grad_self = reversed cumulative sum of grad along dim",
                       self=lambda grad, dim: D.sum_keep(grad, dim) - D.cumsum(grad, dim) + grad)


def _keep(g, dim, keepdim, like):
    """Put the reduced dims back (size 1) so `g` broadcasts against the input."""
    nd = len(like.shape)
    if dim is None:
        return D.reshape(g, (1,) * nd)
    dims = tuple(d % nd for d in ((dim,) if isinstance(dim, int) else dim)) if nd else ()
    return g if keepdim or not dims else D.unsqueeze_dims(g, dims)


def _sizes(x):
    return tuple(x.shape)


def _evenly(grad, self, result):
    """Gradient of a full max/min: shared equally between all elements equal to the result."""
    import numpy as np

    s, r = D.data(self), D.data(result)
    mask = np.isnan(s) if np.isnan(r) else (s == r)
    share = grad / int(mask.sum())
    if D.is_t(grad):  # as PyTorch: zeros.masked_fill_(mask, grad / count), so MaskedFillBackward1 when differentiated
        from .._tensor import make

        return make(np.zeros(s.shape, s.dtype)).masked_fill_(make(mask), share)
    return np.where(mask, share, np.zeros((), s.dtype))


def _select_back(grad, dim, keepdim, indices, sizes):
    """max(dim)/min(dim): the gradient goes to the selected index only."""
    import numpy as np

    if not sizes:  # a 0-d input: the only element was selected
        return grad
    dim = dim % len(sizes)
    idx = indices if keepdim else np.expand_dims(indices, dim)
    g = grad if keepdim else D.unsqueeze_dims(grad, (dim,))
    mask = np.zeros(sizes, bool)
    np.put_along_axis(mask, idx, True, axis=dim)
    return D.expand(g, sizes) * mask


def _amax_grad(grad, self, result, dim, keepdim):
    s = D.data(self)
    r = D.data(_keep(D.data(result), dim, keepdim, s))
    mask = s == r
    count = mask.sum(axis=tuple(d % s.ndim for d in dim) if s.ndim else None, keepdims=True)
    return _keep(grad, dim, keepdim, s) * (mask / count).astype(s.dtype)


def _var_grad(grad, self, correction, dim, keepdim):
    import numpy as np

    s = D.data(self)
    dims = tuple(range(s.ndim)) if dim is None else tuple(d % max(s.ndim, 1) for d in dim)
    n = int(np.prod([s.shape[d] for d in dims])) if s.ndim else 1
    centered = self - (self.mean(dims, keepdim=True) if D.is_t(self) else s.mean(axis=dims, keepdims=True))
    return _keep(grad, dims if dim is not None else None, keepdim, s) * centered * (2.0 / (n - correction))


def _safe_div(a, b, zero_mask):
    """a / b, with 0 where b is 0 (PyTorch's std and norm at 0).

    Written as PyTorch writes it, `(a / b).masked_fill_(b == 0, 0)`: the division itself is not
    protected, so the second derivative at 0 is nan exactly where PyTorch's is.
    """
    import numpy as np

    if D.is_t(a) or D.is_t(b):
        return D.where(zero_mask, 0.0, a / b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(zero_mask, 0.0, a / b).astype(np.result_type(a, b))


def _norm_grad(grad, self, result, ord, dim, keepdim):
    import numpy as np

    s = D.data(self)
    g = _keep(grad, dim, keepdim, s)
    r = _keep(result, dim, keepdim, s)
    if ord == 2:
        return g * _safe_div(self, r, D.data(r) == 0)
    if ord == 1:
        return g * np.sign(s).astype(s.dtype)
    if ord == 0:
        return D.zeros_like(self)
    if ord in (float("inf"), float("-inf")):
        mask = np.abs(s) == D.data(r)
        count = mask.sum(axis=None if dim is None else tuple(d % s.ndim for d in dim), keepdims=True)
        return g * (np.sign(s) * mask / count).astype(s.dtype)
    absx = D.abs(self)
    return g * _safe_div(self * absx ** (ord - 2), r ** (ord - 1), D.data(r) == 0)


def _prod_grad(grad, self, result, dim, keepdim):
    """Product rule, safe when the input has zeros (no division by zero)."""
    import numpy as np

    s = D.data(self)
    if not (s == 0).any():
        return _keep(grad, dim, keepdim, s) * (_keep(result, dim, keepdim, s) / self)
    axis = None if dim is None else dim[0] if isinstance(dim, tuple) else dim
    if D.is_t(self):
        return _keep(grad, dim, keepdim, s) * _prod_of_others(self, axis)
    flat = s.reshape(-1) if axis is None else np.moveaxis(s, axis, -1)
    left = np.cumprod(np.concatenate([np.ones_like(flat[..., :1]), flat[..., :-1]], -1), -1)
    right = np.flip(np.cumprod(np.concatenate([np.ones_like(flat[..., :1]), np.flip(flat, -1)[..., :-1]], -1), -1),
                    -1)
    others = left * right
    others = others.reshape(s.shape) if axis is None else np.moveaxis(others, -1, axis)
    return _keep(grad, dim, keepdim, s) * others


def _prod_of_others(x, axis):
    """For each element, the product of the other elements along `axis` (all, if None), differentiably:
    row i of an (n, n) grid holds the values with the i-th replaced by 1, and prod() reduces each row."""
    import numpy as np

    v = x.reshape(-1) if axis is None else x.transpose(axis, -1)
    n = v.shape[-1]
    grid = v.unsqueeze(-2).expand(*v.shape[:-1], n, n)
    others = D.where(np.eye(n, dtype=bool), 1.0, grid).prod(-1)
    return others.reshape(tuple(x.shape)) if axis is None else others.transpose(axis, -1)

# -- joining, splitting, gathering (cat/stack rows are made per input count in join.py) -------------------
SplitBackward0 = rule("SplitBackward0", "self", saves="dim self_sym_sizes split_size",
                      text="grad_self = cat(grads, dim)  (missing pieces count as 0)", multi=True,
                      self=lambda grads, dim: D.cat(grads, dim))
SplitWithSizesBackward0 = rule("SplitWithSizesBackward0", "self", saves="dim self_sym_sizes split_sizes",
                               text="grad_self = cat(grads, dim)  (missing pieces count as 0)", multi=True,
                               self=lambda grads, dim: D.cat(grads, dim))
GatherBackward0 = rule("GatherBackward0", "self", saves="self dim index sparse_grad",
                       text="grad_self = zeros(self's shape) with grad scatter-added at index along dim",
                       self=lambda grad, self, dim, index: D.scatter_add_zeros(grad, dim, index, tuple(self.shape)))
ScatterAddBackward0 = rule("ScatterAddBackward0", "self src", saves="dim index",
                           text="grad_self = grad, grad_src = grad.gather(dim, index)",
                           self=lambda grad: grad,
                           src=lambda grad, dim, index: D.gather(grad, dim, index))
RepeatBackward0 = rule("RepeatBackward0", "self", saves="repeats self_sym_sizes",
                       text="grad_self = grad summed over the repeated copies",
                       self=lambda grad, repeats, self_sym_sizes: _repeat_grad(grad, repeats, self_sym_sizes))


def _repeat_grad(grad, repeats, sizes):
    """Sum the tiled copies: view the gradient as (r0, s0, r1, s1, ...) and sum over the r axes."""
    lead = len(repeats) - len(sizes)
    full = (1,) * lead + tuple(sizes)
    split = []
    for r, s in zip(repeats, full):
        split += [r, s]
    g = D.reshape(grad, split)
    axes = tuple(range(0, 2 * len(full), 2))
    g = g.sum(axes) if D.is_t(g) else g.sum(axis=axes)
    return D.reshape(g, sizes)
