"""Graph nodes: the objects you reach through `tensor.grad_fn` and `next_functions`.

A node knows only what backward needs: the edges to the nodes of its inputs (`next_functions`),
the values its derivative rule reads (saved at forward time), and the shape/dtype of the gradient
it receives. It never references the tensor it produced (only weakly), so a graph has no
reference cycles and is freed by reference counting the moment the last tensor goes away.

A node *is* that weak reference (`Node` subclasses `weakref.ref`): one object per operation
instead of two. Python's cyclic garbage collector walks every live container object while a
graph is alive, so the number of objects per operation is what its cost grows with.

Everything only introspection reads (`metadata`, hooks, `_saved_*`) lives behind one rarely-set
slot `_x` or is computed on access, to keep the per-operation cost of recording low.
"""

from __future__ import annotations

import itertools
import re
import weakref
from collections import namedtuple

import numpy as np

_seq = itertools.count()
_ACC_SEQ = 1 << 62  # AccumulateGrad runs as soon as it is ready, as in PyTorch (sequence_nr = UINT64_MAX)

FREED = object()  # marks saved values released after backward

BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
    "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
    "or if you need to access saved tensors after calling backward."
)

InputMetadata = namedtuple("InputMetadata", "shape dtype")


def freed_error(node) -> RuntimeError:
    """PyTorch's message, plus a hint that names the node whose saved values are gone."""
    return RuntimeError(f"{BACKWARD_TWICE}\nhint: {node.name()} saved values for backward, and the earlier "
                        "backward() freed them; pass retain_graph=True to that earlier call if you need two.")


class RemovableHandle:
    """Returned by every `register_*hook`; `.remove()` takes the hook out again."""

    __slots__ = ("_ref", "id")
    _ids = itertools.count()

    def __init__(self, hooks: HookDict):
        self._ref = weakref.ref(hooks)
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        hooks = self._ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class HookDict(dict):
    """An ordered id -> hook mapping that handles can refer to weakly."""

    __slots__ = ("__weakref__",)

    def add(self, fn) -> RemovableHandle:
        handle = RemovableHandle(self)
        self[handle.id] = fn
        return handle


class _Nobody:
    """The referent of a node whose output is not known or not tracked (`track_outputs(False)`)."""

    __slots__ = ("__weakref__",)


NOBODY = _Nobody()
_deref = weakref.ref.__call__


class Node(weakref.ref):
    """Base of every graph node (`isinstance(t.grad_fn, minigrad.autograd.graph.Node)`).

    Made with `Node.__new__(cls, output_tensor)`; identity, not the referent, is its hash and equality.
    """

    # The edges are `_nx`, the next node per input (None where no gradient flows; a leaf tensor that
    # stands for its AccumulateGrad until `next_functions` asks, see pin_leaf), and `_nr`, the
    # input number at each (None when all are 0, nearly always): no tuple per edge, which matters
    # because every tuple in a graph is work for Python's cyclic garbage collector while it is alive.
    __slots__ = ("_nx", "_nr", "_seq", "_x", "__weakref__")
    _multi = True  # False: `_m` is the (shape, dtype) of this node's one output (RuleNode, CopySlices)
    # What the node saved for backward (RuleNode's slots: None when nothing); other nodes always release
    _in = _res = True
    __hash__ = object.__hash__
    __eq__ = object.__eq__
    __ne__ = object.__ne__

    # -- the public PyTorch API -------------------------------------------------------------
    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        return self._next

    @property
    def _next(self) -> tuple:
        """The edges as PyTorch shows them: ((node_or_None, input_nr), ...)."""
        nx, nr = self._nx, self._nr
        if any(e is not None and not isinstance(e, Node) for e in nx):
            nx = self._nx = tuple(pin_leaf(e, self, i) if e is not None and not isinstance(e, Node) else e
                                  for i, e in enumerate(nx))
        return tuple(zip(nx, nr if nr is not None else (0,) * len(nx)))

    @_next.setter
    def _next(self, edges) -> None:
        edges = tuple(edges)
        self._nx = tuple(fn for fn, _ in edges)
        nrs = tuple(nr for _, nr in edges)
        self._nr = nrs if any(nrs) else None

    @property
    def metadata(self) -> dict:
        return self._extra().setdefault("metadata", {})

    def register_hook(self, fn) -> RemovableHandle:
        """`fn(grad_inputs, grad_outputs)` runs after this node; a returned tuple replaces grad_inputs."""
        return self._hookdict("hooks").add(fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """`fn(grad_outputs)` runs before this node; a returned tuple replaces grad_outputs."""
        return self._hookdict("prehooks").add(fn)

    def _sequence_nr(self) -> int:
        return self._seq

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __call__(self, *grads):
        from .engine import call_node

        outs = call_node(self, list(grads))
        return outs[0] if len(outs) == 1 else tuple(outs)

    # -- minigrad's own introspection names (README: "Introspection names") -----------------
    @property
    def input_metadata(self) -> tuple:
        """Shape and dtype of the gradient each input slot of this node expects."""
        return tuple(InputMetadata(tuple(s), _dtype_name(d)) for s, d in self._meta())

    @property
    def output_tensor(self):
        """The tensor this node produced, while it is alive (the node is a weak reference to it;
        an in-place op that takes over a node re-points it through `_x["output"]`)."""
        x = self._x
        if x is not None and "output" in x:
            return x["output"]()
        t = _deref(self)
        return None if t is NOBODY else t

    def _set_output(self, t) -> None:
        """Re-point `output_tensor` (an in-place op hands its node to an existing tensor)."""
        self._extra()["output"] = weakref.ref(t)

    @property
    def hooks(self) -> tuple:
        return tuple(self._extra().get("hooks", {}).values())

    @property
    def prehooks(self) -> tuple:
        return tuple(self._extra().get("prehooks", {}).values())

    # -- internals ----------------------------------------------------------------------------
    def _extra(self) -> dict:
        x = self._x
        if x is None:
            x = self._x = {}
        return x

    def _hookdict(self, key: str) -> HookDict:
        x = self._extra()
        d = x.get(key)
        if d is None:
            d = x[key] = HookDict()
        return d

    def _tensor_prehooks(self, nr: int):
        x = self._x
        if x is None:
            return None
        tp = x.get("tensor_hooks")
        return tp.get(nr) if tp else None

    def _retain_ref(self, nr: int):
        x = self._x
        if x is None:
            return None
        r = x.get("retain")
        return r.get(nr) if r else None

    def _meta(self):
        """((shape, np dtype), ...) per output: what the gradients arriving here must look like."""
        raise NotImplementedError

    def _apply(self, grads: list, create_graph: bool) -> list:
        raise NotImplementedError

    def _release(self) -> None:
        pass

    def _saw_box(self, t, box: list) -> None:
        """`t`, an output of this node, just got a version counter (RuleNode watches saved results)."""


def _dtype_name(np_dtype) -> str:
    from .._dtypes import FROM_NP

    return repr(FROM_NP[np.dtype(np_dtype)])


class AccumulateGrad(Node):
    """The sink of a leaf: adds the arriving gradient into `variable.grad`."""

    __slots__ = ("variable",)
    _multi = False  # `_m` below is the shape and dtype of the one gradient it receives

    def __new__(cls, variable):
        return weakref.ref.__new__(cls, NOBODY)

    def __init__(self, variable):
        _fill_accumulator(self, variable)

    def name(self) -> str:
        return "minigrad::autograd::AccumulateGrad"

    @property
    def _m(self) -> tuple:
        d = self.variable._data
        return d.shape, d.dtype

    def _meta(self):
        return (self._m,)

    def _tensor_prehooks(self, nr: int):
        x = self.variable._x
        return x.hooks if x is not None else None

    def _apply(self, grads: list, create_graph: bool) -> list:
        _engine.accumulate_into(self.variable, grads[0], create_graph)
        return []


def _fill_accumulator(node: AccumulateGrad, variable) -> AccumulateGrad:
    node.variable = variable
    node._nx = ()
    node._nr = None
    node._seq = _ACC_SEQ + next(_seq) * _ACC_SPAN
    node._x = None
    return node


# A leaf's edge holds the leaf tensor itself until something needs its AccumulateGrad (introspection,
# hooks, anomaly mode): a training step then makes no AccumulateGrad at all, where PyTorch makes one
# per parameter per step. `pin_leaf` makes (or finds) the node and orders it by the leaf's first use,
# as if it had been made then: AccumulateGrads run in the order their leaves were first used.
_ACC_SPAN = 1024  # AccumulateGrad order: (sequence number of the first use) * _ACC_SPAN + input position


def pin_leaf(leaf, consumer: Node, i: int) -> AccumulateGrad:
    """The AccumulateGrad that stands for `leaf`, the input `i` of `consumer`."""
    acc = leaf._accumulator()
    seq = _ACC_SEQ + consumer._seq * _ACC_SPAN + min(i, _ACC_SPAN - 1)
    if seq < acc._seq:
        acc._seq = seq
    return acc


_BACKWARD_SUFFIX = re.compile(r"Backward\d*$")


def forward_op_name(node) -> str:
    """'ExpBackward0' -> 'Exp', as PyTorch names the op in its in-place error message."""
    return _BACKWARD_SUFFIX.sub("", type(node).__name__)


# -- output references for introspection ---------------------------------------------------------------
OUTPUT_REFS = [True]  # nodes refer weakly to the tensor they produced (node.output_tensor)


class track_outputs:
    """`with track_outputs(False):` (or a plain call) makes new nodes forget their output tensor
    (they refer to a placeholder instead); viz then shows values only where it can reach them."""

    def __init__(self, mode: bool = True):
        self.prev = OUTPUT_REFS[0]
        OUTPUT_REFS[0] = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        OUTPUT_REFS[0] = self.prev


# -- saved-tensor hooks ----------------------------------------------------------------------------------
SAVED_HOOKS: list = []  # stack of (pack_hook, unpack_hook); the innermost applies


class Packed:
    """A saved tensor that went through a pack hook; unpacked again when backward reads it."""

    __slots__ = ("obj", "unpack")

    def __init__(self, obj, unpack):
        self.obj = obj
        self.unpack = unpack


class saved_tensors_hooks:
    """Inside this block, every tensor a node saves goes through `pack_hook` at forward time and
    `unpack_hook` when backward (or `_saved_*`) reads it."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        SAVED_HOOKS.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        SAVED_HOOKS.pop()


class save_on_cpu(saved_tensors_hooks):
    """Everything is on the CPU already: the hooks are the identity."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        super().__init__(lambda t: t, lambda t: t)


def get_gradient_edge(tensor):
    """(node, input_nr) that a gradient for `tensor` flows into, as PyTorch's GradientEdge."""
    fn = tensor.grad_fn
    return (fn, tensor.output_nr) if fn is not None else (tensor._accumulator(), 0)


from . import engine as _engine  # noqa: E402  (engine imports this module; used at call time only)
