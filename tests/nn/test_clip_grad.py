"""nn.utils.clip_grad_norm_, clip_grad_value_, parameters_to_vector and vector_to_parameters against PyTorch 2.13:
the total norm returned, the gradients after clipping (and their version counters), the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minigrad

RNG = np.random.default_rng(21)
SHAPES = [(3, 4), (5,), (2, 2, 2)]


def _params(lib, dtype, scale):
    params = []
    for shape in SHAPES:
        p = lib.tensor(RNG.standard_normal(shape).astype(dtype), requires_grad=True)
        p.grad = lib.tensor((RNG.standard_normal(shape) * scale).astype(dtype))
        params.append(p)
    return params


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, "inf"])
@pytest.mark.parametrize("scale", [0.01, 10.0], ids=["below max_norm", "above max_norm"])
def test_clip_grad_norm_matches_torch(torch, dtype, norm_type, scale):
    state = RNG.bit_generator.state
    tp = _params(torch, dtype, scale)
    RNG.bit_generator.state = state
    mp = _params(minigrad, dtype, scale)
    t_total = torch.nn.utils.clip_grad_norm_(tp, 1.5, norm_type=norm_type)
    m_total = minigrad.nn.utils.clip_grad_norm_(mp, 1.5, norm_type=norm_type)
    rtol = 1e-12 if dtype == "float64" else 1e-6
    assert str(m_total.dtype).split(".")[-1] == str(t_total.dtype).split(".")[-1] and m_total.dim() == 0
    np.testing.assert_allclose(m_total.numpy(), t_total.numpy(), rtol=rtol)
    assert m_total.grad_fn is None and not m_total.requires_grad
    for t, m in zip(tp, mp):
        np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=0)
        assert m.grad._version == t.grad._version


def test_clip_grad_norm_of_one_tensor_and_of_no_gradients(torch):
    for lib in (torch, minigrad):
        p = lib.ones(3, requires_grad=True)
        assert lib.nn.utils.clip_grad_norm_([p], 1.0).item() == 0.0
        p.grad = lib.full((3,), 2.0)
        total = lib.nn.utils.clip_grad_norm_(p, 1.0)
        assert abs(total.item() - math.sqrt(12)) < 1e-6 and abs(p.grad.norm().item() - 1.0) < 1e-5


def test_clip_grad_norm_nonfinite_error_matches_torch(torch):
    errors = []
    for lib in (torch, minigrad):
        p = lib.ones(2, requires_grad=True)
        p.grad = lib.tensor([1.0, float("inf")])
        with pytest.raises(RuntimeError) as info:
            lib.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_clip_grad_value_matches_torch(torch):
    state = RNG.bit_generator.state
    tp = _params(torch, "float64", 3.0)
    RNG.bit_generator.state = state
    mp = _params(minigrad, "float64", 3.0)
    assert torch.nn.utils.clip_grad_value_(tp, 0.5) is None and minigrad.nn.utils.clip_grad_value_(mp, 0.5) is None
    for t, m in zip(tp, mp):
        np.testing.assert_array_equal(m.grad.numpy(), t.grad.numpy())


def test_parameters_to_vector_and_back_match_torch(torch):
    results = []
    for lib in (torch, minigrad):
        model = lib.nn.Linear(3, 2)
        with lib.no_grad():
            model.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3)))
            model.bias.copy_(lib.tensor([7.0, 8.0]))
        vec = lib.nn.utils.parameters_to_vector(model.parameters())
        lib.nn.utils.vector_to_parameters(vec.detach() * 2, model.parameters())
        results.append((vec.detach().numpy(), type(vec.grad_fn).__name__, model.weight.detach().numpy(),
                        model.bias.detach().numpy()))
    (tv, tn, tw, tb), (mv, mn, mw, mb) = results
    np.testing.assert_array_equal(mv, tv)
    np.testing.assert_array_equal(mw, tw)
    np.testing.assert_array_equal(mb, tb)
    assert mn == tn
