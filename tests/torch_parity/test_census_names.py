"""Names the teaching-code census found missing (tests/teaching_code/CENSUS.md), each against PyTorch 2.13:
what lecture code does with them beyond the registry sweeps (which cover meshgrid, nonzero, argwhere,
index_fill, xlogy and kl_div's values, gradients and nodes): CPU-only answers, warnings, errors, in place."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad

RNG = np.random.default_rng(28)
LIBS = ("torch", "minigrad")


def _both(torch):
    return (torch, minigrad)


def _error(fn, lib):
    with pytest.raises(Exception) as e:
        fn(lib)
    return type(e.value), str(e.value).split("\n")[0]


def _same_error(torch, fn, phrase):
    t, m = _error(fn, torch), _error(fn, minigrad)
    assert m[0] is t[0] and phrase in t[1] and phrase in m[1], (t, m)


def _names(node, leaves):
    """A graph as nested (node name, inputs), a leaf as its index in `leaves`."""
    if node is None:
        return None
    if type(node).__name__ == "AccumulateGrad":
        return next(i for i, leaf in enumerate(leaves) if leaf is node.variable)
    return type(node).__name__, tuple(_names(n, leaves) for n, _ in node.next_functions)


# -- what a CPU-only PyTorch answers -------------------------------------------------------------------------------
def test_cpu_only_questions_get_torchs_answers(torch):
    for lib in _both(torch):
        assert lib.cuda.is_available() is False
        assert lib.accelerator.is_available() is False and lib.accelerator.current_accelerator() is None
        assert lib.backends.mps.is_available() is False and lib.backends.cudnn.is_available() is False
        assert lib.backends.cudnn.deterministic is False and lib.backends.cudnn.benchmark is False
    assert minigrad.backends.cuda.matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32


def test_cudnn_flags_are_accepted_and_read_back(torch):
    for lib in _both(torch):
        old = lib.backends.cudnn.deterministic, lib.backends.cudnn.benchmark
        try:
            lib.backends.cudnn.deterministic, lib.backends.cudnn.benchmark = True, False
            assert lib.backends.cudnn.deterministic is True and lib.backends.cudnn.benchmark is False
        finally:
            lib.backends.cudnn.deterministic, lib.backends.cudnn.benchmark = old


def test_compiled_model_runs_as_written(torch):
    """torch.compile(model) computes what the model computes; minigrad's is the model itself."""
    x = RNG.standard_normal((2, 3))
    outs = []
    for lib in _both(torch):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            model.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3)))
            model.bias.fill_(0.5)
        compiled = lib.compile(model) if lib is minigrad else model  # (torch's Dynamo is not run in CI)
        outs.append(compiled(lib.tensor(x)).detach().numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12)
    assert minigrad.compile(lambda t: t + 1)(minigrad.tensor(1.0)).item() == 2.0
    square = minigrad.compile(mode="reduce-overhead")(lambda t: t * t)  # the decorator form
    assert square(minigrad.tensor(3.0)).item() == 9.0


def test_torch_functional_module(torch):
    for name in ("meshgrid", "split", "norm"):
        assert getattr(minigrad.functional, name) is getattr(minigrad, name)
        assert getattr(torch.functional, name) is getattr(torch, name)
    with pytest.raises(AttributeError, match="does not implement torch.functional.stft"):
        minigrad.functional.stft  # noqa: B018


# -- meshgrid ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("indexing", [None, "ij", "xy"])
def test_meshgrid_values_layout_graph_and_warning(torch, indexing):
    xs = [RNG.standard_normal(n) for n in (3, 4, 2)]
    res = {}
    for lib in _both(torch):
        ts = [lib.tensor(x, requires_grad=True) for x in xs]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            grids = lib.meshgrid(*ts) if indexing is None else lib.meshgrid(ts, indexing=indexing)
        sum(g.sum() * (i + 1) for i, g in enumerate(grids)).backward()
        res[lib.__name__] = ([g.detach().numpy() for g in grids], [g.stride() for g in grids],
                             [type(g.grad_fn).__name__ for g in grids],
                             [type(g.grad_fn.next_functions[0][0]).__name__ for g in grids],
                             [t.grad.numpy() for t in ts], [str(x.message).split(" (Triggered")[0] for x in w])
    t, m = res["torch"], res["minigrad"]
    for a, b in zip(m[0] + m[4], t[0] + t[4]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert m[1:4] == t[1:4] and m[5] == t[5]


def test_meshgrid_errors(torch):
    _same_error(torch, lambda lib: lib.meshgrid(lib.zeros(2, 2), lib.zeros(3), indexing="ij"),
                "Expected 0D or 1D tensor in the tensor list")
    _same_error(torch, lambda lib: lib.meshgrid(lib.zeros(2), lib.zeros(3), indexing="ab"),
                'indexing must be one of "xy" or "ij", but received: ab')
    _same_error(torch, lambda lib: lib.meshgrid(lib.zeros(2), lib.zeros(3, dtype=lib.float64), indexing="ij"),
                "meshgrid expects all tensors to have the same dtype")
    _same_error(torch, lambda lib: lib.meshgrid([], indexing="ij"), "expects a non-empty TensorList")


# -- nonzero -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("data", [5, 0, [1, 0, 2], [[0.5, 0.0], [0.0, -3.0]], [[True, False, True]]],
                         ids=["0d", "0d-zero", "1d", "2d", "bool"])
def test_nonzero_and_argwhere(torch, data):
    for as_tuple in (False, True):
        t = torch.nonzero(torch.tensor(data), as_tuple=as_tuple)
        m = minigrad.nonzero(minigrad.tensor(data), as_tuple=as_tuple)
        if as_tuple:
            assert len(m) == len(t)
            assert all(a.tolist() == b.tolist() and a.dtype == minigrad.int64 for a, b in zip(m, t))
        else:
            assert m.shape == t.shape and m.tolist() == t.tolist() and m.dtype == minigrad.int64
    assert minigrad.tensor(data).argwhere().tolist() == torch.tensor(data).argwhere().tolist()


# -- index_fill, index_fill_ -------------------------------------------------------------------------------------
def test_index_fill_with_a_tensor_value_and_in_place(torch):
    x, v = RNG.standard_normal((3, 4)), 0.7
    res = {}
    for lib in _both(torch):
        a = lib.tensor(x, requires_grad=True)
        value = lib.tensor(v, requires_grad=True)
        idx = lib.tensor([2, 0, 2])
        y = a * 1
        y.index_fill_(1, idx, value)
        out = y.index_fill(0, lib.tensor([1]), -1.0)
        (out * lib.tensor(np.arange(12.0).reshape(3, 4))).sum().backward()
        res[lib.__name__] = (out.detach().numpy(), a.grad.numpy(), value.grad.numpy(), type(y.grad_fn).__name__,
                             type(out.grad_fn).__name__, y._version)
    t, m = res["torch"], res["minigrad"]
    for a, b in zip(m[:3], t[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert m[3:] == t[3:]


def test_index_fill_errors_and_integer_values(torch):
    assert minigrad.zeros(3, dtype=minigrad.int64).index_fill(0, minigrad.tensor([1]), 2.7).tolist() == \
        torch.zeros(3, dtype=torch.int64).index_fill(0, torch.tensor([1]), 2.7).tolist()
    _same_error(torch, lambda lib: lib.zeros(3, 4).index_fill(1, lib.tensor([0.0]), 1.0), "Expected dtype int64")
    _same_error(torch, lambda lib: lib.zeros(3, 4).index_fill(2, lib.tensor([0]), 1.0), "Dimension out of range")
    _same_error(torch, lambda lib: lib.zeros(3, 4).index_fill(1, lib.tensor([[0]]), 1.0), "Index has to be a vector")
    _same_error(torch, lambda lib: lib.zeros(3, 4).index_fill(1, lib.tensor([5]), 1.0),
                "index 5 is out of bounds for dimension 1 with size 4")
    _same_error(torch, lambda lib: lib.zeros(3, 4).index_fill(1, lib.tensor([0]), lib.ones(2)),
                "only supports a 0-dimensional value tensor")


# -- kl_div, KLDivLoss -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "batchmean", "sum", "none"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_loss_module(torch, reduction, log_target):
    logits, p = RNG.standard_normal((4, 5)), RNG.dirichlet(np.ones(5), 4)
    target = np.log(p) if log_target else p
    res = {}
    for lib in _both(torch):
        x = lib.tensor(logits, requires_grad=True)
        tgt = lib.tensor(target, requires_grad=True)
        loss_fn = lib.nn.KLDivLoss(reduction=reduction, log_target=log_target)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            loss = loss_fn(lib.nn.functional.log_softmax(x, dim=1), tgt)
        loss.sum().backward()
        res[lib.__name__] = (loss.detach().numpy(), x.grad.numpy(), tgt.grad.numpy(), type(loss.grad_fn).__name__,
                             [str(m.message) for m in w], repr(loss_fn))
    t, m = res["torch"], res["minigrad"]
    for a, b in zip(m[:3], t[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert m[3:] == t[3:]


# -- the census's most-used names (the registry sweeps cover silu, elu, addcmul(_), addcdiv(_), ravel, unique) -------
def test_new_tensor_methods_take_this_tensors_dtype(torch):
    res = {}
    for lib in _both(torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64)
        made = [x.new_zeros(2, 3), x.new_zeros((2,)), x.new_ones(2), x.new_ones(2, dtype=lib.int64),
                x.new_full((2,), 3), x.new_empty(0), x.new_tensor([1, 2]), x.new_tensor(3.5, requires_grad=True)]
        res[lib.__name__] = [(m.tolist(), str(m.dtype).split(".")[-1], tuple(m.shape), m.requires_grad) for m in made]
    assert res["minigrad"] == res["torch"]


def test_normalize_values_gradients_and_graph(torch):
    x = RNG.standard_normal((3, 4))
    x[1] = 0.0  # a zero row: eps keeps it 0
    res = {}
    for lib in _both(torch):
        t = lib.tensor(x, requires_grad=True)
        outs = [lib.nn.functional.normalize(t), lib.nn.functional.normalize(t, p=1.0, dim=0, eps=1e-3)]
        sum((o * lib.tensor(np.arange(12.0).reshape(3, 4))).sum() for o in outs).backward()
        g = outs[0].grad_fn
        res[lib.__name__] = ([o.detach().numpy() for o in outs], t.grad.numpy(),
                             (type(g).__name__, [type(n).__name__ for n, _ in g.next_functions]))
    t, m = res["torch"], res["minigrad"]
    for a, b in zip(m[0] + [m[1]], t[0] + [t[1]]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert m[2] == t[2]


def test_silu_elu_modules_and_in_place(torch):
    x = RNG.standard_normal((2, 3))
    res = {}
    for lib in _both(torch):
        nn = lib.nn
        mods = [nn.SiLU(), nn.ELU(), nn.ELU(alpha=0.5, inplace=True), nn.SiLU(inplace=True)]
        outs = [m(lib.tensor(x) * 1) for m in mods]
        res[lib.__name__] = ([repr(m) for m in mods], [o.numpy() for o in outs])
    assert res["minigrad"][0] == res["torch"][0]
    for a, b in zip(res["minigrad"][1], res["torch"][1]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_unique_has_no_derivative(torch):
    for lib in _both(torch):
        x = lib.tensor([3.0, 1.0, 3.0], requires_grad=True)
        with pytest.raises(NotImplementedError, match="the derivative for '_unique2' is not implemented"):
            x.unique().sum().backward()


def test_multistep_lr_and_pi(torch):
    lrs = {}
    for lib in _both(torch):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.5)
        sched = lib.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 4, 4], gamma=0.5)
        seen = []
        for _ in range(6):
            opt.step()
            sched.step()
            seen.append(sched.get_last_lr()[0])
        lrs[lib.__name__] = (seen, sched.state_dict()["milestones"], lib.pi, lib.e, lib.inf)
    assert lrs["minigrad"] == lrs["torch"]


@pytest.mark.parametrize("kwargs", [{}, {"affine": True}, {"affine": True, "track_running_stats": True}],
                         ids=["plain", "affine", "running"])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 4, 5)], ids=["batched", "unbatched"])
def test_instance_norm_2d(torch, kwargs, shape):
    x = RNG.standard_normal(shape)
    res = {}
    for lib in _both(torch):
        m = lib.nn.InstanceNorm2d(3, **kwargs).double()
        if kwargs.get("affine"):
            with lib.no_grad():
                m.weight.copy_(lib.tensor([0.5, 1.5, -1.0]))
                m.bias.copy_(lib.tensor([0.1, 0.0, -0.2]))
        t = lib.tensor(x, requires_grad=True)
        y = m(t)
        (y * lib.tensor(np.arange(float(np.prod(shape))).reshape(shape))).sum().backward()
        leaves = [t] + list(m.parameters())
        res[lib.__name__] = ([y.detach().numpy(), t.grad.numpy()] + [p.grad.numpy() for p in m.parameters()] +
                             [b.numpy() for b in m.buffers() if b.dtype != lib.int64],
                             repr(m), _names(y.grad_fn, leaves))
    t, mg = res["torch"], res["minigrad"]
    assert len(mg[0]) == len(t[0])
    for a, b in zip(mg[0], t[0]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert mg[1:] == t[1:]


@pytest.mark.parametrize(("dtype", "args", "kwargs", "low", "high"),
                         [("float32", (10,), {}, 0, 10), ("int64", (3, 7), {}, 3, 7),
                          ("float64", (), {"to": 4}, 0, 4), ("uint8", (), {}, 0, 256)])
def test_random_draws_integers_in_torchs_range(torch, dtype, args, kwargs, low, high):
    """The draws differ (minigrad's own stream); their dtype, range and spread are PyTorch's."""
    for lib in _both(torch):
        x = lib.zeros(4000, dtype=getattr(lib, dtype))
        assert x.random_(*args, **kwargs) is x
        v = x.double().numpy()
        assert str(x.dtype).endswith(dtype) and (v == np.round(v)).all()
        assert v.min() >= low and v.max() < high
        assert len(np.unique(v)) == high - low  # every value drawn (4000 draws of at most 256 values)
    _same_error(torch, lambda lib: lib.zeros(3).random_(5, 2), "expects 'from' to be less than 'to'")


EINSUMS = [("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]), ("ij->", [(2, 3)]),
           ("ij->j", [(2, 3)]), ("i,i->", [(3,), (3,)]), ("i,j->ij", [(3,), (2,)]),
           ("...ij,...jk", [(2, 2, 3), (3, 4)]),
           ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("ij,kj", [(2, 3), (4, 3)]), ("ij->ji", [(2, 3)])]


@pytest.mark.parametrize(("equation", "shapes"), EINSUMS, ids=[e for e, _ in EINSUMS])
def test_einsum_values_and_gradients(torch, equation, shapes):
    xs = [RNG.standard_normal(s) for s in shapes]
    res = {}
    for lib in _both(torch):
        ts = [lib.tensor(x, requires_grad=True) for x in xs]
        y = lib.einsum(equation, *ts)
        (y * y).sum().backward()
        res[lib.__name__] = [y.detach().numpy()] + [t.grad.numpy() for t in ts]
    for a, b in zip(res["minigrad"], res["torch"]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    ts = [minigrad.tensor(x, requires_grad=True) for x in xs]
    assert minigrad.autograd.gradcheck(lambda *a: minigrad.einsum(equation, *a), ts)
    assert minigrad.autograd.gradgradcheck(lambda *a: minigrad.einsum(equation, *a), ts)


def test_einsum_errors(torch):
    _same_error(torch, lambda lib: lib.einsum("ij,jk->ik", lib.zeros(2, 3)), "fewer operands")
    with pytest.raises(NotImplementedError, match="minigrad does not implement einsum with an index repeated"):
        minigrad.einsum("ii->i", minigrad.zeros(2, 2))


ASSERT_CLOSE = [([1.0, 2.0, 3.0], [1.0, 2.5, 3.0], {}), ([1, 2], [1, 3], {}), ([[1.0, 2.0], [3.0, 4.0]],
                [[1.0, 2.0], [3.0, 4.1]], {"rtol": 0.0, "atol": 0.01}), (1.0, 2.0, {}), ([1.0, 2.0], [1.0, 2.0], {}),
                ([1.0], [1.0 + 1e-7], {}), ([float("nan")], [float("nan")], {"equal_nan": True}),
                ([float("nan")], [float("nan")], {}), ([1.0], [1.0, 2.0], {}), ([1.0], [1.0], {"rtol": 1e-3})]


@pytest.mark.parametrize(("a", "b", "kwargs"), ASSERT_CLOSE, ids=[str(i) for i in range(len(ASSERT_CLOSE))])
def test_testing_assert_close(torch, a, b, kwargs):
    outcomes = []
    for lib in _both(torch):
        try:
            outcomes.append(lib.testing.assert_close(lib.tensor(a), lib.tensor(b), **kwargs))
        except (AssertionError, ValueError) as e:
            outcomes.append((type(e).__name__, str(e).replace("torch.", "minigrad.")))
    assert outcomes[1] == outcomes[0]
    with pytest.raises(AssertionError, match="float32 != minigrad.float64"):
        minigrad.testing.assert_close(minigrad.tensor([1.0]), minigrad.tensor([1.0], dtype=minigrad.float64))


def test_resize_in_place(torch):
    """Shrinking keeps the first elements; the shape, strides and version are PyTorch's (growing adds elements PyTorch
    leaves uninitialised, zeros here); a tensor that requires grad refuses."""
    _same_error(torch, lambda lib: lib.arange(3.0, requires_grad=True).resize_(3), "cannot resize variables")
    for lib in _both(torch):
        x = lib.arange(6.0)
        assert x.resize_((3, 2)) is x and x.shape == (3, 2) and x._version == 1 and x.stride() == (2, 1)
        assert x.resize_(2, 2).tolist() == [[0.0, 1.0], [2.0, 3.0]] and x.resize_(5).shape == (5,)
