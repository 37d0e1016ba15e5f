"""The training loop's fast paths against PyTorch: mm through `np.dot` or `np.matmul` by size (forward and
backward, for transposed and strided operands) and a bias's gradient summed by a BLAS product with ones."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg


def _mm_case(m, dtype, a_np, b_np, transpose_a: bool):
    a = m.tensor(a_np, dtype=dtype, requires_grad=True)
    b = m.tensor(b_np, dtype=dtype, requires_grad=True)
    lhs = a.t() if transpose_a else a
    out = lhs @ b[:, ::2]  # a strided (non-contiguous) right operand
    seed = m.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape), dtype=dtype)
    out.backward(seed)
    return out.detach().numpy(), a.grad.numpy(), b.grad.numpy(), out.grad_fn.name()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transpose_a", [False, True])
def test_mm_fast_path_matches_pytorch(torch, dtype, transpose_a):
    rng = np.random.default_rng(3)
    a_np = rng.standard_normal((6, 5) if transpose_a else (5, 6))
    b_np = rng.standard_normal((6, 8))
    got = _mm_case(mg, getattr(mg, dtype), a_np, b_np, transpose_a)
    want = _mm_case(torch, getattr(torch, dtype), a_np, b_np, transpose_a)
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert got[3] == want[3] == "MmBackward0"
    for g, w in zip(got[:3], want[:3]):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("k", [40, 70])  # 40x40x40 products call np.dot, 70x70x70 np.matmul (xp.dot2d)
def test_mm_both_blas_calls_match_pytorch(torch, transpose_a, k):
    rng = np.random.default_rng(5)
    a_np = rng.standard_normal((k, k))
    b_np = rng.standard_normal((k, 2 * k))
    a_np[2, 2], b_np[2, 0] = np.inf, 0.0  # 0 * inf: nan in the product and in b's gradient, as in PyTorch
    got = _mm_case(mg, mg.float64, a_np, b_np, transpose_a)
    want = _mm_case(torch, torch.float64, a_np, b_np, transpose_a)
    assert np.isnan(got[0]).any() and np.isnan(got[2]).any() == np.isnan(want[2]).any()
    for g, w in zip(got[:3], want[:3]):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


def _bias_case(m, dtype, g_np):
    x = m.zeros(g_np.shape, dtype=dtype, requires_grad=True)
    b = m.zeros(g_np.shape[1:], dtype=dtype, requires_grad=True)
    (x + b).backward(m.tensor(g_np, dtype=dtype))
    return b.grad.numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(32, 32), (257, 3), (4, 1), (1, 5)])
def test_bias_gradient_sum_matches_pytorch(torch, dtype, shape):
    rng = np.random.default_rng(4)
    g_np = rng.standard_normal(shape)
    got = _bias_case(mg, getattr(mg, dtype), g_np)
    want = _bias_case(torch, getattr(torch, dtype), g_np)
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_bias_gradient_keeps_nonfinite_and_zero_sign(torch):
    g_np = np.array([[np.inf, np.nan, -0.0, 1.0], [1.0, 2.0, -0.0, -np.inf]])
    got, want = _bias_case(mg, mg.float64, g_np), _bias_case(torch, torch.float64, g_np)
    np.testing.assert_array_equal(got, want)
    assert np.signbit(got).tolist() == np.signbit(want).tolist()
