"""cumprod against PyTorch 2.13: values and dtypes (integers and bools give int64; float32 multiplies in double),
errors, the node and what it saves, and the plain backward with zeros (PyTorch's O(n) masked formula). Its
create_graph backward with zeros and prod's are compared node for node in test_second_order_graphs.py."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg

INPUTS = {
    "float64": np.array([[1.5, -0.5, 2.0], [0.25, 3.0, -1.0]]),
    "float32": np.array([0.5, 1.5, -2.0, 3.0], dtype=np.float32),
    "float32_wide": np.array([1e30, 1e30, 0.0], dtype=np.float32),  # inf in float32, 0 in double at the end
    "float16": np.linspace(0.5, 1.5, 12, dtype=np.float16).reshape(3, 4),
    "int32": np.array([2, -3, 4], dtype=np.int32),
    "int64_wraps": np.array([2 ** 62, 4, 3]),
    "bool": np.array([True, True, False, True]),
    "minus_zero": np.array([-0.0, 1.0, -2.0]),
    "inf_nan": np.array([np.inf, 0.0, 2.0, np.nan, 1.0]),
    "0d": np.array(2.5),
    "empty": np.zeros((0, 3)),
}


@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("name", list(INPUTS))
def test_values_and_dtypes(torch, name, dim):
    def run(lib):
        out = lib.cumprod(lib.tensor(INPUTS[name]), dim)
        return out.numpy(), str(out.dtype).split(".")[-1]

    (got, got_dtype), (want, want_dtype) = run(mg), run(torch)
    assert got_dtype == want_dtype
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_allclose(got, want, rtol=1e-9 if got.dtype == np.float64 else 1e-6)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_dtype_argument_and_method(torch, dtype):
    def run(lib):
        x = lib.tensor(np.array([[2, 3], [4, 5]], dtype=np.int32))
        a, b = lib.cumprod(x, 1, dtype=getattr(lib, dtype)), x.cumprod(dim=0, dtype=getattr(lib, dtype))
        return [(t.numpy(), str(t.dtype).split(".")[-1]) for t in (a, b)]

    for (got, got_dtype), (want, want_dtype) in zip(run(mg), run(torch)):
        assert got_dtype == want_dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("shape", "dim"), [((2, 3), 2), ((2, 3), -3), ((), 1), ((), -2)])
def test_dim_out_of_range(torch, shape, dim):
    def run(lib):
        with pytest.raises(IndexError) as info:
            lib.cumprod(lib.ones(shape), dim)
        return str(info.value)

    assert run(mg) == run(torch)


def test_node_and_saved_values(torch):
    def run(lib):
        x = lib.tensor(np.array([[2.0, 0.0, 3.0], [1.0, 4.0, 5.0]]), requires_grad=True)
        node = x.cumprod(1).grad_fn
        return node.name(), node._saved_dim, node._saved_self.detach().numpy(), node._saved_result.detach().numpy()

    got, want = run(mg), run(torch)
    assert got[:2] == want[:2]
    for a, b in zip(got[2:], want[2:]):
        np.testing.assert_array_equal(a, b)
    assert "cumprod" in dir(mg) and "cumprod" in dir(mg.Tensor)


ZEROS = {
    "none": [1.5, -2.0, 0.5, 3.0],
    "one": [1.5, 0.0, 0.5, 3.0],
    "first": [0.0, 1.5, -2.0, 3.0],
    "last": [1.5, -2.0, 3.0, 0.0],
    "two": [1.5, 0.0, -2.0, 0.0, 3.0],
    "adjacent": [1.5, 0.0, 0.0, 2.0],
    "all": [0.0, 0.0, 0.0],
    "alone": [0.0],
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(ZEROS))
def test_gradient_with_zeros(torch, name, dtype):
    def run(lib):
        x = lib.tensor(np.array(ZEROS[name], dtype=dtype), requires_grad=True)
        y = x.cumprod(0)
        y.backward(lib.tensor(np.linspace(-1.0, 2.0, y.numel()).astype(dtype)))
        return x.grad.numpy()

    got, want = run(mg), run(torch)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-9 if dtype == "float64" else 1e-5, atol=1e-12)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_gradient_with_zeros_along_every_dim(torch, dim):
    """Slices with no zero, one, two and three side by side: the masks of the O(n) formula work per slice."""
    values = np.random.default_rng(dim % 3).uniform(-2.0, 2.0, (3, 4, 5))
    values[np.random.default_rng(7).random(values.shape) < 0.3] = 0.0
    upstream = np.random.default_rng(1).standard_normal(values.shape)

    def run(lib):
        x = lib.tensor(values, requires_grad=True)
        x.cumprod(dim).backward(lib.tensor(upstream))
        return x.grad.numpy()

    np.testing.assert_allclose(run(mg), run(torch), rtol=1e-9, atol=1e-12)


def test_gradient_with_a_dtype_argument(torch):
    """PyTorch's formula takes grad.to(self.scalar_type()): the gradient of a float32 input is float32."""
    def run(lib):
        x = lib.tensor(np.array([1.5, 0.0, -2.0], dtype=np.float32), requires_grad=True)
        lib.cumprod(x, 0, dtype=lib.float64).backward(lib.tensor(np.array([1.0, 2.0, 3.0])))
        return x.grad.numpy()

    got, want = run(mg), run(torch)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)
