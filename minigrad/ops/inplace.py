"""In-place ops (`add_`, `x += y`, `zero_`, `x[k] = v`, ...), as PyTorch records them.

An in-place op keeps the tensor's identity and storage and bumps its version counter. When autograd
records it, the op runs out of place on a stand-in for the tensor's previous value, and the tensor
takes the new node ("rebasing its history").

Through a view (`b[0].mul_(2)`, `v = b[0]; v.add_(1)`), the write changes the view's base too, so the
base's node becomes CopySlices: its backward takes the gradient of the whole base, runs the in-place
op's own backward on the view's region of it, writes the result back into that region, and passes
the op's other gradients on. Every live view of the base is then marked stale, and gets a node
rebuilt from the base's node when its node is next read (`Tensor._grad_fn`), so a view taken before
the write sees the new history; as in PyTorch, lazily (a write costs the same however many views
the base has), but with the views' own names (PyTorch's AsStridedBackward0), as learners expect.
"""

from __future__ import annotations

import weakref

import numpy as np

from .._dtypes import checked
from .._random import default_generator
from .._state import GRAD
from .._tensor import Tensor, make
from ..autograd.graph import Node, accumulator, check_usable, freed_error, metadata_of, new_node
from . import views as S
from . import xp
from .operands import as_operand, broadcast_error, kind_name
from .recording import RuleNode, record, rule, save_result
from .registry import REGISTRY, Sample, declare
from .views import (
    REGENERATING,
    creation_meta,
    invalidate,
    live_views,
    register_view,
    view_rebase_message,
    view_recipes,
    views_of_other_roots,
)


# -- checks -------------------------------------------------------------------------------------------------
def check_inplace(t: Tensor, tracked: bool = True) -> None:
    """PyTorch's check_inplace: views made in no_grad mode or by multi-output ops, and leaves, refuse."""
    if not tracked or GRAD.mode <= 0:
        return
    base = t._base
    if base is not None:
        meta = creation_meta(t)
        if meta is not None:
            raise RuntimeError(t._extras.invalid_inplace or view_rebase_message(t, meta, indirect=False))
        if t._requires_grad and base._grad_fn is None:  # (also a base detach_()-ed since, or not requiring grad)
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if t._requires_grad and t._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def check_inference(t: Tensor) -> None:
    if t.is_inference() and GRAD.mode >= 0:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                           "clone to get a normal tensor before doing inplace update.See "
                           "https://github.com/pytorch/rfcs/pull/17 for more details.")


INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
                    "location. Please clone() the tensor before performing the operation.")


MASKED_FILL_EXPANDED = ("Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
                        "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = scalar")


def internal_overlap(arr: np.ndarray) -> bool:
    """PyTorch's has_internal_overlap(...) == Yes: a dim of size > 1 with stride 0 (an expanded tensor). An empty
    tensor is never checked."""
    return 0 in arr.strides and arr.size > 0 and any(n > 1 and st == 0 for n, st in zip(arr.shape, arr.strides))


def writable(t: Tensor, arr: np.ndarray) -> None:
    """PyTorch's check before an in-place write into `arr` (part of `t`): no two of its elements share memory."""
    if internal_overlap(arr):
        raise RuntimeError(INTERNAL_OVERLAP)


OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
           "memory location. Please clone() the tensor before performing the operation.")


def check_overlap(out: np.ndarray, others, full_too: bool = False) -> None:
    """PyTorch's check before an in-place write that reads other tensors: none may share only part of the memory
    written to (`v.add_(v[0])`; all of it with the same layout, `v.add_(v)`, is fine). `full_too`: not even all of
    it (PyTorch's assert_no_overlap, as index_put_ does it: `v[[0]] = v`)."""
    for other in others:
        if isinstance(other, Tensor):
            status = overlap_status(out, other._data)
            if status == "partial" or (full_too and status == "full"):
                raise RuntimeError(OVERLAP)


def overlap_status(a: np.ndarray, b: np.ndarray) -> str | None:
    """PyTorch's get_overlap_status(a, b): "full" (the same elements in the same layout), "partial", or None
    (none shared, or too hard to tell: PyTorch only tells when both are dense, a permutation of a contiguous
    block, and otherwise lets the write happen)."""
    if a is b:
        return "full"
    if a.size == 0 or b.size == 0:
        return None
    if (a.base if a.base is not None else a) is not (b.base if b.base is not None else b):
        return None  # different memory
    if not (_dense(a) and _dense(b)):
        return None
    a0, b0 = a.__array_interface__["data"][0], b.__array_interface__["data"][0]
    a1, b1 = a0 + a.nbytes, b0 + b.nbytes
    if (a0, a1) == (b0, b1):
        return "full" if a.strides == b.strides else "partial"
    return "partial" if a0 < b1 and b0 < a1 else None


def _dense(a: np.ndarray) -> bool:
    """Non-overlapping and dense: the elements fill a contiguous block, in some order of the dims."""
    expected = a.itemsize
    for stride, n in sorted((st, n) for st, n in zip(a.strides, a.shape) if n != 1):
        if stride != expected:
            return False
        expected *= n
    return True


def write_into(t: Tensor, key, vdata, then=None) -> None:
    """`t._data[key] = vdata` (`t._data[key][then] = vdata` with an index `then`). A view made by broadcasting is
    read-only in NumPy even where PyTorch writes into it (a part of it in which no two elements share memory, or a
    fill): the values then go into the memory it covers in its base."""
    if t._data.flags.writeable or t._base is None:
        arr = t._data
        if not arr.flags.writeable:  # the detach() of an expanded tensor: a writable alias of the same memory
            arr = arr.view()
            arr.flags.writeable = True
        if arr.dtype.kind != "f" and getattr(vdata, "dtype", arr.dtype).kind == "f":
            with np.errstate(invalid="ignore"):  # nan or inf into integers: PyTorch casts silently
                _assign(arr, key, vdata, then)
        else:
            _assign(arr, key, vdata, then)
        return
    root = t._base
    own_array(root)
    idx = index_map(root._data.shape, view_recipes(t))[key]
    idx = idx if then is None else idx[then]
    root._data.flat[idx.ravel()] = np.broadcast_to(vdata, idx.shape).ravel()


def _assign(arr: np.ndarray, key, vdata, then) -> None:
    if then is None:
        arr[key] = vdata
    else:
        arr[key][then] = vdata


def fill_where(t: Tensor, mask: np.ndarray, value) -> Tensor:
    """`t[mask] = value` with nothing recorded, into a tensor whose elements may share memory (PyTorch's
    masked_fill_ on an expanded tensor writes every masked place, so a shared element takes the value)."""
    check_inference(t)
    own_array(t)
    v = value._data if isinstance(value, Tensor) else checked(value, t._data.dtype)
    write_into(t, mask, np.asarray(v).astype(t._data.dtype))
    t._bump_version()
    renew_view_nodes(t)
    return t


def own_array(t: Tensor) -> None:
    """NumPy gives scalars, not arrays, for 0-d results; a tensor written in place needs a real (writable) array."""
    if t._data.__class__ is not np.ndarray:
        t._data = np.array(t._data)


def _write(t: Tensor, key, vdata, overlap_ok: bool = False) -> None:
    own_array(t)
    if not overlap_ok:
        writable(t, t._data)
    try:
        write_into(t, key, vdata)
    except ValueError as e:
        raise RuntimeError(str(e).replace("array", "tensor")) from None


def can_cast(src: np.dtype, dst: np.dtype) -> bool:
    """PyTorch's canCast for in-place results: no float into an integer or bool tensor, nothing but bool into a
    bool one; integers of any width or sign go into each other (they wrap: `uint8.sub_(int64)`), unlike NumPy's
    "same_kind"."""
    if src.kind == "f":
        return dst.kind == "f"
    return dst.kind != "b" or src.kind == "b"


def _store(self: Tensor, res: np.ndarray, overlap_ok: bool = False) -> None:
    """Write an out-of-place result back into `self`, with PyTorch's cast and shape rules (`overlap_ok`: the write
    may go into an expanded tensor, its elements sharing memory agreeing on their value)."""
    if res.shape != self._data.shape:  # PyTorch's TensorIterator checks shapes before dtypes
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                           f"{list(res.shape)}")
    if res.dtype != self._data.dtype:
        if not can_cast(res.dtype, self._data.dtype):
            raise RuntimeError(f"result type {kind_name(res.dtype)} can't be cast to the desired output type "
                               f"{kind_name(self._data.dtype)}")
        with np.errstate(all="ignore"):  # float64 -> float32 overflows to inf silently, as in PyTorch
            res = res.astype(self._data.dtype)
    _write(self, Ellipsis, res, overlap_ok)


# -- the in-place machinery -----------------------------------------------------------------------------------
def _tracked(self: Tensor, others) -> bool:
    """Does the in-place op record a node? Not into an integer or bool tensor (it cannot require grad)."""
    return GRAD.mode > 0 and (self._requires_grad or (
        self._data.dtype.kind == "f" and any(isinstance(a, Tensor) and a._requires_grad for a in others)))


def run_inplace(self: Tensor, compute, others=(), overlap_ok: bool = False, inputs_overlap_ok: bool = False,
                check_any: bool = True, check=None) -> Tensor:
    """Apply an in-place op to `self`. `compute(src)` returns the op's out-of-place result for input `src`
    (recording its node when grad mode is on and something requires grad); `others` are its other arguments.
    `overlap_ok`: PyTorch allows the op into an expanded tensor and does not check its inputs for overlap (fill_
    and zero_ write one number everywhere, read first; copy_ from the tensor itself writes nothing);
    `inputs_overlap_ok`: only the inputs are not checked (fill_ with a tensor reads it first). `check_any`: autograd's
    check also guards an integer or bool `self` written from tensors requiring grad (not in copy_, PyTorch's
    hand-written one, which asks for a float `self`). `check()`: the op's own argument checks, which PyTorch's
    kernels make before TensorIterator's memory-overlap checks."""
    tracked = _tracked(self, others)
    # PyTorch's order: autograd's check (whenever an input requires grad, whatever self's dtype), then the
    # kernel's memory-overlap checks, then shapes and dtypes (_store)
    check_inplace(self, tracked or (check_any and GRAD.mode > 0
                                    and any(isinstance(a, Tensor) and a._requires_grad for a in others)))
    if tracked:  # autograd reads the other inputs' grad_fn next (a refused view raises)
        for a in others:
            if isinstance(a, Tensor):
                check_usable(a)
    check_inference(self)
    own_array(self)
    if check is not None:
        check()
    if not overlap_ok:
        writable(self, self._data)
        if not inputs_overlap_ok:
            check_overlap(self._data, others)
    if not tracked:
        prev = GRAD.mode
        GRAD.mode = 0 if prev > 0 else prev
        try:
            res = compute(self)._data
        finally:
            GRAD.mode = prev
        _store(self, res, True)  # (its memory was checked above)
        self._bump_version()
        renew_view_nodes(self)
        return self
    base = self._base
    if base is not None and not self._requires_grad and base._requires_grad:
        _regenerate(self, base)  # a view taken before its base required grad (PyTorch rebuilds it on access)
    old = make(self._data.copy(), self._grad_fn, self._requires_grad)
    old._output_nr = self._output_nr
    out = compute(old)
    _save_a_clone(out._grad_fn, old)
    _store(self, out._data, True)
    if out._data.dtype != self._data.dtype:  # promoted (float32 /= float64): the output, and so its gradient, has
        out._grad_fn._input_metadata = metadata_of(self._data)  # self's dtype, as in PyTorch
    if base is None:
        _adopt(self, out)
        refresh_views(self)
    else:
        _rebase_view(self, out)
    return self


def _save_a_clone(node, old: Tensor) -> None:
    """Where the op's node keeps the tensor's old value (`self` in mul_'s or div_'s formulas), PyTorch keeps
    `self.clone()`, recorded: under create_graph the saved value leads through CloneBackward0 to the old node."""
    kept = getattr(node, "_kept_inputs", None)
    if not old._requires_grad or not isinstance(kept, tuple) or not any(k is old for k in kept):
        return
    clone = record(S.CloneBackward0, old._data, (old,))
    node._kept_inputs = tuple(clone if k is old else k for k in kept)


def _adopt(t: Tensor, out: Tensor) -> None:
    """After an in-place op: `t` keeps its identity and storage, takes the new node, bumps its version."""
    node = out._grad_fn
    old, old_nr = t._grad_fn, t._output_nr
    t._bump_version()  # first, while `old` is still its node: a node that saved `t` as its result sees the write
    t._grad_fn = node
    t._requires_grad = True
    t._output_nr = 0
    node._set_output(t)
    _move_retain(t, old, old_nr)
    save_result(node, t)


def _edge(t: Tensor) -> tuple:
    if not t._requires_grad:
        return (None, 0)
    return (t._grad_fn, t._output_nr) if t._grad_fn is not None else (accumulator(t), 0)


class CopySlices(Node):
    """The base's node after an in-place write through one of its views (PyTorch's CopySlices).

    Backward: the gradient of the base, with the view's region replaced by what the in-place op's own
    node (`fn`) computes from that region; the op's other inputs get `fn`'s other gradients.
    """

    __slots__ = ("_fn", "_idx", "_repeats", "_recipes")

    def name(self) -> str:
        return "minigrad::autograd::CopySlices"

    @property
    def rule_text(self) -> str:
        return "grad_base = grad with the written region zeroed, the region's grad goes to the source"

    @property
    def input_names(self) -> tuple:
        return ("self",) + (self._fn.input_names[1:] if self._fn is not None else ())

    def _release(self) -> None:
        if self._fn is not None:  # PyTorch drops the wrapped node: CopySlices never runs twice
            self._fn._release()
            self._fn = None

    def _apply(self, grads: list, create_graph: bool) -> list:
        g = grads[0]
        n = len(self._next_nodes)
        if self._fn is None:
            raise freed_error(self)
        if g is None:
            return [None] * n
        idx = self._idx
        first = self._next_nodes[0]
        if first is not None and self._repeats and (GRAD.wanted is None or first in GRAD.wanted):
            # PyTorch writes the base's gradient back through the expanded view, when that gradient is wanted
            raise RuntimeError(INTERNAL_OVERLAP)  # (backward(inputs=[base]) does not want it: seed 1304 program 883)
        if create_graph:
            return self._apply_recorded(g if isinstance(g, Tensor) else make(np.asarray(g)))
        g = np.asarray(g)
        res = self._fn_apply([g.reshape(-1)[idx]], False)
        out = [None] * n
        if self._next_nodes[0] is not None:
            r0 = res[0]
            result = np.array(g, copy=True, order="C")
            result.reshape(-1)[idx] = 0 if r0 is None else r0
            out[0] = result
        out[1:] = res[1:]
        return out

    def _fn_apply(self, grads: list, create_graph: bool) -> list:
        """The op's node's backward. Its first edge is the view's old one, which the engine never reaches: when only
        some gradients are asked for (GRAD.wanted), whether its first gradient is wanted is this node's first edge's."""
        wanted, first = GRAD.wanted, self._fn._next_nodes[0]
        if wanted is None or first is None or (first in wanted) == (self._next_nodes[0] in wanted):
            return self._fn._apply(grads, create_graph)
        GRAD.wanted = wanted ^ {first}
        try:
            return self._fn._apply(grads, create_graph)
        finally:
            GRAD.wanted = wanted

    def _apply_recorded(self, g: Tensor) -> list:
        """Under create_graph, PyTorch's own steps, recorded: the base's gradient is a copy of `g` (CopyBackwards)
        whose view region is overwritten (copy_: CopySlices) by what the op's node computes from a clone of that
        region (CloneBackward0), so the graph of the gradients is PyTorch's."""
        result = make(np.empty(g._data.shape, g._data.dtype))
        result.copy_(g)
        region = result
        for r in self._recipes:
            region = _t_apply(region, r)
        res = self._fn_apply([region.clone()], True)
        out = [None] * len(self._next_nodes)
        if self._next_nodes[0] is not None:
            r0 = res[0]
            if r0 is None:
                region.zero_()
            else:
                region.copy_(r0 if isinstance(r0, Tensor) else make(np.asarray(r0)))
            out[0] = result
        out[1:] = res[1:]
        return out


def _rebase_view(view: Tensor, out: Tensor) -> None:
    """The base of `view` takes a CopySlices node around the in-place op's node; the views are rebuilt."""
    root = view._base
    fn = out._grad_fn
    edges = (_edge(root),) + fn.next_functions[1:]
    node = new_node(CopySlices, tuple(e[0] for e in edges), tuple(e[1] for e in edges),
                    ((root._data.shape, root._data.dtype),), root)
    node._fn = fn
    node._recipes = view_recipes(view)
    node._idx, node._repeats = view_index_map(view, root._data.shape)
    old, old_nr = root._grad_fn, root._output_nr
    root._grad_fn = node
    root._requires_grad = True
    root._output_nr = 0
    _move_retain(root, old, old_nr)  # the base's .grad is the gradient of its new value
    view._bump_version()  # the version counter is the base's
    save_result(fn, view)  # the op's saved result is the view itself, as modified
    refresh_views(root, view)
    if view._grad_fn is not None and fn._saves_result:  # (reading it rebuilds it now, as PyTorch's rebase does)
        # PyTorch's saved result remembers (weakly) the view's node after the write, its AsStridedBackward0, and
        # names it in the modified-tensor error while that node lives (else the op's own node)
        fn._extra("view_node", lambda: weakref.ref(view._grad_fn))


def view_index_map(view: Tensor, shape: tuple) -> tuple:
    """`index_map` of `view` in its root of `shape`, and whether a position repeats (an expanded view), computed
    once per view chain (a loop writing through the same view does not build it at every step)."""
    chain = view._extras.view_fn
    if chain.index is None or chain.index[0] != shape:
        idx = index_map(shape, chain.recipes())
        idx.flags.writeable = False  # (shared by the CopySlices nodes of every write through this view)
        chain.index = (shape, idx, np.unique(idx).size != idx.size)
    return chain.index[1:]


def index_map(shape: tuple, recipes) -> np.ndarray:
    """For each element of the view, its flat position in the base (the view recipes applied to an arange)."""
    m = np.arange(int(np.prod(shape))).reshape(shape)
    for r in recipes:
        m = S.apply_recipe(m, r)
    return np.asarray(m)


def _t_apply(t: Tensor, r: tuple) -> Tensor:
    kind = r[0]
    if kind == "getitem":  # (indexing is built on this module's in-place writes: it adds its replay here)
        return REPLAY_KEY[0](t, r[1])
    if kind == "reshape":
        return S.view(t, r[1])
    if kind == "T":
        return S.t(t)
    if kind == "swapaxes":
        return S.transpose(t, r[1], r[2])
    if kind == "transpose":
        return S.permute(t, r[1])
    if kind == "expand_dims":
        return S.unsqueeze(t, r[1])
    if kind == "broadcast_to":
        return S.expand(t, r[1])
    raise ValueError(f"unknown view recipe {r!r}")


# how a view's recorded index key is applied again: ops/indexing.py puts its shortcut for the basic keys views
# record here (the general `x[key]` until then)
REPLAY_KEY = [lambda t, key: REGISTRY["__getitem__"].function(t, key)]


def refresh_views(root: Tensor, also: Tensor | None = None) -> None:
    """After a recorded write: every live view of `root` gets a new node from root's (when next read); so do the
    views of the other roots of its memory (renew_other_roots), found in the same pass over its views."""
    counter = root._version_counter
    views = counter.views.alive() if counter is not None and counter.views is not None else []
    others: dict = {}
    for v in views:
        if v._base is root:
            _regenerate(v, root)
        else:
            others.setdefault(id(v._base), (v._base, []))[1].append(v)
    if also is not None and also._extras.stale is False:  # (not among them: made while no view was remembered)
        _regenerate(also, root)
    for other, its_views in others.values():
        _regenerate_all(_needing_a_node(its_views, other), other)


def renew_view_nodes(t: Tensor) -> None:
    """After a write that recorded nothing: if it went (under no_grad) into a tensor that requires grad, the views
    of its memory that require grad get a new node, as PyTorch rebuilds a view's grad_fn on its next use once its
    version changed. Hooks registered on a view stay with its old node (and so no longer fire), as in PyTorch."""
    counter = t._version_counter
    if counter is None or counter.views is None:  # no view of this memory (an SGD update of a parameter)
        return
    root = t._base if t._base is not None else t
    if GRAD.mode == 0 and t._requires_grad:
        _regenerate_all(_needing_a_node(live_views(root), root), root)
    elif GRAD.mode > 0 and not root._requires_grad:  # views with a node of a base detach_()-ed since
        _regenerate_all([v for v in live_views(root) if v._grad_fn is not None], root)
    renew_other_roots(root)


def renew_other_roots(root: Tensor) -> None:
    """A write through `detach()`'s result (or into what was detached) changed the memory of another root too:
    its views get new nodes as well, since PyTorch's version counter is shared by all of them."""
    if root._version_counter is None or root._version_counter.views is None:  # nearly always
        return
    for other, views in views_of_other_roots(root):
        _regenerate_all(_needing_a_node(views, other), other)


def _needing_a_node(views: list, root: Tensor) -> list:
    """The views a write makes PyTorch rebuild (or refuse): with a node, forbidden, or following their base."""
    return [v for v in views if v._grad_fn is not None or creation_meta(v) is not None
            or (root._requires_grad and v._requires_grad)]


def _regenerate_all(views: list, root: Tensor) -> None:
    if not views:  # nearly always (an SGD update of a parameter)
        return
    mode = GRAD.mode
    GRAD.mode = 1  # the rebuilt nodes are recorded as in grad mode
    try:
        for v in views:
            _regenerate(v, root)
    finally:
        GRAD.mode = mode


def _regenerate(v: Tensor, root: Tensor) -> None:
    """A write changed the memory of view `v` of `root`: PyTorch refuses such a view from now on if it was made in
    no_grad mode or by a multi-output op; any other view requires grad and gets a new node when its node is next
    read (marked stale here; `rebuild_view_node` builds it), as PyTorch rebuilds a view's grad_fn lazily."""
    if GRAD.mode <= 0:
        return
    meta = creation_meta(v)
    if meta is not None:
        if v._requires_grad or root._requires_grad:  # PyTorch refuses to use such a view again
            v._requires_grad = True  # (a view requires grad when its base does)
            invalidate(v, meta)
        return
    v._requires_grad = True
    v._extras.stale = True


def rebuild_view_node(v: Tensor) -> None:
    """The node of a stale view, rebuilt from its base's current node by replaying the view's recipes (in grad
    mode, as PyTorch does: the read may come under no_grad, or from the engine). The first time, the recipes run
    as ops on temporary tensors; the nodes they record are the view's plan, and later rebuilds (a loop writing
    through the view) make the same nodes directly over the base's new node."""
    v._extras.stale = False
    root = v._base
    chain = v._extras.view_fn
    plan = chain.plan
    if plan is not None and plan[0] == _layout(root) and root._grad_fn is not None:
        _take_node(v, _planned_nodes(plan[1], root, v), made_for_v=True)
        if not v._extras.watched:
            register_view(root, v)
        return
    prev, GRAD.mode = GRAD.mode, 1
    REGENERATING[0] = True
    try:
        start = root if root._requires_grad else _leading_nowhere(root)
        t = start
        for r in view_recipes(v):
            t = _t_apply(t, r)
        if t is start:
            t = REGISTRY["alias"].function(start)
    finally:
        REGENERATING[0] = False
        GRAD.mode = prev
    if start is root and root._grad_fn is not None:
        chain.plan = _plan_of(t._grad_fn, root)
    _take_node(v, t._grad_fn, t._output_nr)
    if not v._extras.watched:
        register_view(root, v)


Tensor._rebuild_view_node = rebuild_view_node


def _layout(t: Tensor) -> tuple:
    """What a view's nodes depend on besides its recipes: its root's shape, strides and dtype."""
    data = t._data
    return data.shape, data.strides, data.dtype


def _plan_of(node, root: Tensor) -> tuple | None:
    """The steps from `root`'s node to a rebuilt view's `node`, root first: (class, saved arguments, metadata)
    for each node. None where a step is not a plain one-input node that keeps no tensor (it is then replayed
    as ops every time)."""
    steps = []
    while node is not root._grad_fn:
        if (not isinstance(node, RuleNode) or len(node._next_nodes) != 1 or node._kept_inputs is not None
                or node._saves_result or node._multi or node._tensor_args or node._extras is not None):
            return None
        steps.append((type(node), node._args, node._input_metadata))
        node = node._next_nodes[0]
    return (_layout(root), tuple(reversed(steps))) if steps else None


def _planned_nodes(steps: tuple, root: Tensor, v: Tensor):
    """The nodes of a view's plan, made over `root`'s current node; the last one's output is `v`."""
    node, nrs = root._grad_fn, (root._output_nr,) if root._output_nr else None
    last = len(steps) - 1
    for i, (cls, args, meta) in enumerate(steps):
        node = new_node(cls, (node,), nrs, meta, v if i == last else None)
        node._args, node._kept_inputs, node._kept_versions = args, None, None
        nrs = None
    return node


def _leading_nowhere(root: Tensor) -> Tensor:
    """A stand-in for a base that no longer requires grad (detach_()-ed since its views were taken): PyTorch
    still rebuilds a view that has a node, and the new node's edge to the base leads nowhere (None). The stand-in
    requires grad only as a view of `root` does, which gives no edge (graph.accumulator)."""
    s = make(root._data, None, True)
    s._base = root
    return s


def views_follow(base: Tensor) -> None:
    """`base.requires_grad_()` after views of it were taken: those views require grad too, unless they have a
    node of their own (PyTorch: a view requires grad when its base does). They pass no gradient on, unless
    they were written since they were made: PyTorch then rebuilds their node on access, or refuses them (views
    made in no_grad mode or by a multi-output op)."""
    for v in live_views(base):
        if v._grad_fn is None and not v._extras.invalid_had_node:  # (a refused view keeps its node to PyTorch)
            v._requires_grad = base._requires_grad or v._extras.own_requires_grad
        if not base._requires_grad or v._version_counter.value == v._extras.attr_version:
            continue
        meta = creation_meta(v)
        if meta is not None:
            invalidate(v, meta)
        elif v._grad_fn is None:
            prev, GRAD.mode = GRAD.mode, 1
            try:
                _regenerate(v, base)
            finally:
                GRAD.mode = prev


Tensor._views_follow = views_follow


def _take_node(v: Tensor, node, output_nr: int = 0, made_for_v: bool = False) -> None:
    old, old_nr = v._grad_fn, v._output_nr
    v._grad_fn = node
    v._requires_grad = True
    v._output_nr = output_nr
    if not made_for_v:
        node._set_output(v)
    _move_retain(v, old, old_nr)
    v._extras.attr_version = v._version_counter.value


def _move_retain(t: Tensor, old, old_nr: int) -> None:
    """retain_grad() follows the tensor to its new node: `.grad` is the gradient of its current value (PyTorch).
    Tensor hooks stay behind with the old value, as in PyTorch."""
    extras = t._extras
    if extras is None or not extras.retains_grad:
        return
    if old is not None and old._extras:
        retained = old._extras.get("retain")
        if retained:
            retained.pop(old_nr, None)
    t._grad_fn._extra("retain", dict)[t._output_nr] = weakref.ref(t)


# -- the ops ----------------------------------------------------------------------------------------------------
def inplace_of(op, name: str, check=None):
    """`name` (`exp_`, `clamp_`, ...): the out-of-place `op` run by the in-place machinery (`run_inplace`).
    `check(self, *args, **kwargs)`: the op's argument checks, made before the memory-overlap checks."""

    def method(self, *args, **kwargs):
        return run_inplace(self, lambda src: op(src, *args, **kwargs), args + tuple(kwargs.values()),
                           check=None if check is None else lambda: check(self, *args, **kwargs))

    method.__name__ = method.__qualname__ = name
    return method


# -- ops that exist only in place: zero_, fill_, copy_, uniform_, normal_ ----------------------------------------
ZeroBackward0 = rule("ZeroBackward0", "self", text="grad_self = 0  (every element was overwritten)",
                     self=lambda grad: xp.zeros_like(grad))
FillBackward2 = rule("FillBackward2", "self", text="grad_self = 0  (every element was overwritten)",
                     self=lambda grad: xp.zeros_like(grad))
FillBackward3 = rule("FillBackward3", "self value", text="grad_self = 0  (overwritten), grad_value = sum(grad)",
                     self=lambda grad: xp.zeros_like(grad),
                     value=lambda grad: grad.sum())
CopyBackwards = rule("CopyBackwards", "self src", text="grad_self = 0 (overwritten), grad_src = grad",
                     self=lambda grad: xp.zeros_like(grad),
                     src=lambda grad: grad)
CopyBackwards.name = lambda self: "minigrad::autograd::CopyBackwards"


def _tracking(*ts) -> bool:
    return GRAD.mode > 0 and any(isinstance(t, Tensor) and t._requires_grad for t in ts)


def zero_(self):
    def compute(src):
        res = np.zeros_like(src._data)
        return record(ZeroBackward0, res, (src,)) if _tracking(src) else make(res)

    return run_inplace(self, compute, overlap_ok=True)


def fill_(self, value):
    """Fill with a number (FillBackward2) or with a 0-d tensor (FillBackward3, whose gradient is the sum)."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")

        def compute_t(src):
            res = np.full(src._data.shape, value._data, dtype=src._data.dtype)
            return record(FillBackward3, res, (src, value)) if _tracking(src, value) else make(res)

        return run_inplace(self, compute_t, (value,), inputs_overlap_ok=True)  # PyTorch: copy_ from value

    value = as_operand(value)
    checked(value, self._data.dtype)

    def compute(src):
        res = np.full(src._data.shape, checked(value, src._data.dtype), dtype=src._data.dtype)
        return record(FillBackward2, res, (src,)) if _tracking(src) else make(res)

    return run_inplace(self, compute, overlap_ok=True)


def copy_(self, src, non_blocking: bool = False):
    """Copy `src` (broadcast, cast) into self; differentiable w.r.t. src (CopyBackwards)."""
    src = as_operand(src)
    if not isinstance(src, Tensor):
        src = make(np.asarray(src))

    def compute(dst):
        try:
            with np.errstate(invalid="ignore"):  # nan/inf into an integer tensor: PyTorch casts silently
                vals = np.broadcast_to(src._data, dst._data.shape).astype(dst._data.dtype)
        except ValueError:
            raise broadcast_error(dst, src) from None
        return record(CopyBackwards, vals, (dst, src)) if _tracking(dst, src) else make(vals)

    return run_inplace(self, compute, (src,), overlap_ok=src is self or same_data(self._data, src._data),
                       check_any=False)


def same_data(a: np.ndarray, b: np.ndarray) -> bool:
    """The same elements of the same memory, in the same layout: PyTorch's copy_ then writes nothing (and checks
    no overlap, even of an expanded tensor into itself). PyTorch compares every stride; a size-1 dim's stride
    is left out here, since minigrad's can differ from PyTorch's (README, Memory layout)."""
    if a.shape != b.shape or a.dtype != b.dtype or a.__array_interface__["data"][0] != b.__array_interface__["data"][0]:
        return False
    return all(sa == sb for sa, sb, n in zip(a.strides, b.strides, a.shape) if n != 1)


def _drawn(name: str):
    """The node of an in-place random draw: every element was overwritten, so no gradient flows back (and the
    tangent is zero: `dual.inplace_only`)."""
    return rule(name, "self", text="grad_self = 0  (every element was drawn anew)",
                self=lambda grad: xp.zeros_like(grad))


UniformBackward0, NormalBackward0 = _drawn("UniformBackward0"), _drawn("NormalBackward0")
RandomBackward = tuple(_drawn(f"RandomBackward{i}") for i in range(3))  # random_(from, to), (to), ()


def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None):
    """Values drawn uniformly from [a, b), in place."""
    if self._data.dtype.kind != "f":
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for '{kind_name(self._data.dtype)}'")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a:g} > to={b:g}")
    gen = generator or default_generator
    return _random_fill(self, gen._np.uniform(a, b, self._data.shape), UniformBackward0)


def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None):
    """Values drawn from N(mean, std²), in place."""
    if self._data.dtype.kind != "f":
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{kind_name(self._data.dtype)}'")
    if not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    gen = generator or default_generator
    return _random_fill(self, gen._np.normal(mean, std, self._data.shape), NormalBackward0)


def random_(self, *args, generator=None, **kwargs):
    """Integers drawn uniformly from [from, to) (`random_(to)`, `random_(from, to)`; `from=` and `to=` by
    keyword); with no bounds, from [0, 2^24] for float32 (2^53 float64, 2^11 float16), the integers the dtype
    holds exactly, or the integer dtype's range."""
    bounds = dict(zip(("from", "to"), (0, args[0]) if len(args) == 1 else args)) | kwargs
    low, high = bounds.get("from", 0), bounds.get("to")
    node = RandomBackward[2 if high is None else 0 if "from" in bounds and len(args) != 1 else 1]
    if high is None:
        d = self._data.dtype
        high = 2 ** (np.finfo(d).nmant + 1) + 1 if d.kind == "f" else 2 if d.kind == "b" else int(np.iinfo(d).max) + 1
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    gen = generator or default_generator
    return _random_fill(self, gen._np.integers(low, high, self._data.shape), node)


def _random_fill(self: Tensor, values: np.ndarray, node) -> Tensor:
    """Write the draws as an in-place op: a tensor in a graph gets the draw's node (gradient 0), a leaf that
    requires grad refuses, views and versions follow."""

    def compute(src):
        res = values.astype(src._data.dtype)
        return record(node, res, (src,)) if _tracking(src) else make(res)

    return run_inplace(self, compute, overlap_ok=True)


_ONE = (Sample((((3, 4), "real"),)),)
declare("zero_", zero_, namespace="Tensor", nodes=(ZeroBackward0,), samples=_ONE, differentiable=False)
declare("fill_", fill_, namespace="Tensor", nodes=(FillBackward2, FillBackward3),
        samples=(Sample((((3, 4), "real"),), (0.5,)),), differentiable=False)
declare("copy_", copy_, namespace="Tensor", nodes=(CopyBackwards,), samples=(Sample((((3, 4), "real"),
                                                                                   ((4,), "real"))),))
declare("uniform_", uniform_, namespace="Tensor", nodes=(UniformBackward0,), differentiable=False)
declare("normal_", normal_, namespace="Tensor", nodes=(NormalBackward0,), differentiable=False)
declare("random_", random_, namespace="Tensor", nodes=RandomBackward, differentiable=False)
