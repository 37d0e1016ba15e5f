"""What the comparer sees of a library's state: plain NumPy/Python records, one per variable.

Observing goes only through the public API both libraries share (``detach().numpy()``, ``dtype``,
``shape``, ``requires_grad``, ``is_leaf``, ``retains_grad``, ``_version``, ``grad_fn.name()``,
``next_functions``, ``.grad``), and never reads what would change the program: ``.grad`` is read
only where PyTorch reads it without a warning (leaves, and tensors that retain their gradient).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_TRIGGERED = re.compile(r"\s*\(Triggered internally at [^\n]*?\.\)")


def normalise(text: str, prefix: str) -> str:
    """A message as the comparer sees it: PyTorch's ``torch.``/``torch::`` read ``minigrad.``/``minigrad::``.

    docs/differences.md, "Names": printed dtypes, type names and C++ node names say
    ``minigrad.``; messages that name a PyTorch function name minigrad's.
    """
    text = _TRIGGERED.sub("", text)
    text = _ADDRESS.sub("0x?", text)
    if prefix != "minigrad":
        text = re.sub(rf"(?<![#/\w]){re.escape(prefix)}(?=\.|::)", "minigrad", text)
    return text


def first_line(message: str) -> str:
    """The first line of an exception message (README, "Errors": a final ``hint:`` line may follow)."""
    return message.split("\n", 1)[0].rstrip()


class NotRead:
    """Marks a ``.grad`` the observer did not read (non-leaf without retain_grad)."""

    def __repr__(self) -> str:
        return "<not read>"


NOT_READ = NotRead()


@dataclasses.dataclass
class TensorObs:
    dtype: str
    shape: tuple[int, ...]
    values: np.ndarray
    requires_grad: bool
    is_leaf: bool
    retains_grad: bool
    version: int
    node: str | None
    grad: Any = NOT_READ  # TensorObs, None, or NOT_READ


@dataclasses.dataclass
class PyObs:
    """A Python value (number, bool, string); ``type`` is its type's name."""

    type: str
    value: Any


@dataclasses.dataclass
class SeqObs:
    items: list


@dataclasses.dataclass
class OtherObs:
    """An object of a type the comparer does not look into (hook handles, modules)."""

    kind: str


def observe(x: Any, lib, prefix: str, *, depth: int = 0) -> Any:
    """Record ``x`` (a tensor, a tuple of them, a number ...) as NumPy/Python data."""
    if isinstance(x, lib.Tensor):
        return _tensor(x, prefix, read_grad=True)
    if x is None:
        return None
    if isinstance(x, (bool, int, float, str)):
        return PyObs(type(x).__name__, x)
    if isinstance(x, (tuple, list)) and depth < 3:
        if type(x).__name__ == "Size" or (isinstance(x, tuple) and all(isinstance(i, int) for i in x) and x):
            return PyObs("size", tuple(x))
        return SeqObs([observe(i, lib, prefix, depth=depth + 1) for i in x])
    return OtherObs("object")


def to_numpy(t) -> np.ndarray:
    """A tensor's values as a new NumPy array (PyTorch's internal zero tensors need ``force=True``)."""
    try:
        return np.array(t.detach().numpy(), copy=True)
    except RuntimeError:
        return np.array(t.detach().numpy(force=True), copy=True)


def _tensor(t, prefix: str, *, read_grad: bool) -> TensorObs:
    values = to_numpy(t)
    node = t.grad_fn
    grad: Any = NOT_READ
    if read_grad and (t.is_leaf or t.retains_grad):
        g = t.grad
        grad = None if g is None else _tensor(g, prefix, read_grad=False)
    return TensorObs(
        dtype=str(t.dtype).rsplit(".", 1)[-1],
        shape=tuple(int(n) for n in t.shape),
        values=values,
        requires_grad=bool(t.requires_grad),
        is_leaf=bool(t.is_leaf),
        retains_grad=bool(t.retains_grad),
        version=int(t._version),
        node=None if node is None else normalise(node.name(), prefix),
        grad=grad,
    )


# --------------------------------------------------------------------------------------------------
# The graph behind the program's tensors, read once at the end


@dataclasses.dataclass
class GraphObs:
    """Every node reachable from the roots: ``nodes[id] = (name, edges, leaf label)``; ``roots[label] = id``."""

    nodes: dict[int, tuple[str, tuple[tuple[int | None, int], ...], str | None]]
    roots: dict[str, int]
    second_order: frozenset = frozenset()  # the roots computed from create_graph results


def observe_graph(roots_from: list[tuple[str, Any]], named: list[tuple[str, Any]], lib, prefix: str,
                  second_order: frozenset = frozenset()) -> GraphObs:
    """Walk ``next_functions`` from the ``roots_from`` tensors; node ids follow the walk (no addresses).
    ``second_order`` names the roots that a create_graph pass made (or that were computed from its results).

    A leaf's AccumulateGrad is labelled with the name of its ``variable`` among ``named``.
    """
    labels: dict[int, str] = {}
    for label, t in named:
        labels.setdefault(id(t), label)
    ids: dict[int, int] = {}
    nodes: dict[int, tuple] = {}
    roots: dict[str, int] = {}

    def node_id(node) -> int:
        key = id(node)
        if key not in ids:
            ids[key] = len(ids)
            pending.append(node)
        return ids[key]

    pending: list = []
    for label, t in roots_from:
        if t.grad_fn is not None:
            roots[label] = node_id(t.grad_fn)
    while pending:
        node = pending.pop(0)
        edges = tuple((None if nxt is None else node_id(nxt), int(nr)) for nxt, nr in node.next_functions)
        variable = getattr(node, "variable", None)
        leaf = None
        if variable is not None:
            leaf = labels.get(id(variable), "<unnamed leaf>")
        nodes[ids[id(node)]] = (normalise(node.name(), prefix), edges, leaf)
    return GraphObs(nodes, roots, frozenset(label for label in roots if label.split("[")[0] in second_order))
