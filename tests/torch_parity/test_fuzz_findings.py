"""What the differential fuzzer found once it drew every op of the registry (issue 28, item 4), one case each.

Each case is the fuzzer's shrunk program, run under PyTorch 2.13 and minigrad by the parity harness (printed
values, warnings, the exception's type and first line). Each failed on the main it was found on.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch_parity_harness as harness


@pytest.fixture(autouse=True)
def warn_always(torch, minigrad):
    """PyTorch (and minigrad, as it) gives some warnings once per process (create_graph's reference cycle);
    warn-always in both makes what these cases compare independent of the tests that ran before."""
    before = [lib.is_warn_always_enabled() for lib in (torch, minigrad)]
    for lib in (torch, minigrad):
        lib.set_warn_always(True)
    yield
    for lib, b in zip((torch, minigrad), before):
        lib.set_warn_always(b)


def scatter_of_a_0d_tensor_is_a_copy(torch, Variable):
    """A 0-d scatter's result was the source's own array: writing the result changed the source."""
    src = torch.tensor(0.0)
    out = torch.scatter(torch.tensor(5.0), 0, torch.tensor(0), src)
    out -= 1.0
    print(src, out)


def scatter_add_of_0d_tensors(torch, Variable):
    """scatter_add on 0-d tensors adds the source (minigrad raised NumPy's IndexError)."""
    print(torch.scatter_add(torch.tensor(1.0), 0, torch.tensor(0), torch.tensor(2.0)))
    print(torch.tensor(3.0).scatter_add(0, torch.tensor(0), torch.tensor(-1.0)))


def scatter_in_place_from_its_own_memory(torch, Variable):
    """scatter_ refuses a source that shares memory with self (PyTorch's assert_no_overlap), even all of it."""
    x = torch.zeros(3)
    x.scatter_(0, torch.tensor([0]), x)


@pytest.mark.parametrize("values", [[0.0, np.inf], [-np.inf, -1.7e308]])
def test_histc_of_an_infinite_range_raises_pytorchs_error(torch, minigrad, values):
    """histc over data reaching inf: PyTorch's RuntimeError (minigrad let NumPy's ValueError through)."""
    def case(lib, Variable):
        lib.histc(lib.tensor(np.array(values)), 4)

    problems = harness.differences(case, torch, minigrad)
    assert problems is None, problems


_HISTC_DATA = ([-np.inf], [np.inf, np.inf], [np.nan], [-np.nan], [np.nan, 0.0], [-np.inf, np.inf], [1.7e308],
               [-1.7e308, 1.7e308], [3e38], [65504.0], [0.0], [], [1.0, 0.0, 0.5])
_HISTC_ARGS = ((4,), (4, 1, 1), (4, -np.inf, 0), (4, np.nan, 1), (4, 2, 1), (0,), (-1,), (4, -1e39, 1e39),
               (4, 0, 1.7e308), (4, -70000, 70000), (3, -1.0, 1.5))


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "uint8", "bool"])
def test_histc_checks_and_counts_as_pytorch(torch, minigrad, dtype):
    """Every bad input the fuzzer can give histc (data or bounds reaching inf or NaN, an empty range, bins <= 0,
    bounds beyond the dtype, integer and bool data): PyTorch's error, texts equal (an empty range is widened by
    one step of the dtype, a NaN among several elements prints as -nan); else its counts, binned in the dtype
    (seed 14 program 461: minigrad printed [-inf, -inf] where PyTorch prints [-inf, -1.79769e+308])."""
    def case(lib, Variable):
        for values, args in itertools.product(_HISTC_DATA, _HISTC_ARGS):
            with np.errstate(all="ignore"):
                x = np.array(values).astype(dtype)
            try:
                print(values, args, lib.histc(lib.tensor(x), *args))
            except (RuntimeError, NotImplementedError) as e:
                print(values, args, type(e).__name__, e)

    problems = harness.differences(case, torch, minigrad)
    assert problems is None, problems


@pytest.mark.parametrize("values", [[0.0, np.inf], [-np.inf, 0.0]])
def test_histogram_of_an_infinite_range_raises_pytorchs_error(torch, minigrad, values):
    """histogram over data reaching inf: PyTorch's RuntimeError (minigrad let NumPy's ValueError through)."""
    def case(lib, Variable):
        lib.histogram(lib.tensor(np.array(values)), 4)

    problems = harness.differences(case, torch, minigrad)
    assert problems is None, problems


@pytest.mark.parametrize("sizes", [(3, 3, None, None), (1, 3, None, None), (None, 3, None, None), (1, None, None, None),
                                   (1, 1, 3, None), (1, 1, 1, 2), (None, None, 1, 1)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_checks_each_channel_tensor_size(torch, minigrad, sizes, training):
    """batch_norm of 1 channel with a running_mean, running_var, weight or bias of another size: PyTorch's error
    naming the first wrong one (minigrad computed on with broadcasting); in evaluation mode, both running
    statistics are needed (minigrad used the batch's)."""
    def case(lib, Variable):
        mean, var, weight, bias = (None if n is None else lib.full((n,), 0.5) for n in sizes)
        print(lib.nn.functional.batch_norm(lib.zeros(2, 1, 3), mean, var, weight, bias, training=training))

    problems = harness.differences(case, torch, minigrad)
    assert problems is None, problems


def embedding_weight_must_be_2d(torch, Variable):
    torch.nn.functional.embedding(torch.tensor([2, 1, 0]), torch.zeros(3, 2, 2))


def floor_divide_in_place_names_itself_in_backward(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True) * 1
    x.floor_divide_(torch.tensor([2.0, 2.0]))
    x.sum().backward()


def fold_of_inf_minus_inf_gives_no_numpy_warning(torch, Variable):
    cols = torch.tensor(np.array([[[1.0, -np.inf], [1.0, 1.0], [np.inf, 1.0], [1.0, 1.0]]]))  # both at (1, 0)
    print(torch.nn.functional.fold(cols, (3, 2), (2, 2), stride=1))


def layer_norm_with_an_inf_weight_gives_no_numpy_warning(torch, Variable):
    x = torch.zeros(1, 3, 4)
    w = torch.tensor(np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, np.inf, 0.0]], dtype="float32"))
    print(torch.nn.functional.layer_norm(x, (3, 4), weight=w, bias=w))


def avg_pool2d_of_inf_and_minus_inf_gives_no_numpy_warning(torch, Variable):
    x = torch.tensor(np.array([[[[np.inf, -np.inf], [1.0, 2.0]]]]))
    print(torch.nn.functional.avg_pool2d(x, 2))


def adaptive_avg_pool2d_double_backward_node(torch, Variable):
    """Under create_graph the gradient is AdaptiveAvgPool2DBackwardBackward0 (edges to grad_output and self)."""
    x = torch.tensor(np.arange(12.0).reshape(1, 1, 3, 4) / 8, requires_grad=True)
    y = torch.nn.functional.adaptive_avg_pool2d(x, (2, 3))
    (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    print(g.grad_fn.name(), [None if n is None else n.name() for n, _ in g.grad_fn.next_functions])
    (gg,) = torch.autograd.grad((g * g).sum(), x)
    print(g, gg)


def avg_pool2d_gradient_under_create_graph_requires_grad(torch, Variable):
    """PyTorch's AvgPool2DBackwardBackward0 has an edge to the input too: with a constant upstream gradient (an
    empty selection) the input's gradient still requires grad."""
    x = torch.zeros(1, 4, 4, requires_grad=True)
    y = torch.nn.functional.avg_pool2d(x, 2)
    # (autograd.grad, not backward: backward's create_graph warning comes once per process in minigrad, so the
    # output would depend on the tests run before)
    (g,) = torch.autograd.grad(y[torch.tensor([], dtype=torch.int64)].sum() * 2, x, create_graph=True)
    print(g.requires_grad, g.grad_fn.name(), [None if n is None else n.name() for n, _ in g.grad_fn.next_functions])


def sort_and_topk_free_their_saved_indices(torch, Variable):
    """SortBackward0/1 and TopkBackward0 free their saved indices after a backward: a second one raises
    (minigrad kept them, and a second backward through sort or topk ran)."""
    x = torch.tensor([0.0, 2.0, 1.0], requires_grad=True)
    for pick in (lambda: torch.sort(x)[0], lambda: torch.sort(x, stable=True)[0], lambda: torch.topk(x, 2)[0]):
        loss = pick().sum()
        loss.backward()
        try:
            loss.backward()
        except RuntimeError as e:
            print(str(e).split(" (")[0])


def smooth_l1_loss_double_backward_node(torch, Variable):
    """Seed 14 program 97: under create_graph the gradient is PyTorch's fused SmoothL1LossBackwardBackward0 (edges
    to grad_output, self and target), where minigrad composed a DivBackward1 of ordinary nodes."""
    x = torch.tensor(np.array([[0.0]]), requires_grad=True)
    y = torch.nn.functional.smooth_l1_loss(x, torch.tensor(np.array([[0.0]])))
    g = torch.autograd.grad(y, [x, y], create_graph=True)
    print(g[0].grad_fn.name(), [None if n is None else n.name() for n, _ in g[0].grad_fn.next_functions], g)


CASES = [avg_pool2d_gradient_under_create_graph_requires_grad, sort_and_topk_free_their_saved_indices,
         scatter_of_a_0d_tensor_is_a_copy,
         scatter_add_of_0d_tensors, scatter_in_place_from_its_own_memory, embedding_weight_must_be_2d,
         floor_divide_in_place_names_itself_in_backward, fold_of_inf_minus_inf_gives_no_numpy_warning,
         adaptive_avg_pool2d_double_backward_node, layer_norm_with_an_inf_weight_gives_no_numpy_warning,
         avg_pool2d_of_inf_and_minus_inf_gives_no_numpy_warning, smooth_l1_loss_double_backward_node]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=fn.__name__) for fn in CASES])
def test_fuzz_finding_behaves_as_pytorch(fn, torch, minigrad):
    problems = harness.differences(fn, torch, minigrad)
    if problems:
        pytest.fail(problems, pytrace=False)


_POOLS = {  # (input shape, the pooling): windows that overlap (adaptive 7 -> 3) and windows with a border
    "adaptive_avg_pool1d": ((2, 1, 7), lambda F, x: F.adaptive_avg_pool1d(x, 3)),
    "adaptive_avg_pool2d": ((1, 2, 5, 7), lambda F, x: F.adaptive_avg_pool2d(x, (3, 4))),
    "avg_pool1d": ((2, 1, 7), lambda F, x: F.avg_pool1d(x, 3, 2, 1)),
    "avg_pool2d": ((1, 2, 5, 7), lambda F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)),
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", sorted(_POOLS))
def test_pooling_backward_of_an_infinite_gradient(torch, minigrad, name, create_graph):
    """An infinite incoming gradient (and nan, -inf) reaches only the input cells its window covers: PyTorch adds
    each window's share into those cells. minigrad's adaptive pooling multiplied by a dense averaging matrix,
    whose zeros turned inf into nan in every other cell (seed 14 program 262: a wrong gradient)."""
    shape, pool = _POOLS[name]
    x = np.random.default_rng(0).standard_normal(shape)
    grads = {}
    for lib in (torch, minigrad):
        t = lib.tensor(x, requires_grad=True)
        y = pool(lib.nn.functional, t)
        g = np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape))
        g.reshape(-1)[[0, -1]] = np.inf
        g.reshape(-1)[[1, -2]] = -np.inf
        g.reshape(-1)[y.numel() // 2] = np.nan
        (gx,) = lib.autograd.grad(y, t, lib.tensor(g), create_graph=create_graph)
        grads[lib.__name__] = gx.detach().numpy()
    np.testing.assert_allclose(grads["minigrad"], grads["torch"], rtol=1e-9, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_adaptive_avg_pool2d_gradient_rounds_as_pytorchs(torch, minigrad, dtype):
    """PyTorch's kernel goes window by window, dividing each gradient by the window's height, then width, and
    adding it into the window's cells in the tensor's dtype: the same steps give the same bits."""
    x = np.random.default_rng(1).standard_normal((2, 3, 7, 9)).astype(dtype)
    g = np.random.default_rng(2).standard_normal((2, 3, 4, 5)).astype(dtype)
    grads = []
    for lib in (torch, minigrad):
        t = lib.tensor(x, requires_grad=True)
        lib.nn.functional.adaptive_avg_pool2d(t, (4, 5)).backward(lib.tensor(g))
        grads.append(t.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


_EXPANDED = {  # (base shape, the expanded view written in place)
    "rows": ((3,), lambda b: b.expand(3, 3)),
    "columns": ((3, 1), lambda b: b.expand(3, 3)),
    "one row": ((1,), lambda b: b.expand(1, 3)),
    "batch and rows": ((2, 1, 3), lambda b: b.expand(2, 3, 3)),
    "transposed": ((3, 2), lambda b: b.t()[None].expand(2, 2, 3)),
    "5-d, first dim": ((2, 3, 3, 3), lambda b: b.expand(2, 2, 3, 3, 3)),
    "4-d, second dim": ((2, 1, 3, 3), lambda b: b.expand(2, 2, 3, 3)),
    "4-d, rows": ((2, 1, 3), lambda b: b.expand(1, 2, 3, 3)),
    "1-d": ((1,), lambda b: b.expand(3)),
}


@pytest.mark.parametrize("layout", sorted(_EXPANDED))
def test_tril_and_triu_in_place_on_an_expanded_view(torch, minigrad, layout):
    """PyTorch's tril_/triu_ write only the zeros, through the strides, when the tensor has at most 3 dims or its
    batch dims are contiguous matrices (the first may be expanded): an expanded view is then written, and a memory
    location any of whose positions is zeroed reads 0 everywhere, in the base too (seed 14 programs 251 and 437;
    minigrad raised the internal-overlap error). Elsewhere PyTorch's copy_ back raises that error; a backward
    through the write raises it too (CopySlices writes the gradient into the expanded view)."""
    shape, view = _EXPANDED[layout]

    def one(lib, op, diagonal, requires_grad):
        leaf = lib.tensor(np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape), requires_grad=requires_grad)
        base = leaf * 1 if requires_grad else leaf
        v = view(base)
        out = getattr(v, op)(diagonal)
        print(out is v, v.detach(), base.detach(), v._version, base._version)  # (the view's node: differences.md)
        if requires_grad:
            print(base.grad_fn.name())
            (v * lib.arange(float(v.numel())).reshape(tuple(v.shape))).sum().backward()
            print(leaf.grad)

    def case(lib, Variable):
        for op, diagonal, requires_grad in itertools.product(("tril_", "triu_"), (0, -1), (False, True)):
            print(op, diagonal, requires_grad)
            try:
                one(lib, op, diagonal, requires_grad)
            except RuntimeError as e:
                print(type(e).__name__, e)

    problems = harness.differences(case, torch, minigrad)
    assert problems is None, problems


@pytest.mark.parametrize("number", [1.1283791670955126, 0.1, 3.0, 70000.0, 2])
def test_float16_times_and_over_a_number_round_once_as_pytorch(torch, minigrad, number):
    """PyTorch's CPU kernels multiply or divide a float16 tensor by a number in float32, with the number as a
    float32, and round once; NumPy rounds the number to float16 first. erf's derivative, 2/√π · exp(-x²) · grad,
    showed it (seed 14 program 161: 0.990723 where PyTorch has 0.991211)."""
    x = np.random.default_rng(0).standard_normal(500).astype(np.float16)
    out = []
    for lib in (torch, minigrad):
        t = lib.tensor(x, requires_grad=True)
        t.erf().sum().backward()
        y = lib.tensor(x)
        out.append([t.grad.numpy(), (y * number).numpy(), (number * y).numpy(), (y / number).numpy(),
                    y.mul(number).numpy(), y.div(number).numpy()])
    for theirs, ours in zip(*out):
        np.testing.assert_array_equal(ours, theirs)


_GELU_INPUTS = {
    "contiguous": lambda lib, dt: lib.tensor(np.array([0.0, np.inf, -np.inf, 1.0], dt)),
    "one element": lambda lib, dt: lib.tensor(np.array([np.inf], dt)),
    "0-d": lambda lib, dt: lib.tensor(np.array(np.inf, dt)),
    "transposed": lambda lib, dt: lib.tensor(np.array([[np.inf, 0.0], [1.0, np.inf]], dt)).t(),
    "strided": lambda lib, dt: lib.tensor(np.array([np.inf, 0.0] * 5, dt))[::2],
    "expanded": lambda lib, dt: lib.tensor(np.array([np.inf, 0.0], dt)).expand(3, 2),
}


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_gelu_of_inf_as_pytorchs_kernels(torch, minigrad, dtype):
    """gelu(inf): PyTorch's float32/float16 SIMD kernel (a contiguous tensor of two or more elements) gives nan,
    its scalar path (one element, strided, transposed, expanded) and float64 give inf (seed 14 program 16);
    the tanh form of float16 is computed in float32 and rounded once."""
    rtol = {"float64": 1e-9, "float32": 1e-5, "float16": 0.0}[dtype]
    for name, make in _GELU_INPUTS.items():
        for approximate in ("none", "tanh"):
            ours, theirs = (lib.nn.functional.gelu(make(lib, dtype), approximate=approximate).numpy()
                            for lib in (minigrad, torch))
            np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=0, equal_nan=True, err_msg=f"{name} {approximate}")


def xlogy_gradients_where_self_is_zero(torch, Variable):
    """xlogy's gradient for self is log(other) even where self is 0 (0 only where other <= 0, or for a number
    other, unless other > 0): seed 14 program 478, minigrad gave 0 where PyTorch gives log(1.5), a wrong gradient."""
    for s in (0.0, 2.0, -1.0):
        for o in (1.5, 0.0, -1.0, float("nan"), float("inf")):
            x = torch.tensor([s], dtype=torch.float64, requires_grad=True)
            torch.xlogy(x, o).sum().backward()
            x2 = torch.tensor([s], dtype=torch.float64, requires_grad=True)
            y = torch.tensor([o], dtype=torch.float64, requires_grad=True)
            torch.xlogy(x2, y).sum().backward()
            x3 = torch.tensor([s], dtype=torch.float64, requires_grad=True)
            (g,) = torch.autograd.grad((torch.xlogy(x3, o) * x3).sum(), x3, create_graph=True)
            print(s, o, x.grad, x2.grad, y.grad, g, None if g.grad_fn is None else g.grad_fn.name())


def test_xlogy_gradients_where_self_is_zero(torch, minigrad):
    problems = harness.differences(xlogy_gradients_where_self_is_zero, torch, minigrad)
    assert problems is None, problems


def pooling_of_empty_dims(torch, Variable):
    """Pooling allows an empty batch only: PyTorch's "optional 0 dim batch size" errors (avg_pool1d of a (0, 3)
    input reaches avg_pool2d as (0, 1, 3): seed 510 program 234, minigrad returned an empty result), and the 1-d
    poolings' own dimension checks."""
    F = torch.nn.functional
    for shape in [(0, 1, 3), (2, 0, 3, 3), (0, 2, 3, 3), (2, 2, 0, 3), (3, 0, 3), (2, 0, 3)]:
        for f in (lambda x: F.avg_pool2d(x, 1), lambda x: F.max_pool2d(x, 1), lambda x: F.avg_pool1d(x, 1),
                  lambda x: F.max_pool1d(x, 1)):
            try:
                print(shape, f(torch.zeros(shape)).shape)
            except RuntimeError as e:
                print(shape, e)


def test_pooling_of_empty_dims(torch, minigrad):
    problems = harness.differences(pooling_of_empty_dims, torch, minigrad)
    assert problems is None, problems


@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_adaptive_avg_pool2d_forward_adds_as_pytorchs_kernel(torch, minigrad, dtype):
    """Each window's cells added one by one, then divided by its height and width: a mean of [-0.99, 0.84, 0.15]
    is a tiny negative number in PyTorch (log2 gives nan), where averaging matrices gave a tiny positive one
    (seed 511 program 429); random windows come out bit-equal."""
    x1 = np.zeros((1, 3, 7, 1))
    x1[0, 2, 2:5, 0] = [-0.99, 0.84, 0.15]
    x = np.random.default_rng(3).standard_normal((2, 3, 7, 9))
    out = [[lib.nn.functional.adaptive_avg_pool2d(lib.tensor(x1.astype(dtype)), (3, None)).log2_().numpy(),
            lib.nn.functional.adaptive_avg_pool2d(lib.tensor(x.astype(dtype)), (4, 5)).numpy()]
           for lib in (torch, minigrad)]
    for theirs, ours in zip(*out):
        np.testing.assert_array_equal(ours, theirs)



def _graph_names(fn, depth: int = 6):
    """A node's name and its next nodes', `depth` levels down: the shape of a second- or third-order graph."""
    if fn is None:
        return None
    name = fn.name().replace("minigrad::", "torch::")
    if depth == 0:
        return name
    return name, [_graph_names(n, depth - 1) for n, _ in fn.next_functions]


def _smooth_l1_orders(lib, reduction: str, beta: float) -> tuple:
    """The second-order graph of smooth_l1_loss (gradients of input, target, under create_graph) and the
    third-order gradients of a loss built on them, with respect to input, target and the upstream gradient."""
    rng = np.random.default_rng(7)
    x0 = rng.uniform(-2, 2, (3, 4))
    x0[0, :3] = [0.0, beta, -beta]  # on the kinks: |d| == beta is outside the quadratic part
    x = lib.tensor(x0, requires_grad=True)
    t = lib.tensor(rng.uniform(-0.5, 0.5, (3, 4)) * (x0 != 0), requires_grad=True)
    y = lib.nn.functional.smooth_l1_loss(x, t, reduction=reduction, beta=beta)
    up = lib.tensor(rng.uniform(0.5, 1.5, tuple(y.shape)), requires_grad=True)
    gx, gt = lib.autograd.grad(y, [x, t], up, create_graph=True)
    third = lib.autograd.grad((gx * gx).sum() + (gt * gt * gt).sum(), [x, t, up], allow_unused=True,
                              materialize_grads=True, create_graph=True)
    graphs = [_graph_names(g.grad_fn) for g in (gx, gt, *third)]
    values = [g.detach().numpy(force=True).copy() for g in (gx, gt, *third)]  # (force: PyTorch's ZeroTensor)
    return graphs, values


@pytest.mark.parametrize("beta", [1.0, 0.5, 0.0])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_smooth_l1_loss_second_and_third_order_as_pytorch(torch, minigrad, reduction, beta):
    """The graph a create_graph backward of smooth_l1_loss records (SmoothL1LossBackwardBackward0, or for beta 0
    the l1_loss graph PyTorch's functional switches to), its values, and the third-order gradients through it,
    with their graphs (the double backward's MulBackward0, DivBackward1 by beta and by N, NegBackward0)."""
    theirs, ours = _smooth_l1_orders(torch, reduction, beta), _smooth_l1_orders(minigrad, reduction, beta)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_smooth_l1_loss_gradient_tangent_as_pytorch(torch, minigrad, reduction):
    """Forward over reverse: the tangent of a create_graph gradient comes from SmoothL1LossBackwardBackward0's
    forward rule."""
    x0 = np.array([[0.0, 0.3, -2.0], [1.5, 0.5, -0.2]])
    out = []
    for lib in (torch, minigrad):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(x0), lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3)))
            w = lib.tensor(x0 * 0.3 + 0.2, requires_grad=True)
            y = lib.nn.functional.smooth_l1_loss(x * w, lib.tensor(np.full_like(x0, 0.1)), reduction=reduction,
                                                 beta=0.7)
            (g,) = lib.autograd.grad(y.sum(), w, create_graph=True)
            out.append(fw.unpack_dual(g).tangent.detach().numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-9, atol=1e-12)


def _linspace_draws(n: int) -> list:
    """(start, end, steps, dtype) draws over many magnitudes, with integer ends and the kernel's halfway point."""
    rng = np.random.default_rng(28)
    draws = []
    for k in range(n):
        dtype = ["float64", "float32", "float16", "int64", "int32", "uint8"][k % 6]
        scale = 10.0 ** rng.integers(-6, 7) if dtype.startswith("float") else 10.0 ** rng.integers(0, 3)
        start, end = rng.uniform(-1, 1, 2) * scale
        if k % 7 == 0:
            start, end = float(rng.integers(-50, 50)), float(rng.integers(-50, 50))
        if dtype == "uint8":
            start, end = abs(start), abs(end)
        draws.append((float(start), float(end), int(rng.integers(2, 3000 if k % 5 == 0 else 200)), dtype))
    return draws


def test_linspace_is_pytorchs_kernel_bit_for_bit(torch, minigrad):
    """PyTorch's CPU linspace fills each half from its own end with a fused multiply-add (one rounding): in
    float64 the edges histogram counts against moved by an ulp (seed 14 program 251), and float32's middle value
    of linspace(-3, 3, 11) is -1.19e-07. Every value is bit-equal to PyTorch's, in every dtype."""
    def run(lib, start, end, steps, dtype):
        try:
            out = lib.linspace(start, end, steps, dtype=getattr(lib, dtype)).numpy()
        except RuntimeError as e:  # an end beyond float16's or uint8's range: c10's overflow error
            return str(e)
        return out.dtype, out.tobytes()

    bad = []
    unbounded = [(v, 1.0, 4, dtype) for v in (np.inf, -np.inf, np.nan) for dtype in ("float64", "float32", "int64")]
    for draw in [(-3.0, 3.0, 11, "float32"), (-1.8, 1.9, 5, "float64")] + unbounded + _linspace_draws(900):
        if run(minigrad, *draw) != run(torch, *draw):
            bad.append(draw)
    assert not bad, f"{len(bad)} draws differ, e.g. {bad[:3]}"


def test_histogram_edges_and_counts_are_pytorchs(torch, minigrad):
    """histogram's edges are linspace's (PyTorch's kernel) and an element on an inner edge falls in the bin that
    edge opens: seed 14 program 251 counted 18, 0 where PyTorch counts 17, 1."""
    rng = np.random.default_rng(251)
    cases = [(np.array([0.0] * 15 + [0.05, 1.9, 0.0, -1.8, 0.0]), 4, None)]
    for k in range(400):
        x = np.round(rng.uniform(-3, 3, int(rng.integers(0, 30))), int(rng.integers(0, 3)))
        x = x.astype(["float64", "float32"][k % 2])
        if k % 11 == 0:
            x[:] = 1.5  # an empty span: widened by 0.5 each side
        span = None if k % 3 else tuple(sorted(np.round(rng.uniform(-3, 3, 2), 1).tolist()))
        cases.append((x, int(rng.integers(1, 12)), span))
    bad = []
    for x, bins, span in cases:
        (h0, e0), (h1, e1) = (lib.histogram(lib.tensor(x), bins, range=span) for lib in (torch, minigrad))
        if h1.numpy().tobytes() != h0.numpy().tobytes() or e1.numpy().tobytes() != e0.numpy().tobytes():
            bad.append((x.dtype.name, x.tolist(), bins, span))
    assert not bad, f"{len(bad)} cases differ, e.g. {bad[:2]}"


def scatter_add_of_zero_dim_tensors(torch, Variable):
    """scatter_add, scatter and gather of 0-d tensors, backward and create_graph: seed 511 program 137 leaked
    NumPy's AxisError from the backward of scatter_add's src (a 0-d gather on arrays)."""
    for scale in (1.0, 3.0):
        x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
        v = x * scale
        w = v.scatter_add(0, torch.tensor(0), v * v)
        w.backward(torch.tensor(1.8, dtype=torch.float64))
        print(w, x.grad, w.grad_fn.name())
        x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
        w = torch.zeros((), dtype=torch.float64).scatter_add(0, torch.tensor(0), x * scale)
        (g,) = torch.autograd.grad(w, x, create_graph=True)
        print(g, g.requires_grad)
        x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
        v = x * scale
        (g,) = torch.autograd.grad(v.scatter_add(0, torch.tensor(0), v * v), x, create_graph=True)
        g.backward()
        print(g, x.grad, g.grad_fn.name())
        x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
        (x * scale).gather(0, torch.tensor(0)).backward()
        print(x.grad)


def test_scatter_add_of_zero_dim_tensors(torch, minigrad):
    problems = harness.differences(scatter_add_of_zero_dim_tensors, torch, minigrad)
    assert problems is None, problems


def index_select_and_embedding_free_their_index(torch, Variable):
    """IndexSelectBackward0 and EmbeddingBackward0 save their index as a tensor, so a second backward without
    retain_graph raises as for any freed saved tensor (seed 511 program 420: minigrad ran it again); with
    retain_graph it runs, and `_saved_` names read the index until it is freed."""
    for retain in (True, False):  # the second round ends at PyTorch's error
        x = torch.zeros(1, 4, requires_grad=True)
        loss = x.index_select(1, torch.tensor([1, 0, 0, 0, 0])).mean()
        loss.backward(retain_graph=retain)
        print(loss.grad_fn.next_functions[0][0]._saved_index)
        loss.backward()
        print(x.grad)
        w = torch.zeros(5, 2, requires_grad=True)
        loss = torch.nn.functional.embedding(torch.tensor([1, 2, 1]), w).sum()
        loss.backward(retain_graph=retain)
        loss.backward()
        print(w.grad)


def test_index_select_and_embedding_free_their_index(torch, minigrad):
    problems = harness.differences(index_select_and_embedding_free_their_index, torch, minigrad)
    assert problems is None, problems
