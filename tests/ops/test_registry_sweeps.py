"""Every declared op, swept from the registry: against PyTorch (float64 and float32), and its first and
second derivatives against finite differences. A new op is covered by its declaration alone; an op
without samples must be listed in NOT_SWEPT with the reason and the tests that cover it instead."""

from __future__ import annotations

import numpy as np
import pytest
import sweeps

import minigrad
from minigrad.ops import PYTHON_METHODS, xp
from minigrad.ops.recording import record, rule
from minigrad.ops.registry import REGISTRY, Sample, declare

# Public ops the sweep cannot call from (shape, domain) samples, and where they are tested instead.
NOT_SWEPT = {
    "gather": "its index argument comes after `dim`: test_parity_ops.py (gather cases)",
    "scatter_add": "its index argument comes after `dim`: test_parity_ops.py",
    "scatter": "its index argument comes after `dim`: test_parity_ops.py (scatter cases), test_gradcheck_ops.py",
    "view_as": "shapes tied to another tensor: test_parity_ops.py", "reshape_as": "as view_as",
    "expand_as": "as view_as", "type_as": "as view_as",
    "to": "its argument is a dtype or device: test_tensor.py, test_parity_ops.py (casts)",
    "float": "a cast: test_parity_ops.py", "double": "a cast", "half": "a cast", "long": "a cast", "int": "a cast",
    "bool": "a cast", "byte": "a cast: tests/torch_parity/test_census_names_more.py", "short": "a cast",
    "bincount": "integer counts without a derivative: tests/torch_parity/test_census_names_more.py",
    "uniform_": "random values: tests/nn/test_init.py", "normal_": "random values: tests/nn/test_init.py",
    "random_": "random values: tests/torch_parity/test_census_names.py",
    "einsum": "its first argument is the equation; one EinsumBackward node where PyTorch records the ops it is "
              "made of: tests/torch_parity/test_census_names.py (values, gradients, gradgradcheck)",
    "__setitem__": "a key and a value: test_parity_ops.py (setitem cases)",
    "floor_divide": "integer results without a derivative: test_parity_ops.py (floordiv cases)",
}


def _cases(keep) -> list:
    return [pytest.param(op, s, id=f"{key}-{i}") for key, op in REGISTRY.items() if op.public
            for i, s in enumerate(op.samples) if keep(op, s)]


ALL = _cases(lambda op, s: True)
DIFFERENTIABLE = _cases(lambda op, s: op.differentiable and any(d not in ("int", "bool", "index", "const")
                                                                for _, d in s.tensors))
SECOND_ORDER = _cases(lambda op, s: op.differentiable and s.second_order and any(
    d not in ("int", "bool", "index", "const") for _, d in s.tensors))


@pytest.mark.parametrize(("op", "sample"), ALL)
def test_parity_float64(parity, op, sample):
    sweeps.check_parity(parity, op, sample)


@pytest.mark.parametrize(("op", "sample"), ALL)
def test_parity_float32(parity, op, sample):
    sweeps.check_float32(parity, op, sample)


@pytest.mark.parametrize(("op", "sample"), DIFFERENTIABLE)
def test_gradcheck(op, sample):
    sweeps.check_gradcheck(op, sample)


@pytest.mark.parametrize(("op", "sample"), SECOND_ORDER)
def test_gradgradcheck(op, sample):
    sweeps.check_gradgradcheck(op, sample)


def test_every_public_op_is_swept_or_says_why():
    unswept = sorted(key for key, op in REGISTRY.items() if op.public and not op.samples)
    assert unswept == sorted(NOT_SWEPT), "declare samples for the op, or list it in NOT_SWEPT with a reason"


def _own(fn):
    """The op's own function behind its forward-AD-aware wrapper (ops/dual.py), which Tensor gets only while a
    dual level is active."""
    return fn.forward_of[0] if hasattr(fn, "forward_of") else fn


def test_every_public_name_is_the_declared_function():
    """The registry is what minigrad exposes: minigrad.<name> and nn.functional.<name> (wrapped by `overridable`),
    Tensor.<name>, Tensor.<name>_, operators (the op's own function; under a dual level, the declared forward-aware
    one; a binary operator behind the wrapper that gives way to the other operand's `__torch_function__`)."""
    for op in REGISTRY.values():
        if not op.public:
            continue
        for name in (op.name, *op.aliases):
            if op.namespace == "":  # the declared function behind the override protocol's check
                assert getattr(minigrad, name).__wrapped__ is op.named(name), name
            if op.namespace == "nn.functional":  # behind the override protocol's check too
                assert getattr(minigrad.nn.functional, name).__wrapped__ is op.named(name), name
            if op.method or op.namespace == "Tensor":
                method = getattr(minigrad.Tensor, name)
                if name in PYTHON_METHODS:  # the same code, named `Tensor.<name>` as PyTorch's Python methods are
                    assert method.__wrapped__ is _own(op.named(name)) and method.__qualname__ == f"Tensor.{name}", name
                else:
                    assert method is _own(op.named(name)), name
            if op.inplace is not None:
                assert getattr(minigrad.Tensor, name + "_") is _own(op.inplace), name
        for name, fn in op.operators.items():  # a binary operator gives way to the other operand's override
            got = getattr(minigrad.Tensor, name)
            assert got is _own(fn) or got.__wrapped__ is _own(fn), name
    assert "atan" in dir(minigrad) and "atan" in dir(minigrad.Tensor) and "softplus" in dir(minigrad.nn.functional)


def test_under_a_dual_level_tensor_methods_are_the_declared_functions():
    with minigrad.autograd.forward_ad.dual_level():
        for op in REGISTRY.values():
            if not op.public or not (op.method or op.namespace == "Tensor"):
                continue
            for name in (op.name, *op.aliases):
                if name not in PYTHON_METHODS:
                    assert getattr(minigrad.Tensor, name) is op.named(name), name
                if op.inplace is not None:
                    assert getattr(minigrad.Tensor, name + "_") is op.inplace, name
            for name, fn in op.operators.items():  # (a binary operator behind the __torch_function__ wrapper)
                got = getattr(minigrad.Tensor, name)
                assert got is fn or got.__wrapped__ is fn, name
    assert minigrad.Tensor.exp is _own(REGISTRY["exp"].function)  # and the ops' own again once it exits


def test_every_declared_node_has_its_rule_text_and_input_names():
    for op in REGISTRY.values():
        for node in op.nodes:
            assert node._text and node._inputs, node.__name__


# -- an op declared here is covered by the same checks, with no list to edit ------------------------------------
CubeBackward0 = rule("CubeBackward0", "self", saves="self", text="grad_self = 3 * grad * self²",
                     self=lambda grad, self: 3 * grad * self * self)


def _cube(self):
    res = self._data ** 3
    if self.requires_grad and minigrad.is_grad_enabled():
        return record(CubeBackward0, res, (self,))
    return minigrad.from_numpy(res)


CUBE = declare("pow", lambda self, exponent: _cube(self), nodes=(CubeBackward0,), register=False,
               samples=(Sample((((3, 4), "real"),), (3,)),))


def test_an_op_declared_inside_a_test_is_swept(parity):
    """`x ** 3` written as a new op (its own node): PyTorch computes pow(x, 3), so values, gradients and second
    derivatives must agree; the graph's node name is the new op's own."""
    (sample,) = CUBE.samples
    sweeps.check_gradcheck(CUBE, sample)
    sweeps.check_gradgradcheck(CUBE, sample)
    with pytest.raises(AssertionError, match="CubeBackward0"):  # the sweep compares node names with PyTorch's
        sweeps.check_parity(parity, CUBE, sample)
    x = minigrad.tensor(np.array([1.0, -2.0]), requires_grad=True)
    assert xp.is_t(CUBE.call(minigrad, x, 3)) and type(CUBE.call(minigrad, x, 3).grad_fn) is CubeBackward0
