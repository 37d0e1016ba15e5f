"""minigrad/reference/engine.py, the engine a learner reads (lesson 14): short, NumPy only, the same
graphs and gradients as minigrad for every op it has, a valid execution order, and drawn by viz."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
from minigrad.reference import engine as ref

SOURCE = Path(ref.__file__)
RTOL, ATOL = 1e-9, 1e-12
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_the_engine_is_at_most_120_lines_of_code():
    code = [line for line in SOURCE.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.strip().startswith("#")]
    assert len(code) <= 120, f"{len(code)} non-blank, non-comment lines"


def test_the_engine_imports_numpy_and_the_standard_library_only():
    tree = ast.parse(SOURCE.read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.level == 0}
    assert not any(isinstance(node, ast.ImportFrom) and node.level for node in ast.walk(tree))
    assert imported == {"collections", "types", "numpy"}, imported


# -- one program, run on both engines ---------------------------------------------------------------------------

def run_both(program, arrays, needs_grad):
    """Run `program(*tensors)` on minigrad and on the reference engine (float64 leaves from the same arrays),
    backward from a scalar; return both roots and both lists of leaves."""
    out = []
    for make in (lambda a, g: mg.tensor(a, dtype=mg.float64, requires_grad=g),
                 lambda a, g: ref.Tensor(a, requires_grad=g)):
        leaves = [make(np.array(a, dtype=np.float64), g) for a, g in zip(arrays, needs_grad)]
        root = program(*leaves)
        root.backward()
        out.append((root, leaves))
    return out


def structure(root):
    """The graph as nested (name, [children]) from the root's grad_fn: None for a (None, 0) edge (minigrad's
    AccumulateGrad is `minigrad::autograd::AccumulateGrad`, as PyTorch's is `torch::autograd::AccumulateGrad`)."""
    def walk(node):
        if node is None:
            return None
        return node.name().split("::")[-1], [walk(child) for child, _ in node.next_functions]
    return walk(root.grad_fn)


def assert_same(program, arrays, needs_grad=None):
    needs_grad = needs_grad or [True] * len(arrays)
    (mine, mine_leaves), (theirs, their_leaves) = run_both(program, arrays, needs_grad)
    assert structure(theirs) == structure(mine)
    np.testing.assert_allclose(theirs.data, mine.detach().numpy(), rtol=RTOL, atol=ATOL)
    for a, b, g in zip(mine_leaves, their_leaves, needs_grad):
        if not g or a.grad is None:  # needs no gradient, or unused: neither engine gives it a .grad
            assert a.grad is None and b.grad is None
            continue
        assert isinstance(b.grad, np.ndarray) and b.grad.shape == tuple(a.shape)
        np.testing.assert_allclose(b.grad, a.grad.numpy(), rtol=RTOL, atol=ATOL)


def values(shape, low=-3.0, high=3.0, away_from_zero=False):
    elements = st.floats(low, high, allow_nan=False, allow_infinity=False)
    if away_from_zero:  # relu's kink: its sub-gradient at 0 is tested separately
        elements = elements.filter(lambda v: abs(v) > 1e-3)
    return hnp.arrays(np.float64, shape, elements=elements)


shapes = hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)


@SETTINGS
@given(st.data(), hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4),
       st.sampled_from(["add", "sub", "mul"]))
def test_binary_ops_broadcast_and_sum_back_as_minigrad(data, shapes2, op):
    a = data.draw(values(shapes2.input_shapes[0]))
    b = data.draw(values(shapes2.input_shapes[1]))
    fn = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y}[op]
    assert_same(lambda x, y: fn(x, y).sum(), [a, b])
    assert_same(lambda x, y: fn(x, y).mean(), [a, b], needs_grad=[False, True])


@SETTINGS
@given(st.data(), shapes, st.sampled_from(["exp", "tanh", "relu", "sum", "mean", "square", "cube"]))
def test_unary_ops_as_minigrad(data, shape, op):
    a = data.draw(values(shape, away_from_zero=op == "relu"))
    fn = {"exp": lambda x: x.exp(), "tanh": lambda x: x.tanh(), "relu": lambda x: x.relu(), "sum": lambda x: x.sum(),
          "mean": lambda x: x.mean(), "square": lambda x: x**2, "cube": lambda x: x**3}[op]
    weights = data.draw(values(shape))  # a weighted sum, so that every element's gradient differs
    assert_same(lambda x, w: (fn(x) * w).sum(), [a, weights], needs_grad=[True, False])


@SETTINGS
@given(st.data(), st.sampled_from([0.5, -1.0, 2.5]))
def test_pow_with_a_real_exponent_on_positive_values(data, exponent):
    a = data.draw(values(data.draw(shapes), low=0.1, high=4.0))
    assert_same(lambda x: (x**exponent).sum(), [a])


@SETTINGS
@given(st.data(), st.integers(1, 5), st.integers(1, 5), st.integers(1, 5))
def test_matmul_as_minigrad(data, n, k, m):
    a, b, w = data.draw(values((n, k))), data.draw(values((k, m))), data.draw(values((n, m)))
    assert_same(lambda x, y, z: (x @ y * z).sum(), [a, b, w], needs_grad=[True, True, False])


def test_relu_at_zero_sends_no_gradient_as_pytorch():
    assert_same(lambda x: x.relu().sum(), [np.array([-1.0, 0.0, 2.0])])


def test_a_small_mlp_step_as_minigrad():
    rng = np.random.default_rng(14)
    arrays = [rng.standard_normal((8, 3)), rng.standard_normal((3, 5)), rng.standard_normal(5),
              rng.standard_normal((5, 1)), rng.standard_normal(1), rng.standard_normal((8, 1))]

    def mlp(x, w1, b1, w2, b2, y):
        h = (x @ w1 + b1).relu()
        return (((h @ w2 + b2).tanh() - y) ** 2).mean()

    assert_same(mlp, arrays, needs_grad=[False, True, True, True, True, False])


# -- random programs: a valid order, the same gradients --------------------------------------------------------

UNARY = {"exp": lambda x: (x * 0.1).exp(), "tanh": lambda x: x.tanh(), "relu": lambda x: x.relu(),
         "square": lambda x: x**2}
BINARY = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y}


@st.composite
def programs(draw):
    """Steps over a pool of same-shaped tensors: each step applies an op to tensors made earlier (reused
    freely, so nodes get several consumers); the result is the sum of the last few."""
    n_leaves = draw(st.integers(1, 4))
    steps = []
    for k in range(draw(st.integers(1, 12))):
        pool = n_leaves + k
        if draw(st.booleans()):
            steps.append((draw(st.sampled_from(sorted(UNARY))), draw(st.integers(0, pool - 1))))
        else:
            steps.append((draw(st.sampled_from(sorted(BINARY))), draw(st.integers(0, pool - 1)),
                          draw(st.integers(0, pool - 1))))
    needs = draw(st.lists(st.booleans(), min_size=n_leaves, max_size=n_leaves).filter(any))
    return n_leaves, steps, needs, draw(st.integers(1, min(3, len(steps))))


def run_program(spec, *leaves):
    _, steps, _, last = spec
    pool = list(leaves)
    for op, *args in steps:
        pool.append(UNARY[op](*(pool[i] for i in args)) if op in UNARY else BINARY[op](*(pool[i] for i in args)))
    out = pool[-1].sum()
    for t in pool[-last:-1]:
        out = out + t.sum()
    return out


def nodes_of(root):
    seen, stack = {}, [root]
    while stack:
        node = stack.pop()
        if node is not None and id(node) not in seen:
            seen[id(node)] = node
            stack.extend(child for child, _ in node.next_functions)
    return list(seen.values())


def execution_order(root):
    """Run backward from `root`, logging each node as it runs (through node hooks); return the log."""
    ran = []
    for node in nodes_of(root.grad_fn):
        node.register_hook(lambda grad_inputs, grad_outputs, node=node: ran.append(node))
    root.backward()
    return ran


def assert_valid_order(root_node, ran):
    nodes = nodes_of(root_node)
    assert sorted(map(id, ran)) == sorted(map(id, nodes)), "every reachable node runs exactly once"
    position = {id(n): k for k, n in enumerate(ran)}
    for node in nodes:
        for child, _ in node.next_functions:
            if child is not None:
                assert position[id(node)] < position[id(child)], f"{child.name()} ran before its consumer {node.name()}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.data())
def test_random_programs_run_in_a_valid_order_with_minigrads_gradients(spec, data):
    n_leaves, _, needs, _ = spec
    arrays = [data.draw(values((2, 3), low=-1.5, high=1.5, away_from_zero=True)) for _ in range(n_leaves)]
    if not any(needs):
        return
    leaves = [ref.Tensor(a, requires_grad=g) for a, g in zip(arrays, needs)]
    root = run_program(spec, *leaves)
    if root.grad_fn is None:
        return  # nothing the program computed depends on a tensor that needs a gradient
    assert_valid_order(root.grad_fn, execution_order(root))
    assert_same(lambda *xs: run_program(spec, *xs), arrays, needs_grad=needs)


def test_the_order_differs_from_graphtasks_where_lesson_14_says():
    """Both orders are valid. The reference runs nodes as they become ready (first in, first out); minigrad's
    GraphTask runs the ready node made last first, and a leaf's AccumulateGrad as soon as it is ready."""
    orders = []
    for lib in (ref, mg):
        a, b, c, d = (lib.Tensor(np.array([v]), requires_grad=True) if lib is ref else
                      mg.tensor([v], dtype=mg.float64, requires_grad=True) for v in (1.0, 2.0, 3.0, 4.0))
        names = {id(a): "a", id(b): "b", id(c): "c", id(d): "d"}
        root = (a * b + c * d).sum()
        ran = []
        for node in nodes_of(root.grad_fn):
            label = names[id(node.variable)] if node.name().endswith("AccumulateGrad") else node.name()
            if label == "MulBackward0":
                label += " (c*d)" if node is root.grad_fn.next_functions[0][0].next_functions[1][0] else " (a*b)"
            node.register_hook(lambda gi, go, label=label, ran=ran: ran.append(label))
        root.backward()
        orders.append(ran)
    assert orders[0] == ["SumBackward0", "AddBackward0", "MulBackward0 (a*b)", "MulBackward0 (c*d)", "a", "b", "c", "d"]
    assert orders[1] == ["SumBackward0", "AddBackward0", "MulBackward0 (c*d)", "c", "d", "MulBackward0 (a*b)", "a", "b"]


# -- accumulation, leaves, errors --------------------------------------------------------------------------------

def test_gradients_accumulate_across_backward_calls_and_are_never_shared():
    a, b = ref.Tensor([1.0, 2.0], requires_grad=True), ref.Tensor([3.0, 4.0], requires_grad=True)
    y = (a + b).sum()
    y.backward()
    assert a.grad is not b.grad  # AddBackward0 sends one array to both: each leaf gets its own
    a.grad += 10
    np.testing.assert_array_equal(b.grad, [1.0, 1.0])
    y.backward()  # the reference engine keeps the graph: a second backward adds
    np.testing.assert_array_equal(a.grad, [12.0, 12.0])
    np.testing.assert_array_equal(b.grad, [2.0, 2.0])


def test_backward_with_a_gradient_and_from_a_leaf():
    x = ref.Tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).backward(ref.Tensor([1.0, 0.5, 2.0]))
    np.testing.assert_array_equal(x.grad, [2.0, 2.0, 12.0])
    x.backward(np.array([1.0, 1.0, 1.0]))  # a leaf's own gradient goes straight to its .grad
    np.testing.assert_array_equal(x.grad, [3.0, 3.0, 13.0])
    assert x.is_leaf and not (x * x).is_leaf and x.gradient_node() is x.gradient_node()
    assert x.gradient_node().variable is x and x.gradient_node().name() == "AccumulateGrad"


def test_a_constant_records_nothing_and_backward_from_it_raises_pytorchs_error():
    c = ref.Tensor([1.0, 2.0]) * 3
    assert c.grad_fn is None and not c.requires_grad
    phrase = "element 0 of tensors does not require grad and does not have a grad_fn"
    with pytest.raises(RuntimeError, match=re.escape(phrase)):
        c.sum().backward()
    with pytest.raises(RuntimeError, match=re.escape(phrase)):
        (mg.tensor([1.0, 2.0]) * 3).sum().backward()


def test_a_chain_of_20000_nodes_needs_no_recursion():
    x = ref.Tensor([0.5], requires_grad=True)
    y = x
    for _ in range(20_000):
        y = y * 1.0
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, [1.0])


def test_a_hook_handle_removes_its_hook():
    x = ref.Tensor([1.0], requires_grad=True)
    y = x.exp()
    seen = []
    handle = y.grad_fn.register_hook(lambda gi, go: seen.append((gi, go)))
    y.sum().backward()
    handle.remove()
    y.sum().backward()
    assert len(seen) == 1 and seen[0][1][0].shape == (1,) and np.allclose(seen[0][0][0], np.e)


# -- viz reads it through the same public attributes ------------------------------------------------------------

def _mlp(lib):
    rng = np.random.default_rng(3)
    tensor = (lambda a, g=False: ref.Tensor(a, requires_grad=g)) if lib is ref else \
        (lambda a, g=False: mg.tensor(a, dtype=mg.float64, requires_grad=g))
    x, W, b = tensor(rng.standard_normal((4, 3))), tensor(rng.standard_normal((3, 2)), True), tensor(np.zeros(2), True)
    return (x @ W + b).tanh().mean(), {"W": W, "b": b}


def _rows(summary):
    """viz.summary's rows without the shape and edge columns (the reference's nodes carry no input_metadata)."""
    return [line.split()[:3] for line in str(summary).splitlines()[2:]]


def test_viz_draws_the_same_graph_as_for_minigrad():
    import viz

    (loss, params), (loss_mg, params_mg) = _mlp(ref), _mlp(mg)
    assert _rows(viz.summary(loss, params=params)) == _rows(viz.summary(loss_mg, params=params_mg))
    assert "AccumulateGrad" in str(viz.summary(loss, params=params))
    graph = viz.draw(loss, params=params)
    assert "MmBackward0" in graph.source and "TanhBackward0" in graph.source and graph.svg() is not None


def test_viz_animates_the_reference_engines_backward_pass():
    import viz

    loss, params = _mlp(ref)
    frames = viz.trace_backward(loss, params=params)
    ran = [f.title for f in frames[1:-1]]
    assert ran == ["MeanBackward0 runs", "TanhBackward0 runs", "AddBackward0 runs", "MmBackward0 runs",
                   "AccumulateGrad (b) adds into b.grad", "AccumulateGrad (W) adds into W.grad"]
    assert params["W"].grad is not None
    assert all(not node.hooks for node in nodes_of(loss.grad_fn)), "viz removed every hook it added"
    loss_mg, params_mg = _mlp(mg)
    loss_mg.backward()
    np.testing.assert_allclose(params["W"].grad, params_mg["W"].grad.numpy(), rtol=RTOL, atol=ATOL)
    player = viz.animate(loss, params=params)
    assert len(player.frames) == len(frames)
