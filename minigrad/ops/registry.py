"""The op registry: one declaration per op says everything about it.

`declare(...)` records an op: the function that runs it, its public names (a `minigrad.<name>`
function, `Tensor` methods, Python operators, the in-place variant `<name>_`, an `nn.functional`
name), the node classes it records (each made by `rule(...)`, which says what the node saves, its
derivative formula per input and the rule text the animation shows), and how the test sweeps call
it (`samples`). The public API, `dir()`, the parity / gradcheck / float32 test sweeps and viz's rule
lookup for PyTorch graphs all read this registry, so a new op is one declaration.

The families of simple ops have makers that build the op function from a NumPy function and a
derivative formula (`elementwise.unary`, ...); the others declare a hand-written function.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass, field

from .._state import GRAD
from .._tensor import Tensor
from ..autograd.graph import check_usable
from .dual import INPLACE_ONLY, forward_aware, inplace_only
from .forward_text import forward_text

__all__ = ["Op", "Sample", "declare", "renamed", "REGISTRY", "NODES", "node_rule", "node_forward_rule", "ops"]

# Domains the test sweeps draw tensor values from (the sweeps keep away from kinks and ties).
DOMAINS = ("real", "positive", "unit", "away", "distinct", "int", "nonneg_int", "bool", "index", "const",
           "positive_const")


@dataclass(frozen=True)
class Sample:
    """One way the test sweeps call an op: its tensor arguments, each a (shape, domain) pair, then the other
    arguments. Domains: "real" (-2..2), "positive" (0.5..2), "unit" (-0.9..0.9), "away" (|x| > 0.1: off a
    kink at 0), "distinct" (no ties), "int", "nonneg_int", "bool", "index" (valid indices into the first
    tensor's last dim). A tensor of domain "const" is a float tensor that does not require grad ("positive_const": in
    0.5..2). `keywords` names the last tensors, passed by keyword after the other arguments."""

    tensors: tuple
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    second_order: bool = True  # does gradgradcheck apply (False for ops whose gradient is piecewise constant)
    as_list: bool = False  # the tensors go in as one list argument (cat, stack)
    keywords: tuple = ()  # names of the last tensors, passed by keyword (`weight=`, `bias=` after other arguments)


@dataclass(frozen=True)
class Op:
    """A declared op (see the module docstring)."""

    name: str
    function: Callable
    namespace: str = ""  # "" for minigrad.<name>, "nn.functional" for minigrad.nn.functional.<name>
    aliases: tuple = ()  # more names in the same namespace (and as methods, when `method`)
    method: bool = True  # also Tensor.<name> (and Tensor.<alias>)
    inplace: Callable | None = None  # Tensor.<name>_ (the function)
    operators: dict = field(default_factory=dict)  # Python operators: {"__add__": fn, ...}
    nodes: tuple = ()  # the node classes it records
    samples: tuple = ()  # how the test sweeps call it; empty: not swept (listed in the sweeps' exceptions)
    differentiable: bool = True
    functional: bool = False  # also nn.functional.<name>
    public: bool = True  # False: an op only derivative formulas call (PyTorch's fused backward ops)
    alias_functions: dict = field(default_factory=dict)  # alias -> the function under that name (its errors name it)

    def named(self, name: str) -> Callable:
        """The function `minigrad.<name>` / `Tensor.<name>` runs: the op's own, or an alias's (the same code, whose
        errors name the alias, as PyTorch's do)."""
        return self.function if name == self.name else self.alias_functions[name]

    def call(self, lib, *args, **kwargs):
        """Call the op on `lib`: minigrad runs this declaration's function; another library with PyTorch's API
        (torch) is called the way a learner would, `lib.<namespace>.<name>(...)`, or the Tensor method when the
        op has no function of its own."""
        if lib.__name__.split(".")[0] == "minigrad":
            return self.function(*args, **kwargs)
        if self.namespace == "Tensor":
            return getattr(args[0], self.name)(*args[1:], **kwargs)
        where = lib
        for part in self.namespace.split(".") if self.namespace else ():
            where = getattr(where, part)
        return getattr(where, self.name)(*args, **kwargs)


REGISTRY: dict[str, Op] = {}  # "name" or "nn.functional.name" -> Op
NODES: dict[str, type] = {}  # node class name -> node class, for every node a declared op records


# NumPy's names that PyTorch's argument parser accepts for its own: `x.sum(axis=1, keepdims=True)`.
NUMPY_ARGUMENTS = {"axis": "dim", "keepdims": "keepdim"}


def numpy_arguments(function: Callable, name: str, differentiable: bool = True) -> Callable:
    """`function` accepting `axis=` for `dim=` and `keepdims=` for `keepdim=`, as PyTorch's builtins do.

    One wrapper for every op with a `dim` or `keepdim` parameter, so no op body handles the aliases; giving
    both spellings is PyTorch's TypeError. It also keeps PyTorch's order of errors: autograd reads the input's
    grad_fn before the kernel checks the dims or warns, so a view an in-place write made unusable fails first (in
    a differentiable op)."""
    accepted = {alias: real for alias, real in NUMPY_ARGUMENTS.items()
                if real in inspect.signature(function).parameters}

    @functools.wraps(function)
    def call(*args, **kwargs):
        if kwargs:
            for alias, real in accepted.items():
                if alias in kwargs:
                    if real in kwargs:
                        raise TypeError(f"{name}() got an unexpected keyword argument '{alias}'")
                    kwargs[real] = kwargs.pop(alias)
        if differentiable and args and (args[0].__class__ is not Tensor or args[0]._extras is not None):
            check_recordable(args[0])  # (a plain tensor, the common case, has no extras to check)
        return function(*args, **kwargs)

    call.numpy_names = True  # (kept by the wrappers around it: functools.wraps copies the attribute)
    return call


def check_recordable(t) -> None:
    """The error reading `t.grad_fn` raises when autograd is about to record an op on `t` (or on each tensor of a
    list, as `cat` takes), if any: a view an in-place write made unusable."""
    if t.__class__ in (list, tuple):
        for x in t:
            check_recordable(x)
    elif t.__class__ is Tensor and t._requires_grad and GRAD.mode > 0:
        check_usable(t)


def overridable(function: Callable, name: str) -> Callable:
    """The top-level function `minigrad.<name>`, which gives way to PyTorch's override protocol: when an
    argument's type defines `__torch_function__` (a class that is not a Tensor, as in the "Extending PyTorch"
    note), that method is called with this function, the types and the arguments, and its result returned.
    Tensor methods and operators skip the check (plain Tensors have no override), so they cost nothing more.
    The tensor an op's function calls `self` (as its method does) is PyTorch's `input=` here."""

    renamed = _first_parameter(function) == "self"  # PyTorch calls a function's tensor `input`

    @functools.wraps(function)
    def call(*args, **kwargs):
        if kwargs and renamed and "input" in kwargs:  # torch.exp(input=x)
            args = (kwargs.pop("input"), *args)
        overloaded = [type(a) for a in args if type(a) is not Tensor and hasattr(type(a), "__torch_function__")]
        if kwargs or not overloaded and any(type(a) in (list, tuple) for a in args):
            overloaded += _overloaded_in(args, kwargs)
        if not overloaded:
            return function(*args, **kwargs)
        return _dispatch(call, name, overloaded, args, kwargs)

    return call


def _overloaded_in(args: tuple, kwargs: dict) -> list:
    """The overriding types of the keyword arguments and of the tensors inside list arguments (`cat([...])`), which
    PyTorch's protocol checks too."""
    found = [type(a) for a in kwargs.values() if type(a) is not Tensor and hasattr(type(a), "__torch_function__")]
    for a in args:
        if type(a) in (list, tuple):
            found += [type(x) for x in a if type(x) is not Tensor and hasattr(type(x), "__torch_function__")]
    return found


def _first_parameter(function: Callable) -> str | None:
    try:
        params = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    return params[0].name if params and params[0].kind == params[0].POSITIONAL_OR_KEYWORD else None


def _dispatch(public: Callable, name: str, overloaded: list, args: tuple, kwargs: dict):
    """PyTorch's order: each overriding type once, a subclass before its base class, else as the arguments come."""
    types: list = []
    for t in overloaded:
        if t in types:
            continue
        at = next((i for i, u in enumerate(types) if issubclass(t, u)), len(types))
        types.insert(at, t)
    for t in types:
        result = t.__torch_function__(public, tuple(types), args, kwargs)
        if result is not NotImplemented:
            return result
    listed = "".join(f"\n  - tensor subclass {t}" for t in types)
    raise TypeError(f"Multiple dispatch failed for 'minigrad.{name}'; all __torch_function__ handlers returned "
                    f"NotImplemented:\n{listed}")


def renamed(function: Callable, name: str) -> Callable:
    """`function` under the name `name`: the same code, whose Python errors (`arctan() got an unexpected keyword
    argument`) name it. An alias's own function, unless its declaration makes one (as `binary` does, whose checks
    name the op)."""
    if not isinstance(function, types.FunctionType):
        return function
    copy = types.FunctionType(function.__code__, function.__globals__, name, function.__defaults__,
                              function.__closure__)
    copy.__kwdefaults__, copy.__doc__, copy.__wrapped__ = function.__kwdefaults__, function.__doc__, function
    copy.__qualname__ = name
    return copy


def declare(name: str, function: Callable, *, namespace: str = "", aliases: tuple | dict = (), method: bool = True,
            inplace: Callable | None = None, operators: dict | None = None, nodes: tuple = (),
            samples: tuple = (), differentiable: bool = True, functional: bool = False, public: bool = True,
            register: bool = True, numpy_names: bool | None = None, forward_nodes: tuple | None = None,
            shape_only: str = "") -> Op:
    """Record an op (see the module docstring). `register=False` makes the declaration without adding it to
    the registry (a test can then sweep an op it declares itself). `numpy_names`: accept `axis=`/`keepdims=`
    (`numpy_arguments`); by default every public op outside `nn.functional` with a `dim` or `keepdim`
    parameter does, as PyTorch's builtins do (its Python-level functions, `norm` and `split`, say False).
    `aliases`: more names, each given the function `renamed`, or a dict {alias: its function}. `forward_nodes`:
    the nodes whose forward rules give the op's tangent (default: `nodes`, none for a non-differentiable op; () for
    an op made of other ops that carry tangents themselves, as F.linear of its addmm, matmul and add_). `shape_only`:
    the parameter an op reads only the shape or dtype of (view_as's `other`): its tangent goes nowhere."""
    if numpy_names is None:
        numpy_names = public and namespace != "nn.functional" and _has_dim(function)
    named = aliases if isinstance(aliases, dict) else {alias: renamed(function, alias) for alias in aliases}
    if numpy_names:
        function = numpy_arguments(function, name, differentiable)
        named = {alias: numpy_arguments(fn, alias, differentiable) for alias, fn in named.items()}
    fw_nodes = forward_nodes if forward_nodes is not None else nodes if differentiable else ()
    function, inplace, operators = _forward_aware(name, function, inplace, operators or {}, fw_nodes,
                                                  (shape_only, differentiable))
    named = {alias: _forward_aware(alias, fn, None, {}, fw_nodes)[0] for alias, fn in named.items()}
    op = Op(name, function, namespace, tuple(named), method, inplace, dict(operators or {}), tuple(nodes),
            tuple(samples), differentiable, functional, public, named)
    if register:
        key = f"{namespace}.{name}" if namespace and namespace != "Tensor" else name
        if key in REGISTRY:
            raise ValueError(f"op {key!r} is declared twice")
        REGISTRY[key] = op
        for node in op.nodes:
            NODES[node.__name__] = node
    return op


def _forward_aware(name: str, function: Callable, inplace, operators: dict, nodes: tuple,
                   how: tuple = ("", True)) -> tuple:
    """The op's function, in-place variant and operators, each carrying tangents under forward AD (ops/dual.py);
    `how`: (the declaration's shape_only, differentiable)."""
    if name in INPLACE_ONLY:  # ops that exist only in place
        return inplace_only(function, name), inplace, operators
    fw = forward_aware(function, nodes, name, shape_only=how[0], differentiable=how[1])
    home = getattr(function, "__globals__", {})
    if fw is not function and home.get(function.__name__) is function:
        home[function.__name__] = fw  # the op's module calls it as the public does: ops made of it carry tangents
    fw_inplace = None if inplace is None else forward_aware(inplace, nodes, name + "_", out_of_place=function)
    return fw, fw_inplace, {key: fw if fn is function else fw_inplace if fn is inplace
                            else forward_aware(fn, nodes, name) for key, fn in operators.items()}


def _has_dim(function: Callable) -> bool:
    try:
        params = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return "dim" in params or "keepdim" in params


def ops() -> list[Op]:
    """Every declared op, in declaration order."""
    return list(REGISTRY.values())


def node_rule(node_name: str):
    """(input names, rule text) of the node class called `node_name` (as `type(node).__name__` or `name()`
    gives it, PyTorch's `torch::autograd::` prefix allowed), or None when no declared op records it. viz uses
    this for PyTorch graphs, whose nodes do not carry their rule."""
    cls = NODES.get(node_name.rsplit("::", 1)[-1])
    if cls is None or not hasattr(cls, "_text"):
        return None
    return cls._inputs, cls._text


def node_forward_rule(node_name: str):
    """(input names, forward rule text) of the node class called `node_name` (as `node_rule`), or None: the
    tangent's one-line rule (forward-mode AD) that `viz.animate` shows, derived from the op's declaration
    (ops/forward_text.py); the text is "" for a node without a forward rule."""
    cls = NODES.get(node_name.rsplit("::", 1)[-1])
    if cls is None or not hasattr(cls, "_text"):
        return None
    return cls._inputs, forward_text(node_name, cls)
