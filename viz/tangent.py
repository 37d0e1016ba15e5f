"""Forward mode, animated: the tangent moving forward with the values, one node per step.

    import viz
    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        viz.animate(f, x)            # runs f(x) once more and plays it: each node's tangent, its forward rule

A tangent lives on the tensor that carries it (``forward_ad.unpack_dual(t).tangent``, public in PyTorch and
minigrad), not on the graph: once ``f`` has returned, the tensors in between are gone (and a dual tensor that
does not require grad has no graph at all). So viz runs ``f`` once more itself, on copies of the inputs that
require grad (the graph gives the structure: which node fed which) with the same tangents, and keeps each
tensor an op makes while it runs: through PyTorch's public ``TorchFunctionMode`` where the library has one,
else through Python's profiler (``sys.setprofile``: the value each Python function returns; minigrad's ops are
Python). Each node's step shows its forward rule (``minigrad.ops.node_forward_rule``, derived from the same
declaration as the backward rule the backward player shows) with this step's numbers.

Nothing here imports torch or minigrad: the library is the one the inputs come from.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import probe
from .dot import to_dot
from .graph import Graph
from .trace import SMALL, BackwardRecording, Frame, Send, clean_texts, map_graph, to_numpy
from .walk import paused_gc
from .walk import walk as _walk

__all__ = ["trace_forward_ad", "trace_dual_output", "animate_tangents", "forward_rule_text"]

forward_ad_of, tangent_of = probe.forward_ad_of, probe.tangent_of

NO_DUAL = ("viz.animate(f, *inputs): no input carries a tangent. Make them inside `with forward_ad.dual_level():` "
           "with `forward_ad.make_dual(primal, tangent)`, or pass `tangents=(...)`, one per input.")
NO_GRAPH = ("viz.animate(out) of a dual tensor that does not require grad: there is no graph to walk, and the "
            "tensors in between are gone (a tangent lives on its tensor). Pass the function and its dual inputs "
            "instead: viz.animate(f, x) runs f(x) once more and shows every tangent.")
GONE = ("Its tangent was not kept: the tensor is gone and no node saved it (viz.animate(f, x) runs f once more and "
        "shows every tangent).")


# -- the forward rule's text ----------------------------------------------------------------------------------------


def forward_rule_text(fn: Any) -> str | None:
    """The one-line forward rule of a node (minigrad's declaration, ``minigrad.ops.node_forward_rule``), or
    None: read by node name, used only when its input names fit the node's slots (as ``probe.rule_text``)."""
    try:
        found = importlib.import_module("minigrad.ops").node_forward_rule(probe.node_name(fn))
    except Exception:
        return None
    if not found or not found[1] or probe._fit_names(tuple(found[0]), len(probe.next_functions(fn))) is None:
        return None
    return str(found[1])


# -- keeping each tensor an op makes ----------------------------------------------------------------------------------


class _Kept:
    """Each tensor an op returned while ``f`` ran, by the node that made it ((id(node), output_nr) -> (tensor,
    value, tangent)): its value and tangent as they were then (an in-place op later gives the tensor another
    node; the tensor is held, so the node's id stays its own)."""

    def __init__(self, kind: type) -> None:
        self.kind = kind
        self.by_node: dict[tuple[int, int], tuple[Any, np.ndarray | None, np.ndarray | None]] = {}

    def keep(self, value: Any) -> None:
        items = value if isinstance(value, (tuple, list)) else (value,)
        for t in items:
            node = getattr(t, "grad_fn", None) if isinstance(t, self.kind) else None
            if node is None:
                continue
            key = (id(node), int(getattr(t, "output_nr", 0) or 0))
            tan = tangent_of(t)
            if key not in self.by_node or tan is not None:  # (an op's own code returns it before its tangent)
                self.by_node[key] = (t, to_numpy(t), to_numpy(tan) if tan is not None else None)


@contextlib.contextmanager
def _keeping(library: Any, kept: _Kept) -> Iterator[None]:
    """Every tensor the block's ops return goes into ``kept``: PyTorch's public TorchFunctionMode when the library
    has one (its ops are C code), else Python's profiler (a pure-Python library such as minigrad)."""
    mode_class = getattr(getattr(library, "overrides", None), "TorchFunctionMode", None)
    if mode_class is not None:

        class KeepOutputs(mode_class):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                kept.keep(out)
                return out

        with KeepOutputs():
            yield
        return

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "return" and arg is not None:
            kept.keep(arg)

    before = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(before)


# -- the run ---------------------------------------------------------------------------------------------------------


@dataclass
class _Run:
    """``f`` run once more: its output, the dual inputs (name -> tensor) and every tensor by its node, with its
    value and tangent ((id(node), output_nr) -> (tensor, value, tangent), as ``_Kept``)."""

    out: Any
    inputs: dict[str, Any]
    leaves: dict[str, Any]
    by_node: dict[tuple[int, int], tuple[Any, np.ndarray | None, np.ndarray | None]]

    def seen(self, node: Any, nr: int = 0) -> tuple[np.ndarray | None, np.ndarray | None] | None:
        """(value, tangent) of the tensor ``node`` made at ``nr``, or None when viz never saw it."""
        found = self.by_node.get((id(node), nr))
        return found[1:] if found is not None else None


def _names(fn: Any, count: int) -> list[str]:
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"input {i}" for i in range(count)]


def _library(inputs: tuple) -> tuple[Any, Any, Any]:
    """(the first tensor input, its library, the library's forward_ad)."""
    first = next((x for x in inputs if probe.is_tensor(x)), None)
    fw = forward_ad_of(first) if first is not None else None
    if fw is None:
        raise TypeError("viz.animate(f, *inputs): give f's tensor inputs (minigrad's or PyTorch's)")
    return first, sys.modules[type(first).__module__.split(".", 1)[0]], fw


@contextlib.contextmanager
def _level(fw: Any, wanted: bool) -> Iterator[None]:
    """A dual level for ``tangents=`` when none is active (forward AD has one level at a time)."""
    entered = False
    if wanted:
        try:
            fw.enter_dual_level()
            entered = True
        except RuntimeError:  # one is active: use it
            pass
    try:
        yield
    finally:
        if entered:
            fw.exit_dual_level()


def _run(fn: Any, inputs: tuple, tangents: tuple | None) -> _Run:
    """Run ``fn`` on grad-requiring copies of the dual inputs (same tangents), keeping every tensor it makes."""
    first, library, fw = _library(inputs)
    names = _names(fn, len(inputs))
    if tangents is not None and len(tangents) != len(inputs):
        raise ValueError(f"viz.animate: tangents= has {len(tangents)} entries for {len(inputs)} inputs")
    new, duals, leaves = [], {}, {}
    with library.enable_grad():
        for i, (name, x) in enumerate(zip(names, inputs)):
            v = tangents[i] if tangents is not None else tangent_of(x)
            if not probe.is_tensor(x) or v is None:
                new.append(x)
                continue
            primal = fw.unpack_dual(x).primal if tangents is None else x
            leaf = primal.detach().clone().requires_grad_(True)
            duals[name], leaves[name] = fw.make_dual(leaf, v), leaf
            new.append(duals[name])
        if not duals:
            raise ValueError(NO_DUAL)
        kept = _Kept(type(first))
        kept.keep(tuple(duals.values()))
        with _keeping(library, kept):
            out = fn(*new)
    return _Run(out, duals, leaves, kept.by_node)


def _text(arr: np.ndarray | None) -> str:
    if arr is None:
        return "0 (no tangent)"
    if arr.size <= SMALL:
        return _nested(arr.tolist())
    return f"{probe.format_shape(arr.shape)} ‖·‖={probe.format_number(float(np.linalg.norm(arr.astype(np.float64))))}"


def _nested(values: Any) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v) for v in values) + "]"
    return probe.format_number(values)


_NOTE = re.compile(r"\s{2,}\(.*$")


def substituted(rule: str, numbers: dict[str, str]) -> str | None:
    """The rule's right-hand side with each name it reads replaced by this step's numbers, or None for a rule
    stated in words (a reduction's)."""
    rhs = _NOTE.sub("", rule.split(" = ", 1)[1]) if " = " in rule else ""
    if not rhs or "Σ" in rhs:
        return None
    names = "|".join(sorted(map(re.escape, numbers), key=len, reverse=True))
    pattern = re.compile(r"(?<![A-Za-z0-9_])(" + names + r")(?![A-Za-z0-9_])")  # "result²" names result
    out = pattern.sub(lambda m: numbers[m.group(1)], rhs)
    return out if out != rhs else None


# -- frames ----------------------------------------------------------------------------------------------------------


def _seq(fn: Any) -> int:
    try:
        return int(fn._sequence_nr())
    except Exception:
        return -1


def trace_forward_ad(fn: Any, *inputs: Any, tangents: Any = None, params: Any = None, rankdir: str = "TB",
                     show_saved: bool = False) -> BackwardRecording:
    """Run ``fn(*inputs)`` once more with the inputs' tangents and record forward mode's steps: a
    ``viz.trace.BackwardRecording`` whose frames are "start", one "tangent" step per node in the order the ops
    ran, and "done" (the player shows it as the backward player shows its frames)."""
    _, _, fw = _library(inputs)
    with _level(fw, tangents is not None):
        run = _run(fn, inputs, tuple(tangents) if tangents is not None else None)
        return _recording(run, params, rankdir, show_saved)


def _recording(run: _Run, params: Any, rankdir: str, show_saved: bool) -> BackwardRecording:
    from . import draw

    roots = run.out if isinstance(run.out, (tuple, list)) else (run.out,)
    roots = tuple(r for r in roots if probe.is_tensor(r))
    if not roots or any(getattr(r, "grad_fn", None) is None for r in roots):
        raise ValueError("viz.animate(f, *inputs): f returned no tensor computed from its dual inputs")
    names = dict(params.items() if hasattr(params, "items") else params or ())
    names.update(run.leaves)
    with paused_gc():
        walk = _walk(roots)
        graph = draw(*roots, params=names, show_saved=show_saved, rankdir=rankdir,
                     max_nodes=max(len(walk.nodes) + 8, 250))
    for node in graph.model.nodes:  # the steps reveal the tangents one by one: the picture starts without them
        node.tangent = None
    graph = Graph(graph.model, to_dot(graph.model, rankdir=rankdir))
    gmap = map_graph(walk, graph.model)
    frames = _frames(walk, gmap, run)
    return BackwardRecording(clean_texts(frames), graph, gmap, [gmap.names[0] if gmap.names else "output"])


def _consumers(walk: Any, gmap: Any) -> dict[tuple[int, int], list[tuple[int, int, int]]]:
    """(node index, output nr) -> [(consumer index, its input slot, drawn edge)], the output boxes as consumer -1."""
    out: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for raw in walk.nodes:
        for j, (child, nr) in enumerate(raw.edges):
            if child is not None and (raw.index, j) in gmap.edge_of:
                out.setdefault((child, nr), []).append((raw.index, j, gmap.edge_of[(raw.index, j)]))
    for k, root in enumerate(walk.roots):
        if root.fn_index is not None and gmap.root_edges[k] is not None:
            out.setdefault((root.fn_index, root.slot), []).append((-1, k, gmap.root_edges[k]))
    return out


def _frames(walk: Any, gmap: Any, run: _Run) -> list[Frame]:
    dual_of = {id(t.grad_fn): name for name, t in run.inputs.items()}
    for raw in walk.nodes:  # viz.animate(out): where a tangent enters (make_dual: a view of leaves, with a tangent)
        seen = run.seen(raw.fn)
        if raw.leaf is None and raw.edges and seen is not None and seen[1] is not None \
                and all(c is not None and walk.nodes[c].leaf is not None for c, _ in raw.edges):
            dual_of.setdefault(id(raw.fn), _leaf_name(gmap.names[raw.edges[0][0]]))
    start = Frame(0, "start", name="forward", title="Forward mode: each tensor carries a tangent")
    for name, t in run.inputs.items():
        _, value, tan = run.by_node[(id(t.grad_fn), 0)]
        start.lines.append(("in", f"{name} = make_dual({_text(value)}, tangent {_text(tan)})"))
    if not run.inputs:
        start.lines.append(("in", "The tangents come from the graph: the output's, and those of the tensors its "
                                  "nodes saved."))
    start.lines.append(("note", "Each step runs one op: its value as usual, and its tangent from its forward rule "
                                "and its inputs' tangents, at once (no backward pass). The tangent of the output is "
                                "J·v, the Jacobian times the inputs' tangents."))
    start.lines.append(("note", "The arrows are autograd's, from each node to its inputs (the way backward goes); "
                                "the tangent flows against them, from the inputs up to the output."))
    frames = [start]
    consumers = _consumers(walk, gmap)
    order = sorted((raw for raw in walk.nodes if raw.leaf is None), key=lambda raw: (_seq(raw.fn), -raw.index))
    touched: set[int] = set()  # nodes a tangent reaches (a dual input below them)
    for raw in order:
        if id(raw.fn) in dual_of or any(c in touched for c, _ in raw.edges if c is not None):
            touched.add(raw.index)
    for raw in order:
        if raw.index in touched:
            frames.append(_node_frame(len(frames), raw, walk, gmap, run, consumers, dual_of.get(id(raw.fn))))
        else:
            frames.append(_constant_frame(len(frames), raw, gmap, consumers))
    done = Frame(len(frames), "done", name="done", title="Forward mode done: the output's tangent is J·v")
    for k, root in enumerate(walk.roots):
        tan = to_numpy(tangent_of(root.tensor))
        label = "output" if len(walk.roots) == 1 else f"output {k}"
        done.lines.append(("out", f"unpack_dual({label}).tangent = {_text(tan)}"))
        if gmap.root_ids[k]:
            done.refs.append(gmap.root_ids[k])
    done.lines.append(("note", f"{len(order)} ops ran once each, in the order the program ran them; each computed "
                               "its tangent beside its value. Reverse mode would now run backward from the output."))
    frames.append(done)
    return frames


def _constant_frame(step: int, raw: Any, gmap: Any, consumers: dict) -> Frame:
    """A node no tangent reaches (``w.t()`` of a weight without one): its tangent is zero."""
    name, short = gmap.names[raw.index], probe.short_name(raw.name)
    f = Frame(step, "tangent", name=name, node=gmap.first_id(raw.index), nodes=list(gmap.node_ids[raw.index]),
              index=raw.index, title=f"{short} computes its value; its tangent is 0")
    f.lines.append(("note", f"No input of {short} carries a tangent, so neither does its output: forward mode "
                            "treats it as a constant (tangent 0)."))
    for consumer, slot, edge in consumers.get((raw.index, 0), []):
        to = gmap.first_id(consumer) if consumer >= 0 else None
        f.grads_out.append(Send(0, to, gmap.names[consumer] if consumer >= 0 else "the output", slot, edge, None,
                                "0", "0"))
    return f


def _leaf_name(name: str) -> str:
    """'AccumulateGrad (x)' -> 'x'; a leaf without a name stays 'the leaf'."""
    inner = name[len("AccumulateGrad ("):-1] if name.startswith("AccumulateGrad (") else ""
    return inner if inner and not inner.startswith("leaf") else "the input"


def _node_frame(step: int, raw: Any, walk: Any, gmap: Any, run: _Run, consumers: dict, dual: str | None) -> Frame:
    i, fn = raw.index, raw.fn
    name = gmap.names[i]
    short = probe.short_name(raw.name)
    node = gmap.first_id(i)
    f = Frame(step, "tangent", name=name, node=node, nodes=list(gmap.node_ids[i]), index=i)
    seen = run.seen(fn)
    value, tan = seen if seen is not None else (None, None)
    if seen is None:
        f.lines.append(("note", GONE))
    if dual is not None and tan is not None:
        f.title = f"{dual} = make_dual(...): {short} carries the tangent"
        f.lines.append(("in", f"make_dual gives {dual} the value {_text(value)} and the tangent {_text(tan)} "
                              f"(a view of its primal: the node {short})."))
    else:
        f.title = f"{short} computes its value and its tangent"
        _rule_lines(f, raw, (walk, gmap, run), (short, value, tan))
    f.note = f"tangent {_text(tan)}" if tan is not None else ""
    label = _text(tan) if tan is not None else ("0" if seen is not None else "not kept")
    sent = []
    for consumer, slot, edge in consumers.get((i, 0), []):
        to_name = gmap.names[consumer] if consumer >= 0 else "the output"
        to = gmap.first_id(consumer) if consumer >= 0 else gmap.root_ids[slot]
        f.grads_out.append(Send(0, to if consumer >= 0 else None, to_name, slot, edge, tan, label, label))
        if to:
            f.refs.append(to)
        sent.append(to_name)
    if sent:
        where = ", ".join(dict.fromkeys(sent))
        f.lines.append(("out", f"result_t = {label} → {where}"))
    return f


def _rule_lines(f: Frame, raw: Any, seen: tuple, result: tuple) -> None:
    """Its inputs' values and tangents, its forward rule, the rule with these numbers."""
    (walk, gmap, run), (short, value, tan) = seen, result
    names = probe.input_names(raw.fn)
    numbers: dict[str, str] = {"result": _text(value)}
    shown = []
    saved, attrs = probe.saved_values(raw.fn)
    saved = {k: v for k, v in saved if probe.is_tensor(v)}  # a constant input is seen only here
    for j, (child, nr) in enumerate(raw.edges):
        label = names[j] if names is not None and j < len(names) else f"input {j}"
        child_raw = walk.nodes[child] if child is not None else None
        seen = None
        if child_raw is None:
            tensor, source = saved.get(label), "a constant: saved by the node"
        else:
            seen = run.seen(child_raw.fn, nr) if child_raw.leaf is None else None
            tensor = child_raw.leaf if child_raw.leaf is not None else saved.get(label)
            source = f"from {gmap.names[child]}"
        if seen is None and tensor is None:
            continue
        v, t = seen if seen is not None else (to_numpy(tensor), to_numpy(tangent_of(tensor)))
        numbers[label] = _text(v)
        numbers[f"{label}_t"] = _text(t) if t is not None else "0"
        shown.append(f"{label} = {_text(v)}, {label}_t = {numbers[f'{label}_t']} ({source})")
    for key, v in attrs:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            numbers.setdefault(key, probe.format_number(v))
    for text in shown:
        f.lines.append(("in", text))
    rule = forward_rule_text(raw.fn)
    if rule:
        f.rule = f"{short}: {rule}"
        f.lines.append(("rule", f.rule))
        filled = substituted(rule, numbers)
        if filled:
            f.lines.append(("rule", f"result_t = {filled}" + (f" = {_text(tan)}" if tan is not None else "")))
    else:
        f.lines.append(("note", f"{short}: no forward rule text known (a PyTorch node minigrad does not declare)."))


def trace_dual_output(out: Any, params: Any = None, rankdir: str = "TB", show_saved: bool = False) -> Any:
    """``viz.animate(out)`` of a dual tensor with a graph: the tangents the graph still reaches (the output's,
    the tensors nodes saved, which keep their tangent in both libraries, minigrad's live ``output_tensor``s)."""
    if getattr(out, "grad_fn", None) is None:
        raise ValueError(NO_GRAPH)
    with paused_gc():
        walk = _walk((out,))
    by_node: dict[tuple[int, int], Any] = {(id(out.grad_fn), int(getattr(out, "output_nr", 0) or 0)): out}
    for raw in walk.nodes:
        alive = probe.output_tensor(raw.fn)
        if alive is not None:
            by_node.setdefault((id(raw.fn), 0), alive)
        saved = {k: v for k, v in probe.saved_values(raw.fn)[0] if probe.is_tensor(v)}
        if "result" in saved:
            by_node.setdefault((id(raw.fn), 0), saved["result"])
        names = probe.input_names(raw.fn) or ()
        for j, (child, nr) in enumerate(raw.edges):
            if child is not None and j < len(names) and names[j] in saved:
                by_node.setdefault((id(walk.nodes[child].fn), nr), saved[names[j]])
    seen = {}
    for key, t in by_node.items():
        tan = tangent_of(t)
        seen[key] = (t, to_numpy(t), to_numpy(tan) if tan is not None else None)
    return _recording(_Run(out, {}, {}, seen), params, rankdir, show_saved)


def animate_tangents(fn: Any, *inputs: Any, tangents: Any = None, params: Any = None, rankdir: str = "TB",
                     speed: float = 1.0, show_saved: bool = False) -> Any:
    """The forward-mode player (``viz.animate(f, *inputs)``; see the module docstring)."""
    from .player import backward_scene, player_class

    if probe.is_tensor(fn):  # viz.animate(out) of a dual tensor
        recording = trace_dual_output(fn, params=params, rankdir=rankdir, show_saved=show_saved)
    else:
        recording = trace_forward_ad(fn, *inputs, tangents=tangents, params=params, rankdir=rankdir,
                                     show_saved=show_saved)
    scene = backward_scene(recording)
    scene.payload["legend"] = "tangent"  # viz/tangent.js: the legend says "tangent" where backward's says "gradient"
    return player_class("TangentPlayer")(scene, speed=speed)
