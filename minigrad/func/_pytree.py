"""Pytrees as torch.func reads them: tuples, lists and dicts of leaves (tensors, numbers, None)."""

from __future__ import annotations

from typing import Any


def flatten(tree: Any) -> tuple[list, Any]:
    """(the leaves in order, the structure): a structure is None for a leaf, else (type, keys, children)."""
    if isinstance(tree, (tuple, list)):
        leaves, children = [], []
        for x in tree:
            sub, spec = flatten(x)
            leaves += sub
            children.append(spec)
        return leaves, (type(tree), None, children)
    if isinstance(tree, dict):
        leaves, children = [], []
        for k in tree:
            sub, spec = flatten(tree[k])
            leaves += sub
            children.append(spec)
        return leaves, (dict, list(tree), children)
    return [tree], None


def unflatten(leaves: list, spec: Any) -> Any:
    """The tree of structure `spec` holding `leaves` in order."""
    it = iter(leaves)
    return _build(it, spec)


def _build(it, spec):
    if spec is None:
        return next(it)
    kind, keys, children = spec
    values = [_build(it, c) for c in children]
    if kind is dict:
        return dict(zip(keys, values))
    return kind(values) if kind in (tuple, list) else kind(*values)  # a named tuple (max's values, indices)


def broadcast_prefix(prefix: Any, tree: Any, is_leaf=lambda x: not isinstance(x, (tuple, list, dict))) -> list | None:
    """One entry of `prefix` per leaf of `tree` (a leaf of `prefix` covers a whole subtree), or None when the
    structures do not match (as in_dims and out_dims are matched with the inputs and outputs)."""
    if is_leaf(prefix):
        return [prefix] * len(flatten(tree)[0])
    if isinstance(prefix, dict) != isinstance(tree, dict) or not isinstance(tree, (tuple, list, dict)):
        return None
    if isinstance(prefix, dict):
        if set(prefix) != set(tree):
            return None
        pairs = [(prefix[k], tree[k]) for k in tree]
    else:
        if len(prefix) != len(tree) or type(prefix) is not type(tree):
            return None
        pairs = list(zip(prefix, tree))
    out = []
    for p, t in pairs:
        sub = broadcast_prefix(p, t, is_leaf)
        if sub is None:
            return None
        out += sub
    return out


def describe(spec: Any) -> str:
    """PyTorch's `TreeSpec(...)` text for a structure (in its error messages)."""
    if spec is None:
        return "*"
    kind, keys, children = spec
    inner = ",\n  ".join(describe(c) for c in children)
    return f"TreeSpec({kind.__name__}, {keys if kind is dict else None}, [{inner}])"
