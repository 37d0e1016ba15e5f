"""Broadcasting undone: which dims a broadcast created or stretched, and summing a gradient back over them.

Shared by the engine (a gradient that arrives broadcast) and the derivative formulas (`ops.xp`); it works on
NumPy arrays and, through Tensor methods, on Tensors under create_graph (the nodes PyTorch's sum_to makes)."""

from __future__ import annotations

import numpy as np

from ._tensor import Tensor


def expandable(shape: tuple, target: tuple) -> bool:
    """Can a tensor of `shape` be broadcast to `target` (so that a gradient of `target` sums back)?"""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


def summed_dims(shape: tuple, target: tuple) -> tuple:
    """The dims of `target` that broadcasting `shape` to it created or stretched."""
    lead = len(target) - len(shape)
    return tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and target[lead + i] != 1)


def sum_to(g, shape: tuple, dims: tuple | None = None):
    """Sum the broadcast gradient `g` back to `shape` over `dims` (by default, those broadcasting made)."""
    shape = tuple(shape)
    gshape = tuple(g.shape)
    if gshape == shape:
        return g
    if dims is None:
        dims = summed_dims(shape, gshape)
    if isinstance(g, Tensor):  # a view only where leading dims go, as PyTorch's sum_to (its graph shows it)
        if not shape:  # down to 0-d: the plain sum (SumBackward0)
            return g.sum()
        summed = g.sum(dims, keepdim=True) if dims else g
        return summed.reshape(shape) if len(gshape) != len(shape) else summed
    return np.asarray(np.add.reduce(g, dims, keepdims=True) if dims else g).reshape(shape)
