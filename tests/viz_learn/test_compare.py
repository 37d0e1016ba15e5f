"""viz.compare: a learner's hand-derived gradients against autograd's (Karpathy's cmp() as a picture)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import viz
from viz.compare import VERDICT_FILL


def _mlp(lib, seed: int = 0):
    """h = x @ w; a = tanh(h); loss = sum(a ** 2), with the gradients derived by hand in NumPy."""
    rng = np.random.default_rng(seed)
    x = lib.tensor(rng.standard_normal((4, 3)))
    w = lib.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    h = x @ w
    a = h.tanh()
    loss = (a**2).sum()
    an = a.detach().numpy()
    da = 2 * an
    dh = da * (1 - an**2)
    dw = x.numpy().T @ dh
    return loss, {"w": w, "h": h, "a": a}, {"w": dw, "h": dh, "a": da}


def test_right_answers_are_exact_or_close(lib):
    loss, params, mine = _mlp(lib)
    result = viz.compare(loss, mine=mine, params=params)
    assert result.passed and bool(result)
    assert {e.name: e.verdict in ("exact", "close") for e in result.entries} == {"w": True, "h": True, "a": True}
    assert all(e.max_diff < 1e-12 for e in result.entries)
    assert result.first_wrong is None
    assert "all gradients match autograd's" in repr(result)


def test_wrong_answer_is_named_with_its_max_difference(lib):
    loss, params, mine = _mlp(lib)
    expected_dh = mine["h"]
    mine["h"] = expected_dh * 1.5
    result = viz.compare(loss, mine=mine, params=params)
    entry = result["h"]
    assert entry.verdict == "wrong"
    assert entry.max_diff == pytest.approx(np.abs(0.5 * expected_dh).max(), rel=1e-12)
    assert result.first_wrong is entry and not result.passed
    text = repr(result)
    assert "✗  h" in text and "first wrong in backward order: h" in text


def test_entries_come_in_backward_order_and_the_first_wrong_is_nearest_the_loss(lib):
    loss, params, mine = _mlp(lib)
    mine = {"w": mine["w"] + 1.0, "a": mine["a"] * 0, "h": mine["h"]}  # w and a wrong; a runs first
    result = viz.compare(loss, mine=mine, params=params)
    assert [e.name for e in result.entries] == ["a", "h", "w"]
    assert [e.order for e in result.entries] == sorted(e.order for e in result.entries)
    assert result.first_wrong.name == "a"


def test_close_is_within_tolerance_and_exact_is_equal(lib):
    loss, params, mine = _mlp(lib)
    mine["a"] = mine["a"] + 1e-9
    result = viz.compare(loss, mine=mine, params=params)
    assert result["a"].verdict == "close"
    assert result["a"].max_diff == pytest.approx(1e-9, rel=1e-3)
    mine["a"] = mine["a"] + 1e-3
    assert viz.compare(loss, mine=mine, params=params)["a"].verdict == "wrong"


def test_user_tensors_flags_and_grads_unchanged_and_graph_kept(lib):
    loss, params, mine = _mlp(lib)
    h, w = params["h"], params["w"]
    viz.compare(loss, mine=mine, params=params)
    assert not h.retains_grad and h.requires_grad and not h.is_leaf
    assert w.grad is None and w.requires_grad and w.is_leaf
    loss.backward()  # the graph is still there
    np.testing.assert_allclose(w.grad.numpy(), mine["w"], rtol=1e-12)


def test_placeholder_shape_mismatch_and_unknown_names(lib):
    loss, params, mine = _mlp(lib)
    result = viz.compare(loss, mine={"w": ..., "h": mine["h"].T}, params=params)
    assert result["w"].verdict == "wrong" and result["w"].note == "no answer yet"
    assert result["h"].verdict == "wrong" and math.isinf(result["h"].max_diff)
    assert "your shape (2, 4), autograd's (4, 2)" in result["h"].note
    with pytest.raises(KeyError, match="not in params"):
        viz.compare(loss, mine={"nope": 1.0}, params=params)


def test_tensor_answers_are_accepted(lib):
    loss, params, mine = _mlp(lib)
    result = viz.compare(loss, mine={"w": lib.tensor(mine["w"])}, params=params)
    assert result["w"].verdict in ("exact", "close")


def test_picture_colours_each_named_tensor_by_verdict(lib, pgv):
    loss, params, mine = _mlp(lib)
    mine["h"] = mine["h"] * 2
    result = viz.compare(loss, mine=mine, params=params)
    dot = result.graph.source
    assert VERDICT_FILL["wrong"] in dot and "first wrong in backward order" in dot
    for e in result.entries:
        assert e.node is not None and e.node in dot
    bundle = result._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "image/png" in data and data["text/plain"] == repr(result)


def test_names_are_escaped_in_the_picture(lib, pgv):
    loss, params, mine = _mlp(lib)
    params = {"<w&>": params["w"]}
    result = viz.compare(loss, mine={"<w&>": mine["w"] * 3}, params=params)
    dot = result.graph.source
    assert "&lt;w&amp;&gt;" in dot and "<w&>" not in dot
    assert result.graph.svg() is not None


def test_animate_shows_a_comparison(lib, pgv):
    loss, params, mine = _mlp(lib)
    mine["h"] = mine["h"] * 2
    result = viz.compare(loss, mine=mine, params=params)
    player = viz.animate(loss, params=params, compare=result)
    assert VERDICT_FILL["wrong"] in player.scene.dot and VERDICT_FILL["exact"] in player.scene.dot
    said = {text for f in player.frames for kind, text in f.lines if kind == "check"}
    assert said == {"your gradient: " + e.text for e in result.entries}
    np.testing.assert_allclose(params["w"].grad.numpy(), result.expected["w"])  # the real backward ran


def test_tensors_without_grad_and_a_freed_graph(lib):
    loss, params, mine = _mlp(lib)
    x = loss.grad_fn  # keep the graph reachable
    const = lib.tensor([1.0, 2.0])
    result = viz.compare(loss, mine={"c": [0.0, 0.0], "w": mine["w"]}, params={"c": const, "w": params["w"]})
    assert result["c"].verdict == "missing" and result["c"].note == "it does not require grad"
    params["h"].retain_grad()
    loss.backward()  # frees the graph: the tensors' own .grad are used
    assert viz.compare(loss, mine={"w": mine["w"], "h": mine["h"]}, params=params, draw=False).passed
    with pytest.raises(RuntimeError, match="call it before loss.backward"):
        viz.compare(loss, mine={"a": mine["a"]}, params=params, draw=False)
    assert x is loss.grad_fn
