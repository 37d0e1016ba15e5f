"""PyTorch's override protocol on minigrad's top-level functions: a class (not a Tensor) that defines
`__torch_function__` receives the public function, the overriding types (a subclass before its base) and the
arguments; NotImplemented from all of them is a TypeError naming the types."""

from __future__ import annotations

import pytest

import minigrad


def _classes(m, log):
    class Base:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((cls.__name__, func is m.mul, [t.__name__ for t in types]))
            return NotImplemented if cls.__name__ == "Child" else f"{cls.__name__} handled {len(args)}"

    class Child(Base):
        pass

    class Never:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    return Base, Child, Never


def _run(m, case):
    log = []
    Base, Child, Never = _classes(m, log)
    try:
        if case == "base then subclass":
            out = m.mul(Base(), Child())
        elif case == "tensor and override":
            out = m.mul(m.tensor([1.0]), Base())
        elif case == "all NotImplemented":
            out = m.mul(Never(), m.tensor([1.0]))
    except TypeError as e:
        return "TypeError", str(e).replace("torch.", "minigrad.").split("For more information")[0].strip(), log
    return out, log


@pytest.mark.parametrize("case", ["base then subclass", "tensor and override", "all NotImplemented"])
def test_override_protocol_as_pytorch(torch, case):
    assert _run(minigrad, case) == _run(torch, case)


def test_plain_tensors_take_the_plain_path():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    assert type(minigrad.mul(x, 2.0).grad_fn).__name__ == "MulBackward0"


def _operator_run(m, op: str, dtype: str):
    log = []

    class Like:  # a tensor-like class that is not a Tensor
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(([t.__name__ for t in types], [type(a).__name__ for a in args], kwargs or {}))
            return "handled"

    x = m.ones((2, 2), dtype=getattr(m, dtype), requires_grad=dtype == "float64")
    other = Like()
    out = {"+": lambda: x + other, "-": lambda: x - other, "*": lambda: x * other, "/": lambda: x / other,
           "@": lambda: x @ other}[op]()
    return out, log


@pytest.mark.parametrize("dtype", ["float64", "int64"])
@pytest.mark.parametrize("op", ["+", "-", "*", "/", "@"])
def test_operators_with_a_fast_path_give_way_to_the_other_operand(torch, op, dtype):
    """+ - * / and @ try their fast path first on a floating tensor (ops/__init__.py `_operator`); an operand it does
    not take still reaches the other operand's `__torch_function__`, on floating and integer tensors alike."""
    assert _operator_run(minigrad, op, dtype) == _operator_run(torch, op, dtype)
