"""Forward-mode AD: how an op gives its output a tangent when an input carries one (a dual tensor).

Under `forward_ad.dual_level()`, a tensor may carry a tangent (`make_dual`). Every declared op is wrapped by
`forward_aware` (registry.declare): with no level active the wrapper is one list read and the op's own call.
With a level active and a dual input, the op runs as usual (its reverse-mode node included, if an input
requires grad), and its output's tangent is computed *then*, during the forward pass, from the forward rule of
the node the op records (`rule(..., forward=...)`, ops/recording.py):

- "derived" (every `elementwise=True` rule): the derivative is the per-input formula the backward rule already
  states, applied to each input's tangent instead of the output's gradient, summed over inputs (for an
  elementwise op the Jacobian is diagonal, so J v uses the same numbers as vᵀ J);
- "linear": the op is linear in its tensor inputs: the tangent is the op applied to the tangents (zeros for an
  input with none): views, reshapes, sums, cat, indexing... A view's tangent is then the same view of the
  tangent, so an in-place write into one writes through to the base's tangent, as in PyTorch;
- "bilinear": matmul-like, op(a_t, b) + op(a, b_t);
- a function: an explicit formula reading the tangents (`self_t`, `other_t`...) and what the node saves;
- None: PyTorch's NotImplementedError ("Trying to use forward AD with ... that does not support it").

To read a rule's saved values the op is run once more on stand-ins of its floating inputs that require grad,
which makes it record its node (with its arguments: `dim`, `alpha`, ...); the stand-in graph is then dropped.
An in-place op computes the tangent of its out-of-place twin before the write and writes it into the tangent
of the tensor it changes (and so into the base's tangent, for a view). Tangent formulas run on arrays, or on
Tensors when a primal or a tangent requires grad, so reverse mode can differentiate them (and forward-over-
reverse sees the backward formulas' ops, which are ops like any other).
"""

from __future__ import annotations

import functools
import inspect
import warnings

import numpy as np

from .._state import DUAL, FUNC_FORWARD, GRAD
from .._tensor import Tensor, make
from ..autograd.graph import SAVED_HOOKS, accumulator
from . import recording

NOT_IMPLEMENTED = ("Trying to use forward AD with {} that does not support it because it has not been implemented "
                   "yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template="
                   "feature-request.yml so that we can prioritize its implementation or submit a PR adding the "
                   "implementation to derivatives.yaml")

LINEAR = ("linear", "bilinear")  # (their own rules give a plain operand zeros where PyTorch's do)
REFUSED = "Trying to use forward AD with aten::{} that does not support it."  # (PyTorch's NotImplemented node)


class _Quiet:
    """No warnings while a rule reads its node (the op run on stand-ins) or computes a tangent: the op's own run
    warns, once, as PyTorch's; NumPy's floating-point warnings from a formula (asin' at 1) never reach a learner.
    Python's warnings are silenced by swapping `warnings.warn` (minigrad's ops call it), not by a filter: any
    change of the filters (catch_warnings too) resets Python's once-per-place memory, so a learner would see an
    op's warning again at every call under a dual level."""

    def __init__(self):
        self.entered: list = []  # (they nest: an in-place op's twin runs ops that read their rules too)

    def __enter__(self) -> None:
        state = np.errstate(all="ignore")
        state.__enter__()
        self.entered.append((warnings.warn, state))
        warnings.warn = _no_warning

    def __exit__(self, *exc) -> None:
        warnings.warn, state = self.entered.pop()
        state.__exit__(*exc)


def _no_warning(*args, **kwargs) -> None:
    return None


QUIET = _Quiet()


# -- tangents on tensors --------------------------------------------------------------------------------------
def tangent_of(t, level=None):
    """`t`'s tangent at `level` (the active one by default), or None."""
    e = t._extras if t.__class__ is Tensor or isinstance(t, Tensor) else None
    level = DUAL[0] if level is None else level
    if e is None or e.tangent is None or e.tangent_level is not level:
        return None
    return e.tangent


def set_tangent(t: Tensor, tangent: Tensor | None, level) -> None:
    e = t._get_extras()
    e.tangent = tangent
    e.tangent_level = level if tangent is not None else None


def _as_tangent(value, like: Tensor, linear: bool = False) -> Tensor:
    """A tangent for `like`: a Tensor of its shape (broadcast values are copied). Its dtype is PyTorch's: a linear
    op's tangent keeps the tangents' dtype (the op ran on them); another's formula meets the primal's values, so
    its dtype is promoted with the output's (a float64 tangent of a float32 primal stays float64)."""
    data = value._data if isinstance(value, Tensor) else np.asarray(value)
    dtype = like._data.dtype
    if data.dtype.kind in "fc":
        dtype = data.dtype if linear else np.promote_types(data.dtype, dtype)
    if isinstance(value, Tensor):
        if value._data.shape != like._data.shape:
            value = value.expand(like._data.shape).contiguous()
        if value._data.dtype != dtype:
            value = value.to(dtype)
        return value
    if data.shape != like._data.shape:
        data = np.broadcast_to(data, like._data.shape)
    return make(np.array(data, dtype=dtype))


# -- Tensor's methods while a level is active ----------------------------------------------------------------
TENSOR_METHODS: dict = {}  # name -> (the op's own function, its forward-aware one), filled by ops/__init__.py


INSTALL_HOOKS: list = []  # called after install (vmap: its methods give way to a batched argument, func/_batched.py)


def install(active: bool) -> None:
    """Give Tensor the forward-aware methods and operators (entering a dual level) or the ops' own (exiting)."""
    for name, (plain, aware) in TENSOR_METHODS.items():
        setattr(Tensor, name, aware if active else plain)
    for hook in INSTALL_HOOKS:
        hook(active)


# -- the wrapper every declared op gets -------------------------------------------------------------------------
def forward_aware(function, nodes: tuple, name: str, out_of_place=None, shape_only: str = "",
                  differentiable: bool = True):
    """`function` carrying tangents under a dual level (see the module docstring). `nodes`: the node classes the
    op records (none for an op made of other ops, whose own ops carry the tangents, and for a
    non-differentiable op, whose outputs have none). `out_of_place`: for an in-place op, its out-of-place twin.
    `shape_only`: the parameter whose shape or dtype alone the op reads (view_as's `other`). A non-differentiable
    op given a tangent refuses forward AD with PyTorch's text (bincount's weights, histogram's input)."""
    if not nodes:
        return function if name.startswith("_") else _composite(function, name, shape_only, differentiable)
    kinds = {getattr(cls, "_forward_kind", None) for cls in nodes}
    kind = next(iter(kinds)) if len(kinds) == 1 else None  # one kind for all its nodes: the node need not be read
    if kinds == {"linear", "bilinear"}:
        kind = "bilinear"  # matmul: mm, mv, dot or bmm, whose result a view (squeeze) may end

    @functools.wraps(function)
    def call(*args, **kwargs):
        if DUAL[0] is None:
            return function(*args, **kwargs)
        return _run((name, kind, nodes), function, out_of_place, args, kwargs)

    call.forward_of = (function, functools.partial(forward_aware, nodes=nodes, name=name, out_of_place=out_of_place))
    return call


def _composite(function, name: str, shape_only: str = "", differentiable: bool = True):
    """An op made of other ops: they carry the tangents. Should one of them not (a private kernel), the op
    raises rather than hand back an output silently without its tangent (`shape_only`: a parameter no tangent
    flows from, whose own tangent does not count)."""
    place = list(inspect.signature(function).parameters).index(shape_only) if shape_only else -1

    @functools.wraps(function)
    def call(*args, **kwargs):
        out = function(*args, **kwargs)
        first = out[0] if isinstance(out, tuple) and out and not differentiable else out  # (histogram's counts)
        if DUAL[0] is not None and isinstance(first, Tensor) and _floating(first) and tangent_of(first) is None:
            if place >= 0:
                args, kwargs = args[:place] + args[place + 1:], {k: v for k, v in kwargs.items() if k != shape_only}
            if _tangents_in(args, kwargs, DUAL[0]):
                raise NotImplementedError((NOT_IMPLEMENTED if differentiable else REFUSED).format(name))
        return out

    call.forward_of = (function, functools.partial(_composite, name=name, shape_only=shape_only,
                                                   differentiable=differentiable))
    return call


def _run(op: tuple, function, out_of_place, args: tuple, kwargs: dict):
    """`op`: (its name, its forward kind if one for all its nodes, its node classes)."""
    name, kind, nodes = op
    level = DUAL[0]
    tangents = _tangents_in(args, kwargs, level)
    if not tangents:
        return function(*args, **kwargs)
    if kind == "refused":  # (before an in-place op writes)
        raise NotImplementedError(REFUSED.format(name))
    DUAL[0] = None  # the op, and the rule computing its tangent, run as with no forward AD
    try:
        if out_of_place is not None:
            return _run_inplace((name, kind, nodes, function, out_of_place), args, kwargs, tangents, level)
        if kind in ("linear", "bilinear"):
            out = function(*args, **kwargs)
            with QUIET:
                _attach(out, _by_function(kind, function, args, kwargs, tangents), level, kind == "linear")
            return out
        new = _by_node((name, nodes), function, args, kwargs, tangents)
        if new is None:  # on these arguments the op is made of other ops (a view first, a special case)
            DUAL[0] = level
            return _composite(function, name)(*args, **kwargs)
        out = function(*args, **kwargs)
        with QUIET:
            _attach(out, new(out), level)
        return out
    finally:
        DUAL[0] = level


def _tangents_in(args: tuple, kwargs: dict, level) -> dict:
    """id(tensor) -> its tangent, for the tensors among the arguments (and in list arguments) that carry one."""
    found = {}
    for a in (*args, *kwargs.values()):
        if a.__class__ in (list, tuple):
            for b in a:
                t = tangent_of(b, level) if isinstance(b, Tensor) else None
                if t is not None:
                    found[id(b)] = t
        elif isinstance(a, Tensor):
            e = a._extras
            if e is not None and e.tangent is not None and e.tangent_level is level:
                found[id(a)] = e.tangent
    return found


def _swap(args: tuple, kwargs: dict, fn) -> tuple:
    """The arguments with each tensor (also inside a list argument) replaced by `fn(tensor)`."""
    def one(a):
        if a.__class__ in (list, tuple):
            return a.__class__(fn(b) if isinstance(b, Tensor) else b for b in a)
        return fn(a) if isinstance(a, Tensor) else a
    return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}


def _floating(t: Tensor) -> bool:
    return t._data.dtype.kind in "fc"


def _attach(out, tangent, level, linear: bool = False) -> None:
    """Give each floating output its tangent (a tuple of outputs takes a tuple of tangents)."""
    if isinstance(out, Tensor):
        if tangent is not None and _floating(out):
            tangent = _as_tangent(tangent, out, linear)
            if out._base is None and out._data.flags.c_contiguous and not tangent._data.flags.c_contiguous:
                tangent = tangent.contiguous()  # PyTorch's set_fw_grad: a non-view's tangent takes its layout
            set_tangent(out, tangent, level)
            node = out._grad_fn
            if getattr(node, "_saves_result", False):  # backward unpacks the saved result with it (forward-over-
                node._extra("result_tangent", list)[:] = [level, tangent]  # reverse: the gradient gets a tangent)
        return
    if isinstance(out, (tuple, list)):
        tangents = tangent if isinstance(tangent, (tuple, list)) else (tangent,) + (None,) * (len(out) - 1)
        for o, t in zip(out, tangents):
            _attach(o, t, level, linear)


# -- "linear" and "bilinear": the op itself, on the tangents --------------------------------------------------
def _by_function(kind: str, function, args: tuple, kwargs: dict, tangents: dict):
    if kind == "linear":
        def tangent_or_zeros(t):
            tan = tangents.get(id(t))
            if tan is not None:
                return tan
            return make(np.zeros_like(t._data)) if _floating(t) else t
        a, k = _swap(args, kwargs, tangent_or_zeros)
        return function(*(_operands_zeroed(v) for v in a), **k)
    if _zero_terms_matter(args, kwargs, tangents):  # PyTorch's formula has a term for every operand
        tangents = dict(tangents)
        _swap(args, kwargs, lambda t: tangents.setdefault(id(t), make(np.zeros_like(t._data))) if _floating(t) else t)
    total, n = None, 0
    while True:  # bilinear: one term per dual argument, by place (x.dot(x): ẋ·x + x·ẋ), the others at their primals
        place = _Nth(n, tangents)
        a, k = _swap(args, kwargs, place)
        if place.seen <= n:
            return total
        term = function(*a, **k)
        total = term if total is None else total + term
        n += 1


def _operands_zeroed(a):
    """A list of operands (one holds floating tangents: stack((d, ints))) with its integer tensors as zeros: they
    carry no tangent, so their values do not reach it (a list of index tensors, x[(i, j)], is left as it is)."""
    if a.__class__ not in (list, tuple) or not any(isinstance(b, Tensor) and _floating(b) for b in a):
        return a
    return a.__class__(make(np.zeros_like(b._data)) if isinstance(b, Tensor) and not _floating(b) else b for b in a)


def _zero_terms_matter(args: tuple, kwargs: dict, tangents: dict) -> bool:
    """Do the terms of the operands without a tangent (0 @ b) change a bilinear op's tangent? Where an operand is
    not finite (0 · inf is nan in PyTorch's `self_t.mm(mat2) + self.mm(mat2_t)`, whose zero `self_t` it computes),
    and where an operand requires grad under grad mode (`0 @ b` records a graph: the tangent requires grad)."""
    found = []
    _swap(args, kwargs, lambda t: found.append(t) or t)
    floating = [t for t in found if _floating(t)]
    if all(id(t) in tangents for t in floating):
        return False
    return (GRAD.mode > 0 and any(t._requires_grad for t in floating)) or not all(
        np.isfinite(t._data).all() for t in floating)


class _Nth:
    """Swaps the n-th argument that carries a tangent for its tangent (counting them in `seen`)."""

    def __init__(self, n: int, tangents: dict):
        self.n, self.tangents, self.seen = n, tangents, 0

    def __call__(self, t: Tensor) -> Tensor:
        tan = self.tangents.get(id(t))
        if tan is None:
            return t
        self.seen += 1
        return tan if self.seen - 1 == self.n else t


# -- rules read from the node the op records ------------------------------------------------------------------
def _by_node(op: tuple, function, args: tuple, kwargs: dict, tangents: dict):
    """Run the op on stand-ins that require grad, so that it records its node; return `f(out)`, which computes the
    tangent(s) of the real output `out` from that node's forward rule, or None when on these arguments the op
    records other ops' nodes instead (`op`: its name and node classes)."""
    name, nodes = op
    originals = {}

    def stand_in(t):
        if not _floating(t):
            return t
        s = make(t._data, None, True)
        originals[id(s)] = t
        return s

    a, k = _swap(args, kwargs, stand_in)
    hooks = SAVED_HOOKS[:]
    SAVED_HOOKS.clear()  # the stand-ins are nobody's saved tensors
    mode, GRAD.mode = GRAD.mode, 1
    try:
        with QUIET:
            shadow = function(*a, **k)
    finally:
        GRAD.mode = mode
        SAVED_HOOKS[:] = hooks
    edges = {id(accumulator(s)): t for s, t in ((s, originals[id(s)]) for s in _stand_ins(a, k, originals))}
    if not _own_nodes(shadow, edges, nodes):
        return None
    kind = getattr(type(getattr(shadow, "_grad_fn", None)), "_forward_kind", None)
    if kind in ("linear", "bilinear"):  # an op whose nodes differ in kind (masked_fill's value tensor, scatter's src)
        return lambda out: _by_function(kind, function, args, kwargs, tangents)

    def tangent(out):
        if isinstance(shadow, Tensor):
            return _node_tangent(name, shadow, out, edges, originals, tangents)
        return tuple(_node_tangent(name, s, o, edges, originals, tangents) if isinstance(s, Tensor) else None
                     for s, o in zip(shadow, out))
    return tangent


def _own_nodes(shadow, edges: dict, nodes: tuple) -> bool:
    """Did the op record a node whose rule gives its tangent, over its inputs: not over what other ops it ran made
    of them, nor a view or copy of another op (batch_norm of an empty batch is a clone)?"""
    for s in shadow if isinstance(shadow, (tuple, list)) else (shadow,):
        node = s._grad_fn if isinstance(s, Tensor) else None
        if node is None:
            continue
        if type(node) not in nodes and getattr(type(node), "_forward_kind", None) in ("linear", "bilinear"):
            return False
        for n in node._next_nodes:  # (a loop, not any(): this runs for every op under a level)
            if n is not None and id(n) not in edges:
                return False
    return True


def _stand_ins(args: tuple, kwargs: dict, originals: dict) -> list:
    found = []
    for a in (*args, *kwargs.values()):
        for b in (a if a.__class__ in (list, tuple) else (a,)):
            if isinstance(b, Tensor) and id(b) in originals:
                found.append(b)
    return found


def _node_tangent(name: str, shadow: Tensor, out: Tensor, edges: dict, originals: dict, tangents: dict):
    node = shadow._grad_fn
    if node is None or not _floating(out):
        return None
    cls = type(node)
    kind = getattr(cls, "_forward_kind", None)
    if kind is None and out._data.ndim == 0 and not cls._multi and not cls._variadic:
        kind = "reduction"  # a scalar output: J v = Σ_i <∇_i y, v_i>, the gradient from its backward rule
    if kind == "refused":
        raise NotImplementedError(REFUSED.format(name))
    if kind is None or kind in ("linear", "bilinear"):  # (a linear node inside an op of another kind: unsupported)
        raise NotImplementedError(NOT_IMPLEMENTED.format(name))
    inputs = []
    for i, nxt in enumerate(node._next_nodes):
        if nxt is None:
            kept = node._kept_inputs[i] if node._kept_inputs not in (None, recording.FREED) else None
            inputs.append(originals.get(id(kept), kept))
        else:
            orig = edges.get(id(nxt))
            if orig is None:  # an op made of other ops ended in this node: its inputs are not the op's
                raise NotImplementedError(NOT_IMPLEMENTED.format(name))
            inputs.append(orig)
    in_tangents = [tangents.get(id(t)) if isinstance(t, Tensor) else None for t in inputs]
    as_tensors = GRAD.mode > 0 and (any(isinstance(t, Tensor) and t._requires_grad for t in inputs + [out])
                                    or any(t is not None and t._requires_grad for t in in_tangents))
    if kind == "formula" and getattr(cls._forward_formula[0], "same_tangent", False) and in_tangents[0] is not None:
        return in_tangents[0]  # (PyTorch's formula hands back self_t itself: fmod by a number)
    if kind == "derived":  # (the elementwise ops' own formulas: the path every elementwise op takes)
        new = _derived(node, cls, inputs, in_tangents, out, as_tensors)
    else:
        with np.errstate(all="ignore"):  # inf * 0 is nan, silently, as in PyTorch (a slope of var over one element)
            if kind == "reduction":
                new = _reduction(node, cls, inputs, in_tangents, out, as_tensors)
            else:
                new = _formula(node, cls, inputs, in_tangents, out, as_tensors)
    return _fresh(_in_dtype(new, out, in_tangents), in_tangents)


def _fresh(tangent, in_tangents: list):
    """`tangent`, copied if a formula handed back (a view of) an input's tangent (sort of a 0-d tensor: `self_t`):
    PyTorch's formulas make a new tensor, so an in-place write into the input later leaves this tangent as it is."""
    if isinstance(tangent, Tensor):
        for t in in_tangents:
            if t is not None and np.may_share_memory(t._data, tangent._data):
                return tangent.clone()
    return tangent


def _in_dtype(tangent, out: Tensor, in_tangents: list):
    """The tangent in PyTorch's dtype, the output's promoted with the input tangents' (a formula's float64 constant,
    log(1.5) in xlogy's, does not make a float32 tangent float64; nor does a 0-d float64 clamp bound's tangent)."""
    dtype = out._data.dtype
    for t in in_tangents:  # (a 0-d tangent does not promote one with dims, as in PyTorch's type promotion)
        if t is not None and (t._data.ndim or not out._data.ndim):
            dtype = np.promote_types(dtype, t._data.dtype)
    if isinstance(tangent, Tensor):
        return tangent if tangent._data.dtype == dtype else tangent.to(dtype)
    if tangent is not None and np.asarray(tangent).dtype != dtype and np.asarray(tangent).dtype.kind in "fc":
        return np.asarray(tangent).astype(dtype)
    return tangent


def _value(node, cls, read: tuple, primals: tuple):
    """A formula's parameter (`read`: where it comes from, and its key): an input's primal, the result, or a saved
    argument. `primals`: (the inputs, the result, whether formulas get Tensors)."""
    (source, key), (inputs, out, as_tensors) = read, primals
    if source == recording._INPUT:
        v = inputs[key]
        return v if as_tensors or not isinstance(v, Tensor) else v._data
    if source == recording._RESULT:
        return out if as_tensors else out._data
    v = node._args.get(key, cls._defaults.get(key)) if node._args else cls._defaults.get(key)
    return v.value if v.__class__ is recording.SavedArg else v


def _derived(node, cls, inputs: list, in_tangents: list, out: Tensor, as_tensors: bool):
    """Σ_i formula_i(tangent_i): the backward formula of each dual input, with its tangent for the gradient. The
    inputs with no tangent have a zero one when the tangent gets a graph, as in PyTorch's formulas, which compute
    every term (`d * 2`'s tangent requires grad when d does); the term of its zero tensor adds nothing (-0. with a
    graph: not a zero's sign, as PyTorch's zero tensor drops out), and at inf or NaN it is an exact zero that keeps
    its graph, subtracted at the end (x - (+0.) is x, -0. included; 0 · inf's nan never shows)."""
    zero_terms, exact = as_tensors and _finite((*inputs, out)), []
    total = None
    for (formula, reads, part), tan, primal in zip(cls._formulas, in_tangents, inputs):
        absent = tan is None
        if absent:
            if not as_tensors or primal is None or isinstance(primal, Tensor) and not _floating(primal) \
                    or formula.__qualname__.startswith("_not_differentiable"):
                continue
            tan = make(np.zeros(primal._data.shape if isinstance(primal, Tensor) else (), out._data.dtype))
            if not zero_terms:  # (PyTorch's zero tensor times inf is 0, with the product's graph)
                exact.append((formula, reads, part, tan))
                continue
        if tan._data.shape != out._data.shape:  # a broadcast input: its tangent as the output's gradient would be
            tan = tan.expand(out._data.shape).contiguous() if as_tensors else \
                make(np.broadcast_to(tan._data, out._data.shape).copy())
        g = tan if as_tensors else tan._data
        term = formula(g, *(_value(node, cls, read, (inputs, out, as_tensors)) for read in reads))
        if part is not None:  # a formula several inputs share: this input's part
            term = term[part]
        if absent:  # x + -0. is x, whatever x is
            term = term.masked_fill(make(np.ones(term._data.shape, bool)), -0.0)
        total = term if total is None else total + term
    for formula, reads, part, tan in exact if total is not None else ():
        term = formula(tan.expand(out._data.shape), *(_value(node, cls, read, (inputs, out, True)) for read in reads))
        term = term if part is None else term[part]
        if isinstance(term, Tensor) and term._requires_grad:
            total = total - term.masked_fill(make(np.ones(term._data.shape, bool)), 0.0)
    return total


def _finite(values: tuple) -> bool:
    for v in values:
        if isinstance(v, Tensor) and v._data.dtype.kind == "f" and not np.isfinite(v._data).all():
            return False
    return True


def _reduction(node, cls, inputs: list, in_tangents: list, out: Tensor, as_tensors: bool):
    """A reduction (each output element depends on its own group of input elements, as max(dim), var(dim), a
    loss's mean): the backward formula with a gradient of ones gives ∂y/∂x at every input element, and the
    tangent is Σ over each group of ∂y/∂x · x_t."""
    ones = np.ones(out._data.shape, out._data.dtype)
    grad = make(ones) if as_tensors else ones
    args = node._args or {}
    dims = args.get("dim") if out._data.ndim else None
    elementwise = out._data.ndim and "dim" not in args  # a loss with reduction='none': each group is one element
    keepdim = bool(args.get("keepdim", False)) and out._data.ndim > 0
    total = None
    for (formula, reads, part), tan, primal in zip(cls._formulas, in_tangents, inputs):
        if tan is None and "reduction" in args and cls._forward_kind == "reduction" and isinstance(primal, Tensor) \
                and _floating(primal):  # mse_loss's and smooth_l1_loss's kernels turn PyTorch's zero tensor into
            tan = make(np.zeros_like(primal._data))  # zeros (+0., 0 · inf); bce_with_logits's formula drops it
        if tan is None:
            continue
        slope = formula(grad, *(_value(node, cls, read, (inputs, out, as_tensors)) for read in reads))
        if slope is None:  # no gradient at all (norm of p = 0, a count): a zero tangent, as PyTorch's
            slope = np.zeros(tan._data.shape, out._data.dtype)
        slope = slope if part is None else slope[part]
        term = slope * (tan if as_tensors else tan._data)
        total = term if total is None else total + term
    if total is None or elementwise:
        return total
    if dims is not None and not isinstance(dims, (tuple, list)):
        dims = (dims,)
    if as_tensors:
        summed = total.sum() if dims is None else total.sum(tuple(dims), keepdim=keepdim)
    else:
        summed = total.sum() if dims is None else total.sum(axis=tuple(dims), keepdims=keepdim)
    if args.get("reduction") == 1 and not (total._data if as_tensors else np.asarray(total)).size:
        summed = summed / 0.0  # a loss's mean over no elements: PyTorch's formula is the terms' mean, 0 / 0
    return summed


def _formula(node, cls, inputs: list, in_tangents: list, out: Tensor, as_tensors: bool):
    """An explicit forward formula: its `<input>_t` parameters are tangents (zeros where an input has none)."""
    formula, reads = cls._forward_formula
    exact = getattr(formula, "exact_zeros", False)
    if exact == "in transforms":
        exact = FUNC_FORWARD[0] > 0
    values = []
    for source, key in reads:
        if source == "tangent":
            tan, primal = in_tangents[key], inputs[key]
            if tan is None and exact:
                values.append(ZERO)
                continue
            if tan is None:
                tan = make(np.zeros_like(primal._data)) if isinstance(primal, Tensor) else make(np.zeros(()))
            values.append(tan if as_tensors else tan._data)
        else:
            values.append(_value(node, cls, (source, key), (inputs, out, as_tensors)))
    tangent = formula(*values)
    if tangent is ZERO:  # (only the absent tangents counted)
        return np.zeros_like(out._data)
    if tangent.__class__ is _GraphZero:
        tangent.__class__ = Tensor
    if exact and np.shape(tangent) != out._data.shape:  # (`self_t - 0` keeps self_t's shape; the zero broadcasts)
        return np.broadcast_to(tangent, out._data.shape).copy()
    return tangent


class _Zero(Tensor):
    """An absent tangent in a formula marked `exact_zeros` (ops/recording.py), as PyTorch's zero tensor computes:
    a sum or difference is the other operand (negated for `0 - a`), a product or quotient is zero itself. A Tensor
    subclass only so that Python asks its reflected operators first (`tangent - ZERO`); it holds no data."""

    __slots__ = ()
    __array_ufunc__ = None  # NumPy hands `array * ZERO` to the reflected operators below

    def __add__(self, other):
        return other

    __radd__ = __add__

    def __sub__(self, other):
        return self if other is self else -other

    def __rsub__(self, other):
        return other

    def __mul__(self, other):
        if isinstance(other, Tensor) and other._requires_grad:  # a zero with a graph, as PyTorch's product records
            zero = other.masked_fill(make(np.ones(other._data.shape, bool)), -0.0)  # (exact: no 0 · inf)
            zero.__class__ = _GraphZero
            return zero
        return self

    __rmul__ = __truediv__ = __mul__

    def __neg__(self):
        return self

    def __repr__(self) -> str:
        return "ZERO"


ZERO = object.__new__(_Zero)


class _GraphZero(Tensor):
    """ZERO times a tensor that requires grad: zeros with its graph that add nothing, signs of zeros included, as
    PyTorch's zero tensor: -0. (x + -0. is x, -0. - x is -x), and +0. subtracted (x - +0. is x)."""

    __slots__ = ()
    __array_ufunc__ = None

    def __rsub__(self, other):
        return other - Tensor.__neg__(self)


# -- in-place ops ------------------------------------------------------------------------------------------------
# In-place ops whose tangent PyTorch 2.13 writes by a copy back that refuses a self whose elements share memory (an
# expanded one): the primal is written (through the strides, as without a tangent: ops/arrange.py), then it raises
COPIED_BACK = ("tril_", "triu_")


def _run_inplace(op: tuple, args: tuple, kwargs: dict, tangents: dict, level):
    """The tangent of the out-of-place twin, computed before the write, becomes the tangent of the tensor written
    (written into its tangent's memory, so a view's tangent writes through to its base's). `op`: (name, kind, node
    classes, the in-place function, its out-of-place twin)."""
    name, kind, nodes, function, out_of_place = op
    if _reads_itself(args, kwargs) and kind not in ("linear", "bilinear"):
        return _run_inplace_reading_itself(op, args, kwargs, tangents, level)
    if id(args[0]) not in tangents and kind not in LINEAR and _floating(args[0]):  # PyTorch's in-place formula reads
        tangents = {**tangents, id(args[0]): make(np.zeros_like(args[0]._data))}  # a plain self's tangent as zeros
    with QUIET:  # (the in-place op's own run below warns)
        if kind in ("linear", "bilinear"):
            new = _by_function(kind, out_of_place, args, kwargs, tangents)
        elif (by_node := _by_node((name, nodes), out_of_place, args, kwargs, tangents)) is not None:
            new = by_node(out_of_place(*args, **kwargs))
        else:  # made of other ops on these arguments: the twin, run with the level active, gives the tangent
            DUAL[0] = level
            try:
                new = tangent_of(_composite(out_of_place, name)(*args, **kwargs), level)
            finally:
                DUAL[0] = None
    out = function(*args, **kwargs)
    if name in COPIED_BACK:  # (after the primal's write, as PyTorch's)
        _later()[0].writable(args[0], args[0]._data)
    write_tangent(args[0], new, level)
    return out


def _reads_itself(args: tuple, kwargs: dict) -> bool:
    """Does an operand other than self share memory with self (`y.mul_(y)`, `y.add_(y[0])`)?"""
    data = args[0]._data
    for a in (*args[1:], *kwargs.values()):
        if isinstance(a, Tensor) and np.may_share_memory(a._data, data):
            return True
    return False


def _run_inplace_reading_itself(op: tuple, args: tuple, kwargs: dict, tangents: dict, level):
    """An in-place op whose other operand is (a view of) self: PyTorch computes the tangent after the write, from
    self's value before it (a copy) and the other operands' values after it (`y.mul_(y)`: ẏ·y_old + ẏ·y_new); the
    tangents are all read before self's tangent is written."""
    name, _, nodes, function, out_of_place = op
    self = args[0]
    before = make(self._data.copy())
    tangents = dict(tangents)
    if id(self) in tangents:
        tangents[id(before)] = tangents[id(self)]
    out = function(*args, **kwargs)
    now = (before, *args[1:])
    with QUIET:
        by_node = _by_node((name, nodes), out_of_place, now, kwargs, tangents)
        if by_node is None:  # made of other ops on these arguments: its twin, with the level active, gives it
            DUAL[0] = level
            try:
                new = tangent_of(_composite(out_of_place, name)(*now, **kwargs), level)
            finally:
                DUAL[0] = None
        else:
            new = by_node(self)
    write_tangent(self, new, level)
    return out


def write_tangent(t: Tensor, value, level) -> None:
    """Set `t`'s tangent to `value` as an in-place write does: into its tangent's memory when it has one (a view's
    tangent is a view of its base's), else a new tangent (for a view: the base gets a zero tangent first)."""
    if value is None:
        value = np.zeros_like(t._data)
    current = tangent_of(t, level)
    if current is None and t._base is not None:
        current = _view_tangent(t, level)
    if current is None:
        set_tangent(t, _as_tangent(value, t).clone() if isinstance(value, Tensor) else _as_tangent(value, t), level)
        return
    if isinstance(value, Tensor) and value._requires_grad and GRAD.mode > 0 and current._data.flags.writeable:
        current.copy_(value)  # PyTorch's self_t.copy_(new): the tangent read before (a view's: its base's too)
        return  # now requires grad
    data = value._data if isinstance(value, Tensor) else value
    np.copyto(_writable(current._data), np.broadcast_to(data, current._data.shape), casting="unsafe")


def _writable(data: np.ndarray) -> np.ndarray:
    """`data` itself, or, for an expanded view (NumPy's broadcast views are read-only), the same view made writable
    over the memory it reads, so an in-place op writes a tangent's shared elements as PyTorch does."""
    if data.flags.writeable:
        return data
    owner = data
    while isinstance(owner.base, np.ndarray) and not (owner.flags.writeable and owner.flags.c_contiguous):
        owner = owner.base
    if not (owner.flags.writeable and owner.flags.c_contiguous) or owner.dtype != data.dtype:
        return data
    start = (data.__array_interface__["data"][0] - owner.__array_interface__["data"][0]) // data.itemsize
    return np.lib.stride_tricks.as_strided(owner.reshape(-1)[start:], data.shape, data.strides)


def _later() -> tuple:
    """ops/inplace.py and ops/views.py, imported when first used."""
    from . import inplace, views  # lazy: they import the registry, which imports this module
    return inplace, views


def _view_tangent(t: Tensor, level) -> Tensor:
    """A view with no tangent that is written with one: its base gets a zero tangent (unless it has one), and
    the view's tangent is the same view of it."""
    views = _later()[1]
    base = t._base
    base_t = tangent_of(base, level)
    if base_t is None:
        base_t = make(np.zeros_like(base._data))
        set_tangent(base, base_t, level)
    data = base_t._data
    for r in views.view_recipes(t):
        data = views.apply_recipe(data, r)
    view = make(_writable(data))
    set_tangent(t, view, level)
    return view


# -- ops that exist only in place ----------------------------------------------------------------------------
INPLACE_ONLY = ("zero_", "fill_", "copy_", "__setitem__", "uniform_", "normal_", "random_")


def inplace_only(function, name: str):
    """zero_, fill_, copy_, x[key] = value, random draws: the written elements take the value's tangent (zero for a
    number or a tensor with none), as PyTorch's forward rules for these ops (`self_t.zero_()`, `self_t.copy_(...)`)."""
    if name not in INPLACE_ONLY:
        return function

    @functools.wraps(function)
    def call(self, *args, **kwargs):
        level = DUAL[0]
        if level is None:
            return function(self, *args, **kwargs)
        tangents = _tangents_in((self, *args), kwargs, level)
        if not tangents:
            return function(self, *args, **kwargs)
        DUAL[0] = None
        try:
            out = function(self, *args, **kwargs)
            value = args[-1] if args else next(iter(kwargs.values()), None)
            value_t = tangents.get(id(value)) if isinstance(value, Tensor) else None
            if name == "__setitem__":
                write_tangent(self, tangent_of(self, level) if tangent_of(self, level) is not None else None, level)
                function(tangent_of(self, level), args[0], value_t if value_t is not None else 0.0)
            else:
                write_tangent(self, None if value_t is None or name == "zero_" else value_t, level)
        finally:
            DUAL[0] = level
        return out

    call.forward_of = (function, functools.partial(inplace_only, name=name))
    return call
