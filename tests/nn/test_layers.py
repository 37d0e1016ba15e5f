"""Layers and activations against PyTorch 2.13: same weights, same inputs -> same outputs, gradients and graphs."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
import minigrad.nn as nn
import minigrad.nn.functional as F

RNG = np.random.default_rng(1234)
DTYPES = ["float32", "float64"]


def _pair(torch, arr: np.ndarray, requires_grad: bool = True):
    return (torch.tensor(arr, requires_grad=requires_grad),
            minigrad.tensor(arr, requires_grad=requires_grad))


def _dtype(lib, name: str):
    return getattr(lib, name)


# -- Linear ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("input_grad", [True, False])
@pytest.mark.parametrize("shape", [(4,), (2, 4), (5, 2, 4), (1, 2, 3, 4)])
def test_linear_matches_torch(torch, graph, sync, close, dtype, bias, input_grad, shape):
    tl = torch.nn.Linear(4, 3, bias=bias, dtype=_dtype(torch, dtype))
    ml = nn.Linear(4, 3, bias=bias, dtype=_dtype(minigrad, dtype))
    sync(tl, ml)
    x = RNG.standard_normal(shape).astype(dtype)
    tx, mx = _pair(torch, x, input_grad)
    ty, my = tl(tx), ml(mx)
    close(my, ty)
    tleaves = [tx, tl.weight] + ([tl.bias] if bias else [])
    mleaves = [mx, ml.weight] + ([ml.bias] if bias else [])
    assert graph(my.grad_fn, mleaves) == graph(ty.grad_fn, tleaves)
    g = RNG.standard_normal(ty.shape).astype(dtype)
    ty.backward(torch.tensor(g))
    my.backward(minigrad.tensor(g))
    for tp, mp in zip(tleaves, mleaves):
        if tp.requires_grad:
            close(mp.grad, tp.grad)


def test_linear_graph_is_addmm_over_t_as_the_reference_sheet_says(graph):
    lin = nn.Linear(2, 3)
    x = minigrad.randn(4, 2, requires_grad=True)
    y = lin(x)
    fn = y.grad_fn
    assert fn.name() == "AddmmBackward0"
    (b, _), (xin, _), (t, _) = fn.next_functions
    assert b.variable is lin.bias and xin.variable is x
    assert t.name() == "TBackward0" and t.next_functions[0][0].variable is lin.weight
    assert lin(minigrad.randn(2)).grad_fn.name() == "ViewBackward0"
    assert fn._saved_alpha == 1 and fn._saved_beta == 1 and fn._saved_mat1_sym_sizes == (4, 2)


@pytest.mark.parametrize("which", ["bias", "weight", "both", "none"])
def test_linear_edges_follow_what_requires_grad(torch, graph, which):
    W = RNG.standard_normal((3, 4))
    b = RNG.standard_normal(3)
    x = RNG.standard_normal((2, 4))
    graphs = []
    for lib in (torch, minigrad):
        tw = lib.tensor(W, requires_grad=which in ("weight", "both"))
        tb = lib.tensor(b, requires_grad=which in ("bias", "both"))
        out = (lib.nn.functional.linear(lib.tensor(x), tw, tb))
        graphs.append(graph(out.grad_fn, [tw, tb]))
    assert graphs[0] == graphs[1]


@pytest.mark.parametrize("shape", [(4,), (2, 4), (5, 2, 4)])
def test_functional_linear_without_bias(torch, graph, close, shape):
    W = RNG.standard_normal((3, 4))
    x = RNG.standard_normal(shape)
    tw, mw = _pair(torch, W)
    tx, mx = _pair(torch, x)
    ty, my = torch.nn.functional.linear(tx, tw), F.linear(mx, mw)
    close(my, ty)
    assert graph(my.grad_fn, [mx, mw]) == graph(ty.grad_fn, [tx, tw])
    ty.sum().backward()
    my.sum().backward()
    close(mx.grad, tx.grad)
    close(mw.grad, tw.grad)


def test_linear_on_a_non_contiguous_input(torch, graph, sync, close):
    tl, ml = torch.nn.Linear(4, 3, dtype=torch.float64), nn.Linear(4, 3, dtype=minigrad.float64)
    sync(tl, ml)
    x = RNG.standard_normal((4, 2, 5))
    tx, mx = _pair(torch, x)
    ty, my = tl(tx.transpose(0, 2)), ml(mx.transpose(0, 2))
    close(my, ty)
    assert graph(my.grad_fn, [mx, ml.weight, ml.bias]) == graph(ty.grad_fn, [tx, tl.weight, tl.bias])


def test_linear_second_order_matches_torch(torch, sync, close):
    tl, ml = torch.nn.Linear(3, 2, dtype=torch.float64), nn.Linear(3, 2, dtype=minigrad.float64)
    sync(tl, ml)
    x = RNG.standard_normal((4, 3))
    results = []
    for lib, lin in ((torch, tl), (minigrad, ml)):
        t = lib.tensor(x, requires_grad=True)
        y = (lin(t).tanh() ** 2).sum()
        (gx,) = lib.autograd.grad(y, t, create_graph=True)
        (ggw,) = lib.autograd.grad((gx ** 2).sum(), lin.weight)
        results.append((gx, ggw))
    close(results[1][0], results[0][0])
    close(results[1][1], results[0][1])


def test_linear_errors_match_torch(torch):
    for lib in (torch, minigrad):
        with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x5 and 2x3\)"):
            lib.nn.Linear(2, 3)(lib.randn(2, 5))
        with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype, but got Double and Float"):
            lib.nn.Linear(4, 3)(lib.randn(2, 4).double())


def test_linear_default_init_follows_torch_distribution():
    minigrad.manual_seed(0)
    lin = nn.Linear(400, 300)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    bound = 1 / np.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives the same bound as the bias
    assert w.dtype == np.float32 and w.shape == (300, 400)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.01 * bound
    assert np.abs(b).max() <= bound and abs(b.mean()) < 0.1 * bound


# -- activations and shape layers -------------------------------------------------------------------------------
ACTIVATIONS = {
    "ReLU": lambda nn: nn.ReLU(),
    "Tanh": lambda nn: nn.Tanh(),
    "Sigmoid": lambda nn: nn.Sigmoid(),
    "Softmax1": lambda nn: nn.Softmax(dim=1),
    "Softmax-1": lambda nn: nn.Softmax(dim=-1),
    "LogSoftmax1": lambda nn: nn.LogSoftmax(dim=1),
    "LogSoftmax0": lambda nn: nn.LogSoftmax(dim=0),
    "LeakyReLU": lambda nn: nn.LeakyReLU(0.2),
    "GELU": lambda nn: nn.GELU(),
    "Flatten": lambda nn: nn.Flatten(),
    "Flatten0": lambda nn: nn.Flatten(0, 1),
    "Identity": lambda nn: nn.Identity(),
    "Dropout-eval": lambda nn: nn.Dropout(0.3).eval(),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_modules_match_torch(torch, graph, close, name, dtype):
    x = RNG.standard_normal((3, 4, 2)).astype(dtype)
    x[np.abs(x) < 1e-3] = 0.5  # keep away from the kinks
    tm, mm = ACTIVATIONS[name](torch.nn), ACTIVATIONS[name](nn)
    tx, mx = _pair(torch, x)
    ty, my = tm(tx), mm(mx)
    close(my, ty)
    assert graph(my.grad_fn, [mx]) == graph(ty.grad_fn, [tx])
    assert (my is mx) == (ty is tx)
    g = RNG.standard_normal(ty.shape).astype(dtype)
    ty.backward(torch.tensor(g))
    my.backward(minigrad.tensor(g))
    close(mx.grad, tx.grad)


@pytest.mark.parametrize("fn", ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "gelu", "leaky_relu"])
def test_functional_activations_match_torch(torch, graph, close, fn):
    x = RNG.standard_normal((2, 5))
    tx, mx = _pair(torch, x)
    kwargs = {"dim": 1} if "softmax" in fn else {}
    ty, my = getattr(torch.nn.functional, fn)(tx, **kwargs), getattr(F, fn)(mx, **kwargs)
    close(my, ty)
    assert graph(my.grad_fn, [mx]) == graph(ty.grad_fn, [tx])


def test_relu_inplace_matches_torch(torch, graph, close):
    x = RNG.standard_normal((3, 4))
    tx, mx = _pair(torch, x)
    ty, my = torch.nn.ReLU(inplace=True)(tx * 2), nn.ReLU(inplace=True)(mx * 2)
    close(my, ty)
    assert graph(my.grad_fn, [mx]) == graph(ty.grad_fn, [tx])


def test_softmax_without_dim_warns_like_torch(torch):
    for lib in (torch, minigrad):
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
            lib.nn.Softmax()(lib.randn(2, 3))


# -- Dropout ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_dropout_output_is_input_times_its_mask(torch, graph, close, p):
    x = RNG.uniform(0.5, 2.0, (40, 30))  # no zeros: the mask can be read off the output
    for lib, drop in ((torch, torch.nn.Dropout(p)), (minigrad, nn.Dropout(p))):
        t = lib.tensor(x, requires_grad=True)
        y = drop(t)
        mask = y.detach().numpy() != 0
        np.testing.assert_allclose(y.detach().numpy(), x * mask / (1 - p), rtol=1e-12)
        assert abs(mask.mean() - (1 - p)) < 0.05
        assert graph(y.grad_fn, [t]) == ("MulBackward0", ((("leaf", 0), 0), (None, 0)))
        y.sum().backward()
        np.testing.assert_allclose(t.grad.numpy(), mask / (1 - p), rtol=1e-12)


def test_dropout_matches_torch_given_minigrad_mask(torch, close):
    x = RNG.standard_normal((6, 7)).astype(np.float32)
    mx = minigrad.tensor(x, requires_grad=True)
    minigrad.manual_seed(3)
    my = F.dropout(mx, 0.4)
    mask = (my.detach().numpy() != 0).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    ty = tx * torch.tensor(mask / np.float32(0.6))
    close(my, ty)
    g = RNG.standard_normal(x.shape).astype(np.float32)
    my.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    close(mx.grad, tx.grad)


def test_dropout_modes_and_edge_probabilities(torch):
    for lib in (torch, minigrad):
        x = lib.ones(5, 4, requires_grad=True)
        drop = lib.nn.Dropout(0.5)
        assert drop.eval()(x) is x
        assert lib.nn.functional.dropout(x, 0.0) is x
        zeros = lib.nn.functional.dropout(x, 1.0)
        assert zeros.grad_fn.name() == "MulBackward0" and zeros.abs().sum().item() == 0
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
            lib.nn.Dropout(1.5)
    minigrad.manual_seed(7)
    a = F.dropout(minigrad.ones(100), 0.5)
    minigrad.manual_seed(7)
    b = F.dropout(minigrad.ones(100), 0.5)
    assert minigrad.equal(a, b)


def test_dropout_inplace(torch, graph):
    x = RNG.uniform(1, 2, (4, 5))
    graphs = []
    for lib in (torch, minigrad):
        t = lib.tensor(x, requires_grad=True)
        y = t * 1
        out = lib.nn.functional.dropout(y, 0.5, inplace=True)
        assert out is y
        graphs.append(graph(out.grad_fn, [t]))
    assert graphs[0] == graphs[1]


# -- reprs --------------------------------------------------------------------------------------------------------
REPRS = [
    "nn.Linear(2, 3)", "nn.Linear(2, 3, bias=False)", "nn.ReLU()", "nn.ReLU(inplace=True)", "nn.Tanh()",
    "nn.Sigmoid()", "nn.Softmax(dim=1)", "nn.Softmax()", "nn.LogSoftmax(dim=-1)", "nn.Flatten()", "nn.Flatten(0, 2)",
    "nn.Dropout()", "nn.Dropout(p=0.25, inplace=True)", "nn.Identity()", "nn.LeakyReLU()", "nn.GELU()",
    "nn.MSELoss()", "nn.L1Loss(reduction='sum')", "nn.CrossEntropyLoss()", "nn.NLLLoss()", "nn.BCELoss()",
    "nn.BCEWithLogitsLoss()",
    "nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.1), nn.Linear(8, 2))",
    "nn.Sequential(nn.Flatten(), nn.Sequential(nn.Linear(4, 4), nn.Tanh()), nn.Linear(4, 1), nn.Sigmoid())",
    "nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU()])",
    "nn.ModuleList()",
    "nn.Sequential()",
    "nn.Sequential(nn.ModuleList([nn.Linear(3, 3)] * 2), nn.Sequential())",
]


@pytest.mark.parametrize("expr", REPRS)
def test_module_reprs_match_torch(torch, expr):
    want = repr(eval(expr, {"nn": torch.nn}))
    got = repr(eval(expr, {"nn": nn}))
    assert got == want.replace("torch.", "minigrad.")


def test_custom_module_repr_with_extra_repr_matches_torch(torch):
    def build(nn_):
        class Encoder(nn_.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn_.Linear(3, 4)
                self.layers = nn_.Sequential(nn_.Linear(4, 4), nn_.ReLU())

            def extra_repr(self):
                return "depth=2\nwidth=4"

        class Net(nn_.Module):
            def __init__(self):
                super().__init__()
                self.encoder = Encoder()
                self.head = nn_.Linear(4, 1)

        return Net()

    assert repr(build(nn)) == repr(build(torch.nn))


def test_parameter_repr_and_type(torch):
    for lib in (torch, minigrad):
        p = lib.nn.Parameter(lib.ones(2))
        assert repr(p) == "Parameter containing:\ntensor([1., 1.], requires_grad=True)"
        assert isinstance(p, lib.Tensor) and p.requires_grad and p.is_leaf
        assert type(p * 2) is lib.Tensor
        assert not lib.nn.Parameter(lib.ones(2), requires_grad=False).requires_grad
    assert type(minigrad.nn.Parameter(minigrad.ones(1)).detach()) is minigrad.Tensor
    assert isinstance(nn.Parameter(minigrad.ones(2)), minigrad.FloatTensor)
