"""`torch.range` (deprecated, end included) and `torch.real` (of a real tensor: the tensor itself), as PyTorch 2.13:
the last two names of the census's lecture code (tests/teaching_code/CENSUS.md) minigrad lacked."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad

CASES = [(1, 4), (0, 1, 0.3), (5, 1, -2), (0, 1, 0.25), (-2.5, 2.5, 0.5), (2, 2)]
WHOLE = [args for args in CASES if all(float(a).is_integer() for a in args)]  # (torch dies of SIGFPE on
# range(0, 1, 0.3, dtype=torch.int64): the step cast to 0)


def _range(lib, args, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = lib.range(*args, **kw)
    return out, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize(("args", "dtype"), [(a, d) for d in (None, "float64") for a in CASES] +
                         [(a, "int64") for a in WHOLE], ids=str)
def test_range_as_pytorchs(torch, args, dtype):
    mine, my_warnings = _range(minigrad, args, **({"dtype": getattr(minigrad, dtype)} if dtype else {}))
    theirs, their_warnings = _range(torch, args, **({"dtype": getattr(torch, dtype)} if dtype else {}))
    assert str(mine.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert my_warnings == their_warnings and len(my_warnings) == 1
    assert "use torch.arange, which produces values in [start, end)" in my_warnings[0][1]


@pytest.mark.parametrize("args", [(1, 0), (0, 1, 0), (0, -1, 1)], ids=str)
def test_range_errors_as_pytorchs(torch, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError) as theirs:
            torch.range(*args)
        with pytest.raises(RuntimeError) as mine:
            minigrad.range(*args)
    assert str(mine.value) == str(theirs.value)


def test_range_needs_its_end(torch):
    for lib in (minigrad, torch):
        with pytest.raises(TypeError, match="missing 1 required positional argument"):
            lib.range(3)


def test_range_requires_grad_and_python_range_untouched(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = minigrad.range(0, 2, requires_grad=True)
        assert r.requires_grad and r.is_leaf and r.shape == torch.range(0, 2).shape
    assert list(range(3)) == [0, 1, 2]  # the builtin, in a module that imported minigrad's names


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_real_of_a_real_tensor_is_the_tensor(torch, dtype):
    for lib in (minigrad, torch):
        x = lib.tensor([1.5, -2.0]).to(getattr(lib, dtype))
        assert lib.real(x) is x
    with pytest.raises(TypeError, match="must be Tensor"):
        minigrad.real([1.0])
    with pytest.raises(TypeError, match="must be Tensor"):
        torch.real([1.0])
