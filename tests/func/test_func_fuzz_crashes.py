"""Crashes of minigrad.func that the fuzzer's transform mode found (issue 27), each compared with torch.func:

- jacrev of a function whose output does not depend on the differentiated input (seed 100 programs 62, 208): the
  Jacobian is zeros of shape (out shape, in shape); minigrad took the unbatched output's rows for a batch of
  cotangents and crashed reshaping them ("shape '[3, 4]' is invalid for input of size 144").
- vmap of `flip` with its dims in one sequence (`x.flip((0, 2))`): the batching rule shifted the tuple as one dim;
- an op along dim 0 or -1 of a 0-d sample (vmap, jacrev): the dim was shifted past the batch dims, out of range;
- index_fill under vmap: it ran as an elementwise op ("Index has to be a vector/scalar"); its dim is now shifted;
- a plain tensor's method given a batched argument under vmap or jacrev (`w.mv(x)`): it now gives way to the
  batching rules;
- max/min of two tensors under a transform: the rule along a dim took the other tensor for the dim;
- x.mT of a 0-d or 1-d sample: the batch dim was swapped (a crash, or a wrong shape);
- matmul of a batched operand with a plain one of more dims: the batch dims met the plain one's own;
- movedim of a 0-d sample: its dim was shifted past the batch dims;
- abs(x) (Python's builtin) of a batched dual tensor: the plain op, no tangent (a wrong Jacobian, not a crash).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad

RNG = np.random.default_rng(27)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((2, 3))
C = RNG.standard_normal((3, 2, 4, 5))


def _close(got, want):
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-9, atol=1e-12)


def _independent(lib, argnums):
    def f(x, y):
        x.exp()  # computed, but not part of the output
        return y.cumprod(0)

    return lib.func.jacrev(f, argnums=argnums)(lib.tensor(0.5, dtype=lib.float64), lib.tensor(A))


def _mixed(lib):
    def f(x, y):
        return y.sum(0), x * y[0, 0]

    return lib.func.jacrev(f, argnums=(0, 1))(lib.tensor(B[0]), lib.tensor(A))


@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_jacrev_of_an_output_independent_of_the_input(torch, argnums):
    got, want = _independent(minigrad, argnums), _independent(torch, argnums)
    for g, w in zip(*(t if isinstance(t, tuple) else (t,) for t in (got, want))):
        _close(g, w)


def test_jacrev_of_outputs_one_independent_of_an_input(torch):
    got, want = _mixed(minigrad), _mixed(torch)
    for g_out, w_out in zip(got, want):
        for g, w in zip(g_out, w_out):
            _close(g, w)


def _flipped(lib, dims):
    return lib.func.vmap(lambda x: x.flip(dims) * 2, in_dims=1)(lib.tensor(C))


@pytest.mark.parametrize("dims", [(0,), (0, 2), [1], (-1, 0)])
def test_vmap_of_flip_with_dims_in_one_sequence(torch, dims):
    """flip(x, (0, 2)) gives `*dims` one tuple (seed 100 programs 68, 333): '<=' not supported ... 'tuple'."""
    _close(_flipped(minigrad, dims), _flipped(torch, dims))


def _of_a_scalar(lib, name, how):
    def f(x):
        return getattr(lib, name)((x * x).sum(), -1)  # along dim -1 of a 0-d tensor

    x = lib.tensor(C[0, 0])
    return lib.func.vmap(f)(x) if how == "vmap" else lib.func.jacrev(f)(x[0])


@pytest.mark.parametrize("how", ["vmap", "jacrev"])
@pytest.mark.parametrize("name", ["sum", "prod", "softmax", "log_softmax", "cumsum", "mean"])
def test_an_op_along_dim_minus_one_of_a_0d_sample(torch, name, how):
    """A reduction or softmax along dim -1 of a 0-d sample (seed 100 programs 114, 127, 164): the rule shifted the
    dim past the batch dims, one too far ("Dimension out of range")."""
    _close(_of_a_scalar(minigrad, name, how), _of_a_scalar(torch, name, how))


def _index_filled(lib, dim, inplace, value):
    index = lib.tensor(np.array([0, 2]))

    def f(x):
        y = x * 1
        v = value if isinstance(value, float) else lib.tensor(value)
        return y.index_fill_(dim, index, v) if inplace else y.index_fill(dim, index, v)

    return lib.func.vmap(f, in_dims=1)(lib.tensor(C))


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("value", [-1.5, np.array(2.5)])
def test_vmap_of_index_fill(torch, dim, inplace, value):
    """index_fill under vmap (seed 100 programs with 'Index has to be a vector/scalar'): it ran as an elementwise op,
    its index given the batch dims."""
    _close(_index_filled(minigrad, dim, inplace, value), _index_filled(torch, dim, inplace, value))


def _plain_method_of_a_batched(lib, name, how):
    w = lib.tensor(A)
    calls = {"mv": lambda x: w.mv(x[:4]), "type_as": lambda x: w.type_as(x) * x[0], "outer": lambda x: w[0].outer(x),
             "expand_as": lambda x: w[0, :1].expand_as(x) * x, "clamp": lambda x: w[0, 0].clamp(min=x),
             "addcmul": lambda x: w[0].addcmul(x[:4], x[1:])}
    f = calls[name]
    x = lib.tensor(C[0, 0])
    return lib.func.vmap(f)(x) if how == "vmap" else lib.func.jacfwd(f)(x[0]) if how == "jacfwd" else \
        lib.func.jacrev(f)(x[0])


# (under jacrev too: its private level swaps only the methods that can take a tensor; it crashed there, transform
# seed 1100 programs 89, 161, 491, 615, 996)
PLAIN_CASES = [(name, how) for name in ["mv", "type_as", "outer", "expand_as", "clamp", "addcmul"]
               for how in ("vmap", "jacrev")]


@pytest.mark.parametrize(("name", "how"), PLAIN_CASES)
def test_a_plain_tensors_method_given_a_batched_argument(torch, name, how):
    """`w.mv(x)` with `w` a plain tensor and `x` batched (seed 100 programs 83, 131, 302, 314, 353): the method ran
    on the BatchedTensor as on a Tensor ("'BatchedTensor' object has no attribute '_data'", "unsupported operand
    type: BatchedTensor"); under vmap it now gives way to the batching rules, as PyTorch's methods do."""
    _close(_plain_method_of_a_batched(minigrad, name, how), _plain_method_of_a_batched(torch, name, how))


@pytest.mark.parametrize("how", ["vmap", "jacrev", "jacfwd"])
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_and_min_of_two_tensors(torch, name, how):
    """`torch.min(x, other)` under a transform (seed 1100 programs 204, 769): the rule of max/min along a dim took
    `other` for the dim ("Boolean value of Tensor with more than one value is ambiguous"), or looped with the
    performance warning; it is maximum/minimum, elementwise (a tie shares the gradient, as PyTorch's)."""
    def run(lib):
        x, other = lib.tensor(A[:2]), lib.tensor(np.array([[A[0, 1]], [0.0]]))  # (a tie at [0, 1])
        f = lambda a, b: getattr(lib, name)(a, b)  # noqa: E731
        if how == "vmap":
            return lib.func.vmap(f, in_dims=(1, None))(x, other[:, 0])
        return getattr(lib.func, how)(f, argnums=(0, 1))(x, other)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = run(minigrad)
    assert not [w for w in caught if "performance drop" in str(w.message)]  # (PyTorch has a rule: no loop)
    want = run(torch)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,),
                    strict=True):
        _close(g, w)


@pytest.mark.parametrize(("shape", "how"), [((3,), "vmap"), ((), "jacfwd"), ((), "jacrev"), ((3, 2, 4), "vmap"),
                                            ((3, 2), "vmap")])
def test_mT_of_a_sample(torch, shape, how):
    """x.mT of a 0-d sample is the sample (with PyTorch's deprecation warning, once; jacfwd: "Dimension out of range",
    seed 1101 program 320); of a 1-d sample refused as for a 1-d tensor (it swapped the batch dim: a wrong
    shape, silently); of matrices their transposes."""
    def run(lib):
        x = lib.tensor(C.reshape(-1)[:int(np.prod(shape))].reshape(shape))
        try:
            return getattr(lib.func, how)(lambda a: a.mT * 2)(x), None
        except RuntimeError as error:
            return None, str(error)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the 0-d warning is given once per process, in both libraries)
        (got, got_error), (want, want_error) = run(minigrad), run(torch)
    assert got_error == want_error
    if want is not None:
        _close(got, want)


@pytest.mark.parametrize("how", ["vmap", "jacfwd", "jacrev"])
@pytest.mark.parametrize("plain_first", [True, False])
def test_matmul_with_a_plain_operand_of_more_dims(torch, how, plain_first):
    """`a @ x` with `a` a plain (2, 1, 3) tensor and `x` a batched matrix (seed 1102 program 969): the batch dims
    were broadcast against the plain operand's own ("The size of tensor a (2) must match the size of tensor b");
    the batched operand is padded to the plain one's rank, so its batch dims stay in front."""
    def run(lib):
        plain = lib.tensor(C[0, :, :1, :3] if plain_first else C[0, :, :3, :1])
        f = (lambda x: lib.matmul(plain, x)) if plain_first else (lambda x: lib.matmul(x, plain))
        shape = (3, 1) if plain_first else (1, 3)
        if how == "vmap":
            return lib.func.vmap(f)(lib.tensor(C.reshape(-1)[:12].reshape((4,) + shape)))
        return getattr(lib.func, how)(f)(lib.tensor(A.reshape(-1)[:3].reshape(shape)))

    _close(run(minigrad), run(torch))


@pytest.mark.parametrize("how", ["vmap", "jacrev", "jacfwd"])
@pytest.mark.parametrize(("source", "destination"), [(-1, 0), (0, -1), ((0,), (0,))])
def test_movedim_of_a_0d_sample(torch, how, source, destination):
    """movedim(-1, 0) of a 0-d sample is the sample (seed 1103 program 73: the dim was shifted past the batch dims,
    out of range: "Dimension out of range (expected to be in range of [-1, 0], but got 1)")."""
    def run(lib):
        f = lambda a: (a * 3).movedim(source, destination)  # noqa: E731
        x = lib.tensor(A[0])
        return lib.func.vmap(f)(x) if how == "vmap" else getattr(lib.func, how)(f)(x[0])

    _close(run(minigrad), run(torch))


@pytest.mark.parametrize("how", ["jacfwd", "vmap of jvp"])
def test_builtin_abs_of_a_batched_dual_tensor(torch, how):
    """`abs(x)` (Python's builtin, Tensor.__abs__) under jacfwd (seed 1104 program 946): the batched tensor's
    __abs__ was the plain op, which carries no tangent: a zero Jacobian."""
    def run(lib):
        x = lib.tensor(A[:2, :3])
        if how == "jacfwd":
            return lib.func.jacfwd(lambda a: abs(a) * 2)(x)
        return lib.func.vmap(lambda a, t: lib.func.jvp(lambda b: abs(b), (a,), (t,))[1])(x, lib.tensor(B))

    _close(run(minigrad), run(torch))
