"""The backward engine: ordering, summing, accumulation, freeing, depth, cycles, higher order."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.autograd.graph import FREED


def leaf(values, dtype=mg.float64):
    return mg.tensor(values, dtype=dtype, requires_grad=True)


def test_input_used_twice_gets_the_sum_of_both_paths():
    a = leaf([1.0, 2.0, 3.0])
    (a * a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 4.0, 6.0])
    assert [type(n).__name__ for n, _ in (a * a).grad_fn.next_functions] == ["AccumulateGrad"] * 2


def test_node_runs_once_after_all_its_gradients_arrived():
    x = leaf([1.0, 2.0])
    y = x.exp()
    calls = []
    y.grad_fn.register_prehook(lambda grads: calls.append(grads[0].numpy().copy()))
    z = (y * 2 + y * 3 + y).sum()  # three paths into y's node
    z.backward()
    assert len(calls) == 1
    np.testing.assert_allclose(calls[0], [6.0, 6.0])
    np.testing.assert_allclose(x.grad.numpy(), 6 * np.exp([1.0, 2.0]))


def test_gradients_accumulate_across_backward_calls_in_place():
    x = leaf([1.0, 2.0])
    y = (x * 3).sum()
    y.backward(retain_graph=True)
    g = x.grad
    y.backward()
    assert x.grad is g  # accumulated in place, as PyTorch: a saved reference sees the update
    np.testing.assert_allclose(g.numpy(), [6.0, 6.0])


def test_shared_gradient_arrays_never_alias_between_leaves():
    a, b = leaf([1.0]), leaf([1.0])
    (a + b).sum().backward(retain_graph=False)
    a.grad.add_(10)  # must not change b.grad
    np.testing.assert_allclose(b.grad.numpy(), [1.0])


def test_saved_values_are_freed_after_backward_unless_retained():
    x = leaf([1.0, 2.0])
    y = x.exp()
    node = y.grad_fn
    y.sum().backward(retain_graph=True)
    assert node._result is not FREED
    y.sum().backward()
    assert node._result is FREED
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        node._saved_result
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()


def test_graph_without_saved_values_can_backprop_twice():
    x = leaf([1.0, 2.0])
    y = (x + 1).sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_million_op_chain_backprops_iteratively():
    x = leaf([0.5])
    y = x
    with mg.no_grad():
        pass
    for _ in range(1_000_000):
        y = y + 1.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])


def test_graph_is_freed_by_reference_counting_alone():
    gc.disable()
    try:
        x = leaf([1.0, 2.0])
        y = (x * 2).exp().tanh().sum()
        node_ref = weakref.ref(y.grad_fn)
        inner_ref = weakref.ref(y.grad_fn.next_functions[0][0])
        del y
        assert node_ref() is None and inner_ref() is None  # no cycles: no collector needed
    finally:
        gc.enable()


def test_node_output_tensor_is_a_weak_reference():
    x = leaf([1.0])
    y = x.exp()
    node = y.grad_fn
    assert node.output_tensor is y
    del y
    assert node.output_tensor is None


def test_create_graph_gives_higher_order_derivatives():
    x = leaf([0.3, -1.2])
    y = (x ** 3).sum()
    (g,) = mg.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.numpy() if not g.requires_grad else g.detach().numpy(), 3 * np.array([0.3, -1.2]) ** 2)
    (h,) = mg.autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(h.detach().numpy(), 6 * np.array([0.3, -1.2]))
    (t,) = mg.autograd.grad(h.sum(), x)
    np.testing.assert_allclose(t.numpy(), [6.0, 6.0])


def test_tanh_third_derivative_matches_closed_form():
    x = leaf([0.1, 0.7, -2.0])
    (d1,) = mg.autograd.grad(x.tanh().sum(), x, create_graph=True)
    (d2,) = mg.autograd.grad(d1.sum(), x, create_graph=True)
    (d3,) = mg.autograd.grad(d2.sum(), x)
    t = np.tanh([0.1, 0.7, -2.0])
    np.testing.assert_allclose(d3.numpy(), -2 * (1 - t**2) * (1 - 3 * t**2), rtol=1e-12)


def test_grad_does_not_touch_dot_grad_and_only_runs_what_it_needs():
    a, b = leaf([1.0]), leaf([2.0])
    c = a * b
    ran = []
    c.grad_fn.register_hook(lambda gi, go: ran.append("mul"))
    (ga,) = mg.autograd.grad(c.sum(), a)
    assert a.grad is None and b.grad is None
    np.testing.assert_allclose(ga.numpy(), [2.0])
    assert ran == ["mul"]


def test_backward_inputs_restricts_accumulation():
    a, b = leaf([1.0]), leaf([2.0])
    (a * b).sum().backward(inputs=[a])
    assert b.grad is None
    np.testing.assert_allclose(a.grad.numpy(), [2.0])


def test_backward_inputs_can_name_a_non_leaf():
    a = leaf([1.0, 2.0])
    h = a * 2
    (h * h).sum().backward(inputs=[h])
    np.testing.assert_allclose(h.grad.numpy(), [4.0, 8.0])
    assert a.grad is None


def test_calling_a_node_by_hand_applies_its_rule():
    x = leaf([1.0, 2.0])
    y = x * mg.tensor([3.0, 4.0], dtype=mg.float64)
    out = y.grad_fn(mg.ones(2, dtype=mg.float64))
    np.testing.assert_allclose(out[0].numpy(), [3.0, 4.0])
    assert out[1] is None


def test_broadcast_gradients_are_summed_back_to_input_shapes():
    a = leaf(np.ones((3, 1)))
    b = leaf(np.ones((1, 4)))
    (a + b * 2).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (1, 4)
    np.testing.assert_allclose(a.grad.numpy(), np.full((3, 1), 4.0))
    np.testing.assert_allclose(b.grad.numpy(), np.full((1, 4), 6.0))


def test_gradient_dtype_follows_each_input():
    a = mg.tensor([1.0, 2.0], requires_grad=True)  # float32
    b = mg.tensor([1.0, 2.0], dtype=mg.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype == mg.float32 and b.grad.dtype == mg.float64


def test_version_counter_is_shared_by_detach_but_not_by_data():
    x = mg.ones(2)
    d, v = x.detach(), x.data
    d.add_(1)
    assert x._version == 1 and d._version == 1
    v.add_(1)
    assert x._version == 1
    np.testing.assert_allclose(x.numpy(), [3.0, 3.0])


def test_saved_input_modified_in_place_is_caught_with_versions():
    a = leaf([1.0, 2.0])
    z = a * 1
    y = z * z
    z.add_(1)
    with pytest.raises(RuntimeError, match=r"which is output 0 of Add, is at version 1; expected version 0 instead"):
        y.sum().backward()


def test_unsaved_input_modified_in_place_is_fine():
    a = leaf([1.0, 2.0])
    z = a * 1
    y = z + a
    z.add_(1)
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0])


def test_inplace_op_rebases_the_tensor_onto_a_new_node():
    a = leaf([1.0, 2.0])
    z = a * 1
    first = z.grad_fn
    z.mul_(3)
    assert type(z.grad_fn).__name__ == "MulBackward0" and z.grad_fn is not first
    assert z.grad_fn.next_functions[0][0] is first
    z.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 3.0])


def test_thread_local_grad_mode():
    import threading

    seen = []
    with mg.no_grad():
        t = threading.Thread(target=lambda: seen.append(mg.is_grad_enabled()))
        t.start()
        t.join()
        assert not mg.is_grad_enabled()
    assert seen == [True]


def test_inference_mode_tensors_cannot_be_saved():
    with mg.inference_mode():
        c = mg.ones(2)
    assert c.is_inference()
    x = leaf([1.0, 2.0], dtype=mg.float32)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x * c


def test_anomaly_mode_names_the_node_that_made_nan():
    x = leaf([-1.0])
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = mg.autograd.detect_anomaly()
    with ctx:
        y = x.sqrt()
        with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output."):
            with pytest.warns(UserWarning, match="Error detected in SqrtBackward0"):
                y.sum().backward()


def test_saved_tensors_hooks_pack_and_unpack():
    packed = []
    x = leaf([1.0, 2.0])
    with mg.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or len(packed) - 1,
                                               lambda i: packed[i]):
        y = x * x
    y.sum().backward()
    assert len(packed) == 2
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_missing_pytorch_name_says_minigrad_lacks_it():
    with pytest.raises(AttributeError, match="minigrad does not implement torch.fft"):
        mg.fft
    with pytest.raises(AttributeError, match="minigrad does not implement Tensor.stft"):
        mg.ones(2).stft


def test_missing_tensor_names_are_hidden_stubs_and_unknown_names_get_pytorchs_message(torch):
    t = mg.ones(2)
    assert not hasattr(t, "polygamma") and "polygamma" not in dir(t) and "exp" in dir(t)  # (a name minigrad lacks)
    with pytest.raises(AttributeError) as err:
        t.no_such_thing
    want = str(pytest.raises(AttributeError, lambda: torch.ones(2).no_such_thing).value)
    assert str(err.value) == want
    node = (mg.ones(2, requires_grad=True) * 2.0).grad_fn
    tnode = (torch.ones(2, requires_grad=True) * 2.0).grad_fn
    def saved(n):
        return [a for a in dir(n) if a.startswith(("_saved_", "_raw_saved_"))]
    assert saved(node) == saved(tnode)
    with pytest.raises(AttributeError, match="'MulBackward0' object has no attribute '_saved_foo'"):
        node._saved_foo


def test_one_array_returned_for_two_inputs_is_not_shared_by_their_grads():
    class Twice(mg.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            g2 = g * 2
            return g2, g2  # the same fresh array for both inputs

    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    Twice.apply(a, b).sum().backward()
    a.grad.add_(100)
    np.testing.assert_allclose(b.grad.numpy(), [2.0, 2.0])
    (a * 1).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), [2.0, 2.0])


def test_user_seed_gradient_is_copied_not_adopted():
    x = leaf([1.0, 2.0])
    seed = mg.tensor([1.0, 1.0], dtype=mg.float64)
    x.backward(seed)
    x.grad.add_(5)
    np.testing.assert_allclose(seed.numpy(), [1.0, 1.0])


def test_hooks_run_in_the_callers_context():
    """Jupyter routes prints by a context variable: hooks must see the caller's context, not a snapshot."""
    import contextvars

    var = contextvars.ContextVar("where", default="snapshot")
    var.set("caller")
    seen = []
    x = leaf([1.0])
    x.register_hook(lambda g: seen.append(var.get()))
    (x * 2).sum().backward()
    assert seen == ["caller"]


def test_backward_at_zero_of_sqrt_is_inf_without_numpy_warnings():
    import warnings

    x = leaf([0.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.sqrt().sum().backward()
    assert x.grad.tolist() == [float("inf"), 0.25]


def test_track_outputs_off_drops_the_weak_reference_and_viz_still_draws():
    import viz

    x = leaf([1.0, 2.0])
    with mg.autograd.graph.track_outputs(False):
        y = (x * 2).exp()
    assert y.grad_fn.output_tensor is None
    assert (x * 2).grad_fn.output_tensor is not None  # restored after the block
    text = str(viz.summary(y.sum(), params={"x": x}))
    assert "ExpBackward0" in text and "MulBackward0" in text


def test_backward_from_several_roots_where_one_feeds_another(torch):
    """Roots that lie on each other's paths: every gradient arrives once (no double counting, no deadlock)."""
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        z = y * 3.0 + x.sum()
        w = z.exp()
        m.autograd.backward([w, y, z], [m.tensor(0.5), m.tensor(2.0), m.tensor(-1.0)], retain_graph=True)
        g1 = x.grad.tolist()
        (gy,) = m.autograd.grad([y, w], [x], [m.tensor(1.5), m.tensor(0.25)])
        return g1, gy.tolist()
    got, want = run(mg), run(torch)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


@pytest.mark.parametrize("write", ["out.add_(1)", "out[0].mul_(2)", "out.detach().zero_()", "out.data.zero_()",
                                   "out.view(3).add_(1)", "out.detach_(); out.zero_()"])
def test_writes_to_a_saved_result_through_any_alias_are_caught_as_pytorch_does(torch, write):
    """exp saves its result; a write through the tensor, a view or detach() shares its version counter
    (caught), .data does not (PyTorch computes silently with the new values too)."""
    def run(m):
        x = m.ones(3, requires_grad=True)
        out = x.exp()
        exec(write, {"out": out})
        try:
            out.sum().backward()
        except RuntimeError as e:
            return "error", str(e).split(";")[0].replace("minigrad.", "torch.")
        return "ran", x.grad.tolist()
    assert run(mg) == run(torch)


def test_record_sets_every_slot_that_make_and_new_node_set():
    """`record` writes out in line what `make` and `new_node` do (it runs once per op): the slots must agree."""
    from minigrad._tensor import Tensor, make
    from minigrad.autograd.graph import Node, new_node

    def slots(cls):
        return [s for c in cls.__mro__ for s in getattr(c, "__slots__", ()) if s != "__weakref__"]

    x = leaf([1.0, 2.0])
    for out in (x * 2.0, x.exp(), x * x, mg.stack([x, x, x])):  # a number, one input, two, a list
        plain = make(np.ones(2))
        assert [hasattr(out, s) for s in slots(Tensor)] == [hasattr(plain, s) for s in slots(Tensor)]
        assert all(hasattr(out, s) for s in slots(Tensor))
        node = out.grad_fn
        expected = [s for s in slots(type(node)) if node._saves_result or not s.startswith("_result")]
        assert all(hasattr(node, s) for s in expected), [s for s in expected if not hasattr(node, s)]
        made = new_node(type(node), (None,), None, node._input_metadata)
        assert all(hasattr(made, s) for s in slots(Node))


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_only_what_leads_to_the_inputs_runs_as_in_pytorch(torch, data):
    """autograd.grad and backward(inputs=) on random graphs (several roots, which may feed each other; inputs that
    are leaves or intermediate tensors, some unreachable): the same nodes run (node hooks) and the same gradients
    come out as in PyTorch. The engine finds the nodes that lead to the inputs in the walk that counts dependencies
    (`GraphTask.count_dependencies_to`), finishing each node after every node it leads to."""
    n_ops = data.draw(st.integers(1, 7))
    ops = [(data.draw(st.sampled_from(["mul", "add", "exp", "tanh"])), data.draw(st.integers(0, 10 ** 6)),
            data.draw(st.integers(0, 10 ** 6))) for _ in range(n_ops)]
    n_all = 3 + n_ops
    roots = data.draw(st.lists(st.integers(3, n_all - 1), min_size=1, max_size=3, unique=True))
    inputs = data.draw(st.lists(st.integers(0, n_all - 1), min_size=1, max_size=3, unique=True))
    accumulate = data.draw(st.booleans())
    seeds = [0.5 + 0.25 * k for k in range(len(roots))]

    def run(m):
        ts = [m.tensor([0.3, -0.2], dtype=m.float64, requires_grad=True) for _ in range(3)]
        ran = []
        for k, (op, i, j) in enumerate(ops):
            a, b = ts[i % len(ts)], ts[j % len(ts)]
            t = a * b if op == "mul" else a + b if op == "add" else (a.exp() if op == "exp" else a.tanh()) * 0.5
            t.grad_fn.register_hook(lambda gi, go, k=k: ran.append(k))
            ts.append(t)
        outs = [ts[r].sum() for r in roots]
        grads = [m.tensor(s, dtype=m.float64) for s in seeds]
        ins = [ts[i] for i in inputs]
        if accumulate:
            m.autograd.backward(outs, grads, inputs=ins)
            got = [None if t.grad is None else t.grad.tolist() for t in ins]
        else:
            got = [None if g is None else g.tolist()
                   for g in m.autograd.grad(outs, ins, grads, allow_unused=True)]
        return sorted(ran), got

    got, want = run(mg), run(torch)
    assert got[0] == want[0]
    for g, w in zip(got[1], want[1]):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)


def test_a_node_that_leads_to_the_input_only_through_a_sibling_is_run(torch):
    """r = c + d with d made from c: the walk meets c from r first and again from d, deeper; d must be finished
    after c, or it would not know that it leads to the input and its gradient would be lost."""
    def run(m):
        x = m.tensor([0.3, -0.2], dtype=m.float64, requires_grad=True)
        c = x.exp()
        d = c * 3.0
        r = (c + d).sum()
        (gx,) = m.autograd.grad(r, x, retain_graph=True)
        (gc,) = m.autograd.grad(r, c, retain_graph=True)
        r.backward(inputs=[x])
        return gx.tolist(), gc.tolist(), x.grad.tolist()
    got, want = run(mg), run(torch)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
