"""Batching rules of their own for the ops PyTorch batches beyond _rules.py's families (issue 27, item 2).

Most of these ops already treat their leading dims as a batch: the rule moves the batch dims first (`lined_up`:
every tensor argument at every level, full size) and calls the op once (`_as_is`), or folds the batch into the
op's own batch dim N (`_fold_n`: bmm, pooling with indices, fold/unfold, transposed convolutions). Where a
sample's shape is one the op refuses, the per-sample loop runs without the performance warning (`quiet_loop`:
PyTorch has a rule, so the user sees the op's own error and no warning). Each rule is one entry of `RULES` below,
merged into _rules.RULES; ops PyTorch loops over too (kl_div, take, put, ...) keep the warned fallback.
"""

from __future__ import annotations

import numpy as np

from .. import _dtypes
from .._creation import arange, zeros
from .._tensor import Tensor
from ..ops import attention, convolution
from . import _transforms
from ._batched import (
    LEVELS,
    REVERSE_COPIES,
    TANGENT_LEVELS,
    VMAP_LEVELS,
    BatchedTensor,
    fallback,
    levels_of,
    physical,
    wrap,
)
from ._rules import ELEMENTWISE, RULES, _bind, _loss, _numel, _shape_arg, _shift, dim_op, quiet_loop


def _lead(levels: tuple) -> tuple:
    sizes = {lv: size for lv, size, _ in LEVELS}
    return tuple(sizes[lv] for lv in levels)


def lined_up(x, levels: tuple, rank: int = 0) -> Tensor:
    """`x`'s batch tensor at every one of `levels`, full size, its logical dims padded in front to `rank`."""
    p = physical(x if x.__class__ is BatchedTensor else BatchedTensor(x, ()), levels, rank)
    lead = _lead(levels)
    want = lead + tuple(p.shape[len(lead):])
    return p if tuple(p.shape) == want else p.expand(want)


def _tensors(values) -> list:
    return [v for v in values if isinstance(v, (Tensor, BatchedTensor))]


def _as_is(check=None, tensors=("self",)):
    """A rule for an op that batches over its leading dims already: the named tensor arguments lined up (batch dims
    first, full size), the other arguments as given. `check(bound, ...)` False: a sample the op refuses (the loop
    gives its error)."""
    def run_rule(func, args, kwargs):
        bound = _bind(func, args, kwargs)
        named = {k: bound.arguments[k] for k in tensors if isinstance(bound.arguments.get(k), (Tensor, BatchedTensor))}
        others = [v for k, v in bound.arguments.items() if k not in named]
        levels = levels_of(tuple(named.values()))
        if not levels or levels_of(tuple(others)) or levels_of(tuple(bound.arguments.values())) != levels:
            return NotImplemented
        if check is not None and not check(bound.arguments):
            return quiet_loop(func.__name__, func, args, kwargs)
        rank = max(x.dim() for x in named.values())
        for k, x in named.items():
            bound.arguments[k] = lined_up(x, levels, rank)
        return wrap(func(*bound.args, **bound.kwargs), levels)
    return run_rule


def _fold_n(rank: int, unbatched: bool = True, tensors=("input",), check=None):
    """A rule for an op with a batch dim N of its own: samples of `rank` dims (N, ...), or of rank - 1 when the op
    takes `unbatched` ones; the batch dims folded into N, the op run once, the results (tensors, or tuples of
    them) unfolded. Other shapes, or Ns that differ: the loop, with the op's own error."""
    def run_rule(func, args, kwargs):
        bound = _bind(func, args, kwargs)
        named = {k: bound.arguments.get(k) for k in tensors}
        if any(not isinstance(x, (Tensor, BatchedTensor)) for x in named.values()):
            return NotImplemented
        levels = levels_of(tuple(named.values()))
        if not levels or levels_of(tuple(v for k, v in bound.arguments.items() if k not in named)):
            return NotImplemented
        ranks = {x.dim() for x in named.values()}
        ns = {tuple(x.shape[:1]) for x in named.values()}
        r = ranks.pop()
        if ranks or r not in ((rank, rank - 1) if unbatched else (rank,)) or len(ns) != 1 or check is not None \
                and not check(bound.arguments):
            return quiet_loop(func.__name__, func, args, kwargs)
        return _folded_run(func, bound, named, levels, r == rank - 1)
    return run_rule


def _folded_run(func, bound, named: dict, levels: tuple, x_rank: bool):
    """Run `func` with the batch folded into dim 0 of every named tensor (`x_rank`: the samples have no N)."""
    lead = _lead(levels)
    k = _numel(lead)
    n = 1
    for key, x in named.items():
        p = lined_up(x, levels)
        n = 1 if x_rank else p.shape[len(lead)]
        bound.arguments[key] = p.reshape((k * n,) + tuple(p.shape[len(lead) + (0 if x_rank else 1):]))

    def unfold(out):
        if isinstance(out, Tensor):
            return out.reshape(lead + (() if x_rank else (n,)) + tuple(out.shape[1:]))
        return type(out)(unfold(o) for o in out) if type(out) in (tuple, list) else type(out)(*map(unfold, out))
    return wrap(unfold(func(*bound.args, **bound.kwargs)), levels)


# -- one batched tensor, its dims shifted ------------------------------------------------------------------------
def _single(rule):
    """rule(func, value, batch rank, logical rank, *args, **kwargs) for one batched tensor and plain arguments."""
    def run_rule(func, args, kwargs):
        x = args[0]
        if x.__class__ is not BatchedTensor or levels_of(args[1:]) or levels_of(tuple(kwargs.values())):
            return NotImplemented
        out = rule(func, x._value, len(x._levels), x.dim(), *args[1:], **kwargs)
        return quiet_loop(func.__name__, func, args, kwargs) if out is NotImplemented else wrap(out, x._levels)
    return run_rule


def _ravel(func, v, nb, n):
    return v.reshape(tuple(v.shape[:nb]) + (_numel(v.shape[nb:]),))


def _select(func, v, nb, n, dim, index):
    return func(v, _shift(dim, n, nb), index) if n else NotImplemented


def _matrix(func, v, nb, n, *args, **kwargs):
    """tril/triu: the last two dims (PyTorch's rule runs them on the batch tensor as it is, whatever the sample)."""
    return func(v, *args, **kwargs) if v.dim() >= 2 else NotImplemented


def _trace(func, v, nb, n):
    """trace of each matrix: the sum of its diagonal, picked by advanced indexing."""
    if n != 2:
        return NotImplemented
    i = arange(min(v.shape[-2:]))
    return v[(Ellipsis, i, i)].sum(-1)


def _repeat(func, v, nb, n, *sizes):
    sizes = _shape_arg(sizes)
    if len(sizes) < n or any(not isinstance(s, (int, np.integer)) for s in sizes):
        return NotImplemented
    lead = tuple(v.shape[:nb])
    v = v.reshape(lead + (1,) * (len(sizes) - n) + tuple(v.shape[nb:]))
    return v.repeat((1,) * nb + sizes)


def _tile(func, v, nb, n, dims):
    if not isinstance(dims, (tuple, list)):
        return NotImplemented
    return _repeat(func, v, nb, n, (1,) * (n - len(dims)) + tuple(dims))


def _repeat_interleave(func, v, nb, n, *args, **kwargs):
    """repeat_interleave(repeats, dim, output_size=) along the sample's dim (dim=None: of the flattened sample),
    repeats an int or a plain tensor."""
    given = dict(zip(("repeats", "dim"), args), **kwargs)
    repeats, dim, size = given.get("repeats"), given.get("dim"), given.get("output_size")
    if repeats is None or isinstance(repeats, Tensor) and repeats.dim() > 1:
        return NotImplemented
    if dim is None:
        return func(_ravel(func, v, nb, n), repeats, nb, output_size=size)
    return func(v, repeats, _shift(dim, n, nb), output_size=size) if n else NotImplemented


def _pad(func, v, nb, n, *args, **kwargs):
    """pad / constant_pad_nd: the last len(pad) // 2 dims, which are the sample's (constant mode)."""
    given = dict(zip(("pad", "mode" if func.__name__ == "pad" else "value"), args), **kwargs)
    pad = given.get("pad", ())
    if len(pad) % 2 or len(pad) // 2 > n or given.get("mode", "constant") != "constant":
        return NotImplemented
    return func(v, *args, **kwargs)


def _pixel_shuffle(func, v, nb, n, factor):
    return func(v, factor) if n >= 3 else NotImplemented


def _masked_select(func, args, kwargs):
    """masked_select(x, mask) of a batched x and a plain mask: the same count of elements in every sample."""
    bound = _bind(func, args, kwargs)
    x, mask = bound.arguments["self"], bound.arguments["mask"]
    if mask.__class__ is BatchedTensor:
        raise RuntimeError(MASK_ERROR)
    try:
        shape = tuple(np.broadcast_shapes(tuple(x.shape), tuple(mask.shape)))
    except ValueError:
        return quiet_loop("masked_select", func, args, kwargs)
    if mask.dtype is not _dtypes.bool:
        return quiet_loop("masked_select", func, args, kwargs)
    levels = x._levels
    p = lined_up(x, levels, len(shape))
    p = p.expand(_lead(levels) + shape)
    return BatchedTensor(p[(slice(None),) * len(levels) + (mask.expand(shape),)], levels)


MASK_ERROR = ("vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot support this because "
              "for each batch this would return a differently shaped Tensor. Please file an issue at "
              "https://github.com/pytorch/pytorch/issues if you need this feature.")


# -- shapes of another tensor ------------------------------------------------------------------------------------
def _shape_as(method: str):
    """view_as / reshape_as / expand_as: `other` gives only its (logical) shape, batched or not."""
    def run_rule(func, args, kwargs):
        bound = _bind(func, args, kwargs)
        x, other = bound.arguments["self"], bound.arguments["other"]
        if not isinstance(other, (Tensor, BatchedTensor)):
            return NotImplemented
        return getattr(x, method)(tuple(other.shape))
    return run_rule


def _meshgrid(func, args, kwargs):
    """meshgrid of batched vectors: each one viewed along its own dim of the grid and expanded (checked first on
    empty stand-ins of the samples' shapes, for the op's own errors and warning)."""
    tensors = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else list(args)
    levels = levels_of(tuple(tensors))
    if not levels or not tensors or levels_of(tuple(kwargs.values())):
        return NotImplemented
    stand_ins = [zeros(tuple(min(s, 1) for s in t.shape), dtype=t.dtype) for t in tensors]
    func(*stand_ins, **kwargs)
    lengths = [t.numel() for t in tensors]
    order = list(range(len(tensors)))
    if kwargs.get("indexing") == "xy" and len(tensors) > 1:
        order[0], order[1] = 1, 0
    grid = tuple(lengths[i] for i in order)
    lead = _lead(levels)
    out = []
    for i, t in enumerate(tensors):
        p = lined_up(t, levels).reshape(lead + (lengths[i],))
        place = [1] * len(tensors)
        place[order.index(i)] = lengths[i]
        out.append(BatchedTensor(p.reshape(lead + tuple(place)).expand(lead + grid), levels))
    return tuple(out)


# -- several tensors ---------------------------------------------------------------------------------------------
def _bmm_check(args: dict) -> bool:
    a, b = args["self"], args["mat2"]
    return a.shape[2] == b.shape[1] and a.dtype == b.dtype


def _baddbmm(func, args, kwargs):
    """baddbmm(x, b1, b2) = beta x + alpha b1 @ b2: x broadcast to the product's shape, the batch folded into N."""
    bound = _bind(func, args, kwargs)
    named = {k: bound.arguments[k] for k in ("self", "batch1", "batch2")}
    levels = levels_of(tuple(named.values()))
    if levels_of(tuple(v for k, v in bound.arguments.items() if k not in named)) or not all(
            isinstance(v, (Tensor, BatchedTensor)) for v in named.values()):
        return NotImplemented
    x, b1, b2 = named.values()
    shape = (b1.shape[0], b1.shape[1], b2.shape[-1]) if b1.dim() == 3 == b2.dim() else None
    if shape is None or b1.shape[0] != b2.shape[0] or b1.shape[2] != b2.shape[1] or x.dim() > 3 or any(
            s not in (1, w) for s, w in zip(tuple(x.shape)[::-1], shape[::-1])):
        return quiet_loop("baddbmm", func, args, kwargs)
    named["self"] = BatchedTensor(lined_up(x, levels, 3).expand(_lead(levels) + shape), levels)
    return _folded_run(func, bound, named, levels, False)


def _index_op(func, args, kwargs):
    """gather / scatter / scatter_add: self, index and a tensor src lined up at every level, the dim shifted."""
    bound = _bind(func, args, kwargs)
    named = {k: bound.arguments[k] for k in ("self", "index", "src") if isinstance(
        bound.arguments.get(k), (Tensor, BatchedTensor))}
    levels = levels_of(tuple(named.values()))
    if not levels or levels_of(tuple(v for k, v in bound.arguments.items() if k not in named)):
        return NotImplemented
    n = named["self"].dim()
    if not n or any(x.dim() != n for x in named.values()) or not isinstance(bound.arguments["dim"], int):
        return quiet_loop(func.__name__, func, args, kwargs)
    if "src" in named and named["src"].shape != named["index"].shape and REVERSE_COPIES.issuperset(levels):
        # (jacrev: PyTorch's forward runs unbatched, so its backward's "invalid gradient" names the sample's shapes)
        return quiet_loop(func.__name__, func, args, kwargs)
    for k, x in named.items():
        bound.arguments[k] = lined_up(x, levels)
    bound.arguments["dim"] = _shift(bound.arguments["dim"], n, len(levels))
    return BatchedTensor(func(*bound.args, **bound.kwargs), levels)


def _embedding(func, args, kwargs):
    """embedding(indices, weight): plain weights look up the batch of indices at once; batched weights (an
    ensemble) are stacked into one table, each sample's indices offset to its own rows."""
    bound = _bind(func, args, kwargs)
    idx, w = bound.arguments["input"], bound.arguments["weight"]
    if not isinstance(idx, (Tensor, BatchedTensor)) or not isinstance(w, (Tensor, BatchedTensor)) or levels_of(
            tuple(v for k, v in bound.arguments.items() if k not in ("input", "weight"))):
        return NotImplemented
    if w.__class__ is not BatchedTensor:
        bound.arguments["input"] = idx._value
        return BatchedTensor(func(*bound.args, **bound.kwargs), idx._levels)
    levels = levels_of((idx, w))
    pi = lined_up(idx, levels)
    rows = w.shape[0] if w.dim() == 2 else 0
    if w.dim() != 2 or bound.arguments.get("padding_idx") is not None or bound.arguments.get("max_norm") is not None \
            or pi._data.dtype.kind not in "iu" or pi.numel() and not 0 <= int(pi._data.min()) <= int(
                pi._data.max()) < rows:
        return quiet_loop("embedding", func, args, kwargs)
    lead = _lead(levels)
    k = _numel(lead)
    offsets = (arange(k) * rows).reshape(lead + (1,) * idx.dim())
    bound.arguments.update(input=pi + offsets, weight=lined_up(w, levels).reshape((k * rows, w.shape[1])))
    return BatchedTensor(func(*bound.args, **bound.kwargs), levels)


def _layer_norm(func, args, kwargs):
    """layer_norm over the sample's last dims; batched weight or bias: normalized first, then scaled and shifted, as
    PyTorch's rule (whose dtypes then promote; under jacrev/jacfwd alone the op refuses mixed dtypes, as PyTorch's
    on the unbatched primal)."""
    bound = _bind(func, args, kwargs)
    x, w, b = (bound.arguments.get(k) for k in ("input", "weight", "bias"))
    shape = bound.arguments["normalized_shape"]
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    levels = levels_of((x, w, b))
    if levels_of(tuple(v for k, v in bound.arguments.items() if k not in ("input", "weight", "bias"))):
        return NotImplemented
    unbatched_op = not VMAP_LEVELS.intersection(levels)  # (jacrev/jacfwd: PyTorch's op runs on the plain primal)
    if x.dim() < len(shape) or tuple(x.shape[x.dim() - len(shape):]) != shape or any(
            t is not None and (tuple(t.shape) != shape or unbatched_op and t.dtype != x.dtype) for t in (w, b)):
        return quiet_loop("layer_norm", func, args, kwargs)
    bound.arguments["input"] = lined_up(x, levels)
    if w.__class__ is not BatchedTensor and b.__class__ is not BatchedTensor:
        return BatchedTensor(func(*bound.args, **bound.kwargs), levels)
    bound.arguments.update(weight=None, bias=None)
    out = BatchedTensor(func(*bound.args, **bound.kwargs), levels)
    out = out if w is None else out * w
    return out if b is None else out + b


def _convolution(func, args, kwargs):
    """conv_transpose1d/2d and torch.convolution: plain weights fold the batch into N; batched ones (an ensemble,
    per-sample gradients) run as one grouped convolution, the batch folded into the channels (_rules._conv)."""
    bound = _bind(func, args, kwargs)
    x, w, b = (bound.arguments.get(k) for k in ("input", "weight", "bias"))
    if levels_of(tuple(v for k, v in bound.arguments.items() if k not in ("input", "weight", "bias"))) or not all(
            isinstance(t, (Tensor, BatchedTensor)) for t in (x, w)):
        return NotImplemented
    spatial = w.dim() - 2
    if x.dim() not in (spatial + 1, spatial + 2) or spatial < 1:
        return quiet_loop(func.__name__, func, args, kwargs)
    transposed = bound.arguments.get("transposed", func.__name__.startswith("conv_transpose"))
    channels = w.shape[0] if transposed else w.shape[1] * bound.arguments.get("groups", 1)
    if x.shape[-spatial - 1] != channels and not VMAP_LEVELS.intersection(levels_of((x, w, b))):
        return quiet_loop(func.__name__, func, args, kwargs)  # (jacrev/jacfwd: PyTorch's error names the sample)
    levels = levels_of((x, w, b))
    if not VMAP_LEVELS.intersection(levels):  # jacrev / jacfwd: PyTorch's kernel choice sees the sample's batch
        convolution.SAMPLE_BATCH[0] = x.shape[0] if x.dim() == spatial + 2 else 1
    try:
        if w.__class__ is not BatchedTensor and b.__class__ is not BatchedTensor:
            return _folded_run(func, bound, {"input": x}, x._levels, x.dim() == spatial + 1)
        if not _numel(_lead(levels)):  # an empty batch: no groups to run (the loop's stand-in sample: the shapes)
            return quiet_loop(func.__name__, func, args, kwargs)
        return _grouped(func, bound, levels, spatial)
    finally:
        convolution.SAMPLE_BATCH[0] = None


def _grouped(func, bound, levels: tuple, spatial: int):
    """One grouped (transposed) convolution for a batch of weights: input (N, k*C, ...), weight (k*W0, W1, ...),
    groups * k; the output's k*O channels unfolded into the batch."""
    x, w, b = (bound.arguments.get(k) for k in ("input", "weight", "bias"))
    lead = _lead(levels)
    k = _numel(lead)
    transposed = bound.arguments.get("transposed", func.__name__.startswith("conv_transpose"))
    groups = bound.arguments.get("groups", 1)
    out_channels = w.shape[1] * groups if transposed else w.shape[0]
    px = lined_up(x, levels, spatial + 2)  # (lead..., N, C, *spatial)
    n = px.shape[len(lead)]
    px = px.reshape((k, n) + tuple(px.shape[len(lead) + 1:])).movedim(0, 1)
    px = px.reshape((n, k * px.shape[2]) + tuple(px.shape[3:]))
    pw = lined_up(w, levels).reshape((k * w.shape[0],) + tuple(w.shape[1:]))
    pb = None if b is None else lined_up(b, levels).reshape(-1)
    bound.arguments.update(input=px, weight=pw, bias=pb, groups=groups * k)
    out = func(*bound.args, **bound.kwargs)  # (N, k * O, ...)
    out = out.reshape((n, k, out_channels) + tuple(out.shape[2:])).movedim(1, 0)
    out = out.reshape(lead + tuple(out.shape[1:]))
    return BatchedTensor(out.squeeze(len(lead)) if x.dim() == spatial + 1 else out, levels)


def _attention_check(args: dict) -> bool:
    return not args.get("dropout_p") and all(
        t is None or t.dim() >= 2 for t in (args["query"], args["key"], args["value"], args.get("attn_mask")))


_ATTENTION = _as_is(_attention_check, ("query", "key", "value", "attn_mask"))


def _last_dim_dense(t) -> bool:
    """PyTorch picks its fused kernel only for a last dim of stride 1 (a batch dim last, `in_dims=-1`, is not)."""
    data = (t._value if t.__class__ is BatchedTensor else t)._data
    return data.shape[-1] == 1 or data.strides[-1] == data.itemsize


def _attention(func, args, kwargs):
    """sdpa: samples that take PyTorch's fused CPU kernel (4-D, attention._fusable) take the loop with its warning,
    as PyTorch's kernel has no batching rule (under jacfwd alone, no warning: the kernel's forward-AD error comes
    first; the warning of its backward, in vmap(grad) or jacrev, is not given: the backward runs on the batch
    tensors); the others (PyTorch's math path, ordinary ops) run once, batch dims first."""
    bound = _bind(func, args, kwargs)
    q, k, v, mask = (bound.arguments.get(key) for key in ("query", "key", "value", "attn_mask"))
    if all(isinstance(t, (Tensor, BatchedTensor)) for t in (q, k, v)) and attention._fusable(
            q, k, v, None, bound.arguments.get("dropout_p", 0.0)) and (mask is None or not mask.requires_grad) and all(
                _last_dim_dense(t) for t in (q, k, v)):
        tangents_only = TANGENT_LEVELS.issuperset(levels_of(tuple(bound.arguments.values())))
        return fallback("_scaled_dot_product_flash_attention_for_cpu", func, args, kwargs, warn=not tangents_only)
    return _ATTENTION(func, args, kwargs)


def _msort(func, v, nb, n):
    """msort sorts along the sample's first dim: moved to the front for the op, then back."""
    return func(v.movedim(nb, 0)).movedim(0, nb) if n else NotImplemented


def _sum_to_size(func, v, nb, n, *size, **named):
    """sum_to_size: the sample's size padded with 1s in front to its rank, the batch dims kept, then reshaped."""
    size = _shape_arg(size) if size else tuple(named.get("size", ()))
    if len(size) > n or any(s not in (1, t) for s, t in zip(size[::-1], tuple(v.shape[nb:])[::-1])):
        return NotImplemented
    lead = tuple(v.shape[:nb])
    return func(v, lead + (1,) * (n - len(size)) + size).reshape(lead + size)


def _roll(func, args, kwargs):
    """roll(shifts) with no dims rolls the flattened sample: flattened, rolled along its last dim, reshaped; with
    dims, the family's rule (the dims shifted past the batch dims)."""
    bound = _bind(func, args, kwargs)
    x = bound.arguments["self"]
    if bound.arguments.get("dims") is not None or x.__class__ is not BatchedTensor or not x.dim() or levels_of(
            tuple(v for k, v in bound.arguments.items() if k != "self")):
        return dim_op("roll", func, args, kwargs)
    v, nb = x._value, len(x._levels)
    flat = v.reshape(tuple(v.shape[:nb]) + (x.numel(),))
    return BatchedTensor(func(flat, bound.arguments["shifts"], nb).reshape(tuple(v.shape)), x._levels)


def _interpolate(func, args, kwargs):
    """interpolate of (N, C, *spatial) samples: the batch folded into N."""
    bound = _bind(func, args, kwargs)
    x = bound.arguments["input"]
    if x.__class__ is not BatchedTensor or levels_of(tuple(v for k, v in bound.arguments.items() if k != "input")):
        return NotImplemented
    if x.dim() < 3:
        return quiet_loop("interpolate", func, args, kwargs)
    return _folded_run(func, bound, {"input": x}, x._levels, False)


def _decomposed(name: str):
    """An op PyTorch loops over under vmap, but runs as a composition of batched ops when it is differentiated
    inside a transform (kl_div: vmap(grad), vmap(jacrev); jacfwd alone, whose batch is only the tangents): the loop
    without the warning there, as PyTorch's. (grad(vmap(...)) is counted as differentiated too.)"""
    def run_rule(func, args, kwargs):
        levels = levels_of((*args, *kwargs.values()))
        quiet = TANGENT_LEVELS.issuperset(levels) or _transforms._DEPTH[0] > 0
        return fallback(name, func, args, kwargs, warn=not quiet)
    return run_rule


ELEMENTWISE.update({"byte", "short", "byte_", "short_"})
RULES.update({
    "ravel": _single(_ravel), "select": _single(_select), "tril": _single(_matrix), "triu": _single(_matrix),
    "trace": _single(_trace), "repeat": _single(_repeat), "tile": _single(_tile),
    "repeat_interleave": _single(_repeat_interleave), "pad": _single(_pad), "constant_pad_nd": _single(_pad),
    "pixel_shuffle": _single(_pixel_shuffle), "masked_select": _masked_select,
    "view_as": _shape_as("view"), "reshape_as": _shape_as("reshape"), "expand_as": _shape_as("expand"),
    "meshgrid": _meshgrid,
    "bmm": _fold_n(3, False, ("self", "mat2"), _bmm_check), "baddbmm": _baddbmm,
    "max_pool2d": _fold_n(4), "max_pool1d": _fold_n(3), "fold": _fold_n(3), "unfold": _fold_n(4),
    "gather": _index_op, "scatter": _index_op, "scatter_add": _index_op, "embedding": _embedding,
    "layer_norm": _layer_norm, "conv_transpose1d": _convolution, "conv_transpose2d": _convolution,
    "convolution": _convolution, "smooth_l1_loss": _loss,
    "scaled_dot_product_attention": _attention, "msort": _single(_msort), "sum_to_size": _single(_sum_to_size),
    "interpolate": _interpolate, "roll": _roll,
    "kl_div": _decomposed("kl_div"), "bincount": _decomposed("bincount"),
})
