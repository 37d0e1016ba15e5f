"""Errors and warnings that torch.func gives and minigrad's transforms did not (the fuzzer's transform mode, fresh
seeds 1200-1202), each a differential test against torch 2.13 that failed before its fix:

- batch_norm / layer_norm with parameters or running statistics of another dtype: PyTorch's CPU kernels refuse
  them ("mixed dtype (CPU): ...", "expected scalar type ..."), under every transform and outside them; minigrad
  promoted silently (seed 1200 programs 17, 597, 705, 854);
- F.conv1d / F.conv2d with a bias of another dtype: "Input type (float) and bias type (double) should be the same"
  (seed 1200 programs 465, 805);
- vmap of batch_norm in training with running statistics that are not batched: PyTorch refuses to write a batch
  of statistics into them (seed 1200 program 435); and batch_norm has a batching rule in PyTorch: no performance
  warning.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad

RNG = np.random.default_rng(1200)
X = RNG.normal(size=(4, 3))
HOWS = ("plain", "jvp", "vjp", "jacrev", "jacfwd")


def _apply(lib, how, f, x):
    if how == "plain":
        return f(x)
    if how == "jvp":
        return lib.func.jvp(f, (x,), (x,))
    if how == "vjp":
        out, pull = lib.func.vjp(f, x)
        return pull(out)
    if how == "vmap":
        return lib.func.vmap(f)(x.unsqueeze(0).expand(2, *x.shape))
    return getattr(lib.func, how)(f)(x)


def _raised(lib, how, make_f, x):
    """(exception type, first line) that `how` of make_f(lib) gives at x, read with minigrad's prefix."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            _apply(lib, how, make_f(lib), lib.tensor(x))
        except Exception as e:  # noqa: BLE001 (compared with PyTorch's below)
            return type(e).__name__, str(e).splitlines()[0].replace("torch.", "minigrad.")
    return None


def _dtype(lib, code: str):
    return {"16": lib.float16, "32": lib.float32, "64": lib.float64}[code]


# input, weight/bias, running statistics: each first-given-parameter case of PyTorch's mixed-dtype check
NORM_CASES = [("64", "-", "32"), ("32", "-", "64"), ("32", "64", "32"), ("64", "32", "64"), ("32", "32", "64"),
              ("16", "64", "32"), ("32", "32", "32")]


def _batch_norm(xd, wd, sd, training):
    def make(lib):
        w = None if wd == "-" else lib.ones(3, dtype=_dtype(lib, wd))
        b = None if wd == "-" else lib.zeros(3, dtype=_dtype(lib, wd))
        return lambda x: lib.nn.functional.batch_norm(
            x.to(_dtype(lib, xd)), lib.zeros(3, dtype=_dtype(lib, sd)), lib.ones(3, dtype=_dtype(lib, sd)), w, b,
            training=training)
    return make


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("case", NORM_CASES)
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_of_mixed_dtypes(torch, how, case, training):
    if case[0] == "16" and how != "plain":
        return  # (float16 input with float32 parameters is allowed; its transforms are compared elsewhere)
    make = _batch_norm(*case, training)
    want = _raised(torch, how, make, X)
    assert _raised(minigrad, how, make, X) == want
    assert (want is None) == (case == ("32", "32", "32"))


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("case", [("64", "32", "32"), ("64", "32", "-"), ("32", "64", "-"), ("32", "32", "64"),
                                  ("64", "64", "32"), ("32", "-", "64"), ("64", "64", "64")])
def test_layer_norm_of_mixed_dtypes(torch, how, case):
    xd, wd, bd = case

    def make(lib):
        w = None if wd == "-" else lib.ones(3, dtype=_dtype(lib, wd))
        b = None if bd == "-" else lib.zeros(3, dtype=_dtype(lib, bd))
        return lambda x: lib.nn.functional.layer_norm(x.to(_dtype(lib, xd)), (3,), w, b)

    want = _raised(torch, how, make, X)
    assert _raised(minigrad, how, make, X) == want
    assert (want is None) == (case == ("64", "64", "64"))


@pytest.mark.parametrize("stats", ["unbatched", "none"])
def test_vmap_of_batch_norm_training(torch, stats):
    """Running statistics not batched, written in place with a batch of statistics: refused; without them each
    sample is normalized on its own, with no performance warning (PyTorch has a batching rule)."""
    def run(lib):
        rm, rv = (lib.zeros(3), lib.ones(3)) if stats == "unbatched" else (None, None)
        f = (lambda x: lib.nn.functional.batch_norm(x, rm, rv, training=True))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = lib.func.vmap(f)(lib.tensor(np.stack([X, 2 * X + 1])))
            except RuntimeError as e:
                return str(e), [str(w.message) for w in caught]
        return out.detach().numpy(), [str(w.message) for w in caught]

    (got, got_w), (want, want_w) = run(minigrad), run(torch)
    assert got_w == want_w == []
    if stats == "unbatched":
        assert got == want and want.startswith("Batch norm got a batched tensor as input while the running_mean")
    else:
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_jacrev_of_batch_norm_with_running_statistics_is_no_batch(torch):
    """jacrev's and jacfwd's private batches are not the user's: not refused. (The running statistics' values
    after it are the gradient owner's: minigrad updates them once per private copy.)"""
    def run(lib, how):
        rm, rv = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        return getattr(lib.func, how)(lambda x: lib.nn.functional.batch_norm(x, rm, rv, training=True))(
            lib.tensor(X)).numpy()

    for how in ("jacrev", "jacfwd"):
        np.testing.assert_allclose(run(minigrad, how), run(torch, how), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("how", [*HOWS, "vmap"])
@pytest.mark.parametrize("name", ["conv1d", "conv2d"])
@pytest.mark.parametrize("bias", ["float64", "int64", "float16"])
def test_conv_with_a_bias_of_another_dtype(torch, how, name, bias):
    spatial = (2,) if name == "conv1d" else (2, 2)
    x = RNG.normal(size=(1, 3, *spatial)).astype(np.float32)

    def make(lib):
        w = lib.ones(4, 3, *(1,) * len(spatial))
        b = lib.zeros(4, dtype=getattr(lib, bias))
        return lambda x: getattr(lib.nn.functional, name)(x, w, b)

    want = _raised(torch, how, make, x)
    assert _raised(minigrad, how, make, x) == want
    cpp = {"float64": "double", "int64": "long int", "float16": "c10::Half"}[bias]
    assert want[1].startswith(f"Input type (float) and bias type ({cpp})")


def _messages(lib, run) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(lib)
    return [f"{w.category.__name__}: {w.message}".replace("torch.", "minigrad.").split(" (Triggered internally")[0]
            for w in caught if w.category is not DeprecationWarning]  # (torch.func's lazy imports: jit.script)


WARNING_CASES = {
    "var": lambda lib, how: getattr(lib.func, how)(lambda a: a.var(0) + a)(lib.tensor(np.array(0.5))),
    "std": lambda lib, how: getattr(lib.func, how)(lambda a: a.std() * a)(lib.tensor(np.array([0.5]))),
    "mse_loss": lambda lib, how: getattr(lib.func, how)(
        lambda a: lib.nn.functional.mse_loss(lib.ones(3, dtype=lib.float64), a))(lib.tensor(np.array([0.5]))),
    "l1_loss": lambda lib, how: getattr(lib.func, how)(
        lambda a: lib.nn.functional.l1_loss(a, lib.ones(2, 1, dtype=lib.float64)))(lib.tensor(np.array([0.5, 1.5]))),
}


@pytest.mark.parametrize("how", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("case", list(WARNING_CASES))
def test_a_warning_of_the_function_is_given_once(torch, case, how):
    """jacrev ran the function twice (for the outputs' shapes, then on its batch of copies) and gave its warnings
    twice (seed 1200 programs 81, 151, 838, 929, 949); PyTorch's runs it once."""
    run = (lambda lib: WARNING_CASES[case](lib, how))
    want = _messages(torch, run)
    assert _messages(minigrad, run) == want and len(want) == 1


def _always(lib, run) -> list:
    """The warnings of run(lib) under set_warn_always(True): a warn-once message given by an earlier test too."""
    lib.set_warn_always(True)
    try:
        return _messages(lib, run)
    finally:
        lib.set_warn_always(False)


@pytest.mark.parametrize("shape", [(2, 3), (2,), (2, 3, 4)])
def test_mT_of_a_sample_that_is_no_matrix(torch, shape):
    """vmap of x.mT on 1-D samples: refused as outside vmap; 0-d ones are the identity with the
    deprecation warning (the batch made the physical value a matrix;
    seed 1200 programs 131, 434)."""
    def run(lib):
        try:
            return lib.func.vmap(lambda a: a.mT)(lib.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape)))
        except RuntimeError as e:
            return str(e)

    got_w, want_w = _always(minigrad, run), _always(torch, run)
    assert got_w == want_w and len(want_w) == (len(shape) == 1)
    got, want = run(minigrad), run(torch)
    if isinstance(want, str):
        assert got == want and "mT is only supported on matrices" in want
    else:
        np.testing.assert_array_equal(got.numpy(), want.numpy())


BADDBMM_SHAPES = [((2, 1, 5), (2, 1, 4), (2, 4, 5)), ((2, 1, 1), (1, 1, 4), (1, 4, 5)), ((5,), (2, 1, 4), (2, 3, 5)),
                  ((7,), (2, 1, 4), (2, 3, 5))]


@pytest.mark.parametrize("how", ["plain", "vjp", "jacrev", "jacfwd"])  # (vmap: its batching rule's own order)
@pytest.mark.parametrize("shapes", BADDBMM_SHAPES)
@pytest.mark.parametrize("dtypes", [("32", "32", "64"), ("64", "64", "32"), ("32", "64", "64"), ("64", "32", "32")])
def test_baddbmm_checks_in_pytorchs_order(torch, how, shapes, dtypes):
    """self's shape, then self's dtype against batch1's, then the batches' sizes, then batch2's dtype (the kernel's
    "expected scalar type"): minigrad checked the sizes first and all three dtypes at once (seed 1201 programs 271,
    475, seed 1202 programs 280, 300, 601)."""
    def make(lib):
        b1, b2 = (lib.zeros(*s, dtype=_dtype(lib, d)) for s, d in zip(shapes[1:], dtypes[1:]))
        return lambda x: lib.baddbmm(x.to(_dtype(lib, dtypes[0])), b1, b2, beta=0.5)

    x = RNG.normal(size=shapes[0])
    want = _raised(torch, how, make, x)
    assert want is not None and _raised(minigrad, how, make, x) == want


CALLS_TWICE = {
    "Tensor.norm": lambda lib, x: x.norm(0, p=1),
    "norm": lambda lib, x: lib.norm(x, 0, p=1),
    "Tensor.sum": lambda lib, x: x.sum(0, dim=1),
    "softmax": lambda lib, x: lib.nn.functional.softmax(x, 0, dim=1),
}


@pytest.mark.parametrize("how", ["vmap", "jacrev", "jacfwd"])
@pytest.mark.parametrize("call", list(CALLS_TWICE))
def test_an_argument_given_twice(torch, call, how):
    """A rule binds the arguments with inspect: its TypeError said "multiple values for argument 'p'" without
    Python's "Tensor.norm() got " (seed 1201 programs 172, 590, seed 1202 program 916)."""
    def make(lib):
        return lambda x: CALLS_TWICE[call](lib, x)

    want = _raised(torch, how, make, X[:2, :2])
    assert want[0] == "TypeError" and _raised(minigrad, how, make, X[:2, :2]) == want


@pytest.mark.parametrize("how", ["vmap", "jacfwd", "jacrev", "vjp", "jvp"])
def test_masked_fill_with_a_tensor_value_warns_as_pytorch_loops(torch, how):
    """PyTorch has no batching rule for masked_fill with a tensor value: under vmap and jacfwd it loops and warns
    (minigrad computes it batched, and said nothing: seed 1200 program 522, seed 1201 programs 125, 275, 307); the
    forward of jacrev runs once, unbatched: no warning."""
    def make(lib):
        return lambda a: lib.masked_fill(a, a < 0, lib.tensor(5.0, dtype=lib.float64))

    def run(lib):
        return _apply(lib, how, make(lib), lib.tensor(X))

    want = _messages(torch, run)
    assert _messages(minigrad, run) == want and len(want) == (how in ("vmap", "jacfwd"))


ON_0D = {
    "split": lambda lib, x, dim: lib.split(x, 1, dim),
    "chunk": lambda lib, x, dim: x.chunk(1, dim),
    "narrow": lambda lib, x, dim: lib.narrow(x, dim, 0, 1),
    "roll": lambda lib, x, dim: lib.roll(x, 1, dim),
    "unbind": lambda lib, x, dim: x.unbind(dim),
}


@pytest.mark.parametrize("how", ["vmap", "jacfwd", "jacrev", "plain"])
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("name", list(ON_0D))
def test_a_dim_op_that_refuses_a_0d_sample(torch, name, dim, how):
    """chunk/split/narrow/roll/unbind of 0-d samples ran along a size-1 dim of their own, as reductions do; PyTorch
    refuses them (under vmap, split/roll/unbind with its rule's out-of-range dim; seed 1200 program 301, seed 1201
    program 541, seed 1202 programs 858, 888). roll of a 0-d tensor gave NumPy's AxisError."""
    def make(lib):
        return lambda x: ON_0D[name](lib, x, dim)[0] if how != "vmap" else ON_0D[name](lib, x, dim)

    want = _raised(torch, how, make, X[0, 0])  # (vmap: a batch of two 0-d samples)
    assert want is not None and _raised(minigrad, how, make, X[0, 0]) == want


@pytest.mark.parametrize("how", ["plain", "vjp", "jacrev", "jacfwd"])
def test_bincount_with_weights_has_no_derivative(torch, how):
    """bincount's weights get PyTorch's NotImplemented node: backward through it raises (minigrad's result did not
    require grad, and vjp gave zeros: seed 1201 program 851, seed 1202 program 970)."""
    def make(lib):
        def f(w):
            out = lib.bincount(lib.tensor([0, 1, 1]), weights=w)
            if how == "plain":
                out.sum().backward()
            return out
        return f

    w = RNG.normal(size=3)
    want = _raised(torch, how, make, w) if how != "plain" else _plain_backward(torch, make, w)
    got = _raised(minigrad, how, make, w) if how != "plain" else _plain_backward(minigrad, make, w)
    assert want is not None and got == want


def _plain_backward(lib, make, w):
    try:
        make(lib)(lib.tensor(w, requires_grad=True))
    except RuntimeError as e:
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("how", ["jacfwd", "jacrev", "vmap", "plain"])
@pytest.mark.parametrize("which", [0, 1])
def test_cat_of_a_0d_tensor(torch, how, which):
    """cat of a 0-d tensor under jacfwd: PyTorch's refusal as outside vmap (its forward runs unbatched), not the
    batch's out-of-range dim, which only the user's vmap gives (seed 1202 programs 24, 571, 929)."""
    def make(lib):
        def f(a):
            s = a.sum()
            return lib.cat([s, a] if which == 0 else [a, s], dim=0)
        return f

    want = _raised(torch, how, make, X[0])
    assert want is not None and _raised(minigrad, how, make, X[0]) == want
