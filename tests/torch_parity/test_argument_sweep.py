"""Issue 34, sweep 2: odd arguments. Every creation function given float, negative, huge and bool sizes, and every
op of one tensor in the registry given int64, bool, 0-d and empty tensors: the same outcome as PyTorch 2.13 (a
result of the same dtype and shape, or an exception of the same type), and never a NumPy exception (its
message would name arrays, not tensors)."""

from __future__ import annotations

import warnings

import pytest

import minigrad
from minigrad.ops.registry import REGISTRY

SIZES = ["2.5", "(2.5,)", "(2, 2.5)", "2, 2.5", "-1", "(-1, 2)", "2**63", "10**12", "True", "0", "(0, 3)",
         "t.tensor(2)", "t.tensor(2.5)", "(2, True)", "None", "'3'"]
CREATORS = ["t.zeros({})", "t.ones({})", "t.empty({})", "t.rand({})", "t.randn({})", "t.full(({},), 1.0)",
            "t.randint(0, 5, ({},))", "t.randperm({})", "t.eye({})", "t.arange({})", "t.linspace(0, 1, {})"]


def _outcome(lib, code: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = eval(code, {"t": lib})
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            return ("raises", type(e).__name__, str(e).split("\n", 1)[0])
    if isinstance(r, lib.Tensor):
        return ("tensor", str(r.dtype).rsplit(".", 1)[-1], tuple(r.shape))
    return ("value", type(r).__name__)


def _same(want, got) -> bool:
    if want[0] == "raises" and got[0] == "raises":
        return want[1] == got[1]
    return want == got


def _no_numpy(got) -> None:
    assert not (got[0] == "raises" and any(w in got[2] for w in ("array", "numpy", "ndarray", "axis"))), got


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("creator", CREATORS)
def test_creation_functions_with_odd_sizes(torch, creator, size):
    code = creator.format(size)
    want, got = _outcome(torch, code), _outcome(minigrad, code)
    _no_numpy(got)
    assert _same(want, got), f"{code}: torch {want}, minigrad {got}"


ONE_TENSOR = sorted(key for key, op in REGISTRY.items() if op.public and op.namespace in ("", "nn.functional")
                    and op.samples and len(op.samples[0].tensors) == 1 and not op.samples[0].args
                    and not op.samples[0].kwargs)
INPUTS = {"int64": "t.tensor([[1, -2, 3]])", "bool": "t.tensor([[True, False, True]])", "0-d": "t.tensor(1.5)",
          "0-d int": "t.tensor(3)", "empty": "t.zeros(0, 3)", "empty int": "t.zeros(0, 3, dtype=t.int64)"}


@pytest.mark.parametrize("inp", sorted(INPUTS))
@pytest.mark.parametrize("key", ONE_TENSOR)
def test_ops_of_one_tensor_with_odd_tensors(torch, key, inp):
    op = REGISTRY[key]

    def code(lib) -> str:
        where = "t" if op.namespace == "" else "t.nn.functional"
        return f"{where}.{op.name}({INPUTS[inp]})"

    want, got = _outcome(torch, code(torch)), _outcome(minigrad, code(minigrad))
    _no_numpy(got)
    assert _same(want, got), f"{code(minigrad)}: torch {want}, minigrad {got}"


def test_bitwise_not_of_a_float_tensor(torch):
    """The function reaches the kernel (NotImplementedError); the `~` operator refuses first (TypeError)."""
    for lib in (torch, minigrad):
        with pytest.raises(NotImplementedError, match="\"bitwise_not_cpu\" not implemented for 'Float'"):
            lib.bitwise_not(lib.tensor(1.0))
        with pytest.raises(TypeError, match=r"~ \(operator.invert\) is only implemented on integer and Boolean"):
            ~lib.tensor([1.0])
