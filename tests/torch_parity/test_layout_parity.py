"""The memory layout of elementwise results against PyTorch 2.13: `.stride()`, `.is_contiguous()` and whether
`.view(-1)` works, when the operands are laid out differently (transposed, permuted, sliced with steps,
broadcast). PyTorch's TensorIterator follows the first operand that tells two dims apart; NumPy falls back to C
order when its operands disagree (minigrad/_layout.py).

Strides are compared on the dims of size > 1: a size-1 dim's stride never moves through memory, and minigrad's
views (NumPy's) already give some of them other values than PyTorch's (`x[:, None]` has stride 0 there).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad._layout import torch_layout


def layout(t) -> tuple:
    """What a learner reads off a result's layout."""
    strides = tuple(s if n > 1 else None for s, n in zip(t.stride(), t.shape))
    try:
        t.view(-1)
        views = True
    except RuntimeError as e:
        assert "view size is not compatible with input tensor's size and stride" in str(e)
        views = False
    return strides, t.is_contiguous(), views


def compare(torch, case) -> None:
    want, got = case(torch), case(mg)
    assert layout(got) == layout(want)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-9, atol=1e-12)


RNG = np.random.default_rng(0)
X = RNG.uniform(0.5, 2, (3, 4))
Y = RNG.uniform(0.5, 2, (4, 3))
Z = RNG.uniform(0.5, 2, (2, 3, 4))

# operands: (name, a function of the library giving the tensor); each op is applied to pairs of them
LAYOUTS = {
    "contiguous": lambda L: L.tensor(X),
    "transposed": lambda L: L.tensor(Y).t(),
    "column": lambda L: L.tensor(Y).t()[:, :1],  # a broadcast operand that is itself strided
    "row": lambda L: L.tensor(X[:1]),
    "stepped": lambda L: L.tensor(np.tile(X, 2))[:, ::2],
    "expanded": lambda L: L.tensor(Y[:1, :1]).expand(3, 4),
    "0-d": lambda L: L.tensor(np.array(1.5)),
}
OPS = {
    "add": lambda L, a, b: a + b,
    "sub alpha": lambda L, a, b: L.sub(a, b, alpha=2),
    "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / b,
    "pow": lambda L, a, b: a ** b,
    "remainder": lambda L, a, b: a % b,
    "floor_divide": lambda L, a, b: a // b,
    "div trunc": lambda L, a, b: L.div(a, b, rounding_mode="trunc"),
    "maximum": lambda L, a, b: L.maximum(a, b),
    "minimum": lambda L, a, b: L.minimum(a, b),
    "clamp_min": lambda L, a, b: L.clamp_min(a, b),
    "clamp": lambda L, a, b: L.clamp(a, b, b + 1),
    "lt": lambda L, a, b: a < b,
    "eq": lambda L, a, b: a == b,
    "and": lambda L, a, b: (a > 1) & (b > 1),
    "logical_and": lambda L, a, b: L.logical_and(a > 1, b > 1),
    "isclose": lambda L, a, b: L.isclose(a, b),
    "where": lambda L, a, b: L.where(a > 1, a, b),
    "where condition": lambda L, a, b: L.where(b > 1, a, a + 1),
    "float32 with float64": lambda L, a, b: a.float() + b,
}


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("first,second", [("transposed", "contiguous"), ("contiguous", "transposed"),
                                          ("stepped", "transposed"), ("transposed", "stepped"),
                                          ("column", "transposed"), ("transposed", "row"), ("row", "transposed"),
                                          ("expanded", "transposed"), ("transposed", "expanded"),
                                          ("0-d", "transposed"), ("transposed", "0-d"),
                                          ("transposed", "transposed")])
def test_binary_result_layout(torch, op, first, second):
    compare(torch, lambda L: OPS[op](L, LAYOUTS[first](L), LAYOUTS[second](L)))


def test_the_first_operand_decides(torch):
    """The corpus case of the fuzzer: `(a.t() * b)` is laid out like `a.t()`, so `view(-1)` raises."""
    def case(L):
        a = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = L.tensor([[1.0, 2.0], [3.0, 4.0]])
        return a.t() * b, b * a.t()

    (tb, bt), (mb, mbt) = case(torch), case(mg)
    assert (mb.stride(), mbt.stride()) == (tb.stride(), bt.stride()) == ((1, 2), (2, 1))
    assert not mb.is_contiguous()
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size and stride"):
        mb.view(-1)
    assert mb.reshape(-1).tolist() == tb.reshape(-1).tolist()


@pytest.mark.parametrize("case", [
    lambda L: L.tensor(Z).permute(2, 0, 1) * L.tensor(Z).permute(2, 1, 0).transpose(1, 2),
    lambda L: L.tensor(Z).permute(1, 2, 0)[None] + L.tensor(Z).permute(1, 2, 0).contiguous(),
    lambda L: L.tensor(Z).permute(2, 0, 1) * L.tensor(Z[0]).t().unsqueeze(1),
    lambda L: L.tensor(Z).transpose(0, 2)[::2] - L.tensor(Z).transpose(0, 2)[1::2],
    lambda L: L.tensor(Z).permute(2, 0, 1).exp(),
    lambda L: L.tensor(Z).permute(2, 0, 1) * 2.0,
    lambda L: 2.0 - L.tensor(Z).permute(2, 0, 1),
    lambda L: L.tensor(Z).permute(2, 0, 1).masked_fill(L.tensor(Z).permute(2, 0, 1) > 1, 0.0),
    lambda L: L.tensor(Y).t().masked_fill(L.tensor(X) > 1, 0.0),
    lambda L: L.where(L.tensor(Y).t() > 1, L.tensor(X), L.tensor(X)),  # the condition comes first
    lambda L: L.clamp(L.tensor(X), L.tensor(Y).t(), L.tensor(X) + 1),
    lambda L: L.clamp(L.tensor(X), None, L.tensor(Y).t()),
], ids=["3-d permutes", "size-1 dim first", "broadcast column", "stepped halves", "unary", "scalar", "rsub scalar",
        "masked_fill", "masked_fill transposed", "where condition", "clamp min tensor", "clamp max tensor"])
def test_more_layouts(torch, case):
    compare(torch, case)


@pytest.mark.parametrize("case", [
    lambda L: L.zeros_like(L.tensor(Y).t()),
    lambda L: L.ones_like(L.tensor(Z).permute(2, 0, 1)),
    lambda L: L.full_like(L.tensor(np.tile(X, 2))[:, ::2], 2.0),
    lambda L: L.zeros_like(L.tensor(Y).t(), dtype=L.int64),
    lambda L: L.ones_like(L.tensor(Y[:1]).expand(5, 3).t()),
    lambda L: L.rand_like(L.tensor(Y).t()) * 0,  # (the values come from each library's own stream)
    lambda L: L.randn_like(L.tensor(Z).transpose(0, 2)) * 0,
    lambda L: L.nn.functional.mse_loss(L.tensor(Y).t(), L.tensor(X), reduction="none"),
    lambda L: L.nn.functional.mse_loss(L.tensor(X), L.tensor(Y).t(), reduction="none"),
    lambda L: L.nn.functional.binary_cross_entropy(L.tensor(Y / 2).t(), L.tensor(X / 2), reduction="none"),
    lambda L: L.nn.functional.binary_cross_entropy(L.tensor(X / 2), L.tensor(Y / 2).t(), reduction="none"),
], ids=["zeros_like", "ones_like 3-d", "full_like stepped", "zeros_like dtype", "ones_like expanded", "rand_like",
        "randn_like", "mse_loss none", "mse_loss none target", "bce none", "bce none target"])
def test_like_and_loss_layouts(torch, case):
    """*_like keep the input's layout (torch.preserve_format); unreduced losses are elementwise results."""
    compare(torch, case)


def test_in_place_keeps_self_layout(torch):
    def case(L):
        x = L.tensor(Y).t()
        x.add_(L.tensor(X))
        return x

    compare(torch, case)


def test_empty_and_one_dim_results(torch):
    for case in (lambda L: L.zeros(0, 3).t() + L.zeros(3, 0), lambda L: L.tensor(X)[0, ::2] * L.tensor(Y)[::2, 0]):
        want, got = case(torch), case(mg)
        assert got.shape == want.shape and got.is_contiguous() == want.is_contiguous()


# -- drawn layouts: permutations, broadcasts and steps of 2-4-d shapes ------------------------------------------------
@st.composite
def operand(draw, shape: tuple, full: bool):
    """(numpy data, how to lay it out): a view of `shape` (or of a shape that broadcasts to it)."""
    n = len(shape)
    sizes = list(shape)
    if not full:
        sizes = [1 if draw(st.booleans()) and draw(st.booleans()) else s for s in sizes]
        sizes = sizes[draw(st.integers(0, n - 1)):]
    m = len(sizes)
    perm = draw(st.permutations(range(m)))
    steps = [draw(st.sampled_from([1, 1, 2])) for _ in range(m)]
    stored = [sizes[p] * steps[p] for p in perm]  # the array the view is taken from, its dims in `perm` order
    data = np.arange(1, 1 + int(np.prod(stored)), dtype=np.float64).reshape(stored) / 7
    back = tuple(int(i) for i in np.argsort(perm))
    return data, back, tuple(slice(None, None, s) for s in steps)


def build(L, spec):
    data, back, steps = spec
    return L.tensor(data).permute(*back)[steps]


@st.composite
def operands(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=2, max_size=4)))
    count = draw(st.integers(1, 3))
    return [draw(operand(shape, full=i == 0 or draw(st.booleans()))) for i in range(count)]


BINARY = [lambda L, a, b: a * b, lambda L, a, b: a - b, lambda L, a, b: L.maximum(a, b),
          lambda L, a, b: a > b, lambda L, a, b: L.where(a > 1, a, b)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=operands(), op=st.sampled_from(range(len(BINARY))))
def test_drawn_layouts_match_torch(torch, specs, op):
    def case(L):
        ts = [build(L, s) for s in specs]
        if len(ts) == 1:
            return ts[0] * 2.0
        if len(ts) == 2:
            return BINARY[op](L, *ts)
        return L.clamp(*ts)

    compare(torch, case)


def test_torch_layout_reads_strides_as_tensor_iterator_does(torch):
    """The rule itself, on arrays with exactly PyTorch's strides (size-1 dims included): chains of products."""
    rng = np.random.default_rng(1)
    for _ in range(300):
        shape = tuple(int(s) for s in rng.integers(1, 4, rng.integers(2, 5)))
        ts = []
        for _ in range(rng.integers(1, 4)):
            sizes = [s if rng.random() < 0.7 else 1 for s in shape]
            perm = rng.permutation(len(sizes))
            t = torch.randn([sizes[p] for p in perm], dtype=torch.float64).permute(*np.argsort(perm).tolist())
            strides = [s if n != 1 else int(rng.integers(1, 9)) for s, n in zip(t.stride(), t.shape)]
            ts.append(t.as_strided(t.shape, strides))
        arrays = [np.lib.stride_tricks.as_strided(t.numpy(), t.shape, [s * 8 for s in t.stride()]) for t in ts]
        want, got = ts[0], arrays[0]
        for t, a in zip(ts[1:], arrays[1:]):  # a product at a time, each result laid out as PyTorch's
            want, got = want * t, torch_layout(got * a, got, a)
        if len(ts) == 1:
            want, got = want * 2.0, torch_layout(got * 2.0, got, 2.0)
        if want.numel():
            assert tuple(s // 8 for s in got.strides) == want.stride()
        np.testing.assert_allclose(got, want.numpy())


@pytest.mark.parametrize("case", [
    lambda L, a: (a.t() * L.tensor(Y)).sum(),  # a's gradient arrives transposed
    lambda L, a: (a.t() ** 2).sum(),
])
def test_leaf_grad_takes_the_leafs_layout(torch, case):
    """PyTorch's AccumulateGrad gives a leaf's first .grad the leaf's strides when the incoming gradient's layout
    differs (a contiguous leaf gets a contiguous .grad); minigrad stores the gradient as it arrives."""
    def grad(L):
        a = L.tensor(X, requires_grad=True)
        case(L, a).backward()
        return a.grad

    compare(torch, grad)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("leaf,case", [
    (lambda L: L.tensor(X), lambda L, a: (a.t() * L.tensor(Y)).sum()),
    (lambda L: L.tensor(Y).t().detach(), lambda L, a: (a * L.tensor(X)).sum()),  # a transposed leaf
    (lambda L: L.tensor(Y).t().detach(), lambda L, a: (a.t() ** 2).sum()),
    (lambda L: L.tensor(Z).permute(2, 0, 1).detach(), lambda L, a: (a.permute(1, 2, 0).contiguous() ** 2).sum()),
    (lambda L: L.tensor(Z)[:, ::2].detach(), lambda L, a: (a * 2.0).sum()),  # not dense: a contiguous .grad
], ids=["contiguous-leaf", "transposed-leaf", "transposed-leaf-transposed-grad", "permuted-leaf", "strided-leaf"])
def test_leaf_grad_follows_the_gradient_layout_contract(torch, leaf, case, create_graph):
    """A leaf's first .grad has the leaf's strides when the leaf is non-overlapping and dense, else is contiguous,
    with and without create_graph."""
    def grad(L):
        a = leaf(L).requires_grad_()
        case(L, a).backward(create_graph=create_graph)
        return a.grad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (backward(create_graph=True)'s reference-cycle warning)
        compare(torch, grad)


STRIDED_INPUTS = {
    "transposed": lambda L: L.tensor(Y).t(),
    "permuted": lambda L: L.tensor(Z).permute(2, 0, 1),
    "stepped": lambda L: L.tensor(np.tile(Z, 2))[:, :, ::2],
    "stepped-transposed": lambda L: L.tensor(np.tile(Z, 2))[:, :, ::2].transpose(0, 2),
    "expanded": lambda L: L.tensor(Y).t().expand(2, 3, 4),
}
ONE_INPUT_OPS = {
    "clone": lambda x: x.clone(), "contiguous": lambda x: x.contiguous(),
    "sum(1)": lambda x: x.sum(1), "sum(0)": lambda x: x.sum(0), "mean(-1)": lambda x: x.mean(-1),
    "sum keepdim": lambda x: x.sum(1, keepdim=True), "var keepdim": lambda x: x.var(0, keepdim=True),
    "amax(1)": lambda x: x.amax(1), "max(1)": lambda x: x.max(1)[0], "prod(1)": lambda x: x.prod(1),
    "std(1)": lambda x: x.std(1), "logsumexp(1)": lambda x: x.logsumexp(1), "norm(dim=1)": lambda x: x.norm(dim=1),
    "softmax(1)": lambda x: x.softmax(1), "log_softmax(0)": lambda x: x.log_softmax(0),
    "cumsum(1)": lambda x: x.cumsum(1), "cumprod(1)": lambda x: x.cumprod(1), "argmax(1)": lambda x: x.argmax(1),
}


@pytest.mark.parametrize("op", list(ONE_INPUT_OPS))
@pytest.mark.parametrize("make", list(STRIDED_INPUTS))
def test_reductions_scans_and_copies_of_strided_inputs_are_laid_out_as_pytorch(torch, make, op):
    """Reductions, scans and softmax give contiguous results; clone keeps its input's order of dims."""
    compare(torch, lambda L: ONE_INPUT_OPS[op](STRIDED_INPUTS[make](L)))
