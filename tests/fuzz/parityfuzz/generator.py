"""The seeded program generator: leaves, ops from the catalogue, autograd features, then a backward phase.

A program is 1-4 leaves (random shapes and dtypes, a mix of requires_grad), 3-12 steps (an op from
the catalogue, or a feature: an in-place op on a non-leaf or through a view, an in-place op on a
leaf under no_grad, a hook, retain_grad, detach, requires_grad_, ``.data``) and an end phase
(backward, autograd.grad over leaves and intermediates, allow_unused, create_graph with a second-order
gradient, backward twice with and without retain_graph). The generator tracks each variable's shape,
dtype and requires_grad symbolically, to draw arguments that mostly fit; a wrong guess only makes a
statement raise on both libraries, which is compared like anything else.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence

import numpy as np

from . import values as V
from .program import Program, Stmt, array_literal, propagate_taint

FLOAT = ("float32", "float64", "float16")
INTS = ("int64", "int32", "int16", "uint8")
_RANK = {"bool": 0, "uint8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5, "float32": 6, "float64": 7}
_CATEGORY = {"bool": 0, "uint8": 1, "int16": 1, "int32": 1, "int64": 1, "float16": 2, "float32": 2, "float64": 2}


@dataclasses.dataclass
class Var:
    """What the generator believes about a variable (an expression: ``v3`` or ``v5[0]``)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    rg: bool = False
    leaf: bool = False
    base: str | None = None  # the variable this one is a view of
    taint: bool = False  # computed from a create_graph=True gradient

    @property
    def known(self) -> bool:
        """False for results whose length depends on the values (a boolean-mask index): shape ``(-1,)``."""
        return -1 not in self.shape

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOAT


@dataclasses.dataclass
class Operand:
    """An argument: a variable, a new input, a Python/NumPy scalar or a 0-d tensor literal."""

    text: str
    dtype: str
    shape: tuple[int, ...] | None  # None: a Python (or NumPy) scalar
    var: Var | None = None

    @property
    def rg(self) -> bool:
        return bool(self.var and self.var.rg)


@dataclasses.dataclass
class Out:
    """A result the generator expects: its shape and dtype (``view``: it shares the input's memory)."""

    shape: tuple[int, ...]
    dtype: str
    view: bool = False


@dataclasses.dataclass
class Call:
    """What an op's draw returns: the expression, the expected result(s) and the variables it read.

    ``outs`` is a list of results (a tuple result when ``multi``), empty for a non-tensor result,
    ``None`` when the draw expects an error. ``inplace`` is the variable an in-place op writes.
    """

    expr: str
    outs: list[Out] | None
    uses: list[Var]
    multi: bool = False
    inplace: Var | None = None
    rg: bool | None = None  # override of "any input requires grad"
    tags: tuple[str, ...] = ()


def result_dtype(operands: Sequence[Operand]) -> str:
    """PyTorch's type promotion: dimensioned tensors, then 0-d tensors, then Python scalars."""
    top = max(_CATEGORY[o.dtype] for o in operands)
    for group in (
        [o for o in operands if o.shape not in (None, ())],
        [o for o in operands if o.shape == ()],
    ):
        best = [o.dtype for o in group if _CATEGORY[o.dtype] == top]
        if best:
            return max(best, key=_RANK.__getitem__)
    return {0: "bool", 1: "int64", 2: "float32"}[top]


def float_of(dtype: str) -> str:
    return dtype if dtype in FLOAT else "float32"


class Builder:
    """Builds one program; the op catalogue's draw functions use it to pick and make arguments."""

    def __init__(self, rng: random.Random, name: str):
        self.rng = rng
        self.name = name
        self.stmts: list[Stmt] = []
        self.pool: list[Var] = []
        self.leaves: list[Var] = []
        self.counter = 0
        self.tags: set[str] = set()
        self.stream = f"minigrad-fuzz/{name}"  # the key of the derived ops' streams (catalogue.step)
        self.derived_steps = 0
        self.lists = None  # catalogue.lists(ops) when not the catalogue's own

    # -- names and statements ---------------------------------------------------------------------
    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, code: str, *, target: str | None = None, kind: str = "op", tags=(), array=None,
             taint: bool = False) -> Stmt:
        stmt = Stmt(code=code, target=target, kind=kind, tags=tuple(tags), array=array, taint=taint)
        self.stmts.append(stmt)
        self.tags.update(tags)
        return stmt

    # -- inputs -------------------------------------------------------------------------------------
    def new_input(self, shape: tuple[int, ...] | None = None, dtype: str | None = None, rg: bool | None = None,
                  style: str | None = None, leaf_list: bool = True, array: np.ndarray | None = None) -> Var:
        rng = self.rng
        shape = V.draw_shape(rng) if shape is None else tuple(shape)
        dtype = V.draw_dtype(rng) if dtype is None else dtype
        if rg is None:
            rg = dtype in FLOAT and rng.random() < 0.7
        rg = rg and dtype in FLOAT
        arr = V.draw_array(rng, shape, dtype, style) if array is None else array
        name = self.fresh("x")
        suffix = ", requires_grad=True" if rg else ""
        tags = ["input", f"dtype:{dtype}", *V.shape_tags(shape), *V.value_tags(arr)]
        self.emit(f"{name} = torch.tensor({{arr}}{suffix})", target=name, kind="input", tags=tags, array=arr)
        var = Var(name, shape, dtype, rg=rg, leaf=True)
        self.pool.append(var)
        if leaf_list:
            self.leaves.append(var)
        return var

    def constant(self, shape: tuple[int, ...], dtype: str, style: str | None = None) -> str:
        """An inline tensor literal that is not a variable (masks, indices, upstream gradients)."""
        arr = V.draw_array(self.rng, shape, dtype, style)
        return _inline_tensor(arr)

    # -- picking --------------------------------------------------------------------------------
    def pick(self, pred: Callable[[Var], bool] = lambda v: True, *, float_bias: float = 0.85,
             unknown: bool = False) -> Var | None:
        """A variable from the pool, recent ones more likely (so chains grow deep).

        Variables of unknown length are only picked when ``unknown`` (ops that work on any shape).
        """
        cands = [(i, v) for i, v in enumerate(self.pool) if (unknown or v.known) and pred(v)]
        if not cands:
            return None
        floats = [(i, v) for i, v in cands if v.is_float]
        if floats and self.rng.random() < float_bias:
            cands = floats
        weights = [1 + i for i, _ in cands]
        return self.rng.choices([v for _, v in cands], weights)[0]

    def pick_or_new(self, pred: Callable[[Var], bool] = lambda v: True, *, shape=None, dtype=None,
                    float_bias: float = 0.85, unknown: bool = False) -> Var:
        v = self.pick(pred, float_bias=float_bias, unknown=unknown)
        if v is None or self.rng.random() < 0.1:
            v = self.new_input(shape=shape, dtype=dtype)
        return v

    def operand(self, shape: tuple[int, ...], *, dtype_hint: str = "float64", grow: bool = True,
                scalars: bool = True) -> Operand:
        """A second operand that broadcasts with ``shape`` (a variable, a new input, a scalar, a 0-d tensor)."""
        rng = self.rng
        r = rng.random()
        if scalars and r < 0.2:
            return self.scalar(dtype_hint)
        if r < 0.55:
            want = V.broadcast_partner(shape, rng) if grow else V.broadcastable_to(shape, rng)
            fits = [v for v in self.pool if v.known and V.broadcast(v.shape, shape) is not None
                    and (grow or V.broadcast(v.shape, shape) == shape)]
            if fits:
                v = self.pick(lambda u: u in fits)
                self.tag_broadcast(v.shape, shape)
                return Operand(v.name, v.dtype, v.shape, v)
        want = V.broadcast_partner(shape, rng) if grow else V.broadcastable_to(shape, rng)
        dtype = dtype_hint if rng.random() < 0.8 else V.draw_dtype(rng)
        v = self.new_input(shape=want, dtype=dtype)
        self.tag_broadcast(want, shape)
        return Operand(v.name, v.dtype, v.shape, v)

    def tag_broadcast(self, a: tuple[int, ...], b: tuple[int, ...]) -> None:
        if a != b:
            self.tags.add("broadcast")

    def scalar(self, dtype_hint: str = "float64") -> Operand:
        """A Python scalar, a NumPy scalar (PyTorch treats it like a Python scalar) or a 0-d tensor."""
        rng = self.rng
        r = rng.random()
        if r < 0.45:
            text = rng.choice(["2.0", "0.5", "-1.5", "3.0", "0.0", "-0.0", "1e30", "inf", "-inf", "nan"])
            self.tags.add("scalar:float")
            return Operand(text, "float32", None)
        if r < 0.7:
            text = rng.choice(["2", "-1", "0", "3"])
            self.tags.add("scalar:int")
            return Operand(text, "int64", None)
        if r < 0.85:
            text = rng.choice(["np.float64(2.0)", "np.sqrt(2.0)", "np.float32(0.5)", "np.int64(2)"])
            self.tags.add("scalar:numpy")
            return Operand(text, "int64" if "int" in text else "float32", None)
        dtype = rng.choice(["float64", "float32", "int64"])
        val = rng.choice(["2.0", "-1.0", "0.0", "0.5"]) if dtype in FLOAT else rng.choice(["2", "0", "-1"])
        self.tags.add("scalar:0-d tensor")
        return Operand(f"torch.tensor({val}, dtype=torch.{dtype})", dtype, ())

    def dim(self, v: Var, *, allow_bad: bool = True) -> int:
        if v.ndim == 0:
            return self.rng.choice([0, -1])
        if allow_bad and self.rng.random() < 0.03:
            self.tags.add("dim:out-of-range")
            return v.ndim
        return self.rng.randint(-v.ndim, v.ndim - 1)

    def norm_dim(self, v: Var, d: int) -> int:
        return d % max(v.ndim, 1)

    def call(self, name: str, recv: str, args: Sequence[str] = (), kwargs: dict | None = None,
             forms: Sequence[str] = ("function", "method")) -> str:
        """``torch.name(recv, ...)`` or ``recv.name(...)`` (or ``torch.nn.functional.name``)."""
        kw = [f"{k}={v}" for k, v in (kwargs or {}).items()]
        form = self.rng.choice(list(forms))
        self.tags.add(f"form:{form}")
        if form == "method":
            return f"{recv}.{name}({', '.join([*args, *kw])})"
        module = "torch.nn.functional" if form == "functional" else "torch"
        return f"{module}.{name}({', '.join([recv, *args, *kw])})"


def _inline_tensor(arr: np.ndarray) -> str:
    return f"torch.tensor({array_literal(arr)})"


# --------------------------------------------------------------------------------------------------
# Programs


def generate(seed: int, index: int, ops=None) -> Program:
    """Program number ``index`` of ``seed`` (deterministic: the same pair gives the same program)."""
    from . import catalogue, features

    rng = random.Random(f"minigrad-fuzz/{seed}/{index}")
    b = Builder(rng, f"seed {seed} program {index}")
    b.lists = None if ops is None else catalogue.lists(ops)
    for _ in range(rng.randint(1, 4)):
        b.new_input()
    rgs = {v.rg for v in b.leaves}
    if len(rgs) > 1:
        b.tags.add("feat:requires_grad mix")
    for _ in range(rng.randint(3, 12)):
        if rng.random() < 0.72:
            catalogue.step(b, "op")
        else:
            features.middle(b)
    features.end(b)
    return Program(b.name, tuple(propagate_taint(b.stmts)), frozenset(b.tags))
