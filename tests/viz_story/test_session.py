"""viz.session: the steps of a block (backward calls, zero_grad, optimizer steps, in-place ops, failures)
against the same code run plainly, with minigrad and PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import viz


def _params(lib):
    w = lib.nn.Parameter(lib.tensor(np.array([1.0, 2.0])))
    x = lib.tensor(np.array([3.0, 4.0]))
    return w, x, lib.optim.SGD([w], lr=0.1)


def _np(t):
    return None if t is None else np.array(t.detach().tolist())


def _plain(lib, set_to_none=True):
    """The story without viz: the values a learner would print after each call, and the final error."""
    w, x, opt = _params(lib)
    seen = []
    loss = (w * x).sum()
    loss.backward(retain_graph=True)
    seen.append(_np(w.grad))
    loss.backward()
    seen.append(_np(w.grad))
    opt.step()
    seen.append(_np(w))
    opt.zero_grad(set_to_none=set_to_none)
    seen.append(_np(w.grad))
    with pytest.raises(RuntimeError) as err:
        loss.backward()
    return seen, str(err.value)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_steps_match_a_plain_run(lib, set_to_none):
    (g1, g2, w_after, g_zero), message = _plain(lib, set_to_none)
    w, x, opt = _params(lib)
    with viz.session() as s:
        loss = (w * x).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=set_to_none)
        loss.backward()  # the graph's saved values were freed by the backward of step 2
    kinds = [st.kind for st in s.steps]
    assert kinds == ["start", "backward", "backward", "step", "zero_grad", "error", "done"]
    first, second, step, zero, error = s.steps[1:6]
    (c1,) = first.changes
    assert (c1.name, c1.what, c1.before) == ("w", "grad", None)
    np.testing.assert_allclose(c1.after, g1, rtol=1e-9, atol=1e-12)
    (c2,) = second.changes
    np.testing.assert_allclose(c2.before, g1, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(c2.after, g2, rtol=1e-9, atol=1e-12)
    assert c2.rule == "[3, 4] + [3, 4] = [6, 8]: backward adds into .grad"
    assert first.title == "loss.backward(retain_graph=True)" and second.title == "loss.backward()"
    assert any(k == "freed" and "MulBackward0" in t for k, t in second.lines)
    (c3,) = step.changes
    np.testing.assert_allclose(c3.before, [1.0, 2.0])
    np.testing.assert_allclose(c3.after, w_after, rtol=1e-9, atol=1e-12)
    assert c3.rule == "[1, 2] - 0.1 × [6, 8] = [0.4, 1.2]"
    (c4,) = zero.changes
    if set_to_none:
        assert c4.after is None and g_zero is None and c4.rule == "set to None"
    else:
        np.testing.assert_array_equal(c4.after, g_zero)
        assert c4.rule == "zeroed in place"
    assert error.error == message
    assert any("freed after the backward of step 2" in t for _, t in error.lines)
    # the first backward had retain_graph=True: the advice names the one that freed the graph
    (fix,) = [t for k, t in error.lines if k == "note" and t.startswith("Fix:")]
    assert "to the backward of step 2" in fix and "first backward" not in fix
    assert s.steps[-1].title == "The block ended with the error above"
    assert "[2] loss.backward()" in s.summary()


def test_inplace_bump_and_the_error_it_causes(lib):
    w, _, _ = _params(lib)
    with lib.autograd.set_detect_anomaly(True, check_nan=False), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anomaly mode's "Error detected in ExpBackward0"
        plain_y = w.exp()
        plain_y.mul_(2)
        with pytest.raises(RuntimeError) as plain:  # the same run in anomaly mode (source=True uses it)
            plain_y.sum().backward()
    with viz.session(source=True) as s:
        y = w.exp()
        y.mul_(2)  # bumps-y
        y.sum().backward()
    kinds = [st.kind for st in s.steps]
    assert kinds == ["start", "inplace", "error", "done"]
    inplace, error = s.steps[1], s.steps[2]
    (change,) = inplace.changes
    assert (change.name, change.rule) == ("y", "version 0 -> 1")
    np.testing.assert_allclose(change.after, 2 * np.exp([1.0, 2.0]), rtol=1e-9)
    assert any(k == "source" and t.endswith("y.mul_(2)  # bumps-y") for k, t in inplace.lines)
    assert error.error == str(plain.value)
    texts = [t for _, t in error.lines]
    assert "ExpBackward0's saved result was at version 0 when it was saved; it is at version 1 now." in texts
    assert error.nodes and s.player().data["steps"][2]["refs"] == error.nodes  # ExpBackward0 lights up
    assert any(t.startswith("Changed at step 1: y changed in place") and "y.mul_(2)" in t for t in texts)


def test_inplace_between_calls_before_after(lib):
    w, x, _ = _params(lib)
    with viz.session() as s:
        h = w * x
        h.sum().backward()
        with lib.no_grad():
            x.add_(1.0)
    (step,) = [st for st in s.steps if st.kind == "inplace"]
    (change,) = step.changes
    assert change.name == "x" and change.rule == "version 0 -> 1"
    np.testing.assert_allclose(change.before, [3.0, 4.0])
    np.testing.assert_allclose(change.after, [4.0, 5.0])


def test_everything_is_put_back(lib):
    import importlib

    cls_backward = lib.Tensor.__dict__["backward"]
    functions = (lib.autograd.backward, lib.autograd.grad)
    optimizer = importlib.import_module(f"{lib.__name__}.optim.optimizer")
    hooks = (len(optimizer._global_optimizer_pre_hooks), len(optimizer._global_optimizer_post_hooks))
    w, x, _ = _params(lib)
    with pytest.raises(RuntimeError), viz.session(catch=False):
        loss = (w * x).sum()
        loss.backward()
        loss.backward()
    assert lib.Tensor.__dict__["backward"] is cls_backward
    assert (lib.autograd.backward, lib.autograd.grad) == functions
    assert (len(optimizer._global_optimizer_pre_hooks), len(optimizer._global_optimizer_post_hooks)) == hooks
    with pytest.raises(ValueError), viz.session():
        raise ValueError("not an autograd error: never swallowed")


def test_player_steps(lib):
    w, x, opt = _params(lib)
    with viz.session() as s:
        loss = (w * x).sum()
        loss.backward()
        opt.step()
    player = s.player()
    steps = player.data["steps"]
    assert [st["kind"] for st in steps] == ["start", "backward", "step", "done"]
    assert steps[1]["ids"] and set(steps[0]["appear"]) >= set(steps[1]["ids"])
    assert steps[1]["lines"][0] == ["change", "w.grad: None -> [3, 4]"]
    assert player.num_steps == 4


def test_params_limit_the_story_to_them_and_new_tensors(lib):
    w, x, _ = _params(lib)
    unrelated = lib.tensor(np.array([9.0]), requires_grad=True)  # noqa: F841 (in scope, not watched)
    with viz.session(params={"w": w}) as s:
        loss = (w * x).sum()
        loss.backward()
    assert [t.split(" = ")[0] for _, t in s.steps[0].lines] == ["w"]
    assert [c.name for c in s.steps[1].changes] == ["w"]
    assert "loss" in {seen.name for seen in s._seen.values()}


def test_module_parameters_and_adam(lib):
    model = lib.nn.Linear(2, 1).double()
    opt = lib.optim.Adam(model.parameters(), lr=0.5)
    before = {n: _np(p) for n, p in model.named_parameters()}
    data = lib.tensor(np.array([[1.0, -1.0]]))
    with viz.session() as s:
        model(data).sum().backward()
        opt.step()
    step = next(st for st in s.steps if st.kind == "step")
    assert [c.name for c in step.changes] == ["model.weight", "model.bias"]
    for c in step.changes:
        np.testing.assert_allclose(c.before, before[c.name.split(".", 1)[1]], rtol=1e-12)
        np.testing.assert_allclose(c.after, _np(dict(model.named_parameters())[c.name.split(".", 1)[1]]),
                                   rtol=1e-12)
        # Adam's first step moves each weight by lr, against the sign of its gradient: m̂ = g, v̂ = g²
        assert c.rule.startswith("t = 1, m̂ = [") and "p ← p − lr·m̂/(√v̂ + eps) = " in c.rule
        np.testing.assert_allclose(np.abs(c.after - c.before), 0.5, rtol=1e-6)
        np.testing.assert_allclose(c.terms["after"], c.after, rtol=1e-9)
    assert step.lines[-1][1] == ("Adam: m̂ = m/(1 − β1^t), v̂ = v/(1 − β2^t);  p ← p − lr·m̂/(√v̂ + eps) (lr = 0.5, "
                                 "β1, β2 = 0.9, 0.999, eps = 1e-08), in place (each parameter's version goes up).")


def test_a_saved_value_changed_in_place_is_not_called_freed(lib):
    x = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = x.exp()
    y.mul_(2)
    source = viz.draw(y, show_saved=True).source
    assert "saved result = changed in place since saved" in source and "freed" not in source


def _grad_story(lib, session=None):
    """autograd.grad (retain_graph), autograd.backward, then autograd.grad on the freed graph: what a learner
    would print after each call, with or without a session around the calls."""
    w, x, _ = _params(lib)
    x.requires_grad_(True)
    seen = []
    with session if session is not None else _Nothing():
        loss = (w * x).sum()
        gw, gx = lib.autograd.grad(loss, [w, x], retain_graph=True)
        seen.append((_np(gw), _np(gx), w.grad, x.grad))
        lib.autograd.backward([loss])
        seen.append((_np(w.grad), _np(x.grad)))
        lib.autograd.grad(loss, w)
    return seen


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_autograd_grad_and_backward_are_steps(lib):
    with pytest.raises(RuntimeError) as plain_error:
        _grad_story(lib)
    s = viz.session()
    seen = _grad_story(lib, s)
    (gw, gx, w_grad, x_grad), (w_after, x_after) = seen
    assert w_grad is None and x_grad is None  # autograd.grad leaves .grad alone, in the session too
    assert [st.kind for st in s.steps] == ["start", "grad", "backward", "error", "done"]
    grad, backward, error = s.steps[1:4]
    assert grad.title == "autograd.grad(loss, [w, x], retain_graph=True)"
    assert [n for n, _ in grad.results] == ["w", "x"] and grad.changes == []
    np.testing.assert_allclose(grad.results[0][1], gw, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grad.results[1][1], gx, rtol=1e-9, atol=1e-12)
    assert ("result", "returns the gradient for w: [3, 4]") in grad.lines
    assert ("note", "autograd.grad returns the gradients and leaves every .grad as it was.") in grad.lines
    assert backward.title == "autograd.backward(loss)"
    assert [(c.name, c.before) for c in backward.changes] == [("w", None), ("x", None)]
    np.testing.assert_allclose(backward.changes[0].after, w_after, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(backward.changes[1].after, x_after, rtol=1e-9, atol=1e-12)
    assert any(k == "freed" and "MulBackward0" in t for k, t in backward.lines) and backward.freed
    assert error.title == "autograd.grad(loss, w) failed" and error.error == str(plain_error.value)
    assert any("freed after the backward of step 2" in t for _, t in error.lines)
    steps = s.player().data["steps"]
    assert steps[2]["freed"] == backward.freed and len(steps[2]["changed"]) == 2  # w's and x's boxes


def test_grad_with_create_graph_then_backward_through_it(lib):
    """A Hessian-vector product: the gradient autograd.grad returns under create_graph=True is itself
    differentiated by the next backward."""
    values, v = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    w = lib.tensor(values, requires_grad=True)
    with viz.session(params={"w": w}) as s:
        (g,) = lib.autograd.grad((w ** 3).sum(), w, create_graph=True)
        (g * lib.tensor(v)).sum().backward()
    plain_w = lib.tensor(values, requires_grad=True)
    (plain_g,) = lib.autograd.grad((plain_w ** 3).sum(), plain_w, create_graph=True)
    (plain_g * lib.tensor(v)).sum().backward()
    assert [st.kind for st in s.steps] == ["start", "grad", "backward", "done"]
    grad, backward = s.steps[1:3]
    assert grad.title.endswith(", w, create_graph=True)")
    np.testing.assert_allclose(grad.results[0][1], _np(plain_g), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(backward.changes[0].after, _np(plain_w.grad), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(backward.changes[0].after, 6 * values * v, rtol=1e-9)


def test_a_name_bound_again_in_the_block_is_watched(lib):
    """With params=, the scope's tensors from before the block are left out by id: a tensor the block drops
    (its name bound again) must not hand its id to a new one, which would then be left out too."""
    x = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
    g = lib.tensor(np.array([5.0, 6.0]))  # bound again in the block: the old tensor is dropped there
    with viz.session(params={"x": x}) as s:
        y = (x * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        for _ in range(20):  # new tensors, any of which might take the old g's id
            gv = (g * 2.0).sum()
            (hv,) = lib.autograd.grad(gv, x, retain_graph=True)
    titles = [st.title for st in s.steps if st.kind == "grad"]
    assert titles[0] == "autograd.grad(y, x, create_graph=True)"
    assert set(titles[1:]) == {"autograd.grad(gv, x, retain_graph=True)"}
    np.testing.assert_allclose(s.steps[-2].results[0][1], [4.0, 4.0])
    del hv
