"""vmap's `chunk_size`, as torch.func: the batch runs in pieces of chunk_size samples (the function is called once
per piece), and the outputs are joined along their out_dims."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad


def _run(lib, x, w, chunk_size, in_dim, out_dim):
    calls = []

    def f(v, u):
        calls.append(tuple(v.shape))
        return (v.sin() * u).sum(0), v * 2

    t = lib.func.vmap(f, in_dims=(in_dim, None), out_dims=(0, out_dim), chunk_size=chunk_size)
    a, b = t(lib.tensor(x), lib.tensor(w))
    return a.numpy(), b.numpy(), len(calls)


@settings(max_examples=12, deadline=None)
@given(batch=st.integers(1, 7), chunk=st.integers(1, 8), in_dim=st.integers(0, 1), out_dim=st.integers(0, 2),
       seed=st.integers(0, 2**16))
def test_chunks_as_torch(torch, batch, chunk, in_dim, out_dim, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 3, 2) if in_dim == 0 else (3, batch, 2))
    w = rng.standard_normal((3, 2))
    got, want = _run(minigrad, x, w, chunk, in_dim, out_dim), _run(torch, x, w, chunk, in_dim, out_dim)
    assert got[2] == want[2] == -(-batch // chunk)  # one call per chunk
    for g, t in zip(got[:2], want[:2]):
        assert g.shape == t.shape
        np.testing.assert_allclose(g, t, rtol=1e-9, atol=1e-12)


def test_per_sample_gradients_in_chunks(torch):
    x = np.random.default_rng(3).standard_normal((9, 4))
    got, want = (lib.func.vmap(lib.func.grad(lambda v, lib=lib: (v.tanh() ** 2).sum()), chunk_size=4)(lib.tensor(x))
                 for lib in (minigrad, torch))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-12)
