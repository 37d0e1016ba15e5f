"""First and second derivatives of every differentiable op, checked by finite differences.

`minigrad.autograd.gradcheck` and `gradgradcheck` (second order, through create_graph=True) on float64
inputs whose shapes Hypothesis draws: 0-d, size-1, empty, and broadcast pairs. Inputs keep away from
kinks and ties (|x| > 1e-3 for abs/relu/sign, distinct values on a 0.01 grid for max/min, points off
clamp bounds, positive bases for log/sqrt/pow with tensor exponents); PyTorch's choices AT the kinks are
tested in test_kinks.py. No torch needed.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad
from minigrad.autograd import Function, gradcheck, gradgradcheck
from minigrad.autograd.gradcheck import GradcheckError

# -- strategies -------------------------------------------------------------------------------------------
SHAPE = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)
NONEMPTY = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3)
ND = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3)  # at least one dim, no empty
PAIR = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3)

ANY = st.floats(-2, 2, allow_subnormal=False)
SMALL = st.floats(-1.2, 1.2, allow_subnormal=False)
POS = st.floats(0.2, 2, allow_subnormal=False)
AWAY = st.floats(1e-3, 2).flatmap(lambda x: st.sampled_from([x, -x]))  # |x| >= 1e-3: off the kink at 0
GRID = st.integers(-200, 200).map(lambda i: i / 100)  # with unique=True: no ties, gaps >= 0.01
NONZERO_FACTOR = st.floats(0.3, 1.5).flatmap(lambda x: st.sampled_from([x, -x]))  # prod: no zeros, moderate size
SOME_ZEROS = st.one_of(st.just(0.0), NONZERO_FACTOR)  # prod, cumprod with exact zeros: their other formulas


def arr(data, shape, elements=ANY, unique=False):
    return data.draw(hnp.arrays(np.float64, shape, elements=elements, unique=unique))


def dim_of(data, ndim):
    n = max(ndim, 1)
    return data.draw(st.integers(-n, n - 1))


def dims_of(data, ndim):
    n = max(ndim, 1)
    dims = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    return tuple(d - n if data.draw(st.booleans()) else d for d in dims)


def T(a):
    return minigrad.tensor(a, dtype=minigrad.float64)


# -- the ops: name -> case(data) returning (fn, [float64 arrays that require grad]) ----------------------------
def unary(fn, elements=ANY, shapes=SHAPE):
    def case(data):
        return fn, [arr(data, data.draw(shapes), elements)]
    return case


def binary(fn, e1=ANY, e2=ANY):
    def case(data):
        s1, s2 = data.draw(PAIR).input_shapes
        return fn, [arr(data, s1, e1), arr(data, s2, e2)]
    return case


def reduce_dim(make_fn, elements=ANY, shapes=ND, tuple_dims=False, unique=False):
    def case(data):
        shape = data.draw(shapes)
        dim = dims_of(data, len(shape)) if tuple_dims else dim_of(data, len(shape))
        keepdim = data.draw(st.booleans())
        return make_fn(dim, keepdim), [arr(data, shape, elements, unique)]
    return case


def scalar_side(fn, elements=ANY):
    def case(data):
        c = data.draw(st.sampled_from([2, -3, 0.5, 1.5]))
        return (lambda x: fn(x, c)), [arr(data, data.draw(SHAPE), elements)]
    return case


def _matmul(data):
    n, m, p, b = (data.draw(st.integers(1, 3)) for _ in range(4))
    pattern = data.draw(st.sampled_from([
        ((m,), (m,)), ((n, m), (m,)), ((m,), (m, p)), ((n, m), (m, p)), ((b, n, m), (m, p)), ((b, n, m), (m,)),
        ((m,), (b, m, p)), ((n, m), (b, m, p)), ((b, n, m), (b, m, p)), ((2, 1, n, m), (b, m, p)),
        ((0, m), (m, p)), ((n, 0), (0, p))]))
    return (lambda a, c: a @ c), [arr(data, s) for s in pattern]


def _clamp_scalar(data):
    lo = data.draw(st.sampled_from([-1.0, -0.5, None]))
    hi = data.draw(st.sampled_from([0.5, 1.0] if lo is not None else [0.5]))
    elems = ANY.filter(lambda x: all(b is None or abs(x - b) > 1e-3 for b in (lo, hi)))
    return (lambda x: x.clamp(lo, hi)), [arr(data, data.draw(SHAPE), elems)]


def _clamp_tensor(data):
    shape = data.draw(NONEMPTY)
    x = arr(data, shape, GRID, unique=True)
    lo = x - data.draw(st.sampled_from([0.005, -0.005]))  # bounds 0.005 away from every point, either side
    hi = lo + 1.0
    return (lambda a, b, c: a.clamp(b, c)), [x, lo, hi]


def _max_min(name):
    def case(data):
        x = arr(data, data.draw(NONEMPTY), GRID, unique=True)
        return (lambda a: getattr(a, name)()), [x]
    return case


def _maximum(name):
    def case(data):
        s1, s2 = data.draw(PAIR).input_shapes
        a = arr(data, s1, GRID)
        b = arr(data, s2, GRID.map(lambda v: v + 0.005))  # never equal to a value of a
        return (lambda x, y: getattr(minigrad, name)(x, y)), [a, b]
    return case


def _where(data):
    s1, s2 = data.draw(PAIR).input_shapes
    shape = np.broadcast_shapes(s1, s2)
    cond = data.draw(hnp.arrays(np.bool_, shape))
    return (lambda a, b: minigrad.where(T(cond).bool(), a, b)), [arr(data, s1), arr(data, s2)]


def _var_like(name):
    def case(data):
        shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=3))
        dim = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1))
        keepdim = data.draw(st.booleans())
        correction = data.draw(st.sampled_from([0, 1]))
        x = arr(data, shape, GRID, unique=True)
        return (lambda a: getattr(a, name)(dim=dim, keepdim=keepdim, correction=correction)), [x]
    return case


def _norm(data):
    shape = data.draw(ND)
    p = data.draw(st.sampled_from([2, 1, 3, "fro", float("inf")]))
    dim = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    x = arr(data, shape, GRID.filter(lambda v: abs(v) > 0.005), unique=True)
    return (lambda a: a.norm(p=p, dim=dim)), [x]


def _cat(data):
    base = list(data.draw(ND))
    dim = dim_of(data, len(base))
    k = data.draw(st.integers(1, 3))
    shapes = []
    for _ in range(k):
        s = list(base)
        s[dim] = data.draw(st.integers(0, 2))
        shapes.append(tuple(s))
    return (lambda *xs: minigrad.cat(list(xs), dim)), [arr(data, s) for s in shapes]


def _stack(data):
    shape = data.draw(SHAPE)
    k = data.draw(st.integers(1, 3))
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    return (lambda *xs: minigrad.stack(list(xs), dim)), [arr(data, shape) for _ in range(k)]


def _split(data):
    shape = data.draw(ND)
    dim = dim_of(data, len(shape))
    size = data.draw(st.integers(1, 3))
    return (lambda a: a.split(size, dim)), [arr(data, shape)]


def _split_sizes(data):
    shape = list(data.draw(ND))
    dim = dim_of(data, len(shape))
    n = shape[dim]
    cut = data.draw(st.integers(0, n))
    return (lambda a: a.split([cut, n - cut], dim)), [arr(data, tuple(shape))]


def _chunk(data):
    shape = data.draw(ND)
    dim = dim_of(data, len(shape))
    chunks = data.draw(st.integers(1, 3))
    return (lambda a: a.chunk(chunks, dim)), [arr(data, shape)]


def _unbind(data):
    shape = data.draw(ND)
    dim = dim_of(data, len(shape))
    return (lambda a: a.unbind(dim)), [arr(data, shape)]


def _gather(data):
    shape = data.draw(ND)
    dim = dim_of(data, len(shape))
    idx_shape = tuple(data.draw(st.integers(1, 3)) if i == dim % len(shape) else s for i, s in enumerate(shape))
    idx = data.draw(hnp.arrays(np.int64, idx_shape, elements=st.integers(0, shape[dim] - 1)))
    return (lambda a: a.gather(dim, minigrad.from_numpy(idx))), [arr(data, shape)]


def _scatter(data):
    shape = data.draw(ND)
    dim = dim_of(data, len(shape))
    d = dim % len(shape)
    rows = data.draw(st.integers(1, shape[d]))  # distinct positions per slice: a deterministic result
    idx = np.stack([np.random.default_rng(data.draw(st.integers(0, 99))).permutation(shape[d])[:rows]
                    for _ in range(int(np.prod([s for i, s in enumerate(shape) if i != d])))], -1)
    idx = np.moveaxis(idx.reshape((rows,) + tuple(s for i, s in enumerate(shape) if i != d)), 0, d)
    return (lambda a, b: a.scatter(dim, minigrad.from_numpy(np.ascontiguousarray(idx)), b)), \
        [arr(data, shape), arr(data, idx.shape)]


def _masked_fill(data):
    shape = data.draw(SHAPE)
    mask = data.draw(hnp.arrays(np.bool_, shape))
    return (lambda a, v: a.masked_fill(minigrad.from_numpy(mask), v)), [arr(data, shape), arr(data, ())]


def _getitem(data):
    shape = data.draw(hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4))
    key = data.draw(st.sampled_from([
        (0,), (-1,), (slice(None), 0), (slice(1, None),), (slice(None, None, 2),), (None, Ellipsis, 0),
        (Ellipsis, slice(0, 1)), ([0, 0, -1],), (slice(None), [0, 0]), ("mask",), ([0, 0], slice(1, None)),
        (0, slice(None), [0, 0]) if len(shape) == 3 else (0, [0, 0])]))
    x = arr(data, shape)
    if key == ("mask",):
        key = data.draw(hnp.arrays(np.bool_, shape))
    return (lambda a: a[key]), [x]


def _setitem(data):
    shape = data.draw(hnp.array_shapes(min_dims=2, max_dims=3, min_side=2, max_side=3))
    key = data.draw(st.sampled_from([0, (slice(None, None, 2),), (Ellipsis, -1), [0, 1], (slice(1, None), [0])]))
    x = arr(data, shape)
    target = np.empty(shape)[key]
    tail = target.shape[data.draw(st.integers(0, target.ndim)):]  # a value broadcast into the target
    v = arr(data, tail)

    def fn(a, b):
        c = a.clone()
        c[key] = b
        return c
    return fn, [x, v]


def _view_write(data):
    shape = data.draw(hnp.array_shapes(min_dims=2, max_dims=3, min_side=2, max_side=3))
    which = data.draw(st.sampled_from(["row", "col", "slice-t", "view"]))
    op = data.draw(st.sampled_from(["mul_", "add_", "copy_", "exp_", "clamp_"]))
    x = arr(data, shape, SMALL)

    def view_of(b):
        if which == "row":
            return b[0]
        if which == "col":
            return b[:, 1]
        if which == "slice-t":
            return b.transpose(0, 1)[1:]
        return b.view(-1)[::2]

    vshape = view_of(minigrad.zeros(shape)).shape
    other = arr(data, tuple(vshape[1:]), SMALL)

    def fn(a, o):
        b = a * 1
        v = view_of(b)
        if op == "exp_":
            v.exp_()
            return b * o.sum()
        if op == "clamp_":
            v.clamp_(-0.5, 0.5)
            return b + o.sum()
        getattr(v, op)(o)
        return b
    if op == "clamp_":
        x = arr(data, shape, SMALL.filter(lambda t: abs(abs(t) - 0.5) > 1e-3))
    return fn, [x, other]


def _inplace(data):
    s1, s2 = data.draw(PAIR).input_shapes
    out = np.broadcast_shapes(s1, s2)
    op = data.draw(st.sampled_from(["add_", "sub_", "mul_", "div_"]))
    a = arr(data, out)
    b = arr(data, s2, POS if op == "div_" else ANY)
    return (lambda x, y: getattr(x * 1, op)(y)), [a, b]


def _prod_dim(elements):
    def case(data):
        shape = data.draw(ND)
        dim = dim_of(data, len(shape))
        keepdim = data.draw(st.booleans())
        return (lambda a: a.prod(dim, keepdim=keepdim)), [arr(data, shape, elements)]
    return case


def _repeat(data):
    shape = data.draw(SHAPE)
    extra = data.draw(st.integers(0, 1))
    reps = tuple(data.draw(st.integers(1, 2)) for _ in range(len(shape) + extra))
    return (lambda a: a.repeat(*reps) if reps else a.repeat(())), [arr(data, shape)]


def _expand(data):
    shape = data.draw(SHAPE)
    target = tuple(data.draw(st.integers(1, 2)) if s == 1 else s for s in shape)
    lead = tuple(data.draw(st.lists(st.integers(1, 2), max_size=1)))
    return (lambda a: a.expand(*(lead + target)) if lead + target else a.expand(())), [arr(data, shape)]


def _permute(data):
    shape = data.draw(SHAPE)
    perm = data.draw(st.permutations(range(len(shape))))
    return (lambda a: a.permute(*perm) if perm else a.permute(())), [arr(data, shape)]


def _transpose(data):
    shape = data.draw(ND)
    d0, d1 = dim_of(data, len(shape)), dim_of(data, len(shape))
    return (lambda a: a.transpose(d0, d1)), [arr(data, shape)]


def _reshape(data):
    shape = data.draw(SHAPE)
    n = int(np.prod(shape))
    target = data.draw(st.sampled_from([(-1,), (n, 1), (1, -1)] if n else [(-1,), (0, 1)]))
    how = data.draw(st.sampled_from(["reshape", "view", "flatten", "t-reshape"]))
    if how == "flatten":
        return (lambda a: a.flatten()), [arr(data, shape)]
    if how == "t-reshape":
        return (lambda a: a.mT.reshape(target) if a.ndim >= 2 else a.reshape(target)), [arr(data, shape)]
    return (lambda a: getattr(a, how)(*target)), [arr(data, shape)]


def _squeeze(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=2))
    mode = data.draw(st.sampled_from(["all", "dim", "unsqueeze"]))
    d = dim_of(data, len(shape))
    if mode == "all":
        return (lambda a: a.squeeze()), [arr(data, shape)]
    if mode == "dim":
        return (lambda a: a.squeeze(d)), [arr(data, shape)]
    return (lambda a: a.unsqueeze(d)), [arr(data, shape)]


def _narrow(data):
    shape = data.draw(ND)
    dim = dim_of(data, len(shape))
    n = shape[dim]
    start = data.draw(st.integers(0, n))
    length = data.draw(st.integers(0, n - start))
    return (lambda a: a.narrow(dim, start, length)), [arr(data, shape)]


def _softmax(name):
    def case(data):
        shape = data.draw(SHAPE)
        dim = dim_of(data, len(shape))
        return (lambda a: getattr(a, name)(dim)), [arr(data, shape)]
    return case


def _mm(data):
    n, m, p = (data.draw(st.integers(0, 3)) for _ in range(3))
    return (lambda a, b: a.mm(b)), [arr(data, (n, m)), arr(data, (m, p))]


def _mv(data):
    n, m = (data.draw(st.integers(0, 3)) for _ in range(2))
    return (lambda a, b: a.mv(b)), [arr(data, (n, m)), arr(data, (m,))]


def _bmm(data):
    b, n, m, p = (data.draw(st.integers(0, 3)) for _ in range(4))
    return (lambda x, y: x.bmm(y)), [arr(data, (b, n, m)), arr(data, (b, m, p))]


def _vec_pair(fn):
    def case(data):
        n, m = data.draw(st.integers(0, 4)), data.draw(st.integers(0, 4))
        return fn, [arr(data, (n,)), arr(data, (n if fn is _DOT else m,))]
    return case


_DOT = lambda a, b: a.dot(b)  # noqa: E731


def _cumsum(data):
    shape = data.draw(SHAPE)
    dim = dim_of(data, len(shape))
    return (lambda a: a.cumsum(dim)), [arr(data, shape)]


def _cumprod(elements):
    def case(data):
        shape = data.draw(SHAPE)
        dim = dim_of(data, len(shape))
        return (lambda a: a.cumprod(dim)), [arr(data, shape, elements)]
    return case


def _remainder(data):
    s = data.draw(SHAPE)
    # off the jumps of x % 0.7 (at multiples of 0.7)
    x = arr(data, s, ANY.filter(lambda v: abs(v / 0.7 - round(v / 0.7)) > 1e-3))
    return (lambda a: a % 0.7), [x]


def _floor_like(name):
    def case(data):
        x = arr(data, data.draw(SHAPE), ANY.filter(lambda v: abs(v * 2 - round(v * 2)) > 1e-3))  # off steps
        return (lambda a: getattr(a, name)()), [x]
    return case


def _max_dim(name):
    return reduce_dim(lambda d, k: (lambda a: getattr(a, name)(d, keepdim=k).values), GRID, unique=True)


def _amax(name):
    return reduce_dim(lambda d, k: (lambda a: getattr(a, name)(d, keepdim=k)), GRID, tuple_dims=True, unique=True)


OPS = {
    "add": binary(lambda a, b: a + b),
    "add-alpha": binary(lambda a, b: minigrad.add(a, b, alpha=-1.5)),
    "add-scalar": scalar_side(lambda a, c: c + a),
    "sub": binary(lambda a, b: a - b),
    "rsub": scalar_side(lambda a, c: c - a),
    "mul": binary(lambda a, b: a * b),
    "mul-scalar": scalar_side(lambda a, c: a * c),
    "div": binary(lambda a, b: a / b, ANY, POS),
    "rdiv": scalar_side(lambda a, c: c / a, POS),
    "neg": unary(lambda a: -a),
    "pow-scalar": scalar_side(lambda a, c: a ** c, POS),
    "pow-int": unary(lambda a: a ** 3),
    "pow-tensor": binary(lambda a, b: a ** b, POS, AWAY),  # PyTorch's d/dbase is where(exp == 0, 0, ...)
    "rpow": scalar_side(lambda a, c: abs(c) ** a),
    "square": unary(lambda a: a.square()),
    "exp": unary(lambda a: a.exp()),
    "exp2": unary(lambda a: a.exp2()),
    "log": unary(lambda a: a.log(), POS),
    "log1p": unary(lambda a: a.log1p(), POS),
    "sin": unary(lambda a: a.sin()),
    "cos": unary(lambda a: a.cos()),
    "tan": unary(lambda a: a.tan(), SMALL),
    "tanh": unary(lambda a: a.tanh()),
    "sigmoid": unary(lambda a: a.sigmoid()),
    "erf": unary(lambda a: a.erf()),
    "relu": unary(lambda a: a.relu(), AWAY),
    "abs": unary(lambda a: a.abs(), AWAY),
    "sign": unary(lambda a: a.sign(), AWAY),
    "sqrt": unary(lambda a: a.sqrt(), POS),
    "rsqrt": unary(lambda a: a.rsqrt(), POS),
    "reciprocal": unary(lambda a: a.reciprocal(), POS),
    "floor": _floor_like("floor"),
    "ceil": _floor_like("ceil"),
    "round": _floor_like("round"),
    "trunc": _floor_like("trunc"),
    "remainder": _remainder,
    "clamp": _clamp_scalar,
    "clamp-tensor": _clamp_tensor,
    "clamp_min": unary(lambda a: a.clamp_min(0.25), ANY.filter(lambda v: abs(v - 0.25) > 1e-3)),
    "maximum": _maximum("maximum"),
    "minimum": _maximum("minimum"),
    "where": _where,
    "masked_fill": _masked_fill,
    "matmul": _matmul,
    "mm": _mm,
    "mv": _mv,
    "bmm": _bmm,
    "dot": _vec_pair(_DOT),
    "outer": _vec_pair(lambda a, b: minigrad.outer(a, b)),
    "sum": unary(lambda a: a.sum()),
    "sum-dim": reduce_dim(lambda d, k: (lambda a: a.sum(d, keepdim=k)), tuple_dims=True),
    "mean": unary(lambda a: a.mean(), shapes=NONEMPTY),
    "mean-dim": reduce_dim(lambda d, k: (lambda a: a.mean(d, keepdim=k)), tuple_dims=True),
    "prod": unary(lambda a: a.prod(), NONZERO_FACTOR),
    "prod-zeros": unary(lambda a: a.prod(), SOME_ZEROS),
    "prod-dim": _prod_dim(NONZERO_FACTOR),
    "prod-dim-zeros": _prod_dim(SOME_ZEROS),
    "max": _max_min("max"),
    "min": _max_min("min"),
    "max-dim": _max_dim("max"),
    "min-dim": _max_dim("min"),
    "amax": _amax("amax"),
    "amin": _amax("amin"),
    "var": _var_like("var"),
    "std": _var_like("std"),
    "norm": _norm,
    "logsumexp": reduce_dim(lambda d, k: (lambda a: a.logsumexp(d, keepdim=k)), tuple_dims=True),
    "softmax": _softmax("softmax"),
    "log_softmax": _softmax("log_softmax"),
    "cumsum": _cumsum,
    "cumprod": _cumprod(NONZERO_FACTOR),
    "cumprod-zeros": _cumprod(SOME_ZEROS),
    "cat": _cat,
    "stack": _stack,
    "split": _split,
    "split-sizes": _split_sizes,
    "chunk": _chunk,
    "unbind": _unbind,
    "narrow": _narrow,
    "gather": _gather,
    "scatter": _scatter,
    "repeat": _repeat,
    "expand": _expand,
    "permute": _permute,
    "transpose": _transpose,
    "t": unary(lambda a: a.t(), shapes=hnp.array_shapes(min_dims=0, max_dims=2, max_side=3)),
    "reshape": _reshape,
    "squeeze": _squeeze,
    "clone": unary(lambda a: a.clone()),
    "getitem": _getitem,
    "setitem": _setitem,
    "inplace": _inplace,
    "view-write": _view_write,
}

_SETTINGS = settings(max_examples=15, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                            HealthCheck.filter_too_much])


def _outputs(x) -> tuple:
    return (x,) if isinstance(x, minigrad.Tensor) else tuple(x)


def second_order_check(fn, inputs) -> bool:
    """gradgradcheck done by hand: gradcheck of (inputs, upstream grads) -> first derivatives (create_graph).

    An independent second opinion next to minigrad's own gradgradcheck (which once compared nothing: it
    ran the first-derivative function under no_grad); it turns grad mode on inside, as PyTorch's does.
    """
    rng = np.random.default_rng(0)
    outs = [o for o in _outputs(fn(*inputs)) if o.requires_grad]
    ups = [minigrad.tensor(rng.standard_normal(tuple(o.shape)), dtype=minigrad.float64, requires_grad=True)
           for o in outs]
    n = len(inputs)

    def first_derivative(*args):
        with minigrad.enable_grad():
            ins, gs = args[:n], args[n:]
            outs = [o for o in _outputs(fn(*ins)) if o.requires_grad]
            grads = minigrad.autograd.grad(outs, list(ins), list(gs), create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, tuple(inputs) + tuple(ups))


@pytest.mark.parametrize("name", list(OPS))
@_SETTINGS
@given(data=st.data())
def test_first_and_second_derivatives(name, data):
    fn, arrays = OPS[name](data)
    inputs = [minigrad.tensor(a, dtype=minigrad.float64, requires_grad=True) for a in arrays]
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)
    assert second_order_check(fn, inputs)


def test_every_differentiable_contract_op_is_checked():
    names = ("add sub mul div neg pow exp log log1p sin cos tan tanh sigmoid relu abs sqrt rsqrt square reciprocal "
             "sign clamp floor ceil round maximum minimum where matmul mm mv bmm dot outer sum mean prod max min amax "
             "amin std var norm logsumexp softmax log_softmax cumsum cat stack split chunk reshape transpose "
             "permute squeeze gather masked_fill").split()
    keys = " ".join(OPS)
    assert not [n for n in names if n not in keys]


# -- gradcheck itself ------------------------------------------------------------------------------------------
class WrongSquare(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x  # should be 2 * g * x


class FirstOrderOnlySquare(Function):
    """Right first derivative, but computed from detached values: its own derivative is wrong."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x.detach()


def test_gradcheck_catches_a_wrong_backward():
    x = minigrad.tensor([0.5, -1.5, 2.0], dtype=minigrad.float64, requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(WrongSquare.apply, (x,))
    assert gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False


def test_second_order_check_catches_a_wrong_second_derivative():
    x = minigrad.tensor([0.5, -1.5, 2.0], dtype=minigrad.float64, requires_grad=True)
    assert gradcheck(FirstOrderOnlySquare.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        second_order_check(FirstOrderOnlySquare.apply, (x,))


def test_gradgradcheck_catches_a_wrong_second_derivative():
    x = minigrad.tensor([0.5, -1.5, 2.0], dtype=minigrad.float64, requires_grad=True)
    assert gradcheck(FirstOrderOnlySquare.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradgradcheck(FirstOrderOnlySquare.apply, (x,))


def test_gradcheck_passes_a_right_function_and_an_op_chain():
    x = minigrad.tensor([[0.5, -1.5], [2.0, 0.25]], dtype=minigrad.float64, requires_grad=True)
    assert gradcheck(lambda a: (a.exp() * a.sin()).sum(0).log_softmax(0), (x,))
    assert gradgradcheck(lambda a: (a @ a.t()).tanh(), (x,))
