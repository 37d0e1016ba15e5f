"""The declaration seams an op is written with (ops/recording.py `rule`, ops/elementwise.py `binary`, ops/registry.py
`declare`): a formula several inputs share, Python numbers in formulas, the two-tensor ops' argument checks, and
aliases that name themselves in errors. The ops built with them are swept against torch by
tests/ops/test_registry_sweeps.py; these tests check the seams themselves."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
from minigrad._state import GRAD
from minigrad.ops import xp
from minigrad.ops.recording import record, rule


def test_a_shared_formula_runs_once_and_gives_each_input_its_gradient():
    calls = []

    def both(grad, self, other):
        calls.append(1)
        common = self * self + other * other
        return grad * other / common, grad * self / common

    node = rule("SharedTestBackward0", "self other", saves="self other", text="test", **{"self, other": both})
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    b = mg.tensor([3.0, 4.0], requires_grad=True)
    out = record(node, a._data * b._data, (a, b))
    out.sum().backward()
    assert len(calls) == 1
    np.testing.assert_allclose(a.grad.numpy(), [3 / 10, 4 / 20])
    np.testing.assert_allclose(b.grad.numpy(), [1 / 10, 2 / 20])


def test_a_shared_formula_is_checked_against_what_the_row_saves():
    with pytest.raises(TypeError, match="reads 'other', which the row does not save"):
        rule("SharedBadBackward0", "self other", saves="self", text="test",
             **{"self, other": lambda grad, self, other: (grad, grad)})


def test_a_shared_formula_gives_only_the_gradients_needed():
    """Only `self` requires grad: the shared formula runs (once) and its `other` part is dropped."""
    a = mg.tensor([1.0, -2.0], dtype=mg.float64, requires_grad=True)
    b = mg.tensor([0.5, 3.0], dtype=mg.float64)
    mg.atan2(a, b).sum().backward()
    expected = b.numpy() / (a.detach().numpy() ** 2 + b.numpy() ** 2)
    np.testing.assert_allclose(a.grad.numpy(), expected, rtol=1e-12)
    assert b.grad is None


def _second_order_names(formula):
    node = rule("NumbersTestBackward0", "self", saves="self", text="test", self=formula)
    x = mg.tensor([0.5, 1.5], dtype=mg.float64, requires_grad=True)
    (g,) = mg.autograd.grad(record(node, x._data * 1.0, (x,)).sum(), x, create_graph=True)
    return g, [n.name() for n, _ in g.grad_fn.next_functions if n is not None] + [g.grad_fn.name()]


@pytest.mark.parametrize(("formula", "node", "value"), [
    (lambda grad, self: grad / (self * self + 1), "AddBackward1", lambda x: 1 / (x * x + 1)),
    (lambda grad, self: grad * (2 * self), "MulBackward1", lambda x: 2 * x),
    (lambda grad, self: grad / (self / 4), "DivBackward1", lambda x: 4 / x),
    (lambda grad, self: grad * (self - 0.5), "SubBackward1", lambda x: x - 0.5),
])
def test_python_numbers_in_formulas_take_the_scalar_overloads(formula, node, value):
    """PyTorch's C++ formulas add a number with add(Tensor, Scalar) (AddBackward1); `tensor + 1` in Python records
    AddBackward0. A formula written as the math records the former under create_graph."""
    g, names = _second_order_names(formula)
    assert node in names
    np.testing.assert_allclose(g.detach().numpy(), value(np.array([0.5, 1.5])), rtol=1e-12)
    x = mg.tensor([0.5], dtype=mg.float64, requires_grad=True)
    assert (x + 1).grad_fn.name() == "AddBackward0" and (2 * x).grad_fn.name() == "MulBackward0"


def test_the_formula_state_ends_with_the_formula_even_when_it_raises():
    def broken(grad, self):
        raise ValueError("formula failed")

    node = rule("BrokenTestBackward0", "self", saves="self", text="test", self=broken)
    x = mg.tensor([0.5], requires_grad=True)
    with pytest.raises(ValueError, match="formula failed"):
        mg.autograd.grad(record(node, x._data * 1.0, (x,)).sum(), x, create_graph=True)
    assert GRAD.formula == 0
    assert (x * 2.0).grad_fn.name() == "MulBackward0"


def test_xp_reciprocal_on_arrays_and_tensors():
    np.testing.assert_array_equal(xp.reciprocal(np.array([2.0, 4.0])), [0.5, 0.25])
    assert xp.reciprocal(np.array([2, 4])).dtype == np.float32  # integers: the default float, as the op computes
    t = xp.reciprocal(mg.tensor([2.0], requires_grad=True))
    assert t.grad_fn.name() == "ReciprocalBackward0"



@pytest.mark.parametrize("name", ["atan2", "arctan2", "maximum", "minimum"])
def test_a_two_tensor_op_refuses_a_number_naming_itself_and_the_position(torch, name):
    """PyTorch counts `other` as argument 2 of the function and 1 of the method, and an alias's error names the
    alias."""
    for lib in (mg, torch):
        x = lib.tensor([1.0, 2.0])
        with pytest.raises(TypeError) as function_error:
            getattr(lib, name)(x, 2.0)
        with pytest.raises(TypeError) as method_error:
            getattr(x, name)(2.0)
        if lib is mg:
            ours = (str(function_error.value), str(method_error.value))
        else:
            assert ours == (str(function_error.value), str(method_error.value))
    assert ours[0].startswith(f"{name}(): argument 'other' (position 2)")


def test_an_alias_names_itself_in_pythons_errors(torch):
    messages = []
    for lib in (mg, torch):
        with pytest.raises(TypeError) as error:
            lib.arctan(lib.tensor([1.0]), foo=1)
        messages.append(str(error.value))
    assert messages[0] == messages[1] == "arctan() got an unexpected keyword argument 'foo'"
    assert mg.arctan.__wrapped__ is not mg.atan.__wrapped__


def test_binary_declares_the_function_the_method_the_inplace_method_and_the_aliases(torch):
    for lib in (mg, torch):
        names = [n for n in ("atan2", "arctan2", "maximum") if hasattr(lib, n) and hasattr(lib.Tensor, n)]
        inplace = [n for n in ("atan2_", "arctan2_", "maximum_") if hasattr(lib.Tensor, n)]
        assert (names, inplace) == (["atan2", "arctan2", "maximum"], ["atan2_", "arctan2_"])


def test_an_inplace_two_tensor_op_matches_torch(torch):
    for lib in (mg, torch):
        x = lib.tensor([1.0, -2.0], dtype=lib.float64)
        x.atan2_(lib.tensor([0.5, 0.5], dtype=lib.float64))
        if lib is mg:
            ours = x.numpy().copy()
    np.testing.assert_allclose(ours, x.numpy(), rtol=1e-12)


def test_atan2_gradient_at_the_origin_and_where_the_denominator_underflows(torch):
    """PyTorch masks the reciprocal of self² + other² where it is inf: 0 (and -0.) rather than nan or -inf."""
    grads = []
    for lib in (mg, torch):
        a = lib.tensor([0.0, 1e-170, 0.0, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([0.0, 0.0, 1e-170, 0.0], dtype=lib.float64, requires_grad=True)
        lib.atan2(a, b).sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
    for ours, theirs in zip(*grads):
        np.testing.assert_array_equal(ours, theirs)
        np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs))


def test_contributing_shows_the_declarations_as_the_code_writes_them():
    """CONTRIBUTING.md's examples of adding an op are the real declarations, character for character."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    guide = (root / "CONTRIBUTING.md").read_text()
    source = (root / "minigrad" / "ops" / "elementwise.py").read_text()
    blocks = [b.split("```", 1)[0] for b in guide.split("```python\n")[1:]]
    assert len(blocks) >= 2
    for block in blocks:
        assert block.strip() in source, block


@pytest.mark.parametrize("name", ["hypot", "logaddexp"])
@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("bool", "bool"), ("int64", "float32")])
def test_ops_that_refuse_integers_refuse_them_as_torch_does(torch, name, dtypes):
    outcomes = []
    for lib in (mg, torch):
        a, b = (lib.tensor(np.array([1, 0, 2]).astype(d)) for d in dtypes)
        try:
            outcomes.append(("ok", str(getattr(lib, name)(a, b).dtype).split(".")[-1]))
        except NotImplementedError as e:
            outcomes.append(("error", str(e)))
    assert outcomes[0] == outcomes[1]
