"""Tensor attributes whose behaviour PyTorch changed over time."""

from __future__ import annotations

import warnings

import numpy as np

import minigrad as mg
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
