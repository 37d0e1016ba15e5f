"""Find the wrong node: each custom ``autograd.Function`` of a graph checked against finite differences.

    viz.gradcheck_graph(loss)            # the graph, wrong nodes marked; print() it for a table
    viz.animate(loss, check=True)        # the player; frame.check says the verdict at each step

Autograd trusts every ``backward`` it is given, so one wrong custom Function spoils every gradient
below it without any error. ``torch.autograd.gradcheck`` finds it only when you already suspect
a function and call it on inputs of your own; this check goes through the whole graph and re-runs
each Function on the values it saw in the forward pass (in float64), so it points at the node.

For each Function node: its ``forward`` is re-run in float64 on the inputs it was called with and
its ``backward`` gives the vector-Jacobian product for a cotangent ``g`` (the gradient the node
received in ``animate(check=True)``, a seeded random one in ``gradcheck_graph``); central finite
differences of ``<g, forward(x)>`` give the same product numerically. They must agree within
``atol + rtol * |numeric|`` (``gradcheck``'s defaults), else the input is named with the max
difference and, when yours is a multiple of the right one, the factor.

Built-in ops are not checked here: their derivatives are minigrad's (tested against PyTorch) or
PyTorch's own. A minigrad node says what its forward was called with (``node.forward_args``); a
PyTorch node does not, so there only a Function whose inputs are all leaves can be checked.
"""

from __future__ import annotations

import importlib
import inspect
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import dot as _dot
from . import probe
from .compare import NEUTRAL_FILL, VERDICT_FILL, backward_order
from .graph import Graph, picture_with_text
from .model import build
from .trace import to_numpy
from .walk import paused_gc
from .walk import walk as _walk

__all__ = ["gradcheck_graph", "GraphCheck", "NodeCheck", "InputCheck", "check_node", "attach_checks"]

EPS, ATOL, RTOL = 1e-6, 1e-5, 1e-3  # torch.autograd.gradcheck's defaults
MAX_ELEMENTS = 256  # per input: beyond this, random directional derivatives instead of every element
DIRECTIONS = 3
CHECK_FILL = {"ok": VERDICT_FILL["exact"], "wrong": VERDICT_FILL["wrong"], "skipped": VERDICT_FILL["missing"]}
MARK = {"ok": "✓", "wrong": "✗", "skipped": "–"}


@dataclass
class InputCheck:
    """One input of a Function: the gradient its backward gives against finite differences."""

    position: int  # the argument's position in forward (after ctx)
    name: str  # the argument's name in forward's signature (or what params calls the tensor)
    verdict: str  # "ok" | "wrong"
    max_diff: float  # max |backward's - finite differences| (inf: backward failed or gave a wrong shape)
    scale: float | None = None  # backward's ≈ scale × the right one, when that explains the difference
    note: str = ""
    analytic: np.ndarray | None = field(default=None, repr=False)
    numeric: np.ndarray | None = field(default=None, repr=False)  # None: checked along random directions

    @property
    def text(self) -> str:
        """'x: off by max |Δ| = 1.6e+00 (backward gives 2 × the right gradient)'."""
        if self.verdict == "ok":
            return f"{self.name}: ok (max |Δ| = {_fmt(self.max_diff)})"
        extra = f"backward gives {self.scale:.3g} × the right gradient" if self.scale is not None else self.note
        return f"{self.name}: off by max |Δ| = {_fmt(self.max_diff)}" + (f" ({extra})" if extra else "")


@dataclass
class NodeCheck:
    """The verdict on one node's backward."""

    name: str  # 'BadExpBackward'
    verdict: str  # "ok" | "wrong" | "skipped"
    inputs: list[InputCheck] = field(default_factory=list)
    reason: str = ""  # why skipped, or what failed
    index: int | None = None  # place in viz.walk order
    node: str | None = None  # drawn id
    received: bool = False  # checked on the gradient the node received (animate) or on a random one

    @property
    def wrong_inputs(self) -> list[InputCheck]:
        return [i for i in self.inputs if i.verdict == "wrong"]

    @property
    def text(self) -> str:
        """One line for the side panel or a table."""
        if self.verdict == "skipped":
            return f"{MARK['skipped']} {self.name}: not checked ({self.reason})"
        if self.verdict == "ok":
            return f"{MARK['ok']} {self.name}: backward matches finite differences"
        parts = [i.text for i in self.wrong_inputs] or [self.reason]
        # max |Δ| depends on the output gradient the check multiplies by: say which, so the player's figure
        # and gradcheck_graph's (a random one) are not read as two different errors
        on = "on the gradient it received" if self.received else "on a random output gradient"
        return f"{MARK['wrong']} {self.name}: " + "; ".join(parts) + (f" [{on}]" if self.inputs else "")


@dataclass
class GraphCheck:
    """The result of ``viz.gradcheck_graph``: each Function node's verdict, in backward order."""

    nodes: list[NodeCheck]
    builtin: int = 0  # built-in nodes, not checked
    graph: Graph | None = None

    @property
    def wrong(self) -> list[NodeCheck]:
        return [n for n in self.nodes if n.verdict == "wrong"]

    @property
    def passed(self) -> bool:
        return not self.wrong

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        lines = [n.text for n in self.nodes] or ["no custom autograd.Function in this graph"]
        lines.append(f"{self.builtin} built-in node(s) not checked (their derivatives are the library's)")
        if self.wrong:
            lines.append(f"first wrong in backward order: {self.wrong[0].name}")
        return "\n".join(lines)

    __str__ = __repr__

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        return picture_with_text(self.graph, repr(self), include, exclude)


def _fmt(x: float) -> str:
    return "∞" if math.isinf(x) else ("0" if x == 0 else f"{x:.1e}")


def _try(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name, None)
    except Exception:
        return None


def forward_class(fn: Any) -> Any:
    """The Function subclass behind a node (minigrad and PyTorch both keep it as ``_forward_cls``)."""
    cls = _try(fn, "_forward_cls")
    return cls if isinstance(cls, type) and hasattr(cls, "apply") else None


def _arg_names(cls: Any) -> list[str] | None:
    """forward's argument names after ctx (None for ``*args``)."""
    try:
        params = list(inspect.signature(cls.forward).parameters.values())
    except (TypeError, ValueError):
        return None
    if params and params[0].name == "ctx":
        params = params[1:]
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None
    return [p.name for p in params]


def forward_args(fn: Any) -> tuple | None:
    """What forward was called with: minigrad says it (``node.forward_args``); for PyTorch, the leaves
    behind the node's edges when every argument of forward is such a leaf."""
    own = _try(fn, "forward_args")
    if own is not None and not callable(own):
        return tuple(own)
    names = _arg_names(forward_class(fn))
    kids = probe.next_functions(fn)
    if names is None or len(names) != len(kids):
        return None
    args = []
    for pair in kids:
        child = pair[0] if isinstance(pair, tuple) and pair else None
        leaf = probe.leaf_of(child) if child is not None else None
        if leaf is None:
            return None
        args.append(leaf)
    return tuple(args)


def _library(tensor: Any) -> Any:
    return importlib.import_module(type(tensor).__module__.split(".", 1)[0])


def check_node(fn: Any, grads: list[np.ndarray | None] | None = None, names: dict[int, str] | None = None,
               *, eps: float = EPS, atol: float = ATOL, rtol: float = RTOL, seed: int = 0) -> NodeCheck:
    """Check one node's backward against float64 finite differences on the inputs forward saw.

    ``grads`` are the cotangents, one per output of forward (the gradients the node received);
    None draws them at random (seeded). ``names``: argument position -> a name to show.
    """
    name = probe.short_name(probe.node_name(fn))
    cls = forward_class(fn)
    if cls is None:
        return NodeCheck(name, "skipped", reason="built-in op")
    args = forward_args(fn)
    if args is None:
        return NodeCheck(name, "skipped", reason="PyTorch keeps no record of its inputs unless they are leaves")
    if any(a is None for a in args):
        return NodeCheck(name, "skipped", reason="an input was freed or modified in place since")
    tensors = [i for i, a in enumerate(args) if probe.is_tensor(a)]
    if not tensors:
        return NodeCheck(name, "skipped", reason="no tensor inputs")
    lib = _library(args[tensors[0]])
    needs = _try(fn, "needs_input_grad")
    arg_names = _arg_names(cls) or []
    checked = [i for i in tensors if _is_float(args[i]) and (needs[i] if needs is not None and i < len(needs)
                                                               else bool(_try(args[i], "requires_grad")))]
    values = {i: _as64(to_numpy(args[i])) for i in tensors}  # integer tensors (indices) keep their dtype

    def call(overrides: dict[int, np.ndarray], grad: bool) -> tuple:
        call_args = list(args)
        for i in tensors:
            t = lib.tensor(overrides.get(i, values[i]))
            if grad and i in checked:
                t.requires_grad_(True)
            call_args[i] = t
        ctx = lib.enable_grad() if grad else lib.no_grad()
        with ctx:
            out = cls.apply(*call_args)
        return tuple(call_args), out if isinstance(out, tuple) else (out,)

    try:
        inputs, outs = call({}, grad=True)
    except Exception as exc:
        return NodeCheck(name, "skipped", reason=f"forward failed in float64: {type(exc).__name__}: {exc}")
    rng = np.random.default_rng(seed)
    cots: list[np.ndarray | None] = []
    for k, o in enumerate(outs):
        if not probe.is_tensor(o) or not _try(o, "requires_grad"):
            cots.append(None)
            continue
        given = grads[k] if grads is not None and k < len(grads) else None
        shape = tuple(o.shape)
        cots.append(np.asarray(given, np.float64).reshape(shape) if given is not None and np.size(given) ==
                    math.prod(shape) else rng.standard_normal(shape))
    diff_outs = [(o, g) for o, g in zip(outs, cots) if g is not None]
    label = {i: (names or {}).get(i) or (arg_names[i] if i < len(arg_names) else f"input {i}") for i in checked}
    if not diff_outs or not checked:
        return NodeCheck(name, "skipped", reason="nothing differentiable")
    try:
        got = lib.autograd.grad([o for o, _ in diff_outs], [inputs[i] for i in checked],
                                grad_outputs=[lib.tensor(g) for _, g in diff_outs], allow_unused=True)
    except Exception as exc:
        text = str(exc).splitlines()[0] if str(exc) else ""
        return NodeCheck(name, "wrong", reason=f"backward failed: {type(exc).__name__}: {text}")

    def objective(i: int, value: np.ndarray) -> float:
        _, o = call({i: value}, grad=False)
        return float(sum(np.sum(to_numpy(o[k]).astype(np.float64) * g) for k, g in enumerate(cots)
                         if g is not None))

    results = []
    for i, g in zip(checked, got):
        x = values[i]
        analytic = np.zeros_like(x) if g is None else to_numpy(g).astype(np.float64)
        results.append(_compare_input(i, label[i], x, analytic, objective, eps, atol, rtol, rng,
                                      note="backward returned None" if g is None else ""))
    verdict = "wrong" if any(r.verdict == "wrong" for r in results) else "ok"
    return NodeCheck(name, verdict, results, received=grads is not None)


def _as64(arr: np.ndarray) -> np.ndarray:
    return arr.astype(np.float64) if arr.dtype.kind == "f" else arr


def _is_float(t: Any) -> bool:
    arr = to_numpy(t)
    return arr is not None and arr.dtype.kind == "f"


def _compare_input(i: int, name: str, x: np.ndarray, analytic: np.ndarray, objective: Any, eps: float,
                   atol: float, rtol: float, rng: np.random.Generator, note: str = "") -> InputCheck:
    if analytic.shape != x.shape:
        return InputCheck(i, name, "wrong", math.inf, note=f"backward gives shape {analytic.shape}, input is {x.shape}")
    if x.size <= MAX_ELEMENTS:
        numeric = np.zeros_like(x)
        flat = numeric.reshape(-1)
        for j in range(x.size):
            up, down = x.copy().reshape(-1), x.copy().reshape(-1)
            up[j] += eps
            down[j] -= eps
            flat[j] = (objective(i, up.reshape(x.shape)) - objective(i, down.reshape(x.shape))) / (2 * eps)
        a, n = analytic.reshape(-1), flat
        stored = numeric
    else:  # directional derivatives: <analytic, v> against (f(x + eps v) - f(x - eps v)) / 2 eps
        dirs = [rng.standard_normal(x.shape) for _ in range(DIRECTIONS)]
        a = np.array([np.sum(analytic * v) for v in dirs])
        n = np.array([(objective(i, x + eps * v) - objective(i, x - eps * v)) / (2 * eps) for v in dirs])
        stored = None
    diff = np.abs(a - n)
    max_diff = float(diff.max()) if diff.size else 0.0
    ok = bool(np.all(diff <= atol + rtol * np.abs(n)))
    scale = None
    if not ok:
        nn = float(np.dot(n, n))
        if nn > 0:
            s = float(np.dot(a, n)) / nn
            if np.all(np.abs(a - s * n) <= atol + rtol * np.abs(a)):
                scale = s
    return InputCheck(i, name, "ok" if ok else "wrong", max_diff, scale, note, analytic, stored)


def gradcheck_graph(loss: Any, params: Any = None, *, rankdir: str = "TB", eps: float = EPS, atol: float = ATOL,
                    rtol: float = RTOL, draw: bool = True) -> GraphCheck:
    """Check every custom Function node behind ``loss`` against finite differences.

    Nothing runs backward through ``loss``'s graph and no ``.grad`` changes: each Function is re-run
    on copies of its inputs. Returns the verdicts in backward order, with a picture where wrong
    nodes are filled vermillion and say which input is off and by how much.
    """
    from .model import Namer  # the same naming as draw: by tensor, or by its storage

    namer = Namer(params)
    with paused_gc():
        walked = _walk((loss,))
        try:
            checks: list[NodeCheck] = []
            builtin = 0
            for i in backward_order(walked):
                raw = walked.nodes[i]
                if raw.leaf is not None:
                    continue
                if forward_class(raw.fn) is None:
                    builtin += 1
                    continue
                args = forward_args(raw.fn) or ()
                names = {j: namer(a) for j, a in enumerate(args) if probe.is_tensor(a) and namer(a)}
                result = check_node(raw.fn, None, names, eps=eps, atol=atol, rtol=rtol, seed=i)
                result.index = i
                checks.append(result)
            model = build(walked, params=params, show_saved=False) if draw else None
        finally:
            walked.release()
    graph = None
    if model is not None:
        _mark(model, {f"fn:{c.index}": c for c in checks})
        for c in checks:
            c.node = next((n.id for n in model.nodes if n.key.split("#", 1)[0] == f"fn:{c.index}"), None)
        graph = Graph(model, _dot.to_dot(model, rankdir=rankdir))
    return GraphCheck(checks, builtin, graph)


def _mark(model: Any, by_key: dict[str, NodeCheck], neutral: bool = True) -> None:
    """Fill each checked node by its verdict, with rows that say it; others white."""
    for node in model.nodes:
        c = by_key.get(node.key.split("#", 1)[0])
        if c is None:
            if neutral and node.role in ("fn", "op"):
                node.fill = NEUTRAL_FILL
            continue
        node.fill = CHECK_FILL[c.verdict]
        if c.verdict == "wrong":
            node.rows.extend(("check", "✗ " + i.text) for i in c.wrong_inputs)
            if not c.wrong_inputs:
                node.rows.append(("check", "✗ " + c.reason))
        elif c.verdict == "ok":
            node.rows.append(("check", "✓ backward checked"))


def attach_checks(recording: Any, rankdir: str = "TB", eps: float = EPS, atol: float = ATOL,
                  rtol: float = RTOL) -> None:
    """``animate(check=True)``: check each Function node on the gradients it received in the recorded
    backward (``frame.check``, and a line in the step's text), and mark wrong nodes in the picture."""
    rec = getattr(getattr(recording, "redraw", None), "rec", None)
    specs = {raw.index: raw.fn for raw in rec.walk.nodes if raw.fn is not None and forward_class(raw.fn)} if rec else {}
    by_key: dict[str, NodeCheck] = {}
    for frame in recording.frames:
        if frame.kind != "run" or frame.index not in specs:
            continue
        fn = specs[frame.index]
        outs = len(probe.input_slots(fn) or ()) or 1
        grads: list[np.ndarray | None] = [None] * outs
        for arrival in frame.grads_in:
            value = arrival.consumed if arrival.consumed is not None else arrival.total
            if 0 <= arrival.slot < outs:
                grads[arrival.slot] = value
        grads = [g if g is not None else np.zeros(s or ()) for g, (s, _) in
                 zip(grads, probe.input_slots(fn) or [(None, None)] * outs)]
        result = check_node(fn, grads, eps=eps, atol=atol, rtol=rtol, seed=frame.index)
        result.index, result.node = frame.index, frame.node
        frame.check = result
        frame.lines.append(("check", result.text))
        by_key[f"fn:{frame.index}"] = result
    if by_key:
        model = recording.graph.model
        _mark(model, by_key, neutral=False)
        recording.graph = Graph(model, _dot.to_dot(model, rankdir=rankdir))
