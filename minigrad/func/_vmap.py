"""`vmap`: a function of one sample run once on a whole batch (see _batched.py for how)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ..ops.registry import REGISTRY, overridable
from . import _pytree
from ._batched import BatchedTensor, _ids, pop_level, push_level


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """`func` over a batch: `in_dims` says which dim of each input (a pytree prefix of the inputs, None: not
    batched) is the batch, `out_dims` where the batch goes in each output. The function runs once."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = getattr(func, "__name__", repr(func))

    @functools.wraps(func)
    def vmapped(*args, **kwargs):
        where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        leaves, spec, dims, size = _batch_inputs(name, where, in_dims, args)
        if chunk_size is None or chunk_size >= size:
            return _run(func, (leaves, spec, dims, size), kwargs, (name, out_dims, randomness))
        chunks = []
        for start in range(0, size, chunk_size):  # the batch in pieces of chunk_size samples, one run each
            k = min(chunk_size, size - start)
            part = [x if d is None else x.narrow(d, start, k) for x, d in zip(leaves, dims)]
            chunks.append(_run(func, (part, spec, dims, k), kwargs, (name, out_dims, randomness)))
        return _join(chunks, out_dims)

    return vmapped


def _run(func: Callable, batch: tuple, kwargs: dict, how: tuple):
    """One vmap level over `batch` (the input leaves, their structure, in_dims and the batch size); `how`: (the
    function's name, out_dims, randomness)."""
    (leaves, spec, dims, size), (name, out_dims, randomness) = batch, how
    level = next(_ids)
    push_level([level, size, randomness])
    try:
        inputs = [_enter(x, d, level) for x, d in zip(leaves, dims)]
        out = func(*_pytree.unflatten(inputs, spec), **kwargs)
    finally:
        pop_level()
    return _unbatch_outputs(name, out_dims, out, level, size)


def _join(chunks: list, out_dims):
    """The chunks' outputs as one: each output concatenated along its out_dim (one that has none: the first's)."""
    leaves, spec = _pytree.flatten(chunks[0])
    dims = _pytree.broadcast_prefix(out_dims, chunks[0], lambda p: not isinstance(p, (tuple, list)))
    cat = overridable(REGISTRY["cat"].named("cat"), "cat")
    parts = [_pytree.flatten(c)[0] for c in chunks]
    joined = [leaf if d is None else cat([p[i] for p in parts], d) for i, (leaf, d) in enumerate(zip(leaves, dims))]
    return _pytree.unflatten(joined, spec)


def _batch_inputs(name: str, where: str, in_dims, args: tuple):
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                         "to vmap over a function with no inputs. The latter is unsupported.")
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")
    leaves, spec = _pytree.flatten(args)
    dims = _pytree.broadcast_prefix(in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args), args)
    if dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has structure "
                         f"{_pytree.describe(_pytree.flatten(in_dims)[1])} but inputs has structure "
                         f"{_pytree.describe(spec)}.")
    sizes = []
    for x, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"{where}: Got in_dim={d} for an input but in_dim must be either an integer dimension "
                             "or None.")
        if not isinstance(x, (Tensor, BatchedTensor)):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type {type(x)}. We cannot "
                             "vmap over non-Tensor arguments, please use None as the respective in_dim")
        n = x.dim()
        if not -n <= d < n:
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a Tensor of dimensionality "
                             f"{n} so expected in_dim to satisfy -{n} <= in_dim < {n}.")
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return leaves, spec, dims, sizes[0]


def _enter(x, d, level: int):
    """Input `x` batched at the new (innermost) level along its dim `d`."""
    if d is None:
        return x
    if x.__class__ is BatchedTensor:
        nb = len(x._levels)
        source = nb + d % x.dim()
        return BatchedTensor(x._value.movedim(source, nb) if source != nb else x._value, x._levels + (level,))
    return BatchedTensor(x.movedim(d, 0) if d % max(x.dim(), 1) else x, (level,))  # (a dim already first: no view)


def _unbatch_outputs(name: str, out_dims, out, level: int, size: int):
    if not isinstance(out_dims, (int, tuple, list)) and out_dims is not None or isinstance(out_dims, bool):
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                         "collection of ints representing where in the outputs the vmapped dimension should appear.")
    leaves, spec = _pytree.flatten(out)
    dims = _pytree.broadcast_prefix(out_dims, out, lambda p: not isinstance(p, (tuple, list)))
    if dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                         f"structure of `outputs`. out_dims has structure "
                         f"{_pytree.describe(_pytree.flatten(out_dims)[1])} but outputs has structure "
                         f"{_pytree.describe(spec)}.")
    return _pytree.unflatten([_exit(name, x, d, level, size) for x, d in zip(leaves, dims)], spec)


def _exit(name: str, x, d, level: int, size: int):
    """Output `x` with the batch of `level` put back as its dim `d` (copied along it when `x` is not batched)."""
    batched = x.__class__ is BatchedTensor and level in x._levels
    if d is None:
        if batched:
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
        return x
    if not isinstance(x, (Tensor, BatchedTensor)):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(x)}. Did you mean "
                         "to set out_dims= to None for output?")
    if not batched:
        x = x.unsqueeze(0).expand((size,) + tuple(x.shape))
        return x.movedim(0, d) if d else x
    rest = tuple(lv for lv in x._levels if lv != level)
    k = x._levels.index(level)
    n = x.dim() + 1
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    target = len(rest) + d % n
    value = x._value.movedim(k, target) if k != target else x._value
    return BatchedTensor(value, rest) if rest else value
