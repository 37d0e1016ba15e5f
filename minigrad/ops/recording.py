"""Derivative rules as node classes, and recording a node when an op runs.

`rule("MulBackward0", "self other", saves="self other", self=..., other=..., text=...)` declares
one row of the derivative table and returns its node class. `inputs` are the op's differentiable
inputs in `next_functions` order. `saves` lists what the node may keep for backward: inputs by
name, `result` (the op's output), and the op's other arguments (`dim`, `exponent`...), which the op
passes to `record` as keywords. Each formula takes `grad` (or `grads`, for several outputs) and the
saved values it reads, named as in `saves`. A node keeps only what the formulas of the inputs that
need a gradient read, as PyTorch does; that decides both its memory and which in-place changes
later break backward.

Formulas receive NumPy arrays on the plain path and Tensors under `create_graph=True`. They are
written with operators and `xp` functions, which work on both, so each is written once and
higher-order gradients come for free.
"""

from __future__ import annotations

import inspect
import re
import weakref

import numpy as np

from .._state import DUAL, GRAD
from .._tensor import Tensor, make
from ..autograd import anomaly_mode
from ..autograd.graph import (
    FREED,
    NO_OUTPUT,
    SAVED_FREED,
    SAVED_HOOKS,
    SAVED_HOOKS_SET,
    SAVED_NONE,
    SEQUENCE,
    TRACK_OUTPUTS,
    Node,
    Packed,
    SavedTensor,
    accumulator,
    freed_error,
    metadata_of,
    modified_message,
    unpacked,
)
from .operands import WRAPPED

_INPUT, _RESULT, _ARG = range(3)  # where a formula's parameter comes from
_new = object.__new__
_new_ref = weakref.ref.__new__
_ndarray = np.ndarray

DETACHED_SAVED = ("Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is not "
                  "supported, please use out-of-place `.detach()` instead")
INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use "
    "it in autograd, or use `minigrad.no_grad()` instead of `minigrad.inference_mode()`."
)


class RuleNode(Node):
    """A node whose backward is a row of the derivative table (made by `rule`)."""

    __slots__ = ("_kept_inputs", "_kept_versions", "_args", "_result", "_result_counter", "_result_version")
    _new_arrays = True  # a formula's result is a new array, a view, or a gradient it received (engine.owned_gradient)

    # set by rule() on each node class
    _inputs: tuple = ()  # input names, in next_functions order
    _formulas: tuple = ()  # per input: (function, ((source, key), ...) of its parameters after grad, part), part
    # being None, or the input's place in what a formula several inputs share returns
    _keeps: tuple = ()  # per mask of the inputs that need a gradient: (which inputs to keep or None, keep result?)
    _variadic = False  # one input that is a list of tensors (cat, stack): its formula returns a list
    _saves_result = False
    _multi = False  # several outputs (split, unbind): formulas take `grads`
    _plain = True  # one output, one formula per input (not several outputs, a list input nor a shared formula)
    _elementwise = False  # the output has the first input's shape and dtype when the other inputs are numbers
    _exposed: frozenset = frozenset()  # the names `_saved_<name>` shows
    _shown: dict = {}  # name -> f(node, value): how `_saved_<name>` shows a value stored in another form
    _text = ""
    _text_args: tuple = ()  # the arguments the rule text names: their values are shown beside it
    _tensor_args: tuple = ()  # saved arguments that are tensors in PyTorch (indices, masks): freed with the rest
    _forward_kind = None  # the forward rule (ops/dual.py): "derived", "linear", "bilinear", "formula" or None
    _forward_formula = None  # for "formula": (function, where each parameter comes from)

    # -- introspection ---------------------------------------------------------------------------------
    @property
    def input_names(self) -> tuple:
        if self._variadic:
            return tuple(f"{self._inputs[0]}[{i}]" for i in range(len(self._next_nodes)))
        return self._inputs

    @property
    def rule_text(self) -> str:
        args = self._args
        values = [f"{name} = {_show(args[name])}" for name in self._text_args if name in args]
        return self._text + (f"   ({', '.join(values)})" if values else "")

    # -- backward ------------------------------------------------------------------------------------
    def _apply(self, grads: list, create_graph: bool) -> list:
        """The gradient of each input (`_gradients`), with the common case written out here: a node of one output
        whose inputs each have their own formula, without create_graph and with every input's gradient wanted
        (each formula on the arrays it reads, nothing else)."""
        if create_graph:
            GRAD.formula += 1  # the formulas' Python numbers take PyTorch's Scalar overloads (see `rule`)
            try:
                return self._gradients(grads, True)
            finally:
                GRAD.formula -= 1
        if not self._plain or GRAD.wanted is not None:
            return self._gradients(grads, False)
        grad = grads[0]
        out = []
        try:
            for next_node, (formula, reads, _) in zip(self._next_nodes, self._formulas):
                out.append(None if next_node is None else formula(grad, *self._values(reads, False)) if reads else
                           formula(grad))
            if self._saves_result and self._result_counter is not None:  # (as `_gradients`)
                self._unpack_result(False)
            return out
        except Exception:  # (as `_gradients`)
            self._check_saved()
            raise

    def _gradients(self, grads: list, create_graph: bool) -> list:
        """The gradient of each input: its formula, or its part of a formula several inputs share, computed once."""
        try:
            if self._multi:  # several outputs: the formulas take them all (`grads`), zeros where none arrived
                grads = [g if g is not None else _zeros(meta, create_graph)
                         for g, meta in zip(grads, self._input_metadata)]
                grad = grads
            else:
                grad = grads[0]
            if self._variadic:  # one formula gives the gradients of every tensor of the list
                formula, reads, _ = self._formulas[0]
                out = formula(grad, *self._values(reads, create_graph))
                return [None if e is None else g for e, g in zip(self._next_nodes, out)]
            out = []
            shared = None
            wanted = GRAD.wanted  # with autograd.grad's inputs: the nodes the backward runs or captures
            for next_node, (formula, reads, part) in zip(self._next_nodes, self._formulas):
                if next_node is None:
                    out.append(None)
                elif wanted is not None and next_node not in wanted:  # no gradient asked of this input: PyTorch
                    self._check_saved()  # skips its formula, but unpacks (checks) every saved tensor first
                    out.append(None)
                elif part is not None:  # one of the gradients a shared formula returns (`self, other: f(...)`)
                    if shared is None:
                        shared = {}
                    if formula not in shared:
                        shared[formula] = formula(grad, *self._values(reads, create_graph))
                    out.append(shared[formula][part])
                elif not reads:
                    out.append(formula(grad))
                else:
                    out.append(formula(grad, *self._values(reads, create_graph)))
            if self._saves_result and self._result_counter is not None:  # PyTorch unpacks every saved tensor: a
                self._unpack_result(create_graph)  # result written since is refused even where no formula read it
            return out
        except Exception:  # PyTorch unpacks every saved tensor before computing: a stale one is reported first,
            self._check_saved()  # the first in its order
            raise

    def _values(self, reads: tuple, create_graph: bool) -> list:
        """A formula's parameters after `grad`: saved inputs (version-checked), the result, arguments. The first
        test of each kind is the common case (nothing written, detached, packed or freed), which needs no check."""
        values = []
        for source, key in reads:
            if source == _INPUT:
                kept = self._kept_inputs
                v = kept[key] if kept.__class__ is tuple and not self._variadic else None
                if v.__class__ is Tensor and v._version_counter is None and (
                        v._extras is None or (v._extras.invalid is None and v._extras.detached_at < 0)):
                    values.append(v if create_graph else v._data)  # never written nor detached: nothing to check
                elif v.__class__ is _ndarray or (v.__class__ is float and not create_graph):  # a number (`x * 2.0`,
                    values.append(v)  # kept as a 0-d array or as it is): nothing to check
                else:
                    values.append(self._input_value(key, create_graph))
            elif source == _ARG:
                value = self._args[key]
                if value is FREED:
                    raise freed_error(self)
                values.append(value.checked() if value.__class__ is SavedArg else value)
            elif not create_graph and self._result_counter is None and self._result.__class__ is _ndarray:
                values.append(self._result)  # the output, never written since
            else:
                values.append(self._unpack_result(create_graph))
        return values

    def _input_value(self, key: int, create_graph: bool):
        """Saved input `key` for a formula (the whole list for a list input), checked as PyTorch checks it."""
        if self._kept_inputs is FREED:
            raise freed_error(self)
        if self._variadic:  # the whole list
            versions = self._kept_versions or (0,) * len(self._kept_inputs)
            return [_unpack(v, ver, create_graph) for v, ver in zip(self._kept_inputs, versions)]
        v = self._kept_inputs[key]
        if v.__class__ is _ndarray:  # (a number `tensor op number` saves as a 0-d array: float_operand)
            return v
        if v.__class__ is float or v.__class__ is int:  # a number: nothing to check (see `WrappedFloat`)
            return WRAPPED[v.__class__](v) if create_graph else v
        return self._unpack_input(v, self._kept_versions[key] if self._kept_versions else 0, create_graph)

    def _unpack_input(self, v, version: int, create_graph: bool):
        if v.__class__ is Tensor and v._grad_fn is None and v._extras is not None:
            if v._extras.invalid:  # PyTorch reads a saved input's grad_fn before its version: a refused view raises
                raise RuntimeError(v._extras.invalid)
            if v._extras.detached_at > self._sequence_number:
                raise RuntimeError(DETACHED_SAVED)
        return _unpack(v, version, create_graph)

    def _check_saved(self) -> None:
        """Unpack every saved tensor as PyTorch's node does first thing: the inputs by name (its order), then the
        result."""
        kept = self._kept_inputs
        if kept is FREED or (self._saves_result and self._result is FREED) or any(
                self._args.get(k) is FREED for k in self._tensor_args):
            raise freed_error(self)
        versions = self._kept_versions
        kept = kept or ()
        order = range(len(kept)) if self._variadic else sorted(range(len(kept)), key=lambda i: self._inputs[i])
        for i in order:
            if kept[i] is not None:
                self._unpack_input(kept[i], versions[i] if versions else 0, False)
        if self._saves_result and self._result_counter is not None:
            self._unpack_result(False)
        for k in self._tensor_args:
            value = self._args.get(k)
            if value.__class__ is SavedArg:
                value.checked()

    def _counter_made(self, t: Tensor, counter) -> None:
        if self._saves_result and self._result is t._data:
            self._result_counter = counter

    def _unpack_result(self, create_graph: bool):
        if self._result is FREED:
            raise freed_error(self)
        counter = self._result_counter  # None until someone writes to the output in place (or takes a view)
        if counter is not None and counter.value != self._result_version:
            raise RuntimeError(modified_message(make(self._result, self._result_node(), True), counter.value,
                                                self._result_version))
        if self._result.__class__ is Packed:  # hooks set through `_raw_saved_result`
            t = unpacked(self._result, self._result_node())
            return t if create_graph else t._data
        if not create_graph:
            return self._result
        t = make(self._result, self._result_node(), True)  # the output again, with the node that made it
        t._version_counter = counter
        if DUAL[0] is not None and self._extras and "result_tangent" in self._extras:
            level, tangent = self._extras["result_tangent"]
            if level is DUAL[0]:  # the output's tangent too: forward-over-reverse differentiates this formula
                extras = t._get_extras()
                extras.tangent, extras.tangent_level = tangent, level
        return t

    def _result_node(self):
        """The grad_fn of the saved result: after an in-place write through a view, the view's node after the write
        (its AsStridedBackward0 in PyTorch) while it lives (PyTorch holds it weakly); else this node."""
        ref = self._extras.get("view_node") if self._extras else None
        node = ref() if ref is not None else None
        return node or self

    def _pack_saved(self, name: str, pack_hook, unpack_hook) -> None:
        """`_raw_saved_<name>.register_hooks(pack_hook, unpack_hook)`: pack the saved value now, unpack on use."""
        if name == "result":
            value = self._result
            if value is FREED:
                raise RuntimeError(SAVED_FREED)
            if value.__class__ is Packed:
                raise RuntimeError(SAVED_HOOKS_SET)
            if value is None:
                raise RuntimeError(SAVED_NONE)
            self._result = Packed(pack_hook(self._unpack_result(True)), unpack_hook)
            return
        kept = self._kept_inputs
        if kept is FREED:
            raise RuntimeError(SAVED_FREED)
        value = None if kept is None else kept[type(self)._inputs.index(name)]
        if value.__class__ is Packed:
            raise RuntimeError(SAVED_HOOKS_SET)
        if not isinstance(value, Tensor):
            raise RuntimeError(SAVED_NONE)
        versions = self._kept_versions
        _unpack(value, versions[type(self)._inputs.index(name)] if versions else 0, True)  # still unmodified?
        kept = list(kept)
        kept[type(self)._inputs.index(name)] = Packed(pack_hook(value), unpack_hook, value)
        self._kept_inputs = tuple(kept)

    def _release(self) -> None:
        """Free the saved tensors (what a second backward needs); saved arguments stay, as in PyTorch."""
        if self._kept_inputs is not None:
            self._kept_inputs = FREED
        if self._saves_result and self._result is not None:
            self._result = FREED
        if self._tensor_args:
            self._args = {**self._args, **dict.fromkeys(self._tensor_args, FREED)}

    # -- `_saved_<name>` ------------------------------------------------------------------------------
    def _read_saved(self, name: str):
        cls = type(self)
        if name in cls._inputs:
            if self._kept_inputs is FREED:
                raise freed_error(self)
            if self._kept_inputs is None:
                return None
            v = self._kept_inputs[cls._inputs.index(name)]
            if v.__class__ is Packed:
                return unpacked(v)
            if v is None or isinstance(v, Tensor):
                return v
            return make(np.array(v))  # a number, shown as PyTorch shows it: a 0-d tensor (a copy: never the cache's)
        if name == "result":
            if self._result is FREED:
                raise freed_error(self)
            return self._unpack_result(True)
        value = self._args.get(name)
        if value is FREED:
            raise freed_error(self)
        if value.__class__ is SavedArg:
            return value.shown()
        show = cls._shown.get(name)
        return show(self, value) if show is not None else value


def _unpack(v, version: int, create_graph: bool):
    """A saved input for a formula: a Tensor is checked against its version when saved."""
    if v.__class__ is Packed:
        t = unpacked(v)
        return t if create_graph else t._data
    if isinstance(v, Tensor):
        counter = v._version_counter
        if counter is not None and counter.value != version:
            raise RuntimeError(modified_message(v, counter.value, version))
        return v if create_graph else v._data
    return v


def _show(value) -> str:
    return repr(tuple(value)) if isinstance(value, (list, tuple)) else repr(value)


def _zeros(meta, create_graph: bool):
    shape, dtype = meta
    z = np.zeros(shape, dtype)
    return make(z) if create_graph else z


# -- declaring a rule ---------------------------------------------------------------------------------
def rule(name: str, inputs: str, saves: str = "", *, text: str, multi: bool = False, shown: dict | None = None,
         defaults: dict | None = None, elementwise: bool = False, tensor_args: str = "", forward=None,
         **formulas) -> type:
    """Declare the node class `name`: one row of the derivative table (see the module docstring). With
    `multi`, the node has several outputs and its formulas take `grads`, the list of their gradients.

    A formula several inputs share is given under their names joined as derivatives.yaml writes them,
    `**{"self, other": f}`: `f` returns one gradient per input, and a node computes it once (for atan2, the
    common denominator). Python numbers in formulas read like the math (`grad / (self * self + 1)`): under
    `create_graph=True` the ops record PyTorch's Scalar overloads for them (AddBackward1, MulBackward1, as its
    C++ formulas do), where `tensor + 1` elsewhere records AddBackward0 (`GRAD.formula`, set while formulas run).

    `text` is the one-line rule the animation shows. `shown` maps a saved argument to `f(node, value)`,
    what `_saved_<name>` shows when the op stores something cheaper to keep. `defaults` are the values of
    saved arguments an op need not pass (add's `alpha=1`). `elementwise`: the op's output has the shape
    and dtype of its first input whenever its other inputs are Python numbers (exp, `x * 2`), so the node
    takes its output's metadata from that input's node. `tensor_args` names saved arguments that PyTorch saves as
    tensors (an index, a mask): backward frees them like saved inputs, so a second backward raises.
    `forward`: the forward rule (forward-mode AD), derived for an elementwise rule (see `_forward_rule`)."""
    input_names = tuple(inputs.split())
    variadic = len(input_names) == 1 and input_names[0].endswith("[]")
    if variadic:
        input_names = (input_names[0][:-2],)
    saved_names = tuple(saves.split())
    first = "grads" if multi else "grad"
    compiled, reads = _compile(name, formulas, input_names, saved_names, first)
    saves_result = "result" in saved_names
    exposed = {n for n in saved_names if not n.startswith("_")}
    text_args = tuple(n for n in saved_names if n not in input_names and n != "result"
                      and re.search(rf"\b{re.escape(n)}\b", text))
    saved = {f"_saved_{key}": _saved_property(key) for key in exposed}
    saved.update({f"_raw_saved_{key}": _raw_saved_property(key) if key in input_names or key == "result"
                  else _saved_property(key) for key in exposed})
    forward_kind, forward_formula = _forward_rule(name, forward, elementwise, input_names, saved_names)
    return type(name, (RuleNode,), {
        **saved, "_forward_kind": forward_kind, "_forward_formula": forward_formula,
        "__slots__": (), "__module__": __name__, "__doc__": f"{name}: {text}",
        "_inputs": input_names, "_formulas": tuple(compiled), "_variadic": variadic,
        "_keeps": _keeps(reads, input_names),
        "_saves_result": saves_result, "_multi": multi,
        "_plain": not (multi or variadic or any(part is not None for _, _, part in compiled)),
        "_elementwise": elementwise, "_exposed": frozenset(exposed),
        "_shown": shown or {},
        "_text": text, "_text_args": text_args, "_defaults": defaults or {}, "_tensor_args": tuple(tensor_args.split()),
    })


def _compile(name: str, formulas: dict, input_names: tuple, saved_names: tuple, first: str) -> tuple[list, list]:
    """Each input's (formula, its parameters' sources, its place in a shared formula's result) and what it reads;
    a formula shared by several inputs (`"self, other"`) is split among them."""
    parts = {}  # input -> (shared formula, its parameters' sources, what it reads, the input's place in its result)
    for key in [k for k in formulas if "," in k]:
        fn = formulas.pop(key)
        group = [n.strip() for n in key.split(",")]
        sources, used = _sources(name, key, fn, input_names, saved_names, first)
        parts.update({inp: (fn, sources, used, i) for i, inp in enumerate(group)})
    compiled, reads = [], []
    for inp in input_names:
        if inp in parts:
            fn, sources, used, part = parts.pop(inp)
        else:
            fn, part = formulas.pop(inp, None) or _not_differentiable(name, inp), None
            sources, used = _sources(name, inp, fn, input_names, saved_names, first)
        compiled.append((fn, sources, part))
        reads.append(used)
    if formulas or parts:
        formulas.update(parts)
        raise TypeError(f"{name}: formulas for unknown inputs {sorted(formulas)}")
    return compiled, reads


def _sources(node: str, inp: str, fn, input_names: tuple, saved_names: tuple, first: str) -> tuple[tuple, set]:
    """Where each parameter of a formula comes from; checked against what the row says it saves."""
    params = list(inspect.signature(fn).parameters)
    if not params or params[0] != first:
        raise TypeError(f"{node}: the formula for {inp} must take `{first}` first, not {params[:1]}")
    sources, used = [], set()
    for p in params[1:]:
        if p not in saved_names:
            raise TypeError(f"{node}: the formula for {inp} reads {p!r}, which the row does not save "
                            f"(saves: {' '.join(saved_names) or 'nothing'})")
        if p in input_names:
            sources.append((_INPUT, input_names.index(p)))
            used.add(p)
        elif p == "result":
            sources.append((_RESULT, None))
            used.add(p)
        else:
            sources.append((_ARG, p))
    return tuple(sources), used


def exact_zeros(formula):
    """Mark a forward formula that reads an absent tangent as PyTorch's zero tensor does (`_efficientzerotensor`):
    `a - 0` is `a`, `0 - a` is `-a`, `0 * a` is 0 even where `a` is inf or NaN, so the term of an operand without a
    tangent drops out exactly, signs of zeros included (`(self_t - other_t * result) / other` is `self_t / other`
    for a plain `other`, 0 · inf no NaN). Other formulas get tensors of zeros (ops/dual.py)."""
    formula.exact_zeros = True
    return formula


def exact_zeros_in_transforms(formula):
    """Mark a forward formula that reads an absent tangent as PyTorch's zero tensor under torch.func only (jvp,
    jacfwd): there functorch wraps the zero tensor, so a PyTorch formula that multiplies in place for plain
    tensors (`grad_target.mul_(grad)`) takes its out-of-place branch and the zero tensor's exact product; in plain
    forward AD the in-place product materializes zeros (0 · inf = NaN). The formula itself turns an absent tangent
    that PyTorch's kernels materialize in both modes into zeros."""
    formula.exact_zeros = "in transforms"
    return formula


def same_tangent(formula):
    """Mark a forward formula that is `self_t` itself, as PyTorch's generated one for `self: grad` (fmod and
    remainder by a number): the output's tangent is the input's tensor, so an in-place write into either shows
    in the other, as in PyTorch."""
    formula.same_tangent = True
    return formula


def _forward_rule(node: str, forward, elementwise: bool, input_names: tuple, saved_names: tuple) -> tuple:
    """(kind, compiled formula or None) of a rule's forward rule (forward-mode AD, ops/dual.py). For an elementwise
    rule it follows from the backward formulas and is not written; else `forward` is "linear" (the op applied to
    the tangents), "bilinear" (op(a_t, b) + op(a, b_t)), "derived" (an op whose backward formulas are elementwise
    though the op is not flagged so), "reduction" (each output element reduces its own group of input elements:
    the backward formula on a gradient of ones, times the tangent, summed over the group), or a formula over the
    tangents `<input>_t` and what the row saves; None: no forward rule yet (PyTorch's NotImplementedError);
    "refused": forward AD refuses the op, as PyTorch's NotImplemented node ("... that does not support it.")."""
    if forward is None:
        return ("derived" if elementwise else None), None
    if forward in ("linear", "bilinear", "derived", "reduction", "refused"):
        return forward, None
    sources = []
    for p in inspect.signature(forward).parameters:
        if p.endswith("_t") and p[:-2] in input_names:
            sources.append(("tangent", input_names.index(p[:-2])))
        elif p in input_names:
            sources.append((_INPUT, input_names.index(p)))
        elif p == "result":
            sources.append((_RESULT, None))
        elif p in saved_names:
            sources.append((_ARG, p))
        else:
            raise TypeError(f"{node}: the forward formula reads {p!r}, which is neither a tangent (`<input>_t`), "
                            f"an input nor saved (saves: {' '.join(saved_names) or 'nothing'})")
    return "formula", (forward, tuple(sources))


def _keeps(reads: list, input_names: tuple) -> tuple:
    """What a node keeps, for each mask of the inputs that need a gradient (bit i: input i; a list input such
    as cat's is one input, one bit): (a bool per input, or None when no input is kept; keep the result?).
    A node keeps only the inputs the formulas it will run read, as PyTorch does; the result it keeps whenever a
    formula reads it (PyTorch saves outputs unconditionally, and checks them in every backward)."""
    table = []
    keep_result = any("result" in r for r in reads)
    for mask in range(1 << len(input_names)):
        running = [r for i, r in enumerate(reads) if mask >> i & 1]
        keep = tuple(any(name in r for r in running) for name in input_names)
        table.append((keep if any(keep) else None, keep_result))
    return tuple(table)


def _saved_property(key: str) -> property:
    return property(lambda node: node._read_saved(key), doc=f"The value this node saved as `{key}`.")


def _raw_saved_property(key: str) -> property:
    return property(lambda node: SavedTensor(node, key),
                    doc=f"A handle on the tensor this node saved as `{key}`, to set pack/unpack hooks on.")


def _not_differentiable(node: str, inp: str):
    def fail(grad):
        raise RuntimeError(f"the derivative for '{inp}' of {node.split('Backward')[0].lower()} is not implemented.")
    return fail


# -- recording ------------------------------------------------------------------------------------------
class SavedArg:
    """A saved argument PyTorch saves as a tensor (an index, a mask, max's indices): the value the formulas read
    and the tensors it was made from, with their versions then. A write into one of them since is refused when
    backward reads it, as for a saved input (else the gradient would follow the new values), and
    `_saved_<name>` shows those tensors."""

    __slots__ = ("value", "tensors", "versions")

    def __init__(self, value, tensors):
        self.value = value
        self.tensors = tuple(t for t in tensors if isinstance(t, Tensor))
        self.versions = tuple(t._shared_counter().value for t in self.tensors)

    def checked(self):
        for t, version in zip(self.tensors, self.versions):
            now = t._version_counter.value
            if now != version:
                raise RuntimeError(modified_message(t, now, version))
        return self.value

    def shown(self):
        """The value as tensors: a source tensor itself where the value is its array, else a new one."""
        value = self.checked()
        by_data = {id(t._data): t for t in self.tensors}

        def one(v):
            t = by_data.get(id(v))
            return t if t is not None else make(v) if isinstance(v, _ndarray) else v
        return tuple(one(v) for v in value) if isinstance(value, tuple) else one(value)


def record(cls, result, inputs: tuple, **args) -> Tensor:
    """Wrap the array `result` in a Tensor whose grad_fn is a new `cls` node over `inputs`: the path every
    op takes when grad mode is on and an input requires grad (the caller has checked). `args` are the op's
    other arguments that the row saves (`dim=`, `exponent=`...).

    This is where an op's output and its node are made, together: the node is the weak reference to its
    output, so the tensor comes first. Every op of every forward pass comes through here, so its steps are
    written out in line, and the edges of the one- and two-input ops that are most of them have their own
    functions (see CONTRIBUTING.md)."""
    # 1. The output tensor (the same slots as `make` sets; tests/test_engine.py checks they agree).
    out = _new(Tensor)
    out._data = result = result if result.__class__ is _ndarray else np.asarray(result)
    out._requires_grad = True
    out._grad = out._version_counter = out._base = out._extras = None
    out._output_nr = 0
    # 2. Its node, with its edges and what it keeps (`_link_one`, `_link_two`, `_link_many`).
    node = _new_ref(cls, out if TRACK_OUTPUTS[0] else NO_OUTPUT)
    node._sequence_number = next(SEQUENCE)
    node._extras = node._metadata = None
    node._args = args or cls._defaults
    node._kept_versions = None
    n_inputs = len(inputs)
    if n_inputs == 2 and not cls._variadic:
        meta, keep_result = _link_two(node, cls, inputs)
    elif n_inputs == 1:
        meta, keep_result = _link_one(node, cls, inputs)
    else:
        meta, keep_result = _link_many(node, cls, inputs)
    # 3. What the gradient of the output must look like (an elementwise op's is its input's), the saved result.
    node._input_metadata = meta if meta is not None else metadata_of(result)
    if SAVED_HOOKS and node._kept_inputs is not None:
        node._kept_inputs = _packed(node._kept_inputs)
    if cls._saves_result:
        node._result = result if keep_result else None
        node._result_counter = None  # made when something first needs the output's counter (_counter_made)
        node._result_version = 0
    if anomaly_mode.ENABLED[0]:
        anomaly_mode.remember_forward(node)
    out._node = node  # (set last: the output's slots are all set once it has its node)
    return out


def _link_one(node, cls, inputs: tuple) -> tuple:
    """`record`'s edge for an op of one input (which records only when that input requires grad): to the node
    that made it or to a leaf's AccumulateGrad (made when the leaf first enters a graph). It keeps the input when
    its formula reads it (the `_keeps` table), with the input's version when not 0 (nearly always it is).
    Returns (the output's metadata when the op is elementwise, else None; keep the result?)."""
    a = inputs[0]
    prev = a._node if a._extras is None or not a._extras.stale else a._grad_fn  # (a stale view: the property rebuilds)
    node._next_nodes = (prev if prev is not None else accumulator(a),)
    node._next_nrs = (a._output_nr,) if a._output_nr else None
    meta = None
    if cls._elementwise and prev is not None and len(prev._input_metadata) == 1:
        meta = prev._input_metadata
    keep, keep_result = cls._keeps[1]
    node._kept_inputs = None if keep is None else inputs
    if keep is not None and (a._version_counter is not None or a._extras is not None):
        node._kept_versions = _versions(inputs)
    return meta, keep_result


def _link_two(node, cls, inputs: tuple) -> tuple:
    """`record`'s edges for `a op b`: either may be a number, or a tensor not requiring grad (no edge: None).
    Bit i of the mask: input i needs a gradient. Returns as `_link_one` (metadata only for `tensor op number`:
    the tensor's, when the op is elementwise)."""
    a, b = inputs
    tb = isinstance(b, Tensor)
    if not tb and a._requires_grad:  # `tensor op number` (x * 2.0, the commonest): mask 1, the tensor's edge alone
        prev = a._node if a._extras is None or not a._extras.stale else a._grad_fn  # (as in `_link_one`)
        node._next_nodes = (prev if prev is not None else accumulator(a), None)
        node._next_nrs = (a._output_nr, 0) if a._output_nr else None
        keep, keep_result = cls._keeps[1]
        node._kept_inputs = None if keep is None else (a if keep[0] else None, b if keep[1] else None)
        if keep is not None and keep[0] and (a._version_counter is not None or a._extras is not None):
            node._kept_versions = _versions(node._kept_inputs)
        if cls._elementwise and prev is not None and len(prev._input_metadata) == 1:
            return prev._input_metadata, keep_result  # the tensor's shape and dtype
        return None, keep_result
    ta = isinstance(a, Tensor)
    na = nb = None
    nr_a = nr_b = mask = 0
    if ta and a._requires_grad:
        na = a._node if a._extras is None or not a._extras.stale else a._grad_fn  # (as in `_link_one`)
        if na is None:
            na = accumulator(a)
        if na is not None:
            mask, nr_a = 1, a._output_nr
    if tb and b._requires_grad:
        nb = b._node if b._extras is None or not b._extras.stale else b._grad_fn
        if nb is None:
            nb = accumulator(b)
        if nb is not None:
            mask, nr_b = mask | 2, b._output_nr
    node._next_nodes = (na, nb)
    node._next_nrs = (nr_a, nr_b) if nr_a or nr_b else None
    keep, keep_result = cls._keeps[mask]
    if keep is None:
        node._kept_inputs = None
    else:
        keep_a, keep_b = keep
        node._kept_inputs = (a if keep_a else None, b if keep_b else None)
        if (keep_a and ta and (a._version_counter is not None or a._extras is not None)) or \
                (keep_b and tb and (b._version_counter is not None or b._extras is not None)):
            node._kept_versions = _versions(node._kept_inputs)
    return None, keep_result


def _link_many(node, cls, inputs: tuple) -> tuple:
    """`record`'s edges for an op of three or more inputs, or of a list of tensors (cat, stack)."""
    node._next_nodes, node._next_nrs, mask = _edges(inputs, cls._variadic)
    keep, keep_result = cls._keeps[mask]
    if keep is None:
        node._kept_inputs = None
    else:
        node._kept_inputs = inputs if cls._variadic else tuple([a if k else None for a, k in zip(inputs, keep)])
        if any(isinstance(a, Tensor) and (a._version_counter is not None or a._extras is not None)
               for a in node._kept_inputs):
            node._kept_versions = _versions(node._kept_inputs)
    return None, keep_result


def _versions(kept: tuple) -> tuple | None:
    """The version each kept tensor is at (None when all are 0); an inference tensor cannot be kept."""
    versions = []
    for a in kept:
        if isinstance(a, Tensor):
            if a._extras is not None and a._extras.inference:
                raise RuntimeError(INFERENCE_SAVED)
            counter = a._version_counter
            versions.append(counter.value if counter is not None else 0)
        else:
            versions.append(0)
    return tuple(versions) if any(versions) else None


def _edges(inputs: tuple, variadic: bool) -> tuple:
    """`record`'s edges for an op of three or more inputs, or a list of tensors (cat, stack): (nodes, input
    numbers or None, mask). A list's formula serves all its tensors: its mask is 1 (its one bit) when any of
    them requires grad, so the time stays linear in the list's length."""
    nodes, nrs, mask = [], [0] * len(inputs), 0
    for i, a in enumerate(inputs):
        if isinstance(a, Tensor) and a._requires_grad:
            nodes.append(a._grad_fn if a._grad_fn is not None else accumulator(a))
            nrs[i] = a._output_nr
            mask = 1 if variadic else mask | 1 << i
        else:
            nodes.append(None)
    return tuple(nodes), tuple(nrs) if any(nrs) else None, mask


def record_multi(cls, results: list, inputs: tuple, **args) -> list:
    """`record` for a node with several outputs (split, unbind): output i has output_nr i."""
    first = record(cls, results[0], inputs, **args)
    node = first._grad_fn
    outs = [first] + [make(r, node, True) for r in results[1:]]
    node._input_metadata = tuple(metadata_of(o._data)[0] for o in outs)
    for i, t in enumerate(outs):
        t._output_nr = i
    return outs


def _packed(kept: tuple) -> tuple:
    pack, unpack = SAVED_HOOKS[-1]
    return tuple(Packed(pack(v), unpack, v) if isinstance(v, Tensor) else v for v in kept)


def save_result(node: RuleNode, t: Tensor) -> None:
    """After an in-place op: the node's saved result is `t` (modified in place, so at a version above 0)."""
    if node._saves_result and node._result is not None:
        node._result = t._data
        node._result_counter = t._shared_counter()
        node._result_version = t._version


def is_recording(*tensors) -> bool:
    """Does an op on these operands record a node: grad mode on, and some operand requires grad?"""
    return GRAD.mode > 0 and any(isinstance(t, Tensor) and t._requires_grad for t in tensors)


def output_node(t: Tensor) -> Node | None:
    return t._grad_fn
