"""The drawable graph: what a picture (dot.py) and its text twin (summary.py) both show.

``build(walk, ...)`` turns a walked autograd graph into ``Model`` nodes and edges for one
of two views:

- ``backward``: the graph PyTorch builds. grad_fn nodes, AccumulateGrad nodes carrying the
  leaf they feed, the output tensors on top, ``(None, 0)`` inputs as faint "None" nodes.
  Edges point the way gradients flow and carry the gradient's shape and the input slot.
- ``values``: the graph a learner writes. Tensors (data, grad) and the operations between
  them, edges pointing the way data flows, as micrograd draws it.

Big graphs are summarised before Graphviz sees them (past ``max_nodes`` the middle is
collapsed into "hidden" nodes that say how many nodes they stand for), and hubs and long
edges are split into small references: see viz.shrink for why and how.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from . import probe
from .shrink import (
    GHOST_THRESHOLD,
    HUB_THRESHOLD,
    SPAN_BUDGET,
    choose_kept,
    cut_long_edges,
    ghost_hubs,
    hidden_groups,
)
from .walk import WALK_LIMIT, Walk


def module_types(modules: Any) -> dict[str, str]:
    """Qualified name -> description ('Linear(8→3)') of a model's submodules, through its public
    ``named_modules()``; {} for anything else."""
    try:
        named = list(modules.named_modules())
    except Exception:
        return {}
    return {str(qual): describe_module(m) for qual, m in named if qual}


def describe_module(module: Any) -> str:
    """'Linear(8→3)', 'Conv2d(3→16)', 'Embedding(100→32)', else the class name."""
    name = type(module).__name__
    for a, b in (("in_features", "out_features"), ("in_channels", "out_channels"),
                 ("num_embeddings", "embedding_dim")):
        left, right = getattr(module, a, None), getattr(module, b, None)
        if isinstance(left, int) and isinstance(right, int):
            return f"{name}({left}→{right})"
    return name

# The names viz.trace imported before summarising moved to viz.shrink.
_choose_kept, _hidden_groups = choose_kept, hidden_groups
__all__ = ["GHOST_THRESHOLD", "HUB_THRESHOLD", "SPAN_BUDGET", "Model", "VEdge", "VNode", "build", "op_symbol"]

DEFAULT_MAX_NODES = 250
MAX_NODES_LIMIT = 1_500  # a larger max_nodes is clamped: dot would take minutes
VIEWS = ("backward", "values")

_OP_SYMBOLS = {
    "Add": "+", "Sub": "-", "Rsub": "-", "Mul": "*", "Div": "/", "Pow": "**",
    "Mm": "@", "Mv": "@", "Dot": "@", "Bmm": "@", "Matmul": "@", "Neg": "neg",
}
_BACKWARD_SUFFIX = re.compile(r"Backwards?\d*$")


@dataclass
class VNode:
    key: str
    role: str  # output | fn | leaf | none | hidden | tensor | op | unwalked
    title: str
    caption: str | None = None  # small text above the title (e.g. "AccumulateGrad")
    subtitle: str | None = None  # shape and dtype, or the grad_fn behind an op
    shape: tuple[int, ...] | None = None
    rows: list[tuple[str, str]] = field(default_factory=list)  # (kind, text): saved, attr, note
    badges: list[str] = field(default_factory=list)
    data: str | None = None
    grad: str | None = None
    tangent: str | None = None  # a dual tensor's tangent (forward_ad), drawn beside its value
    module: str | None = None
    module_type: str | None = None  # what the innermost module is ('Linear(8→3)'), when known
    ghost: bool = False
    hidden: int = 0  # raw nodes this node stands for (hidden groups)
    ghost_of: str | None = None  # for a reference to a hub drawn elsewhere
    fill: str | None = None  # overrides the role's fill (viz.compare and gradcheck_graph colour verdicts)
    id: str = ""
    source: str | None = None  # draw(source=True): the line of code that made the node (viz.source)
    layer: int = 1  # layers=True: 2 for a node that backward made under create_graph (viz.layers)
    parent: str | None = None  # ... and the drawn id of the first-order node whose rule made it


@dataclass
class VEdge:
    src: str
    dst: str
    shape: tuple[int, ...] | None = None
    slot: int | None = None
    faint: bool = False
    count: int = 1  # edges merged into this one (only around hidden groups)
    name: str | None = None  # the input of the node the edge leaves that it feeds ('self', 'other')
    color: str | None = None  # overrides the edge's colour (viz.layers: the link to a parent node)


@dataclass
class Model:
    view: str
    nodes: list[VNode]
    edges: list[VEdge]
    hidden: int = 0
    truncated: bool = False
    show_values: bool = False
    show_grads: bool = False
    crossings: int = 0  # ranks crossed by long edges (after cutting): dot's hidden workload
    types: dict[str, str] = field(default_factory=dict)  # module scope -> 'Linear(8→3)' (from params=model)

    def node(self, key: str) -> VNode:
        return next(n for n in self.nodes if n.key == key)


def op_symbol(name: str) -> str:
    """'MulBackward0' -> '*', 'TanhBackward0' -> 'tanh', 'FooBackward' -> 'Foo'."""
    base = name.rsplit("::", 1)[-1]
    stem = _BACKWARD_SUFFIX.sub("", base) or base
    if stem in _OP_SYMBOLS:
        return _OP_SYMBOLS[stem]
    return stem.lower() if stem.isalnum() and stem[:1].isupper() and stem[1:].islower() else stem


class Namer:
    """Names tensors from ``params`` (a dict or (name, tensor) pairs, e.g. named_parameters())."""

    def __init__(self, params: Any) -> None:
        self._by_id: dict[int, str] = {}
        self._by_storage: dict[tuple, str] = {}
        self._keep: list[Any] = []  # keep the tensors alive so their ids stay theirs
        if params is None:
            return
        if hasattr(params, "named_parameters") and not hasattr(params, "items"):  # a model: params=model
            params = params.named_parameters()
        items = params.items() if hasattr(params, "items") else params
        for name, tensor in items:
            if not probe.is_tensor(tensor):
                continue
            self._keep.append(tensor)
            self._by_id.setdefault(id(tensor), str(name))
            key = self._storage_key(tensor)
            if key is not None:
                self._by_storage.setdefault(key, str(name))

    @staticmethod
    def _storage_key(tensor: Any) -> tuple | None:
        try:
            return (tensor.data_ptr(), probe.shape_of(tensor), str(tensor.dtype))
        except Exception:
            return None

    def __call__(self, tensor: Any) -> str | None:
        if tensor is None:
            return None
        name = self._by_id.get(id(tensor))
        if name is None:
            key = self._storage_key(tensor)
            name = self._by_storage.get(key) if key is not None else None
        return name


def build(
    walk: Walk,
    view: str = "backward",
    params: Any = None,
    show_saved: bool = False,
    show_attrs: bool = False,
    show_values: bool = False,
    show_grads: bool = False,
    max_nodes: int | None = None,
    limit: int | None = None,
    source: bool = False,
) -> Model:
    """Turn a walked graph into a drawable model for one view, summarised to ``max_nodes`` (at most
    ``limit``, ``MAX_NODES_LIMIT`` by default: a picture that big already takes dot a while; a
    model that will be folded by module may keep every node)."""
    if view not in VIEWS:
        raise ValueError(f"viz: view must be one of {VIEWS}, got {view!r}")
    cap = MAX_NODES_LIMIT if limit is None else int(limit)
    budget = DEFAULT_MAX_NODES if max_nodes is None else min(max(int(max_nodes), 1), cap)
    if view == "values":
        budget = max(budget // 2, 1)  # each op also draws the tensor it makes
    groups = hidden_groups(walk, choose_kept(walk, budget))
    builder = _Builder(walk, groups, Namer(params), show_saved, show_attrs)
    if source:
        from .source import lines_by_node

        builder.sources = lines_by_node(walk)
    if view == "backward":
        builder.backward()
    else:
        builder.values()
    model = builder.finish(view)
    model.types = module_types(params) if hasattr(params, "named_modules") else {}
    model.show_values = show_values or view == "values"
    model.show_grads = show_grads or view == "values"
    return model


# -- building ----------------------------------------------------------------------------


class _Builder:
    def __init__(self, walk: Walk, groups: list[int | None], name: Namer, show_saved: bool,
                 show_attrs: bool) -> None:
        self.walk = walk
        self.groups = groups
        self.name = name
        self.show_saved = show_saved
        self.show_attrs = show_attrs
        self.nodes: dict[str, VNode] = {}
        self.edges: list[VEdge] = []
        self.merged: dict[tuple[str, str], VEdge] = {}
        self.group_members: list[list[int]] = []
        for i, g in enumerate(groups):
            if g is not None:
                while len(self.group_members) <= g:
                    self.group_members.append([])
                self.group_members[g].append(i)
        self.root_of: dict[tuple[int, int], Any] = {}
        for root in walk.roots:
            if root.tensor is not None and root.fn_index is not None:
                self.root_of.setdefault((root.fn_index, root.slot), root.tensor)
        self._multi_root = len(walk.roots) > 1
        self.sources: list | None = None  # viz.source.SourceLine per raw node, when asked

    # keys ---------------------------------------------------------------------------------
    def owner(self, raw: int, key: str) -> str:
        """The key to draw for something belonging to raw node ``raw`` (its group if hidden)."""
        g = self.groups[raw]
        if g is None:
            return key
        gkey = f"hidden:{g}"
        if gkey not in self.nodes:
            self.add(self._hidden_node(gkey, g))
        return gkey

    def add(self, node: VNode) -> VNode:
        self.nodes.setdefault(node.key, node)
        return self.nodes[node.key]

    def edge(self, src: str, dst: str, **kw: Any) -> None:
        if src == dst:
            return
        if src.startswith("hidden:") or dst.startswith("hidden:"):
            old = self.merged.get((src, dst))
            if old is not None:
                old.count += 1
                if (old.shape, old.slot) != (kw.get("shape"), kw.get("slot")):
                    old.shape = old.slot = None
                return
            edge = VEdge(src, dst, **kw)
            self.merged[(src, dst)] = edge
            self.edges.append(edge)
            return
        self.edges.append(VEdge(src, dst, **kw))

    # node makers --------------------------------------------------------------------------
    def _hidden_node(self, key: str, g: int) -> VNode:
        members = self.group_members[g]
        names = Counter(self.walk.nodes[i].name for i in members)
        common = sorted(names.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        rows = [("note", f"{name} ×{count:,}") for name, count in common]
        if len(names) > 3:
            rows.append(("note", f"… {len(names) - 3} more kinds"))
        rows.append(("note", "draw(..., max_nodes=N) shows more"))
        return VNode(key, "hidden", f"⋯ {len(members):,} nodes hidden", rows=rows, hidden=len(members))

    def _tensor_bits(self, node: VNode, tensor: Any) -> VNode:
        """Shape, dtype, data, grad and badges of a tensor we can reach."""
        shape = probe.shape_of(tensor)
        node.shape = shape
        dtype = probe.dtype_name(getattr(tensor, "dtype", None))
        node.subtitle = " ".join(x for x in (probe.format_shape(shape), dtype) if x)
        node.data = probe.describe_values(tensor)
        node.grad = probe.describe_values(probe.grad_of(tensor))
        node.tangent = probe.describe_values(probe.tangent_of(tensor))  # a dual tensor (forward mode)
        if probe.retains_grad(tensor):
            node.badges.append("retain_grad")
        hooks = probe.tensor_hooks(tensor)
        if hooks:
            node.badges.append(f"tensor hooks ×{hooks}")
        post = probe.post_accumulate_hooks(tensor)
        if post:
            node.badges.append(f"post-accumulate hooks ×{post}")
        return node

    def _fn_extras(self, node: VNode, raw: int) -> None:
        fn = self.walk.nodes[raw].fn
        node.module = probe.module_scope(fn)
        kind = probe.metadata(fn).get("module_type")
        node.module_type = str(kind) if kind else None
        line = self.sources[raw] if self.sources is not None else None
        if line is not None:
            node.source = str(line)
            node.rows.append(("source", node.source))
        hooks, prehooks = probe.node_hooks(fn)
        if prehooks:
            node.badges.append(f"prehooks ×{prehooks}")
        if hooks:
            node.badges.append(f"hooks ×{hooks}")
        if not (self.show_saved or self.show_attrs):
            return
        tensors, attrs = probe.saved_values(fn)
        if self.show_saved:
            for name, value in tensors:
                node.rows.append(("saved", f"{name} = {self._saved_text(value)}"))
        if self.show_attrs:
            for name, value in attrs:
                node.rows.append(("attr", f"{name} = {probe.format_value(value)}"))

    def _saved_text(self, value: Any) -> str:
        named = self.name(value) if probe.is_tensor(value) else None
        text = probe.format_value(value)
        return f"{named} {probe.format_shape(probe.shape_of(value))}" if named else text

    def _leaf_node(self, key: str, tensor: Any, raw: int | None, caption: str = "AccumulateGrad") -> VNode:
        node = VNode(key, "leaf", self.name(tensor) or "leaf")
        self._tensor_bits(node, tensor)
        if raw is not None:
            node.caption = caption
            self._fn_extras(node, raw)
        return node

    def _output_title(self, k: int, tensor: Any) -> str:
        return self.name(tensor) or (f"output {k}" if self._multi_root else "output")

    def _edge_shape(self, child: int, nr: int) -> tuple[int, ...] | None:
        raw = self.walk.nodes[child]
        slots = probe.input_slots(raw.fn)
        if slots is not None and 0 <= nr < len(slots):
            return slots[nr][0]
        if raw.leaf is not None:
            return probe.shape_of(raw.leaf)
        root = self.root_of.get((child, nr))
        return probe.shape_of(root) if root is not None else None

    @staticmethod
    def _input_names(raw: Any) -> tuple[str, ...] | None:
        """The node's input names, one per walked edge (None when unknown or when the walk left
        some inputs out, so that no edge is given another input's name)."""
        if raw.leaf is not None or raw.unwalked:
            return None
        names = probe.input_names(raw.fn)
        return names if names is not None and len(names) == len(raw.edges) else None

    # views --------------------------------------------------------------------------------
    def backward(self) -> None:
        for k, root in enumerate(self.walk.roots):
            if root.tensor is None:
                continue
            key = f"out:{k}"
            if root.fn_index is None:  # a leaf, or a tensor outside any graph
                node = self.add(self._leaf_node(key, root.tensor, None))
                if not getattr(root.tensor, "requires_grad", False):
                    node.role = "output"
                    node.title = self._output_title(k, root.tensor)
                    node.rows.append(("note", "requires_grad=False: no graph"))
                continue
            node = self.add(self._tensor_bits(VNode(key, "output", self._output_title(k, root.tensor)),
                                              root.tensor))
            self.edge(key, self.owner(root.fn_index, f"fn:{root.fn_index}"),
                      shape=node.shape, slot=root.slot)
        for raw in self.walk.nodes:
            key = self.owner(raw.index, f"fn:{raw.index}")
            if key.startswith("hidden:"):
                self._hidden_edges(raw, key)
                continue
            if raw.is_accumulate:
                self.add(self._leaf_node(key, raw.leaf, raw.index))
            else:
                node = self.add(VNode(key, "fn", raw.name))
                out = probe.output_tensor(raw.fn)
                if out is not None:  # minigrad: the tensor this node made, for badges and values
                    self._tensor_bits(node, out)
                    node.subtitle = None
                self._fn_extras(node, raw.index)
            names = self._input_names(raw)
            for j, (child, nr) in enumerate(raw.edges):
                if child is None:
                    none = self.add(VNode(f"none:{raw.index}:{j}", "none", "None"))
                    self.edge(key, none.key, slot=nr, faint=True, name=names[j] if names else None)
                    continue
                self.edge(key, self.owner(child, f"fn:{child}"), shape=self._edge_shape(child, nr), slot=nr,
                          name=names[j] if names else None)
            self._unwalked(raw, key)

    def _hidden_edges(self, raw: Any, key: str) -> None:
        for child, nr in raw.edges:
            if child is None or self.groups[child] == self.groups[raw.index]:
                continue
            shape = self._edge_shape(child, nr) if self.groups[child] is None else None
            self.edge(key, self.owner(child, f"fn:{child}"), shape=shape, slot=nr)
        self._unwalked(raw, key)

    def _unwalked(self, raw: Any, key: str) -> None:
        if raw.unwalked:
            node = self.add(VNode("unwalked", "unwalked", "⋯ graph continues",
                                  rows=[("note", f"viz walks at most {WALK_LIMIT:,} nodes")]))
            self.edge(key, node.key, faint=True)

    def values(self) -> None:
        used: dict[int, set[int]] = {}
        for raw in self.walk.nodes:
            for child, nr in raw.edges:
                if child is not None:
                    used.setdefault(child, set()).add(nr)
        for (fn_index, slot) in self.root_of:
            used.setdefault(fn_index, set()).add(slot)
        for root in self.walk.roots:
            if root.tensor is None and root.fn_index is not None:
                used.setdefault(root.fn_index, set()).add(0)
        for k, root in enumerate(self.walk.roots):
            if root.tensor is not None and root.fn_index is None:
                node = self.add(self._leaf_node(f"out:{k}", root.tensor, None))
                if not getattr(root.tensor, "requires_grad", False):
                    node.role = "output"
                    node.title = self._output_title(k, root.tensor)
            elif root.tensor is not None:
                self._value_key(root.fn_index, root.slot)
        for raw in self.walk.nodes:
            if raw.is_accumulate:
                self._value_key(raw.index, 0)
                continue
            for slot in sorted(used.get(raw.index, ())):
                self._value_key(raw.index, slot)
            op_key = self.owner(raw.index, f"op:{raw.index}")
            if not op_key.startswith("hidden:"):
                op = self.add(VNode(op_key, "op", op_symbol(raw.name), subtitle=raw.name))
                self._fn_extras(op, raw.index)
            for j, (child, nr) in enumerate(raw.edges):
                if child is None:
                    if not op_key.startswith("hidden:"):
                        const = self.add(VNode(f"none:{raw.index}:{j}", "none", "constant"))
                        self.edge(const.key, op_key, faint=True)
                    continue
                src = self._value_key(child, nr)
                self.edge(src, op_key)
            for slot in sorted(used.get(raw.index, ())):
                self.edge(op_key, self._value_key(raw.index, slot))
            self._unwalked(raw, op_key)

    def _value_key(self, raw_index: int, slot: int) -> str:
        """The tensor node for output ``slot`` of a raw node (a leaf for AccumulateGrad)."""
        raw = self.walk.nodes[raw_index]
        if raw.is_accumulate:
            key = self.owner(raw_index, f"fn:{raw_index}")
            if key not in self.nodes:
                self.add(self._leaf_node(key, raw.leaf, raw_index, caption="leaf"))
            return key
        key = self.owner(raw_index, f"t:{raw_index}:{slot}")
        if key in self.nodes:
            return key
        root = self.root_of.get((raw_index, slot))
        tensor = root if root is not None else probe.output_tensor(raw.fn, slot)
        if tensor is None and slot == 0:
            tensor = _saved_result(raw.fn)
        if root is not None:
            k = next(i for i, r in enumerate(self.walk.roots) if r.tensor is root)
            node = VNode(key, "output", self._output_title(k, root))
        else:
            node = VNode(key, "tensor", (self.name(tensor) if tensor is not None else None) or "")
        if tensor is not None:
            self._tensor_bits(node, tensor)
        else:
            slots = probe.input_slots(raw.fn)
            if slots is not None and 0 <= slot < len(slots):
                node.shape = slots[slot][0]
                node.subtitle = " ".join(x for x in (probe.format_shape(node.shape), slots[slot][1]) if x)
            node.rows.append(("note", "value not kept by autograd"))
        node.module = probe.module_scope(raw.fn)
        return self.add(node).key

    # finishing ----------------------------------------------------------------------------
    def finish(self, view: str) -> Model:
        nodes, edges = ghost_hubs(list(self.nodes.values()), self.edges, view)
        nodes, crossings = cut_long_edges(nodes, edges, view)
        ids = {}
        for i, node in enumerate(nodes):
            node.id = ids[node.key] = f"n{i}"
        for node in nodes:
            if node.ghost_of is not None:
                node.caption = f"same node as {ids[node.ghost_of]}"
        hidden = sum(n.hidden for n in nodes if n.role == "hidden")
        return Model(view, nodes, edges, hidden=hidden, truncated=self.walk.truncated, crossings=crossings)


def _saved_result(fn: Any) -> Any:
    """PyTorch keeps some outputs as ``_saved_result``: the only intermediate values it shows."""
    try:
        value = getattr(fn, "_saved_result", None)
    except Exception:
        return None
    return value if probe.is_tensor(value) else None
