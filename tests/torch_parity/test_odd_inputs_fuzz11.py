"""Issue 34: findings of the differential fuzzer on fresh seeds 3500-3509, one case each.

Each case runs under PyTorch 2.13 and minigrad by the parity harness (printed values, warnings, the exception's
type and first line); values are printed with `tolist()`, bit for bit where the sign of a zero is the point. Each
failed on the code it was found on.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch_parity_harness as harness


def tensor_of_a_tensor_is_laid_out_as_its_clone(torch, Variable):
    """`torch.tensor(t)` copies a tensor as `t.clone()` lays it out (preserve_format: an expanded meshgrid output
    becomes row-major, so `.view(-1)` of the copy works; seed 3506 program 583: minigrad kept NumPy's copy order,
    column-major there, and refused the view); an expanded transposed tensor keeps its dims' order, and the view
    then fails in both; a NumPy array's own order is kept, as PyTorch keeps it."""
    import warnings

    warnings.simplefilter("ignore")  # (the copy-construct UserWarning, which both give)
    _, b = torch.meshgrid([torch.zeros(3, dtype=torch.float64), torch.arange(4.0, dtype=torch.float64)],
                          indexing="ij")
    for src in (b, b.t(), b.t()[::2], torch.ones(2, 1, 3).expand(2, 5, 3).transpose(0, 2)):
        for dtype in (None, torch.float32):
            c = torch.tensor(src, dtype=dtype)
            print(c.stride(), c.is_contiguous())
            if c.is_contiguous():
                print(c.view(-1).tolist())
    fortran = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    print(torch.tensor(fortran).stride(), torch.tensor(fortran[:, ::2]).stride())


def log_softmax_gradient_of_negative_zeros_by_dim(torch, Variable):
    """log_softmax's backward `g - exp(y)·Σ g` sums a last dim from its first element, as PyTorch's last-dim kernel
    does, so a row of -0. gradients gives +0.; over another dim the sum starts from +0. and gives -0. (seed 3500
    program 908: a second order through `log_softmax(dim=2)` and `split`, where minigrad gave -0.)."""
    for shape in ((3, 2, 2), (3, 4), (5,), (2, 20), ()):
        for dim in range(max(len(shape), 1)):
            for fill in (-0.0, 0.0):
                x = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
                y = x.log_softmax(dim)
                (g,) = torch.autograd.grad(y, x, torch.full(shape, fill, dtype=torch.float64))
                print(shape, dim, fill, np.signbit(g.numpy()).ravel().tolist())
    x1 = torch.zeros((3, 4), dtype=torch.float64, requires_grad=True)
    # (autograd.grad, not backward(create_graph=True), whose warning both libraries give once per process)
    (g1,) = torch.autograd.grad(x1.unflatten(1, (2, 2)).log_softmax(dim=2).split(1)[0].mean(), [x1], create_graph=True)
    print(torch.autograd.grad(g1.sum(), [x1])[0].tolist())


CASES = [
    tensor_of_a_tensor_is_laid_out_as_its_clone,
    log_softmax_gradient_of_negative_zeros_by_dim,
]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=fn.__name__) for fn in CASES])
def test_fresh_seed_finding_behaves_as_pytorch(fn, torch, minigrad):
    problems = harness.differences(fn, torch, minigrad)
    if problems:
        pytest.fail(problems, pytrace=False)
