"""nn.Module's API against PyTorch's: registration, iteration, modes, hooks, state_dict, and node tagging."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import minigrad
import minigrad.nn as nn


def build(nn_):
    """A small model with nesting, a buffer, a shared layer and a bias-free layer, in either library."""

    class Block(nn_.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn_.Linear(4, 4)
            self.act = nn_.ReLU()
            self.register_buffer("scale", nn_.Parameter(nn_.Parameter(_ones(nn_, 4)).detach(), False).detach())
            self.register_buffer("tmp", _ones(nn_, 1), persistent=False)

        def forward(self, x):
            return self.act(self.fc(x)) * self.scale

    class Net(nn_.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn_.Sequential(Block(), nn_.Linear(4, 3, bias=False))
            self.head = nn_.Linear(3, 2)
            self.alias = self.head  # shared: listed once
            self.temperature = nn_.Parameter(_ones(nn_, 1))

        def forward(self, x):
            return self.alias(self.encoder(x)) / self.temperature

    return Net()


def _ones(nn_, n):
    lib = minigrad if nn_ is nn else __import__("torch")
    return lib.ones(n)


def test_names_and_iteration_match_torch(torch):
    t, m = build(torch.nn), build(nn)
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in m.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in m.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in m.named_children()] == [n for n, _ in t.named_children()]
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in t.named_parameters(remove_duplicate=False)]
    assert [n for n, _ in m.named_modules(remove_duplicate=False)] == \
        [n for n, _ in t.named_modules(remove_duplicate=False)]
    assert [n for n, _ in m.encoder.named_parameters(prefix="enc")] == \
        [n for n, _ in t.encoder.named_parameters(prefix="enc")]
    assert len(list(m.parameters(recurse=False))) == len(list(t.parameters(recurse=False))) == 1
    assert list(m.state_dict()) == list(t.state_dict())
    assert len(list(m.modules())) == len(list(t.modules()))
    assert [type(c).__name__ for c in m.children()] == [type(c).__name__ for c in t.children()]
    assert isinstance(m.encoder[0].fc.weight, nn.Parameter)
    assert m.get_submodule("encoder.0.fc") is m.encoder[0].fc
    assert m.get_parameter("encoder.0.fc.bias") is m.encoder[0].fc.bias
    assert "encoder" in dir(m) and "temperature" in dir(m)


def test_repr_of_the_model_matches_torch(torch):
    assert repr(build(nn)) == repr(build(torch.nn))


def test_registration_rules_match_torch(torch):
    for lib in (torch, minigrad):
        m = lib.nn.Linear(2, 2)
        m.extra = lib.nn.Parameter(lib.zeros(3))
        assert "extra" in dict(m.named_parameters())
        m.extra = None  # a registered parameter may be set to None ...
        assert "extra" not in dict(m.named_parameters())
        with pytest.raises(TypeError, match=r"cannot assign '.*' as parameter 'weight' \(.*Parameter or None"):
            m.weight = lib.zeros(2, 2)  # ... but not to a plain tensor
        m.plain = lib.zeros(1)  # a plain tensor attribute is not registered
        assert "plain" not in dict(m.named_parameters()) and "plain" not in m.state_dict()
        m.sub = lib.nn.ReLU()
        assert "sub" in dict(m.named_children())
        del m.sub
        assert "sub" not in dict(m.named_children())
        with pytest.raises(KeyError, match="attribute 'plain' already exists"):
            m.register_buffer("plain", lib.zeros(1))
        with pytest.raises(KeyError):
            m.register_parameter("a.b", None)
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
            m.nope  # noqa: B018

    class Forgot(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(1, 1)

    with pytest.raises(AttributeError, match=r"cannot assign module before Module.__init__\(\) call"):
        Forgot()


def test_missing_forward_raises_like_torch(torch):
    for lib in (torch, minigrad):
        with pytest.raises(NotImplementedError, match='Module \\[Module\\] is missing the required "forward" function'):
            lib.nn.Module()(1)


def test_train_eval_and_training_flags():
    m = build(nn)
    assert all(mod.training for mod in m.modules())
    assert m.eval() is m
    assert not any(mod.training for mod in m.modules())
    m.train()
    assert all(mod.training for mod in m.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train("yes")


def test_zero_grad_and_requires_grad(torch):
    for lib in (torch, minigrad):
        m = lib.nn.Linear(3, 2)
        m(lib.randn(4, 3)).sum().backward()
        m.zero_grad(set_to_none=False)
        assert m.weight.grad is not None and float(m.weight.grad.abs().sum()) == 0
        m.zero_grad()
        assert m.weight.grad is None and m.bias.grad is None
        assert m.requires_grad_(False) is m
        assert not any(p.requires_grad for p in m.parameters())


def test_apply_visits_children_first(torch):
    orders = []
    for lib in (torch, minigrad):
        seen = []
        m = lib.nn.Sequential(lib.nn.Linear(1, 1), lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Tanh()))
        assert m.apply(lambda mod, seen=seen: seen.append(type(mod).__name__)) is m
        orders.append(seen)
    assert orders[0] == orders[1]

    def init_weights(mod):
        if isinstance(mod, nn.Linear):
            nn.init.constant_(mod.weight, 0.5)
            nn.init.zeros_(mod.bias)

    m = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1)).apply(init_weights)
    assert m[2].weight.sum().item() == 1.0 and m[0].bias.abs().sum().item() == 0


def test_to_double_float_keep_parameter_objects():
    m = build(nn)
    params = list(m.parameters())
    m.encoder[0].fc(minigrad.ones(4)).sum().backward()
    assert m.double() is m
    assert [id(p) for p in m.parameters()] == [id(p) for p in params]
    assert all(p.dtype == minigrad.float64 for p in m.parameters())
    assert m.encoder[0].scale.dtype == minigrad.float64 and m.encoder[0].fc.weight.grad.dtype == minigrad.float64
    assert m(minigrad.ones(2, 4, dtype=minigrad.float64)).dtype == minigrad.float64
    m.to(minigrad.float32)
    assert all(p.dtype == minigrad.float32 for p in m.parameters())
    m.float().to("cpu")
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                        "dtype=minigrad.int64"):
        m.to(minigrad.int64)
    with pytest.raises(RuntimeError):
        m.to("cuda")


def test_deepcopy_gives_an_independent_model():
    m = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    m(minigrad.ones(2))  # fills the module-name cache
    c = copy.deepcopy(m)
    assert c[0].weight is not m[0].weight and minigrad.equal(c[0].weight, m[0].weight)
    with minigrad.no_grad():
        c[0].weight.fill_(0)
    assert not minigrad.equal(c[0].weight, m[0].weight)
    assert c(minigrad.ones(2)).grad_fn.next_functions[0][0].metadata["module"] == "0"


# -- hooks --------------------------------------------------------------------------------------------------------
def test_forward_hooks_match_torch(torch):
    logs = []
    for lib in (torch, minigrad):
        log = []
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())
        add = log.append
        h1 = m[0].register_forward_pre_hook(lambda mod, args, add=add: add(("pre", type(mod).__name__, len(args))))
        m[0].register_forward_hook(lambda mod, args, out, add=add: add(("post", tuple(out.shape))))
        m[0].register_forward_hook(lambda mod, args, out, add=add: add("first"), prepend=True)
        m[1].register_forward_hook(lambda mod, args, out: out * 0)  # replaces the output
        m[1].register_forward_pre_hook(lambda mod, args: (args[0] * 0 + 1,))  # replaces the input
        m[1].register_forward_pre_hook(lambda mod, args, kwargs: (args, kwargs), with_kwargs=True)
        out = m(lib.ones(3, 2))
        log.append(out.abs().sum().item())
        h1.remove()
        m(lib.ones(1, 2))
        logs.append(log)
    assert logs[0] == logs[1]


def test_always_call_forward_hook_runs_when_forward_fails(torch):
    for lib in (torch, minigrad):
        seen = []
        lin = lib.nn.Linear(2, 2)
        lin.register_forward_hook(lambda mod, args, out, seen=seen: seen.append(out), always_call=True)
        with pytest.raises(RuntimeError):
            lin(lib.ones(3, 5))
        assert seen == [None]


# -- state_dict -----------------------------------------------------------------------------------------------------
def test_state_dict_round_trip():
    src, dst = build(nn), build(nn)
    sd = src.state_dict()
    assert all(not t.requires_grad for t in sd.values())
    assert "encoder.0.tmp" not in sd and "encoder.0.scale" in sd
    assert sd["head.weight"].data_ptr() == src.head.weight.data_ptr()  # shares storage, like PyTorch
    assert repr(dst.load_state_dict(sd)) == "<All keys matched successfully>"
    for (n1, p1), (n2, p2) in zip(src.state_dict().items(), dst.state_dict().items()):
        assert n1 == n2 and minigrad.equal(p1, p2)
    x = minigrad.randn(2, 4)
    assert minigrad.equal(src(x), dst(x))
    assert dst.state_dict(keep_vars=True)["head.weight"] is dst.head.weight


def test_state_dict_from_torch_loads_into_minigrad(torch, close):
    t, m = build(torch.nn), build(nn)
    m.load_state_dict({k: minigrad.tensor(v.numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    close(m(minigrad.tensor(x)), t(torch.tensor(x)))


STRICT_CASES = {
    "missing": lambda sd: {k: v for k, v in sd.items() if k != "head.bias"},
    "unexpected": lambda sd: {**sd, "head.gamma": sd["head.bias"], "extra.weight": sd["head.bias"]},
    "both": lambda sd: {**{k: v for k, v in sd.items() if not k.startswith("encoder.1")}, "encoder.9.weight": 1},
    "shape": lambda sd: {**sd, "head.weight": sd["head.weight"][:1]},
    "not a tensor": lambda sd: {**sd, "temperature": 3.0},
}


@pytest.mark.parametrize("case", list(STRICT_CASES))
def test_load_state_dict_errors_match_torch(torch, case):
    messages = []
    for lib in (torch, minigrad):
        model = build(lib.nn)
        bad = STRICT_CASES[case](dict(model.state_dict()))
        with pytest.raises(RuntimeError) as info:
            model.load_state_dict(bad)
        messages.append(str(info.value))
    assert messages[1] == messages[0].replace("torch.", "minigrad.")


def test_load_state_dict_non_strict_reports_keys(torch):
    results = []
    for lib in (torch, minigrad):
        model = build(lib.nn)
        sd = dict(model.state_dict())
        sd.pop("head.bias")
        sd["bogus"] = sd["temperature"]
        results.append(repr(model.load_state_dict(sd, strict=False)))
    assert results[0] == results[1]


# -- metadata["module"] ------------------------------------------------------------------------------------------------
def _modules_of(root) -> dict:
    """name of every non-leaf node reachable from `root` -> its metadata["module"] (None if missing)."""
    out, stack, seen = {}, [root], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen or type(node).__name__ == "AccumulateGrad":
            continue
        seen.add(id(node))
        out.setdefault(node.name(), []).append(node.metadata.get("module"))
        stack.extend(n for n, _ in node.next_functions)
    return out


def test_nodes_made_inside_a_sequential_are_tagged_with_the_layer_name():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = minigrad.randn(5, 3, requires_grad=True)
    pre = x * 2  # made outside any module: stays untagged
    out = model(pre)
    tags = _modules_of(out.grad_fn)
    assert tags["AddmmBackward0"] == ["2", "0"]
    assert tags["TBackward0"] == ["0", "2"] or sorted(tags["TBackward0"]) == ["0", "2"]
    assert tags["ReluBackward0"] == ["1"]
    assert tags["MulBackward0"] == [None]


def test_nested_modules_tag_innermost_first_with_qualified_names():
    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.Sequential(nn.Linear(3, 3), nn.Tanh())

        def forward(self, x):
            return self.layers(x.exp()).sin()  # exp and sin are the Encoder's own nodes, around its layers

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()
            self.head = nn.Linear(3, 1)

        def forward(self, x):
            h = self.encoder(x * 3)  # the multiply happens in Net itself
            return self.head(h).sum()

    net = Net()
    out = net(minigrad.randn(2, 3, requires_grad=True))
    tags = _modules_of(out.grad_fn)
    assert tags["SumBackward0"] == [""]  # the root module's own nodes: its name in itself
    assert tags["ExpBackward0"] == ["encoder"] and tags["SinBackward0"] == ["encoder"]
    assert tags["MulBackward0"] == [""]  # made by Net before calling the encoder: found behind its nodes
    assert tags["TanhBackward0"] == ["encoder.layers.1"]
    assert sorted(tags["AddmmBackward0"]) == ["encoder.layers.0", "head"]
    # calling a submodule on its own makes it the root of the call
    alone = net.encoder(minigrad.randn(2, 3))
    assert _modules_of(alone.grad_fn)["TanhBackward0"] == ["layers.1"]


def test_existing_metadata_and_no_grad_are_respected():
    lin = nn.Linear(2, 2)
    with minigrad.no_grad():
        assert lin(minigrad.ones(2)).grad_fn is None

    def hook(module, args, out):
        out.grad_fn.metadata["module"] = "custom"

    lin.register_forward_hook(hook)
    assert lin(minigrad.ones(1, 2)).grad_fn.metadata["module"] == "custom"


# -- containers and the public names ------------------------------------------------------------------------------
def test_sequential_and_modulelist_behave_like_torch(torch):
    results = []
    for lib in (torch, minigrad):
        nn_ = lib.nn
        seq = nn_.Sequential(nn_.Linear(2, 3), nn_.ReLU(), nn_.Linear(3, 1))
        out = [len(seq), type(seq[0]).__name__, type(seq[-1]).__name__, [type(m).__name__ for m in seq]]
        out.append(repr(seq[1:]))
        seq.append(nn_.Sigmoid())
        seq.insert(1, nn_.Tanh())
        del seq[2]
        out.append(repr(seq))
        seq[0] = nn_.Linear(2, 3, bias=False)
        out.append([n for n, _ in seq.named_parameters()])
        with pytest.raises(IndexError, match="index 9 is out of range"):
            seq[9]
        ml = nn_.ModuleList([nn_.Linear(1, 1)])
        ml.append(nn_.ReLU())
        ml.extend([nn_.Tanh(), nn_.Tanh()])
        ml.insert(0, nn_.Sigmoid())
        out.append(repr(ml))
        out.append([n for n, _ in ml.named_parameters()])
        out.append(repr(ml[1:3]))
        del ml[0]
        out.append(repr(ml + nn_.ModuleList([nn_.Identity()])))
        x = lib.ones(4, 2)
        out.append(tuple(seq(x).shape))
        results.append(out)
    assert results[1] == [r.replace("torch.", "minigrad.") if isinstance(r, str) else r for r in results[0]]


CONTRACT_NAMES = {
    "nn": "Module Parameter Linear Sequential ModuleList ReLU Tanh Sigmoid Softmax LogSoftmax Flatten Dropout Identity "
          "MSELoss CrossEntropyLoss NLLLoss BCELoss BCEWithLogitsLoss L1Loss init functional "
          "ModuleDict ParameterList ParameterDict",
    "nn.functional": "relu sigmoid tanh softmax log_softmax linear dropout mse_loss cross_entropy nll_loss "
                     "binary_cross_entropy binary_cross_entropy_with_logits l1_loss leaky_relu gelu",
    "nn.init": "uniform_ normal_ zeros_ ones_ constant_ xavier_uniform_ xavier_normal_ kaiming_uniform_ "
               "kaiming_normal_ calculate_gain",
    "optim": "Optimizer SGD Adam AdamW RMSprop",
    "optim.lr_scheduler": "LRScheduler StepLR CosineAnnealingLR LambdaLR",
    "utils.data": "Dataset TensorDataset DataLoader Subset random_split Sampler SequentialSampler RandomSampler "
                  "SubsetRandomSampler WeightedRandomSampler BatchSampler IterableDataset default_collate",
    "": "save load",
}


@pytest.mark.parametrize("where", list(CONTRACT_NAMES))
def test_contract_names_exist_in_both(torch, where):
    for lib in (torch, minigrad):
        mod = lib
        for part in filter(None, where.split(".")):
            mod = getattr(mod, part)
        for name in CONTRACT_NAMES[where].split():
            assert hasattr(mod, name), f"{lib.__name__}.{where}.{name}"


def test_missing_torch_names_say_minigrad_does_not_implement_them():
    with pytest.raises(AttributeError, match=r"minigrad does not implement torch.nn.Conv3d"):
        nn.Conv3d  # noqa: B018
    with pytest.raises(AttributeError, match=r"minigrad does not implement torch.optim.LBFGS"):
        minigrad.optim.LBFGS  # noqa: B018
    with pytest.raises(AttributeError, match=r"minigrad does not implement torch.optim.lr_scheduler.OneCycleLR"):
        minigrad.optim.lr_scheduler.OneCycleLR  # noqa: B018
    with pytest.raises(AttributeError, match=r"minigrad does not implement torch.nn.functional.grid_sample"):
        nn.functional.grid_sample  # noqa: B018


def test_module_tags_leave_nodes_on_the_engines_plain_path():
    """A module tag is metadata, not a hook: the tagged nodes hold no hook state (the engine runs a node through
    its hook path only when that state exists, which made every node of a model several times slower)."""
    model = minigrad.nn.Sequential(minigrad.nn.Linear(3, 4), minigrad.nn.Tanh(), minigrad.nn.Linear(4, 1))
    out = model(minigrad.ones(2, 3))
    node, seen = out.grad_fn, []
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None or type(n).__name__ == "AccumulateGrad":
            continue
        seen.append(n)
        stack.extend(m for m, _ in n.next_functions)
    assert {n.metadata.get("module") for n in seen} == {"0", "1", "2"}
    assert all(n._extras is None for n in seen)
    n = seen[0]
    n.register_prehook(lambda g: None)
    assert n._extras is not None and n.metadata["module"] == "2"  # hooks and metadata live side by side
