"""Issue 34: the value, gradient and crash findings of the differential fuzzer on fresh seeds 1300-1399, one case
each (program numbers in the docstrings).

Each case runs under PyTorch 2.13 and minigrad by the parity harness (printed values, warnings, the exception's
type and first line); values are printed with `tolist()` where the sign of a zero or a NaN's place is the point.
Each failed on the code it was found on.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch_parity_harness as harness


def scatter_add_of_zero_dim_tensors(torch, Variable):
    """A 0-d scatter_add adds the one element itself: -0. + -0. is -0. (NumPy's sum of [-0.] is +0.: seed 1300
    program 9), and bool stays bool (the sum was int64, which NumPy refused to add into a bool: seed 1303 program
    984, a crash)."""
    zero = torch.tensor(0)
    for value, dtype in ((-0.0, "float64"), (0.0, "float32"), (False, "bool"), (True, "bool"), (7, "int8")):
        x = torch.tensor(np.array(value, dtype=dtype))
        print(torch.scatter_add(x, 0, zero, x).tolist(), x.scatter_add(0, zero, x).dtype)
    print(torch.scatter_add(torch.tensor(-0.0), 0, torch.tensor([], dtype=torch.int64).reshape(()), torch.tensor(-0.0)))


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_nearest_interpolation_gradient_sums_in_the_kernels_order(torch, minigrad, dtype):
    """interpolate(mode='nearest')'s backward adds each output's gradient onto its input element from +0, in the
    outputs' order (float16 in float32), as PyTorch's kernel: one infinite gradient made minigrad's whole row NaN
    (a matmul with a 0/1 matrix: 0 * inf; seed 1300 program 837), and -0. gradients stay -0. only where PyTorch's
    do. Also under create_graph."""
    def case(lib, Variable):
        rng = np.random.default_rng(0)
        for shape, kwargs in (((1, 2, 3, 4), {"scale_factor": 2}), ((2, 1, 3, 4), {"size": (5, 7)}),
                              ((1, 2, 5), {"scale_factor": 1.5}), ((2, 2, 3), {"size": 2})):
            x = lib.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)
            y = lib.nn.functional.interpolate(x, **kwargs)
            gy = (rng.standard_normal(tuple(y.shape)) * 1.7).astype(dtype)
            gy.flat[0], gy.flat[1], gy.flat[3], gy.flat[-1] = -0.0, np.inf, -0.0, np.nan
            print(lib.autograd.grad(y, x, lib.tensor(gy), retain_graph=True)[0].tolist())
            print(lib.autograd.grad(y, x, lib.tensor(gy), create_graph=True)[0].tolist())

    problems = harness.differences(case, torch, minigrad)
    assert problems is None, problems


def max_pool_gradient_added_to_positive_zeros(torch, Variable):
    """max_pool's backward adds each window's gradient into zeros, as PyTorch's kernel: a -0. gradient arrives as
    +0. (minigrad wrote it where windows do not overlap: seed 1301 program 243)."""
    x = torch.zeros(1, 1, 4, 4, requires_grad=True)
    for kwargs in ({"kernel_size": 2}, {"kernel_size": 3, "stride": 1}, {"kernel_size": 2, "return_indices": True}):
        y = torch.nn.functional.max_pool2d(x, **kwargs)
        y = y[0] if isinstance(y, tuple) else y
        g = torch.full(tuple(y.shape), -0.0)
        print(torch.autograd.grad(y, x, g, retain_graph=True)[0].tolist())
        print(torch.autograd.grad(y, x, g, create_graph=True)[0].tolist())
    x1 = torch.zeros(1, 1, 4, requires_grad=True)
    y = torch.nn.functional.max_pool1d(x1, 2)
    print(torch.autograd.grad(y, x1, torch.full(tuple(y.shape), -0.0))[0].tolist())


def max_pool1d_without_gradient_is_not_a_view(torch, Variable):
    """Without a gradient to record PyTorch runs max_pool1d's own kernel: its result is a tensor of its own, so
    detach_() works (minigrad returned a squeezed view of max_pool2d's and raised "Can't detach views in-place":
    seed 1301 program 355); with one, it is the view of max_pool2d's result, as before."""
    for requires_grad in (False, True):
        x = torch.tensor([[[0.0, 1.0, 2.0, np.nan]]], requires_grad=requires_grad)
        y = torch.nn.functional.max_pool1d(x, 3, 2, 1)
        print(y._is_view(), y.is_contiguous(), y.grad_fn is None, y.tolist())
        try:
            y.detach_()
            print("detached")
        except RuntimeError as e:
            print("raised:", str(e).split(".")[0])
        with torch.no_grad():
            print(torch.nn.functional.max_pool1d(x, 2)._is_view())
        print(torch.nn.functional.max_pool1d(x, 2, return_indices=True)[0]._is_view())
    y = torch.nn.functional.max_pool1d(torch.tensor([[0.0, 1.0, 2.0, 3.0]]), 2)
    y.detach_()
    print(y.tolist(), y.shape)


def in_place_write_on_an_expanded_view_when_only_the_base_is_asked(torch, Variable):
    """CopySlices writes the base's gradient back through the expanded view only when that gradient is wanted:
    backward(inputs=[base]) and autograd.grad of the base need the gradient arriving at the base, not beyond it,
    so nothing raises (minigrad raised PyTorch's internal-overlap error anyway: seed 1304 program 883); asked for
    the leaf behind it, both raise."""
    for ask in ("backward", "grad", "leaf"):
        x1 = torch.tensor([[0.0]], dtype=torch.float64, requires_grad=True)
        v3 = torch.tensor([0.0], dtype=torch.float64).remainder(x1)
        w5 = v3.expand(2, 2, 3).transpose(0, -1)
        w5.triu_()
        loss = w5.split(1)[0].sum()
        try:
            if ask == "backward":
                loss.backward(inputs=[v3])
                print(v3.grad)
            else:
                print(torch.autograd.grad(loss, [v3] if ask == "grad" else [x1]))
        except RuntimeError as e:
            print("raised:", str(e).split(".")[0])


def batch_norm_in_one_fused_multiply_add_from_a_zero_bias(torch, Variable):
    """batch_norm's value is PyTorch's vectorised x·alpha + beta, one fused multiply-add (float32 and float64), with
    beta = bias - mean·alpha from a +0 bias when there is none: -1·0 + (0 - 0) is +0. (minigrad negated the product,
    -0., so its sum kept -0.: seed 1304 program 357), and 1e30·alpha + beta leaves the product's rounding error
    (minigrad's rounded product cancelled to 0)."""
    for dtype in (torch.float32, torch.float64):
        x = torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, 1e30], [0.0, 2.0, 0.0], [0.0, 0.0, -1.0]], dtype=dtype)
        for training in (True, False):
            for w, b in ((None, None), ([1.0, -0.0, 2.0], None), (None, [-0.0, 0.0, -0.0])):
                w = None if w is None else torch.tensor(w, dtype=dtype)
                b = None if b is None else torch.tensor(b, dtype=dtype)
                stats = (torch.tensor([0.0, 1.0, 1e30], dtype=dtype), torch.tensor([1.0, np.inf, 2.0], dtype=dtype))
                for sign in (1.0, -1.0):
                    y = torch.nn.functional.batch_norm(x * sign, *stats, w, b, training=training)
                    print(np.signbit(y.numpy()).tolist(), y[:, 2].tolist() if dtype == torch.float32 else "")


def sort_and_topk_second_order_write_the_gradient(torch, Variable):
    """Under create_graph sort's and topk's backward writes each gradient into zeros (zeros.scatter, PyTorch's
    value_selecting_reduction_backward): a -0. gradient stays -0. (minigrad added it to +0. with scatter_add:
    seed 1309 program 800), and the node is ScatterBackward0."""
    x = torch.tensor([0.0, 0.5, 0.3, 1.0, 0.4], dtype=torch.float64, requires_grad=True)
    g = torch.tensor([-0.0, 0.0, -0.0, 1.0, -0.0], dtype=torch.float64, requires_grad=True)
    for picked in (x.topk(5)[0], x.topk(3, largest=False)[0], x.sort()[0], x.sort(stable=True)[0]):
        (gx,) = torch.autograd.grad(picked, x, g[:picked.shape[0]], create_graph=True)
        print(gx.tolist(), gx.grad_fn.name(), torch.autograd.grad(gx.sum(), g)[0].tolist())
    x2 = torch.tensor([[0.0, 3.0], [2.0, 1.0]], requires_grad=True)
    print(torch.autograd.grad(x2.sort(dim=0)[0], x2, -torch.zeros(2, 2), create_graph=True)[0].tolist())


def float16_gradients_times_a_logarithm_in_float32(torch, Variable):
    """exp2's, log2's and log10's formulas multiply a float16 tensor by ln 2 or ln 10, a C++ double: PyTorch's kernel
    computes it in float32 (opmath) and rounds once; NumPy rounded the constant to float16 first, a last-digit
    difference that a second backward carried (seed 1300 program 747)."""
    rng = np.random.default_rng(3)
    for name in ("exp2", "log2", "log10"):
        y = torch.tensor((rng.random(64) * 4 + 0.1).astype("float16"), requires_grad=True)
        gz = torch.tensor((rng.standard_normal(64) * 3).astype("float16"))
        (g,) = torch.autograd.grad(getattr(torch, name)(y), y, gz, create_graph=True)
        print(name, g.tolist(), torch.autograd.grad(g.sum(), y)[0].tolist())
    x1 = torch.tensor([0.8, -1.3, 2.1], requires_grad=True)
    v2 = x1.half()
    v2.exp2_()
    (g1,) = torch.autograd.grad(v2.sum() * 2, x1, create_graph=True)  # (autograd.grad: no once-per-process warning)
    print(g1.tolist(), torch.autograd.grad(g1.sum(), x1)[0].tolist())


CASES = [
    float16_gradients_times_a_logarithm_in_float32,
    sort_and_topk_second_order_write_the_gradient,
    batch_norm_in_one_fused_multiply_add_from_a_zero_bias,
    in_place_write_on_an_expanded_view_when_only_the_base_is_asked,
    scatter_add_of_zero_dim_tensors,
    max_pool_gradient_added_to_positive_zeros,
    max_pool1d_without_gradient_is_not_a_view,
]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=fn.__name__) for fn in CASES])
def test_fresh_seed_finding_behaves_as_pytorch(fn, torch, minigrad):
    problems = harness.differences(fn, torch, minigrad)
    if problems:
        pytest.fail(problems, pytrace=False)
