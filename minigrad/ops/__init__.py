"""The operators, and their binding onto Tensor as methods and Python operators.

Each op is a plain function whose first argument is the tensor; binding assigns the same
function object to the class, so `x.exp()`, `Tensor.exp(x)` and `minigrad.exp(x)` are one call.
"""

from __future__ import annotations

from .._tensor import Tensor
from . import index, inplace, join, linalg, pointwise, reduce, shape

METHODS = {
    # pointwise
    "add": pointwise.add, "sub": pointwise.sub, "subtract": pointwise.sub, "mul": pointwise.mul,
    "multiply": pointwise.mul, "div": pointwise.div, "divide": pointwise.div, "true_divide": pointwise.div,
    "neg": pointwise.neg, "negative": pointwise.neg, "pow": pointwise.pow, "exp": pointwise.exp,
    "log": pointwise.log, "sin": pointwise.sin, "cos": pointwise.cos, "tanh": pointwise.tanh,
    "sigmoid": pointwise.sigmoid, "relu": pointwise.relu, "abs": pointwise.abs, "sqrt": pointwise.sqrt,
    "_tanh_backward": pointwise.tanh_backward, "_sigmoid_backward": pointwise.sigmoid_backward,
    "square": pointwise.square, "reciprocal": pointwise.reciprocal, "eq": pointwise.eq, "ne": pointwise.ne,
    "lt": pointwise.lt, "le": pointwise.le, "gt": pointwise.gt, "ge": pointwise.ge,
    "logical_not": pointwise.logical_not, "remainder": pointwise.remainder, "floor_divide": pointwise.floordiv,
    "bitwise_not": pointwise.bitwise_not,
    "log1p": pointwise.log1p, "tan": pointwise.tan, "rsqrt": pointwise.rsqrt, "exp2": pointwise.exp2,
    "erf": pointwise.erf, "sign": pointwise.sign, "floor": pointwise.floor, "ceil": pointwise.ceil,
    "trunc": pointwise.trunc, "round": pointwise.round, "clamp": pointwise.clamp, "clip": pointwise.clamp,
    "clamp_min": pointwise.clamp_min, "clamp_max": pointwise.clamp_max, "maximum": pointwise.maximum,
    "minimum": pointwise.minimum, "masked_fill": pointwise.masked_fill, "isclose": pointwise.isclose,
    "allclose": pointwise.allclose, "equal": pointwise.equal, "isnan": pointwise.isnan, "isinf": pointwise.isinf,
    "isfinite": pointwise.isfinite, "logical_and": pointwise.logical_and, "logical_or": pointwise.logical_or,
    "all": pointwise.all, "any": pointwise.any, "where": lambda self, condition, other: pointwise.where(
        condition, self, other),
    # reductions
    "prod": reduce.prod, "max": reduce.max, "min": reduce.min, "amax": reduce.amax, "amin": reduce.amin,
    "argmax": reduce.argmax, "argmin": reduce.argmin, "var": reduce.var, "std": reduce.std, "norm": reduce.norm,
    "logsumexp": reduce.logsumexp, "softmax": reduce.softmax, "log_softmax": reduce.log_softmax,
    "cumsum": reduce.cumsum,
    # joining and splitting
    "split": join.split, "chunk": join.chunk, "narrow": join.narrow, "gather": join.gather,
    "scatter_add": join.scatter_add, "repeat": join.repeat, "unbind": shape.unbind,
    "sum": reduce.sum, "mean": reduce.mean, "sum_to_size": reduce.sum_to_size,
    # linear algebra
    "matmul": linalg.matmul, "mm": linalg.mm, "mv": linalg.mv, "dot": linalg.dot, "bmm": linalg.bmm,
    "outer": linalg.outer, "ger": linalg.outer,
    # shape
    "view": shape.view, "reshape": shape.reshape, "flatten": shape.flatten, "view_as": shape.view_as,
    "reshape_as": shape.reshape_as, "t": shape.t, "transpose": shape.transpose, "permute": shape.permute,
    "unsqueeze": shape.unsqueeze, "squeeze": shape.squeeze, "expand": shape.expand, "expand_as": shape.expand_as,
    "clone": shape.clone, "contiguous": shape.contiguous, "to": shape.to, "float": shape.float,
    "double": shape.double, "half": shape.half, "long": shape.long, "int": shape.int, "bool": shape.bool,
    "type_as": shape.type_as, "swapaxes": shape.transpose,
    # in place
    "add_": inplace.add_, "sub_": inplace.sub_, "mul_": inplace.mul_, "div_": inplace.div_,
    "pow_": inplace.pow_, "neg_": inplace.neg_, "exp_": inplace.exp_, "log_": inplace.log_,
    "sin_": inplace.sin_, "cos_": inplace.cos_, "tanh_": inplace.tanh_, "sigmoid_": inplace.sigmoid_,
    "relu_": inplace.relu_, "abs_": inplace.abs_, "sqrt_": inplace.sqrt_, "reciprocal_": inplace.reciprocal_,
    "clamp_": inplace.clamp_, "masked_fill_": inplace.masked_fill_, "log1p_": inplace.log1p_,
    "zero_": inplace.zero_, "fill_": inplace.fill_, "copy_": inplace.copy_, "uniform_": inplace.uniform_,
    "normal_": inplace.normal_,
    "clamp_min_": inplace.clamp_min_, "clamp_max_": inplace.clamp_max_, "clip_": inplace.clamp_,
    "square_": inplace.square_, "floor_": inplace.floor_, "ceil_": inplace.ceil_, "round_": inplace.round_,
    "trunc_": inplace.trunc_, "sign_": inplace.sign_, "rsqrt_": inplace.rsqrt_, "tan_": inplace.tan_,
    "exp2_": inplace.exp2_, "remainder_": inplace.remainder_, "floor_divide_": inplace.floor_divide_,
    # python operators
    "__add__": pointwise.add, "__radd__": pointwise.add, "__sub__": pointwise.sub, "__rsub__": pointwise.rsub,
    "__mul__": pointwise.mul, "__rmul__": pointwise.mul, "__truediv__": pointwise.div,
    "__rtruediv__": pointwise.rdiv, "__floordiv__": pointwise.floordiv, "__rfloordiv__": pointwise.rfloordiv,
    "__mod__": pointwise.remainder, "__rmod__": pointwise.rremainder, "__pow__": pointwise.pow,
    "__rpow__": pointwise.rpow, "__matmul__": linalg.matmul, "__rmatmul__": linalg.rmatmul,
    "__neg__": pointwise.neg, "__pos__": lambda self: self, "__abs__": pointwise.abs,
    "__invert__": pointwise.bitwise_not, "__and__": pointwise.bitwise_and, "__or__": pointwise.bitwise_or,
    "__xor__": pointwise.bitwise_xor, "__rand__": pointwise.bitwise_and, "__ror__": pointwise.bitwise_or,
    "__eq__": pointwise.eq, "__ne__": pointwise.ne, "__lt__": pointwise.lt, "__le__": pointwise.le,
    "__gt__": pointwise.gt, "__ge__": pointwise.ge,
    "__iadd__": inplace.add_, "__isub__": inplace.sub_, "__imul__": inplace.mul_, "__itruediv__": inplace.div_,
    "__ipow__": inplace.pow_, "__imod__": inplace.remainder_, "__ifloordiv__": inplace.floor_divide_,
    "__getitem__": index.getitem, "__setitem__": index.setitem,
}

for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _fn)

Tensor.T = property(shape.T)
Tensor.mT = property(shape.mT)
