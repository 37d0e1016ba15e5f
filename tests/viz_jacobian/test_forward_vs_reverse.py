"""viz.forward_vs_reverse: the Jacobian both ways equals torch.func.jacfwd / jacrev, the counts are those of the
passes as they ran (one forward pass per input, one backward pass per output, one op evaluation per node that
ran), the winner is the right one for tall and wide functions, and the output is deterministic and the same for
minigrad and PyTorch. The page and the widget: tests/browser/test_jacobian_browser.py."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import viz
from viz.jacobian import MAX_PASSES, ForwardVsReverse


def _t(lib, arr):
    return lib.tensor(np.asarray(arr, dtype=np.float64), dtype=lib.float64)


def _tall(lib):
    """R^2 -> R^8: few inputs, many outputs (forward mode wins)."""
    W = _t(lib, np.arange(16.0).reshape(8, 2) / 8 - 0.5)
    return (lambda x: (W @ x).tanh()), _t(lib, [0.5, -1.0])


def _wide(lib):
    """R^8 -> R: a loss of many inputs (reverse mode wins)."""
    w = _t(lib, np.linspace(-1, 1, 8))
    return (lambda x: (x.tanh() * w).sum()), _t(lib, np.linspace(-0.9, 1.1, 8))


def _matrix(lib):
    """A (2, 3) input to a (3,) output through a branchy graph (a tensor used twice, a reduction)."""
    return (lambda x: (x.sin() * x).sum(0) + x.exp().mean(0)), _t(lib, np.arange(6.0).reshape(2, 3) / 5 - 0.4)


CASES = {"tall": _tall, "wide": _wide, "matrix": _matrix}


def _reference(torch, f_of_lib, lib):
    """torch.func's Jacobians of the same function, on PyTorch tensors (m x n, flattened)."""
    f, x = f_of_lib(torch)
    x0 = torch.tensor(np.asarray(x.detach().numpy()), dtype=torch.float64)
    m = f(x0).numel()
    jf = torch.func.jacfwd(f)(x0).reshape(m, x0.numel()).numpy()
    jr = torch.func.jacrev(f)(x0).reshape(m, x0.numel()).numpy()
    return jf, jr


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_jacobians_are_torch_funcs(lib, torch, case):
    f, x = CASES[case](lib)
    race = viz.forward_vs_reverse(f, x)
    jf, jr = _reference(torch, CASES[case], lib)
    np.testing.assert_allclose(race.jacobian_forward, jf, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(race.jacobian_reverse, jr, rtol=1e-9, atol=1e-12)
    # and minigrad's own transforms give them too
    import minigrad

    fm, xm = CASES[case](minigrad)
    m = race.m
    np.testing.assert_allclose(minigrad.func.jacfwd(fm)(xm).reshape(m, race.n).numpy(), jf, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(minigrad.func.jacrev(fm)(xm).reshape(m, race.n).numpy(), jr, rtol=1e-9, atol=1e-12)


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 5), m=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_any_sizes_match_torch_func(torch, n, m, seed):
    import minigrad

    rng = np.random.default_rng(seed)
    W, x0 = rng.normal(size=(m, n)), rng.normal(size=n)

    def make(lib):
        Wt = _t(lib, W)
        return (lambda x: (Wt @ x.tanh()).sin()), _t(lib, x0)

    race = viz.forward_vs_reverse(*make(minigrad))
    f, xt = make(torch)
    np.testing.assert_allclose(race.jacobian_forward, torch.func.jacfwd(f)(xt).numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(race.jacobian_reverse, torch.func.jacrev(f)(xt).numpy(), rtol=1e-9, atol=1e-12)
    c = race.counts
    assert (c["forward"]["passes"], c["reverse"]["passes"]) == (n, m)
    # three ops (tanh, mv, sin): n passes of values and tangents; one values pass and m backward passes
    assert (c["forward"]["values"], c["forward"]["rules"]) == (3 * n, 3 * n)
    assert (c["reverse"]["values"], c["reverse"]["rules"]) == (3, 3 * m)


def test_counts_come_from_the_ops_that_ran(lib):
    """A chain of k ops on x: each forward pass runs k values and k tangent rules, reverse mode runs k values
    once and k backward rules per output; an op that does not touch x (c * 2) is not on x's path."""
    c = _t(lib, [1.0, 2.0, 3.0])
    for k in (1, 4):
        def f(x, k=k):
            for _ in range(k):
                x = x.sin()
            return x * (c * 2)

        race = viz.forward_vs_reverse(f, _t(lib, [0.1, 0.2, 0.3]))
        ops = k + 1  # the sins and the product
        assert race.counts["forward"] == {"passes": 3, "values": 3 * ops, "rules": 3 * ops, "evaluations": 6 * ops}
        assert race.counts["reverse"] == {"passes": 3, "values": ops, "rules": 3 * ops, "evaluations": 4 * ops}
        forward_ops = [s for s in race.forward if s.kind == "op"]
        backward_ops = [s for s in race.reverse if s.kind == "op"]
        assert len(forward_ops) == 3 * ops and len(backward_ops) == 3 * ops
        # the running counts grow by one value (and one rule) per op step, never otherwise
        for steps in (race.forward, race.reverse):
            for a, b in zip(steps, steps[1:]):
                grew = b.evaluations - a.evaluations
                assert grew == {"op": 2 if b.side == "forward" else 1, "value": 1}.get(b.kind, 0), (a, b)


def test_tall_goes_to_forward_and_wide_to_reverse(lib):
    tall = viz.forward_vs_reverse(*_tall(lib))
    wide = viz.forward_vs_reverse(*_wide(lib))
    assert (tall.n, tall.m, wide.n, wide.m) == (2, 8, 8, 1)
    assert tall.winner == "forward" and wide.winner == "reverse"
    assert tall.verdict().startswith("Forward mode wins for this tall Jacobian (8×2): 8 op evaluations forward")
    assert wide.verdict().startswith("Reverse mode wins for this wide Jacobian (1×8)")
    assert "1 backward pass after 1 forward pass" in wide.verdict()
    # each side finishes the race when its own passes are done: the winner first
    assert len(tall.forward) < len(tall.reverse) and len(wide.reverse) < len(wide.forward)


def test_steps_walk_the_graph_in_the_right_directions(mg):
    f, x = _wide(mg)
    race = viz.forward_vs_reverse(f, x)
    model = race.graph.model
    title = {n.id: n.title for n in model.nodes}
    first_pass = [title[s.ids[0]] for s in race.forward if s.pass_no == 1]
    assert first_pass == ["x", "TanhBackward0", "MulBackward0", "SumBackward0", "output"]
    backward = [title[s.ids[0]] for s in race.reverse if s.pass_no == 1]
    assert backward == ["output", "SumBackward0", "MulBackward0", "TanhBackward0", "x"]
    values = [title[s.ids[0]] for s in race.reverse if s.pass_no == 0]
    assert values == ["TanhBackward0", "MulBackward0", "SumBackward0"]
    # columns fill forward, rows fill reverse, each at the end of its pass, with the numbers of that line
    fills = [(s.pass_no, s.fill) for s in race.forward if s.fill is not None]
    assert fills == [(k + 1, k) for k in range(8)]
    last = race.reverse[-1]
    assert last.kind == "result" and last.fill == 0 and last.numbers == list(race.jacobian_reverse[0])
    # minigrad keeps the tangent of a node whose output is still alive (the sum's is f's output)
    assert any("tangent -0.4" in s.text for s in race.forward if s.kind == "op")


def test_minigrad_and_pytorch_play_the_same_steps(mg, torch):
    a, b = viz.forward_vs_reverse(*_matrix(mg)), viz.forward_vs_reverse(*_matrix(torch))
    assert a.counts == b.counts and a.summary() == b.summary()
    strip = [(s.pass_no, s.kind, s.ids) for s in a.reverse]
    assert strip == [(s.pass_no, s.kind, s.ids) for s in b.reverse]
    assert [(s.pass_no, s.kind, s.ids) for s in a.forward] == [(s.pass_no, s.kind, s.ids) for s in b.forward]


def test_deterministic_and_nothing_of_the_users_changes(lib):
    f, x = _matrix(lib)
    x.requires_grad_(True)
    before = x.detach().numpy().copy()
    one, two = viz.forward_vs_reverse(f, x), viz.forward_vs_reverse(f, x)
    assert json.dumps(one.payload()) == json.dumps(two.payload())
    assert one.summary() == two.summary() == repr(two)
    assert x.grad is None and x.requires_grad and np.array_equal(x.detach().numpy(), before)
    summary = one.summary().splitlines()  # six ops: sin, mul, sum, exp, mean, add
    assert summary[0] == "Jacobian of f at x: 3 outputs × 6 inputs"
    assert summary[1] == ("forward mode (jacfwd): 6 passes (one per input), 72 op evaluations "
                          "(36 values + 36 tangent rules)")
    assert summary[2] == ("reverse mode (jacrev): 1 forward pass + 3 backward passes (one per output), "
                          "24 op evaluations (6 values + 18 backward rules)")


def test_bad_input_gets_a_clear_error(mg):
    x = _t(mg, [1.0, 2.0])
    with pytest.raises(TypeError, match="f must return a tensor"):
        viz.forward_vs_reverse(lambda t: [t], x)
    with pytest.raises(TypeError, match="x must be a tensor"):
        viz.forward_vs_reverse(lambda t: t, [1.0, 2.0])
    with pytest.raises(TypeError, match="floating point"):
        viz.forward_vs_reverse(lambda t: t * 2, mg.tensor([1, 2]))
    with pytest.raises(ValueError, match="does not depend on x"):
        viz.forward_vs_reverse(lambda t: mg.ones(3), x)
    with pytest.raises(ValueError, match=f"at most {MAX_PASSES}"):
        viz.forward_vs_reverse(lambda t: t.sin(), mg.zeros(MAX_PASSES + 1, dtype=mg.float64))
    flips = iter([False, True])

    def branchy(t):
        return t.sin() if next(flips) else t.cos().exp()

    with pytest.raises(ValueError, match="ran different ops"):
        viz.forward_vs_reverse(branchy, x)


def test_page_and_bundle(mg, tmp_path):
    race = viz.forward_vs_reverse(*_tall(mg), title="<script>alert(1)</script> & co")
    assert isinstance(race, ForwardVsReverse)
    path = race.save_html(tmp_path / "race.html")
    text = path.read_text(encoding="utf-8")
    # the title is text in the heading, and inside the page's JSON it cannot close the script element
    assert "<script>alert(1)</script>" not in text and "<h1>&lt;script&gt;alert(1)&lt;/script&gt; &amp; co</h1>" in text
    assert not re.search(r"(src|href)\s*=\s*\\?[\"']?\s*https?:|url\(\s*[\"']?https?:|@import", text)
    assert text.count("export default") == 0 and "__mgModule" in text
    with pytest.raises(ValueError, match="needs a .html path"):
        race.save_html(tmp_path / "race.txt")
    # the still picture (where widgets cannot run): the verdict, the counts and the Jacobian above the graph
    dot = race.still_dot()
    assert "Forward mode wins for this tall Jacobian (8×2):" in dot and "18 op evaluations" in dot
    assert dot.count("<TD>y[") == 8 and "-0.4923" in dot
    again = viz.forward_vs_reverse(*_tall(mg), title="<script>alert(1)</script> & co")
    assert again.png().data == race.png().data  # deterministic bytes
    data, meta = race._repr_mimebundle_()
    assert data["text/plain"] == race.summary()
    assert data["image/png"] and meta["image/png"]["width"] == race.png().width
    assert "application/vnd.jupyter.widget-view+json" in data
    race.frame = 5
    assert race.widget.frame == race.frame == 5 and race.widget.data == race.payload()
    race.frame = 10_000  # past the end: the last step
    assert race.frame == race.num_steps - 1 == len(race.reverse) - 1
    race.close()
    assert race.frame == race.num_steps - 1 and '"frame":33' in race.save_html(tmp_path / "end.html").read_text()


def _mlp(lib):
    """A 3-4-2 tanh MLP of nn.Linear layers: its weights' transposes run in every pass but carry no tangent."""
    l1, l2 = lib.nn.Linear(3, 4).double(), lib.nn.Linear(4, 2).double()
    with lib.no_grad():
        l1.weight.copy_(_t(lib, np.linspace(-1, 1, 12).reshape(4, 3)))
        l1.bias.copy_(_t(lib, [0.1, -0.2, 0.3, 0.0]))
        l2.weight.copy_(_t(lib, np.linspace(-1, 1, 8).reshape(2, 4)))
        l2.bias.zero_()
    return (lambda x: l2(l1(x).tanh())), _t(lib, [0.1, 0.2, 0.3]), (l1, l2)


def test_a_model_counts_alike_in_both_libraries(mg, torch):
    races, weights = {}, {}
    for lib in (mg, torch):
        f, x, layers = _mlp(lib)
        races[lib.__name__] = viz.forward_vs_reverse(f, x)
        weights[lib.__name__] = [p.grad for layer in layers for p in layer.parameters()]
    a, b = races["minigrad"], races["torch"]
    assert a.counts == b.counts and a.summary() == b.summary()
    f, x, _ = _mlp(torch)
    np.testing.assert_allclose(a.jacobian_forward, torch.func.jacfwd(f)(x).detach().numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.jacobian_reverse, torch.func.jacrev(f)(x).detach().numpy(), rtol=1e-9, atol=1e-12)
    c = a.counts["forward"]
    # every op ran in each of the 3 passes; the two weight transposes (on no path from x) ran no tangent rule
    assert c["values"] - c["rules"] == 3 * 2, c
    no_tangent = {s.text for s in a.forward if "no tangent" in s.text}
    assert no_tangent == {"TBackward0 computes its value (no tangent: not on x's path)"}, no_tangent
    assert all(g is None for grads in weights.values() for g in grads)  # the model's .grad untouched
