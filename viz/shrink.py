"""Keeping every picture small enough to read and quick to lay out.

Graphviz's ``dot`` slows down sharply on three shapes of graph, and each has a remedy here:

- many nodes: past a budget, keep the nodes nearest the roots and nearest the leaves and
  collapse each connected part of the middle into one "hidden" node (``choose_kept``,
  ``hidden_groups``);
- hubs (one node used by many): a leaf used more than ``GHOST_THRESHOLD`` times becomes one
  ghost copy per use; any other node used more than ``HUB_THRESHOLD`` times keeps one use
  and the others point at small references to it (``ghost_hubs``);
- long edges: every rank an edge crosses costs dot a virtual node in every pass; past
  ``SPAN_BUDGET`` crossings the longest edges end at a reference too (``cut_long_edges``).

Nodes and edges here are viz.model's VNode/VEdge; copies are made with dataclasses.replace
so this module does not import model (which imports it).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from .walk import Walk

if TYPE_CHECKING:
    from .model import VEdge, VNode

GHOST_THRESHOLD = 3
HUB_THRESHOLD = 8
SPAN_BUDGET = 1_000  # ranks crossed by long edges that dot may route
MAX_HIDDEN_GROUPS = 8


def choose_kept(walk: Walk, budget: int) -> list[bool]:
    """Keep the ``budget`` nodes nearest the roots and the leaves; the middle is hidden."""
    n = len(walk.nodes)
    if n <= budget:
        return [True] * n
    keep = [False] * n
    head = max(budget - budget * 2 // 5, 1)
    for i in range(head):
        keep[i] = True  # walk order is breadth-first from the roots
    tail = budget - head
    parents = walk.parents()
    frontier = [node.index for node in walk.nodes if all(c is None for c, _ in node.edges)]
    seen = set(frontier)
    while frontier and tail > 0:
        nxt: list[int] = []
        for idx in frontier:
            if tail <= 0:
                break
            if not keep[idx]:
                keep[idx] = True
                tail -= 1
            for parent in parents[idx]:
                if parent not in seen:
                    seen.add(parent)
                    nxt.append(parent)
        frontier = nxt
    return keep


def hidden_groups(walk: Walk, keep: list[bool]) -> list[int | None]:
    """Group index per raw node (None if kept): connected parts of the hidden nodes."""
    n = len(walk.nodes)
    if all(keep):
        return [None] * n
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for node in walk.nodes:
        if keep[node.index]:
            continue
        for child, _ in node.edges:
            if child is not None and not keep[child]:
                a, b = find(node.index), find(child)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    group_of_root: dict[int, int] = {}
    groups: list[int | None] = [None] * n
    for i in range(n):
        if keep[i]:
            continue
        r = find(i)
        if r not in group_of_root:
            group_of_root[r] = min(len(group_of_root), MAX_HIDDEN_GROUPS - 1)
        groups[i] = group_of_root[r]
    return groups


def ghost_hubs(nodes: list[VNode], edges: list[VEdge], view: str) -> tuple[list[VNode], list[VEdge]]:
    """Split hub nodes, whose long converging edges make Graphviz's layout explode.

    A leaf used more than GHOST_THRESHOLD times becomes one dashed copy per use (same name
    and colour). Any other node used more than HUB_THRESHOLD times keeps its first use;
    each further use points to a small dashed reference that names the real node.
    """
    uses: dict[str, list[VEdge]] = {}
    for edge in edges:
        end = edge.dst if view == "backward" else edge.src
        uses.setdefault(end, []).append(edge)
    out: list[VNode] = []
    for node in nodes:
        es = uses.get(node.key, [])
        is_leaf = node.role == "leaf"
        if node.role == "none" or len(es) <= (GHOST_THRESHOLD if is_leaf else HUB_THRESHOLD):
            out.append(node)
            continue
        if not is_leaf:
            out.append(node)
            es = es[1:]
        for k, edge in enumerate(es):
            key = f"{node.key}#{k}"
            if is_leaf:
                caption = f"{node.caption or 'leaf'} · use {k + 1} of {len(es)}"
                copy = dataclasses.replace(node, key=key, ghost=True, caption=caption, rows=list(node.rows),
                                           badges=list(node.badges))
            else:
                copy = _reference(node, key)
            if view == "backward":
                edge.dst = copy.key
            else:
                edge.src = copy.key
            out.append(copy)
    return out, edges


def ranks(nodes: list[VNode], edges: list[VEdge]) -> dict[str, int]:
    """Longest-path layering (what dot's ranking roughly ends up with), iteratively."""
    indeg = {n.key: 0 for n in nodes}
    out: dict[str, list[str]] = {n.key: [] for n in nodes}
    for e in edges:
        indeg[e.dst] += 1
        out[e.src].append(e.dst)
    rank = {n.key: 0 for n in nodes}
    ready = [n.key for n in nodes if indeg[n.key] == 0]
    while ready:
        key = ready.pop()
        for nxt in out[key]:
            rank[nxt] = max(rank[nxt], rank[key] + 1)
            indeg[nxt] -= 1
            if indeg[nxt] == 0:
                ready.append(nxt)
    return rank  # nodes on a cycle (possible around hidden groups) keep a partial rank


def cut_long_edges(nodes: list[VNode], edges: list[VEdge], view: str) -> tuple[list[VNode], int]:
    """Keep dot's work bounded: each rank an edge crosses costs dot a virtual node in
    every pass. When long edges add up to more than SPAN_BUDGET crossings, the longest
    ones end at a small dashed reference to the far node instead, like hub uses do."""
    rank = ranks(nodes, edges)
    spans = sorted(((rank[e.dst] - rank[e.src] - 1, i) for i, e in enumerate(edges)), reverse=True)
    total = sum(span for span, _ in spans if span > 0)
    if total <= SPAN_BUDGET:
        return nodes, total
    by_key = {n.key: n for n in nodes}
    refs: dict[str, list[VNode]] = {}
    for span, i in spans:
        if total <= SPAN_BUDGET or span <= 1:
            break
        edge = edges[i]
        far = edge.dst if view == "backward" else edge.src
        target = by_key[far]
        target = by_key.get(target.ghost_of, target) if target.ghost_of else target
        ref = _reference(target, f"{far}#far{len(refs.get(far, []))}")
        refs.setdefault(far, []).append(ref)
        if view == "backward":
            edge.dst = ref.key
        else:
            edge.src = ref.key
        total -= span
    out: list[VNode] = []
    for node in nodes:
        out.append(node)
        out.extend(refs.get(node.key, ()))
    return out, total


def _reference(node: VNode, key: str) -> VNode:
    """A small dashed stand-in for ``node`` (same role and title, no rows or badges)."""
    return dataclasses.replace(node, key=key, ghost=True, ghost_of=node.key, caption=None, subtitle=None,
                               rows=[], badges=[], data=None, grad=None, hidden=0, module=None, id="")
