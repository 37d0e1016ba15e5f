"""Custom autograd Functions: `class Exp(Function)` with static `forward(ctx, ...)` / `backward(ctx, ...)`.

As in PyTorch, the `ctx` object *is* the graph node (an instance of `<Name>Backward`), so
whatever `forward` stores on it is there for `backward`. Saved outputs are kept as arrays and
rebuilt on access, so `ctx -> output -> ctx` never forms a reference cycle.
"""

from __future__ import annotations

import functools
import inspect
import warnings

import numpy as np

from .._state import DUAL, GRAD
from .._tensor import Tensor, make
from .grad_mode import no_grad
from .graph import FREED, Node, accumulator, freed_error, modified_message, new_node

# minigrad.func's hook for a Function called under a function transform (it refuses what PyTorch refuses, or runs
# the call its own way), set when minigrad.func is imported: autograd sits below func and does not import it.
TRANSFORM_HOOK: list = [None]

LEGACY = ("Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
          "function with static forward method. (Example: https://pytorch.org/docs/stable/autograd.html"
          "#torch.autograd.Function)")


class FunctionCtx:
    """What `ctx` offers inside `forward` and `backward`."""

    def save_for_backward(self, *tensors) -> None:
        self._to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        self._to_save_forward = tensors

    def mark_dirty(self, *tensors) -> None:
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        saved = self.__dict__.get("_saved")
        if saved is FREED:
            raise freed_error(self)
        if saved is None:
            return tuple(self.__dict__.get("_to_save", ()))
        return tuple(_unpack(self, s) for s in saved)

    saved_variables = saved_tensors


def _unpack(node, entry):
    if entry is None:
        return None
    kind, value, counter, version = entry
    now = counter.value
    if kind == "output":
        arr, nr = value
        t = make(arr, node, True)
        t._version_counter = counter
        t._output_nr = nr
        if now != version:
            raise RuntimeError(modified_message(t, now, version))
        return t
    assert isinstance(value, Tensor)
    if now != version:
        raise RuntimeError(modified_message(value, now, version))
    return value


def forward_arg_names(cls: type | None) -> list[str] | None:
    """The names of forward's arguments (after ctx, which a forward with setup_context does not take); None
    for ``*args`` or an unreadable signature."""
    try:
        params = list(inspect.signature(cls.forward).parameters.values())
    except (TypeError, ValueError, AttributeError):
        return None
    if params and params[0].name == "ctx":
        params = params[1:]
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None
    return [p.name for p in params]


class BackwardCFunction(Node, FunctionCtx):
    """Base of the `<Name>Backward` node classes made for each Function subclass."""

    _forward_cls = None

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return object.__repr__(self)

    def _release(self) -> None:
        if self.__dict__.get("_saved") is not None:
            self._saved = FREED

    def _apply(self, grads: list, create_graph: bool) -> list:
        if self.__dict__.get("_saved") is FREED:
            raise freed_error(self)
        materialize = self.__dict__.get("_materialize", True)
        args = []
        for g, meta in zip(grads, self._input_metadata):
            if g is None:
                if materialize:
                    g = np.zeros(meta[0], meta[1])
                else:
                    args.append(None)
                    continue
            args.append(g if isinstance(g, Tensor) else make(g if g.__class__ is np.ndarray else np.asarray(g)))
        res = self._forward_cls.backward(self, *args)
        if not isinstance(res, tuple):
            res = (res,)
        n = self._n_args
        if len(res) != n:
            if len(res) > n and all(r is None for r in res[n:]):
                res = res[:n]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients (expected {n}, "
                                   f"got {len(res)})")
        out = []
        for pos, r in enumerate(res):
            if pos not in self._tensor_pos:
                if r is not None:
                    raise RuntimeError(f"function {self.name()} returned a gradient different than None at position "
                                       f"{pos + 1}, but the corresponding forward input was not a Variable")
                continue
            if r is None:
                out.append(None)
            elif not isinstance(r, Tensor):
                raise TypeError(f"function {self.name()} returned a gradient of type {type(r).__name__} at index "
                                f"{pos}; expected a Tensor or None")
            else:
                out.append(r if create_graph else r._data)
        return out

    @property
    def forward_args(self):
        """The arguments `forward` was called with (minigrad's introspection, for viz's gradient check):
        each tensor as a new tensor on the values forward saw (None when modified in place since), other
        values as given; None when the call was not recorded."""
        args = self.__dict__.get("_forward_args")
        if args is None:
            return None
        out = []
        for a in args:
            if isinstance(a, _ArgValue):
                out.append(make(a.data) if a.counter.value == a.version else None)
            else:
                out.append(a)
        return tuple(out)

    @property
    def input_names(self) -> tuple:
        """forward's names for its tensor arguments, one per `next_functions` slot (('x', 'beta')), so a
        picture labels the edges as the Function's author named them; 'input0', ... when forward takes *args."""
        names = forward_arg_names(self._forward_cls)
        slots = sorted(self.__dict__.get("_tensor_pos", ()))
        if names is None or len(names) < self.__dict__.get("_n_args", 0) or len(slots) != len(self._next_nodes):
            return super().input_names
        return tuple(names[pos] for pos in slots)

    def apply(self, *grads):
        """`ctx.apply(*grads)`: call the user's backward directly (as PyTorch allows)."""
        return self._forward_cls.backward(self, *grads)


class _ArgValue:
    """A tensor argument of a Function's forward: its array (the storage, not a copy) and version.
    Not the tensor itself, so the node holds no tensor (nor its grad or graph) alive."""

    __slots__ = ("data", "counter", "version")

    def __init__(self, t):
        self.data = t._data
        self.counter = t._shared_counter()
        self.version = self.counter.value


class FunctionMeta(type):
    """Gives every Function subclass its node class, named `<Name>Backward` as in PyTorch."""

    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        backward_cls.__module__ = "minigrad.autograd.function"
        backward_cls.__qualname__ = name + "Backward"
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grads)`; call `.apply(*args)`."""

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, "
                      "so you should invoke them on the class itself. Instantiating an autograd function will raise "
                      "an error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(LEGACY)

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    generate_vmap_rule = False  # vmap runs forward batched instead of calling `vmap` (a rule torch.func derives)

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the vmap staticmethod "
                                  "or set generate_vmap_rule=True.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        return _apply(cls, args, kwargs)


def _apply(cls, args: tuple, kwargs: dict):
    """`Function.apply`: run forward with grad mode off (the node is `ctx`), then, when an input requires grad,
    give the node its edges, its outputs and what `ctx.save_for_backward` named."""
    if TRANSFORM_HOOK[0] is not None:
        result = TRANSFORM_HOOK[0](cls, args, kwargs)
        if result is not NotImplemented:
            return result
    node = new_node(cls._backward_cls, (), None, ())  # made before forward (ctx is the node); edges come after
    needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
    node.needs_input_grad = needs
    recording = GRAD.mode > 0 and any(needs)
    level = DUAL[0]
    dual = level is not None and any(_tangent(a, level) is not None for a in args)
    prev = GRAD.mode
    GRAD.mode = 0 if prev > 0 else prev
    DUAL[0] = None  # forward sees plain tensors, as in PyTorch: the tangents are the jvp's business
    try:
        if cls.setup_context is not Function.setup_context:
            output = cls.forward(*args, **kwargs)
            cls.setup_context(node, args, output)
        else:
            output = cls.forward(node, *args, **kwargs)
    finally:
        GRAD.mode = prev
        DUAL[0] = level
    if not recording:
        if dual:
            _forward_mode(cls, node, args, output, level)
        return output
    single = not isinstance(output, tuple)
    _link_inputs(node, args)
    new_outs, out_index = _wrap_outputs(node, args, (output,) if single else output)
    _save(node, out_index)
    result = new_outs[0] if single else tuple(new_outs)
    if dual:
        _forward_mode(cls, node, args, result, level)
    return result


def _link_inputs(node, args: tuple) -> None:
    """The node's edges: one per tensor argument (None for one that does not require grad)."""
    edges = []
    tensor_pos = []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            tensor_pos.append(i)
            if a._requires_grad:
                edges.append((a._grad_fn, a._output_nr) if a._grad_fn is not None else (accumulator(a), 0))
            else:
                edges.append((None, 0))
    node._next_nodes = tuple(e[0] for e in edges)
    node._next_nrs = tuple(e[1] for e in edges) if any(e[1] for e in edges) else None
    node._n_args = len(args)
    node._forward_args = tuple(_ArgValue(a) if isinstance(a, Tensor) else a for a in args)
    node._tensor_pos = frozenset(tensor_pos)


def _wrap_outputs(node, args: tuple, outs: tuple) -> tuple:
    """The outputs as the node's: an input marked dirty is bumped, an input returned as it is becomes a new tensor,
    a non-differentiable or non-float output gets no grad_fn. Returns (the outputs, {id(output): (tensor, nr)})."""
    dirty = {id(t) for t in node.__dict__.get("_dirty", ())}
    non_diff = {id(t) for t in node.__dict__.get("_non_differentiable", ())}
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    new_outs, metas, out_index = [], [], {}
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            new_outs.append(o)
            metas.append(((), np.dtype("float32")))
            continue
        if id(o) in dirty:
            if o._grad_fn is None and o._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            t = o
            t._bump_version()
        elif id(o) in input_ids:
            t = make(o._data)  # a Function returning its input hands back a new tensor object
            t._version_counter = o._shared_counter()
        else:
            t = o
        metas.append((o._data.shape, o._data.dtype))
        if id(o) in non_diff or o._data.dtype.kind != "f":
            t._grad_fn = None
            t._requires_grad = False
        else:
            t._grad_fn = node
            t._output_nr = i
            t._requires_grad = True
        out_index[id(o)] = (t, i)
        new_outs.append(t)
    node._input_metadata = tuple(metas)
    if new_outs and isinstance(new_outs[0], Tensor):
        node._set_output(new_outs[0])
    return new_outs, out_index


def _save(node, out_index: dict) -> None:
    """What `ctx.save_for_backward` named: each tensor with its version now (an output as its data and number)."""
    to_save = node.__dict__.pop("_to_save", None)
    if to_save is None:
        return
    saved = []
    for s in to_save:
        if s is None:
            saved.append(None)
        elif id(s) in out_index:
            t, nr = out_index[id(s)]
            counter = t._shared_counter()
            saved.append(("output", (t._data, nr), counter, counter.value))
        else:
            saved.append(("input", s, s._shared_counter(), s._version))
    node._saved = tuple(saved)


def _tangent(a, level):
    e = a._extras if isinstance(a, Tensor) else None
    return e.tangent if e is not None and e.tangent is not None and e.tangent_level is level else None


def _forward_mode(cls, ctx, args: tuple, output, level) -> None:
    """Forward AD through a custom Function: `jvp(ctx, *tangents)` (a zero tangent for a tensor input without one,
    None for other arguments), reading what `ctx.save_for_forward` kept as `ctx.saved_tensors`; its results are
    the outputs' tangents."""
    if cls.jvp is Function.jvp:
        Function.jvp(ctx)  # PyTorch's NotImplementedError
    tangents = [(_tangent(a, level) if _tangent(a, level) is not None else make(np.zeros_like(a._data)))
                if isinstance(a, Tensor) else None for a in args]
    saved = ctx.__dict__.get("_saved")
    ctx._saved = None
    ctx._to_save = ctx.__dict__.get("_to_save_forward", ())
    DUAL[0] = None
    try:
        result = cls.jvp(ctx, *tangents)
    finally:
        DUAL[0] = level
        ctx._saved = saved
        ctx.__dict__.pop("_to_save", None)
    outs = output if isinstance(output, tuple) else (output,)
    results = result if isinstance(result, tuple) else (result,)
    for o, t in zip(outs, results):
        if isinstance(o, Tensor) and isinstance(t, Tensor) and o._data.dtype.kind == "f":
            e = o._get_extras()
            e.tangent, e.tangent_level = t, level


def once_differentiable(fn):
    """Mark a backward as not differentiable itself: it runs with grad mode off."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)

    return wrapper
