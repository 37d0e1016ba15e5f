"""Disagreements with torch.func that the fuzzer's transform mode found on seeds 2100-2101 (issue 27), each a
differential test against torch 2.13 that failed before its fix:

- a float32 convolution / conv_transpose with a bias (or weight) of another dtype: minigrad added the bias in the
  input's dtype (seed 2100 programs 498, 639 under vjp and jacrev; 2101 programs 201, 608 under vmap). PyTorch's
  CPU convolution takes its oneDNN kernel for a float32 input with a batch over one (which vmap and the
  Jacobians' batched passes make), groups, a kernel over 3x3 or a large input, and that kernel refuses the other
  dtype ("Input type (torch.FloatTensor) and bias type (torch.DoubleTensor) should be the same or input should be
  a MKLDNN tensor and bias is a dense tensor"); a batch of one still adds it. A plain-op gap, so it holds under
  every transform.
- the mean mse_loss / smooth_l1_loss of an empty input under a batched backward (jacrev, vmap(grad), hessian):
  Python's ZeroDivisionError from PyTorch's decomposition (program 336);
- binary_cross_entropy_with_logits of a bool or integer input inside any transform: the decomposition's errors
  (program 49);
- max()/min()/argmax()/argmin() of empty samples under jacfwd: the plain op's error (program 916);
- `.T` of a batched 0-d, 1-d or 3-d sample: PyTorch's warnings, under vmap and jacfwd too.
And plain-op gaps beside them (issue 34: no NumPy error reaching a learner): topk(k=0) of a 0-d tensor,
F.unfold / F.fold of unbatched input and their other shapes.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import minigrad


def _outcome(lib, run):
    """What `run(lib)` gives: its dtype and values, or its exception type and text (legacy names unprefixed)."""
    try:
        out = run(lib)
    except Exception as e:  # noqa: BLE001 (the outcome compared is the exception)
        return type(e).__name__, str(e).replace("torch.", "").replace("minigrad.", "")
    return str(out.dtype).split(".")[-1], out.detach().numpy().tolist()


def _same_outcome(torch, minigrad, run) -> tuple:
    """Both libraries raise the same exception with the same text, or return the same numbers; torch's outcome."""
    got, want = _outcome(minigrad, run), _outcome(torch, run)
    assert got[0] == want[0]
    if isinstance(want[1], str):
        assert got[1] == want[1]
    else:
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
    return want


F32, F64 = np.float32, np.float64
CASES = [  # (input shape, weight shape, groups, transposed, input / weight / bias dtypes)
    ((2, 2, 4, 4), (2, 2, 2, 2), 1, False, (F32, F32, F64)),  # batch over one: oneDNN refuses the bias
    ((1, 2, 4, 4), (2, 2, 2, 2), 1, False, (F32, F32, F64)),  # batch of one: the native kernel adds it
    ((1, 1, 5, 5), (2, 1, 4, 4), 1, False, (F32, F32, F64)),  # a kernel over 3x3: oneDNN
    ((1, 4, 3, 3), (2, 2, 2, 2), 2, False, (F32, F32, np.float16)),  # groups: oneDNN
    ((2, 2, 4, 4), (2, 2, 2, 2), 1, True, (F32, F32, F64)),  # transposed too
    ((2, 2, 5), (2, 2, 2), 1, False, (F32, F32, np.int64)),  # 1-d: a 2-d convolution of height 1
    ((2, 2, 5), (2, 2, 2), 1, True, (F32, F32, F64)),
    ((2, 2, 3, 3, 3), (2, 2, 2, 2, 2), 1, False, (F32, F32, F64)),  # 3-d
    ((2, 2, 4, 4), (2, 2, 2, 2), 1, False, (F32, F64, None)),  # the weight, in oneDNN's words
    ((1, 2, 4, 4), (2, 2, 2, 2), 1, False, (F32, F64, None)),  # ... and the native kernel's
    ((2, 2, 4, 4), (2, 2, 2, 2), 1, False, (F64, F32, F32)),  # float64 never takes oneDNN
    ((2, 2, 4, 4), (2, 2, 2, 2), 1, False, (F64, F64, F32)),
]


@pytest.mark.parametrize("xs, ws, groups, transposed, dtypes", CASES)
def test_convolution_refuses_other_dtypes_where_onednn_runs(xs, ws, groups, transposed, dtypes):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(xs).astype(dtypes[0]), rng.standard_normal(ws).astype(dtypes[1])
    out_channels = ws[1] * groups if transposed else ws[0]
    b = None if dtypes[2] is None else np.arange(out_channels).astype(dtypes[2])
    s = len(xs) - 2

    def run(lib):
        bias = None if b is None else lib.tensor(b)
        return lib.convolution(lib.tensor(x), lib.tensor(w), bias, (1,) * s, (0,) * s, (1,) * s, transposed,
                               (0,) * s, groups)

    _same_outcome(torch, minigrad, run)


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("transform", ["vmap", "jacrev", "jacfwd", "vjp"])
def test_conv_transpose1d_bias_of_another_dtype_under_transforms(transform, batch):
    """Seed 2100 program 639 / 2101 program 201: vmap folds its batch into N, so even samples of a batch of one
    take oneDNN; jacrev's and jacfwd's Jacobians see the sample's own batch (PyTorch runs its primal plain)."""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, batch, 2, 4)).astype(F32), rng.standard_normal((2, 3, 2)).astype(F32)
    b = np.array([0.5, -1.4, 0.2])

    def run(lib):
        f = lambda a: lib.nn.functional.conv_transpose1d(a, lib.tensor(w), lib.tensor(b), stride=2)  # noqa: E731
        if transform == "vmap":
            return lib.func.vmap(f)(lib.tensor(x))
        if transform in ("jacrev", "jacfwd"):
            return getattr(lib.func, transform)(f)(lib.tensor(x[0]))
        out, pull = lib.func.vjp(f, lib.tensor(x[0]))
        return pull(lib.ones_like(out))[0]

    want = _same_outcome(torch, minigrad, run)
    assert (want[0] == "RuntimeError") == (transform == "vmap" or batch > 1)


def _same(run, rtol=1e-9, atol=1e-12):
    """minigrad's outcome of `run` is torch's: the dtype and values, or the exception type and text."""
    got, want = _outcome(minigrad, run), _outcome(torch, run)
    assert got[0] == want[0], (got, want)
    if isinstance(want[1], str):
        assert got[1] == want[1]
    else:
        np.testing.assert_allclose(got[1], want[1], rtol=rtol, atol=atol)


@pytest.mark.parametrize("k", [0, 1, 2])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_of_a_0d_tensor(k, largest):
    """k=0 of a 0-d tensor gives its element and index 0, as k=1 does (NumPy's reshape error leaked before); k=2
    is out of range. The values carry a gradient back to the element."""
    def run(lib):
        x = lib.tensor(2.5, dtype=lib.float64, requires_grad=True)
        values, indices = lib.topk(x, k, largest=largest)
        (grad,) = lib.autograd.grad(values * 3, x)
        return lib.stack([values.detach(), indices.to(lib.float64), grad])
    _same(run)


@pytest.mark.parametrize("transform", ["plain", "vmap", "jacrev", "jacfwd"])
def test_unfold_and_fold_of_unbatched_input(transform):
    """F.unfold takes an unbatched (C, H, W) and F.fold a (C * kH * kW, L), as PyTorch's; vmap folds such samples
    into the batch N."""
    rng = np.random.default_rng(2)
    img, cols = rng.standard_normal((3, 2, 4, 4)), rng.standard_normal((3, 8, 9))

    def run(lib):
        F = lib.nn.functional
        f = lambda a, b: F.unfold(a, 2, padding=1, stride=2).sum() * 0 + F.unfold(a, 2) * 1.5  # noqa: E731
        g = lambda b: F.fold(b, (4, 4), 2)  # noqa: E731
        a, b = lib.tensor(img), lib.tensor(cols)
        if transform == "plain":
            return lib.cat([f(a[0], None).flatten(), g(b[0]).flatten()])
        if transform == "vmap":
            return lib.cat([lib.func.vmap(f)(a, b).flatten(), lib.func.vmap(g)(b).flatten()])
        jac = getattr(lib.func, transform)
        return lib.cat([jac(lambda t: f(t, None))(a[0]).flatten(), jac(g)(b[0]).flatten()])
    _same(run)


@pytest.mark.parametrize("fn, shape", [("unfold", ()), ("unfold", (4,)), ("unfold", (4, 4)), ("unfold", (0, 4, 4)),
                                       ("unfold", (1, 1, 1, 4, 4)), ("unfold", (0, 2, 4, 4)), ("fold", (8,)),
                                       ("fold", (0, 9)), ("fold", (8, 10)), ("fold", (7, 9)), ("fold", (0, 8, 9)),
                                       ("fold", (1, 1, 8, 9))])
def test_unfold_and_fold_refuse_other_shapes_in_pytorchs_words(fn, shape):
    """Other ranks and sizes: PyTorch's exception types and texts (NumPy's reshape error leaked for fold's)."""
    x = np.ones(shape)
    _same(lambda lib: lib.nn.functional.unfold(lib.tensor(x), 2) if fn == "unfold"
          else lib.nn.functional.fold(lib.tensor(x), (4, 4), 2))


@pytest.mark.parametrize("dtype", ["bool", "int64", "int32"])
@pytest.mark.parametrize("transform", ["plain", "requires_grad", "vjp", "grad", "jacrev", "jacfwd", "vmap"])
def test_bce_with_logits_of_a_bool_or_integer_input(transform, dtype):
    """Seed 2100 program 49: a bool input is refused by the log_sigmoid kernel in plain code, but inside any
    torch.func transform (even one its tensors are not part of) PyTorch runs the decomposition, which negates it
    ("Negation, the `-` operator, on a bool tensor is not supported") or writes a float into an integer input."""
    raw = np.array([1, 0]).astype(dtype)

    def run(lib):
        F = lib.nn.functional
        f = lambda a: F.binary_cross_entropy_with_logits(lib.tensor(raw), lib.tensor([0.5, 0.1])) + a  # noqa: E731
        a = lib.tensor(1.0, dtype=lib.float64, requires_grad=transform == "requires_grad")
        if transform in ("plain", "requires_grad"):
            return f(a)
        if transform == "vmap":
            return lib.func.vmap(f)(lib.ones(2, dtype=lib.float64))
        if transform == "vjp":
            return lib.func.vjp(f, a)[0]
        return getattr(lib.func, transform)(f)(a)
    _same(run, rtol=1e-6, atol=1e-7)


EMPTY_MEAN = ["jacrev", "vmap_grad", "jacfwd_jacrev", "hessian", "grad", "vjp", "jacfwd", "vmap", "sum", "const",
              "broadcast"]


@pytest.mark.parametrize("loss", ["mse_loss", "smooth_l1_loss"])
@pytest.mark.parametrize("how", EMPTY_MEAN)
def test_mean_loss_of_an_empty_input_differentiated_by_a_batched_backward(how, loss):
    """Seed 2100 program 336: the mean mse_loss of no elements is nan, its gradient empty, except where PyTorch's
    backward runs batched (jacrev, vmap(grad), hessian): its decomposition's `2.0 / input.numel()` raises Python's
    ZeroDivisionError. A sum, a loss of constants, jacfwd, grad, vjp and vmap alone are unaffected."""
    def run(lib):
        F = getattr(lib.nn.functional, loss)
        e, batch = lib.zeros(0, dtype=lib.float64), lib.zeros(2, 0, dtype=lib.float64)
        f = lambda a, b: F(a, b, reduction="sum" if how == "sum" else "mean")  # noqa: E731
        fn = lib.func
        if how in ("jacrev", "sum", "jacfwd"):
            return getattr(fn, "jacfwd" if how == "jacfwd" else "jacrev")(f)(e, e)
        if how == "vmap_grad":
            return fn.vmap(fn.grad(f))(batch, batch)
        if how in ("jacfwd_jacrev", "hessian"):
            return (fn.hessian(f) if how == "hessian" else fn.jacfwd(fn.jacrev(f)))(e, e)
        if how == "grad":
            return fn.grad(f)(e, e)
        if how == "vjp":
            out, pull = fn.vjp(f, e, e)
            return pull(lib.ones_like(out))[0]
        if how == "vmap":
            return fn.vmap(f)(batch, batch)
        if how == "const":
            return fn.jacrev(lambda a: f(e, e) + a)(lib.tensor(1.0, dtype=lib.float64))
        with warnings.catch_warnings():  # (the sizes differ: PyTorch's broadcast warning, in both)
            warnings.simplefilter("ignore")
            return fn.jacrev(lambda a, b: f(b, a))(e, lib.tensor(0.0, dtype=lib.float64))
    _same(run)


@pytest.mark.parametrize("op", ["min", "max", "argmin", "argmax"])
@pytest.mark.parametrize("how", ["plain", "jacfwd", "jacfwd_two", "jacrev", "vmap", "vmap_jacfwd", "vmap_jacrev"])
def test_min_of_an_empty_tensor_under_transforms(how, op):
    """Seed 2100 program 916: `x.min()` of an empty x under jacfwd is the plain op's error (PyTorch runs jacfwd's
    forward unbatched), with or without other inputs widening the batch; under the user's vmap, its rule's
    IndexError about dim 1. minigrad's reshape of the empty batch failed ("shape '[0, -1]' is invalid")."""
    def run(lib):
        e, batch = lib.zeros(0, dtype=lib.float64), lib.zeros(2, 0, dtype=lib.float64)
        g = lambda a, b=None: getattr(a, op)().to(lib.float64) + (0 if b is None else b)  # noqa: E731
        fn = lib.func
        if how == "plain":
            return g(e)
        if how == "jacfwd_two":
            return fn.jacfwd(g, argnums=(0, 1))(e, lib.tensor(0.0, dtype=lib.float64))[1]
        if how in ("jacfwd", "jacrev"):
            return getattr(fn, how)(g)(e)
        if how == "vmap":
            return fn.vmap(g)(batch)
        return fn.vmap(getattr(fn, how.split("_")[1])(g))(batch)
    _same(run)


@pytest.fixture
def warn_always():
    """Both libraries warn every time (PyTorch's `.T` warnings come once per process otherwise)."""
    before = torch.is_warn_always_enabled(), minigrad.is_warn_always_enabled()
    torch.set_warn_always(True)
    minigrad.set_warn_always(True)
    yield
    torch.set_warn_always(before[0])
    minigrad.set_warn_always(before[1])


def _warnings(lib, how: str, shape: tuple) -> list:
    """The UserWarnings of `.T` on samples of `shape` under the transform `how` ('vmap_jacfwd': nested)."""
    f = lambda a: a.T * 2  # noqa: E731
    fn = lib.func
    for name in reversed(how.split("_")):
        f = f if name == "plain" else getattr(fn, name)(f)
    x = lib.ones((3,) * how.split("_").count("vmap") + shape, dtype=lib.float64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f(x)
    return sorted({str(w.message).split(".")[0] for w in caught if w.category is UserWarning})


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 2)])
@pytest.mark.parametrize("how", ["plain", "vmap", "jacfwd", "jacrev", "vmap_jacfwd", "vmap_jacrev", "vmap_grad",
                                 "vmap_vmap", "jacfwd_jacfwd"])
def test_dot_T_warns_on_samples_not_2d_under_transforms(warn_always, how, shape):
    """`.T` of a 0-d sample warns "Tensor.T is deprecated on 0-D tensors", of a 1-d or 3-d one "The use of `x.T` on
    tensors of dimension other than 2", under vmap and jacfwd too (their batched samples are not tensors of that
    rank in minigrad: its rule reversed the dims silently). grad needs a 0-d output."""
    if how == "vmap_grad" and shape:
        shape = ()
    assert _warnings(minigrad, how, shape) == _warnings(torch, how, shape)
