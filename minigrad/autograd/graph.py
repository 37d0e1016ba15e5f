"""Graph nodes: the objects you reach through `tensor.grad_fn` and `next_functions`.

A node knows what backward needs and nothing more: its edges to the nodes that made its inputs
(`next_functions`, exactly as PyTorch builds it), the values its derivative formulas read (saved
at forward time), and the shape and dtype of the gradient each of its output slots receives. It
refers to the tensor it produced only weakly, so a graph has no reference cycles: it is freed by
reference counting the moment the last tensor that leads into it goes away.

A leaf that requires grad gets its `AccumulateGrad` node when it first enters a graph; the leaf
holds that node weakly, so it is one object per leaf while any graph holds it, as in PyTorch.
"""

from __future__ import annotations

import re
import weakref
from collections import namedtuple

import numpy as np

from .._dtypes import FROM_NP
from .._hint import hint
from .._hooks import HookDict, RemovableHandle
from .._layout import empty_like_leaf
from .._state import SEQUENCE
from .._tensor import Tensor, make
from .._zero_grad import plain
from . import anomaly_mode

__all__ = ["Node", "AccumulateGrad", "RemovableHandle", "saved_tensors_hooks", "save_on_cpu", "get_gradient_edge",
           "track_outputs", "FREED", "InputMetadata"]

# Nodes are numbered as they are made (SEQUENCE): backward runs the most recent ready node first, as PyTorch
# does. AccumulateGrad nodes all get the highest number, so a leaf's gradient is stored as soon as it is complete.
ACCUMULATE_GRAD_SEQUENCE_NR = (1 << 64) - 1  # PyTorch's UINT64_MAX

FREED = object()  # what a node's saved values become once backward has released them

BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
    "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
    "or if you need to access saved tensors after calling backward."
)

InputMetadata = namedtuple("InputMetadata", "shape dtype")


def freed_error(node: Node) -> RuntimeError:
    """PyTorch's message, plus a hint that names the node whose saved values are gone."""
    return RuntimeError(f"{BACKWARD_TWICE}\n" + hint("{node} saved values for backward, and the earlier backward() "
                                                     "freed them; pass retain_graph=True to that earlier call if you "
                                                     "need two.", node=node.name()))


_BACKWARD_N = re.compile(r"Backward(\d*)$")


def _op_name(node_name: str) -> str:
    return _BACKWARD_N.sub(lambda m: "" if m.group(1) == "0" else m.group(1), node_name)


def forward_op_name(node: Node) -> str:
    """'ExpBackward0' -> 'Exp', 'SqueezeBackward1' -> 'Squeeze1', as PyTorch names the op in its view errors."""
    return _op_name(type(node).__name__)


def saved_op_name(node: Node) -> str:
    """How PyTorch's saved-tensor error names the node that made the tensor: 'ExpBackward0' -> 'Exp',
    'PowBackward1' -> 'Pow1', a C++-named node in full ('minigrad::autograd::CopySlices')."""
    return _op_name(node.name())


class _NoOutput:
    """What a node refers to when it has no output tensor to point at (an AccumulateGrad, `track_outputs(False)`)."""

    __slots__ = ("__weakref__",)


NO_OUTPUT = _NoOutput()
_referent = weakref.ref.__call__  # a node's own `__call__` runs its backward


class Node(weakref.ref):
    """Base of every graph node (`isinstance(t.grad_fn, minigrad.autograd.graph.Node)`).

    Subclasses say how to turn the gradients of the node's outputs into gradients of its inputs
    (`_apply`). A node is itself the weak reference to the tensor it made (weakref.ref can be subclassed,
    as the weakref docs show), and it keeps its edges as two tuples, the next nodes and the input number
    at each (None when all are 0, nearly always): an operation then adds two objects to a live graph, a
    node and a tuple, which matters because Python's cyclic garbage collector visits every one of them.
    Everything only hooks or introspection use lives in `_extras`, a dict made on first use; `metadata` (which
    viz's module tags and anomaly mode fill) has its own slot, so a node with metadata but no hooks still takes
    the engine's plain path.
    """

    __slots__ = ("_next_nodes", "_next_nrs", "_sequence_number", "_input_metadata", "_extras", "_metadata",
                 "__weakref__")
    _new_arrays = False  # its gradients are arrays it makes and keeps no reference to (the engine may own them)
    __hash__ = object.__hash__  # identity, not the referent's (weakref.ref's own)
    __eq__ = object.__eq__
    __ne__ = object.__ne__

    # -- the public PyTorch API -----------------------------------------------------------------------
    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        """((node or None, input_nr), ...): where the gradient of each input of this node goes."""
        return tuple(zip(self._next_nodes, self._next_nrs or (0,) * len(self._next_nodes)))

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn) -> RemovableHandle:
        """`fn(grad_inputs, grad_outputs)` runs after this node; a returned tuple replaces grad_inputs."""
        return self._extra("hooks", HookDict).add(fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """`fn(grad_outputs)` runs before this node; a returned tuple replaces grad_outputs."""
        return self._extra("prehooks", HookDict).add(fn)

    def _sequence_nr(self) -> int:
        """The node's number: nodes are numbered as they are made (PyTorch's private method of this name)."""
        return self._sequence_number

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __call__(self, *grads):
        """`grad_fn(grad)` called by hand: the node's backward on these gradients, nothing else runs."""
        arrays = [g._data if isinstance(g, Tensor) else g for g in grads]
        outs = [None if g is None else make(np.asarray(g)) for g in self._apply(arrays, False)]
        return outs[0] if len(outs) == 1 else tuple(outs)

    # -- minigrad's own introspection names (README: "Introspection names") ----------------------------
    @property
    def input_metadata(self) -> tuple:
        """Shape and dtype of the gradient each input slot of this node receives (PyTorch: `_input_metadata`)."""
        return tuple(InputMetadata(tuple(shape), repr(FROM_NP[np.dtype(dtype)])) for shape, dtype in
                     self._input_metadata)

    @property
    def output_tensor(self):
        """The tensor this node produced while it is alive (held weakly, so nothing is kept alive), else None.
        An in-place op that hands the node to another tensor re-points it through `_extras["output"]`."""
        moved = self._extras and self._extras.get("output")
        t = moved() if moved is not None else _referent(self)
        return None if t is NO_OUTPUT else t

    @property
    def hooks(self) -> tuple:
        hooks = self._extras and self._extras.get("hooks")
        return tuple(hooks.values()) if hooks else ()

    @property
    def prehooks(self) -> tuple:
        hooks = self._extras and self._extras.get("prehooks")
        return tuple(hooks.values()) if hooks else ()

    @property
    def input_names(self) -> tuple:
        """The names of this node's inputs, one per `next_functions` slot ('self', 'other', ...)."""
        return tuple(f"input{i}" for i in range(len(self._next_nodes)))

    @property
    def rule_text(self) -> str | None:
        """The one-line local derivative rule, as the animation shows it; None when the node has none."""
        return None

    # -- what the engine calls -------------------------------------------------------------------------
    def _apply(self, grads: list, create_graph: bool) -> list:
        """Gradients of the inputs (one per `next_functions` slot, None where none flows) from the gradients
        of the outputs: NumPy arrays, or Tensors when `create_graph` (so the backward pass is recorded)."""
        raise NotImplementedError

    def _release(self) -> None:
        """Drop the saved values (backward without `retain_graph`)."""

    def _check_saved(self) -> None:
        """For a node no gradient reached: PyTorch's node still unpacks what it saved before looking at the
        gradients, so a saved tensor written since (or freed) is refused all the same."""

    # -- internals -----------------------------------------------------------------------------------------
    def _extra(self, key: str, default_factory):
        extras = self._extras
        if extras is None:
            extras = self._extras = {}
        value = extras.get(key)
        if value is None:
            value = extras[key] = default_factory()
        return value

    def _counter_made(self, t, counter) -> None:
        """`t`, an output of this node, just got its version counter (a node that saved it watches it)."""

    def _set_output(self, t) -> None:
        """This node's output is now `t` (an in-place op handed it the node; a Function's outputs are known
        after its forward): what `output_tensor` gives from now on."""
        if TRACK_OUTPUTS[0]:
            self._extra("output", lambda: None)
            self._extras["output"] = weakref.ref(t)

    def _tensor_hooks(self, slot: int) -> HookDict | None:
        """Hooks registered with `register_hook` on this node's output `slot`."""
        table = self._extras and self._extras.get("tensor_hooks")
        return table.get(slot) if table else None

    def _retained(self, slot: int):
        """The tensor at output `slot` that called `retain_grad()`, if it is alive."""
        table = self._extras and self._extras.get("retain")
        ref = table.get(slot) if table else None
        return ref() if ref is not None else None


# -- what a node's output slots receive ----------------------------------------------------------------
_METADATA: dict = {}  # (shape, dtype) -> ((shape, dtype),): one shared description per shape and dtype
_BY_SHAPE: dict = {}  # shape -> the description last used for it (one lookup in a one-dtype program)


def metadata_of(array: np.ndarray) -> tuple:
    """((shape, dtype),): what the gradient of an output of this shape and dtype must look like. Shared
    between nodes (a graph has many nodes of few shapes, and every tuple is work for Python's cyclic GC)."""
    shape = array.shape
    meta = _BY_SHAPE.get(shape)
    if meta is not None and meta[0][1] is array.dtype:
        return meta
    key = (shape, array.dtype)
    meta = _METADATA.get(key)
    if meta is None:
        if len(_METADATA) > 4096:
            _METADATA.clear()
            _BY_SHAPE.clear()
        meta = _METADATA[key] = (key,)
    _BY_SHAPE[shape] = meta
    return meta


def new_node(cls: type, next_nodes: tuple, next_nrs: tuple | None, input_metadata: tuple, output=None,
             sequence_number: int | None = None) -> Node:
    """A node: its edges (the next node per input, None where no gradient flows, and the input number at
    each, None when all are 0), its number (the next one unless given), what its output slots receive, and
    the tensor it made. Ops' nodes are made by `ops.recording.record`, which writes these same steps out in
    line (it runs once per op of every forward pass); every other node is made here."""
    node = weakref.ref.__new__(cls, output if output is not None and TRACK_OUTPUTS[0] else NO_OUTPUT)
    node._next_nodes = next_nodes
    node._next_nrs = next_nrs
    node._sequence_number = next(SEQUENCE) if sequence_number is None else sequence_number
    node._input_metadata = input_metadata
    node._extras = node._metadata = None
    if anomaly_mode.ENABLED[0]:
        anomaly_mode.remember_forward(node)
    return node


class AccumulateGrad(Node):
    """The sink of a leaf: adds the gradient that arrives into `variable.grad`."""

    __slots__ = ("variable",)

    def name(self) -> str:
        return "minigrad::autograd::AccumulateGrad"

    def __lt__(self, other) -> bool:
        """Backward's ready queue (a heap) orders nodes by sequence number. AccumulateGrad nodes all share the
        highest number and none of them comes first, so the heap alone orders them, exactly as PyTorch's
        std::priority_queue does (heapq takes the same steps): this is the order in which leaves' hooks fire."""
        return False

    def _tensor_hooks(self, slot: int) -> HookDict | None:
        return self.variable._extras.hooks if self.variable._extras is not None else None

    def _apply(self, grads: list, create_graph: bool) -> list:
        if not self.variable._requires_grad:  # detach_()-ed since the graph was built: PyTorch stores nothing
            return []
        accumulate_grad(self.variable, grads[0], create_graph, owned=grads.__class__ is OwnedGrad)
        post = self.variable._extras.post_hooks if self.variable._extras is not None else None
        for fn in list(post.values()) if post else ():
            fn(self.variable)
        return []


def check_usable(t) -> None:
    """PyTorch reads each input's grad_fn in turn: a view its base's in-place write made unusable raises."""
    if t._extras is not None and t._extras.invalid:
        raise RuntimeError(t._extras.invalid)


def accumulator(leaf) -> AccumulateGrad | None:
    """The leaf's AccumulateGrad: the live one if a graph (or the learner) still holds it, else a new one.

    The leaf refers to it weakly (as PyTorch's leaf does), so no cycle forms and it dies with the last graph.
    A view that requires grad only because its base does (made under no_grad, or before its base required
    grad) has none: it passes no gradient on, as in PyTorch; `view.requires_grad_()` gives it its own."""
    if leaf._base is not None and not (leaf._extras is not None and leaf._extras.own_requires_grad):
        check_usable(leaf)
        return None
    extras = leaf._extras if leaf._extras is not None else leaf._get_extras()
    ref = extras.accumulator
    node = ref() if ref is not None else None
    if node is None:  # the gradient it receives has the leaf's shape and dtype
        node = new_node(AccumulateGrad, (), None, metadata_of(leaf._data), None, ACCUMULATE_GRAD_SEQUENCE_NR)
        node.variable = leaf
        extras.accumulator = weakref.ref(node)
    return node


class OwnedGrad(list):
    """The buffer of a leaf's AccumulateGrad holding an array the engine owns: a formula of this backward made
    it and nothing else refers to it (`engine.owned_gradient`), or the engine summed it. `.grad` takes it as it
    is instead of copying it (PyTorch steals such a buffer too)."""

    __slots__ = ()


def accumulate_grad(var, g, create_graph: bool, owned: bool = False) -> None:
    """The one place `.grad` of a leaf is written: `.grad = g` the first time, then `.grad += g`.

    As in PyTorch: without create_graph the sum happens in place in the existing `.grad` (a saved
    `g = x.grad` sees it change, even one an earlier create_graph backward made); with create_graph a new
    tensor is always made (differentiable when either term is), so a `.grad` taken earlier keeps its values.
    A new `.grad` never shares memory with anything else: it is a copy (the engine may hand one array to two
    leaves), unless the engine owns `g` (`owned`) and it already has the leaf's dtype and layout.
    """
    if g is None:
        return
    old = var._grad
    if create_graph:
        g = g if isinstance(g, Tensor) else make(np.asarray(g))
        if old is None:  # PyTorch copies into a new tensor in the leaf's layout, which records CopyBackwards
            new = make(empty_like_leaf(var._data, g._data.dtype))
            var._grad = new.copy_(g) if g._requires_grad else new.copy_(g.detach())
        else:  # out of place even when neither requires grad (PyTorch sums in place only with grad mode off)
            var._grad = old + g
        return
    g = plain(g)  # (an efficient zero arrives as plain zeros)
    if old is None:  # a copy in the leaf's layout (PyTorch's gradient layout contract)
        data = var._data
        if owned and data.flags.c_contiguous and g.flags.c_contiguous and g.dtype == data.dtype:
            var._grad = make(g)  # nothing else refers to g: no copy needed
        elif data.flags.c_contiguous:
            var._grad = make(np.array(g, dtype=data.dtype, order="C"))
        else:
            var._grad = make(empty_like_leaf(data))
            np.copyto(var._grad._data, g)
    elif old._data.shape != np.shape(g) or not old._data.flags.writeable:
        var._grad = make(old._data + g)
    else:
        np.add(old._data, g, out=old._data)
        old._bump_version()


# -- output references for introspection ---------------------------------------------------------------
TRACK_OUTPUTS = [True]  # nodes refer weakly to the tensor they produced (node.output_tensor)


class track_outputs:
    """`with track_outputs(False):` (or a plain call) makes new nodes forget their output tensor, so
    `output_tensor` is None; viz then shows values only where it can reach them."""

    def __init__(self, mode: bool = True):
        self.prev = TRACK_OUTPUTS[0]
        TRACK_OUTPUTS[0] = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        TRACK_OUTPUTS[0] = self.prev


# -- saved-tensor hooks ----------------------------------------------------------------------------------
SAVED_HOOKS: list = []  # stack of (pack_hook, unpack_hook); the innermost applies


class Packed:
    """A saved tensor that went through a pack hook; unpacked again when backward reads it. It keeps the saved
    tensor's place in the graph (its node, or its leaf's AccumulateGrad), not the tensor: PyTorch's SavedVariable
    unpacks into a new tensor on the unpack hook's data that takes that place. (A saved result's node is the
    node holding it, given when unpacking: no reference cycle.)"""

    __slots__ = ("obj", "unpack", "grad_fn", "output_nr", "requires_grad", "accumulator")

    def __init__(self, obj, unpack, saved: Tensor | None = None):
        self.obj = obj
        self.unpack = unpack
        self.grad_fn = saved._grad_fn if saved is not None else None
        self.output_nr = saved._output_nr if saved is not None else 0
        self.requires_grad = saved._requires_grad if saved is not None else True
        leaf = saved is not None and saved._grad_fn is None and saved._requires_grad
        self.accumulator = accumulator(saved) if leaf else None


class SavedTensor:
    """What `node._raw_saved_<name>` returns (PyTorch's `torch._C._autograd.SavedTensor`): a handle on one value
    the node saved, on which a pair of pack/unpack hooks can be set once (the "Autograd mechanics" note's
    saving to disk): `pack_hook(tensor)` runs at once, `unpack_hook(packed)` each time backward reads it."""

    __slots__ = ("_node", "_name")

    def __init__(self, node: Node, name: str):
        self._node = node
        self._name = name

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments. The following argument types are "
                            "supported:\n    1. (self: minigrad._C._autograd.SavedTensor, arg0: collections.abc."
                            "Callable, arg1: collections.abc.Callable) -> None")
        self._node._pack_saved(self._name, pack_hook, unpack_hook)


SAVED_HOOKS_SET = ("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one pair "
                   "of hooks is allowed at a time.")
SAVED_NONE = "Calling register_hooks on a saved tensor with value None is forbidden"
SAVED_FREED = ("Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the "
               "graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
               "backward through the graph a second time or if you need to access saved variables after calling "
               "backward.")


def unpacked(packed: Packed, node: Node | None = None) -> Tensor:
    """A new tensor on the data the unpack hook gives back (checked as PyTorch checks it), in the saved tensor's
    place in the graph (`node`: the node whose saved result it is)."""
    t = packed.unpack(packed.obj)
    if not isinstance(t, Tensor):
        raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                        f"{type(t).__name__}")
    out = make(t._data, node if node is not None else packed.grad_fn, packed.requires_grad)
    out._output_nr = packed.output_nr
    if packed.accumulator is not None:  # a leaf's: the gradient reaches the saved leaf itself
        out._get_extras().accumulator = weakref.ref(packed.accumulator)
    return out


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
    fn = tensor._grad_fn
    return (fn, tensor._output_nr) if fn is not None else (accumulator(tensor), 0)


def modified_message(t: Tensor, now: int, saved: int) -> str:
    """PyTorch's error for a saved tensor written in place since. Its type string is the legacy class name where
    PyTorch has one in print, the dispatch key's name for bool."""
    kind = "CPUBoolType" if t._data.dtype.kind == "b" else f"minigrad.{FROM_NP[t._data.dtype]._legacy}"
    what = f"[{kind} [{', '.join(str(d) for d in t._data.shape)}]]"
    if t._grad_fn is not None:
        what += f", which is output {t._output_nr} of {saved_op_name(t._grad_fn)},"
    return (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"{what} is at version {now}; expected version {saved} instead. Hint: enable anomaly detection to find "
        "the operation that failed to compute its gradient, with "
        "minigrad.autograd.set_detect_anomaly(True, check_nan=False)."
    )
