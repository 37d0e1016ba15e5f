"""Folding a big model's graph by module: one box per module, "×N" for repeated blocks.

A node made inside an ``nn.Module`` carries the module's qualified name in its public
``metadata["module"]`` (minigrad tags its nodes; ``tag_modules(model)`` tags PyTorch's). Folding
is a transformation of a drawn ``Model``, so the same full picture can be folded again with other
modules opened (``expand=[...]``) without touching the autograd graph, whose saved values may be
freed by then:

- each module scope that is not expanded becomes one box, titled with its name and what it is
  (``2 · Linear(8→3)``) and listing how many nodes it holds; a leaf used only inside one module
  (its parameters) folds into it;
- consecutive sibling modules of one type whose folded contents match (the layers of a
  Transformer: ``layers.0`` ... ``layers.5``) fold into one box marked "×6";
- edges between boxes are merged, keeping their shape and input name when they agree.

``fold_of`` (full key -> folded key) lets viz.trace map each node that runs onto its box.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from . import probe
from .dot import scope_label
from .model import Model, VEdge, VNode, describe_module, module_types

__all__ = ["FOLDS", "Folded", "ModuleTags", "describe_module", "fold", "module_types", "scope_label", "tag_modules",
           "visible_scope"]

FOLDS = (None, "module")
_INDEXED = re.compile(r"^(.*?)(\d+)$")


@dataclass
class Folded:
    model: Model
    fold_of: dict[str, str]  # key in the full model -> key of the box it is drawn in (absent: itself)
    boxes: dict[str, list[str]]  # box key -> the module scopes it stands for


def _base(key: str) -> str:
    return key.split("#", 1)[0]


def _scopes(model: Model) -> dict[str, str | None]:
    """Base key -> module scope for every node: its own tag, else (leaves, constants, ghosts) the
    deepest scope shared by every node that uses it."""
    own = {_base(n.key): n.module for n in model.nodes if n.module}
    users: dict[str, set[str | None]] = {}
    for e in model.edges:
        src, dst = _base(e.src), _base(e.dst)
        if model.view == "backward":
            users.setdefault(dst, set()).add(own.get(src))
        else:
            users.setdefault(src, set()).add(own.get(dst))
    out: dict[str, str | None] = {}
    for node in model.nodes:
        key = _base(node.key)
        if key in own:
            out[key] = own[key]
        elif node.role in ("leaf", "none", "tensor") and users.get(key):
            out[key] = _common(users[key])
        else:
            out[key] = None
    return out


def _common(scopes: set[str | None]) -> str | None:
    if None in scopes or not scopes:
        return None
    parts = [s.split(".") for s in scopes]
    common = []
    for group in zip(*parts):
        if len(set(group)) != 1:
            break
        common.append(group[0])
    return ".".join(common) or None


def visible_scope(scope: str | None, expand: set[str]) -> str | None:
    """The outermost scope on the way to ``scope`` that is not expanded (None: show the node)."""
    if not scope:
        return None
    parts = scope.split(".")
    for i in range(1, len(parts) + 1):
        prefix = ".".join(parts[:i])
        if prefix not in expand:
            return prefix
    return None


def fold(model: Model, fold: str | None = "module", expand: Iterable[str] = (),
         types: dict[str, str] | None = None) -> Folded:
    """``model`` with each module that ``expand`` does not open drawn as one box."""
    if fold not in FOLDS:
        raise ValueError(f"viz: fold must be one of {FOLDS}, got {fold!r}")
    types = {**model.types, **(types or {})}
    for node in model.nodes:
        if node.module and node.module_type:
            types.setdefault(node.module, node.module_type)
    model.types = types
    if fold is None:
        return Folded(model, {}, {})
    opened = {str(s) for s in expand}
    scope_of = _scopes(model)
    members: dict[str, list[VNode]] = {}
    for node in model.nodes:
        box = visible_scope(scope_of.get(_base(node.key)), opened)
        if box is not None:
            members.setdefault(box, []).append(node)
    if not members:
        return Folded(model, {}, {})
    merged = _repeated_blocks(model, members, types, opened)
    fold_of: dict[str, str] = {}
    boxes: dict[str, list[str]] = {}
    box_nodes: dict[str, VNode] = {}
    for scopes in merged:
        key = f"module:{scopes[0]}" if len(scopes) == 1 else f"module:{scopes[0]}..{scopes[-1]}"
        inside = [n for s in scopes for n in members[s]]
        boxes[key] = list(scopes)
        for n in inside:
            fold_of[n.key] = key
        box_nodes[key] = _box(key, scopes, inside, types)
    nodes: list[VNode] = []
    placed: set[str] = set()
    for node in model.nodes:
        key = fold_of.get(node.key)
        if key is None:
            nodes.append(node)
        elif key not in placed:
            placed.add(key)
            nodes.append(box_nodes[key])
    edges = _merged_edges(model.edges, fold_of)
    for i, node in enumerate(nodes):
        node.id = f"n{i}"
    folded = Model(model.view, nodes, edges, hidden=model.hidden, truncated=model.truncated,
                   show_values=model.show_values, show_grads=model.show_grads, crossings=model.crossings,
                   types=types)
    return Folded(folded, fold_of, boxes)


def _box(key: str, scopes: list[str], inside: list[VNode], types: dict[str, str]) -> VNode:
    count = sum(max(n.hidden, 1) for n in inside if not n.ghost)
    if len(scopes) == 1:
        title = scope_label(scopes[0], types)
    else:
        first, last = scopes[0], scopes[-1]
        kind = types.get(first)
        title = f"{first}–{last.rsplit('.', 1)[-1]}" + (f" · {kind}" if kind else "") + f" ×{len(scopes)}"
    names = Counter(n.title for n in inside if n.role == "fn")
    common = sorted(names.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    rows = [("note", f"{count:,} node{'s' if count != 1 else ''}" +
                     (f" in {len(scopes)} blocks" if len(scopes) > 1 else ""))]
    if common:
        rows.append(("note", ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in common)))
    parent = scopes[0].rsplit(".", 1)[0] if "." in scopes[0] else None
    return VNode(key, "module", title, caption="module" if len(scopes) == 1 else "repeated modules",
                 rows=rows, hidden=count, module=parent)


def _signature(nodes: list[VNode], model: Model, keys: set[str]) -> tuple:
    """What a block looks like inside: its node names and how many edges join them."""
    names = tuple(sorted(Counter(n.title for n in nodes if n.role != "leaf").items()))
    leaves = tuple(sorted(tuple(n.shape or ()) for n in nodes if n.role == "leaf"))
    inner = sum(1 for e in model.edges if e.src in keys and e.dst in keys)
    return names, leaves, inner


def _repeated_blocks(model: Model, members: dict[str, list[VNode]], types: dict[str, str],
                     opened: set[str]) -> list[list[str]]:
    """Folded scopes in first-seen order, consecutive look-alike siblings grouped (``layers.0`` to
    ``layers.5`` of one type and one inside)."""
    order = list(members)
    signature = {}
    for scope in order:
        keys = {n.key for n in members[scope]}
        signature[scope] = (types.get(scope), _signature(members[scope], model, keys))
    by_parent: dict[str, list[tuple[int, str]]] = {}
    for scope in order:
        m = _INDEXED.match(scope)
        if m:
            by_parent.setdefault(m.group(1), []).append((int(m.group(2)), scope))
    group_of: dict[str, list[str]] = {}
    for runs in by_parent.values():
        runs.sort()
        run: list[str] = []
        last = None
        for index, scope in runs:
            if run and index == last + 1 and signature[scope] == signature[run[0]]:
                run.append(scope)
            else:
                if len(run) > 1:
                    for s in run:
                        group_of[s] = run
                run = [scope]
            last = index
        if len(run) > 1:
            for s in run:
                group_of[s] = run
    out: list[list[str]] = []
    seen: set[str] = set()
    for scope in order:
        if scope in seen:
            continue
        group = group_of.get(scope, [scope])
        seen.update(group)
        out.append(group)
    return out


def _merged_edges(edges: list[VEdge], fold_of: dict[str, str]) -> list[VEdge]:
    out: list[VEdge] = []
    merged: dict[tuple[str, str], VEdge] = {}
    for e in edges:
        src, dst = fold_of.get(e.src, e.src), fold_of.get(e.dst, e.dst)
        if src == dst:
            continue
        if src == e.src and dst == e.dst:
            out.append(e)
            continue
        old = merged.get((src, dst))
        if old is None:
            edge = VEdge(src, dst, shape=e.shape, slot=e.slot, faint=e.faint, count=e.count, name=e.name)
            merged[(src, dst)] = edge
            out.append(edge)
            continue
        old.count += e.count
        if (old.shape, old.slot, old.name) != (e.shape, e.slot, e.name):
            old.shape = old.slot = old.name = None
        old.faint = old.faint and e.faint
    return out


# -- tagging PyTorch's nodes ---------------------------------------------------------------------------------


class ModuleTags:
    """The forward hooks ``tag_modules`` put on a model: ``.remove()`` takes them off (also as a
    ``with`` block)."""

    def __init__(self, handles: list[Any]) -> None:
        self.handles = handles

    def remove(self) -> None:
        handles, self.handles = self.handles, []
        for handle in handles:
            handle.remove()

    def __enter__(self) -> ModuleTags:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def tag_modules(model: Any) -> ModuleTags:
    """Tag the graph nodes each submodule's forward makes, as minigrad does by itself:
    ``grad_fn.metadata["module"] = "encoder.layers.0.linear1"`` (the innermost module) and
    ``metadata["module_type"] = "Linear(64→128)"``, through forward hooks and the nodes' public
    ``metadata`` dict; so ``viz.draw(loss, fold="module")`` folds real PyTorch models. A tag already
    there is kept. Call it once before the forward pass; ``.remove()`` stops tagging.
    """
    handles = []
    for qual, module in model.named_modules():
        if not qual:
            continue
        starts: list[int | None] = []  # one per call in progress (a module may be called inside itself)
        handles.append(module.register_forward_pre_hook(
            lambda mod, args, starts=starts: starts.append(_next_sequence_nr(args))))
        handles.append(module.register_forward_hook(
            lambda mod, args, out, qual=qual, starts=starts: _tag(out, qual, describe_module(mod), starts.pop())))
    return ModuleTags(handles)


def _next_sequence_nr(args: Any) -> int | None:
    """The number the next graph node will get: autograd numbers nodes as they are made, so a
    throwaway node made from an input tensor shows where the counter stands (None without grad)."""
    for t in _tensors(args):
        try:
            scratch = t.new_zeros(()).requires_grad_()
            node = (scratch * 1).grad_fn
        except Exception:
            continue
        return int(node._sequence_nr()) + 1 if node is not None else None
    return None


def _tag(out: Any, qual: str, kind: str, start: int | None) -> None:
    """Tag the nodes made since ``start`` behind ``out`` that carry no tag yet (inner modules
    tagged theirs first: those keep the innermost name, and the walk goes on through them)."""
    if start is None:
        return
    stack = [t.grad_fn for t in _tensors(out) if getattr(t, "grad_fn", None) is not None]
    seen: set[int] = set()
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen or probe.leaf_of(fn) is not None:
            continue
        seen.add(id(fn))
        try:
            if int(fn._sequence_nr()) < start:
                continue
        except Exception:
            continue
        meta = probe.metadata(fn)
        if "module" not in meta and isinstance(getattr(fn, "metadata", None), dict):
            fn.metadata["module"] = qual
            fn.metadata["module_type"] = kind
        stack.extend(child for child, _ in probe.next_functions(fn))


def _tensors(obj: Any) -> list[Any]:
    if probe.is_tensor(obj):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _tensors(o)]
    return []
