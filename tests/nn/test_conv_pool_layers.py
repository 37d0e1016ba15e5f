"""Convolution and pooling layers against PyTorch 2.13 (Conv1d/2d, ConvTranspose1d/2d, the lazy layers,
MaxPool/AvgPool/AdaptiveAvgPool, Dropout2d, Flatten): same weights and inputs -> same outputs, graphs, gradients,
second-order gradients, reprs and errors."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
import minigrad.nn as nn

RNG = np.random.default_rng(7)
DTYPES = ["float32", "float64"]


def _close(got, want) -> None:
    """float64 as conventions.md; float32 relative to the output's size: a convolution adds dozens of products,
    and where they cancel float32 rounding (in an order each library picks) leaves ~1e-6 of the terms' size."""
    got, want = got.detach().numpy(), want.detach().numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    if got.dtype == np.float64:
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * max(1.0, float(np.abs(want).max())))


def _second_order(torch, tleaves, mleaves, ty, my, dtype) -> None:
    """Gradients of <w, d(out)/d(leaves)> w.r.t. the leaves and the upstream gradient: the layer's double backward."""
    g = RNG.standard_normal(tuple(ty.shape)).astype(dtype)
    results = []
    for lib, leaves, y in ((torch, tleaves, ty), (minigrad, mleaves, my)):
        up = lib.tensor(g, requires_grad=True)
        first = lib.autograd.grad(y, leaves, up, create_graph=True)
        results.append((lib, leaves, up, first))
    ws = [RNG.standard_normal(tuple(t.shape)).astype(dtype) for t in results[0][3]]
    seconds = []
    for lib, leaves, up, first in results:
        total = sum((a * lib.tensor(w)).sum() for a, w in zip(first, ws) if a.requires_grad)
        seconds.append(lib.autograd.grad(total, [*leaves, up], allow_unused=True))
    for (t, m) in zip(*seconds):
        if t is None or m is None:
            assert m is None or not m.detach().numpy().any()
            assert t is None or not t.detach().numpy().any()
            continue
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-7, atol=1e-9)


def _step(torch, graph, tmod, mmod, x, second_order=False):
    tx, mx = torch.tensor(x, requires_grad=True), minigrad.tensor(x, requires_grad=True)
    ty, my = tmod(tx), mmod(mx)
    _close(my, ty)
    tleaves, mleaves = [tx, *tmod.parameters()], [mx, *mmod.parameters()]
    assert graph(my.grad_fn, mleaves) == graph(ty.grad_fn, tleaves)
    if second_order:
        _second_order(torch, tleaves, mleaves, ty, my, x.dtype)
        return ty, my
    g = RNG.standard_normal(tuple(ty.shape)).astype(x.dtype)
    ty.backward(torch.tensor(g))
    my.backward(minigrad.tensor(g))
    for tp, mp in zip(tleaves, mleaves):
        _close(mp.grad, tp.grad)
    return ty, my


CONVS = [
    ("Conv2d", (3, 6, 5), {}, (2, 3, 12, 12)),
    ("Conv2d", (3, 6, (5, 3)), {"stride": 2, "padding": 1, "dilation": (1, 2), "bias": False}, (2, 3, 11, 12)),
    ("Conv2d", (4, 6, 3), {"groups": 2, "padding": "same"}, (2, 4, 7, 6)),
    ("Conv2d", (4, 4, 3), {"groups": 4, "padding": "valid"}, (4, 6, 6)),
    ("Conv2d", (2, 3, 4), {"padding": "same"}, (1, 2, 6, 6)),
    ("Conv1d", (3, 5, 3), {}, (2, 3, 10)),
    ("Conv1d", (3, 6, 4), {"stride": 3, "padding": 2, "dilation": 2, "groups": 3}, (2, 3, 17)),
    ("ConvTranspose2d", (4, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}, (2, 4, 4, 5)),
    ("ConvTranspose2d", (4, 6, (2, 3)), {"groups": 2, "dilation": 2, "bias": False}, (2, 4, 3, 3)),
    ("ConvTranspose1d", (3, 2, 4), {"stride": 3}, (2, 3, 5)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("cls", "args", "kwargs", "shape"), CONVS)
def test_convolutions_match_torch(torch, graph, sync, close, dtype, cls, args, kwargs, shape):
    tm = getattr(torch.nn, cls)(*args, dtype=getattr(torch, dtype), **kwargs)
    mm = getattr(nn, cls)(*args, dtype=getattr(minigrad, dtype), **kwargs)
    sync(tm, mm)
    assert repr(mm) == repr(tm)
    assert [tuple(p.shape) for p in mm.parameters()] == [tuple(p.shape) for p in tm.parameters()]
    _step(torch, graph, tm, mm, RNG.standard_normal(shape).astype(dtype))


@pytest.mark.parametrize(("cls", "args", "kwargs", "shape"), CONVS[:2] + CONVS[5:8])
def test_convolutions_second_order_match_torch(torch, graph, sync, close, cls, args, kwargs, shape):
    tm = getattr(torch.nn, cls)(*args, dtype=torch.float64, **kwargs)
    mm = getattr(nn, cls)(*args, dtype=minigrad.float64, **kwargs)
    sync(tm, mm)
    _step(torch, graph, tm, mm, RNG.standard_normal(shape), second_order=True)


def test_conv_init_draws_pytorchs_distributions():
    conv = nn.Conv2d(6, 16, 5)
    bound = 1 / np.sqrt(6 * 25)
    w, b = conv.weight.detach().numpy(), conv.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound  # kaiming_uniform_(a=sqrt(5)): U(±1/√fan_in)
    assert np.abs(b).max() <= bound and w.std() == pytest.approx(bound / np.sqrt(3), rel=0.1)


@pytest.mark.parametrize("expr", [
    "F.conv2d(lib.ones(1, 1, 32, 32), lib.ones(6, 3, 5, 5))", "F.conv2d(lib.ones(1, 3, 4, 4), lib.ones(6, 3, 5, 5))",
    "F.conv2d(lib.ones(3, 4), lib.ones(6, 3, 5, 5))", "F.conv2d(lib.ones(1, 3, 8, 8), lib.ones(6, 3, 5, 5), stride=0)",
    "F.conv2d(lib.ones(1, 3, 8, 8), lib.ones(6, 3, 5, 5), padding='same', stride=2)",
    "F.conv2d(lib.ones(1, 4, 8, 8), lib.ones(6, 3, 5, 5), groups=2)",
    "F.conv2d(lib.ones(1, 3, 8, 8), lib.ones(6, 3, 5, 5), bias=lib.ones(5))",
    "F.conv2d(lib.ones(1, 3, 8, 8), lib.ones(6, 3, 5, 5), padding='foo')",
    "F.conv2d(lib.ones(1, 3, 8, 8).double(), lib.ones(6, 3, 5, 5))",
    "F.conv_transpose2d(lib.ones(1, 5, 3, 3), lib.ones(4, 3, 2, 2))",
    "F.max_pool2d(lib.ones(1, 1, 4, 4), 3, padding=2)", "F.max_pool2d(lib.ones(1, 1, 2, 2), 3)",
    "F.avg_pool2d(lib.ones(1, 1, 4, 4), 3, padding=2)", "nn.Conv2d(3, 6, 3, groups=2)",
    "nn.Conv2d(3, 6, 3, padding='same', stride=2)", "nn.Conv2d(3, 6, 3, padding='full')",
])
def test_errors_match_torch(torch, expr):
    errors = []
    for lib in (torch, minigrad):
        with pytest.raises(Exception) as info:
            eval(expr, {"F": lib.nn.functional, "nn": lib.nn, "lib": lib})
        errors.append(info.value)
    te, me = errors
    assert type(me) is type(te) or type(me).__name__ == type(te).__name__
    assert str(te).split("\n")[0].replace("torch.", "minigrad.") in str(me), (str(te), str(me))


# -- lazy layers -------------------------------------------------------------------------------------------------
def test_lazy_layers_become_eager_layers_on_their_first_input(torch):
    for lib in (torch, minigrad):
        lin, conv = lib.nn.LazyLinear(3), lib.nn.LazyConv2d(6, 5, padding=2)
        assert repr(lin) == "LazyLinear(in_features=0, out_features=3, bias=True)"
        assert repr(conv) == "LazyConv2d(0, 6, kernel_size=(5, 5), stride=(1, 1), padding=(2, 2))"
        assert repr(lin.weight) == "<UninitializedParameter>"
        with pytest.raises(ValueError, match="uninitialized parameter"):
            lin.weight.numel()
        out = lin(conv(lib.ones(2, 1, 4, 4)).reshape(2, -1))
        assert tuple(out.shape) == (2, 3)
        assert type(lin).__name__ == "Linear" and type(conv).__name__ == "Conv2d"
        assert repr(conv) == "Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1), padding=(2, 2))"
        assert repr(lin) == "Linear(in_features=96, out_features=3, bias=True)"
        assert type(lin.weight).__name__ == "Parameter" and tuple(lin.weight.shape) == (3, 96)
        assert list(lin.state_dict()) == ["weight", "bias"]
        conv1 = lib.nn.LazyConv1d(4, 3, bias=False)
        conv1(lib.ones(5, 7))  # unbatched: in_channels from dim 0
        assert repr(conv1) == "Conv1d(5, 4, kernel_size=(3,), stride=(1,), bias=False)"


def test_lazy_layers_initialise_with_pytorchs_bounds():
    lin = nn.LazyLinear(50)
    lin(minigrad.ones(1, 400))
    bound = 1 / np.sqrt(400)
    assert 0.9 * bound < np.abs(lin.weight.detach().numpy()).max() <= bound


# -- pooling -----------------------------------------------------------------------------------------------------
POOLS = [
    ("MaxPool2d", (2,), {}, (2, 3, 8, 8)), ("MaxPool2d", (3, 2, 1), {"ceil_mode": True}, (2, 3, 9, 7)),
    ("MaxPool2d", ((2, 3),), {"dilation": 2, "stride": 1}, (1, 2, 7, 8)), ("MaxPool2d", (2,), {}, (3, 6, 5)),
    ("MaxPool1d", (3, 2), {}, (2, 3, 9)), ("AvgPool2d", (2,), {}, (2, 3, 8, 8)),
    ("AvgPool2d", (3, 2, 1), {"ceil_mode": True, "count_include_pad": False}, (2, 3, 9, 7)),
    ("AvgPool2d", (3, 2, 1), {"ceil_mode": True}, (2, 3, 5, 5)), ("AvgPool2d", (2,), {"divisor_override": 3},
                                                                   (1, 2, 4, 6)),
    ("AvgPool1d", (3,), {"padding": 1}, (2, 3, 8)), ("AdaptiveAvgPool2d", ((1, 1),), {}, (2, 3, 7, 5)),
    ("AdaptiveAvgPool2d", ((3, 2),), {}, (2, 3, 7, 5)), ("AdaptiveAvgPool2d", (4,), {}, (3, 6, 6)),
    ("AdaptiveAvgPool1d", (3,), {}, (2, 3, 8)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("cls", "args", "kwargs", "shape"), POOLS)
def test_poolings_match_torch(torch, graph, close, dtype, cls, args, kwargs, shape):
    tm, mm = getattr(torch.nn, cls)(*args, **kwargs), getattr(nn, cls)(*args, **kwargs)
    assert repr(mm) == repr(tm)
    x = RNG.permutation(int(np.prod(shape))).reshape(shape).astype(dtype) / 10  # no ties inside a window
    _step(torch, graph, tm, mm, x)


@pytest.mark.parametrize(("cls", "args", "kwargs", "shape"), [POOLS[1], POOLS[6], POOLS[11]])
def test_poolings_second_order_match_torch(torch, graph, close, cls, args, kwargs, shape):
    tm, mm = getattr(torch.nn, cls)(*args, **kwargs), getattr(nn, cls)(*args, **kwargs)
    x = RNG.permutation(int(np.prod(shape))).reshape(shape).astype("float64") / 10
    _step(torch, graph, tm, mm, x, second_order=True)


def test_max_pool_indices_and_ties_match_torch(torch):
    x = np.array([[[[1.0, 1.0, 0.0], [1.0, 0.0, 2.0], [2.0, 2.0, 0.0]]]])
    for kwargs in ({}, {"stride": 1}, {"ceil_mode": True}):
        tv, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True, **kwargs)
        mv, mi = minigrad.nn.functional.max_pool2d(minigrad.tensor(x), 2, return_indices=True, **kwargs)
        assert mv.tolist() == tv.tolist() and mi.tolist() == ti.tolist() and str(mi.dtype) == "minigrad.int64"
    pool = nn.MaxPool2d(2, return_indices=True)
    values, indices = pool(minigrad.tensor(x))
    assert indices.tolist() == [[[[0]]]]


def test_max_pool_picks_input_over_padding_and_nan_as_torch(torch):
    """Padding never wins a window (an input that is all -inf keeps indices inside the input, so the gradient
    lands there), a NaN wins over any number (the last NaN of a window), and overlapping windows add."""
    nan_input = np.arange(36.0).reshape(1, 1, 6, 6) % 7
    nan_input[0, 0, 1, 1] = nan_input[0, 0, 2, 2] = np.nan
    cases = [(np.full((1, 2, 4, 4), -np.inf), {"kernel_size": 3, "stride": 1, "padding": 1}),
             (np.full((1, 1, 5, 5), -np.inf), {"kernel_size": 2, "stride": 2, "padding": 1, "ceil_mode": True}),
             (nan_input, {"kernel_size": 3, "stride": 1, "padding": 1}),
             (nan_input, {"kernel_size": 2, "stride": 2, "dilation": 2})]
    for x, kwargs in cases:
        got = []
        for lib in (torch, minigrad):
            leaf = lib.tensor(x, requires_grad=True)
            values, indices = lib.nn.functional.max_pool2d(leaf, return_indices=True, **kwargs)
            values.backward(lib.ones_like(values))
            got.append((values.detach().numpy(), indices.numpy(), leaf.grad.numpy()))
        for mine, theirs in zip(got[1], got[0]):
            np.testing.assert_array_equal(mine, theirs)


# -- Dropout2d and Flatten ---------------------------------------------------------------------------------------
def test_dropout2d_zeroes_whole_channels_and_scales_the_rest():
    minigrad.manual_seed(0)
    x = minigrad.ones(64, 32, 3, 3, requires_grad=True)
    drop = nn.Dropout2d(0.25)
    assert repr(drop) == "Dropout2d(p=0.25, inplace=False)"
    y = drop(x)
    per_channel = y.detach().numpy().reshape(64, 32, 9)
    assert set(np.unique(per_channel.std(axis=2))) == {0.0}  # each channel is all kept or all zero
    kept = per_channel[:, :, 0] != 0
    assert abs(kept.mean() - 0.75) < 0.03 and np.allclose(per_channel[kept], 1 / 0.75)
    assert y.grad_fn.name() == "MulBackward0" and y.grad_fn.next_functions[1] == (None, 0)
    y.sum().backward()
    assert np.allclose(x.grad.numpy().reshape(64, 32, 9)[kept], 1 / 0.75)
    drop.eval()
    assert drop(x) is x


def test_dropout2d_warns_for_3d_inputs_as_torch(torch):
    for lib in (torch, minigrad):
        with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
            lib.nn.functional.dropout2d(lib.ones(2, 3, 4), 0.5)


def test_lenet_like_stack_matches_torch(torch, graph, sync, close):
    """The 60 Minute Blitz's LeNet, layer by layer through nn.Sequential: one training step, float32."""
    def net(lib):
        n = lib.nn
        return n.Sequential(n.Conv2d(1, 6, 5), n.ReLU(), n.MaxPool2d(2), n.Conv2d(6, 16, 5), n.ReLU(),
                            n.MaxPool2d(2, 2), n.Flatten(), n.Linear(16 * 5 * 5, 120), n.ReLU(), n.Linear(120, 10))

    tm, mm = net(torch), net(minigrad)
    sync(tm, mm)
    assert repr(mm) == repr(tm)
    _step(torch, graph, tm, mm, RNG.standard_normal((4, 1, 32, 32)).astype("float32"))



def test_max_pool_frees_its_indices_after_backward_as_torch(torch):
    """result1 (the indices) is a saved tensor in PyTorch: a backward without retain_graph frees it, as it
    frees `self`, and reading it afterwards raises."""
    x = RNG.permutation(32).reshape(1, 2, 4, 4).astype("float64")
    kept = {}
    for lib in (torch, minigrad):
        out = lib.nn.functional.max_pool2d(lib.tensor(x, requires_grad=True), 2)
        out.sum().backward(retain_graph=True)
        kept[lib] = out.grad_fn._saved_result1.tolist()
        out.sum().backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            out.grad_fn._saved_result1
    assert kept[minigrad] == kept[torch]


def test_a_recorded_convolution_holds_only_its_output():
    """The graph keeps the input and weight it was given, and the output: not im2col's columns (25 times the
    input here), which made every LeNet training step outgrow the heap glibc keeps (bench/README.md, W8)."""
    import tracemalloc

    x = minigrad.tensor(RNG.standard_normal((64, 1, 28, 28)).astype("float32"))
    conv = nn.Conv2d(1, 6, 5, padding=2)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        y = conv(x)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert y.grad_fn.name() == "ConvolutionBackward0"
    assert held < 1.1 * y.detach().numpy().nbytes
