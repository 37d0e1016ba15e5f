"""What the forward-mode fuzzer (`parityfuzz run --mode forward`) found, each as a differential test against
torch 2.13: tangents of ops whose operands alias each other (`y.mul_(y)`, `d.dot(d)`), a bilinear op's zero-tangent
term at inf, tangent dtypes, a zero tangent where the backward rule gives no gradient (norm of p = 0), ops PyTorch
refuses forward AD for (floor division, bincount), ops whose nodes differ in forward kind (masked_fill, scatter),
ops that read only the shape of an argument (view_as), whether a tangent requires grad, and warnings (once per
op; none from NumPy)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad

X = np.array([[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]])
V = np.array([[1.0, 10.0, -2.0], [0.5, -3.0, 4.0]])
P = np.array([[0.0, 1.0, 0.25], [1.0, 0.5, 0.0]])  # probabilities (targets), 0 and 1 included


def _run(lib, case):
    """(primal, tangent, tangent's requires_grad) of `case` under a dual level, or (exception type, first line);
    with the warnings the case gave."""
    fw = lib.autograd.forward_ad
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(X), lib.tensor(V))
            try:
                out = case(lib, d)
            except Exception as e:  # noqa: BLE001 - the test compares exception types and texts
                result = (type(e).__name__, str(e).splitlines()[0].replace("torch.", "minigrad."))
            else:
                primal, tangent = fw.unpack_dual(out)
                result = (primal.detach().numpy().copy(), None if tangent is None else tangent.detach().numpy().copy(),
                          None if tangent is None else tangent.requires_grad)
    return result, [f"{w.category.__name__}: {str(w.message).split(' (Triggered internally')[0]}" for w in caught]


def _inplace(op):
    def case(lib, d):
        y = d * 1
        op(lib, y)
        return y
    return case


def _written(view, write):
    write(view)
    return view


def _read_before(lib, write):
    """The tangent unpacked before an in-place op, as the op leaves it (returned as a dual of it, to compare)."""
    fw = lib.autograd.forward_ad
    y = _requiring(lib).clone() if "exp" in write.__code__.co_names else fw.make_dual(lib.tensor(X), lib.tensor(V)) * 1
    before = fw.unpack_dual(y).tangent
    write(y)
    return fw.make_dual(lib.zeros(2, 3, dtype=lib.float64), before)


def _unpacked_before(lib, op, write):
    """The tangent of `op(y)` unpacked before an in-place write into y (y requires grad, so tangents are Tensors),
    as the write leaves it: PyTorch's formulas make a new tensor, not the input's tangent itself."""
    fw = lib.autograd.forward_ad
    y = _requiring(lib) * 1
    before = fw.unpack_dual(op(y)).tangent
    write(y)
    return fw.make_dual(lib.zeros(before.shape, dtype=lib.float64), before)


def _dual(lib, x, v, requires_grad=False):
    x, v = np.asarray(x, dtype=np.float64), np.asarray(v, dtype=np.float64)
    return lib.autograd.forward_ad.make_dual(lib.tensor(x, requires_grad=requires_grad), lib.tensor(v))


NAN_AT_1 = [[1.5, np.nan, 0.25], [3.0, 0.5, -1.0]]  # a NaN primal; an inf tangent off the max:
INF_T = [[np.inf, 10.0, -2.0], [0.5, np.nan, 4.0]]
def _read_before_view_write(lib, write, base: bool = False):
    """The tangent of a view of a non-leaf (or its base's), unpacked before an in-place op on the view: PyTorch's
    self_t.copy_(new) writes it in place (through to the base's), so it requires grad after a formula that does."""
    fw = lib.autograd.forward_ad
    y = _requiring(lib).clone()
    view = y.view(-1)
    before = fw.unpack_dual(y if base else view).tangent
    write(view)
    return fw.make_dual(lib.zeros(*before.shape, dtype=lib.float64), before)


def _requiring_nan(lib):
    """A dual vector holding nan whose primal requires grad (seed 1001 program 826)."""
    return lib.autograd.forward_ad.make_dual(lib.tensor([np.nan, 0.0, -1.0], requires_grad=True).double(),
                                             lib.tensor(V[0]))


def _input_after(d, op, write):
    """y = d * 1 after an in-place write into op(y): changed through op's tangent where PyTorch's is y's own."""
    y = d * 1
    write(op(y))
    return y


def _requiring(lib):
    return lib.autograd.forward_ad.make_dual(lib.tensor(X, requires_grad=True), lib.tensor(V))


CASES = {
    # the other operand is (a view of) self: PyTorch's tangent reads it after the write (ẏ·y_old + ẏ·y_new)
    "mul_ itself": _inplace(lambda lib, y: y.mul_(y)),
    "add_ itself": _inplace(lambda lib, y: y.add_(y, alpha=2)),
    "mul_ a view of itself": _inplace(lambda lib, y: y.mul_(y[0])),
    "pow_ itself": _inplace(lambda lib, y: y.abs_().pow_(y)),
    "atan2_ itself": _inplace(lambda lib, y: y.atan2_(y)),
    "div_ itself": _inplace(lambda lib, y: y.div_(y)),  # 0 (it read self's old value: ẏ·(1 - y_old))
    # div's tangent is PyTorch's formula (self_t - other_t * result) / other, not the derived ẋ/y - ẏ·x/y²: the signs
    # of zeros differ (d / d is -0. where d < 0); a plain operand's term drops out exactly (0 · inf is no nan)
    "div itself": lambda lib, d: d / d,
    "div by a plain tensor with infs": lambda lib, d: d / lib.tensor([np.inf, -np.inf, 0.0], dtype=lib.float64),
    "plain tensor with infs divided by a dual": lambda lib, d: lib.tensor([np.inf, 0.0, -0.0], dtype=lib.float64) / d,
    "div by a number": lambda lib, d: lib.div(-d, 4.0),
    # in place, a plain self's tangent is a tensor of zeros (PyTorch's `zeros`, not its zero tensor): 0 - (+0.) is +0.
    "div_ of a plain zero by a dual": lambda lib, d: _written(lib.zeros(2, 3, dtype=lib.float64), lambda v: v.div_(d)),
    "div float32 by float64 dual": lambda lib, d: lib.tensor([[2.0], [-1.0]], dtype=lib.float32) / d,
    # maximum, minimum, clamp_min/clamp_max by a tensor, where: PyTorch's forward formulas take one operand's tangent
    # (other's at NaN, where the backward rules pass the gradient to both) and drop a plain operand's term exactly
    "minimum picking a plain zero": lambda lib, d: d.minimum(lib.zeros(2, 3, dtype=lib.float64)),
    "minimum float32 dual, float64 plain": lambda lib, d: d.float().minimum(lib.zeros(2, 1, 3, dtype=lib.float64)),
    "minimum picking a plain zero, requires grad": lambda lib, d: _requiring(lib).minimum(lib.zeros(3).double()),
    "div by a plain inf, requires grad": lambda lib, d: _requiring(lib) / lib.tensor([np.inf, -1.0, 0.0]).double(),
    "maximum picking a plain zero": lambda lib, d: lib.maximum(lib.zeros(3, dtype=lib.float64), -d),
    "maximum at nan": lambda lib, d: d.maximum(lib.tensor([np.nan, 0.0, np.inf], dtype=lib.float64)),
    "minimum at nan, plain self": lambda lib, d: lib.tensor([np.nan, -np.inf, 0.25], dtype=lib.float64).minimum(d),
    "max of two at a tie": lambda lib, d: lib.max(d, lib.tensor(X)),
    "minimum of two duals at nan": lambda lib, d: (d / 0.0 * 0.0).minimum(d * -1),
    "clamp_min by a tensor at nan": lambda lib, d: lib.clamp_min(d, lib.tensor([np.nan, 0.0, 1.0], dtype=lib.float64)),
    "clamp_min of a nan by a dual": lambda lib, d: lib.tensor([np.nan, 0.0, 1.0], dtype=lib.float64).clamp_min(d[0]),
    "clamp_max of a nan by a dual": lambda lib, d: lib.clamp_max(lib.tensor([1.0, np.nan, 1.0], dtype=lib.float64), d),
    "clamp_max by a dual, plain self": lambda lib, d: lib.tensor(X * -1).clamp_max(d * 0.5),
    "where of two duals, -0. tangent": lambda lib, d: lib.where(d > 0, d, d * -0.0),
    # a bilinear op given one tensor twice: one term per place (it took the tangent twice: ẋ·ẋ)
    "dot itself": lambda lib, d: d[0].dot(d[0]),
    "mm itself": lambda lib, d: d[:, :2].mm(d[:, :2]),
    "outer itself": lambda lib, d: d[1].outer(d[1]),
    # PyTorch computes the zero tangent's term too: 0 · inf is nan
    "bmm at inf": lambda lib, d: lib.tensor([[[np.inf, 1.0]]]).bmm(d.reshape(1, 2, 3)),
    "mv at nan": lambda lib, d: d.mv(lib.tensor([np.nan, 1.0, 2.0])),
    # no gradient at all (norm of p = 0): a zero tangent
    "norm p=0": lambda lib, d: d.norm(0),
    "norm p=0 dim": lambda lib, d: lib.norm(d, 0, dim=1),
    # ops PyTorch refuses forward AD for
    "floor_divide": lambda lib, d: d.floor_divide(2.0),
    "//": lambda lib, d: 2.0 // d,
    "floor_divide_": _inplace(lambda lib, y: y.floor_divide_(2.0)),
    "floor_divide_ itself": _inplace(lambda lib, y: y.floor_divide_(y)),
    "rremainder": lambda lib, d: 2.0 % d,
    "bincount of dual weights": lambda lib, d: lib.bincount(lib.tensor([0, 2, 2]), weights=d[0]),
    "histogram of a dual": lambda lib, d: lib.histogram(d, 3)[0],
    # nodes of several forward kinds: a value tensor / a src that carries a tangent
    "masked_fill dual value": lambda lib, d: d.masked_fill(lib.tensor([True, False, True]), d[0, 1]),
    "masked_fill plain self": lambda lib, d: lib.zeros(2, 3, dtype=lib.float64).masked_fill(
        lib.tensor([True, False, True]), d[1, 1]),
    "scatter dual src": lambda lib, d: lib.zeros(2, 3, dtype=lib.float64).scatter(
        1, lib.tensor([[2, 0], [1, 1]]), d[:, :2]),
    "scatter_ dual src": _inplace(lambda lib, y: y.scatter_(1, lib.tensor([[2], [0]]), y[:, :1] * 3)),
    # only the shape or dtype of `other` is read: no tangent flows from it
    "view_as a dual": lambda lib, d: lib.tensor(X).reshape(3, 2).view_as(d),
    "reshape_as a dual": lambda lib, d: lib.tensor(X).reshape_as(d.reshape(3, 2)),
    "expand_as a dual": lambda lib, d: lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64).expand_as(d),
    "type_as a dual": lambda lib, d: lib.tensor(X, dtype=lib.float32).type_as(d),
    # clamp with tensor bounds that broadcast self larger: PyTorch's clamp_jvp (its backward masks would refuse)
    "clamp bounds broadcast larger": lambda lib, d: d[0].clamp(min=d[1:] * 0.5, max=(d * 3).abs()),
    "clamp min tie": lambda lib, d: d.clamp(min=lib.tensor(X)),
    "clamp float32 by a 0-d float64 bound": lambda lib, d: lib.tensor([[0.5]], dtype=lib.float32).clamp(min=d.sum()),
    "clamp max only": lambda lib, d: lib.clamp(d, max=lib.tensor([0.0, 0.0, 0.0], dtype=lib.float64)),
    # an in-place write into an expanded view, whose tangent is expanded too
    "mul_ into expand_as": lambda lib, d: _written(lib.tensor(X[:1]).expand_as(d), lambda v: v.mul_(d)),
    "fill_ of a meshgrid output": lambda lib, d: _written(lib.meshgrid([d[0], d[1]], indexing="ij")[0][0],
                                                          lambda v: v.fill_(2.0)),
    # the tangent's dtype is the output's (a formula's float64 constant does not promote a float32 tangent)
    "xlogy float32": lambda lib, d: d.float().xlogy(1.5),
    "norm -inf float32": lambda lib, d: d.float().norm(p=float("-inf")),
    "clamp float32 tensor bounds": lambda lib, d: d.float().clamp(min=lib.zeros(3), max=lib.ones(2, 1)),
    # a primal that requires grad: PyTorch's formula computes every term, the zero tangent's too, so the tangent
    # requires grad when a primal the formula reads does (d * 2: other_t * self + self_t * other)
    "mul by a number, requires grad": lambda lib, d: _requiring(lib) * 2,
    "div by a number, requires grad": lambda lib, d: _requiring(lib) / 3.0,
    "mul a plain tensor, requires grad": lambda lib, d: _requiring(lib) * lib.tensor(V),
    "add a number, requires grad": lambda lib, d: _requiring(lib) + 2,
    # an in-place op copies the new tangent into the old one (self_t.copy_): a tangent read before requires grad
    "tangent read before exp_, requires grad": lambda lib, d: _read_before(lib, lambda y: y.exp_()),
    "tangent read before addcdiv_ by a grad-requiring tensor": lambda lib, d: _read_before(
        lib, lambda y: y.addcdiv_(lib.tensor(V), lib.tensor(X + 5, requires_grad=True), value=0.5)),
    # a formula that hands back an input's tangent (a 0-d cumprod or sort) gets a copy: a later write into the input
    # leaves it as it was (seed 560 program 378); PyTorch's 0-d cumprod_jvp is self_t / self * result (nan at inf)
    "cumprod of a 0-d, then log2_": lambda lib, d: _unpacked_before(lib, lambda y: y[0, 0].cumprod(0),
                                                                    lambda y: y.log2_()),
    "sort of a 0-d, then mul_": lambda lib, d: _unpacked_before(lib, lambda y: y[1, 2].sort()[0], lambda y: y.mul_(3)),
    "topk of a 0-d, then mul_": lambda lib, d: _unpacked_before(lib, lambda y: y[1, 2].topk(1)[0],
                                                                lambda y: y.mul_(3)),
    "cumprod of a 0-d inf": lambda lib, d: (d[0, 1] + np.inf).cumprod(0),
    "cumprod of a 0-d zero": lambda lib, d: (d[0, 1] * 0).cumprod(0),
    # max()/min() over everything: PyTorch's evenly_read_jvp, sum(mask * (ẋ / count)): a NaN result matches no
    # element (nan, not the NaN's tangent); max(dim)/min(dim) gather the tangent at the index and amax/amin take the
    # mean of the tangents at the maxima, so another element's inf or nan tangent does not reach them
    "max of a nan": lambda lib, d: lib.max(_dual(lib, NAN_AT_1, V)),
    "min of a nan, requires grad": lambda lib, d: _dual(lib, NAN_AT_1, V, True).min(),
    "max with an inf tangent": lambda lib, d: _dual(lib, X, INF_T).max(),
    "max(dim) with an inf tangent off the max": lambda lib, d: _dual(lib, X, INF_T).max(1)[0],
    "min(dim) keepdim with a nan tangent": lambda lib, d: _dual(lib, X, INF_T, True).min(0, keepdim=True)[0],
    "amax with an inf tangent off the max": lambda lib, d: _dual(lib, X, INF_T).amax(1),
    "amin of a nan": lambda lib, d: _dual(lib, NAN_AT_1, V).amin(1, keepdim=True),
    "amax of a tie": lambda lib, d: _dual(lib, [[1.0, 3.0, 3.0]], [[2.0, 1.0, 4.0]], True).amax(),
    # over no elements, PyTorch's formulas give nan where a sum of the derived terms is 0: std (var's tangent over
    # 2 result), logsumexp (0 / 0) and a loss's mean of its terms
    "std of an empty tensor": lambda lib, d: d[:, :0].std(),
    "std(dim) of empty rows": lambda lib, d: d[:, :0].std(1),
    "var of an empty tensor": lambda lib, d: d[:, :0].var(),
    "logsumexp of an empty tensor": lambda lib, d: d[:0].logsumexp(0),
    "logsumexp of empty rows, requires grad": lambda lib, d: _requiring(lib)[:, :0].logsumexp(1),
    "mse_loss of empty tensors": lambda lib, d: lib.nn.functional.mse_loss(d[:0], lib.tensor(X[:0])),
    "smooth_l1_loss of empty tensors": lambda lib, d: lib.nn.functional.smooth_l1_loss(d[:0], lib.tensor(X[:0])),
    "mse_loss sum of empty tensors": lambda lib, d: lib.nn.functional.mse_loss(d[:0], lib.tensor(X[:0]),
                                                                             reduction="sum"),
    "logsumexp with an inf": lambda lib, d: _dual(lib, [[1.0, np.inf, 0.0]], V[:1]).logsumexp(1),
    "std keepdim": lambda lib, d: d.std(0, keepdim=True),
    # the term of an operand without a tangent drops out as PyTorch's zero tensor does, also when the tangent gets a
    # graph (a primal requires grad): no zero's sign flipped (-0. + +0.), no nan from 0 · log(-1) (seed 900
    # programs 80, 120, 390: fmod(0, d))
    "fmod of a plain zero by a dual, requires grad": lambda lib, d: lib.fmod(
        lib.zeros(1, 1, dtype=lib.float64), _dual(lib, [[1.0, 1.0, 1.0, 1.0]], [[-2.5, -1.7, 0.5, 0.4]], True)),
    "remainder of a plain zero by a dual, requires grad": lambda lib, d: lib.remainder(
        lib.zeros(1, 1, dtype=lib.float64, requires_grad=True), _dual(lib, [[1.0, 1.0, 1.0]], [[-2.5, -1.7, 0.5]])),
    "mul by a plain -0., requires grad": lambda lib, d: _dual(lib, [1.0, 2.0, -1.0], [1.0, -1.0, -0.0], True)
    * lib.tensor([-0.0, 0.0, 3.0], dtype=lib.float64),
    "add a grad-requiring tensor to -0. tangents": lambda lib, d: lib.tensor(X[0], requires_grad=True)
    + _dual(lib, X[1], [-0.0, -0.0, -0.0]),
    "pow by a grad-requiring exponent at a negative base": lambda lib, d: lib.pow(
        _dual(lib, [0.0, 1.0, -1.0, 0.0], [-2.2, 2.5, -1.0, 1.0]),
        lib.tensor([0.0, 2.0, 3.0, 0.5], dtype=lib.float64, requires_grad=True)),
    # pow with a plain base: PyTorch's pow_backward_self term is +0. even for its zero tensor (a `where`), so the
    # exponent's term's -0. becomes +0.
    "pow of a plain zero base": lambda lib, d: lib.pow(lib.zeros(4, dtype=lib.float64),
                                                       _dual(lib, [0.0, 1.0, -1.0, 2.0], [-2.2, 2.5, -1.0, 1.0])),
    "pow of a plain base, requires grad": lambda lib, d: lib.pow(
        lib.tensor([0.0, 0.0, 2.0, 2.0], dtype=lib.float64),
        _dual(lib, [0.0, 0.5, -1.0, 2.0], [-2.2, 2.5, -1.0, -1.0], True)),
    # atan2: PyTorch's (-self · other_t + other · self_t) / (self² + other²), nan at the origin (seed 900 program
    # 227), where the backward rule gives 0
    "atan2 of a plain zero by a dual zero": lambda lib, d: lib.atan2(
        lib.zeros(1, 1, dtype=lib.float64), _dual(lib, [[0.0, 0.0, 0.0]], [[-2.2, 2.5, 0.0]])),
    "atan2 of two duals at the origin": lambda lib, d: lib.atan2(_dual(lib, [[0.0, 1.0, 0.0]], [[-2.2, 2.5, 0.0]]),
                                                                 _dual(lib, [[0.0, 0.0, 2.0]], [[1.0, -1.0, 3.0]])),
    "atan2 by a plain tensor, -0. tangents, requires grad": lambda lib, d: _dual(
        lib, [1.0, 2.0, -1.0], [-0.0, 0.0, -0.0], True).atan2(lib.tensor([-1.0, 0.0, 3.0], dtype=lib.float64)),
    # avg_pool2d sums each window in PyTorch's order (np.sum's order depends on the strides): sign() of a window
    # that sums to 0 mathematically is 1 in PyTorch (seed 900 program 284)
    "sign of avg_pool2d": lambda lib, d: lib.sign(lib.nn.functional.avg_pool2d(
        _dual(lib, np.pad([[[[-1.94, -0.9], [1.73, 1.11]]]], ((0, 0), (0, 0), (0, 4), (0, 3))), np.ones((1, 1, 6, 5))),
        2)),
    # binary_cross_entropy(_with_logits): PyTorch's forward formulas (both backward formulas, unreduced, on the
    # tangents, then the reduction); reduction='none' had no forward rule. A plain target's tangent is a tensor of
    # zeros in binary_cross_entropy (0 · logit(0) is nan) and PyTorch's zero tensor in the logits form (-0. stays)
    "binary_cross_entropy none": lambda lib, d: lib.nn.functional.binary_cross_entropy(
        d.sigmoid(), lib.tensor(P), reduction="none"),
    "binary_cross_entropy at 0 and 1, plain target": lambda lib, d: lib.nn.functional.binary_cross_entropy(
        d.clamp(0, 1), lib.tensor(P), reduction="none"),
    "binary_cross_entropy at 0 and 1, plain target, mean": lambda lib, d: lib.nn.functional.binary_cross_entropy(
        d.clamp(0, 1), lib.tensor(P)),
    "binary_cross_entropy dual target, weight, sum": lambda lib, d: lib.nn.functional.binary_cross_entropy(
        lib.tensor(P), (d * 0.1).sigmoid(), weight=lib.tensor(V[0]), reduction="sum"),
    "binary_cross_entropy none, requires grad": lambda lib, d: lib.nn.functional.binary_cross_entropy(
        _requiring(lib).sigmoid(), lib.tensor(P), reduction="none"),
    "binary_cross_entropy_with_logits none": lambda lib, d: lib.nn.functional.binary_cross_entropy_with_logits(
        d, lib.tensor(P), reduction="none"),
    "binary_cross_entropy_with_logits dual target only": lambda lib, d: (
        lib.nn.functional.binary_cross_entropy_with_logits(lib.tensor(X * 0), d.sigmoid(), reduction="none")),
    "binary_cross_entropy_with_logits pos_weight, weight, none": lambda lib, d: (
        lib.nn.functional.binary_cross_entropy_with_logits(d, (d * 0.5).sigmoid(), weight=lib.tensor(V[1]),
                                                           pos_weight=lib.tensor([0.5, 2.0, 3.0]).double(),
                                                           reduction="none")),
    "binary_cross_entropy_with_logits none, requires grad": lambda lib, d: (
        lib.nn.functional.binary_cross_entropy_with_logits(_requiring(lib), lib.tensor(P), reduction="none")),
    # a bilinear op's plain operand: PyTorch computes its zero tangent's term too, 0 @ b, which records a graph where
    # b requires grad, so the tangent requires grad (minigrad left the term out)
    "mm plain @ dual, requires grad": lambda lib, d: lib.tensor(X.T) @ _requiring(lib),
    "matmul batched plain @ dual, requires grad": lambda lib, d: lib.tensor(X.T[None]) @ _requiring(lib),
    "mv dual, plain, requires grad": lambda lib, d: _requiring(lib).mv(lib.tensor(V[0])),
    "mv empty, requires grad": lambda lib, d: _requiring(lib)[:0].mv(lib.tensor(V[0])),
    "dot plain, dual, requires grad": lambda lib, d: lib.tensor(V[0]).dot(_requiring(lib)[1]),
    "linear of a dual by a plain weight, requires grad": lambda lib, d: lib.nn.functional.linear(
        _requiring(lib), lib.tensor(V)),
    "bmm plain, dual, requires grad": lambda lib, d: lib.tensor(X.T[None]).bmm(_requiring(lib)[None]),
    # at inf or NaN, a plain operand's term is PyTorch's zero tensor times it: an exact zero, with the product's graph
    "outer of an empty plain vector and a dual with nan, requires grad": lambda lib, d: lib.outer(
        lib.zeros(0, dtype=lib.float64), _requiring_nan(lib)),
    "mul of a plain -0. by a dual with nan, requires grad": lambda lib, d: lib.tensor([[1.0], [-0.0]]).double() * (
        _requiring_nan(lib)),
    "mul by a plain inf, requires grad": lambda lib, d: _requiring(lib) * lib.tensor([np.inf, -1.0, 0.0]).double(),
    # narrow's tangent is the same slice of the tangent: no graph of its own (it recorded a SliceBackward0)
    "narrow, requires grad": lambda lib, d: _requiring(lib).narrow(1, 0, 2),
    "narrow to empty, requires grad": lambda lib, d: _requiring(lib).narrow(1, 1, 0),
    # an in-place op on a view: the tangent read before (the view's and its base's) is written in place
    "tangent of a view read before its exp_, requires grad": lambda lib, d: _read_before_view_write(
        lib, lambda v: v.exp_()),
    "tangent of a view read before its div_, requires grad": lambda lib, d: _read_before_view_write(
        lib, lambda v: v.div_(3)),
    "base's tangent read before a view's mul_, requires grad": lambda lib, d: _read_before_view_write(
        lib, lambda v: v.mul_(2), base=True),
    "tangent of a view read before its add_, requires grad": lambda lib, d: _read_before_view_write(
        lib, lambda v: v.add_(1)),
    # an integer tensor among a list op's operands has no tangent: zeros, not its values (seed 901 program 514)
    "stack with an integer tensor": lambda lib, d: lib.stack((d[:, :1], lib.tensor([[0], [1]])), dim=-1),
    "cat an integer tensor first": lambda lib, d: lib.cat((lib.tensor([[3, 1, 2]]), d), dim=0),
    "index by a tuple of index tensors": lambda lib, d: d[(lib.tensor([0, 1]), lib.tensor([2, 2]))],
    # a non-view output's tangent takes its layout, as PyTorch's set_fw_grad restrides it: a view of it works
    # where the primal's does (seed 901 program 324: conv1d by a grad-requiring weight, then view_as)
    "view of a grouped conv1d's tangent": lambda lib, d: lib.nn.functional.conv1d(
        _dual(lib, np.zeros((2, 4, 6)), np.arange(48.0).reshape(2, 4, 6) / 7),
        lib.ones(4, 1, 3, dtype=lib.float64, requires_grad=True), groups=4).view(32),
    # fmod and remainder by a number: PyTorch's tangent is self_t itself (its formula for `self: grad`), so a
    # write into the output's tangent is one into the input's (seed 900 program 43: v5 = d4.fmod(0.7);
    # v5.clamp_min_(0.1) zeroes d4's tangent)
    "fmod by a number, then clamp_min_": lambda lib, d: _input_after(d, lambda y: y.fmod(0.7),
                                                                     lambda o: o.clamp_min_(0.1)),
    "remainder by a number, then mul_, requires grad": lambda lib, d: _input_after(
        _requiring(lib), lambda y: y.remainder(0.7), lambda o: o.mul_(2)),
    # a loss's kernel turns PyTorch's zero tensor of a plain target into zeros: its term counts, +0. (seed 903
    # program 962: mse_loss(d, x, reduction='none') where d == x)
    "mse_loss none at the target": lambda lib, d: lib.nn.functional.mse_loss(
        _dual(lib, [[0.0], [0.0], [1.0]], [[-2.19], [1.36], [-1.13]]), lib.tensor([[0.0], [0.0], [1.0]]).double(),
        reduction="none"),
    "smooth_l1_loss none at the target, plain self": lambda lib, d: lib.nn.functional.smooth_l1_loss(
        lib.tensor([[0.0], [1.0]]).double(), _dual(lib, [[0.0], [1.0]], [[-2.19], [1.36]]), reduction="none"),
    "mse_loss none by an inf target": lambda lib, d: lib.nn.functional.mse_loss(
        _dual(lib, [[0.0], [0.0]], [[-2.19], [1.36]]), lib.tensor([[[0.0]], [[np.inf]]]).double(), reduction="none"),
    "bce_with_logits at -inf, plain target": lambda lib, d: lib.nn.functional.binary_cross_entropy_with_logits(
        _dual(lib, [[0.0, -np.inf, 0.0]], V[:1]), lib.tensor([[0.5, 0.3, 0.7]]).double()),
    # warnings: once per op (not again from the run that reads its rule), none from NumPy
    "var of one element": lambda lib, d: d[0, :1].var(),
    "std over one": lambda lib, d: d.std(dim=0, keepdim=True)[:, :1].std(dim=0),
    "asin_ at 1": _inplace(lambda lib, y: y.clamp_(-1, 1).asin_()),
    "acos at -1": lambda lib, d: d.clamp(-1, 1).acos(),
}


@pytest.fixture(scope="module")
def warmed(torch):
    """PyTorch's first forward-AD use in a process warns (torch.jit.script's DeprecationWarning, a lazy import)."""
    _run(torch, lambda lib, d: d * 2)
    return torch


@pytest.mark.parametrize("name", list(CASES))
def test_forward_ad_finding_as_torch(warmed, name):
    torch = warmed
    (ours, our_warnings), (theirs, their_warnings) = _run(minigrad, CASES[name]), _run(torch, CASES[name])
    assert our_warnings == [w.replace("torch.", "minigrad.") for w in their_warnings]
    if isinstance(theirs[0], str):
        assert ours == theirs
        return
    assert not isinstance(ours[0], str), ours
    for a, b in zip(ours[:2], theirs[:2]):
        assert (a is None) == (b is None)
        if b is not None:
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-9 if b.dtype == np.float64 else 1e-5, atol=1e-12)
            np.testing.assert_array_equal(np.signbit(a[b == 0]), np.signbit(b[b == 0]))  # zeros' signs too
    assert ours[2] == theirs[2]
