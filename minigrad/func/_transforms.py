"""grad, grad_and_value, vjp, jacrev, jvp, jacfwd, hessian: autograd as function transforms.

A transform runs the function on new tensors that autograd differentiates (fresh leaves; or aliases of the
inputs when those are themselves being differentiated by an enclosing transform, so that the result stays
differentiable there: `grad(grad(f))`), then asks `autograd.grad` for the gradients. Inside an enclosing
transform the gradients are taken with `create_graph=True`, so transforms nest. A closure over an outer tensor
is only a constant to the inner transform (autograd.grad differentiates with respect to the inner inputs only)
and stays differentiable at the outer one.

jvp and jacfwd carry tangents on minigrad.autograd.forward_ad's one level; inside one of them, a jvp or jacfwd is
computed by reverse mode, which the outer tangents go through (see `_nested`).

Under `vmap`, a differentiated input is first batched at every running vmap level (copied along the levels it
is not batched at), so that autograd's one backward pass gives every sample its own gradient.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import warnings
from collections.abc import Callable

import numpy as np

from .. import autograd
from .._creation import eye, ones, zeros, zeros_like
from .._state import DUAL, FUNC_BACKWARD, FUNC_DEPTH, FUNC_FORWARD, GRAD
from .._tensor import Tensor
from ..autograd import function as _function
from ..autograd.grad_mode import enable_grad
from . import _pytree
from ._batched import (
    HANDED_OVER,
    LEVELS,
    REVERSE_COPIES,
    TANGENT_LEVELS,
    BatchedTensor,
    _ids,
    fallback,
    hand_over,
    in_level_order,
    physical,
    pop_level,
    push_level,
    stack,
)
from ._vmap import vmap

try:  # forward mode (jvp, jacfwd) comes with minigrad.autograd.forward_ad
    from ..autograd import forward_ad
except ImportError:  # pragma: no cover - a minigrad without forward mode
    forward_ad = None

_DEPTH = FUNC_DEPTH  # the differentiating transforms running now
_FORWARD = FUNC_FORWARD  # the forward-mode transforms (jvp, jacfwd) running now


@contextlib.contextmanager
def _transform():
    _DEPTH[0] += 1
    try:
        with enable_grad():
            yield
    finally:
        _DEPTH[0] -= 1


def _check_argnums(argnums, n: int) -> tuple:
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and all(isinstance(a, int) for a in argnums):
        nums = argnums
        if not nums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(nums)) != len(nums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    for a in nums:
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
    return tuple(a % n for a in nums)


def _lift(x, levels_sizes: list):
    """`x` as an input autograd differentiates, batched at every running vmap level."""
    if not isinstance(x, (Tensor, BatchedTensor)):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    levels = tuple(lv for lv, _ in levels_sizes)
    sizes = tuple(s for _, s in levels_sizes)
    if x.__class__ is BatchedTensor:
        v = physical(x, levels, 0)
        v = v.expand(sizes + tuple(v.shape[len(levels):]))
    else:  # (expand puts the new batch dims in front)
        v = x.expand(sizes + tuple(x.shape)) if levels else x
    if v.requires_grad and GRAD.mode > 0:
        v = v.view_as(v)  # differentiable by the enclosing transform too
    else:
        tangent = _tangent(v)
        v = v.detach().requires_grad_()
        if tangent is not None:  # carried by an enclosing jvp/jacfwd (forward over reverse: hessian)
            v = forward_ad.make_dual(v, tangent)
    return BatchedTensor(v, levels) if levels else v


def _tangent(v: Tensor):
    """`v`'s forward-mode tangent, if an enclosing jvp/jacfwd (or the user's own dual level) gave it one."""
    if forward_ad is None or (_FORWARD[0] == 0 and DUAL[0] is None):
        return None
    return forward_ad.unpack_dual(v).tangent


def _running_levels() -> list:
    return [(lv, size) for lv, size, _ in LEVELS]


def _create_graph(args) -> bool:
    """Keep the gradient differentiable when something outside can differentiate it."""
    if GRAD.mode <= 0:
        return False
    if _DEPTH[0] > 0:
        return True
    leaves = [x for x in _pytree.flatten(args)[0] if isinstance(x, (Tensor, BatchedTensor))]
    if any(x.requires_grad for x in leaves):
        return True
    if any(_tangent(x._value if x.__class__ is BatchedTensor else x) is not None for x in leaves):
        return TANGENTS_ONLY  # a tangent of the user's dual level goes through (forward over reverse), no graph
    return False


TANGENTS_ONLY = "tangents only"  # (truthy: the gradients are computed with create_graph, then detached)


def _grads(outputs: list, inputs: list, cotangents: list, create_graph: bool, retain_graph: bool = False) -> list:
    """autograd.grad on the batch tensors: each cotangent copied along its output's batch dims; zeros for an
    input the outputs do not depend on."""
    extra = tuple(sorted({lv for c in cotangents if c.__class__ is BatchedTensor for lv in c._levels} -
                         {lv for o in outputs if o.__class__ is BatchedTensor for lv in o._levels}))
    if extra:
        return _grads_per_cotangent(outputs, inputs, cotangents, extra, create_graph)
    outs, cots = [], []
    for o, c in zip(outputs, cotangents):
        po = o._value if o.__class__ is BatchedTensor else o
        if not po.requires_grad:
            continue
        levels = o._levels if o.__class__ is BatchedTensor else ()
        # (a plain cotangent has the output's logical shape: expand puts the batch dims in front)
        pc = physical(c, levels, 0) if c.__class__ is BatchedTensor else c
        outs.append(po)
        cots.append(pc.expand(tuple(po.shape)) if tuple(pc.shape) != tuple(po.shape) else pc)
    ins = [i._value if i.__class__ is BatchedTensor else i for i in inputs]
    if outs:
        FUNC_BACKWARD[0] += 1
        try:
            got = autograd.grad(outs, ins, cots, create_graph=bool(create_graph),
                                retain_graph=bool(retain_graph or create_graph), allow_unused=True)
        finally:
            FUNC_BACKWARD[0] -= 1
    else:
        got = [None] * len(ins)
    result = []
    for i, g in zip(inputs, got):
        p = i._value if i.__class__ is BatchedTensor else i
        g = g if g is not None else _zeros(p)
        if create_graph is not True:
            g = _keep_tangent(g) if create_graph == TANGENTS_ONLY else g.detach()
        result.append(BatchedTensor(g, i._levels) if i.__class__ is BatchedTensor else g)
    return result


def _grads_per_cotangent(outputs, inputs, cotangents, extra: tuple, create_graph: bool) -> list:
    """`vmap(vjp_fn)(cotangents)`: the graph was recorded outside this vmap, so the batch of cotangents has no batch
    of outputs to meet. One backward pass per cotangent (as `autograd.grad(..., is_grads_batched=True)`); the
    gradients are stacked along the levels `extra`. (jacrev batches its forward instead: one pass.)"""
    sizes = [s for lv, s, _ in LEVELS if lv in extra]
    rows = []
    for index in itertools.product(*(range(s) for s in sizes)):
        picked = [_pick(c, extra, index) for c in cotangents]
        rows.append(_grads(outputs, inputs, picked, create_graph, retain_graph=True))
    result = []
    for i, parts in enumerate(zip(*rows)):
        levels = inputs[i]._levels if inputs[i].__class__ is BatchedTensor else ()
        values = [p._value if p.__class__ is BatchedTensor else p for p in parts]
        stacked = stack(values).reshape(tuple(sizes) + tuple(values[0].shape))
        result.append(in_level_order(stacked, extra + levels))
    return result


def _pick(c, extra: tuple, index: tuple):
    """Cotangent `c`'s sample `index` along the levels `extra`."""
    if c.__class__ is not BatchedTensor:
        return c
    levels = tuple(sorted(set(c._levels) | set(extra)))
    v = physical(c, levels, 0)
    key = tuple((index[extra.index(lv)] if v.shape[k] > 1 else 0) if lv in extra else slice(None)
                for k, lv in enumerate(levels))
    rest = tuple(lv for lv in levels if lv not in extra)
    out = v[key] if v.dim() else v
    return BatchedTensor(out, rest) if rest else out


def _ones(out) -> Tensor:
    return ones((), dtype=out.dtype)


def _zeros(p: Tensor) -> Tensor:
    return zeros_like(p)


def _detach(tree, keep):
    if keep is True:
        return tree
    leaves, spec = _pytree.flatten(tree)
    if keep == TANGENTS_ONLY:
        return _pytree.unflatten([_keep_tangent(x) if isinstance(x, (Tensor, BatchedTensor)) else x for x in leaves],
                                 spec)
    return _pytree.unflatten([x.detach() if isinstance(x, (Tensor, BatchedTensor)) else x for x in leaves], spec)


def _keep_tangent(x):
    """`x` detached, with the tangent it has at the user's dual level (detach drops it)."""
    if x.__class__ is BatchedTensor:
        return BatchedTensor(_keep_tangent(x._value), x._levels)
    tangent = forward_ad.unpack_dual(x).tangent
    return x.detach() if tangent is None else forward_ad.make_dual(x.detach(), tangent.detach())


# -- custom autograd.Functions ------------------------------------------------------------------------------------
SETUP_CONTEXT = ("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it "
                 "must override the setup_context staticmethod. For more details, please see "
                 "https://pytorch.org/docs/main/notes/extending.func.html")
NO_VMAP = ("You tried to vmap over {}, but it does not have vmap support. Please override and implement the vmap "
           "staticmethod or set generate_vmap_rule=True. For more details, please see "
           "https://pytorch.org/docs/main/notes/extending.func.html")


def _function_hook(cls, args: tuple, kwargs: dict):
    """`cls.apply(*args)` under a transform: refuse what PyTorch refuses (a Function without setup_context; vmap of
    one with no vmap rule). A batched call to differentiate runs once per sample (the samples are differentiable
    slices of the batch, so the graph and the tangents go through), as torch.func's generated rule would give;
    NotImplemented: run the call as usual."""
    if not (LEVELS or _DEPTH[0] > 0):
        return NotImplemented
    if cls.setup_context is _function.Function.setup_context:
        raise RuntimeError(SETUP_CONTEXT)
    values = [a._value for a in args if a.__class__ is BatchedTensor]
    if not values:
        return NotImplemented
    if cls.vmap is not _function.Function.vmap and not cls.generate_vmap_rule:
        return _own_vmap_rule(cls, args)
    if cls.vmap is _function.Function.vmap and not cls.generate_vmap_rule:
        error = RuntimeError(NO_VMAP.format(cls.__name__))
        error.batched_function = True  # jacrev then takes one backward pass per row instead
        raise error
    dual = forward_ad is not None and _FORWARD[0] > 0
    if (GRAD.mode > 0 and any(v.requires_grad for v in values)) or \
            (dual and any(forward_ad.unpack_dual(v).tangent is not None for v in values)):
        return fallback(cls.__name__, cls.apply, args, kwargs, warn=False)
    return NotImplemented


class VmapInfo(tuple):
    """What a Function's own `vmap` staticmethod is told: the batch size and the level's randomness."""

    __slots__ = ()
    batch_size = property(lambda self: self[0])
    randomness = property(lambda self: self[1])


def _own_vmap_rule(cls, args: tuple):
    """The Function's own `vmap(info, in_dims, *args)`, as torch.func calls it: for the innermost level the batched
    arguments have, each argument with that level's batch as its dim 0 (in_dims 0; None: not batched there); it
    returns (outputs, out_dims), and each output is batched again along its out_dim."""
    level = max(lv for a in args if a.__class__ is BatchedTensor for lv in a._levels)
    size, randomness = next((size, r) for lv, size, r in LEVELS if lv == level)
    physical_args, in_dims = [], []
    for a in args:
        if a.__class__ is not BatchedTensor or level not in a._levels:
            physical_args.append(a)
            in_dims.append(None)
            continue
        rest = tuple(lv for lv in a._levels if lv != level)
        value = a._value.movedim(a._levels.index(level), len(rest))  # the level's dim: the first logical one
        physical_args.append(BatchedTensor(value, rest) if rest else value)
        in_dims.append(0)
    out, out_dims = cls.vmap(VmapInfo((size, randomness)), tuple(in_dims), *physical_args)
    leaves, spec = _pytree.flatten(out)
    dims = _pytree.broadcast_prefix(out_dims, out, lambda p: not isinstance(p, (tuple, list)))
    return _pytree.unflatten([x if d is None else _batched_along(x, d, level) for x, d in zip(leaves, dims)], spec)


def _batched_along(x, d: int, level: int):
    """`x` (its logical dim `d` the batch of `level`) as batched at `level`."""
    rest = x._levels if x.__class__ is BatchedTensor else ()
    value = x._value if rest else x
    value = value.movedim(len(rest) + d % (value.dim() - len(rest)), len(rest))
    return in_level_order(value, rest + (level,))


_function.TRANSFORM_HOOK[0] = _function_hook


# -- grad ---------------------------------------------------------------------------------------------------------
def grad_and_value(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """`func`'s gradient with respect to the arguments `argnums`, and its value (with `aux`, if `has_aux`)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        create_graph = _create_graph(args)
        with _transform():
            args = list(args)
            levels = _running_levels()
            for a in nums:
                leaves, spec = _pytree.flatten(args[a])
                args[a] = _pytree.unflatten([_lift(x, levels) for x in leaves], spec)
            out = func(*args, **kwargs)
            out, aux = _split_aux("grad_and_value(f)(*args)", out, has_aux)
            if not isinstance(out, (Tensor, BatchedTensor)):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            flat = [_pytree.flatten(args[a]) for a in nums]
            inputs = [x for leaves, _ in flat for x in leaves]
            grads = _grads([out], inputs, [_ones(out)], create_graph)
        it = iter(grads)
        per_arg = [_pytree.unflatten([next(it) for _ in leaves], spec) for leaves, spec in flat]
        g = per_arg[0] if isinstance(argnums, int) else tuple(per_arg)
        value = _detach(out, create_graph)
        return (g, (value, _detach(aux, create_graph))) if has_aux else (g, value)

    return wrapper


def grad(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """`func`'s gradient with respect to the arguments `argnums` (and `aux`, if `has_aux`)."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def _split_aux(where: str, out, has_aux: bool):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{where}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return out


# -- vjp ----------------------------------------------------------------------------------------------------------
def vjp(func: Callable, *primals, has_aux: bool = False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) is the cotangents times func's Jacobian, per primal."""
    create_graph = _create_graph(primals)
    with _transform():
        levels = _running_levels()
        leaves, spec = _pytree.flatten(primals)
        inputs = [_lift(x, levels) for x in leaves]
        out = func(*_pytree.unflatten(inputs, spec))
        out, aux = _split_aux("vjp(f, *primals)", out, has_aux)
    outs, out_spec = _pytree.flatten(out)
    for o in outs:
        if not isinstance(o, (Tensor, BatchedTensor)):
            raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return only tensors, got unsupported type "
                               f"{type(o)}")

    def vjp_fn(cotangents, *, retain_graph: bool = True, create_graph: bool = create_graph):
        cots, cot_spec = _pytree.flatten(cotangents)
        if cot_spec != out_spec and not (len(outs) == 1 and out_spec is None and len(cots) == 1):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {_pytree.describe(cot_spec)}, primal output: "
                               f"{_pytree.describe(out_spec)}")
        for i, (o, c) in enumerate(zip(outs, cots)):
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and output[{i}] "
                                   f"has a shape of {o.shape}.")
        with _transform():
            got = _grads(outs, inputs, cots, create_graph, retain_graph)
        return _pytree.unflatten(got, spec)

    value = _detach(out, create_graph)
    return (value, vjp_fn, _detach(aux, create_graph)) if has_aux else (value, vjp_fn)


# -- jacrev ----------------------------------------------------------------------------------------------------------
def jacrev(func: Callable, argnums: int | tuple = 0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable:
    """func's Jacobian by reverse mode: every row of it (one per output element) in ONE backward pass, the
    function having run on a batch of copies of the inputs, one copy per output element (a private vmap level)."""

    @functools.wraps(func)
    def wrapper(*args):
        nums = _check_argnums(argnums, len(args))
        for a in nums:
            for x in _pytree.flatten(args[a])[0]:
                if not isinstance(x, (Tensor, BatchedTensor)):
                    raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        with _transform():
            first = func(*args)  # the outputs' shapes say how many rows
        first, aux = _split_aux("jacrev(f)(*args)", first, has_aux)
        outs, out_spec = _pytree.flatten(first)
        for o in outs:
            if not isinstance(o, (Tensor, BatchedTensor)):
                raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return only tensors, got unsupported "
                                   f"type {type(o)}")
        try:
            jac = _jacobian_rows(func, args, nums, (outs, out_spec), has_aux, isinstance(argnums, int))
        except (RuntimeError, NotImplementedError) as error:
            if not getattr(error, "batched_function", False):
                raise
            jac = _jacobian_by_vjps(func, args, nums, (outs, out_spec), has_aux, isinstance(argnums, int))
        return (jac, aux) if has_aux else jac

    return wrapper


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


@contextlib.contextmanager
def _repeated():
    """jacrev runs the function a second time (on its batch of copies, or for the vjp): PyTorch's runs it once, so
    the warnings it gives (a loss's broadcasting, var()'s degrees of freedom) were given by the first run."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _jacobian_rows(func, args, nums, out_tree, has_aux: bool, single: bool):
    outs, out_spec = out_tree
    m = sum(_numel(o.shape) for o in outs)
    create_graph = _create_graph(args)
    level = next(_ids)
    # its copies are one input: a random op draws once for all; Tensor's methods give way only if needed (_on_copies)
    push_level([level, m, "same"], user=False, hand_over=False)
    REVERSE_COPIES.add(level)
    try:
        with _transform():
            out, flat = _on_copies(func, args, nums)
            out = _split_aux("jacrev(f)(*args)", out, has_aux)[0]
            batched_outs = _pytree.flatten(out)[0]
            cots = [BatchedTensor(c, (level,)) for c in _basis(outs, m)]
            inputs = [x for lifted, _ in flat for x in lifted]
            # an output that is not batched at `level` does not depend on the inputs: its rows are zeros
            live = [(o, c) for o, c in zip(batched_outs, cots) if o.__class__ is BatchedTensor and level in o._levels]
            grads = _grads([o for o, _ in live], inputs, [c for _, c in live], create_graph)
    finally:
        pop_level()
        REVERSE_COPIES.discard(level)
    return _arrange(grads, flat, out_tree, level, single)


def _basis(outs: list, m: int) -> list:
    """The identity's m rows, cut into one (m, *shape) block per output: the cotangents of the m rows of the
    Jacobian (jacfwd: per input, the tangents of its m columns). One of shape (m,): the identity itself."""
    basis = eye(m, dtype=outs[0].dtype)
    if len(outs) == 1 and tuple(outs[0].shape) == (m,):
        return [basis]
    blocks, start = [], 0
    for o in outs:
        k = _numel(o.shape)
        blocks.append(basis[:, start:start + k].reshape((m,) + tuple(o.shape)))
        start += k
    return blocks


def _on_copies(func, args, nums):
    """`func` run on the inputs `nums` lifted to jacrev's batch of copies: (its output, [(lifted leaves, spec)]).
    The level starts without Tensor's methods giving way to a batched argument (swapping them in and out is 198
    setattr on Tensor, 10% of W10's jacrev). A function that needs them (a plain tensor's method given a batched
    argument: `w.mv(x)`, which cannot compute with it and raises) runs again, on inputs lifted anew, with them."""
    for attempt in (1, 2):
        levels = _running_levels()
        args, flat = list(args), []
        for a in nums:
            leaves, spec = _pytree.flatten(args[a])
            lifted = [_lift(x, levels) for x in leaves]
            flat.append((lifted, spec))
            args[a] = _pytree.unflatten(lifted, spec)
        try:
            with _repeated():
                return func(*args), flat
        except Exception as error:
            if attempt == 2 or HANDED_OVER[0] or getattr(error, "batched_function", False):
                raise
            hand_over()


def _jacobian_by_vjps(func, args, nums, out_tree, has_aux: bool, single: bool):
    """The rows as torch.func computes them: one forward pass, then `vmap(vjp_fn)` over the rows (here one backward
    pass per row). For a function whose forward cannot run batched: a custom autograd.Function in it."""
    outs, out_spec = out_tree

    def of_nums(*picked):
        full = list(args)
        for a, v in zip(nums, picked):
            full[a] = v
        return _split_aux("jacrev(f)(*args)", func(*full), has_aux)[0]

    with _repeated():
        _, vjp_fn = vjp(of_nums, *(args[a] for a in nums))
    m = sum(_numel(o.shape) for o in outs)
    basis, cots, start = eye(m, dtype=outs[0].dtype), [], 0
    for o in outs:
        k = _numel(o.shape)
        cots.append(basis[:, start:start + k].reshape((m,) + tuple(o.shape)))
        start += k
    rows = vmap(vjp_fn)(_pytree.unflatten(cots, out_spec))  # per argnum, (m, *its shape)
    per_out, start = [], 0
    for o in outs:
        k = _numel(o.shape)
        per_arg = [_pytree.unflatten([g[start:start + k].reshape(tuple(o.shape) + tuple(g.shape[1:]))
                                      for g in _pytree.flatten(r)[0]], _pytree.flatten(r)[1]) for r in rows]
        per_out.append(per_arg[0] if single else tuple(per_arg))
        start += k
    return _pytree.unflatten(per_out, out_spec)


def _arrange(grads, flat, out_tree, level, single: bool):
    """The rows (batched at `level`) as PyTorch arranges a Jacobian: per output, per argnum, (out shape, in shape)."""
    outs, out_spec = out_tree
    per_out = []
    for o_index, o in enumerate(outs):
        start = sum(_numel(p.shape) for p in outs[:o_index])
        it = iter(grads)
        per_arg = []
        for lifted, spec in flat:
            parts = []
            for _ in lifted:
                g = next(it)
                rows = _rows(g, level)
                k = _numel(o.shape)
                if k != rows.shape[0]:  # (the rows of this output)
                    rows = rows[start:start + k]
                shape = tuple(o.shape) + tuple(g.shape)
                parts.append(rows.reshape(shape) if tuple(rows.shape) != shape else rows)
            per_arg.append(_pytree.unflatten(parts, spec))
        per_out.append(per_arg[0] if single else tuple(per_arg))
    return _pytree.unflatten(per_out, out_spec)


def _rows(g, level):
    """A gradient batched at the private `level`, that level's dim made the first logical dim."""
    rest = tuple(lv for lv in g._levels if lv != level)
    k = g._levels.index(level)
    v = g._value.movedim(k, len(rest)) if k != len(rest) else g._value
    return BatchedTensor(v, rest) if rest else v


# -- forward mode -----------------------------------------------------------------------------------------------
def _forward_ad():
    if forward_ad is None:
        raise NotImplementedError("jvp and jacfwd need forward-mode AD (minigrad.autograd.forward_ad), which this "
                                  "minigrad does not have yet; jacrev computes the same Jacobian")
    return forward_ad


def _nested() -> bool:
    """Is an outer jvp/jacfwd carrying tangents now? minigrad's forward AD has one level (as
    torch.autograd.forward_ad), so an inner jvp/jacfwd computes its numbers by reverse mode (create_graph), whose
    every op, the backward formulas' included, carries the outer level's tangents (forward over reverse, as
    hessian = jacfwd(jacrev)). torch.func nests forward levels instead; the numbers are the same."""
    return _FORWARD[0] > 0


def _jvp_by_vjps(func: Callable, primals: tuple, tangents: tuple, has_aux: bool):
    """J v by reverse mode twice: u -> vjp_fn(u) = Jᵀu is linear, and its own vjp at v is J v."""
    got = vjp(func, *primals, has_aux=has_aux)
    value, vjp_fn = got[0], got[1]
    leaves, spec = _pytree.flatten(value)
    for o in leaves:
        if not isinstance(o, (Tensor, BatchedTensor)):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")
    us = [zeros_like(o) if o.__class__ is not BatchedTensor else o * 0 for o in leaves]

    def transposed(*u):
        return vjp_fn(_pytree.unflatten(list(u), spec))

    _, back = vjp(transposed, *us)
    tangent_out = _pytree.unflatten(list(back(tangents)), spec)  # one per output, as the outputs are arranged
    return (value, tangent_out, got[2]) if has_aux else (value, tangent_out)


@contextlib.contextmanager
def _forward(fwd, level: list | None = None):
    """The dual level of the outermost jvp/jacfwd (an inner one computes by reverse mode: `_nested`). NumPy's
    floating-point warnings are off, as in the ops: a tangent formula at inf or nan (cos'(-inf) = -sin(-inf)) gives
    nan silently, as in PyTorch. jacfwd's private vmap `level` runs inside the dual level's methods: it is there
    when they are installed (so a plain tensor's method given way to a batched argument, `w.mv(x)`) and gone
    when they are restored (so the plain methods come back without the giving way, unless a vmap runs)."""
    _FORWARD[0] += 1
    ident = None if level is None else level[0]
    if level is not None:
        LEVELS.append(level)
        TANGENT_LEVELS.add(ident)  # (it batches only the tangents)
    try:
        with fwd.dual_level(), np.errstate(all="ignore"):
            try:
                yield
            finally:
                if level is not None:
                    LEVELS.pop()
                    level = None
    finally:
        if level is not None:  # (the dual level refused to start)
            LEVELS.pop()
        TANGENT_LEVELS.discard(ident)
        _FORWARD[0] -= 1


def _dual(fwd, x, tangent):
    """make_dual on the batch tensors: `tangent` lined up with `x`'s batch dims."""
    if x.__class__ is BatchedTensor or tangent.__class__ is BatchedTensor:
        levels = tuple(sorted(set(getattr(x, "_levels", ())) | set(getattr(tangent, "_levels", ()))))
        sizes = {lv: s for lv, s, _ in LEVELS}
        b = tuple(sizes[lv] for lv in levels)
        px = physical(x if x.__class__ is BatchedTensor else BatchedTensor(x, ()), levels, 0)
        pt = physical(tangent if tangent.__class__ is BatchedTensor else BatchedTensor(tangent, ()), levels, 0)
        px = px.expand(b + tuple(px.shape[len(b):]))
        pt = pt.expand(b + tuple(pt.shape[len(b):]))
        return BatchedTensor(fwd.make_dual(px, pt), levels)
    return fwd.make_dual(x, tangent)


def _unpack(fwd, out):
    """(primal, tangent) of an output; a zero tangent where it does not depend on the inputs."""
    value = out._value if out.__class__ is BatchedTensor else out
    primal, tangent = fwd.unpack_dual(value)
    if tangent is None:
        tangent = _zeros(primal)
    if out.__class__ is BatchedTensor:
        return BatchedTensor(primal, out._levels), BatchedTensor(tangent, out._levels)
    return primal, tangent


def jvp(func: Callable, primals: tuple, tangents: tuple, *, strict: bool = False, has_aux: bool = False):
    """(func(*primals), func's Jacobian times `tangents`), by forward mode: one pass carrying the tangents."""
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    if not isinstance(tangents, tuple) or len(_pytree.flatten(tangents)[0]) != len(_pytree.flatten(primals)[0]):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {_pytree.describe(_pytree.flatten(primals)[1])} and tangents "
                           f"with structure {_pytree.describe(_pytree.flatten(tangents)[1])}")
    fwd = _forward_ad()
    create_graph = _create_graph((primals, tangents))
    leaves, spec = _pytree.flatten(primals)
    for p, t in zip(leaves, _pytree.flatten(tangents)[0]):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same shape, "
                               f"got {p.shape} and {t.shape}")
    if _nested():
        return _jvp_by_vjps(func, primals, tangents, has_aux)
    with _transform(), _forward(fwd):
        duals = [_dual(fwd, p, t) for p, t in zip(leaves, _pytree.flatten(tangents)[0])]
        out = func(*_pytree.unflatten(duals, spec))
        out, aux = _split_aux("jvp(f, primals, tangents)", out, has_aux)
        outs, out_spec = _pytree.flatten(out)
        for o in outs:
            if not isinstance(o, (Tensor, BatchedTensor)):
                raise RuntimeError(f"jvp(f, primals, tangents): Expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
        pairs = [_unpack(fwd, o) for o in outs]
    primal_out = _detach(_pytree.unflatten([p for p, _ in pairs], out_spec), create_graph)
    tangent_out = _detach(_pytree.unflatten([t for _, t in pairs], out_spec), create_graph)
    return (primal_out, tangent_out, _detach(aux, create_graph)) if has_aux else (primal_out, tangent_out)


def jacfwd(func: Callable, argnums: int | tuple = 0, has_aux: bool = False, *, randomness: str = "error") -> Callable:
    """func's Jacobian by forward mode: every column of it (one per input element) in ONE forward pass, carrying
    a batch of tangents, the identity's rows (a private vmap level)."""

    @functools.wraps(func)
    def wrapper(*args):
        if _nested():  # the same Jacobian by reverse mode, which the outer level's tangents go through
            return jacrev(func, argnums, has_aux=has_aux)(*args)
        nums = _check_argnums(argnums, len(args))
        fwd = _forward_ad()
        create_graph = _create_graph(args)
        flat = [_pytree.flatten(args[a]) for a in nums]
        leaves = [x for lv, _ in flat for x in lv]
        for x in leaves:
            if not isinstance(x, (Tensor, BatchedTensor)):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        n = sum(_numel(x.shape) for x in leaves)
        level = next(_ids)
        with _transform(), _forward(fwd, [level, n, randomness]):
            duals = [_dual(fwd, x, BatchedTensor(t, (level,))) for x, t in zip(leaves, _basis(leaves, n))]
            args2, it = list(args), iter(duals)
            for a, (lv, spec) in zip(nums, flat):
                args2[a] = _pytree.unflatten([next(it) for _ in lv], spec)
            out, aux = _split_aux("jacfwd(f)(*args)", func(*args2), has_aux)
            outs, out_spec = _pytree.flatten(out)
            pairs = [_unpack(fwd, o) for o in outs]
        jac = _detach(_columns(pairs, flat, level, out_spec, isinstance(argnums, int)), create_graph)
        return (jac, _detach(_unbatch(aux, level), create_graph)) if has_aux else jac

    return wrapper


def _columns(pairs, flat, level, out_spec, single: bool):
    """The tangents (batched at `level`, one per input element) as the Jacobian: (out shape, in shape) blocks."""
    per_out = []
    for primal, tangent in pairs:
        cols = _rows(tangent, level) if level in getattr(tangent, "_levels", ()) else None
        out_shape = tuple(primal.shape if primal.__class__ is not BatchedTensor or level not in primal._levels
                          else primal.shape)
        per_arg, start = [], 0
        for lv, spec in flat:
            parts = []
            for x in lv:
                k = _numel(x.shape)
                if cols is None:
                    block = zeros(out_shape + tuple(x.shape), dtype=primal.dtype)  # (a zero tangent: the output's)
                else:
                    block = (cols[start:start + k] if k != cols.shape[0] else cols).movedim(0, -1)
                    shape = out_shape + tuple(x.shape)
                    block = block.reshape(shape) if tuple(block.shape) != shape else block
                parts.append(block)
                start += k
            per_arg.append(_pytree.unflatten(parts, spec))
        per_out.append(per_arg[0] if single else tuple(per_arg))
    return _pytree.unflatten(per_out, out_spec)


def _unbatch(tree, level):
    leaves, spec = _pytree.flatten(tree)
    return _pytree.unflatten([_rows(x, level)[0] if x.__class__ is BatchedTensor and level in x._levels else x
                              for x in leaves], spec)


def hessian(func: Callable, argnums: int | tuple = 0) -> Callable:
    """func's Hessian: jacfwd(jacrev(func)), forward mode over reverse mode, as PyTorch computes it."""
    return jacfwd(jacrev(func, argnums), argnums)
