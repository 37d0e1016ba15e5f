"""Tensor attributes whose behaviour PyTorch changed over time."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import _creation as creation
from minigrad import _stacklevel


def test_T_reverses_every_dim_through_permute_as_pytorch(torch):
    for dims in [(3,), (2, 3, 4), ()]:
        data = np.arange(int(np.prod(dims)), dtype=np.float64).reshape(dims)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = torch.tensor(data, requires_grad=True).T
            m = mg.tensor(data, requires_grad=True).T
        assert tuple(m.shape) == tuple(t.shape)
        assert type(m.grad_fn).__name__ == type(t.grad_fn).__name__ == "PermuteBackward0"
        np.testing.assert_array_equal(m.detach().numpy(), t.detach().numpy())


def test_T_warns_once_when_not_a_matrix(monkeypatch):
    monkeypatch.setattr(_stacklevel, "_GIVEN", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mg.ones(2, 2).T
        mg.ones(3).T
        mg.ones(3).T
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and "`x.T` on tensors of dimension other than 2" in messages[0]
    assert caught[0].filename == __file__  # points at the learner's line, not into minigrad


# -- tensor(nested lists): the dtype and values PyTorch gives -----------------------------------------------------
_numbers = st.one_of(st.booleans(), st.integers(-(2 ** 40), 2 ** 40),
                     st.floats(allow_nan=True, allow_infinity=True, width=64))


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.lists(_numbers, max_size=5),
                 st.integers(0, 3).flatmap(lambda n: st.lists(st.lists(_numbers, min_size=n, max_size=n), max_size=4)),
                 st.lists(st.lists(st.lists(_numbers, min_size=2, max_size=2), min_size=1, max_size=2), max_size=3),
                 st.lists(st.one_of(_numbers, st.lists(_numbers, max_size=2), st.tuples(_numbers)), max_size=3)))
def test_tensor_of_nested_python_numbers_matches_torch(torch, data):
    """Lists of Python numbers, and lists of such rows (read without a Python-level walk), and what the walk reads
    (deeper nesting, ragged rows): the same dtype, shape and values as torch, or the same error."""
    try:
        want = torch.tensor(data)
    except (ValueError, TypeError) as e:
        with pytest.raises(type(e)) as got:
            mg.tensor(data)
        assert str(got.value) == str(e)
        return
    got = mg.tensor(data)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_tensor_of_a_makemore_sized_dataset_reads_its_rows_at_numpy_speed():
    """200,000 rows of 3 ints (makemore's X): the rows' types are read in C (the per-element walk took 0.75 s)."""
    rows = [[i % 27, i * 7 % 27, i * 3 % 27] for i in range(200_000)]
    assert creation._number_types(rows) == {int}
    assert mg.tensor(rows).dtype is mg.int64
    assert creation._number_types([[1, 2], [mg.tensor(3.0), 4]]) is None  # a tensor inside: the walk
