"""Elementwise functions of one tensor: exp, log, tanh, relu, ... One `unary(...)` declaration per op; and of two
tensors (`binary(...)`: atan2, ...).

A declaration gives the op's name, the NumPy function that computes it, its node (named as PyTorch
names it), what the node saves (`self`, the op's input, or `result`, its output), the derivative
formula, the one-line rule the animation shows, and the domain the test sweeps draw inputs from. The
op is then `minigrad.<name>`, `Tensor.<name>` and, in place, `Tensor.<name>_`.

Formulas run on NumPy arrays (the plain backward) and on Tensors (`create_graph=True`): they use
operators and `xp` functions, which work on both. tanh, sigmoid and softplus differentiate through
PyTorch's fused backward ops, so that their backward pass records the nodes PyTorch records
(TanhBackwardBackward0, ...).
"""

from __future__ import annotations

import math

import numpy as np

from .._layout import laid_out
from .._state import GRAD
from .._tensor import Tensor, make
from . import xp
from .fused import fused_op
from .inplace import inplace_of
from .operands import broadcast_error, check_tensor, float_data, in_opmath, kind_name, promoted, tensor_method
from .recording import exact_zeros, record, rule
from .registry import Sample, declare

_LN2 = math.log(2)
_LN10 = math.log(10)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def unary_samples(domain: str = "real", second_order: bool = True) -> tuple:
    """The test sweeps' inputs for an elementwise op: a 0-d, a 1-d and a 2-d tensor of `domain`."""
    return tuple(Sample(((shape, domain),), second_order=second_order) for shape in ((), (3,), (2, 3)))


def unary(name: str, np_fn, node: str, *, saves: str, grad, text: str, domain: str = "real",
          aliases: tuple = (), keeps_dtype: bool = False, second_order: bool = True, check=None):
    """Declare `name`: `np_fn` elementwise, recorded as the node `node` with the derivative `grad(grad, ...)`
    (reading what `saves` names). Integer and bool inputs compute in the default float unless `keeps_dtype`.
    `check(self)`: an argument check PyTorch makes first (in the in-place op too, before its overlap checks).
    Returns the op's function."""
    node_cls = rule(node, "self", saves, text=text, elementwise=True, self=grad)

    def op(self):
        if check is not None:
            check(self)
        d = self._data
        if not keeps_dtype and d.dtype.kind != "f":
            d = float_data(self)
        res = GRAD.quiet.run(in_opmath, np_fn, d)  # (float16 in float32, as PyTorch's kernels)
        if self._requires_grad and GRAD.mode > 0:
            return record(node_cls, res, (self,))
        return make(res)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"{name}(input) -> Tensor, elementwise. Its derivative ({node}): {text}"
    declare(name, op, aliases=aliases, inplace=inplace_of(op, name + "_", check), nodes=(node_cls,),
            samples=unary_samples(domain, second_order))
    return op


def binary(name: str, np_fn, node: str, *, text: str, saves: str = "self other", grad=None,
           domains: tuple = ("real", "real"), aliases: tuple = (), integers: str = "to float", inplace: bool = True,
           second_order: bool = True, forward="derived", **formulas):
    """Declare `name(input, other)`, an elementwise op of two tensors: `np_fn` on their promoted, broadcast arrays,
    recorded as the node `node`; `Tensor.<name>_` in place unless not `inplace`. Integer and bool operands are
    computed in the default float (`integers="to float"`, atan2), kept (`"keep"`, maximum), or refused as PyTorch's
    kernels refuse them (`"refuse"`, hypot: `"hypot_cpu" not implemented for 'Long'`). The derivative is
    `grad(grad, ...)` returning both gradients, for a formula the two share (the one expression is computed once),
    or one formula per input, `self=...` and `other=...`. `other` must be a Tensor (PyTorch takes no number here);
    the error counts it as argument 2 of the function, 1 of the method `Tensor.<name>`, and names the alias it
    came through. The test sweeps draw the two inputs from `domains`, with and without broadcasting. `forward`:
    the forward rule, derived from the backward formulas unless PyTorch's formula differs (maximum's at NaN).
    Returns the op's function."""
    if grad is not None:
        formulas["self, other"] = grad
    node_cls = rule(node, "self other", saves, text=text, forward=forward, **formulas)  # (elementwise: the
    # forward rule is the backward formulas on the tangents)

    def named(name: str):
        def op(self: Tensor, other: Tensor) -> Tensor:
            check_tensor(other, name, 2)
            a, b = promoted(self, other, integers == "to float")
            if integers == "refuse" and np.result_type(a, b).kind != "f":
                raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{kind_name(np.result_type(a, b))}'")
            try:
                res = laid_out(np.asarray(GRAD.quiet.run(np_fn, a, b)), self, other)
            except ValueError:
                raise broadcast_error(self, other) from None
            if GRAD.mode > 0 and (self._requires_grad or other._requires_grad):
                return record(node_cls, res, (self, other))
            return make(res)

        op.__name__ = op.__qualname__ = name
        op.__doc__ = f"{name}(input, other) -> Tensor, elementwise. Its derivative ({node}): {text}"
        return op

    op = named(name)
    first, second = domains
    declare(name, op, aliases={alias: named(alias) for alias in aliases}, method=False,
            operators={n: tensor_method(named(n), n) for n in (name, *aliases)},
            inplace=inplace_of(op, name + "_") if inplace else None, nodes=(node_cls,),
            samples=(Sample((((3, 4), first), ((3, 4), second)), second_order=second_order),
                     Sample((((3, 1), first), ((4,), second)), second_order=second_order)))
    return op


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)), split by sign so that exp never overflows."""
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1 / (1 + np.exp(-x[pos]))
    e = np.exp(x[~pos])
    out[~pos] = e / (1 + e)
    return out


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x.copy()


# -- PyTorch's fused backward ops: what tanh's, sigmoid's, softplus's and relu's formulas call ------------
def _tanh_backward(g, y):
    """g * (1 - y²); float16 in float32, rounded once (PyTorch's kernel)."""
    if g.dtype == np.float16 and y.dtype == np.float16:
        return (g.astype(np.float32) * (1 - np.square(y.astype(np.float32)))).astype(np.float16)
    return g * (1 - y * y)


def _sigmoid_backward(g, y):
    """g * (1 - y) * y in this order, as PyTorch's kernel (its float16 kernel rounds each step to float16 too)."""
    return g * (1 - y) * y


def _softplus_backward(g, x, beta, threshold):
    """float16 in float32, rounded once (PyTorch's kernel)."""
    if g.dtype == np.float16 and x.dtype == np.float16:
        return _softplus_backward(g.astype(np.float32), x.astype(np.float32), beta, threshold).astype(np.float16)
    z = np.exp(x * beta)
    return np.where(x * beta > threshold, g, g * z / (z + 1))


def _softplus_double_backward(g, x, beta, threshold):
    """PyTorch's softplus_double_backward, sigmoid_backward(g, sigmoid(x * beta)) * (x * beta < threshold) * beta
    (the mask a float product, as PyTorch's), written with xp so it records its graph under create_graph."""
    xb = xp.mul_scalar(x, beta)
    first = sigmoid_backward(g, xp.sigmoid(xb))
    below = (xp.data(xb) < threshold).astype(xp.data(first).dtype)
    return xp.mul_scalar(first * (make(below) if xp.is_t(first) else below), beta)


tanh_backward = fused_op("tanh_backward", _tanh_backward, rule(
    "TanhBackwardBackward0", "grad_output output", saves="grad_output output",
    forward="derived", text="grad_grad_output = grad * (1 - output²), grad_output = grad * -2 * output * grad_output",
    grad_output=lambda grad, output: tanh_backward(grad, output),
    output=lambda grad, grad_output, output: grad * (-2 * output * grad_output)))
sigmoid_backward = fused_op("sigmoid_backward", _sigmoid_backward, rule(
    "SigmoidBackwardBackward0", "grad_output output", saves="grad_output output",
    text="grad_grad_output = grad * output * (1 - output), grad_output = grad * grad_output * (1 - 2 * output)",
    forward="derived",
    grad_output=lambda grad, output: sigmoid_backward(grad, output),
    output=lambda grad, grad_output, output: grad * grad_output * (-2 * output + 1)))
softplus_backward = fused_op("softplus_backward", _softplus_backward, rule(
    "SoftplusBackwardBackward0", "grad_output self", saves="grad_output self beta threshold",
    text="grad_grad_output = softplus'(self) * grad, grad_self = grad * grad_output * softplus''(self)",
    forward="derived",
    grad_output=lambda grad, self, beta, threshold: softplus_backward(grad, self, beta, threshold),
    self=lambda grad, grad_output, self, beta, threshold:
    _softplus_double_backward(grad * grad_output, self, beta, threshold)), ("beta", "threshold"))


def _threshold_backward(g, x, threshold):
    """`grad` where `self > threshold`, +0 elsewhere (NaN keeps its gradient, as PyTorch's `self <= threshold ? 0
    : grad`). On arrays one boolean mask, inverted in place: relu's backward makes no second mask."""
    if xp.is_t(g) or xp.is_t(x):
        return xp.zero_where(x <= threshold, g)
    keep = np.less_equal(x, threshold, out=np.empty(np.shape(x), bool))
    return xp.keep_where(np.logical_not(keep, out=keep), g)


threshold_backward = fused_op("threshold_backward", _threshold_backward, rule(
    "ThresholdBackwardBackward0", "grad_output self", saves="self threshold",
    forward="derived", text="grad_grad_output = grad where self > threshold, else 0; grad_self = 0",
    grad_output=lambda grad, self, threshold: threshold_backward(grad, self, threshold),
    self=lambda grad: xp.zeros_like(grad)), ("threshold",))


# -- the ops -----------------------------------------------------------------------------------------------
exp = unary("exp", np.exp, "ExpBackward0", saves="result", grad=lambda grad, result: grad * result,
            text="grad_self = grad * result  (result = exp(self))")
exp2 = unary("exp2", np.exp2, "Exp2Backward0", saves="result",
             grad=lambda grad, result: xp.mul_scalar(grad * result, _LN2),  # (float16: opmath, as PyTorch)
             text="grad_self = grad * result * ln 2")
log = unary("log", np.log, "LogBackward0", saves="self", grad=lambda grad, self: grad / self,
            text="grad_self = grad / self", domain="positive")
log2 = unary("log2", np.log2, "Log2Backward0", saves="self",
             grad=lambda grad, self: grad / xp.mul_scalar(self, _LN2),
             text="grad_self = grad / (self * ln 2)", domain="positive")
log10 = unary("log10", np.log10, "Log10Backward0", saves="self",
              grad=lambda grad, self: grad / xp.mul_scalar(self, _LN10),
              text="grad_self = grad / (self * ln 10)", domain="positive")
log1p = unary("log1p", np.log1p, "Log1PBackward0", saves="self",
              grad=lambda grad, self: grad / (self + 1),
              text="grad_self = grad / (self + 1)", domain="positive")
sqrt = unary("sqrt", np.sqrt, "SqrtBackward0", saves="result",
             grad=lambda grad, result: grad / (2 * result),
             text="grad_self = grad / (2 * result)", domain="positive")
rsqrt = unary("rsqrt", lambda x: 1 / np.sqrt(x), "RsqrtBackward0", saves="result",
              grad=lambda grad, result: -0.5 * grad * result ** 3,
              text="grad_self = -0.5 * grad * result³", domain="positive")
sin = unary("sin", np.sin, "SinBackward0", saves="self", grad=lambda grad, self: grad * xp.cos(self),
            text="grad_self = grad * cos(self)")
cos = unary("cos", np.cos, "CosBackward0", saves="self", grad=lambda grad, self: grad * -xp.sin(self),
            text="grad_self = grad * -sin(self)")
tan = unary("tan", np.tan, "TanBackward0", saves="result",
            grad=lambda grad, result: grad * (result ** 2 + 1),
            text="grad_self = grad * (1 + result²)", domain="unit")
atan = unary("atan", np.arctan, "AtanBackward0", saves="self",
             grad=lambda grad, self: grad / (self * self + 1),
             text="grad_self = grad / (1 + self²)", aliases=("arctan",))
tanh = unary("tanh", np.tanh, "TanhBackward0", saves="result", grad=lambda grad, result: tanh_backward(grad, result),
             text="grad_self = grad * (1 - result²)")
sigmoid = unary("sigmoid", _sigmoid, "SigmoidBackward0", saves="result",
                grad=lambda grad, result: sigmoid_backward(grad, result),
                text="grad_self = grad * result * (1 - result)")
erf = unary("erf", _erf, "ErfBackward0", saves="self",
            grad=lambda grad, self: xp.mul_scalar(xp.exp(-(self ** 2)), _TWO_OVER_SQRT_PI) * grad,
            text="grad_self = grad * 2/√π * exp(-self²)")
asin = unary("asin", np.arcsin, "AsinBackward0", saves="self",
             grad=lambda grad, self: grad * xp.rsqrt(-self * self + 1),
             text="grad_self = grad / √(1 - self²)", domain="unit", aliases=("arcsin",))
acos = unary("acos", np.arccos, "AcosBackward0", saves="self",
             grad=lambda grad, self: grad * -xp.rsqrt(-self * self + 1),
             text="grad_self = -grad / √(1 - self²)", domain="unit", aliases=("arccos",))
sinh = unary("sinh", np.sinh, "SinhBackward0", saves="self", grad=lambda grad, self: grad * xp.cosh(self),
             text="grad_self = grad * cosh(self)")
cosh = unary("cosh", np.cosh, "CoshBackward0", saves="self", grad=lambda grad, self: grad * xp.sinh(self),
             text="grad_self = grad * sinh(self)")


def _atan2_grads(grad, self, other):
    """PyTorch's atan2_backward: both gradients over one denominator, self² + other² (0 at the origin, where the
    reciprocal would be inf)."""
    recip = xp.reciprocal(self * self + other * other)
    recip = xp.masked_fill(recip, np.isinf(xp.data(recip)), 0.0)
    return grad * other * recip, grad * -self * recip


atan2 = binary("atan2", np.arctan2, "Atan2Backward0", grad=_atan2_grads, aliases=("arctan2",),
               # PyTorch's forward formula: nan at the origin (0 / 0), where the backward rule gives 0
               forward=exact_zeros(lambda self_t, other_t, self, other:
                                   (-self * other_t + other * self_t) / (self * self + other * other)),
               text="grad_self = grad * other / (self² + other²), grad_other = grad * -self / (self² + other²)")
hypot = binary("hypot", np.hypot, "HypotBackward0", saves="self other result", integers="refuse",
               self=lambda grad, self, result: grad * self / result,
               other=lambda grad, other, result: grad * other / result,
               text="grad_self = grad * self / result, grad_other = grad * other / result  (result = hypot)")
logaddexp = binary("logaddexp", np.logaddexp, "LogaddexpBackward0", integers="refuse", inplace=False,
                   self=lambda grad, self, other: grad / (1 + xp.exp(other - self)),
                   other=lambda grad, self, other: grad / (1 + xp.exp(self - other)),
                   text="grad_self = grad / (1 + exp(other - self)), grad_other = grad / (1 + exp(self - other))")


def _relu(x: np.ndarray) -> np.ndarray:
    """0 where x < 0, else x itself: NaN stays NaN and -0. stays -0., as in PyTorch (np.maximum gives +0.).
    One boolean mask, inverted in place."""
    keep = np.less(x, 0, out=np.empty(np.shape(x), bool))  # an array even for a 0-d x
    return xp.keep_where(np.logical_not(keep, out=keep), x)


def _not_bool_for_relu(self: Tensor) -> None:
    if self._data.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")


def _abs(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "b":
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return np.abs(x)


relu = unary("relu", _relu, "ReluBackward0", saves="result",
             grad=lambda grad, result: threshold_backward(grad, result, 0),
             text="grad_self = grad where result > 0, else 0", domain="away", keeps_dtype=True,
             check=_not_bool_for_relu)
abs = unary("abs", _abs, "AbsBackward0", saves="self", grad=lambda grad, self: grad * xp.sgn(self),
            text="grad_self = grad * sign(self)", domain="away", keeps_dtype=True, aliases=("absolute",))


# for real numbers PyTorch's sgn derivative is zeros with no graph (NaN and inf included), as sign's
SgnBackward0 = rule("SgnBackward0", "self", elementwise=True, text="grad_self = 0  (sgn is flat almost everywhere)",
                    self=lambda grad: xp.zeros_like(grad))


def _sgn(self: Tensor) -> Tensor:
    """PyTorch's sgn, the sign of a real number: what abs's derivative formula multiplies by."""
    res = xp.sign_array(self._data)
    if self._requires_grad and GRAD.mode > 0:
        return record(SgnBackward0, res, (self,))
    return make(res)


_sgn.__name__ = _sgn.__qualname__ = "sgn"
declare("sgn", _sgn, method=False, public=False, nodes=(SgnBackward0,))

# flat almost everywhere: the gradient is 0
sign = unary("sign", xp.sign_array, "SignBackward0", saves="", grad=lambda grad: xp.zeros_like(grad),
             text="grad_self = 0  (sign is flat almost everywhere)", keeps_dtype=True, second_order=False)
def _rounding(name: str, np_fn):
    """floor, ceil, trunc, round: an integer tensor is returned as it is; bool has no kernel in PyTorch."""
    def fn(x: np.ndarray) -> np.ndarray:
        if x.dtype.kind == "b":
            raise NotImplementedError(f"\"{name}_vml_cpu\" not implemented for 'Bool'")
        return np_fn(x)

    return fn


floor = unary("floor", _rounding("floor", np.floor), "FloorBackward0", saves="", grad=lambda grad: xp.zeros_like(grad),
              text="grad_self = 0", keeps_dtype=True, second_order=False)
ceil = unary("ceil", _rounding("ceil", np.ceil), "CeilBackward0", saves="", grad=lambda grad: xp.zeros_like(grad),
             text="grad_self = 0", keeps_dtype=True, second_order=False)
trunc = unary("trunc", _rounding("trunc", np.trunc), "TruncBackward0", saves="", grad=lambda grad: xp.zeros_like(grad),
              text="grad_self = 0", keeps_dtype=True, second_order=False)

RoundBackward0 = rule("RoundBackward0", "self", forward="derived", text="grad_self = 0",
                      self=lambda grad: xp.zeros_like(grad))
RoundBackward1 = rule("RoundBackward1", "self", saves="decimals", forward="derived", text="grad_self = 0",
                      self=lambda grad: xp.zeros_like(grad))


def round(self, decimals=None):
    """Round half to even, as PyTorch (and NumPy) do; `decimals` digits after the point."""
    res = GRAD.quiet.run(_rounding("round", lambda x: np.round(x, decimals or 0)), self._data)  # (3e38 * 100 is inf)
    if self._requires_grad and GRAD.mode > 0:
        if decimals is None:
            return record(RoundBackward0, res, (self,))
        return record(RoundBackward1, res, (self,), decimals=decimals)
    return make(np.asarray(res))


declare("round", round, inplace=inplace_of(round, "round_"), nodes=(RoundBackward0, RoundBackward1),
        samples=unary_samples(second_order=False) + (Sample((((3,), "real"),), kwargs={"decimals": 2},
                                                            second_order=False),))


# -- activations with arguments (torch.nn.functional) ------------------------------------------------------
def _leaky_relu_backward(g, x, negative_slope):
    return xp.where(xp.data(x) > 0, g, xp.mul_scalar(g, negative_slope))  # (float16: opmath, as PyTorch)


# PyTorch's fused backward op: under create_graph the gradient depends on `self` (LeakyReluBackwardBackward0,
# whose gradient for self is zeros), so a second backward through it gives zeros rather than an error
leaky_relu_backward = fused_op("leaky_relu_backward", _leaky_relu_backward, rule(
    "LeakyReluBackwardBackward0", "grad_output self", saves="self negative_slope", forward="derived",
    text="grad_grad_output = grad * (1 if self > 0 else negative_slope), grad_self = 0",
    grad_output=lambda grad, self, negative_slope: leaky_relu_backward(grad, self, negative_slope),
    self=lambda grad: xp.zeros_like(grad)), ("negative_slope",))

LeakyReluBackward0 = rule("LeakyReluBackward0", "self", saves="self negative_slope",
                          forward="derived", text="grad_self = grad * (1 if self > 0 else negative_slope)",
                          self=lambda grad, self, negative_slope: leaky_relu_backward(grad, self, negative_slope))


def _float_kernel(x: np.ndarray, kernel: str) -> None:
    """PyTorch has no integer or bool kernel for these activations (minigrad's would truncate or convert)."""
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{kind_name(x.dtype)}'")


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x."""
    x = input._data
    _float_kernel(x, "leaky_relu_cpu")
    res = np.where(x > 0, x, xp.mul_scalar(x, negative_slope)).astype(x.dtype)
    if inplace:
        return leaky_relu_(input, negative_slope)
    if input._requires_grad and GRAD.mode > 0:
        return record(LeakyReluBackward0, res, (input,), negative_slope=negative_slope)
    return make(res)


leaky_relu_ = inplace_of(lambda self, negative_slope=0.01: leaky_relu(self, negative_slope), "leaky_relu_")
declare("leaky_relu", leaky_relu, namespace="nn.functional", method=False, nodes=(LeakyReluBackward0,),
        samples=unary_samples("away") + (Sample((((3,), "away"),), (0.2,)),))


def _gelu_grad(x, approximate: str):
    """gelu'(x): exact, from the normal distribution's cdf and pdf; or the tanh approximation's derivative."""
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
        t = xp.tanh(inner)
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
    cdf = 0.5 * (1 + xp.erf(x / math.sqrt(2)))
    pdf = xp.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return cdf + x * pdf


def _gelu_second(x, approximate: str):
    """gelu''(x): pdf(x) * (2 - x²) exactly; for the tanh approximation, its own second derivative."""
    if approximate == "tanh":
        k, c = _SQRT_2_OVER_PI, 0.044715
        t = xp.tanh(k * (x + c * x * x * x))
        du = k * (1 + 3 * c * x * x)
        return (1 - t * t) * (du + 0.5 * x * (6 * k * c * x - 2 * t * du * du))
    pdf = xp.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return 2 * pdf - x * x * pdf  # (PyTorch's order: +0., not -0., where pdf underflows)


def _gelu_backward(g, x, approximate):
    """g * gelu'(x); float16 in float32, rounded once (PyTorch's kernel)."""
    if g.dtype == np.float16 and x.dtype == np.float16:
        return _gelu_backward(g.astype(np.float32), x.astype(np.float32), approximate).astype(np.float16)
    return g * _gelu_grad(x, approximate)


# PyTorch's fused backward op of gelu: a create_graph backward records GeluBackwardBackward0
gelu_backward = fused_op("gelu_backward", _gelu_backward, rule(
    "GeluBackwardBackward0", "grad_output self", saves="grad_output self approximate",
    forward="derived", text="grad_grad_output = grad * gelu'(self), grad_self = grad * grad_output * gelu''(self)",
    grad_output=lambda grad, self, approximate: gelu_backward(grad, self, approximate),
    self=lambda grad, grad_output, self, approximate: grad * grad_output * _gelu_second(self, approximate)),
    ("approximate",))

GeluBackward0 = rule("GeluBackward0", "self", saves="self approximate", text="grad_self = grad * gelu'(self)",
                     forward="derived",
                     self=lambda grad, self, approximate: gelu_backward(grad, self, approximate))


# PyTorch's gelu of float32 and float16 runs its SIMD kernel over a contiguous tensor of two or more elements, whose
# erf gives nan at inf (one element, or a strided, transposed or expanded tensor, takes the scalar path: inf, as
# float64 always does). In float32 that kernel forms x·(1 + erf(x/√2)) before halving it, so an x of 2¹²⁷ or more
# overflows to inf (the scalar path halves first; float16 is computed in float32, where nothing overflows).
_VECTORIZED_GELU = (np.dtype(np.float32), np.dtype(np.float16))


def _gelu(x: np.ndarray, approximate: str) -> np.ndarray:
    if approximate == "tanh":  # (float16 in float32, rounded once, as PyTorch's kernel)
        y = x.astype(np.float32) if x.dtype == np.float16 else x
        return (0.5 * y * (1 + np.tanh(_SQRT_2_OVER_PI * (y + 0.044715 * y ** 3)))).astype(x.dtype)
    if not x.size:
        return x.copy()
    vectorized = x.dtype in _VECTORIZED_GELU and x.size > 1 and x.flags.c_contiguous
    y = x.astype(np.float32) if x.dtype == np.float16 else x  # (float16 in float32, rounded once)
    twice_cdf = 1 + _erf(y / math.sqrt(2))
    res = (y * twice_cdf * 0.5 if vectorized and x.dtype == np.float32 else 0.5 * y * twice_cdf).astype(x.dtype)
    if vectorized:
        res[np.isposinf(x)] = np.nan
    return res


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Φ(x), Φ the standard normal cdf; `approximate="tanh"` uses PyTorch's tanh formula."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh. (got {approximate})")
    x = input._data
    _float_kernel(x, "GeluKernelImpl")
    res = GRAD.quiet.run(_gelu, x, approximate)  # inf * 0 at -inf is nan, as in PyTorch: no NumPy warning
    if input._requires_grad and GRAD.mode > 0:
        return record(GeluBackward0, res, (input,), approximate=approximate)
    return make(res)


declare("gelu", gelu, namespace="nn.functional", method=False, nodes=(GeluBackward0,),
        samples=unary_samples() + (Sample((((2, 3), "real"),), kwargs={"approximate": "tanh"}),))

SoftplusBackward0 = rule("SoftplusBackward0", "self", saves="self beta threshold",
                         text="grad_self = grad * sigmoid(beta * self)  (grad where beta * self > threshold)",
                         forward="derived",
                         self=lambda grad, self, beta, threshold: softplus_backward(grad, self, beta, threshold))


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold (numerically linear there)."""
    _float_kernel(input._data, "softplus_cpu")
    x = float_data(input)
    with np.errstate(over="ignore"):  # (float16 in float32, rounded once, as PyTorch's kernel)
        res = in_opmath(lambda v: np.where(v * beta > threshold, v, np.log1p(np.exp(v * beta)) / beta), x)
    res = res.astype(x.dtype)
    if input._requires_grad and GRAD.mode > 0:
        return record(SoftplusBackward0, res, (input,), beta=beta, threshold=threshold)
    return make(res)


declare("softplus", softplus, namespace="nn.functional", method=False, nodes=(SoftplusBackward0,),
        samples=unary_samples() + (Sample((((3,), "real"),), kwargs={"beta": 2.0, "threshold": 1.0}),))


# -- silu, elu ---------------------------------------------------------------------------------------------------
def _silu_backward(grad, self):
    """grad * s * (1 + self * (1 - s)), s = sigmoid(self): under create_graph PyTorch's infinitely differentiable
    form (one sigmoid node), else its fused kernel (float16 in float32, rounded once)."""
    if not xp.is_t(grad) and grad.dtype == np.float16 and self.dtype == np.float16:
        return _silu_backward(grad.astype(np.float32), self.astype(np.float32)).astype(np.float16)
    s = xp.sigmoid(self)
    return grad * s * (1 + self * (1 - s))


SiluBackward0 = rule("SiluBackward0", "self", saves="self", forward="derived",
                     text="grad_self = grad * sigmoid(self) * (1 + self * (1 - sigmoid(self)))",
                     self=lambda grad, self: _silu_backward(grad, self))


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (the swish): smooth, and like ReLU for large |x|."""
    if inplace:
        return _silu_(input)
    _float_kernel(input._data, "silu_cpu")
    x = float_data(input)
    res = GRAD.quiet.run(in_opmath, lambda v: (v * _sigmoid(v)).astype(v.dtype), x)  # (-inf * 0 is nan, as torch)
    if input._requires_grad and GRAD.mode > 0:
        return record(SiluBackward0, res, (input,))
    return make(res)


_silu_ = inplace_of(lambda self: silu(self), "silu_")
declare("silu", silu, namespace="nn.functional", method=False, nodes=(SiluBackward0,), samples=unary_samples())

def _elu_backward(g, x, alpha):
    """PyTorch's elu_backward kernel: g * alpha * exp(x) where x <= 0, else g (float16 in float32, rounded once)."""
    wide = g.dtype == np.float16
    g32, x32 = (g.astype(np.float32), x.astype(np.float32)) if wide else (g, x)
    res = np.where(x32 <= 0, g32 * alpha * np.exp(np.minimum(x32, 0)), g32)  # (no overflow where x > 0)
    return res.astype(g.dtype) if wide else res


def _elu_double_backward(grad, grad_output, self, alpha):
    """PyTorch's elu_double_backward: elu_backward(grad * grad_output, self) times (self < 0) as a float mask (a
    product: 0 at 0, inf and nan; nan where the first factor is)."""
    first = elu_backward(grad * grad_output, self, alpha)
    below = (xp.data(self) < 0).astype(xp.data(first).dtype)
    return first * (make(below) if xp.is_t(first) else below)


# PyTorch's fused backward op: under create_graph the gradient records EluBackwardBackward0, whose formulas give
# elu_backward's value for grad_output and its slope, only where self < 0, for self (0 at 0, nan and inf)
elu_backward = fused_op("elu_backward", _elu_backward, rule(
    "EluBackwardBackward0", "grad_output self_or_result", saves="grad_output self_or_result alpha scale input_scale "
    "is_result", defaults={"scale": 1, "input_scale": 1, "is_result": False}, forward="derived",
    text="grad_grad_output = grad * (1 if self > 0 else alpha * exp(self)), "
         "grad_self = grad * grad_output * alpha * exp(self) where self < 0",
    grad_output=lambda grad, self_or_result, alpha: elu_backward(grad, self_or_result, alpha),
    self_or_result=lambda grad, grad_output, self_or_result, alpha:
    _elu_double_backward(grad, grad_output, self_or_result, alpha)), ("alpha",))

EluBackward0 = rule("EluBackward0", "self", saves="self alpha scale input_scale",
                    defaults={"scale": 1, "input_scale": 1}, forward="derived",
                    text="grad_self = grad * (1 if self > 0 else alpha * exp(self))",
                    self=lambda grad, self, alpha: elu_backward(grad, self, alpha))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1): negative outputs saturate at -alpha."""
    if inplace:
        return _elu_(input, alpha)
    _float_kernel(input._data, "elu_cpu")
    x = float_data(input)
    res = in_opmath(lambda v: np.where(v > 0, v, alpha * np.expm1(np.where(v > 0, 0, v))), x)  # (expm1(-0.): -0.)
    res = res.astype(x.dtype)
    if input._requires_grad and GRAD.mode > 0:
        return record(EluBackward0, res, (input,), alpha=alpha)
    return make(res)


_elu_ = inplace_of(lambda self, alpha=1.0: elu(self, alpha), "elu_")
declare("elu", elu, namespace="nn.functional", method=False, nodes=(EluBackward0,),
        samples=unary_samples("away") + (Sample((((3,), "away"),), (0.5,)),))
