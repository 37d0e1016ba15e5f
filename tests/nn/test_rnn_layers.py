"""nn.RNN, nn.LSTM, nn.GRU and their cells against PyTorch 2.13: torch's weights loaded into minigrad's module
through a NumPy state_dict, then the same inputs -> the same outputs, final states, graphs (but for nn.LSTM, a
fused node in PyTorch) and gradients (input, initial states, every parameter); one and two layers,
bidirectional, batch_first, unbatched, given initial states, relu, no bias, proj_size, float32, dropout in eval
mode; PyTorch's reprs, parameter names, init bounds and errors; a float64 gradcheck of a small LSTM and GRU."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad

RNG = np.random.default_rng(47)
T, N, I, H = 4, 3, 5, 6  # time steps, batch, input size, hidden size


def _pair(torch, name: str, *args, dtype: str = "float64", **kwargs):
    """The torch module and a minigrad one holding the same weights (loaded from torch's state_dict)."""
    tm = getattr(torch.nn, name)(*args, dtype=getattr(torch, dtype), **kwargs)
    mm = getattr(minigrad.nn, name)(*args, dtype=getattr(minigrad, dtype), **kwargs)
    result = mm.load_state_dict({k: minigrad.tensor(v.numpy().copy()) for k, v in tm.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys
    return tm, mm


def _flat(out) -> list:
    """(output, h) or (output, (h, c)) or h or (h, c) as a flat list of tensors."""
    if isinstance(out, tuple):
        return [t for part in out for t in _flat(part)]
    return [out]


# Node names where minigrad's graph differs from PyTorch's (README, "Recurrent layers"): ATen splits the gates
# with unsafe_chunk and transposes a batch_first output back in place.
_SAME_NODE = {"UnsafeSplitBackward0": "SplitBackward0", "TransposeBackward1": "TransposeBackward0"}


def _graph_rows(root, leaves: list) -> list:
    """A graph as a list of (node name, ((child, input_nr), ...)) rows in depth-first order, each child the index
    of its row or ("leaf", index in `leaves`): equal lists mean equal graphs (linear time, unlike the nested
    tuples of the `graph` fixture, which grow exponentially with an RNN's shared states)."""
    index: dict = {}
    rows: list = []

    def visit(node):
        if node is None:
            return None
        if type(node).__name__ == "AccumulateGrad":
            return ("leaf", next((i for i, leaf in enumerate(leaves) if node.variable is leaf), "?"))
        if id(node) not in index:
            index[id(node)] = len(rows)
            rows.append(None)
            name = type(node).__name__
            rows[index[id(node)]] = (_SAME_NODE.get(name, name),
                                     tuple((visit(child), nr) for child, nr in node.next_functions))
        return index[id(node)]

    visit(root)
    return rows


def _run_both(torch, close, tm, mm, arrays: list, call, same_graph: bool = True):
    """Call both modules on the same NumPy arrays (leaves that require grad), compare every returned tensor and
    (unless PyTorch records a fused node) its graph, backpropagate the same random weighting of them, compare the
    grads of the arrays and of every parameter."""
    results = []
    for lib, module in ((torch, tm), (minigrad, mm)):
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        outs = _flat(call(module, *leaves))
        results.append((leaves, outs, list(module.parameters())))
    (tleaves, touts, tparams), (mleaves, mouts, mparams) = results
    assert [tuple(t.shape) for t in touts] == [tuple(m.shape) for m in mouts]
    for m, t in zip(mouts, touts):
        close(m, t)
        if same_graph:
            assert _graph_rows(m.grad_fn, mleaves + mparams) == _graph_rows(t.grad_fn, tleaves + tparams)
    weights = [RNG.standard_normal(tuple(t.shape)) for t in touts]
    for lib, outs in ((torch, touts), (minigrad, mouts)):
        loss = sum((o * lib.tensor(w.astype(o.detach().numpy().dtype))).sum() for o, w in zip(outs, weights))
        loss.backward()
    assert len(tparams) == len(mparams)
    for m, t in zip(mleaves + mparams, tleaves + tparams):
        close(m.grad, t.grad)


def _x(shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


MODULE_CASES = {
    # name: (class, constructor kwargs, input shape, initial-state shapes or None)
    "RNN tanh": ("RNN", {}, (T, N, I), None),
    "RNN relu 2 layers bidirectional, h0": ("RNN", {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True},
                                            (T, N, I), [(4, N, H)]),
    "RNN no bias batch_first": ("RNN", {"bias": False, "batch_first": True}, (N, T, I), None),
    "LSTM": ("LSTM", {}, (T, N, I), None),
    "LSTM 2 layers bidirectional batch_first, h0 c0": ("LSTM", {"num_layers": 2, "bidirectional": True,
                                                                "batch_first": True}, (N, T, I),
                                                       [(4, N, H), (4, N, H)]),
    "LSTM proj_size bidirectional 2 layers, h0 c0": ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 3},
                                                     (T, N, I), [(4, N, 3), (4, N, H)]),
    "LSTM unbatched, h0 c0": ("LSTM", {"num_layers": 2}, (T, I), [(2, H), (2, H)]),
    "GRU": ("GRU", {}, (T, N, I), None),
    "GRU 2 layers, h0": ("GRU", {"num_layers": 2}, (T, N, I), [(2, N, H)]),
    "GRU bidirectional batch_first unbatched": ("GRU", {"bidirectional": True, "batch_first": True}, (T, I), None),
    "GRU no bias bidirectional, h0 unbatched": ("GRU", {"bias": False, "bidirectional": True}, (T, I), [(2, H)]),
}


@pytest.mark.parametrize("case", list(MODULE_CASES))
def test_recurrent_module_matches_torch(torch, close, case):
    name, kwargs, shape, states = MODULE_CASES[case]
    tm, mm = _pair(torch, name, I, H, **kwargs)
    assert repr(mm) == repr(tm)
    assert [n for n, _ in mm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    arrays = [_x(shape)] + [_x(s) for s in states or []]
    if states is None:
        call = lambda m, x: m(x)  # noqa: E731
    elif name == "LSTM":
        call = lambda m, x, h, c: m(x, (h, c))  # noqa: E731
    else:
        call = lambda m, x, h: m(x, h)  # noqa: E731
    _run_both(torch, close, tm, mm, arrays, call, same_graph=name != "LSTM")  # PyTorch: MkldnnRnnLayerBackward0


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_float32_and_dropout_in_eval_match_torch(torch, close, name):
    """float32 within rtol 1e-5; with dropout between two layers, eval mode is deterministic and matches torch,
    and training with dropout=0 (the default) does too."""
    tm, mm = _pair(torch, name, I, H, dtype="float32", num_layers=2, bidirectional=True)
    _run_both(torch, close, tm, mm, [_x((T, N, I), "float32")], lambda m, x: m(x), same_graph=name != "LSTM")
    tm, mm = _pair(torch, name, I, H, num_layers=2, dropout=0.5)
    tm.eval(), mm.eval()
    _run_both(torch, close, tm, mm, [_x((T, N, I))], lambda m, x: m(x), same_graph=name != "LSTM")


def test_dropout_in_training_drops_between_layers_only():
    """Training mode draws from minigrad's own stream (not torch's): the first layer's output is dropped before
    the second layer, so results differ from eval mode, while one layer (nothing to drop) warns and is unchanged."""
    minigrad.manual_seed(0)
    x = minigrad.tensor(_x((T, N, I)))
    two = minigrad.nn.GRU(I, H, num_layers=2, dropout=0.5, dtype=minigrad.float64)
    train_out, _ = two(x)
    two.eval()
    eval_out, _ = two(x)
    assert not np.allclose(train_out.detach().numpy(), eval_out.detach().numpy())
    with pytest.warns(UserWarning, match="dropout option adds dropout after all but last recurrent layer"):
        one = minigrad.nn.LSTM(I, H, dropout=0.5, dtype=minigrad.float64)
    a, _ = one(x)
    one.eval()
    b, _ = one(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


CELL_CASES = {
    "RNNCell": ("RNNCell", {}, [(N, H)]),
    "RNNCell relu no hx": ("RNNCell", {"nonlinearity": "relu"}, None),
    "RNNCell no bias unbatched": ("RNNCell", {"bias": False}, [(H,)]),
    "LSTMCell": ("LSTMCell", {}, [(N, H), (N, H)]),
    "LSTMCell no state": ("LSTMCell", {}, None),
    "LSTMCell unbatched": ("LSTMCell", {}, [(H,), (H,)]),
    "GRUCell": ("GRUCell", {}, [(N, H)]),
    "GRUCell unbatched no hx": ("GRUCell", {"bias": False}, None),
}


@pytest.mark.parametrize("case", list(CELL_CASES))
def test_cell_matches_torch(torch, close, case):
    name, kwargs, states = CELL_CASES[case]
    tm, mm = _pair(torch, name, I, H, **kwargs)
    assert repr(mm) == repr(tm)
    batched = states is None or len(states[0]) == 2
    arrays = [_x((N, I) if batched or "unbatched" not in case else (I,))] + [_x(s) for s in states or []]
    if states is None:
        call = lambda m, x: m(x)  # noqa: E731
    elif name == "LSTMCell":
        call = lambda m, x, h, c: m(x, (h, c))  # noqa: E731
    else:
        call = lambda m, x, h: m(x, h)  # noqa: E731
    _run_both(torch, close, tm, mm, arrays, call)


def test_reprs_parameters_and_init_match_torch(torch):
    builds = [("RNN", (10, 20), {"num_layers": 2}), ("RNN", (3, 4), {"nonlinearity": "relu", "bias": False}),
              ("LSTM", (10, 20, 2), {"batch_first": True, "dropout": 0.5, "bidirectional": True, "proj_size": 5}),
              ("GRU", (4, 8), {"bidirectional": True}), ("RNNCell", (3, 4), {"nonlinearity": "relu", "bias": False}),
              ("LSTMCell", (3, 4), {}), ("GRUCell", (3, 4), {})]
    for name, args, kwargs in builds:
        tm, mm = getattr(torch.nn, name)(*args, **kwargs), getattr(minigrad.nn, name)(*args, **kwargs)
        assert repr(mm) == repr(tm)
        tshapes = {k: tuple(p.shape) for k, p in tm.named_parameters()}
        assert {k: tuple(p.shape) for k, p in mm.named_parameters()} == tshapes
        assert list(mm.state_dict()) == list(tm.state_dict())
        bound = 1 / np.sqrt(mm.hidden_size)
        values = np.concatenate([p.detach().numpy().ravel() for p in mm.parameters()])
        assert values.dtype == np.float32 and np.abs(values).max() <= bound and np.abs(values).max() > 0.8 * bound
        if hasattr(tm, "all_weights"):
            names = [[k for k, p in tm.named_parameters() if any(p is w for w in ws)] for ws in tm.all_weights]
            assert [[k for k, p in mm.named_parameters() if any(p is w for w in ws)] for ws in mm.all_weights] == names
            assert mm.flatten_parameters() is None


def _message(exc: BaseException) -> str:
    return str(exc).split("\nhint:")[0].replace("minigrad.", "torch.")


ERRORS = {
    "3-D hx for unbatched RNN": lambda nn, t: nn.RNN(I, H)(t(T, I), t(1, 1, H)),
    "2-D hx for batched GRU": lambda nn, t: nn.GRU(I, H)(t(T, N, I), t(1, H)),
    "4-D input": lambda nn, t: nn.LSTM(I, H)(t(T, N, I, 1)),
    "4-D input RNN": lambda nn, t: nn.RNN(I, H)(t(T, N, I, 1)),
    "wrong input size": lambda nn, t: nn.GRU(I, H)(t(T, N, I + 1)),
    "wrong hidden size": lambda nn, t: nn.RNN(I, H, 2)(t(T, N, I), t(2, N, H + 1)),
    "wrong cell size": lambda nn, t: nn.LSTM(I, H)(t(T, N, I), (t(1, N, H), t(1, N + 1, H))),
    "wrong hx dims LSTM": lambda nn, t: nn.LSTM(I, H)(t(T, I), (t(1, 1, H), t(1, H))),
    "input dtype": lambda nn, t: nn.LSTM(I, H, dtype=nn.Linear(1, 1).weight.dtype)(t(T, N, I)),
    "cell input size": lambda nn, t: nn.LSTMCell(I, H)(t(N, I + 1)),
    "cell hidden size": lambda nn, t: nn.LSTMCell(I, H)(t(N, I), (t(N, H), t(N, H + 1))),
    "cell batch size": lambda nn, t: nn.GRUCell(I, H)(t(N, I), t(N + 1, H)),
    "cell 3-D input": lambda nn, t: nn.RNNCell(I, H)(t(1, N, I)),
    "cell 3-D hidden": lambda nn, t: nn.GRUCell(I, H)(t(N, I), t(1, N, H)),
    "LSTMCell 3-D hx[1]": lambda nn, t: nn.LSTMCell(I, H)(t(N, I), (t(N, H), t(1, N, H))),
    "nonlinearity": lambda nn, t: nn.RNN(I, H, nonlinearity="sigmoid"),
    "proj_size on GRU": lambda nn, t: nn.GRU(I, H, proj_size=2),
    "proj_size too big": lambda nn, t: nn.LSTM(I, H, proj_size=H),
    "dropout out of range": lambda nn, t: nn.LSTM(I, H, dropout=1.5),
    "hidden_size type": lambda nn, t: nn.GRU(I, 2.0),
    "num_layers zero": lambda nn, t: nn.RNN(I, H, 0),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_torch(torch, case):
    caught = []
    for lib in (torch, minigrad):
        def t(*shape, lib=lib):
            return lib.tensor(np.zeros(shape))
        with pytest.raises(Exception) as info:
            ERRORS[case](lib.nn, t)
        caught.append((type(info.value), _message(info.value)))
    assert caught[1] == caught[0]


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_gradcheck_small_bidirectional(name):
    module = getattr(minigrad.nn, name)(2, 2, bidirectional=True, dtype=minigrad.float64)
    x = minigrad.tensor(_x((3, 2, 2)), requires_grad=True)
    h0 = minigrad.tensor(_x((2, 2, 2)), requires_grad=True)

    def f(x, h0):
        out, _ = module(x, (h0, h0 * 0.5) if name == "LSTM" else h0)
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert minigrad.autograd.gradcheck(f, (x, h0))
        assert minigrad.autograd.gradgradcheck(f, (x, h0))
