"""Walk an autograd graph from its roots into a plain graph model (iteratively).

The walk is breadth-first over ``next_functions`` with an explicit queue, so depth never
matters (torchviz and micrograd recurse and fail near 1,000 levels). It records each node
once, in traversal order, with its outgoing edges ``(child index or None, input_nr)``.

It stops after ``WALK_LIMIT`` nodes, and not only for speed: PyTorch 2.13 keeps the Python
wrapper of every node that Python has touched (through ``next_functions``) alive for as
long as the node, and frees a chain of such nodes recursively in C++. A chain of ~45,000
touched nodes overflows the 8 MB C stack when the user later drops the graph (``del
loss``), so viz never touches more than a few thousand nodes past the limit's frontier.
"""

from __future__ import annotations

import contextlib
import gc
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from . import probe

WALK_LIMIT = 10_000  # nodes; see the module docstring before raising it


@dataclass
class Root:
    """One argument of draw(): a tensor (maybe a leaf, maybe without grad_fn) or a node."""

    obj: Any
    tensor: Any  # the tensor, or None when a node was given
    fn_index: int | None  # index of its grad_fn in Walk.nodes
    slot: int  # output_nr: which input slot of grad_fn the root's gradient enters


@dataclass
class RawNode:
    index: int
    fn: Any
    name: str
    leaf: Any = None  # the tensor, for AccumulateGrad nodes
    edges: list[tuple[int | None, int]] = field(default_factory=list)  # (child, input_nr)
    unwalked: int = 0  # children left out by the walk limit

    @property
    def is_accumulate(self) -> bool:
        return self.leaf is not None


@dataclass
class Walk:
    roots: list[Root]
    nodes: list[RawNode]
    truncated: bool = False

    def release(self) -> None:
        """Drop our references to the nodes, roots first.

        PyTorch frees a graph whose last reference is a node's Python wrapper recursively
        in C++: dropping 100,000 wrappers leaf-first (as a list is freed) overflows the C
        stack. Released in walk order, each node's children still hold a wrapper when it
        goes, so every free stays shallow.
        """
        for node in self.nodes:
            node.fn = None
        for root in self.roots:
            root.obj = None

    def __del__(self) -> None:
        self.release()

    def parents(self) -> list[list[int]]:
        """For each node, the indices of nodes with an edge into it (with repeats)."""
        out: list[list[int]] = [[] for _ in self.nodes]
        for node in self.nodes:
            for child, _ in node.edges:
                if child is not None:
                    out[child].append(node.index)
        return out


def flatten_roots(roots: tuple) -> list[Any]:
    """draw(y), draw(y, z), draw([y, z]) and draw(y.grad_fn) all work."""
    out: list[Any] = []
    for root in roots:
        if isinstance(root, (list, tuple)) and not probe.is_tensor(root):
            out.extend(flatten_roots(tuple(root)))
        elif probe.is_node(root) or probe.is_tensor(root):
            out.append(root)
        else:
            raise TypeError(f"viz: expected a tensor or a grad_fn node, got {type(root).__name__}")
    if not out:
        raise TypeError("viz: give at least one tensor or grad_fn to draw")
    return out


def walk(roots: tuple, limit: int = WALK_LIMIT) -> Walk:
    """Collect every node reachable from the roots, breadth-first, in a stable order.

    The cyclic garbage collector is paused meanwhile: the walk only allocates, and on big
    graphs the collector's repeated passes would otherwise cost more than the walk.
    """
    with paused_gc():
        return _walk(roots, limit)


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector (viz only allocates; nothing it makes is cyclic)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _walk(roots: tuple, limit: int) -> Walk:
    index: dict[int, int] = {}
    nodes: list[RawNode] = []
    queue: deque[int] = deque()

    def visit(fn: Any) -> int | None:
        key = id(fn)
        if key in index:
            return index[key]
        if len(nodes) >= limit:
            return None
        idx = len(nodes)
        index[key] = idx
        nodes.append(RawNode(idx, fn, probe.node_name(fn), leaf=probe.leaf_of(fn)))
        queue.append(idx)
        return idx

    parsed: list[Root] = []
    for obj in flatten_roots(roots):
        if probe.is_node(obj):
            parsed.append(Root(obj, None, visit(obj), 0))
            continue
        fn = getattr(obj, "grad_fn", None)
        slot = int(getattr(obj, "output_nr", 0) or 0)
        parsed.append(Root(obj, obj, visit(fn) if fn is not None else None, slot))

    truncated = False
    while queue:
        node = nodes[queue.popleft()]
        for pair in probe.next_functions(node.fn):
            try:
                child, nr = pair
            except (TypeError, ValueError):
                continue
            if child is None:
                node.edges.append((None, int(nr or 0)))
                continue
            child_idx = visit(child)
            if child_idx is None:
                node.unwalked += 1
                truncated = True
            else:
                node.edges.append((child_idx, int(nr or 0)))
    return Walk(parsed, nodes, truncated)
