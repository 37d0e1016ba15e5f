"""`autograd.functional`: jacobian, hessian, vjp, jvp, hvp, vhp — built on `autograd.grad`."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, make
from .gradients import grad as _grad
from .gradients import stacked


def _tup(x):

    return (x,) if isinstance(x, Tensor) else tuple(x)


def _prepare(inputs, create_graph: bool):
    """Fresh leaves that require grad, so the user's tensors are never modified."""
    return tuple(t.detach().requires_grad_(True) if not (create_graph and t._requires_grad) else t.view_as(t)
                 for t in _tup(inputs))


def _fill(grads, like):

    return tuple(make(np.zeros_like(t._data)) if g is None else g for g, t in zip(grads, like))


def _strict_check(g, i, strict: bool, what: str = "output") -> None:
    if strict and g is None:
        raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                           "allowed in strict mode.")


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T J)."""
    single = not isinstance(inputs, (tuple, list))
    ins = _prepare(inputs, create_graph)
    outs = func(*ins)
    outs_t = _tup(outs)
    if v is None:
        if any(o._data.size != 1 for o in outs_t):
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                               "Tensor with a single element.")
        v = None
    grads = _grad(outs_t, ins, v, create_graph=create_graph, retain_graph=True, allow_unused=True)
    for i, g in enumerate(grads):
        _strict_check(g, i, strict)
    grads = _fill(grads, ins)
    out = outs if create_graph else _detached(outs)
    return out, grads[0] if single else grads


def _detached(outs):

    if isinstance(outs, Tensor):
        return outs.detach()
    return tuple(o.detach() for o in outs)


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v), through the double-vjp trick (reverse mode twice)."""

    ins = _prepare(inputs, create_graph)
    if v is None:
        if any(t._data.size != 1 for t in ins):
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                               "single Tensor with a single element.")
        v = tuple(make(np.ones_like(t._data)) for t in ins)
    v = _tup(v)
    outs = func(*ins)
    outs_t = _tup(outs)
    dummies = tuple(make(np.zeros_like(o._data), None, True) for o in outs_t)
    g = _grad(outs_t, ins, dummies, create_graph=True, allow_unused=True)
    g_used = [(gi, vi) for gi, vi in zip(g, v) if gi is not None]
    if not g_used:
        res = tuple(make(np.zeros_like(o._data)) for o in outs_t)
    else:
        res = _grad([gi for gi, _ in g_used], dummies, [vi for _, vi in g_used], create_graph=create_graph,
                    allow_unused=True)
        res = _fill(res, outs_t)
    out = outs if create_graph else _detached(outs)
    return out, res[0] if not isinstance(outs, (tuple, list)) else res


STRATEGY = ('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function has more '
            'outputs than inputs, "forward-mode" tends to be more performant. Otherwise, prefer to use "reverse-mode".')


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian: one `autograd.grad` call per output element ("reverse-mode"), or one forward-AD pass per input
    element ("forward-mode", as PyTorch only with `vectorize=True`; minigrad has no vmap and runs them in turn)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(STRATEGY)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('minigrad.autograd.functional.jacobian: `create_graph=True` and `strategy="'
                                      'forward-mode"` are not supported together (yet). Please either set `create_'
                                      'graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError('minigrad.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
                               'are not supported together (yet). Please either set `strict=False` or `strategy="'
                               'reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                      "only implemented for `vectorize=True`.")
        return _jacfwd(func, inputs)
    single_in = not isinstance(inputs, (tuple, list))
    ins = _prepare(inputs, create_graph)
    outs = func(*ins)
    single_out = not isinstance(outs, (tuple, list))
    outs_t = _tup(outs)
    result = []
    for o in outs_t:
        rows = [[] for _ in ins]
        for k in range(o._data.size):
            seed = np.zeros(o._data.size, o._data.dtype)
            seed[k] = 1
            if o._requires_grad:
                gs = _grad(o, ins, make(seed.reshape(o._data.shape)), retain_graph=True, create_graph=create_graph,
                           allow_unused=True)
            else:
                gs = (None,) * len(ins)
            for i, (g, t) in enumerate(zip(gs, ins)):
                _strict_check(g, i, strict)
                rows[i].append(g if g is not None else make(np.zeros_like(t._data)))
        per_input = []
        for i, t in enumerate(ins):
            if rows[i]:
                j = stacked(rows[i]).reshape(o._data.shape + t._data.shape)
            else:
                j = make(np.zeros(o._data.shape + t._data.shape, t._data.dtype))
            per_input.append(j if create_graph else j.detach())
        result.append(per_input[0] if single_in else tuple(per_input))
    return result[0] if single_out else tuple(result)


def _jacfwd(func, inputs):
    """The Jacobian by forward AD: input element k's basis tangent gives column k of every output's Jacobian."""
    from ..ops.joining import stack  # lazy: the ops load after autograd's package (they use its graph)
    from . import forward_ad  # lazy: forward AD is built on the ops

    single_in = not isinstance(inputs, (tuple, list))
    ins = tuple(t.detach() for t in _tup(inputs))
    columns, outs = [], None  # columns[i][k]: the outputs' tangents for input i's k-th basis tangent
    for i, x in enumerate(ins):
        columns.append([])
        for k in range(x._data.size):
            basis = np.zeros(x._data.size, x._data.dtype)
            basis[k] = 1
            with forward_ad.dual_level():
                args = list(ins)
                args[i] = forward_ad.make_dual(x, make(basis.reshape(x._data.shape)))
                outs = func(*args)
                columns[i].append([_tangent_or_zeros(forward_ad.unpack_dual(o).tangent, o) for o in _tup(outs)])
    if outs is None:
        outs = func(*ins)
    single_out = not isinstance(outs, (tuple, list))
    result = []
    for j, o in enumerate(_tup(outs)):
        per_input = []
        for i, x in enumerate(ins):
            cols = [c[j] for c in columns[i]]
            j_mat = stack(cols, -1) if cols else make(np.zeros(o._data.shape + (0,), o._data.dtype))
            per_input.append(j_mat.reshape(o._data.shape + x._data.shape).detach())
        result.append(per_input[0] if single_in else tuple(per_input))
    return result[0] if single_out else tuple(result)


def _tangent_or_zeros(tangent, like):
    return make(np.zeros_like(like._data)) if tangent is None else tangent.reshape(like._data.shape)


def hessian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar function: the Jacobian of its gradient ("forward-mode": forward AD over the
    reverse-mode gradient, PyTorch's forward-over-reverse)."""
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    single = not isinstance(inputs, (tuple, list))
    if outer_jacobian_strategy == "forward-mode":
        def gradient_fwd(*ins):
            ins = tuple(t.requires_grad_(True) for t in ins)
            out = func(*ins)
            if out._data.size != 1:
                raise RuntimeError("The Tensor returned by the function given to hessian should contain a single "
                                   "element")
            gs = _fill(_grad(out, ins, create_graph=True, allow_unused=True), ins)
            return gs[0] if single else gs

        return jacobian(gradient_fwd, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                        strategy="forward-mode")

    def gradient(*ins):
        out = func(*ins)
        if out._data.size != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single "
                               "element")
        gs = _grad(out, ins, create_graph=True, allow_unused=True)
        gs = _fill(gs, ins)
        return gs[0] if single else gs

    return jacobian(gradient, inputs, create_graph=create_graph, strict=strict)


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v) for a scalar function."""
    single = not isinstance(inputs, (tuple, list))
    ins = _prepare(inputs, create_graph)
    out = func(*ins)
    if out._data.size != 1:
        raise RuntimeError("The function given to hvp should return a single Tensor with a single element.")
    g = _fill(_grad(out, ins, create_graph=True, allow_unused=True), ins)
    v = _tup(v)
    used = [(gi, vi) for gi, vi in zip(g, v) if gi._requires_grad]
    if used:
        res = _grad([gi for gi, _ in used], ins, [vi for _, vi in used], create_graph=create_graph, allow_unused=True)
    else:
        res = (None,) * len(ins)
    res = _fill(res, ins)
    return (out if create_graph else out.detach()), (res[0] if single else res)


vhp = hvp  # the Hessian is symmetric for twice-differentiable functions
