"""The op catalogue: for every public op name, how to draw its arguments.

Each entry is one public name (``exp``, ``add_``, ``nn.functional.mse_loss``, ``__getitem__``), a draw
function that picks or makes operands with the :class:`~.generator.Builder` and returns the
expression (in one of the op's forms: function, method, operator, ``nn.functional``) with the shape
and dtype it expects, and a weight. The generator only sees ``OPS``, built by ``build(op_names())``: the API
contract's names (``CONTRACT_NAMES``) and every public op of the core's registry with its in-place variant, less what
docs/differences.md says is not drawn. A name with a hand-written draw here uses it; any other registry op is
drawn from its declaration's samples (``derived.py``), so a new op is fuzzed without an edit here; an op with
neither fails ``test_every_op_name_has_a_draw_function``.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import itertools
import random
from collections.abc import Callable

import numpy as np

from . import derived
from . import values as V
from .generator import FLOAT, Builder, Call, Operand, Out, Var, float_of, result_dtype
from .program import array_literal


@dataclasses.dataclass(frozen=True)
class OpEntry:
    name: str
    draw: Callable[[Builder], Call | None]
    weight: float = 1.0
    inplace: bool = False  # draw(b, target) writes ``target``
    fits: Callable[[Var], bool] | None = None  # the targets an in-place op accepts (None: any)


# --------------------------------------------------------------------------------------------------
# Helpers


def _var_op(v: Var) -> Operand:
    return Operand(v.name, v.dtype, v.shape, v)


def _uses(*ops: Operand | Var | None) -> list[Var]:
    out = []
    for o in ops:
        if isinstance(o, Var):
            out.append(o)
        elif isinstance(o, Operand) and o.var is not None:
            out.append(o.var)
    return out


def unary(name: str, out: str = "float", operator: str | None = None, functional: bool = False,
          weight: float = 1.0) -> OpEntry:
    """A pointwise op of one tensor; ``out='float'`` makes integer inputs float32 (``exp``), ``'same'`` keeps them."""

    def draw(b: Builder) -> Call:
        v = b.pick_or_new(unknown=True)
        forms = ["function", "method"] + (["functional"] if functional else [])
        if operator and b.rng.random() < 0.3:
            expr = operator.format(v.name)
            b.tags.add("form:operator")
        else:
            expr = b.call(name, v.name, forms=forms)
        dtype = float_of(v.dtype) if out == "float" else v.dtype
        return Call(expr, [Out(v.shape, dtype)], [v])

    return OpEntry(name, draw, weight)


def functional_unary(name: str) -> OpEntry:
    def draw(b: Builder) -> Call:
        v = b.pick_or_new(unknown=True)
        return Call(f"torch.nn.functional.{name}({v.name})", [Out(v.shape, float_of(v.dtype))], [v])

    return OpEntry(f"nn.functional.{name}", draw)


def binary(name: str, symbol: str | None = None, reflect: bool = True, out: str = "promote",
           kwargs: Callable[[Builder], dict] | None = None, forms: tuple[str, ...] = ("function", "method")) -> OpEntry:
    """A broadcasting op of two operands, as ``torch.name``, a method, or a Python operator.

    ``forms`` are the named forms the API contract promises (``//`` and ``%`` are promised as
    operators only; README "Missing names": ``torch.floor_divide`` may be missing).
    """

    def draw(b: Builder) -> Call:
        v = b.pick_or_new()
        other = b.operand(v.shape, dtype_hint=v.dtype if v.is_float else "float64")
        kw = kwargs(b) if kwargs else {}
        r = b.rng.random()
        if symbol and other.shape is None and reflect and r < 0.25:
            expr = f"{other.text} {symbol} {v.name}"
            b.tags.add("form:reflected")
        elif symbol and not kw and r < 0.6:
            expr = f"{v.name} {symbol} {other.text}"
            b.tags.add("form:operator")
        else:
            expr = b.call(name, v.name, [other.text], kw, forms=forms)
        shape = V.broadcast(v.shape, other.shape or ())
        dtype = result_dtype([_var_op(v), other])
        if out == "bool":
            dtype = "bool"
        elif out == "float":
            dtype = float_of(dtype)
        elif out == "div":
            dtype = dtype if kw.get("rounding_mode") else float_of(dtype)
        outs = None if shape is None else [Out(shape, dtype)]
        return Call(expr, outs, _uses(v, other))

    return OpEntry(name, draw)


def _alpha(b: Builder) -> dict:
    return {"alpha": b.rng.choice(["2", "0.5", "-1"])} if b.rng.random() < 0.15 else {}


def _rounding(b: Builder) -> dict:
    r = b.rng.random()
    if r < 0.2:
        return {"rounding_mode": "'floor'"}
    if r < 0.3:
        return {"rounding_mode": "'trunc'"}
    return {}


def reduce_shape(shape: tuple[int, ...], dims: tuple[int, ...] | None, keepdim: bool) -> tuple[int, ...]:
    if dims is None:
        return tuple(1 for _ in shape) if keepdim else ()
    nd = max(len(shape), 1)
    norm = {d % nd for d in dims}
    if not shape:
        return ()
    return tuple(1 if i in norm else n for i, n in enumerate(shape) if keepdim or i not in norm)


def reduction(name: str, out: str = "same", dim_kind: str = "any", extra: Callable[[Builder, Var], dict] | None = None,
              full: bool = True, weight: float = 1.0) -> OpEntry:
    """``sum``-like ops: over everything, over a dim, over a tuple of dims, with or without keepdim."""

    def draw(b: Builder) -> Call:
        v = b.pick_or_new(unknown=True)
        kw = extra(b, v) if extra else {}
        r = b.rng.random()
        dims: tuple[int, ...] | None
        if full and (r < 0.35 or dim_kind == "none" or not v.known):
            dims, args = None, []
        else:
            d = b.dim(v)
            if dim_kind == "tuple" and v.ndim >= 2 and b.rng.random() < 0.3:
                dims = (0, v.ndim - 1)
                args = [f"dim={dims!r}"]
            else:
                dims = (d,)
                args = [f"dim={d}" if b.rng.random() < 0.5 else str(d)]
            if b.rng.random() < 0.35:
                kw["keepdim"] = "True"
        keep = kw.get("keepdim") == "True"
        if dims is not None and any(d >= max(v.ndim, 1) or d < -max(v.ndim, 1) for d in dims):
            outs = None
        else:
            shape = reduce_shape(v.shape, dims, keep)
            dtype = {"same": v.dtype, "float": float_of(v.dtype), "int64": "int64",
                     "sum": "int64" if v.dtype not in FLOAT else v.dtype}[out]
            outs = [Out(shape, dtype)]
        expr = b.call(name, v.name, args, kw)
        return Call(expr, outs, [v])

    return OpEntry(name, draw, weight)


def _std_extra(b: Builder, v: Var) -> dict:
    r = b.rng.random()
    if r < 0.2:
        return {"unbiased": "False"}
    if r < 0.35:
        return {"correction": b.rng.choice(["0", "2"])}
    return {}


def _norm_extra(b: Builder, v: Var) -> dict:
    r = b.rng.random()
    if r < 0.5:
        return {}
    return {"p": b.rng.choice(["1", "2", "3", "inf", "-inf", "0.5", "0", "'fro'"])}


def draw_max_like(name: str) -> OpEntry:
    """``max``/``min``: over everything, over a dim (values and indices), or of two tensors."""

    def draw(b: Builder) -> Call:
        v = b.pick_or_new()
        r = b.rng.random()
        if r < 0.4:
            return Call(b.call(name, v.name), [Out((), v.dtype)], [v])
        if r < 0.8:
            d = b.dim(v)
            keep = b.rng.random() < 0.3
            kw = {"keepdim": "True"} if keep else {}
            expr = b.call(name, v.name, [f"dim={d}" if b.rng.random() < 0.5 else str(d)], kw)
            if d >= max(v.ndim, 1):
                return Call(expr, None, [v])
            shape = reduce_shape(v.shape, (d,), keep)
            b.tags.add(f"{name}:dim")
            return Call(expr, [Out(shape, v.dtype), Out(shape, "int64")], [v], multi=True)
        other = b.operand(v.shape, dtype_hint=v.dtype, scalars=False)
        shape = V.broadcast(v.shape, other.shape or ())
        outs = None if shape is None else [Out(shape, result_dtype([_var_op(v), other]))]
        return Call(b.call(name, v.name, [other.text]), outs, _uses(v, other))

    return OpEntry(name, draw)


def arg_reduction(name: str) -> OpEntry:
    def draw(b: Builder) -> Call:
        v = b.pick_or_new()
        if b.rng.random() < 0.4:
            return Call(b.call(name, v.name), [Out((), "int64")], [v])
        d = b.dim(v)
        keep = b.rng.random() < 0.3
        expr = b.call(name, v.name, [f"dim={d}"], {"keepdim": "True"} if keep else {})
        if d >= max(v.ndim, 1):
            return Call(expr, None, [v])
        return Call(expr, [Out(reduce_shape(v.shape, (d,), keep), "int64")], [v])

    return OpEntry(name, draw)


def dim_op(name: str, out: str = "same", functional: bool = False) -> OpEntry:
    """softmax, log_softmax, cumsum, logsumexp-like ops that take one required dim."""

    def draw(b: Builder) -> Call:
        v = b.pick_or_new()
        d = b.dim(v)
        forms = ["function", "method"] + (["functional"] if functional else [])
        kw = {}
        if name == "logsumexp" and b.rng.random() < 0.3:
            kw["keepdim"] = "True"
        expr = b.call(name, v.name, [f"dim={d}" if b.rng.random() < 0.6 else str(d)], kw, forms=forms)
        if d >= max(v.ndim, 1):
            return Call(expr, None, [v])
        if name == "logsumexp":
            shape = reduce_shape(v.shape, (d,), "keepdim" in kw)
        else:
            shape = v.shape
        dtype = {"same": v.dtype, "float": float_of(v.dtype), "sum": "int64" if v.dtype not in FLOAT else v.dtype}[out]
        return Call(expr, [Out(shape, dtype)], [v])

    return OpEntry(name, draw)


# -- matrix products ---------------------------------------------------------------------------------


def _matrix(b: Builder, shape: tuple[int, ...], dtype: str) -> Var:
    v = b.pick(lambda u: u.shape == shape and u.dtype == dtype)
    if v is None or b.rng.random() < 0.3:
        v = b.new_input(shape=shape, dtype=dtype)
    return v


def matmul_like(name: str) -> OpEntry:
    kinds = {
        "mm": [((2, 3), (3, 2)), ((1, 3), (3, 1)), ((2, 0), (0, 3)), ((3, 3), (3, 3))],
        "mv": [((2, 3), (3,)), ((3, 3), (3,)), ((0, 3), (3,))],
        "dot": [((3,), (3,)), ((0,), (0,)), ((1,), (1,))],
        "outer": [((3,), (2,)), ((1,), (3,)), ((0,), (3,))],
        "bmm": [((2, 3, 2), (2, 2, 3)), ((1, 2, 3), (1, 3, 1))],
        "matmul": [((2, 3), (3, 2)), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 2, 3), (3, 2)),
                   ((2, 1, 3), (2, 3, 1)), ((3, 1), (1, 3)), ((2, 3), (2, 3))],
    }[name]

    def draw(b: Builder) -> Call:
        sa, sb = b.rng.choice(kinds)
        a = b.pick(lambda u: u.shape == sa)
        if a is None or b.rng.random() < 0.3:
            a = b.new_input(shape=sa)
        bb = _matrix(b, sb, a.dtype if b.rng.random() < 0.85 else b.rng.choice(["float32", "float64"]))
        if name == "matmul" and b.rng.random() < 0.4:
            expr = f"{a.name} @ {bb.name}"
            b.tags.add("form:operator")
        else:
            expr = b.call(name, a.name, [bb.name])
        out = _matmul_shape(name, sa, sb)
        outs = None if out is None or a.dtype != bb.dtype else [Out(out, a.dtype)]
        return Call(expr, outs, [a, bb])

    return OpEntry(name, draw)


def _matmul_shape(name: str, sa: tuple[int, ...], sb: tuple[int, ...]) -> tuple[int, ...] | None:
    if name == "outer":
        return (sa[0], sb[0])
    if name == "dot":
        return ()
    if len(sa) == 1 and len(sb) == 1:
        return () if sa == sb else None
    if len(sb) == 1:
        return sa[:-1] if sa[-1] == sb[0] else None
    if len(sa) == 1:
        return sb[:-2] + sb[-1:] if sa[0] == sb[-2] else None
    if sa[-1] != sb[-2]:
        return None
    batch = V.broadcast(sa[:-2], sb[:-2])
    return None if batch is None else batch + (sa[-2], sb[-1])


# -- shape and view ops ---------------------------------------------------------------------------------


def _perm(b: Builder, n: int) -> list[int]:
    p = list(range(n))
    b.rng.shuffle(p)
    return p


def _draw_reshape_target(b: Builder, v: Var) -> tuple[str, tuple[int, ...]]:
    n = v.numel
    options = [((n,), f"{n}"), ((-1,), "-1")]
    if n % 2 == 0 and n:
        options += [((2, n // 2), f"2, {n // 2}"), ((-1, 2), "-1, 2")]
    if n == 1:
        options += [((), "()"), ((1, 1), "1, 1")]
    if n == 0:
        options += [((0, 2), "0, 2")]
    shape, text = b.rng.choice(options)
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        shape = tuple((n // known if known else 0) if s == -1 else s for s in shape)
    return text, shape


def _view_like(name: str) -> OpEntry:
    def draw(b: Builder) -> Call:
        v = b.pick_or_new()
        text, shape = _draw_reshape_target(b, v)
        if name == "flatten":
            if v.ndim >= 2 and b.rng.random() < 0.4:
                expr = b.call("flatten", v.name, ["1"])
                shape = v.shape[:1] + (int(np.prod(v.shape[1:])),)
            else:
                expr = b.call("flatten", v.name)
                shape = (v.numel,)
            return Call(expr, [Out(shape, v.dtype, view=True)], [v])
        if name == "reshape":
            return Call(b.call("reshape", v.name, [f"({text},)" if text != "()" else "()"]),
                        [Out(shape, v.dtype, view=True)], [v])
        args = "" if text == "()" else text
        expr = f"{v.name}.view({args})" if args else f"{v.name}.view(())"
        return Call(expr, [Out(shape, v.dtype, view=True)], [v])

    return OpEntry(name, draw)


def _draw_as(name: str) -> OpEntry:
    def draw(b: Builder) -> Call:
        v = b.pick_or_new()
        if name in ("view_as", "reshape_as"):
            _, shape = _draw_reshape_target(b, v)
            other = b.pick(lambda u: u.numel == v.numel and u is not v)
            if other is None:
                other = b.new_input(shape=shape, dtype=v.dtype, rg=False)
            return Call(f"{v.name}.{name}({other.name})", [Out(other.shape, v.dtype, view=True)], [v], rg=v.rg)
        if name == "expand_as":
            shape = V.broadcast_partner(v.shape, b.rng)
            full = V.broadcast(v.shape, shape)
            other = b.new_input(shape=full or shape, dtype=v.dtype, rg=False)
            outs = None if full is None or len(full) < v.ndim else [Out(full, v.dtype, view=True)]
            return Call(f"{v.name}.expand_as({other.name})", outs, [v], rg=v.rg)
        other = b.pick_or_new(lambda u: u is not v)
        return Call(f"{v.name}.type_as({other.name})", [Out(v.shape, other.dtype)], [v],
                    rg=v.rg and other.dtype in FLOAT)

    return OpEntry(name, draw)


def _transpose(b: Builder) -> Call:
    v = b.pick_or_new()
    d0, d1 = b.dim(v), b.dim(v)
    shape = list(v.shape)
    if v.ndim:
        n0, n1 = d0 % v.ndim, d1 % v.ndim if d1 < v.ndim else d1
        if d0 < v.ndim and d1 < v.ndim:
            shape[n0], shape[n1] = shape[n1], shape[n0]
        else:
            return Call(b.call("transpose", v.name, [str(d0), str(d1)]), None, [v])
    return Call(b.call("transpose", v.name, [str(d0), str(d1)]), [Out(tuple(shape), v.dtype, view=True)], [v])


def _permute(b: Builder) -> Call:
    v = b.pick_or_new()
    p = _perm(b, v.ndim)
    shape = tuple(v.shape[i] for i in p)
    args = ", ".join(map(str, p))
    expr = b.call("permute", v.name, [args] if args else [], forms=("method",)) if b.rng.random() < 0.7 else \
        f"torch.permute({v.name}, ({args}{',' if len(p) == 1 else ''}))"
    return Call(expr, [Out(shape, v.dtype, view=True)], [v])


def _t(b: Builder) -> Call:
    v = b.pick_or_new(lambda u: u.ndim <= 2)
    shape = v.shape[::-1]
    outs = [Out(shape, v.dtype, view=True)] if v.ndim <= 2 else None
    return Call(b.call("t", v.name), outs, [v])


def _T(b: Builder) -> Call:
    v = b.pick_or_new()
    if v.ndim not in (0, 2):
        b.tags.add("T:deprecated-ndim")
    return Call(f"{v.name}.T", [Out(v.shape[::-1], v.dtype, view=True)], [v])


def _mT(b: Builder) -> Call:
    v = b.pick_or_new(lambda u: u.ndim >= 2)
    if v.ndim < 2:
        return Call(f"{v.name}.mT", None, [v])
    return Call(f"{v.name}.mT", [Out(v.shape[:-2] + (v.shape[-1], v.shape[-2]), v.dtype, view=True)], [v])


def _squeeze(b: Builder) -> Call:
    v = b.pick_or_new()
    r = b.rng.random()
    if r < 0.4:
        return Call(b.call("squeeze", v.name), [Out(tuple(n for n in v.shape if n != 1), v.dtype, view=True)], [v])
    d = b.dim(v)
    if d >= max(v.ndim, 1):
        return Call(b.call("squeeze", v.name, [str(d)]), None, [v])
    nd = d % max(v.ndim, 1)
    shape = tuple(n for i, n in enumerate(v.shape) if not (i == nd and n == 1))
    arg = f"({d},)" if r < 0.55 else str(d)
    return Call(b.call("squeeze", v.name, [arg]), [Out(shape, v.dtype, view=True)], [v])


def _unsqueeze(b: Builder) -> Call:
    v = b.pick_or_new()
    d = b.rng.randint(-v.ndim - 1, v.ndim)
    nd = d % (v.ndim + 1)
    shape = v.shape[:nd] + (1,) + v.shape[nd:]
    return Call(b.call("unsqueeze", v.name, [str(d)]), [Out(shape, v.dtype, view=True)], [v])


def _expand(b: Builder) -> Call:
    v = b.pick_or_new()
    target = V.broadcast_partner(v.shape, b.rng)
    full = V.broadcast(v.shape, target)
    if full is None or len(full) < v.ndim:
        return Call(f"{v.name}.expand({', '.join(map(str, target))})", None, [v])
    sizes = [str(n) if b.rng.random() < 0.8 or i < len(full) - v.ndim else "-1" for i, n in enumerate(full)]
    text = ", ".join(sizes) if sizes else ""
    expr = f"{v.name}.expand({text})" if text else f"{v.name}.expand(())"
    return Call(expr, [Out(full, v.dtype, view=True)], [v])


def _repeat(b: Builder) -> Call:
    v = b.pick_or_new()
    reps = [b.rng.choice([1, 2]) for _ in range(v.ndim + b.rng.choice([0, 0, 1]))]
    if not reps:
        reps = [2]
    shape = list((1,) * (len(reps) - v.ndim) + v.shape)
    shape = tuple(n * r for n, r in zip(shape, reps))
    return Call(f"{v.name}.repeat({', '.join(map(str, reps))})", [Out(shape, v.dtype)], [v])


def _narrow(b: Builder) -> Call:
    v = b.pick_or_new(lambda u: u.ndim >= 1)
    if v.ndim == 0:
        return Call(b.call("narrow", v.name, ["0", "0", "1"]), None, [v])
    d = b.rng.randint(0, v.ndim - 1)
    n = v.shape[d]
    start = b.rng.randint(0, n)
    length = b.rng.randint(0, n - start)
    shape = v.shape[:d] + (length,) + v.shape[d + 1:]
    return Call(b.call("narrow", v.name, [str(d), str(start), str(length)]), [Out(shape, v.dtype, view=True)], [v])


def _index(b: Builder) -> Call:
    """``__getitem__``: ints, slices, None, Ellipsis, bool masks, integer lists and tensors, ``[[]]``."""
    v = b.pick_or_new(lambda u: u.ndim >= 1)
    rng = b.rng
    if v.ndim == 0:
        choice = rng.choice(["None", "...", "v>0"])
        if choice == "None":
            return Call(f"{v.name}[None]", [Out((1,), v.dtype, view=True)], [v])
        if choice == "...":
            return Call(f"{v.name}[...]", [Out((), v.dtype, view=True)], [v])
        return Call(f"{v.name}[{v.name} > 0]", [Out((-1,), v.dtype)], [v], tags=("index:mask",))
    n = v.shape[0]
    r = rng.random()
    if r < 0.25 and n:
        i = rng.randint(-n, n - 1)
        b.tags.add("index:int")
        return Call(f"{v.name}[{i}]", [Out(v.shape[1:], v.dtype, view=True)], [v])
    if r < 0.45:
        lo = rng.randint(0, n)
        hi = rng.choice([None, rng.randint(lo, n)])
        step = rng.choice([None, None, 2])
        text = f"{lo}:{'' if hi is None else hi}{'' if step is None else f':{step}'}"
        if rng.random() < 0.2:
            text = ":"
            lo, hi, step = 0, None, None
        size = len(range(lo, n if hi is None else hi, step or 1))
        b.tags.add("index:slice")
        return Call(f"{v.name}[{text}]", [Out((size,) + v.shape[1:], v.dtype, view=True)], [v])
    if r < 0.55:
        b.tags.add("index:None/Ellipsis")
        if v.ndim >= 2 and rng.random() < 0.5:
            return Call(f"{v.name}[..., 0]" if v.shape[-1] else f"{v.name}[..., :0]",
                        [Out(v.shape[:-1] if v.shape[-1] else v.shape, v.dtype, view=True)], [v])
        return Call(f"{v.name}[None]", [Out((1,) + v.shape, v.dtype, view=True)], [v])
    if r < 0.7:
        b.tags.add("index:mask")
        cmp = rng.choice([">", "<", "=="])
        return Call(f"{v.name}[{v.name} {cmp} 0]", [Out((-1,), v.dtype)], [v])
    if r < 0.9:
        b.tags.add("index:int list")
        k = rng.randint(0, 3)
        idx = [rng.randint(-n, n - 1) for _ in range(k)] if n else []
        if rng.random() < 0.5:
            text = f"{v.name}[torch.tensor({idx!r}, dtype=torch.int64)]"
        else:
            text = f"{v.name}[{idx!r}]"
        if not idx:
            b.tags.add("index:empty list")
        return Call(text, [Out((len(idx),) + v.shape[1:], v.dtype)], [v])
    if v.ndim >= 2 and n and v.shape[1]:
        b.tags.add("index:mixed")
        return Call(f"{v.name}[:, 0]", [Out((n,) + v.shape[2:], v.dtype, view=True)], [v])
    return Call(f"{v.name}[0:1]", [Out((min(1, n),) + v.shape[1:], v.dtype, view=True)], [v])


def _gather(b: Builder) -> Call:
    v = b.pick_or_new(lambda u: u.ndim >= 1)
    if v.ndim == 0:
        return Call(f"torch.gather({v.name}, 0, torch.tensor(0))", [Out((), v.dtype)], [v])
    d = b.rng.randint(0, v.ndim - 1)
    n = v.shape[d]
    shape = tuple(b.rng.randint(0, s) if i != d else b.rng.randint(0, 3) for i, s in enumerate(v.shape))
    if n == 0:
        shape = tuple(0 if i == d else s for i, s in enumerate(shape))
    arr = np.array([b.rng.randint(0, max(n - 1, 0)) for _ in range(int(np.prod(shape)))], dtype="int64")
    idx = f"torch.tensor({array_literal(arr.reshape(shape))})"
    b.tags.add("gather:smaller index" if shape != v.shape else "gather:same shape")
    return Call(b.call("gather", v.name, [str(d), idx]), [Out(shape, v.dtype)], [v])


def _scatter(name: str) -> OpEntry:
    """``scatter``/``scatter_add`` (``scatter_`` in place): an index no larger than the input, a source or a value."""

    def args(b: Builder, v: Var) -> tuple[list[str], list[Var]]:
        rng = b.rng
        d = rng.randint(0, v.ndim - 1) if v.ndim else 0
        shape = tuple(rng.randint(0, s) for s in v.shape)
        n = v.shape[d] if v.ndim else 1
        arr = np.array([rng.randint(0, max(n - 1, 0)) for _ in range(int(np.prod(shape)))], dtype="int64")
        idx = f"torch.tensor({array_literal(arr.reshape(shape))})"
        if name.startswith("scatter_add") or rng.random() < 0.7:
            src = b.pick(lambda u: u.shape == v.shape and u.dtype == v.dtype)
            src = src or b.new_input(shape=v.shape, dtype=v.dtype)
            return [str(d), idx, src.name], [src]
        return [str(d), idx, f"value={rng.choice(['1.5', '0.0', '-inf'])}"], []

    if name.endswith("_"):
        def draw_inplace(b: Builder, t: Var) -> Call:
            texts, uses = args(b, t)
            return Call(f"{t.name}.{name}({', '.join(texts)})", [], [t, *uses], inplace=t)

        return OpEntry(name, draw_inplace, inplace=True, fits=lambda u: u.is_float and u.known)

    def draw(b: Builder) -> Call:
        v = b.pick_or_new(lambda u: u.is_float)
        texts, uses = args(b, v)
        return Call(b.call(name, v.name, texts), [Out(v.shape, v.dtype)], [v, *uses])

    return OpEntry(name, draw)


def _cat_stack(name: str) -> OpEntry:
    def draw(b: Builder) -> Call:
        v = b.pick_or_new()
        k = b.rng.randint(1, 3)
        parts = [v]
        d = b.dim(v, allow_bad=False) if v.ndim else 0
        for _ in range(k - 1):
            if name == "cat" and v.ndim:
                nd = d % v.ndim
                shape = tuple(b.rng.choice([0, 1, 2]) if i == nd else s for i, s in enumerate(v.shape))
            else:
                shape = v.shape
            dtype = v.dtype if b.rng.random() < 0.85 else b.rng.choice(["float32", "float64", "int64"])
            other = b.pick(lambda u, s=shape, t=dtype: u.shape == s and u.dtype == t and u is not v)
            if other is None or b.rng.random() < 0.4:
                other = b.new_input(shape=shape, dtype=dtype)
            parts.append(other)
        names = ", ".join(p.name for p in parts)
        seq = f"[{names}]" if b.rng.random() < 0.7 else f"({names},)"
        expr = f"torch.{name}({seq}, dim={d})" if b.rng.random() < 0.6 else f"torch.{name}({seq}, {d})"
        dtype = result_dtype([_var_op(p) for p in parts])
        if name == "stack":
            nd = d % (v.ndim + 1)
            shape = v.shape[:nd] + (len(parts),) + v.shape[nd:]
        elif v.ndim == 0:
            return Call(expr, None, parts)
        else:
            nd = d % v.ndim
            shape = tuple(sum(p.shape[nd] for p in parts) if i == nd else s for i, s in enumerate(v.shape))
        return Call(expr, [Out(shape, dtype)], parts)

    return OpEntry(name, draw)


def _split_like(name: str) -> OpEntry:
    def draw(b: Builder) -> Call:
        v = b.pick_or_new(lambda u: u.ndim >= 1)
        if v.ndim == 0:
            return Call(b.call(name, v.name, ["1"]), None, [v])
        d = b.rng.randint(-v.ndim, v.ndim - 1)
        nd = d % v.ndim
        n = v.shape[nd]
        if name == "unbind":
            outs = [Out(v.shape[:nd] + v.shape[nd + 1:], v.dtype, view=True) for _ in range(n)]
            return Call(b.call("unbind", v.name, [str(d)]), outs, [v], multi=True)
        if name == "split":
            if b.rng.random() < 0.3 and n:
                first = b.rng.randint(0, n)
                sizes = [first, n - first]
                expr = b.call("split", v.name, [repr(sizes), f"dim={d}"])
            else:
                size = b.rng.randint(1, 2)
                sizes = [size] * (n // size) + ([n % size] if n % size else []) if n else [0]
                expr = b.call("split", v.name, [str(size), f"dim={d}"])
        else:
            chunks = b.rng.randint(1, 3)
            per = -(-n // chunks) if n else 0
            sizes = [min(per, n - i) for i in range(0, n, per)] if per else [0]
            expr = b.call("chunk", v.name, [str(chunks), f"dim={d}"])
        outs = [Out(v.shape[:nd] + (s,) + v.shape[nd + 1:], v.dtype, view=True) for s in sizes]
        return Call(expr, outs, [v], multi=True)

    return OpEntry(name, draw)


def _clamp(b: Builder) -> Call:
    v = b.pick_or_new()
    r = b.rng.random()
    kw: dict[str, str] = {}
    used: list = [v]
    shape = v.shape
    if r < 0.55:
        lo, hi = b.rng.choice([("-1.0", "1.0"), ("0", None), (None, "0.5"), ("0.0", "0.0"), ("1", "-1"),
                               ("-inf", "nan"), ("-0.5", None)])
        if lo is not None:
            kw["min"] = lo
        if hi is not None:
            kw["max"] = hi
    else:
        b.tags.add("clamp:tensor bounds")
        for key in b.rng.choice([("min",), ("max",), ("min", "max")]):
            o = b.operand(v.shape, dtype_hint=v.dtype, scalars=False) if b.rng.random() < 0.7 else \
                Operand(f"torch.tensor({b.rng.choice(['0.0', '-1.0', '1.0'])}, dtype=torch.{float_of(v.dtype)})",
                        float_of(v.dtype), ())
            kw[key] = o.text
            used.extend(_uses(o))
            shape = V.broadcast(shape, o.shape or ()) or shape
    expr = b.call("clamp", v.name, [], kw)
    return Call(expr, [Out(shape, v.dtype)], used)


def _where(b: Builder) -> Call:
    v = b.pick_or_new()
    other = b.operand(v.shape, dtype_hint=v.dtype)
    cond = f"{v.name} > 0" if b.rng.random() < 0.6 else b.constant(V.broadcastable_to(v.shape, b.rng), "bool")
    if b.rng.random() < 0.5:
        expr = f"torch.where({cond}, {v.name}, {other.text})"
    else:
        expr = f"torch.where({cond}, {other.text}, {v.name})"
    shape = V.broadcast(v.shape, other.shape or ())
    outs = None if shape is None else [Out(shape, result_dtype([_var_op(v), other]))]
    return Call(expr, outs, _uses(v, other))


def _masked_fill(b: Builder) -> Call:
    v = b.pick_or_new()
    mshape = V.broadcast_partner(v.shape, b.rng)
    mask = f"{v.name} < 0" if b.rng.random() < 0.4 else b.constant(mshape, "bool")
    if mask.endswith("< 0"):
        mshape = v.shape
    value = b.rng.choice(["0.0", "-1.0", "inf", "nan", "2"]) if b.rng.random() < 0.7 else \
        f"torch.tensor({b.rng.choice(['0.0', '5.0'])})"
    if value.startswith("torch"):
        b.tags.add("masked_fill:0-d tensor value")
    shape = V.broadcast(v.shape, mshape)
    return Call(b.call("masked_fill", v.name, [mask, value]), None if shape is None else [Out(shape, v.dtype)], [v])


def _pairwise_bool(name: str) -> OpEntry:
    def draw(b: Builder) -> Call:
        v = b.pick_or_new()
        other = b.operand(v.shape, dtype_hint=v.dtype, scalars=False)
        if name == "isclose":
            shape = V.broadcast(v.shape, other.shape or ())
            return Call(b.call(name, v.name, [other.text]), None if shape is None else [Out(shape, "bool")],
                        _uses(v, other), rg=False)
        return Call(b.call(name, v.name, [other.text]), [], _uses(v, other))

    return OpEntry(name, draw)


def _conversion(name: str) -> OpEntry:
    target = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
              "bool": "bool", "byte": "uint8", "short": "int16"}

    def draw(b: Builder) -> Call:
        v = b.pick_or_new()
        if name == "to":
            dt = b.rng.choice(["float32", "float64", "int64", "bool"])
            expr = f"{v.name}.to(torch.{dt})" if b.rng.random() < 0.7 else f"{v.name}.to(dtype=torch.{dt})"
        else:
            dt = target[name]
            expr = f"{v.name}.{name}()"
        return Call(expr, [Out(v.shape, dt)], [v], rg=v.rg and dt in FLOAT)

    return OpEntry(name, draw)


def _bincount(b: Builder) -> Call:
    """``bincount`` counts a 1-d literal of non-negative ints (optionally weighted); never differentiable."""
    rng = b.rng
    vals = [rng.randint(0, 4) for _ in range(rng.randint(0, 5))]
    minlength = rng.choice([0, 0, 3, 6])
    size = max(max(vals, default=-1) + 1, minlength)
    args = [f"torch.tensor({vals!r}, dtype=torch.int64)"]
    dtype, uses = "int64", []
    if vals and rng.random() < 0.4:
        w = b.new_input((len(vals),), dtype=rng.choice(["float32", "float64"]), rg=False)
        args.append(f"weights={w.name}")
        dtype, uses = w.dtype, [w]
    if minlength:
        args.append(f"minlength={minlength}")
    b.tags.add("bincount:weights" if len(uses) else "bincount:counts")
    return Call(f"torch.bincount({', '.join(args)})", [Out((size,), dtype)], uses, rg=False)


def _method0(name: str, view: bool = False) -> OpEntry:
    def draw(b: Builder) -> Call:
        v = b.pick_or_new()
        if name == "clone" and b.rng.random() < 0.3:
            return Call(f"torch.clone({v.name})", [Out(v.shape, v.dtype)], [v])
        return Call(f"{v.name}.{name}()", [Out(v.shape, v.dtype, view=view)], [v])

    return OpEntry(name, draw)


def _like(name: str) -> OpEntry:
    def draw(b: Builder) -> Call:
        v = b.pick_or_new()
        kw = {}
        if b.rng.random() < 0.3:
            kw["requires_grad"] = "True"
        if b.rng.random() < 0.2:
            kw["dtype"] = f"torch.{b.rng.choice(['float64', 'float32'])}"
        args = [b.rng.choice(["2.5", "-inf", "0"])] if name == "full_like" else []
        expr = f"torch.{name}({', '.join([v.name, *args, *(f'{k}={x}' for k, x in kw.items())])})"
        dtype = kw.get("dtype", f"torch.{v.dtype}").split(".")[1]
        return Call(expr, [Out(v.shape, dtype)], [], rg="requires_grad" in kw and dtype in FLOAT)

    return OpEntry(name, draw)


def _creation(name: str) -> OpEntry:
    def draw(b: Builder) -> Call:
        rng = b.rng
        rg = rng.random() < 0.4
        kw = ", requires_grad=True" if rg else ""
        if name in ("zeros", "ones"):
            shape = V.draw_shape(rng)
            expr = f"torch.{name}({', '.join(map(str, shape)) or '()'}{kw})"
            return Call(expr, [Out(shape, "float32")], [], rg=rg)
        if name == "full":
            shape = V.draw_shape(rng)
            return Call(f"torch.full({shape!r}, {rng.choice(['1.5', '-2.0', 'nan'])}{kw})", [Out(shape, "float32")],
                        [], rg=rg)
        if name == "arange":
            n = rng.randint(0, 4)
            if rng.random() < 0.5:
                return Call(f"torch.arange({n}.0{kw})", [Out((n,), "float32")], [], rg=rg)
            return Call(f"torch.arange({n})", [Out((n,), "int64")], [], rg=False)
        if name == "eye":
            n = rng.randint(0, 3)
            return Call(f"torch.eye({n}{kw})", [Out((n, n), "float32")], [], rg=rg)
        if name == "tensor":
            v = b.pick_or_new()
            return Call(f"torch.tensor({v.name})", [Out(v.shape, v.dtype)], [v], rg=False)
        if name == "from_numpy":
            shape, dtype = V.draw_shape(rng), rng.choice(["float64", "float32", "int64"])
            arr = V.draw_array(rng, shape, dtype)
            return Call(f"torch.from_numpy({array_literal(arr)})", [Out(shape, dtype)], [], rg=False)
        if name == "as_tensor":
            v = b.pick_or_new()
            return Call(f"torch.as_tensor({v.name}, dtype=torch.float64)", [Out(v.shape, "float64")], [v],
                        rg=v.rg)
        raise AssertionError(name)

    return OpEntry(name, draw, weight=0.5)


def _to_python(name: str) -> OpEntry:
    def draw(b: Builder) -> Call:
        v = b.pick_or_new(lambda u: u.numel == 1 or name == "tolist")
        return Call(f"{v.name}.{name}()", [], [v])

    return OpEntry(name, draw, weight=0.5)


# -- nn.functional ---------------------------------------------------------------------------------


def _linear(b: Builder) -> Call:
    rng = b.rng
    x = b.pick(lambda u: u.ndim in (1, 2) and u.is_float)
    if x is None or rng.random() < 0.3:
        x = b.new_input(shape=rng.choice([(2, 3), (3,), (1, 3), (0, 3)]), dtype=rng.choice(["float32", "float64"]))
    k = x.shape[-1]
    n = rng.choice([1, 2])
    w = b.new_input(shape=(n, k), dtype=x.dtype if rng.random() < 0.9 else "float32")
    uses = [x, w]
    args = [x.name, w.name]
    if rng.random() < 0.6:
        bias = b.new_input(shape=(n,), dtype=w.dtype)
        uses.append(bias)
        args.append(bias.name)
    shape = x.shape[:-1] + (n,)
    return Call(f"torch.nn.functional.linear({', '.join(args)})", [Out(shape, x.dtype)] if x.dtype == w.dtype else None,
                uses)


def _loss(name: str) -> OpEntry:
    def draw(b: Builder) -> Call:
        rng = b.rng
        red = rng.choice([None, None, "'mean'", "'sum'", "'none'"])
        kw = f", reduction={red}" if red else ""
        if name in ("mse_loss", "l1_loss"):
            a = b.pick_or_new()
            other = b.operand(a.shape, dtype_hint=a.dtype, scalars=False)
            shape = V.broadcast(a.shape, other.shape or ()) if red == "'none'" else ()
            if other.shape != a.shape:
                b.tags.add("loss:broadcast")
            return Call(f"torch.nn.functional.{name}({a.name}, {other.text}{kw})",
                        None if shape is None else [Out(shape, a.dtype)], _uses(a, other))
        if name in ("binary_cross_entropy", "binary_cross_entropy_with_logits"):
            a = b.pick_or_new(lambda u: u.is_float)
            inp = f"torch.sigmoid({a.name})" if name == "binary_cross_entropy" and rng.random() < 0.7 else a.name
            target = b.constant(a.shape, a.dtype if a.is_float else "float32", style="positive")
            target = f"({target} / 3).clamp(0, 1)"
            shape = a.shape if red == "'none'" else ()
            return Call(f"torch.nn.functional.{name}({inp}, {target}{kw})", [Out(shape, float_of(a.dtype))], [a])
        # cross_entropy / nll_loss: (N, C) or (C,) inputs, integer class targets
        shape = rng.choice([(2, 3), (3,), (1, 3), (0, 3)])
        a = b.pick(lambda u: u.shape == shape and u.is_float)
        if a is None or rng.random() < 0.4:
            a = b.new_input(shape=shape, dtype=rng.choice(["float32", "float64"]))
        classes = shape[-1]
        n = shape[0] if len(shape) == 2 else None
        tdtype = "int64" if rng.random() < 0.9 else "int32"
        vals = np.array([rng.randint(0, classes - 1) for _ in range(n if n is not None else 1)], dtype=tdtype)
        if n is None:
            vals = vals.reshape(())
        target = f"torch.tensor({array_literal(vals)})"
        inp = a.name
        if name == "nll_loss" and rng.random() < 0.7:
            inp = f"torch.log_softmax({a.name}, dim=-1)"
        out_shape = ((n,) if n is not None else ()) if red == "'none'" else ()
        return Call(f"torch.nn.functional.{name}({inp}, {target}{kw})", [Out(out_shape, a.dtype)], [a])

    return OpEntry(f"nn.functional.{name}", draw)


def _softmax_f(name: str) -> OpEntry:
    def draw(b: Builder) -> Call:
        v = b.pick_or_new()
        d = b.dim(v)
        outs = None if d >= max(v.ndim, 1) else [Out(v.shape, float_of(v.dtype))]
        return Call(f"torch.nn.functional.{name}({v.name}, dim={d})", outs, [v])

    return OpEntry(f"nn.functional.{name}", draw)


# -- in-place ops (draw(b, target)) ---------------------------------------------------------------


def inplace(name: str, symbol: str | None = None) -> OpEntry:
    """An in-place op on ``target``: ``target.add_(other)``, ``target += other``, ``target[idx] = value``."""

    def draw(b: Builder, t: Var) -> Call:
        rng = b.rng
        uses = [t]
        if name in ("zero_",):
            expr = f"{t.name}.zero_()"
        elif name == "fill_":
            val = rng.choice(["1.5", "0", "-inf", "nan"]) if rng.random() < 0.8 else "torch.tensor(2.0)"
            expr = f"{t.name}.fill_({val})"
        elif name in ("add_", "sub_", "mul_", "div_", "pow_", "floor_divide_") or symbol:
            other = b.operand(t.shape, dtype_hint=t.dtype if t.is_float else "float64", grow=rng.random() < 0.05)
            uses += _uses(other)
            if name == "pow_" and rng.random() < 0.6:
                other = Operand(rng.choice(["2", "0.5", "-1", "0"]), "float32", None)
            if symbol:
                expr = f"{t.name} {symbol} {other.text}"
            else:
                expr = f"{t.name}.{name}({other.text})"
        elif name == "clamp_":
            lo, hi = rng.choice([("0", None), ("-1.0", "1.0"), (None, "0.0")])
            parts = ([f"min={lo}"] if lo else []) + ([f"max={hi}"] if hi else [])
            expr = f"{t.name}.clamp_({', '.join(parts)})"
        elif name == "copy_":
            other = b.operand(t.shape, dtype_hint=t.dtype, grow=False, scalars=False)
            uses += _uses(other)
            expr = f"{t.name}.copy_({_into(t, other)})"
        elif name == "masked_fill_":
            mask = b.constant(V.broadcastable_to(t.shape, rng), "bool")
            expr = f"{t.name}.masked_fill_({mask}, {rng.choice(['0.0', '-1.0', 'inf'])})"
        elif name == "__setitem__":
            idx, sub = _setitem_index(b, t)
            if rng.random() < 0.5:
                src = b.operand(sub, dtype_hint=t.dtype, grow=False)
                uses += _uses(src)
                value = _into(t, src)
            else:
                value = rng.choice(["0.0", "5.0", "-inf", "nan", "2"])
            expr = f"{t.name}[{idx}] = {value}"
        else:  # unary in-place op (relu_, exp_, ...)
            expr = f"{t.name}.{name}()"
        return Call(expr, [], uses, inplace=t)

    return OpEntry(name, draw, inplace=True)


def _into(t: Var, src: Operand) -> str:
    """The text of a value written into `t`: detached when `t` is an integer or bool tensor and the value may require
    grad (docs/differences.md, "Integer and bool tensors written with a value that requires grad")."""
    return f"{src.text}.detach()" if not t.is_float and src.rg else src.text


def _setitem_index(b: Builder, t: Var) -> tuple[str, tuple[int, ...]]:
    rng = b.rng
    if t.ndim == 0:
        return rng.choice([("...", ()), ("None", (1,))])
    n = t.shape[0]
    r = rng.random()
    if r < 0.3 and n:
        return str(rng.randint(-n, n - 1)), t.shape[1:]
    if r < 0.55:
        lo = rng.randint(0, n)
        return f"{lo}:", (n - lo,) + t.shape[1:]
    if r < 0.65:
        return ":", t.shape
    if r < 0.8:
        b.tags.add("setitem:advanced")
        idx = [rng.randint(0, n - 1) for _ in range(rng.randint(1, 2))] if n else []
        return repr(idx), (len(idx),) + t.shape[1:]
    if r < 0.9:
        b.tags.add("setitem:mask")
        return f"{t.name} > 0", ()
    return "None", (1,) + t.shape


# --------------------------------------------------------------------------------------------------
# The catalogue


def _entries() -> list[OpEntry]:
    e: list[OpEntry] = []
    for name in ("exp", "log", "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "sqrt", "rsqrt", "reciprocal"):
        e.append(unary(name, "float"))
    e += [unary("relu", "same"), unary("abs", "same", operator="abs({})"), unary("neg", "same", operator="-{}"),
          unary("square", "same"), unary("sign", "same"), unary("floor", "same"), unary("ceil", "same"),
          unary("round", "same")]
    e += [binary("add", "+", kwargs=_alpha), binary("sub", "-", kwargs=_alpha), binary("mul", "*"),
          binary("div", "/", out="div", kwargs=_rounding), binary("pow", "**"), binary("maximum", None),
          binary("minimum", None), binary("floor_divide", "//", forms=("method",)),
          binary("remainder", "%", forms=("method",))]
    for name, sym in (("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">=")):
        e.append(binary(name, sym, reflect=False, out="bool"))
    e += [OpEntry("clamp", _clamp, 1.5), OpEntry("where", _where), OpEntry("masked_fill", _masked_fill),
          OpEntry("gather", _gather)]
    e += [matmul_like(n) for n in ("matmul", "mm", "mv", "bmm", "dot", "outer")]
    e += [reduction("sum", "sum", "tuple", weight=2.0), reduction("mean", "same", "tuple"),
          reduction("prod", "sum", "one"), draw_max_like("max"), draw_max_like("min"),
          reduction("amax", "same", "tuple"), reduction("amin", "same", "tuple"),
          arg_reduction("argmax"), arg_reduction("argmin"),
          reduction("std", "same", "tuple", extra=_std_extra), reduction("var", "same", "tuple", extra=_std_extra),
          reduction("norm", "float", "tuple", extra=_norm_extra),
          dim_op("logsumexp", "float"), dim_op("softmax", "float"), dim_op("log_softmax", "float"),
          dim_op("cumsum", "sum")]
    e += [_cat_stack("cat"), _cat_stack("stack"), _split_like("split"), _split_like("chunk"), _split_like("unbind")]
    e += [_view_like("flatten"), _view_like("reshape"), _view_like("view"), _draw_as("view_as"),
          _draw_as("reshape_as"), _draw_as("expand_as"), _draw_as("type_as"),
          OpEntry("transpose", _transpose), OpEntry("permute", _permute), OpEntry("t", _t), OpEntry("T", _T),
          OpEntry("mT", _mT), OpEntry("squeeze", _squeeze), OpEntry("unsqueeze", _unsqueeze),
          OpEntry("expand", _expand), OpEntry("repeat", _repeat), OpEntry("narrow", _narrow),
          OpEntry("__getitem__", _index, 2.0), _method0("clone"), _method0("contiguous", view=True)]
    e += [_conversion(n) for n in ("float", "double", "half", "long", "int", "bool", "to",
                                            "byte", "short")]
    e += [OpEntry("bincount", _bincount)]
    e += [_scatter(n) for n in ("scatter", "scatter_add", "scatter_")]
    e += [_pairwise_bool(n) for n in ("allclose", "equal", "isclose")]
    e += [_like(n) for n in ("zeros_like", "ones_like", "full_like")]
    e += [_creation(n) for n in ("zeros", "ones", "full", "arange", "eye", "tensor", "as_tensor", "from_numpy")]
    e += [_to_python("item"), _to_python("tolist")]
    e += [functional_unary(n) for n in ("relu", "sigmoid", "tanh")]
    e += [_softmax_f("softmax"), _softmax_f("log_softmax"), OpEntry("nn.functional.linear", _linear)]
    e += [_loss(n) for n in ("mse_loss", "l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
                             "cross_entropy", "nll_loss")]
    e += [inplace(n) for n in ("zero_", "fill_", "add_", "sub_", "mul_", "div_", "pow_", "floor_divide_", "clamp_",
                               "copy_",
                               "masked_fill_", "__setitem__", "relu_", "exp_", "sigmoid_", "tanh_")]
    e += [inplace(n, sym) for n, sym in (("__iadd__", "+="), ("__isub__", "-="), ("__imul__", "*="),
                                         ("__itruediv__", "/="))]
    return e


DRAWERS: dict[str, OpEntry] = {entry.name: entry for entry in _entries()}

# The ops of the API contract (section 1), as the op registry will spell them: math (also methods),
# creation, conversion, in-place, views and shape, comparisons and the Python operators that have no
# other name (``//``, ``%``, ``+=`` ...), and nn.functional. Not drawn, with the README bullet that
# says why: the random ones and ``empty``/``empty_like`` (exclusions.NOT_DRAWN); and
# attributes that compute nothing (``numpy``, ``size``, ``dim``, ``numel``, ``shape``, ``dtype``).
# Beyond the contract, a few names minigrad has and PyTorch tutorials use (``l1_loss``, ``relu_``,
# ``exp_``, ``sigmoid_``, ``tanh_``).
CONTRACT_NAMES = (
    # math
    "add", "sub", "mul", "div", "neg", "pow", "exp", "log", "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "relu",
    "abs", "sqrt", "rsqrt", "square", "reciprocal", "sign", "clamp", "floor", "ceil", "round", "maximum", "minimum",
    "where", "matmul", "mm", "mv", "bmm", "dot", "outer", "sum", "mean", "prod", "max", "min", "amax", "amin",
    "argmax", "argmin", "std", "var", "norm", "logsumexp", "softmax", "log_softmax", "cumsum", "cat", "stack",
    "split", "chunk", "flatten", "reshape", "transpose", "permute", "squeeze", "unsqueeze", "gather", "masked_fill",
    "allclose", "equal", "isclose",
    # Python operators without another contract name, comparisons
    "floor_divide", "remainder", "eq", "ne", "lt", "le", "gt", "ge",
    # creation
    "tensor", "as_tensor", "from_numpy", "ones", "zeros", "full", "arange", "eye", "ones_like", "zeros_like",
    "full_like",
    # conversion
    "item", "tolist", "float", "double", "long", "int", "bool", "to", "type_as", "clone", "contiguous",
    # in place
    "zero_", "fill_", "add_", "sub_", "mul_", "div_", "pow_", "clamp_", "copy_", "masked_fill_", "__setitem__",
    "__iadd__", "__isub__", "__imul__", "__itruediv__",
    # views and shape
    "view", "view_as", "reshape_as", "t", "T", "mT", "expand", "expand_as", "repeat", "narrow", "unbind",
    "__getitem__",
    # nn.functional
    "nn.functional.relu", "nn.functional.sigmoid", "nn.functional.tanh", "nn.functional.softmax",
    "nn.functional.log_softmax", "nn.functional.linear", "nn.functional.mse_loss", "nn.functional.cross_entropy",
    "nn.functional.nll_loss", "nn.functional.binary_cross_entropy", "nn.functional.binary_cross_entropy_with_logits",
    # beyond the contract
    "nn.functional.l1_loss", "relu_", "exp_", "sigmoid_", "tanh_",
)


def op_names() -> tuple[str, ...]:
    """The names the fuzzer draws: the API contract's, then every public op of the core's registry and its in-place
    variant (a new op is drawn without an edit here), less what docs/differences.md says is not drawn."""
    from .exclusions import NOT_DRAWN

    more = [n for n in derived.fuzz_names(derived.registry()) if n not in CONTRACT_NAMES and n not in NOT_DRAWN]
    return CONTRACT_NAMES + tuple(more)


def build(names) -> tuple[list[OpEntry], list[str]]:
    """Entries for ``names`` (a hand-written draw, else one derived from the registry's samples) and the names
    that have neither (which a test reports)."""
    entries, missing = [], []
    reg = derived.registry()
    for name in names:
        entry = DRAWERS.get(name)
        if entry is None and (name in reg or name.endswith("_") and name[:-1] in reg):
            entry = derived.entry_for(name, reg)
        if entry is None:
            missing.append(name)
        else:
            entries.append(entry)
    return entries, missing


OPS, _MISSING = build(op_names())
PLAIN_OPS = [op for op in OPS if not op.inplace]
INPLACE_OPS = [op for op in OPS if op.inplace]


# -- the op of a step -----------------------------------------------------------------------------------------
# The derived entries (one per registered op) change whenever an op is registered; drawn from the program's one
# random stream, each new op would reshuffle every program of every seed (which op a step takes, and every value
# drawn after it), and the fixed-seed CI set with them. So a step first decides, with one draw of the program's
# stream and a fixed share, whether it takes a derived op. If not, it picks among the hand-written entries from
# the program's stream, as before. If so, a hash of (program, step) picks the derived op on a consistent-hashing
# ring of their names (a new op takes over only the steps whose hash falls just before its points, about 1/N of
# them), and all of its arguments come from a stream of its own (keyed by program, step and op). A new derived op
# therefore leaves every program that does not draw it exactly as it was.
DERIVED_SHARE = {"op": 0.45, "inplace": 0.6, "plain": 0.4}  # of the steps of each kind (about their shares in 2026)


def lists(ops: list[OpEntry]) -> dict[str, tuple[list[OpEntry], list[float], list[OpEntry]]]:
    """(hand-written entries, their cumulative weights, derived entries) of ``ops`` for each kind of step: any op,
    in place, not in place."""
    kinds = {"op": ops, "inplace": [op for op in ops if op.inplace], "plain": [op for op in ops if not op.inplace]}
    out = {}
    for k, v in kinds.items():
        hand = [op for op in v if op.name in DRAWERS]
        derived_ops = [op for op in v if op.name not in DRAWERS]
        out[k] = (hand, list(itertools.accumulate(op.weight for op in hand)), derived_ops)
    return out


LISTS = lists(OPS)


def _hash64(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


_RINGS: dict[tuple, tuple[list[int], list[int]]] = {}
_POINTS = 32  # points per op on the ring: each op's share of the derived steps stays within about 20% of 1/N


def _ring(ops: list[OpEntry]) -> tuple[list[int], list[int]]:
    """A consistent-hashing ring of ``ops`` (cached per list of names): sorted 64-bit points, _POINTS per op (hashes
    of its name), and which op each belongs to. A step's hash picks the op of the next point: a new op takes over
    only the arcs before its own points."""
    names = tuple(op.name for op in ops)
    ring = _RINGS.get(names)
    if ring is None:
        points = sorted((_hash64(f"{name}/{k}"), i) for i, name in enumerate(names) for k in range(_POINTS))
        ring = _RINGS[names] = ([p for p, _ in points], [i for _, i in points])
    return ring


def step(b: Builder, kind: str, target: Var | None = None, *, prefix: str = "") -> OpEntry | None:
    """Draw one op of ``kind`` ("op": weighted by the entries' weights, "inplace", "plain") into ``b`` (on
    ``target`` for an in-place op, when given); returns the entry drawn."""
    hand, cum_weights, derived_ops = (b.lists or LISTS)[kind]
    rng = b.rng
    if rng.random() < DERIVED_SHARE[kind] and derived_ops or not hand:
        if not derived_ops:
            return None
        key = f"{b.stream}/{kind}/{b.derived_steps}"
        b.derived_steps += 1
        points, owners = _ring(derived_ops)
        op = derived_ops[owners[bisect.bisect(points, _hash64(key)) % len(points)]]
        b.rng = random.Random(f"{key}/{op.name}")
        try:
            apply(b, op, target, prefix=prefix)
        finally:
            b.rng = rng
        return op
    op = rng.choices(hand, cum_weights=cum_weights)[0] if kind == "op" else rng.choice(hand)
    apply(b, op, target, prefix=prefix)
    return op


def apply(b: Builder, op: OpEntry, target: Var | None = None, *, prefix: str = "") -> None:
    """Draw ``op``'s arguments, emit its statement and record what it makes in the pool."""
    if op.inplace:
        t = target or pick_inplace_target(b, op.fits)
        if t is None and op.fits is not None and target is None:
            t = _fresh_target(b, op.fits)
        if t is None or target is not None and op.fits is not None and not op.fits(t):
            return
        call = op.draw(b, t)
        tags = (f"op:{op.name}", *call.tags)
        if t.leaf:
            tags += ("feat:in-place on a leaf",)
        elif t.base is not None:
            tags += ("feat:in-place through a view",)
        else:
            tags += ("feat:in-place on a non-leaf",)
        b.emit(prefix + call.expr, kind="inplace", tags=tags)
        grad_on = not prefix
        if grad_on and t.is_float and any(u.rg for u in call.uses) and not (t.leaf and t.rg):
            t.rg = True
            t.leaf = t.leaf and False
            base = next((u for u in b.pool if u.name == t.base), None)
            if base is not None:
                base.rg, base.leaf = True, False
        return
    call = op.draw(b)
    if call is None:
        return
    tags = (f"op:{op.name}", *call.tags)
    name = b.fresh("v")
    b.emit(f"{name} = {call.expr}", target=name, tags=tags)
    if call.outs is None:
        return  # an error is expected: nothing to build on
    rg = call.rg if call.rg is not None else any(u.rg for u in call.uses)
    base = None
    if call.uses:
        first = call.uses[0]
        base = first.base or first.name
    names = [f"{name}[{i}]" for i in range(len(call.outs))] if call.multi else [name][: len(call.outs)]
    for var_name, o in zip(names, call.outs):
        b.pool.append(Var(var_name, o.shape, o.dtype, rg=rg and o.dtype in FLOAT, base=base if o.view else None))


def pick_inplace_target(b: Builder, fits: Callable[[Var], bool] | None = None) -> Var | None:
    ok = fits or (lambda u: True)
    r = b.rng.random()
    if r < 0.75:
        v = b.pick(lambda u: not u.leaf and not u.taint and ok(u))
        if v is not None:
            return v
    return b.pick(lambda u: not u.taint and ok(u))


def _fresh_target(b: Builder, fits: Callable[[Var], bool]) -> Var | None:
    """A non-leaf to write in place when no variable fits: a clone of a new input (of a shape the op accepts)."""
    for shape in ((3,), (2, 3), (3, 4), (2, 3, 4), (1, 2, 3, 4), ()):
        probe = Var("probe", shape, "float64")
        if fits(probe):
            x = b.new_input(shape=shape, dtype=b.rng.choice(["float64", "float32"]))
            name = b.fresh("v")
            b.emit(f"{name} = {x.name}.clone()", target=name, tags=("op:clone",))
            v = Var(name, shape, x.dtype, rg=x.rg)
            b.pool.append(v)
            return v
    return None
