"""ModuleDict, ParameterList, ParameterDict and buffers against torch.nn 2.13.

Both libraries build the same model; reprs (with `torch.` read as `minigrad.`), parameter and buffer
names in order, state_dict keys, children and named_modules, errors and their key phrases must agree.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import minigrad

W = np.arange(6, dtype=np.float64).reshape(2, 3) / 10


def _repr(obj, lib) -> str:
    return repr(obj).replace("torch.", "minigrad.") if lib.__name__ == "torch" else repr(obj)


def _both(torch, build):
    """build(lib) for torch and minigrad; returns [(lib, result), ...]."""
    return [(lib, build(lib)) for lib in (torch, minigrad)]


def _facts(lib, m):
    return {
        "repr": _repr(m, lib),
        "params": [(n, tuple(p.shape)) for n, p in m.named_parameters()],
        "buffers": [(n, tuple(b.shape)) for n, b in m.named_buffers()],
        "state_dict": list(m.state_dict()),
        "children": [type(c).__name__ for c in m.children()],
        "named_modules": [(n, type(c).__name__) for n, c in m.named_modules()],
    }


def _model(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleDict({"cls": nn.Linear(3, 2), "reg": nn.Sequential(nn.Linear(3, 1), nn.Tanh())})
            self.scales = nn.ParameterList([nn.Parameter(lib.ones(3, dtype=lib.float64)), lib.zeros(2, 3)])
            self.extra = nn.ParameterDict(OrderedDict(w=nn.Parameter(lib.tensor(W)), b=lib.zeros(2)))
            self.register_buffer("mask", lib.ones(2, 2))
            self.register_buffer("cache", lib.zeros(3), persistent=False)
            self.register_buffer("count", lib.zeros((), dtype=lib.int64))

        def forward(self, x, head):
            h = x * self.scales[0] + self.extra["w"].sum()
            return self.heads[head](h)

    return Net()


def test_a_model_with_every_container_matches_torch(torch):
    (_, t), (_, m) = _both(torch, _model)
    assert _facts(minigrad, m) == _facts(torch, t)


def test_containers_forward_and_backward_match_torch(torch, sync, close):
    t, m = _model(torch).double(), _model(minigrad).double()
    sync(t, m)
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    for head in ("cls", "reg"):
        t.zero_grad()
        m.zero_grad()
        tout, mout = t(torch.tensor(x), head), m(minigrad.tensor(x), head)
        close(mout, tout)
        tout.sum().backward()
        mout.sum().backward()
        for (n, tp), mp in zip(t.named_parameters(), m.parameters()):
            if tp.grad is None:
                assert mp.grad is None, n
            else:
                close(mp.grad, tp.grad)


def test_module_dict_behaves_like_torch(torch):
    def build(lib):
        nn = lib.nn
        d = nn.ModuleDict([("b", nn.ReLU()), ("a", nn.Linear(2, 2))])
        d.update({"z": nn.Tanh(), "c": nn.Sigmoid()})  # a plain dict keeps its order here (not sorted)
        d["b"] = nn.Identity()
        d.update(OrderedDict(y=nn.Flatten()))
        steps = [list(d), list(d.keys()), [type(v).__name__ for v in d.values()], len(d), "a" in d, "q" in d]
        popped = type(d.pop("z")).__name__
        del d["y"]
        steps += [popped, list(d), _repr(d, lib), [n for n, _ in d.named_modules()], list(d.state_dict())]
        d.clear()
        steps += [len(d), _repr(d, lib), list(d.named_modules())[0][0]]
        return steps

    (_, t), (_, m) = _both(torch, build)
    assert m == t


def test_module_dict_errors_match_torch(torch):
    for lib in (torch, minigrad):
        nn = lib.nn
        with pytest.raises(TypeError, match="ModuleDict.update should be called with an iterable of key/value pairs"):
            nn.ModuleDict(5)
        with pytest.raises(ValueError, match="ModuleDict update sequence element #0 has length 3; 2 is required"):
            nn.ModuleDict([("a", nn.ReLU(), 1)])
        with pytest.raises(TypeError, match="ModuleDict update sequence element #0 should be Iterable"):
            nn.ModuleDict([5])
        with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
            nn.ModuleDict({"a": nn.ReLU()})(lib.ones(1))
        with pytest.raises(KeyError):
            nn.ModuleDict()["missing"]
        with pytest.raises(TypeError, match="is not a Module subclass"):
            nn.ModuleDict({"a": 3})


def test_parameter_list_behaves_like_torch(torch):
    def build(lib):
        nn = lib.nn
        pl = nn.ParameterList([nn.Parameter(lib.tensor(W)), lib.ones(3)])  # the plain tensor becomes a Parameter
        pl.append(lib.zeros(()))
        pl.extend([nn.Parameter(lib.ones(1, 1, 2))])
        pl += [lib.ones(4)]
        pl[1] = lib.full((3,), 2.0)
        facts = [len(pl), [type(p).__name__ for p in pl], [p.requires_grad for p in pl], _repr(pl, lib),
                 [n for n, _ in pl.named_parameters()], list(pl.state_dict()), len(pl[1:4]), _repr(pl[::2], lib),
                 pl[-1].shape == pl[4].shape, "0" in dir(pl)]
        mixed = nn.ParameterList([lib.ones(1), "text", nn.ReLU()])
        facts += [_repr(mixed, lib), [n for n, _ in mixed.named_children()]]
        return facts

    (_, t), (_, m) = _both(torch, build)
    assert m == t


def test_parameter_list_errors_match_torch(torch):
    for lib in (torch, minigrad):
        pl = lib.nn.ParameterList([lib.ones(1)])
        with pytest.raises(IndexError, match="index 1 is out of range"):
            pl[1]
        with pytest.raises(IndexError, match="index -2 is out of range"):
            pl[-2] = lib.ones(1)
        with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable, but got Tensor"):
            pl.extend(lib.ones(2))
        with pytest.raises(RuntimeError, match="ParameterList should not be called."):
            pl(lib.ones(1))


def test_parameter_dict_behaves_like_torch(torch):
    def build(lib):
        nn = lib.nn
        pd = nn.ParameterDict({"w": lib.tensor(W), "b": nn.Parameter(lib.zeros(2))})  # a plain dict: sorted keys
        ordered = nn.ParameterDict(OrderedDict(w=lib.ones(1), b=lib.ones(1)))
        pd.update([("a", lib.ones(2, 2)), ("z", lib.ones(1))])
        pd["c"] = lib.ones(5)
        facts = [list(pd), list(ordered), list(reversed(pd)), _repr(pd, lib), [n for n, _ in pd.named_parameters()],
                 list(pd.state_dict()), "w" in pd, pd.get("nope") is None, type(pd.get("w")).__name__]
        popped = pd.pop("z")
        key, _ = pd.popitem()
        got = pd.setdefault("new", lib.ones(3))
        merged = pd | ordered
        facts += [tuple(popped.shape), key, type(got).__name__, list(pd), list(merged), list(pd.copy()),
                  list(pd.fromkeys(["p", "q"], lib.ones(1)))]
        pd.clear()
        facts += [len(pd), _repr(pd, lib)]
        return facts

    (_, t), (_, m) = _both(torch, build)
    assert m == t


def test_parameter_dict_errors_match_torch(torch):
    for lib in (torch, minigrad):
        pd = lib.nn.ParameterDict()
        with pytest.raises(TypeError, match="Index given to ParameterDict cannot be used as a key as it is not a "
                                            "string \\(type is 'int'\\)"):
            pd[1] = lib.ones(1)
        with pytest.raises(TypeError, match="ParametersDict.update should be called with an iterable"):
            pd.update(3)
        with pytest.raises(ValueError, match="ParameterDict update sequence element #0 has length 1; 2 is required"):
            pd.update([("a",)])
        with pytest.raises(RuntimeError, match="ParameterDict should not be called."):
            pd(lib.ones(1))


def test_optimizer_sees_container_parameters_in_torch_order(torch):
    orders = []
    for lib in (torch, minigrad):
        model = _model(lib)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        names = {id(p): n for n, p in model.named_parameters()}
        orders.append([names[id(p)] for p in opt.param_groups[0]["params"]])
    assert orders[1] == orders[0]


# -- buffers ---------------------------------------------------------------------------------------------------
def test_buffers_in_state_dict_and_iteration_match_torch(torch):
    def build(lib):
        m = _model(lib)
        facts = [[n for n, _ in m.named_buffers()], [tuple(b.shape) for b in m.buffers()],
                 list(m.state_dict()), [n for n, _ in m.named_buffers(recurse=False)], "cache" in m.state_dict()]
        m.cache = lib.ones(3)  # assigning to a registered buffer replaces it, still non-persistent
        m.register_buffer("mask", None)  # a None buffer is listed nowhere
        facts += [[n for n, _ in m.named_buffers()], list(m.state_dict()), m.cache.tolist()]
        return facts

    (_, t), (_, m) = _both(torch, build)
    assert m == t


def test_to_dtype_moves_floating_buffers_and_keeps_integer_ones(torch):
    dtypes = []
    for lib in (torch, minigrad):
        m = _model(lib)
        mask = m.mask
        m.to(lib.float64)
        assert m.mask is not mask  # a buffer is replaced (a parameter keeps its object)
        dtypes.append([(n, str(b.dtype).split(".")[-1]) for n, b in m.named_buffers()]
                      + [(n, str(p.dtype).split(".")[-1]) for n, p in m.named_parameters()])
        m.float()
        dtypes.append([(n, str(b.dtype).split(".")[-1]) for n, b in m.named_buffers()])
    assert dtypes[2:] == dtypes[:2]
    assert ("count", "int64") in dtypes[0] and ("mask", "float64") in dtypes[0]


def test_buffers_round_trip_through_state_dict(torch, close):
    t = _model(torch)
    with torch.no_grad():
        t.mask.fill_(3.0)
        t.count.fill_(7)
        t.cache.fill_(9.0)
    m = _model(minigrad)
    result = m.load_state_dict({k: minigrad.tensor(v.numpy()) for k, v in t.state_dict().items()})
    assert repr(result) == "<All keys matched successfully>"
    close(m.mask, t.mask)
    assert m.count.item() == 7 and m.count.dtype == minigrad.int64
    assert m.cache.tolist() == [0.0, 0.0, 0.0]  # non-persistent: not in the state_dict, not loaded


def test_register_buffer_errors_match_torch(torch):
    for lib in (torch, minigrad):
        m = lib.nn.Linear(2, 2)
        with pytest.raises(KeyError, match="buffer name can.+t contain"):
            m.register_buffer("a.b", lib.ones(1))
        with pytest.raises(KeyError, match="buffer name can.+t be empty string"):
            m.register_buffer("", lib.ones(1))
        with pytest.raises(KeyError, match="attribute 'weight' already exists"):
            m.register_buffer("weight", lib.ones(1))
        with pytest.raises(TypeError, match="cannot assign 'int' object to buffer 'b'"):
            m.register_buffer("b", 3)
        m.register_buffer("b", lib.ones(1))
        with pytest.raises(TypeError, match="cannot assign 'str' as buffer 'b'"):
            m.b = "x"


def test_apply_and_named_modules_reach_into_containers(torch):
    def build(lib):
        nn = lib.nn
        seen = []

        def init(mod):
            seen.append(type(mod).__name__)
            if isinstance(mod, nn.Linear):
                nn.init.zeros_(mod.bias)

        m = _model(lib)
        assert m.apply(init) is m
        return seen, [n for n, _ in m.named_modules()], [mod.bias.sum().item() for mod in m.modules()
                                                          if isinstance(mod, nn.Linear)]

    (_, t), (_, m) = _both(torch, build)
    assert m == t
    assert t[2] == [0.0, 0.0]
