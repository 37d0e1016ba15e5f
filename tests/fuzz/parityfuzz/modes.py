"""Forward-mode programs (issue 26) and function transforms over random programs (issue 27).

Forward mode: inputs made dual with ``make_dual`` under ``forward_ad.enter_dual_level()`` (one statement per
line, so the level is entered and exited by statements; the runner exits a level a stopped program left open),
ops and in-place ops from the catalogue, and the tangent of results read with ``unpack_dual(...).tangent``
after the op and at the end; values and tangents are compared with PyTorch's (tangents and transforms' results
as derivatives: a difference is a ``gradient`` one, and their ``_version``, an internal count, is not compared;
a tangent's own graph, when its primal requires grad, is the graph of the forward formulas: its requires_grad and
is_leaf are compared, its node names and structure are not, as docs/differences.md's "A tangent's own graph" says
(exclusions.FORWARD_UNCOMPARED: PyTorch's graph is that of its hand-written C++ formula).

Transforms: a random program of the catalogue's pure ops becomes a one-line function ``def f(a1, a2): ...;
return v``, and one transform of it is compared with torch.func: ``jvp``, ``vjp`` (its pullback applied to a
cotangent), ``jacfwd``, ``jacrev`` (``argnums`` an int or a tuple), ``vmap`` (``in_dims`` with ``None`` for
arguments that are not batched, the batch at any dim), or ``vmap`` of a Jacobian.

Gaps are not mismatches: where minigrad raises the forward-AD NotImplementedError ("Trying to use forward AD
with ... that does not support it") and PyTorch computes, the op has no forward rule yet (the registry says so
at run time, so a rule added on another branch closes the gap without an edit here); where minigrad gives the
per-sample fallback's performance warning and PyTorch does not, the op has no batching rule yet. Both are
counted apart (``gap_of``). PyTorch raising where minigrad computes is a finding, as everywhere.
"""

from __future__ import annotations

import random

from . import catalogue
from . import values as V
from .generator import Builder, Var
from .program import Program, _mentions, array_literal, propagate_taint

MODES = ("normal", "forward", "transform")
FORWARD_GAP = "Trying to use forward AD with"
BATCHING_GAP = "There is a performance drop because we have not yet implemented the batching rule"

# Ops a function under a transform does not draw: Python values out of a tensor (PyTorch's transforms refuse
# `.item()`, which the transforms' own tests compare), new tensors that do not depend on the arguments, and
# results that are not differentiable.
NOT_IN_FUNCTIONS = {
    "item", "tolist", "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "arange", "eye", "zeros_like",
    "ones_like", "full_like", "allclose", "equal", "isclose", "long", "int", "bool", "argmax", "argmin", "eq", "ne",
    "lt", "le", "gt", "ge", "floor_divide", "remainder", "nonzero", "argwhere", "unique", "histogram", "histc",
    "argsort", "all", "any", "isnan", "isinf", "isfinite", "logical_not", "logical_and", "logical_or",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "__getitem__", "half",
}


def gap_of(category: str, detail: str) -> str | None:
    """'forward gap' / 'batching gap' when a difference is an op minigrad has no forward / batching rule for yet."""
    if category == "crash" and FORWARD_GAP in detail and "NotImplementedError" in detail:
        return "forward gap"
    if category == "warning" and "minigrad [" in detail:
        torch_side, minigrad_side = detail.split(", minigrad [", 1)
        if BATCHING_GAP in minigrad_side and BATCHING_GAP not in torch_side:
            return "batching gap"
    return None


def warm_up(module) -> None:
    """Use forward AD once before comparing: PyTorch's first use in a process gives DeprecationWarnings
    (``torch.jit.script``, from its lazy imports) that a program would otherwise see depending on its place."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fw = module.autograd.forward_ad
        with fw.dual_level():
            fw.unpack_dual(fw.make_dual(module.ones(1), module.ones(1)) * 2)
        module.func.jacfwd(lambda x: x * 2)(module.ones(1))
        module.func.vmap(lambda x: x * 2)(module.ones(2, 1))


def generate(mode: str, seed: int, index: int) -> Program:
    """Program number ``index`` of ``seed`` in ``mode`` (deterministic)."""
    if mode == "forward":
        return generate_forward(seed, index)
    if mode == "transform":
        return generate_transform(seed, index)
    from .generator import generate as generate_normal

    return generate_normal(seed, index)


# -- forward mode ---------------------------------------------------------------------------------------------


def _tangent_literal(b: Builder, shape: tuple, dtype: str) -> str:
    return f"torch.tensor({array_literal(V.draw_array(b.rng, shape, dtype, 'plain'))})"


def _unpack(b: Builder, v: Var) -> None:
    name = b.fresh("t")
    b.emit(f"{name} = fwAD.unpack_dual({v.name}).tangent", target=name, kind="grad", tags=("fw:unpack_dual",),
           taint=True)


class _Dual(Builder):
    """The builder of a forward-mode program: most float inputs it makes are dual (make_dual with a tangent)."""

    def new_input(self, shape=None, dtype=None, rg=None, style=None, leaf_list=True, array=None) -> Var:
        if dtype is None or dtype in ("int64", "bool", "int32", "int16", "uint8") and self.rng.random() < 0.7:
            dtype = self.rng.choice(["float64", "float64", "float32"])
        rg = self.rng.random() < 0.15 if rg is None else rg
        x = super().new_input(shape, dtype, rg, style, leaf_list, array)
        if not x.is_float or self.rng.random() < 0.2:
            return x
        self.pool.remove(x)
        shape = x.shape if self.rng.random() > 0.02 else (*x.shape, 2)  # (a tangent of the wrong shape: an error)
        name = self.fresh("d")
        self.emit(f"{name} = fwAD.make_dual({x.name}, {_tangent_literal(self, shape, x.dtype)})", target=name,
                  tags=("fw:make_dual",))
        d = Var(name, x.shape, x.dtype, rg=x.rg)
        self.pool.append(d)
        return d


def generate_forward(seed: int, index: int) -> Program:
    rng = random.Random(f"minigrad-fuzz/forward/{seed}/{index}")
    b = _Dual(rng, f"forward seed {seed} program {index}")
    b.emit("fwAD = torch.autograd.forward_ad", target="fwAD", kind="feature")
    b.emit("level = fwAD.enter_dual_level()", target="level", kind="feature")
    for _ in range(rng.randint(1, 3)):
        b.new_input()
    plain = [op for op in catalogue.PLAIN_OPS if op.name not in NOT_IN_FUNCTIONS or rng.random() < 0.1]
    for _ in range(rng.randint(2, 8)):
        before = len(b.pool)
        if rng.random() < 0.8:
            catalogue.apply(b, rng.choices(plain, [op.weight for op in plain])[0])
        else:
            catalogue.apply(b, rng.choice(catalogue.INPLACE_OPS))
            b.tags.add("fw:in-place")
        if len(b.pool) > before and rng.random() < 0.6:
            _unpack(b, b.pool[-1])
    for v in b.pool[-3:]:
        _unpack(b, v)
    b.emit("fwAD.exit_dual_level()", kind="feature")
    return Program(b.name, tuple(propagate_taint(b.stmts)), frozenset(b.tags))


# -- transforms -------------------------------------------------------------------------------------------------


class _Body(Builder):
    """The builder of a function's body: the first float tensors it needs become the function's parameters
    (``a1``, ``a2``, ``a3``, of one dtype; their values are the program's inputs), later ones are constants."""

    def __init__(self, rng: random.Random, name: str, dtype: str):
        super().__init__(rng, name)
        self.dtype = dtype
        self.params: list[tuple[Var, object]] = []

    def new_input(self, shape=None, dtype=None, rg=None, style=None, leaf_list=True, array=None) -> Var:
        float_wanted = dtype is None or dtype.startswith("float")
        if float_wanted and len(self.params) < 3:
            shape = V.draw_shape(self.rng) if shape is None else tuple(shape)
            arr = V.draw_array(self.rng, shape, self.dtype, style) if array is None else \
                array.astype(str).astype(self.dtype)  # (a float32 draw read as float64 keeps its short text)
            v = Var(f"a{len(self.params) + 1}", shape, self.dtype)
            self.params.append((v, arr))
            self.pool.append(v)
            return v
        return super().new_input(shape, dtype, False, style, leaf_list, array)


def _function(b: Builder, dtype: str) -> tuple[list[Var], Var]:
    """Emit the inputs and ``def f(a1, ...)``: a chain of 1-5 pure ops; returns the inputs and the result."""
    body = _Body(b.rng, b.name, dtype)
    ops = [op for op in catalogue.PLAIN_OPS if op.name not in NOT_IN_FUNCTIONS]
    for _ in range(b.rng.randint(1, 5)):
        catalogue.apply(body, b.rng.choices(ops, [op.weight for op in ops])[0])
    if not body.params:
        body.new_input()
    b.counter = body.counter + 100
    b.tags.update(body.tags)
    params = [b.new_input(shape=v.shape, dtype=dtype, rg=False, array=arr) for v, arr in body.params]
    depends = {v.name for v, _ in body.params}  # the variables computed from the parameters
    for stmt in body.stmts:
        if stmt.target and any(_mentions(stmt.code, name) for name in depends):
            depends.add(stmt.target)
    made = [v for v in body.pool if v.is_float and v.known and v.name.split("[")[0] in depends]
    result = made[-1] if made else body.params[0][0]
    code = "; ".join([s.text() for s in body.stmts] + [f"return {result.name}"])
    b.emit(f"def f({', '.join(v.name for v, _ in body.params)}): {code}", kind="feature")
    return params, result


def _argnums(b: Builder, n: int) -> str:
    if n == 1 or b.rng.random() < 0.5:
        return str(b.rng.randrange(n))
    return repr(tuple(sorted(b.rng.sample(range(n), b.rng.randint(1, n)))))


def _vmap(b: Builder, params: list[Var]) -> str:
    """vmap(f, in_dims=...) over new batched inputs (the batch at a random dim; None: an argument not batched)."""
    rng = b.rng
    size = rng.choice([1, 2, 3])
    dims = [None if rng.random() < 0.3 else rng.randint(0, p.ndim) for p in params]
    if all(d is None for d in dims):
        dims[0] = 0
    args = []
    for p, d in zip(params, dims):
        if d is None:
            args.append(p.name)
        else:
            x = b.new_input(shape=p.shape[:d] + (size,) + p.shape[d:], dtype=p.dtype, rg=False)
            args.append(x.name)
    in_dims = dims[0] if len(dims) == 1 and rng.random() < 0.5 else tuple(dims)
    b.tags.add("tr:in_dims None" if None in dims else "tr:in_dims")
    inner = "f"
    if rng.random() < 0.15:
        inner = f"torch.func.{rng.choice(['jacrev', 'jacfwd'])}(f)"
        b.tags.add("tr:vmap of a Jacobian")
    return f"torch.func.vmap({inner}, in_dims={in_dims!r})({', '.join(args)})"


def generate_transform(seed: int, index: int) -> Program:
    rng = random.Random(f"minigrad-fuzz/transform/{seed}/{index}")
    b = Builder(rng, f"transform seed {seed} program {index}")
    dtype = "float64" if rng.random() < 0.8 else "float32"
    params, out = _function(b, dtype)
    names = ", ".join(p.name for p in params)
    kind = rng.choice(["jvp", "vjp", "jacfwd", "jacrev", "vmap"])
    b.tags.add(f"tr:{kind}")
    if kind == "jvp":
        tangents = ", ".join(_tangent_literal(b, p.shape, p.dtype) for p in params)
        expr = f"torch.func.jvp(f, ({names},), ({tangents},))"
    elif kind == "vjp":
        expr = f"(lambda r: (r[0], r[1]({_tangent_literal(b, out.shape, out.dtype)})))(torch.func.vjp(f, {names}))"
    elif kind in ("jacfwd", "jacrev"):
        expr = f"torch.func.{kind}(f, argnums={_argnums(b, len(params))})({names})"
    else:
        expr = _vmap(b, params)
    b.emit(f"r = {expr}", target="r", kind="grad", tags=("tr:transform",))
    return Program(b.name, tuple(b.stmts), frozenset(b.tags))
