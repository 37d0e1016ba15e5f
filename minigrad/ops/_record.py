"""Turning a derivative table entry into a node class, and recording nodes during forward.

`rule("MulBackward0", "self other", self=lambda grad, other: grad * other, ...)` makes the class
MulBackward0. The parameter names of each formula say what it reads: `grad` (the incoming
gradient), `grads` (all of them, for several outputs), an input's name, `result` (the output),
or an extra non-tensor value (a dim, an exponent). A node saves only what the formulas of the
inputs that need a gradient read — as PyTorch does, which decides both memory use and which
in-place changes later break backward.

Formulas get NumPy arrays on the fast path and Tensors under `create_graph=True`; they are
written with operators and `_dual` helpers that work on both, so every rule is written once and
higher-order gradients come for free.
"""

from __future__ import annotations

import weakref

import numpy as np

from .._tensor import Tensor, make
from ..autograd import anomaly_mode
from ..autograd.graph import FREED, NOBODY, OUTPUT_REFS, SAVED_HOOKS, Node, Packed, _seq, forward_op_name, freed_error

_new = object.__new__
_wnew = weakref.ref.__new__  # a node is a weak reference to its output tensor (graph.Node)
_GRAD, _GRADS, _INPUT, _RESULT, _EXTRA = range(5)


class RuleNode(Node):
    """A node whose backward is a row of the derivative table."""

    # `_res` is the saved output array (rules that read `result`), `_rv` its version when saved and
    # `_rb` the output's version counter once it has one (`_saw_box`): no per-op box or tuple.
    __slots__ = ("_in", "_vers", "_res", "_rb", "_rv", "_ex", "_m")

    # filled in by rule(): input names, extra names, per-input (formula, argument sources), ...
    _inputs: tuple = ()
    _extras: tuple = ()
    _formulas: tuple = ()
    _keep: dict = {}
    _saves_result = False
    _multi = False
    _shown: dict = {}
    _exposed: frozenset = frozenset()  # what `_saved_<name>` shows: what formulas read, minus `_private` extras

    def _meta(self):
        return self._m if self._multi else (self._m,)

    def _apply(self, grads: list, create_graph: bool) -> list:
        saved = self._in
        if saved is FREED:
            raise freed_error(self)
        if self._multi:
            grads = [g if g is not None else _zeros(m, create_graph) for g, m in zip(grads, self._m)]
        g = grads[0]
        out = []
        nx = self._nx
        k = 0
        for fn, kind, i, srcs in self._formulas:
            if nx[k] is None:
                out.append(None)
            elif kind == _GRAD:  # the common one-argument shapes, without building an argument list
                out.append(fn(g))
            elif kind == _INPUT:
                v = saved[i]
                if isinstance(v, Tensor) and not create_graph:
                    box = v._vbox  # the version check of _unpack_input, inline: the array when unchanged
                    if box is None or box[0] == (0 if self._vers is None else self._vers[i]):
                        v = v._data
                    else:
                        v = self._unpack_input(i, create_graph)  # raises PyTorch's error
                elif v.__class__ is not float:
                    v = self._unpack_input(i, create_graph)
                out.append(fn(g, v))
            elif kind == _EXTRA:
                out.append(fn(g, self._ex[i]))
            elif kind == _RESULT:
                out.append(fn(g, self._unpack_result(create_graph)))
            else:
                out.append(fn(*[self._arg(src, j, g, grads, create_graph) for src, j in srcs]))
            k += 1
        return out

    # One-input rules (exp, tanh, sum, views...) get one of these as `_apply`, chosen by what their
    # formula reads: no loop over inputs, no dispatch on the formula's shape.
    def _apply_grad1(self, grads: list, create_graph: bool) -> list:
        if self._in is FREED:
            raise freed_error(self)
        return [self._formulas[0][0](grads[0])]

    def _apply_result1(self, grads: list, create_graph: bool) -> list:
        res = self._res
        if res is FREED:
            raise freed_error(self)
        if create_graph or self._rb is not None:
            res = self._unpack_result(create_graph)
        return [self._formulas[0][0](grads[0], res)]

    def _apply_input1(self, grads: list, create_graph: bool) -> list:
        if self._in is FREED:
            raise freed_error(self)
        return [self._formulas[0][0](grads[0], self._unpack_input(0, create_graph))]

    def _apply_extra1(self, grads: list, create_graph: bool) -> list:
        if self._in is FREED:
            raise freed_error(self)
        fn, _, i, _ = self._formulas[0]
        return [fn(grads[0], self._ex[i])]

    def _apply_one(self, grads: list, create_graph: bool) -> list:
        if self._in is FREED:
            raise freed_error(self)
        fn, kind, i, srcs = self._formulas[0]
        return [fn(*[self._arg(src, j, grads[0], grads, create_graph) for src, j in srcs])]

    def _arg(self, kind: int, i: int, g, grads: list, create_graph: bool):
        if kind == _GRAD:
            return g
        if kind == _INPUT:
            return self._unpack_input(i, create_graph)
        if kind == _RESULT:
            return self._unpack_result(create_graph)
        if kind == _EXTRA:
            return self._ex[i]
        return grads

    def _unpack_input(self, i: int, create_graph: bool):
        v = self._in[i]
        if v.__class__ is Packed:
            t = v.unpack(v.obj)
            return t if create_graph else t._data
        if isinstance(v, Tensor):
            saved = self._vers[i] if self._vers is not None else 0
            box = v._vbox
            now = box[0] if box is not None else 0
            if now != saved:
                raise RuntimeError(modified_message(v, now, saved))
            return v if create_graph else v._data
        return v

    def _unpack_result(self, create_graph: bool):
        arr, box = self._res, self._rb
        if box is not None and box[0] != self._rv:
            t = make(arr, self, True)
            raise RuntimeError(modified_message(t, box[0], self._rv))
        if not create_graph:
            return arr
        t = make(arr, self, True)
        t._vbox = box
        return t

    def _saw_box(self, t: Tensor, box: list) -> None:
        """`t` just got its version counter; if `t` is the result this node saved, watch that counter."""
        if self._saves_result and self._res is t._data:
            self._rb = box

    def _save_result(self, t: Tensor) -> None:
        """Save `t` (already modified in place, so at a version above 0) as this node's result."""
        self._res = t._data
        self._rv = t._version
        self._rb = t._vbox

    def _release(self) -> None:
        if self._in is not None or self._res is not None:
            self._in = FREED
            self._res = FREED

    def _read_saved(self, key: str):
        cls = type(self)
        if key not in cls._exposed:
            raise AttributeError(f"'{cls.__name__}' object has no attribute '_saved_{key}'")
        if key in cls._extras:
            value = self._ex[cls._extras.index(key)]
            show = cls._shown.get(key)
            return show(self, value) if show is not None else value
        if key == "result":
            if self._res is FREED:
                raise freed_error(self)
            return self._unpack_result(True)
        if self._in is FREED:
            raise freed_error(self)
        if self._in is None:
            return None
        v = self._in[cls._inputs.index(key)]
        if v.__class__ is Packed:
            return v.unpack(v.obj)
        if v is None or isinstance(v, Tensor):
            return v
        return make(np.asarray(v))  # a Python scalar was saved as a wrapped 0-d tensor


def modified_message(t: Tensor, now: int, saved: int) -> str:
    from .._dtypes import FROM_NP

    what = f"[minigrad.{FROM_NP[t._data.dtype]._legacy} [{', '.join(str(d) for d in t._data.shape)}]]"
    if t._grad_fn is not None:
        what += f", which is output {t._out_nr} of {forward_op_name(t._grad_fn)},"
    return (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"{what} is at version {now}; expected version {saved} instead. Hint: enable anomaly detection to find "
        "the operation that failed to compute its gradient, with "
        "minigrad.autograd.set_detect_anomaly(True, check_nan=False)."
    )


def _zeros(meta, create_graph: bool):
    shape, dtype = meta
    z = np.zeros(shape, dtype)
    return make(z) if create_graph else z


def _picker(keep: tuple):
    """A function keeping the inputs a formula reads (None elsewhere), built once per pattern."""
    if all(keep):
        return None
    if not any(keep):
        return False
    if keep == (True, False):
        return lambda inputs: (inputs[0], None)
    if keep == (False, True):
        return lambda inputs: (None, inputs[1])
    return lambda inputs: tuple([x if k else None for x, k in zip(inputs, keep)])


def _shape_of(srcs: list) -> tuple:
    """(kind, index) for formulas `f(grad)`, `f(grad, <input>)`, `f(grad, result)`, `f(grad, <extra>)`;
    (-1, 0) otherwise."""
    if srcs == [(_GRAD, 0)]:
        return _GRAD, 0
    if len(srcs) == 2 and srcs[0] == (_GRAD, 0) and srcs[1][0] in (_INPUT, _RESULT, _EXTRA):
        return srcs[1]
    return -1, 0


def rule(name: str, inputs: str, extras: str = "", *, multi: bool = False, shown: dict | None = None,
         **formulas) -> type:
    """Make the node class `name` from one row of the derivative table. `shown` maps an extra to
    `f(node, stored)`, what `_saved_<extra>` shows when the op stores something cheaper to get."""
    input_names = tuple(inputs.split())
    extra_names = tuple(extras.split())
    compiled = []
    reads = []
    saves_result = False
    for inp in input_names:
        fn = formulas.pop(inp, None)
        if fn is None:
            compiled.append((_not_differentiable(name, inp), _GRAD, 0, ((_GRAD, 0),)))
            reads.append(set())
            continue
        params = fn.__code__.co_varnames[: fn.__code__.co_argcount]
        srcs = []
        used = set()
        for p in params:
            if p == "grad":
                srcs.append((_GRAD, 0))
            elif p == "grads":
                srcs.append((_GRADS, 0))
            elif p == "result":
                srcs.append((_RESULT, 0))
                saves_result = True
            elif p in extra_names:
                srcs.append((_EXTRA, extra_names.index(p)))
            elif p in input_names:
                srcs.append((_INPUT, input_names.index(p)))
                used.add(input_names.index(p))
            else:
                raise TypeError(f"{name}: formula for {inp} reads unknown value {p!r}")
        compiled.append((fn, *_shape_of(srcs), tuple(srcs)))
        reads.append(used)
    if formulas:
        raise TypeError(f"{name}: formulas for unknown inputs {sorted(formulas)}")
    keep = {}
    n = len(input_names)
    for mask in range(1 << n):
        used = set()
        for i in range(n):
            if mask >> i & 1:
                used |= reads[i]
        keep[mask] = _picker(tuple(i in used for i in range(n)))
    read = set().union(*reads) if reads else set()
    exposed = {input_names[i] for i in read} | {e for e in extra_names if not e.startswith("_")}
    if saves_result:
        exposed.add("result")
    # record2, record_scalar: per mask of the inputs that need grad, (keep input 0, keep input 1)
    keep2 = tuple((0 in _reads_of(reads, m), 1 in _reads_of(reads, m)) for m in range(4)) if n == 2 else None
    saved = {f"{prefix}{key}": _saved_property(key) for key in exposed for prefix in ("_saved_", "_raw_saved_")}
    return type(name, (RuleNode,), {**saved,
        "__slots__": (), "__module__": "minigrad.autograd.graph", "_inputs": input_names, "_k2": keep2,
        "_extras": extra_names, "_formulas": tuple(compiled), "_keep": keep, "_saves_result": saves_result,
        "_shown": shown or {},
        "_multi": multi, "_exposed": frozenset(exposed),
        **({"_apply": _ONE_INPUT[compiled[0][1]]} if len(input_names) == 1 and not multi else {}),
    })


def _reads_of(reads: list, mask: int) -> set:
    """The inputs the formulas of the inputs in `mask` read."""
    return set().union(*[r for i, r in enumerate(reads) if mask >> i & 1])


def _saved_property(key: str) -> property:
    """`node._saved_<key>`: a property per exposed name (a class `__getattr__` would slow every attribute read)."""
    return property(lambda node: node._read_saved(key), doc=f"The value this node saved as `{key}`.")


_ONE_INPUT = {_GRAD: RuleNode._apply_grad1, _RESULT: RuleNode._apply_result1, _INPUT: RuleNode._apply_input1,
              _EXTRA: RuleNode._apply_extra1, -1: RuleNode._apply_one}


def _not_differentiable(node: str, inp: str):
    def fail(*_):
        raise RuntimeError(f"the derivative for '{inp}' of {forward_op_name_from(node)} is not implemented.")
    return fail


def forward_op_name_from(node_name: str) -> str:
    return node_name.split("Backward")[0].lower()


def _version(v: Tensor) -> int:
    """The version a saved tensor has now (0 unless modified in place); refuses inference tensors."""
    vx = v._x
    if vx is not None and vx.inference:
        raise RuntimeError(INFERENCE_SAVED)
    box = v._vbox
    return box[0] if box is not None else 0


def _finish(node, cls, out, t: Tensor, meta: tuple | None = None) -> Tensor:
    """Common tail of recording: fill in the output tensor `t` (the node refers to it weakly), the
    saved result, the output's metadata (`meta` when the caller knows it)."""
    if SAVED_HOOKS or _ANOMALY[0]:
        _slow_extras(node)
    if out.__class__ is not _ndarray:
        out = np.asarray(out)
    t._data = out
    t._grad_fn = node
    t._requires_grad = True
    t._grad = None
    t._base = None
    t._out_nr = 0
    t._x = None
    t._vbox = None
    if cls._saves_result:
        node._res = out
        node._rb = None
        node._rv = 0
    else:
        node._res = None
    if meta is None:
        meta = METAS.get(out.shape)
        if meta is None or meta[1] is not out.dtype:
            meta = _intern_meta(out.shape, out.dtype)
    node._m = meta
    return t


# Nodes share one (shape, dtype) tuple per shape instead of making two tuples per op: shape -> the
# meta last used for it (one lookup in the common one-dtype program), and (shape, dtype) -> meta.
METAS: dict = {}
_METAS_BY_DTYPE: dict = {}
_ANOMALY = anomaly_mode.ENABLED  # mutated in place by anomaly mode, never rebound
_ndarray = np.ndarray


def _intern_meta(shape: tuple, dtype) -> tuple:
    if len(_METAS_BY_DTYPE) > 4096:
        METAS.clear()
        _METAS_BY_DTYPE.clear()
    key = (shape, dtype)
    meta = METAS[shape] = _METAS_BY_DTYPE.setdefault(key, key)
    return meta


def _slow_extras(node) -> None:
    """Saved-tensor hooks and anomaly mode: off the fast path, they cost only when enabled."""
    kept = node._in
    if SAVED_HOOKS and kept is not None:
        pack, unpack = SAVED_HOOKS[-1]
        node._in = tuple(Packed(pack(v), unpack) if isinstance(v, Tensor) else v for v in kept)
    if anomaly_mode.ENABLED[0]:
        anomaly_mode.remember_forward(node)


def record1(cls, out, a: Tensor, extras: tuple = (), like: bool = False) -> Tensor:
    """`record` for one input that requires grad (the unary-op fast path); `like`: the output has
    `a`'s shape and dtype (elementwise math), so its metadata is that of `a`'s node."""
    t = _new(Tensor)
    node = _wnew(cls, t if OUTPUT_REFS[0] else NOBODY)
    fa = a._grad_fn
    meta = None
    if fa is None:
        node._nx = (a,)  # a leaf: the tensor stands for its AccumulateGrad (graph.pin_leaf)
        node._nr = None
    else:
        node._nx = (fa,)
        node._nr = None if a._out_nr == 0 else (a._out_nr,)
        if like and fa._multi is False:
            meta = fa._m
    node._seq = next(_seq)
    node._x = None
    node._ex = extras
    if cls._keep[1] is None:
        node._in = (a,)
        v = _version(a)
        node._vers = [v] if v else None
    else:
        node._in = None
        node._vers = None
    return _finish(node, cls, out, t, meta)


def record2(cls, out, a: Tensor, b, extras: tuple = ()) -> Tensor:
    """`record` for two inputs (the binary-op fast path: + - * @ between tensors); `b` may be a
    Python scalar."""
    t = _new(Tensor)
    node = _wnew(cls, t if OUTPUT_REFS[0] else NOBODY)
    mask = 0
    fa = fb = None
    if a._requires_grad:
        fa = a._grad_fn
        if fa is None:
            fa = a  # a leaf stands for its AccumulateGrad (graph.pin_leaf)
        mask = 1
    b_tensor = b.__class__ is Tensor or isinstance(b, Tensor)
    if b_tensor and b._requires_grad:
        fb = b._grad_fn
        if fb is None:
            fb = b
        mask |= 2
    node._nx = (fa, fb)
    node._nr = None if (fa is None or a._out_nr == 0) and (fb is None or b._out_nr == 0) else (
        a._out_nr if fa is not None else 0, b._out_nr if fb is not None else 0)
    node._seq = next(_seq)
    node._x = None
    node._ex = extras
    keep_a, keep_b = cls._k2[mask]
    node._vers = None
    if keep_a or keep_b:
        node._in = (a if keep_a else None, b if keep_b else None)
        # a tensor never modified in place and not an inference tensor is at version 0: skip the call
        va = 0 if not keep_a or (a._vbox is None and a._x is None) else _version(a)
        vb = 0 if not keep_b or not b_tensor or (b._vbox is None and b._x is None) else _version(b)
        if va or vb:
            node._vers = [va, vb]
    else:
        node._in = None
    return _finish(node, cls, out, t)


def record_scalar(cls, out, a: Tensor, s, extras: tuple = ()) -> Tensor:
    """`record2` for `a op s`: a tensor that requires grad and a Python scalar, with an output of
    `a`'s shape and dtype (so the metadata is `a`'s node's, when it has one)."""
    t = _new(Tensor)
    node = _wnew(cls, t if OUTPUT_REFS[0] else NOBODY)
    fa = a._grad_fn
    if fa is None:
        node._nx = (a, None)  # a leaf stands for its AccumulateGrad (graph.pin_leaf)
        node._nr = None
        meta = None
    else:
        node._nx = (fa, None)
        node._nr = None if a._out_nr == 0 else (a._out_nr, 0)
        meta = fa._m if fa._multi is False else None
    node._seq = next(_seq)
    node._x = None
    node._ex = extras
    keep_a, keep_s = cls._k2[1]  # only input 0 needs grad
    node._vers = None
    if keep_a:
        node._in = (a, s if keep_s else None)
        v = _version(a)
        if v:
            node._vers = [v, 0]
    else:
        node._in = (None, s) if keep_s else None
    return _finish(node, cls, out, t, meta)


def record(cls, out, inputs: tuple, extras: tuple = ()) -> Tensor:
    """Wrap `out` in a tensor whose grad_fn is a new `cls` node over `inputs` (any number).

    Callers have already checked that grad mode is on and some input requires grad.
    """
    nexts = []
    nrs = []
    mask = 0
    bit = 1
    for a in inputs:
        if isinstance(a, Tensor) and a._requires_grad:
            fn = a._grad_fn
            nexts.append(fn if fn is not None else a)  # a leaf stands for its AccumulateGrad
            nrs.append(a._out_nr if fn is not None else 0)
            mask |= bit
        else:
            nexts.append(None)
            nrs.append(0)
        bit <<= 1
    t = _new(Tensor)
    node = _wnew(cls, t if OUTPUT_REFS[0] else NOBODY)
    node._nx = tuple(nexts)
    node._nr = tuple(nrs) if any(nrs) else None
    node._seq = next(_seq)
    node._x = None
    node._ex = extras
    pick = cls._keep[mask]
    kept = node._in = inputs if pick is None else (None if pick is False else pick(inputs))
    node._vers = None
    if kept is not None:
        vers = [_version(v) if isinstance(v, Tensor) else 0 for v in kept]
        if any(vers):
            node._vers = vers
    return _finish(node, cls, out, t)


def record_multi(cls, outs: list, inputs: tuple, extras: tuple = ()) -> list:
    """Like record, for nodes with several outputs (split, unbind): output i has output_nr i."""
    first = record(cls, outs[0], inputs, extras)
    node = first._grad_fn
    node._m = tuple((np.shape(o), np.asarray(o).dtype) for o in outs)
    result = [first]
    for i, o in enumerate(outs[1:], 1):
        t = make(o if o.__class__ is np.ndarray else np.asarray(o), node, True)
        t._out_nr = i
        result.append(t)
    return result


INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use "
    "it in autograd, or use `minigrad.no_grad()` instead of `minigrad.inference_mode()`."
)
