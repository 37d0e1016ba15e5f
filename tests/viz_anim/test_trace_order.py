"""The trace tells each step in the order the engine runs it, with the values it used.

Every graph of the catalogue registers instrumented user hooks of every kind (tensor hooks on
leaves and intermediates, node prehooks and hooks, post-accumulate hooks, hooks that replace
the gradient and hooks that return None), runs a plain ``backward()`` on one copy to log what
really happened, in order, and ``viz.trace_backward`` on a second copy; the hooks the trace
reports, frame after frame, must be exactly the logged ones with the same values.

PyTorch keeps two things private that minigrad exposes: which hooks a node has, and the hooks
on an intermediate tensor. On PyTorch graphs the trace reports those only through their effect
(a gradient that changed between arriving and being used, a node whose hooks replaced what its
rule computed), so the log is compared in that form there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from viz.animate import trace_backward
from viz.trace import to_numpy
from viz.walk import walk

# create_graph=True makes both libraries warn about the parameter-gradient reference cycle
pytestmark = pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")


@dataclass
class Logged:
    kind: str  # "tensor hook", "prehook", "hook", "post-accumulate hook"
    index: int  # the node's place in viz.walk order (a leaf: its AccumulateGrad)
    before: object
    after: object


class Graph:
    """A catalogue entry built on one library: the loss, its leaves, and the hook log."""

    def __init__(self, T, loss, leaves: dict, keep: tuple = ()) -> None:
        self.T = T
        self.loss = loss
        self.leaves = leaves
        self.keep = keep  # intermediate tensors a learner's code still holds
        self.log: list[Logged] = []
        w = walk((loss,))
        self.index = {id(raw.fn): raw.index for raw in w.nodes}
        self.leaf_index = {id(raw.leaf): raw.index for raw in w.nodes if raw.leaf is not None}
        self._walk = w  # keeps the nodes' Python objects (and so their ids) alive

    def node_of(self, tensor) -> int:
        return self.index[id(tensor.grad_fn)] if tensor.grad_fn is not None else self.leaf_index[id(tensor)]

    # instrumented hooks: each logs what it was given and what it returned -----------------------------
    def tensor_hook(self, tensor, change: Callable | None) -> None:
        i = self.node_of(tensor)

        def hook(grad):
            new = change(grad) if change else None
            self.log.append(Logged("tensor hook", i, to_numpy(grad), to_numpy(new if new is not None else grad)))
            return new

        tensor.register_hook(hook)

    def prehook(self, tensor, change: Callable | None) -> None:
        i = self.node_of(tensor)
        fn = tensor.grad_fn

        def hook(grads):
            new = tuple(change(g) for g in grads) if change else None
            self.log.append(Logged("prehook", i, _arrays(grads), _arrays(new if new is not None else grads)))
            return new

        fn.register_prehook(hook)

    def node_hook(self, tensor, change: Callable | None) -> None:
        i = self.node_of(tensor)
        fn = tensor.grad_fn

        def hook(grad_inputs, grad_outputs):
            new = tuple(None if g is None else change(g) for g in grad_inputs) if change else None
            self.log.append(Logged("hook", i, _arrays(grad_inputs), _arrays(new if new is not None else grad_inputs)))
            return new

        fn.register_hook(hook)

    def leaf_node_hooks(self, leaf) -> None:
        """A prehook and a hook on the leaf's AccumulateGrad node (they cannot change .grad's value)."""
        i = self.leaf_index[id(leaf)]
        acc = next(raw.fn for raw in self._walk.nodes if raw.index == i)
        acc.register_prehook(lambda grads: self.log.append(Logged("prehook", i, _arrays(grads), _arrays(grads))))
        acc.register_hook(lambda gi, go: self.log.append(Logged("hook", i, None, None)))

    def post_accumulate(self, leaf) -> None:
        i = self.leaf_index[id(leaf)]
        leaf.register_post_accumulate_grad_hook(
            lambda t: self.log.append(Logged("post-accumulate hook", i, None, to_numpy(t.grad))))


def _arrays(values):
    if values is None:
        return None
    out = tuple(to_numpy(v) for v in values)
    return out if len(out) != 1 else out[0]


def _tensor(T, values):
    return T.tensor(values, dtype=T.float64, requires_grad=True)


# -- the catalogue --------------------------------------------------------------------------------------------


def lesson5(T) -> Graph:
    """Lesson 5: a clipping tensor hook on h = x * w, which also retains its gradient."""
    x, w = _tensor(T, [0.5, -1.0, 2.0]), _tensor(T, [3.0, 1.0, -2.0])
    h = x * w
    h.retain_grad()
    g = Graph(T, (h**2).sum(), {"x": x, "w": w}, keep=(h,))
    g.tensor_hook(h, lambda grad: grad.clamp(-2, 2))
    return g


def every_kind(T) -> Graph:
    """y = x * 2 with every kind of hook (the contract's measured sequence), some returning None."""
    x = _tensor(T, [1.0, -2.0])
    y = x * 2
    g = Graph(T, y.sum(), {"x": x}, keep=(y,))
    g.prehook(y, lambda grad: grad + 1)
    g.tensor_hook(y, lambda grad: grad * 3)  # registered after the prehook, runs before it
    g.node_hook(y, None)
    g.node_hook(y, lambda grad: grad * 10)
    g.tensor_hook(x, lambda grad: grad - 1)
    g.leaf_node_hooks(x)
    g.post_accumulate(x)
    return g


def shared_leaves(T) -> Graph:
    """a * b + c * a: a is used twice, leaves at the same depth, a hook on each leaf."""
    a, b, c = _tensor(T, [1.0, 2.0]), _tensor(T, [3.0, 4.0]), _tensor(T, [-1.0, 0.5])
    g = Graph(T, (a * b + c * a).sum(), {"a": a, "b": b, "c": c})
    g.tensor_hook(a, lambda grad: grad * 2)
    g.tensor_hook(b, None)
    g.tensor_hook(c, lambda grad: grad + 1)
    for leaf in (a, b, c):
        g.post_accumulate(leaf)
    return g


def depths(T) -> Graph:
    """a * b * c: leaves at different depths, hooks on every leaf and on the intermediate."""
    a, b, c = _tensor(T, [1.0, 2.0]), _tensor(T, [3.0, 4.0]), _tensor(T, [5.0, 6.0])
    ab = a * b
    g = Graph(T, (ab * c).sum(), {"a": a, "b": b, "c": c}, keep=(ab,))
    for leaf in (c, a, b):
        g.tensor_hook(leaf, lambda grad: grad * 2)
    g.tensor_hook(ab, lambda grad: grad - 1)
    g.node_hook(ab, lambda grad: grad * 0.5)
    return g


def fan_out(T) -> Graph:
    """z used three times: its gradients meet and are summed before its tensor hook sees them."""
    x = _tensor(T, [0.1, 0.7])
    z = x.exp()
    z.retain_grad()
    g = Graph(T, (z * 2 + z * 3 + z.sin()).sum(), {"x": x}, keep=(z,))
    g.tensor_hook(z, lambda grad: grad * -1)
    g.prehook(z, None)
    g.post_accumulate(x)
    return g


def create_graph(T) -> Graph:
    """Hooks while the backward pass is itself recorded (create_graph=True)."""
    x = _tensor(T, [1.5, -0.5])
    y = x**3
    g = Graph(T, y.sum(), {"x": x}, keep=(y,))
    g.tensor_hook(y, lambda grad: grad * 2)
    g.prehook(y, None)
    g.tensor_hook(x, lambda grad: grad + 1)
    return g


CATALOGUE = {"lesson5": lesson5, "every_kind": every_kind, "shared_leaves": shared_leaves, "depths": depths,
             "fan_out": fan_out, "create_graph": create_graph}


# -- comparing --------------------------------------------------------------------------------------------------


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, tuple) or isinstance(b, tuple):
        a, b = (a if isinstance(a, tuple) else (a,)), (b if isinstance(b, tuple) else (b,))
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-12, atol=0)


def merged(log: list[Logged]) -> list[Logged]:
    """Several user hooks of one kind in a row on one node are one event: before the first, after the last."""
    out: list[Logged] = []
    for entry in log:
        last = out[-1] if out else None
        if last is not None and (last.kind, last.index) == (entry.kind, entry.index):
            out[-1] = Logged(entry.kind, entry.index, last.before, entry.after)
        else:
            out.append(entry)
    return out


def torch_view(log: list[Logged], leaves: set[int], root: int) -> list[Logged]:
    """The log as a PyTorch trace can tell it (see the module docstring): on an inner node, the tensor
    hooks and prehooks are one change (shown only when the gradient changed), and node hooks are shown
    only when they replaced the gradients."""
    out: list[Logged] = []
    for entry in merged(log):
        inner = entry.index not in leaves and entry.index != root
        if inner and entry.kind in ("tensor hook", "prehook"):
            last = out[-1] if out else None
            if last is not None and last.index == entry.index and last.kind == "tensor hook or prehook":
                out[-1] = Logged(last.kind, entry.index, last.before, entry.after)
            else:
                out.append(Logged("tensor hook or prehook", entry.index, entry.before, entry.after))
        elif entry.index != root and entry.kind == "prehook" and entry.index in leaves:
            continue  # an AccumulateGrad prehook that changes nothing: invisible in PyTorch
        elif entry.kind == "hook" and entry.index not in leaves:
            out.append(entry)
        elif entry.kind == "hook":
            continue  # an AccumulateGrad hook: invisible in PyTorch
        else:
            out.append(entry)
    return [e for e in out if not (e.kind in ("tensor hook or prehook", "hook") and _same(e.before, e.after))]


def told(frames) -> list[Logged]:
    return [Logged(h.kind, f.index, h.before, h.after) for f in frames for h in f.hooks]


def assert_same_story(expected: list[Logged], got: list[Logged]) -> None:
    assert [(e.kind, e.index) for e in got] == [(e.kind, e.index) for e in expected]
    for e, g in zip(expected, got):
        assert _same(e.before, g.before), (e, g)
        assert _same(e.after, g.after), (e, g)


def run_both(T, build, create: bool):
    plain = build(T)
    plain.loss.backward(create_graph=create)
    traced = build(T)
    frames = trace_backward(traced.loss, params=traced.leaves, create_graph=create)
    for name, leaf in traced.leaves.items():
        assert _same(to_numpy(leaf.grad), to_numpy(plain.leaves[name].grad)), name
    return plain, traced, frames


# -- the tests ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_minigrad_trace_tells_the_engines_order(mg, name, pgv):
    plain, traced, frames = run_both(mg, CATALOGUE[name], name == "create_graph")
    assert traced.log == [] or len(traced.log) == len(plain.log)  # the trace runs the same hooks, once each
    assert_same_story(merged(plain.log), told(frames))
    _assert_line_order(frames)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_torch_trace_tells_the_engines_order(torch, name, pgv):
    plain, traced, frames = run_both(torch, CATALOGUE[name], name == "create_graph")
    leaves = set(plain.leaf_index.values())
    root = plain.node_of(plain.loss)
    assert_same_story(torch_view(plain.log, leaves, root), told(frames))
    _assert_line_order(frames)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_minigrad_and_torch_run_the_hooks_in_one_order(mg, torch, name):
    """The log itself: minigrad's engine runs the instrumented hooks exactly as PyTorch's does."""
    create = name == "create_graph"
    logs = []
    for T in (mg, torch):
        g = CATALOGUE[name](T)
        g.loss.backward(create_graph=create)
        logs.append(g.log)
    assert_same_story(logs[1], logs[0])


def _assert_line_order(frames) -> None:
    """Within a step: what arrived, the hooks before the node runs (retain_grad after the tensor hooks),
    the rule and its outputs (or the accumulation), post-accumulate hooks, node hooks, then the release."""
    rank = {"before": 0, "rule": 1, "out": 2, "after": 3, "free": 4}
    for f in frames:
        if f.kind not in ("run", "accumulate"):
            continue
        stages = []
        hooks = iter(f.hooks)
        for kind, text in f.lines:
            if kind == "hook":
                hook = next(hooks)
                stages.append("before" if hook.kind in ("tensor hook", "prehook", "tensor hook or prehook")
                              else "after")
            elif kind in ("in", "sum"):
                stages.append("before")
            elif kind == "acc" and text.startswith("retain_grad"):
                assert stages and stages[-1] == "before", f.text  # right after the tensor hooks
                stages.append("before")
            elif kind in ("rule", "out", "acc"):
                stages.append("rule" if kind == "rule" else "out")
            elif kind in ("free", "note"):
                stages.append("free")
        assert [rank[s] for s in stages] == sorted(rank[s] for s in stages), f.text


def test_lesson5_step_reads_in_the_engines_order(mg, pgv):
    """The issue's example, word for word: the clipped gradient comes before the rule and its outputs,
    and the edge into MulBackward0 then shows the value the node consumed."""
    g = lesson5(mg)
    frames = trace_backward(g.loss, params=g.leaves)
    mul = next(f for f in frames if f.name == "MulBackward0")
    assert mul.lines == [
        ("in", "grad = [3, -2, -8] (from PowBackward0)"),
        ("hook", "tensor hook on its output tensor fired and returned [2, -2, -2], replacing [3, -2, -8]"),
        ("acc", "retain_grad: its output's .grad = [2, -2, -2] (what the tensor hooks returned)"),
        ("in", "So MulBackward0 uses grad = [2, -2, -2]."),
        ("rule", "MulBackward0: grad_self = grad * other, grad_other = grad * self"),
        ("out", "grad_self = [6, -2, 4] → AccumulateGrad (x)"),
        ("out", "grad_other = [1, 2, -4] → AccumulateGrad (w)"),
        ("free", "Saved other, self freed now (retain_graph=False)."),
    ]
    (edge, label), = mul.relabels
    pow_frame = next(f for f in frames if f.name == "PowBackward0")
    assert [s.edge for s in pow_frame.grads_out] == [edge] and label == "[2, -2, -2]"


def test_hooks_of_a_tensor_viz_cannot_reach_are_told_as_one_change(mg, pgv):
    """y is gone when the trace runs (only its node lives on): its tensor hook and the node's prehook
    both ran, and the trace says the gradient changed between them, without pinning it on either."""
    x = _tensor(mg, [1.0, -2.0])
    y = x * 2
    y.register_hook(lambda grad: grad * 3)
    y.grad_fn.register_prehook(lambda grads: (grads[0] + 1,))
    loss = y.sum()
    del y
    frames = trace_backward(loss, params={"x": x})
    mul = next(f for f in frames if f.name == "MulBackward0")
    (hook,) = mul.hooks
    assert hook.kind == "tensor hook or prehook" and hook.count is None
    assert _same(hook.before, np.array([1.0, 1.0])) and _same(hook.after, np.array([4.0, 4.0]))
    assert "on its output tensor and prehook ×1 on MulBackward0" in hook.text


def test_torch_nodes_without_hooks_are_never_said_to_have_fired(torch, pgv):
    """PyTorch hides node hooks, so the trace runs a node again by hand to see whether hooks replaced its
    gradients; a broadcast bias (summed before hooks see it) and float rounding are no replacement."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    loss = model(torch.randn(10, 4)).pow(2).mean()
    frames = trace_backward(loss, params=model)
    assert [f.name for f in frames if f.hooks] == []
