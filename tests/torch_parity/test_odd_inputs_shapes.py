"""Issue 34: shape, view and error-text cases found by the differential fuzzer on fresh seeds (1400-1499) and by
`make sweep-extremes`, one case each, against PyTorch 2.13.

Each case runs under PyTorch and minigrad by the parity harness (printed values, warnings, the exception's type and
first line); `tolist()` where the sign of a zero, an inf or the last digit is the point. Each failed before its fix.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch_parity_harness as harness


def _outcome(fn, *args):
    """fn(*args) printed, or the exception's type and message (the key phrase is the point)."""
    try:
        print(fn(*args))
    except Exception as e:  # noqa: BLE001 - the exception's type and text are what is compared
        print("raised:", type(e).__name__, str(e).split("\n")[0])


@pytest.mark.parametrize("n", [2, 3, 17])
def test_gelu_float32_simd_kernel_overflows_past_2_to_127(torch, minigrad, n):
    """PyTorch's float32 gelu over a contiguous tensor of two or more elements forms x·(1 + erf(x/√2)) before
    halving it: an x of 2¹²⁷ or more gives inf (make sweep-extremes: gelu at 3e38; minigrad gave 3e38). One element,
    a strided tensor and float64 halve first and stay finite."""
    def case(lib, Variable):
        values = np.ones(n, dtype=np.float32)
        values[[0, -1]] = [3e38, 1.7014117e38]
        x = lib.tensor(values, requires_grad=True)
        y = lib.nn.functional.gelu(x)
        ends = [0, -1]  # (the extreme elements exactly; the ones between to float32's digits)
        print(y[ends].tolist(), np.round(y[1:-1].tolist(), 5).tolist())
        y.sum().backward()
        print(x.grad[ends].tolist(), np.round(x.grad[1:-1].tolist(), 5).tolist())
        print(lib.nn.functional.gelu(x.detach()[:1].clone()).tolist())
        print(lib.nn.functional.gelu(x.detach()[::2])[ends].tolist())
        print(lib.nn.functional.gelu(x.detach().double())[ends].tolist())
        print(lib.nn.functional.gelu(lib.tensor(np.array([-3e38, 2e38, 1.0], dtype=np.float32)))[:2].tolist())

    problems = harness.differences(case, torch, minigrad)
    assert problems is None, problems


@pytest.mark.parametrize("shape", [(0, 2, 3), (2, 0, 3), (0,), (0, 4), (3, 0, 2, 0)])
def test_flatten_of_an_empty_tensor(torch, minigrad, shape):
    """flatten(1) of a (0, 2, 3) tensor is (0, 6) (minigrad reshaped to (0, -1), which no size can infer)."""
    def case(lib, Variable):
        x = lib.zeros(shape, requires_grad=True)
        for start, end in ((1, -1), (0, -1), (0, 1), (-2, -1)):
            _outcome(lambda s, e: tuple(x.flatten(s, e).shape), start, end)
        y = x.flatten(1) if len(shape) > 1 else x.flatten()
        print(type(y.grad_fn).__name__)
        y.sum().backward()
        print(tuple(x.grad.shape))

    problems = harness.differences(case, torch, minigrad)
    assert problems is None, problems


def test_narrow_checks_length_then_start(torch, minigrad):
    """narrow: a negative length is refused first (minigrad returned a shorter slice), a start outside [-n, n] is an
    IndexError (minigrad: RuntimeError), and start + length past the end the RuntimeError."""
    def case(lib, Variable):
        z = lib.zeros(3)
        for args in ((5, 0, -1), (0, 0, -1), (0, -1, -1), (0, -4, 1), (0, 4, 0), (0, -3, 1), (0, 3, 0), (5, 9, 1),
                     (0, 2, 2), (0, -1, 2)):
            _outcome(lambda a: z.narrow(*a).tolist(), args)

    problems = harness.differences(case, torch, minigrad)
    assert problems is None, problems


@pytest.mark.parametrize(("shape", "kwargs"), [
    ((1, 1, 4), {"size": (2, 2)}), ((1, 1, 4, 4), {"size": [3]}), ((1, 1, 4), {"scale_factor": (2, 2)}),
    ((1, 1, 4, 4), {"size": (0, 2)}), ((1, 1, 4), {"size": 0}), ((1, 1, 4), {"size": -1}),
    ((1, 1, 0, 4), {"scale_factor": 2}), ((2, 2, 0), {"scale_factor": 2}), ((1, 1, 4), {"scale_factor": 0.1}),
    ((1, 1, 4, 4), {"scale_factor": -1.0}), ((1, 0, 4), {"size": 3}), ((1, 0, 4, 4), {"size": 3}),
    ((1, 0, 0), {"size": 3}), ((0, 1, 4), {"scale_factor": 2}), ((1, 1, 4), {"size": (2,)})])
def test_interpolate_checks_its_sizes(torch, minigrad, shape, kwargs):
    """interpolate: a size or scale_factor with the wrong number of spatial dims is a ValueError, an empty input or an
    output size below 1 PyTorch's RuntimeError (fuzz seed 1400 program 71: minigrad returned an empty result, or
    raised ZeroDivisionError, or resized 1-D by a 2-D size)."""
    def case(lib, Variable):
        _outcome(lambda: tuple(lib.nn.functional.interpolate(lib.zeros(shape, dtype=lib.float16), **kwargs).shape))

    problems = harness.differences(case, torch, minigrad)
    assert problems is None, problems


@pytest.mark.parametrize("big", [3e38, -3e38])
def test_batch_norm_applies_its_affine_as_one_fma(torch, minigrad, big):
    """batch_norm's compiled CPU kernel computes x·alpha + beta as one fused multiply-add (alpha = invstd·weight,
    beta = bias - mean·alpha): with weight and bias 3e38, x·alpha is past float32's range but x·alpha + beta is not,
    so PyTorch gives ∓1.97e38 where two roundings gave ∓inf (make sweep-extremes, batch_norm sample 3)."""
    dtype = "float32"
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3, 2)).astype(dtype)
    x[:, 0] = [[-1.84, -1.93], [0.5, 2.0], [-3.0, 1.5], [0.25, -0.75]]
    stats = [np.array(v, dtype=dtype) for v in ([0.46, -0.5, 2.0], [1.97, 1.5, 2.5], [big, 1.3, -0.9],
                                                 [big, 0.2, 0.3])]

    def case(lib, Variable):
        mean, var, w, b = (lib.tensor(v) for v in stats)
        y = lib.nn.functional.batch_norm(lib.tensor(x), mean, var, w, b)
        print(y[:, 0].tolist(), np.round(y[:, 1:].tolist(), 4).tolist())

    problems = harness.differences(case, torch, minigrad)
    assert problems is None, problems


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("needs", ["weight", "input", "bias"])
def test_convolution_refuses_a_saved_tensor_written_whichever_gradient_is_asked(torch, minigrad, transposed, needs):
    """PyTorch's ConvolutionBackward0 saves input and weight for any of its gradients: a write into the one the asked
    gradient's formula does not read is still refused (fuzz seed 1400 program 335: conv_transpose2d(x1, x2,
    groups=2), x2.cosh_() under no_grad, then backward; minigrad returned a gradient)."""
    def case(lib, Variable):
        for written in ("input", "weight"):
            x = lib.ones(1, 4, 3, 3, requires_grad=needs == "input")
            w = lib.ones(4, 2, 1, 1, requires_grad=needs == "weight")
            b = lib.zeros(4 if transposed else 2 * 2, requires_grad=needs == "bias")
            conv = lib.nn.functional.conv_transpose2d if transposed else lib.nn.functional.conv2d
            y = conv(x, w, b, groups=2)
            with lib.no_grad():
                (x if written == "input" else w).mul_(2)
            try:
                y.sum().backward()
                print(written, "no error")
            except RuntimeError as e:
                print(written, "raised:", str(e).split(";")[0])

    problems = harness.differences(case, torch, minigrad)
    assert problems is None, problems
