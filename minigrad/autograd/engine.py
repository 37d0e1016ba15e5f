"""The backward engine. One backward pass is a GraphTask, as in PyTorch:

1. Count, for every node reachable from the roots, how many edges lead into it (`dependencies`);
   when only some inputs' gradients are asked for, the same walk marks the nodes that lead to them.
2. Run ready nodes, most recently made first (PyTorch's ready queue: the highest sequence number
   runs first; every AccumulateGrad has the highest number, so a leaf's `.grad` is written as soon
   as its gradient is complete). A node is ready once the gradients of all edges into it have been
   summed in its buffer.
3. Hand each gradient a node computes to the node its edge leads to, checked against what that node
   expects (a broadcast gradient is summed back to the input's shape, the dtype cast).

Gradients are NumPy arrays; with `create_graph=True` they are Tensors and grad mode stays on while
backward runs, so the backward pass is itself recorded and can be differentiated again.
"""

from __future__ import annotations

from heapq import heappop, heappush

import numpy as np
from numpy import ndarray

from .. import _dtypes
from .._broadcast import expandable, summed_dims
from .._broadcast import sum_to as sum_back
from .._stacklevel import warn_once
from .._state import GRAD
from .._tensor import Tensor, make
from .._zero_grad import plain
from . import anomaly_mode
from .graph import ACCUMULATE_GRAD_SEQUENCE_NR, AccumulateGrad, OwnedGrad, accumulator, check_usable


class GraphTask:
    """The state of one backward pass: dependency counts, gradient buffers, the ready queue."""

    __slots__ = ("keep_graph", "create_graph", "buffers", "dependencies", "ready", "needed", "wanted", "captures",
                 "captured", "roots", "quiet_leaves")

    def __init__(self, roots: list, grads: list, keep_graph: bool, create_graph: bool):
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        self.buffers: dict = {}  # node -> the summed gradient of each of its output slots
        self.dependencies: dict = {}  # node -> edges into it from nodes that have not run yet
        self.ready: list = []  # heap of (-sequence number, node): the next node to run comes first
        self.needed: set | None = None  # with `inputs`: the nodes that run (None: all of them)
        self.wanted: set | None = None  # with `inputs`: the nodes that run or whose gradients are captured
        self.captures: dict = {}  # autograd.grad: node -> [(slot, index in inputs)]
        self.captured: list = []
        self.quiet_leaves = False  # no hook can see when a leaf's .grad is written: `run` writes it once complete
        self.roots = []  # each node once (two outputs of one node share it)
        for t, g in zip(roots, grads):
            node = t._grad_fn
            if node is None:
                node = accumulator(t)
            buffer = self.buffers.get(node)
            if buffer is None:
                buffer = self.buffers[node] = [None] * len(node._input_metadata)
                self.roots.append(node)
            buffer[t._output_nr] = g if buffer[t._output_nr] is None else buffer[t._output_nr] + g

    @np.errstate(all="ignore")  # sqrt'(0) is inf, as in PyTorch: no NumPy warnings while backward runs
    def run(self) -> None:
        """Steps 2 and 3, after `count_dependencies` (or `select`, when only some inputs are asked for)."""
        deps, buffers, ready, captures = self.dependencies, self.buffers, self.ready, self.captures
        needed, wanted, create_graph, keep_graph = self.needed, self.wanted, self.create_graph, self.keep_graph
        watch_all, prev_running = anomaly_mode.ENABLED[0], anomaly_mode.RUNNING[0]  # (an outer backward's, in a hook)
        for node in self.roots:
            if node not in deps:
                heappush(ready, (-node._sequence_number, node))
        prev_mode, GRAD.mode = GRAD.mode, 1 if create_graph else 0
        prev_wanted, GRAD.wanted = GRAD.wanted, wanted
        try:
            while ready:
                node = heappop(ready)[1]
                grads = buffers.pop(node, None)
                arrived = grads is not None  # else only "undefined" gradients came (norm(p=0) gives one)
                if not arrived:
                    grads = [None] * len(node._input_metadata)
                if needed is not None and (node in captures or node not in needed) and not self.capture(node, grads):
                    continue  # autograd.grad, inputs=: an input's node whose gradient is taken, or not on the way
                plain = node._extras is None and not watch_all and (
                    type(node) is not AccumulateGrad or node.variable._extras.hooks is None)
                if plain:
                    if arrived:
                        outputs = node._apply(grads, create_graph)
                    else:
                        node._check_saved()
                        outputs = [None] * len(node._next_nodes)
                else:  # hooks (a leaf's live on the leaf), retain_grad, anomaly mode
                    outputs = self.call_watched(node, grads)
                owns = plain and node._new_arrays and not create_graph  # no hook has seen its results
                if not keep_graph:
                    node._release()
                for i, nxt in enumerate(node._next_nodes):  # hand each gradient on
                    if nxt is None or (wanted is not None and nxt not in wanted):
                        continue
                    g = outputs[i]
                    if g is not None:
                        slot = node._next_nrs[i] if node._next_nrs else 0
                        metadata = nxt._input_metadata
                        shape, dtype = metadata[slot]
                        array = g._data if create_graph and g.__class__ is Tensor else g
                        if array.__class__ is not ndarray or array.shape != shape or array.dtype != dtype:
                            g = fit(node, i, g, shape, dtype, create_graph)
                        buffer = buffers.get(nxt)
                        if nxt.__class__ is AccumulateGrad and not captures:  # backward: .grad may take one it owns
                            buffers[nxt] = leaf_buffer(buffer, g, owns and owned_gradient(g, i, grads, outputs))
                        else:
                            buffer = buffer or buffers.setdefault(nxt, [None] * len(metadata))
                            buffer[slot] = g if buffer[slot] is None else buffer[slot] + g
                    left = deps[nxt] - 1
                    if left:
                        deps[nxt] = left
                    elif self.quiet_leaves and nxt.__class__ is AccumulateGrad:  # a leaf's gradient is complete: it
                        nxt._apply(buffers.pop(nxt, None) or [None], False)  # would run next, no hook tells it is now
                    else:  # every gradient for `nxt` has arrived
                        del deps[nxt]
                        heappush(ready, (-nxt._sequence_number, nxt))
        finally:
            GRAD.mode, GRAD.wanted, anomaly_mode.RUNNING[0] = prev_mode, prev_wanted, prev_running

    def count_dependencies(self) -> None:
        """Step 1: how many edges lead into each node reachable from the roots (iteratively: a chain of a
        million nodes is fine). On the way: can anything tell in which order the nodes with the highest number
        run? If every one is a leaf's AccumulateGrad that nothing watches (no hook; no error node of PyTorch's, which
        shares the number), and neither create_graph nor anomaly mode is on, `run` writes each leaf's `.grad` as
        soon as its gradient is complete instead of queueing the node: PyTorch would run it next anyway, and which
        of several such leaves comes first is seen only by hooks (`quiet_leaves`)."""
        deps = self.dependencies
        roots = set(self.roots)
        stack = list(roots)
        order_seen = False
        while stack:
            for nxt in stack.pop()._next_nodes:
                if nxt is None:
                    continue
                if nxt in deps:
                    deps[nxt] += 1
                else:  # first reached: walk on from it (a root is walked from already)
                    deps[nxt] = 1
                    if nxt not in roots:
                        stack.append(nxt)
                    if nxt._sequence_number == ACCUMULATE_GRAD_SEQUENCE_NR and not order_seen:
                        order_seen = nxt.__class__ is not AccumulateGrad or watched(nxt) or \
                            nxt.variable._extras.post_hooks is not None
        self.quiet_leaves = not (order_seen or self.create_graph or anomaly_mode.ENABLED[0])

    def call_watched(self, node, grads: list) -> list:
        """Run a node that something watches, in PyTorch's order: the hooks on its output tensors (on a leaf,
        for an AccumulateGrad) and retain_grad, its prehooks, the node (checked for NaN in anomaly mode), its
        hooks. A hook may keep or return any array: `.grad` takes none of them without a copy (a plain list)."""
        grads = run_tensor_hooks(node, list(grads), self.create_graph)
        grads = run_prehooks(node, grads, self.create_graph)
        if all(g is None for g in grads):  # nothing to differentiate: PyTorch's node only unpacks what it saved
            node._check_saved()
            return [None] * len(node._next_nodes)
        outputs = anomaly_mode.run_checked(node, grads, self.create_graph)
        return run_posthooks(node, outputs, grads, self.create_graph)

    # -- autograd.grad and backward(inputs=...) ------------------------------------------------------------
    def select(self, inputs: tuple, accumulate: bool) -> None:
        """Step 1 when only some inputs are asked for: run only what leads to `inputs`. autograd.grad captures
        the gradient arriving for each input (its AccumulateGrad does not run); backward(inputs=) runs the
        inputs' own nodes, and nothing beyond."""
        targets = set()
        for k, t in enumerate(inputs):
            if accumulate:  # (autograd.grad has checked its inputs)
                check_usable(t)
                t.retain_grad()  # as PyTorch, reachable or not (a no-op on a leaf; raises if t needs no grad)
            node, slot = (t._grad_fn, t._output_nr) if t._grad_fn is not None else (_existing_accumulator(t), 0)
            if node is None:
                continue  # a leaf no graph has used
            if accumulate:
                targets.add(node)
            else:
                self.captures.setdefault(node, []).append((slot, k))
        self.captured = [None] * len(inputs)
        self.count_dependencies_to(targets)

    def count_dependencies_to(self, targets: set) -> None:
        """`count_dependencies`, and in the same walk the nodes that must run (`needed`: those from which a
        target or a captured node can be reached, the targets included, captured nodes only when something
        beyond them must run) and those whose gradients are wanted (`wanted`: needed or captured). The walk
        is depth-first: a node goes back on the stack under a marker, above it the nodes it leads to, so it is
        finished after all of them and whether it leads to a wanted node is known then (PyTorch's
        compute_dependencies and init_to_execute, in one walk; no object is made per node)."""
        deps, captures, needed, wanted = self.dependencies, self.captures, set(), set()
        stack, entered = list(self.roots), set()
        while stack:
            node = stack.pop()
            if node is _FINISH:  # every node it leads to is finished
                node = stack.pop()
                if node in targets or not wanted.isdisjoint(node._next_nodes):
                    needed.add(node)
                    wanted.add(node)
                elif node in captures:
                    wanted.add(node)
            elif node not in entered:
                entered.add(node)
                stack += (node, _FINISH)
                for nxt in node._next_nodes:
                    if nxt is not None:
                        deps[nxt] = deps.get(nxt, 0) + 1
                        if nxt not in entered:
                            stack.append(nxt)
        self.needed, self.wanted = needed, wanted

    def capture(self, node, grads: list) -> bool:
        """Take the gradients autograd.grad asked for; return whether the node itself must run."""
        needed = node in self.needed
        if not needed and watched(node):  # PyTorch runs the tensor hooks here: a leaf's shape what is captured
            grads = run_tensor_hooks(node, grads, self.create_graph)
        for slot, k in self.captures.get(node, ()):
            self.captured[k] = grads[slot]
        return needed

    def captured_grads(self, allow_unused: bool) -> tuple:
        """autograd.grad's result, with PyTorch's error for an input the outputs do not depend on."""
        result = []
        for k, g in enumerate(self.captured):
            if g is None and not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {k} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior.")
            result.append(g if g is None or isinstance(g, Tensor) else make(plain(g)))
        return tuple(result)


# -- which gradients the engine owns --------------------------------------------------------------------------
def owned_gradient(g, i: int, grads: list, outputs: list) -> bool:
    """Whether `g`, the gradient for input `i` of a formula node (`_new_arrays`) that ran on the engine's plain
    path, is an array this backward owns: one `fit` made (summed back or cast), or a new array the formula made
    (not a view of a gradient or a saved value), not one of the gradients the node received (a formula may
    pass `grad` on), and sent to one input only (`a + b` sends one array to both)."""
    if g is not outputs[i]:
        return True
    if g.__class__ is not ndarray or g.base is not None:
        return False
    for h in grads:
        if h is g:
            return False
    sent = 0
    for o in outputs:
        sent += o is g
    return sent == 1


def leaf_buffer(buffer, g, owned: bool) -> list:
    """A leaf's AccumulateGrad buffer once `g` has arrived: an OwnedGrad (taken by `.grad` without a copy) when
    the engine owns the array in it: `g` itself, or a sum the engine made."""
    if buffer is not None:
        return OwnedGrad((buffer[0] + g,))
    return OwnedGrad((g,)) if owned else [g]


_FINISH = object()  # count_dependencies_to's marker: the node below it is finished once the walk comes back to it


def _existing_accumulator(leaf):
    extras = leaf._extras
    ref = extras.accumulator if extras is not None else None
    return ref() if ref is not None else None


# -- hooks around a node --------------------------------------------------------------------------------
def watched(node) -> bool:
    """Whether something watches the node: hooks, retain_grad (kept in its `_extras`), or, on an AccumulateGrad,
    hooks on its leaf."""
    return node._extras is not None or (node.__class__ is AccumulateGrad and node.variable._extras.hooks is not None)


def run_tensor_hooks(node, grads: list, create_graph: bool) -> list:
    """Hooks registered on the node's output tensors (`t.register_hook`; a leaf's on its AccumulateGrad),
    then retain_grad, which sees what every hook returned."""
    for slot, g in enumerate(grads):
        hooks = node._tensor_hooks(slot)
        for fn in list(hooks.values()) if hooks else ():  # PyTorch calls them with None for a missing gradient
            gt = _as_tensor(g)
            new = fn(gt)
            if new is not None:
                if gt is not None and tuple(new.shape) != tuple(gt.shape):
                    raise RuntimeError(f"hook '{getattr(fn, '__name__', fn)}' has changed the size of value")
                g = new if create_graph else new._data
        grads[slot] = g
        retained = node._retained(slot) if g is not None else None
        if retained is not None:
            accumulate_nonleaf(retained, g, create_graph)
    return grads


def run_prehooks(node, grads: list, create_graph: bool) -> list:
    """`node.register_prehook(fn)`: fn(grad_outputs) may return replacements."""
    hooks = node._extras and node._extras.get("prehooks")
    for fn in list(hooks.values()) if hooks else ():
        new = fn(tuple(_as_tensor(g) for g in grads))
        if new is not None:
            grads = [_from_hook(g, create_graph) for g in new]
    return grads


def run_posthooks(node, outputs: list, grads: list, create_graph: bool) -> list:
    """`node.register_hook(fn)`: fn(grad_inputs, grad_outputs) may return replacements for grad_inputs."""
    hooks = node._extras and node._extras.get("hooks")
    for fn in list(hooks.values()) if hooks else ():
        new = fn(tuple(_as_tensor(g) for g in outputs), tuple(_as_tensor(g) for g in grads))
        if new is not None:
            outputs = [_from_hook(g, create_graph) for g in new]
    return outputs


def accumulate_nonleaf(t: Tensor, g, create_graph: bool) -> None:
    """`.grad` of a non-leaf that retains it (or is an input of backward(inputs=)): a copy, summed across calls."""
    if create_graph:
        t._grad = g if t._grad is None else t._grad + g
        return
    arr = g._data if isinstance(g, Tensor) else g
    t._grad = make(np.array(arr, copy=True)) if t._grad is None else make(t._grad._data + arr)


def _as_tensor(g):
    if g is None or isinstance(g, Tensor):
        return g
    return make(np.asarray(g))


def _from_hook(g, create_graph: bool):
    return g if g is None or create_graph else g._data


# -- fitting a gradient to the slot it goes to ---------------------------------------------------------------
def fit(node, i: int, g, shape: tuple, dtype, create_graph: bool):
    """The gradient `node` computed for its input `i`, made to fit the slot it goes to (PyTorch's
    validate_outputs): a Tensor under create_graph, a broadcast gradient summed back to the input's shape,
    the dtype cast."""
    if not create_graph and isinstance(g, ndarray):  # a plain backward's array (an efficient zero too): summed, cast
        if g.shape != shape:
            g = sum_to(node, i, g, shape)
        return g if g.dtype == dtype else g.astype(dtype)
    if create_graph and not isinstance(g, Tensor):
        g = make(np.asarray(g))
    elif not create_graph and g.__class__ is not ndarray:
        g = np.asarray(g)
    array = g._data if create_graph else g
    if array.shape != shape:
        g = sum_to(node, i, g, shape)
    if array.dtype != dtype:
        g = g.to(_dtypes.FROM_NP[dtype]) if create_graph else g.astype(dtype)
    return g


def sum_to(node, i: int, g, shape: tuple):
    """Sum the gradient `node` computed for its input `i` back to `shape`, with PyTorch's error when it cannot."""
    gshape = tuple(g.shape)
    summed = _SUMMED.get((gshape, shape))
    if summed is None:
        if not expandable(shape, gshape):
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - got "
                               f"{list(gshape)} but expected shape compatible with {list(shape)}")
        if len(_SUMMED) > 1024:
            _SUMMED.clear()
        dims = summed_dims(shape, gshape)
        summed = _SUMMED[(gshape, shape)] = dims, bool(shape) and dims == tuple(range(len(gshape) - len(shape)))
    dims, leading = summed
    if not isinstance(g, ndarray):
        return sum_back(g, shape, dims)
    if leading:  # only dims in front were added (a bias's gradient): their sum has the input's shape already
        return np.add.reduce(g, dims)
    return np.add.reduce(g, dims, keepdims=True).reshape(shape)


_SUMMED: dict = {}  # (gradient shape, input shape) -> (the dims sum_to adds up, are they all in front?): a network
# has few of these


# -- the entry point -----------------------------------------------------------------------------------------
def run_backward(roots: list, grads: list, keep_graph: bool, create_graph: bool, inputs: tuple | None = None,
                 accumulate: bool = True, allow_unused: bool = False):
    """Run backward from `roots` (tensors) seeded with `grads` (arrays, or Tensors if create_graph). With
    `inputs`, only what leads to them runs; `accumulate=False` (autograd.grad) returns their gradients."""
    task = GraphTask(roots, grads, keep_graph, create_graph)
    if inputs is None:
        task.count_dependencies()
    else:
        task.select(inputs, accumulate)
    task.run()
    return None if accumulate else task.captured_grads(allow_unused)


def warn_create_graph_backward() -> None:
    warn_once(  # PyTorch gives it once per process (TORCH_WARN_ONCE)
        "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
        "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to "
        "avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters "
        "to None after use to break the cycle and avoid the leak.")
