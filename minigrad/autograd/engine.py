"""The backward engine: an iterative walk over the graph, in PyTorch's order.

1. Count, for every node reachable from the roots, how many edges lead into it.
2. Run ready nodes from a heap ordered like PyTorch's ready queue (AccumulateGrad first, then the
   most recently created node), so hooks fire in the order PyTorch fires them.
3. A node runs once every gradient flowing into it has been summed in its buffer; its outputs are
   checked against what the receiving node expects (broadcast gradients summed back to the
   input's shape, dtype cast), then added to the receivers' buffers.

A leaf in an edge stands for its AccumulateGrad (graph.pin_leaf): its gradients are summed and
added into `.grad` (or taken by autograd.grad) straight from the edge. Where something watches the
leaf (hooks, a live AccumulateGrad, anomaly mode), step 1 puts the node itself into the edge.

On the fast path gradients are NumPy arrays and no graph is recorded; with `create_graph=True`
they are Tensors and grad mode stays on, so the backward pass itself is differentiable.
"""

from __future__ import annotations

import heapq
import sys
import warnings

import numpy as np
from numpy import ndarray

from .. import _tensor as _t  # a partly initialised module at import time: used only at call time
from . import anomaly_mode
from .grad_mode import STATE
from .graph import AccumulateGrad, pin_leaf


def run_backward(roots: list, grads: list, keep_graph: bool, create_graph: bool,
                 inputs: tuple | None = None, accumulate: bool = True, allow_unused: bool = False):
    """Run backward from `roots` (tensors) seeded with `grads` (arrays, or Tensors if create_graph).

    With `inputs`, only what leads to them runs; `accumulate=False` returns their gradients
    (autograd.grad) instead of adding them into `.grad`.
    """
    buffers: dict = {}
    starts = []
    for t, g in zip(roots, grads):
        node = t._grad_fn if t._grad_fn is not None else t._accumulator()
        _add(buffers, node, t._out_nr, 1 if node._multi is False else len(node._meta()), g)
        starts.append(node)

    # 1. dependency counts (iterative: a chain of a million nodes is fine); a node is reachable
    # when it is a start or has a count
    deps: dict = {}
    start_set = set(starts)
    stack = list(start_set)
    # Leaf tensors stand for their AccumulateGrad in edges (graph.pin_leaf); some need the node itself:
    # all of them in anomaly mode, else those with hooks or a live node.
    every_leaf = anomaly_mode.ENABLED[0]
    tensor_types = _t.TENSOR_TYPES
    while stack:
        node = stack.pop()
        pin = False
        for nxt in node._nx:
            if nxt is None:
                continue
            if nxt in deps:  # (a leaf that needs its node never gets here: it is never counted itself)
                deps[nxt] += 1
            elif nxt.__class__ in tensor_types:
                if every_leaf or (nxt._x is not None and _needs_node(nxt)):
                    pin = True  # counted once the edge holds the node (_pin_edges)
                else:
                    deps[nxt] = 1
            else:
                deps[nxt] = 1
                if nxt not in start_set:  # a start is already on the stack
                    stack.append(nxt)
        if pin:
            _pin_edges(node, deps, every_leaf)

    captures = None  # node -> [(slot, index in inputs)]
    send = run = None  # with `inputs`: nodes gradients flow to, and nodes that execute
    if inputs is not None:
        captures = {}
        for k, t in enumerate(inputs):
            node = t._grad_fn
            if node is None:  # a leaf: its edges hold its AccumulateGrad if it was pinned, else the leaf
                node = _existing_accumulator(t)
                if node is None or not (node in deps or node in start_set):
                    node = t
            if node in deps or node in start_set:
                captures.setdefault(node, []).append((t._out_nr, k))
        leaves = [n for n in captures if type(n) is AccumulateGrad or n.__class__ in tensor_types]
        if _all_ends_captured(deps, start_set, captures):  # everything leads to an input: nothing to prune
            run = _AllBut(() if accumulate else leaves)
        else:
            send, run = _leading_to(_topological(start_set, deps), captures)
            if accumulate:
                run.update(leaves)
    captured = [None] * (len(inputs) if inputs is not None else 0)

    # 2-3. run ready nodes, with NumPy's warnings off (sqrt'(0) is inf, as in PyTorch), in the caller's
    # own context (hooks still print to the right cell)
    token = _set_quiet()
    try:
        _run_ready(start_set, deps, buffers, keep_graph, create_graph, captures, captured, inputs, accumulate, send,
                   run)
    finally:
        _reset_quiet(token)
    if inputs is None or accumulate:
        return None
    return _captured_grads(captured, allow_unused)


try:  # np.errstate(all="ignore") without rebuilding its error object on every backward (~1 us)
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj

    _QUIET_EXTOBJ = _make_extobj(all="ignore")

    def _set_quiet():
        return _extobj_contextvar.set(_QUIET_EXTOBJ)

    def _reset_quiet(token) -> None:
        _extobj_contextvar.reset(token)
except (ImportError, TypeError):  # another NumPy layout: the public way
    def _set_quiet():
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def _reset_quiet(state) -> None:
        state.__exit__(None, None, None)


def _run_ready(starts, deps, buffers, keep_graph, create_graph, captures, captured, inputs, accumulate, send, run):
    """The backward loop: pop the next ready node, run it, hand its gradients on."""
    prev_mode = STATE.mode
    STATE.mode = 1 if create_graph else 0
    pop, push, anomaly, pruned = heapq.heappop, heapq.heappush, anomaly_mode.ENABLED, send is not None
    tensor_types = _t.TENSOR_TYPES
    plain = captures is None and not anomaly[0]  # no autograd.grad captures, no anomaly checks
    try:
        heap = [(-n._seq, n) for n in starts if n not in deps]  # the starts nothing leads to
        heapq.heapify(heap)
        node = pop(heap)[1] if heap else None
        while node is not None:
            buf = buffers.pop(node, None)
            outs = None
            if buf is None:
                pass
            elif (captures is not None and (node in captures or (pruned and node not in run))) or (
                    node._x is not None or anomaly[0] or (type(node) is AccumulateGrad and _leaf_hooks(node))):
                outs = _run_special(node, buf, keep_graph, create_graph, captures, captured, inputs, accumulate, run)
            elif type(node) is AccumulateGrad:
                accumulate_into(node.variable, buf[0], create_graph)
            else:
                outs = node._apply(buf, create_graph)
                if not keep_graph and (node._in is not None or node._res is not None):
                    node._release()
            buf = None  # an array a rule passes through unchanged may then be kept by AccumulateGrad
            single = None  # a chain hands on to one ready node: take it directly, skipping the heap
            nx, nr = node._nx, node._nr
            for i in range(len(nx)):
                nxt = nx[i]
                if nxt is None or (pruned and nxt not in send):
                    continue
                left = deps[nxt] - 1
                deps[nxt] = left
                if nxt.__class__ in tensor_types:  # a leaf nothing watches (graph.pin_leaf)
                    _to_leaf(node, i, outs, nxt, left, buffers, create_graph, captures, captured, run)
                    continue
                g = outs[i] if outs is not None else None
                if g is not None:  # checked against what `nxt` expects (`_m`), then added to its buffer
                    slot = 0 if nr is None else nr[i]
                    if nxt.__class__ is AccumulateGrad:  # a leaf's gradient has the leaf's shape and dtype
                        d = nxt.variable._data
                        shape, dtype, one = d.shape, d.dtype, True
                    else:
                        one = nxt._multi is False
                        shape, dtype = nxt._m if one else nxt._meta()[slot]
                    if create_graph or g.__class__ is not ndarray or g.shape != shape or (
                            g.dtype is not dtype and g.dtype != dtype):
                        g = _validate(node, i, g, shape, dtype, create_graph)
                    into = buffers.get(nxt)
                    if into is None:
                        if not left and plain and nxt.__class__ is AccumulateGrad and not _watched(nxt):
                            # a leaf's only gradient: accumulate now (its turn would come next anyway)
                            outs[i] = None  # so that accumulate_into may keep the array (reference count)
                            accumulate_into(nxt.variable, g, create_graph)
                            continue
                        into = buffers[nxt] = [None] if one else [None] * len(nxt._meta())
                    old = into[slot]
                    into[slot] = g if old is None else old + g
                if not left:
                    if single is None and not heap:
                        single = nxt
                    else:
                        if single is not None:
                            push(heap, (-single._seq, single))
                            single = None
                        push(heap, (-nxt._seq, nxt))
            outs = g = old = None  # drop our references: AccumulateGrad reads reference counts
            node = single if single is not None else (pop(heap)[1] if heap else None)
    finally:
        STATE.mode = prev_mode


def _to_leaf(node, i: int, outs, leaf, left: int, buffers: dict, create_graph: bool, captures, captured: list,
             run) -> None:
    """Gradient `outs[i]` for a leaf in an edge: summed until the last one (`left` more to come)
    has arrived, then added into `.grad`, or taken for autograd.grad / inputs=."""
    g = outs[i] if outs is not None else None
    if g is not None:
        outs[i] = None  # only `g` holds it now: accumulate_into may keep the array (reference count)
        d = leaf._data
        g = _validate(node, i, g, d.shape, d.dtype, create_graph)
        into = buffers.get(leaf)
        if into is not None:
            into[0] = into[0] + g
        elif left or captures is not None:
            buffers[leaf] = [g]
        else:  # its only gradient
            accumulate_into(leaf, g, create_graph)
            return
    if not left and leaf in buffers:
        g = buffers.pop(leaf)[0]
        if captures is not None:  # autograd.grad / inputs=: the inputs' gradients
            for _, k in captures.get(leaf, ()):
                captured[k] = g
            if leaf not in run:
                return
        accumulate_into(leaf, g, create_graph)


def _run_special(node, buf: list, keep_graph: bool, create_graph: bool, captures, captured, inputs, accumulate,
                 run):
    """A node off the plain path: tensor hooks, node hooks, anomaly mode, leaves, and the captures
    and pruning of `inputs=` / autograd.grad."""
    if node._x is not None or (type(node) is AccumulateGrad and _leaf_hooks(node)):
        buf = _tensor_prehooks(node, buf, create_graph)
    if captures is not None and node in captures:
        _capture(node, buf, captures, captured, inputs, accumulate, create_graph)
    if run is not None and node not in run:
        return None
    if node._x is None and not anomaly_mode.ENABLED[0]:
        outs = node._apply(buf, create_graph)
    else:
        outs = _call(node, buf, create_graph)
    if not keep_graph:
        node._release()
    return outs


def _needs_node(t) -> bool:
    """Must this leaf (one with a `_x`) have its gradient go through its AccumulateGrad node: hooks on
    the leaf, or a node alive elsewhere (which may have hooks, and is the one PyTorch would use)?"""
    x = t._x
    return bool(x.hooks or x.post_hooks or (x.acc is not None and x.acc() is not None))


def _pin_edges(node, deps: dict, every_leaf: bool) -> None:
    """Replace the leaves in `node`'s edges that need their AccumulateGrad node (hooks, a live node,
    anomaly mode: what works on nodes) by that node, and count those edges; other leaves are
    accumulated straight from the edge."""
    nx = list(node._nx)
    for i, e in enumerate(nx):
        if e.__class__ in _t.TENSOR_TYPES and (every_leaf or (e._x is not None and _needs_node(e))):
            acc = nx[i] = pin_leaf(e, node, i)
            deps[acc] = deps.get(acc, 0) + 1
    node._nx = tuple(nx)


def _watched(acc) -> bool:
    """Does anything watch this AccumulateGrad run: node hooks, or tensor or post-accumulate hooks on its leaf?"""
    if acc._x is not None:
        return True
    vx = acc.variable._x
    return vx is not None and bool(vx.hooks or vx.post_hooks)


def _leaf_hooks(node) -> bool:
    vx = node.variable._x
    return vx is not None and bool(vx.hooks)


def _captured_grads(captured: list, allow_unused: bool) -> tuple:
    """autograd.grad's result: the captured gradients as tensors, with PyTorch's unused-input error."""
    result = []
    for k, g in enumerate(captured):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {k} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior.")
            result.append(None)
        elif isinstance(g, _t.Tensor):
            result.append(g)
        else:
            result.append(_t.make(g))
    return tuple(result)


def _capture(node, buf: list, captures: dict, captured: list, inputs, accumulate: bool, create_graph: bool):
    """autograd.grad / backward(inputs=...): take the gradient arriving for each named input."""
    for slot, k in captures[node]:
        captured[k] = buf[slot]
        if accumulate and type(node) is not AccumulateGrad:
            _accumulate_nonleaf(inputs[k], buf[slot], create_graph)


def _existing_accumulator(t):
    x = t._x
    ref = x.acc if x is not None else None
    return ref() if ref is not None else None


def _all_ends_captured(deps: dict, starts: set, captures: dict) -> bool:
    """Is every node without a way further (a leaf's AccumulateGrad, usually) one of the inputs? Then
    every node leads to an input, and autograd.grad needs no pruning (the common case)."""
    for nodes in (deps, starts):
        for node in nodes:
            if node not in captures and all(e is None for e in _edges(node)):
                return False
    return True


def _edges(node) -> tuple:
    """A node's next nodes; none for a leaf tensor standing in an edge for its AccumulateGrad."""
    return () if node.__class__ in _t.TENSOR_TYPES else node._nx


class _AllBut(frozenset):
    """`run` when nothing is pruned: every node runs except these (the inputs' AccumulateGrads or leaves,
    whose gradient autograd.grad returns instead of accumulating). They are all captured, so
    `_run_ready` tests only captured nodes against this set."""

    def __contains__(self, node) -> bool:
        return not frozenset.__contains__(self, node)


def _topological(starts: set, deps: dict) -> list:
    """Kahn's order of the reachable graph: every node comes after all the nodes that feed it."""
    left = dict(deps)
    ready = [n for n in starts if n not in left]
    order = []
    while ready:
        node = ready.pop()
        order.append(node)
        for nxt in _edges(node):
            if nxt is not None:
                left[nxt] -= 1
                if left[nxt] == 0:
                    ready.append(nxt)
    return order


def _leading_to(order: list, targets) -> tuple[set, set]:
    """(nodes from which a target can be reached, targets included; nodes that must run because a
    target lies beyond them). `order` lists every node before the nodes it feeds."""
    reach, run = set(), set()
    for node in reversed(order):
        for nxt in _edges(node):
            if nxt in reach:
                run.add(node)
                reach.add(node)
                break
        else:
            if node in targets:
                reach.add(node)
    return reach, run


def _add(buffers: dict, node, slot: int, n: int, g) -> None:
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * n
    old = buf[slot]
    buf[slot] = g if old is None else old + g


def _validate(node, i: int, g, shape: tuple, dtype, create_graph: bool):
    """Sum a broadcast gradient back to the input's shape and cast it to the input's dtype."""
    if create_graph:
        if not isinstance(g, _t.Tensor):
            g = _t.make(np.asarray(g))
        if g._data.shape != shape:
            g = _sum_to_checked(node, i, g, shape)
        if g._data.dtype != dtype:
            g = g.to(dtype)
        return g
    if g.__class__ is not np.ndarray:
        g = np.asarray(g)
    if g.shape != shape:
        g = _sum_to_checked(node, i, g, shape)
    if g.dtype != dtype:
        g = g.astype(dtype)
    return g


def _sum_to_checked(node, i: int, g, shape: tuple):
    """Sum a broadcast gradient back to `shape`; the axes to sum are cached per shape pair
    (a training loop meets the same few pairs, e.g. a bias, on every step)."""
    gshape = tuple(g.shape)
    dims = _SUM_AXES.get((shape, gshape))
    if dims is None:
        dual = sys.modules["minigrad.ops._dual"]  # loaded with minigrad; imported after this module
        if not dual.expandable(shape, gshape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got {list(gshape)} but "
                f"expected shape compatible with {list(shape)}")
        if len(_SUM_AXES) > 4096:
            _SUM_AXES.clear()
        dims = _SUM_AXES[(shape, gshape)] = dual._sum_dims(shape, gshape)
    if g.__class__ is not np.ndarray:
        return g.sum(dims, keepdim=True).reshape(shape)
    if len(gshape) == 2 and shape == gshape[1:] and g.dtype.kind == "f" and gshape[0] > 1:
        # a bias's gradient, (batch, n) -> (n,): ones @ g is one BLAS call, twice as fast as the reduction
        return np.dot(_ones(gshape[0], g.dtype), g)
    # summing away only leading dims (a bias) gives `shape` itself: a fresh array AccumulateGrad can keep
    out = np.add.reduce(g, dims, keepdims=len(gshape) == len(shape) or dims[-1] >= len(gshape) - len(shape))
    if out.__class__ is not np.ndarray:  # a sum over everything is a NumPy scalar
        return np.asarray(out)
    return out if out.shape == shape else out.reshape(shape)


_SUM_AXES: dict = {}  # (input shape, gradient shape) -> axes to sum
_ONES: dict = {}  # (length, dtype) -> a read-only vector of ones


def _ones(n: int, dtype) -> np.ndarray:
    v = _ONES.get((n, dtype))
    if v is None:
        if len(_ONES) > 256:
            _ONES.clear()
        v = _ONES[(n, dtype)] = np.ones(n, dtype)
        v.flags.writeable = False
    return v


def _tensor_prehooks(node, buf: list, create_graph: bool) -> list:
    """Tensor hooks (`t.register_hook`) of the node's outputs, then retain_grad, before the node runs."""
    for slot in range(len(buf)):
        g = buf[slot]
        if g is None:
            continue
        hooks = node._tensor_prehooks(slot)
        if hooks:
            for fn in list(hooks.values()):
                gt = _as_tensor(g)
                new = fn(gt)
                if new is not None:
                    if tuple(new.shape) != tuple(gt.shape):
                        raise RuntimeError(f"hook '{getattr(fn, '__name__', fn)}' has changed the size of value")
                    g = new if create_graph else new._data
            buf[slot] = g
        ref = node._retain_ref(slot)
        if ref is not None:
            t = ref()
            if t is not None:
                _accumulate_nonleaf(t, g, create_graph)
    return buf


def _accumulate_nonleaf(t, g, create_graph: bool) -> None:
    """`.grad` of a retained (or `inputs=`-named) non-leaf: a fresh copy, added up across calls."""
    make = _t.make
    if create_graph:
        t._grad = g if t._grad is None else t._grad + g
        return
    arr = g._data if hasattr(g, "_data") else g
    if t._grad is None:
        t._grad = make(np.array(arr, copy=True))
    else:
        t._grad = make(t._grad._data + arr)


def _call(node, buf: list, create_graph: bool) -> list:
    """Node prehooks, the node itself, node hooks; with anomaly mode, a NaN check."""
    x = node._x
    pre = x.get("prehooks") if x else None
    if pre:
        for fn in list(pre.values()):
            new = fn(tuple(_as_tensor(g) for g in buf))
            if new is not None:
                buf = [_from_hook(g, create_graph) for g in new]
    if anomaly_mode.ENABLED[0]:
        outs = anomaly_mode.run_checked(node, buf, create_graph)
    else:
        outs = node._apply(buf, create_graph)
    post = x.get("hooks") if x else None
    if post:
        for fn in list(post.values()):
            new = fn(tuple(_as_tensor(g) for g in outs), tuple(_as_tensor(g) for g in buf))
            if new is not None:
                outs = [_from_hook(g, create_graph) for g in new]
    return outs


def call_node(node, grads: list) -> list:
    """`grad_fn(grad)` called by hand: run one node on the given gradients, return Tensors."""
    arrays = [g._data if g is not None else None for g in grads]
    outs = node._apply(arrays, False)
    return [_as_tensor(o) for o in outs]


def _as_tensor(g):
    if g is None or isinstance(g, _t.Tensor):
        return g
    return _t.make(g if g.__class__ is np.ndarray else np.asarray(g))


def _from_hook(g, create_graph: bool):
    if g is None or create_graph:
        return g
    return g._data


def accumulate_into(var, g, create_graph: bool) -> None:
    """AccumulateGrad: `.grad = g` the first time, `.grad += g` (in place, as PyTorch) afterwards."""
    make = _t.make
    if g is None:
        return
    old = var._grad
    if create_graph:
        if not isinstance(g, _t.Tensor):
            g = make(g)
        if old is None and g._requires_grad:
            from ..ops.inplace import copy_

            g = copy_(make(np.empty_like(g._data)), g)  # a graph-connected copy: CopyBackwards, as PyTorch
        var._grad = g if old is None else old + g
    elif old is None:
        # Steal the array when nobody else holds it (as PyTorch does with use_count): the caller's one
        # reference (a buffer slot, or the engine's `g`), `g` and getrefcount's argument make 3. A view,
        # or an array a rule passed to two places, is copied, so that a later in-place `+=` can never
        # change another tensor's grad.
        if g.__class__ is np.ndarray and sys.getrefcount(g) <= 3 and g.base is None and g.flags.writeable:
            var._grad = make(g)
        else:
            var._grad = make(np.array(g, copy=True))
    elif old._grad_fn is not None or old._requires_grad:
        var._grad = make(old._data + g)
    else:
        od = old._data
        if od.flags.writeable and od.shape == np.shape(g):
            np.add(od, g, out=od)
            old._bump()
        else:
            var._grad = make(od + g)
    x = var._x
    if x is not None and x.post_hooks:
        for fn in list(x.post_hooks.values()):
            fn(var)


def user_stacklevel() -> int:
    """The `stacklevel` that points a warning at the first frame outside minigrad (the learner's line)."""
    import os

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def warn_create_graph_backward() -> None:
    warnings.warn(
        "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
        "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to "
        "avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters "
        "to None after use to break the cycle and avoid the leak.", UserWarning, stacklevel=user_stacklevel())
