"""Issue 34: what the differential fuzzer found on fresh seeds (400, 401, 540-542) and `make sweep-extremes` left,
one case each.

Each case runs under PyTorch 2.13 and minigrad by the parity harness (printed values, warnings, the exception's
type and first line); values are printed with `tolist()` where the sign of a zero or the last digit is the point.
Each failed on the main it was found on.
"""

from __future__ import annotations

import pytest
import torch_parity_harness as harness


def clamp_gradient_of_one_bound_only(torch, Variable):
    """autograd.grad asks for one input: PyTorch skips the formulas of the others (the engine's exec_info), so
    clamp's bound formula, which refuses bounds that broadcast larger than self, is not run when not asked for
    (minigrad ran every formula and raised)."""
    x = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
    lo = torch.full((2, 3), -0.5, requires_grad=True)
    hi = torch.tensor([0.5, 0.5, 0.5], requires_grad=True)
    y = torch.clamp(x, lo, hi)
    print(torch.autograd.grad(y.sum(), [lo], retain_graph=True))
    print(torch.autograd.grad(y.sum(), [x], retain_graph=True))
    y.sum().backward(inputs=[x])
    print(x.grad)
    try:
        torch.autograd.grad(y.sum(), [hi])
    except RuntimeError as e:
        print("raised:", str(e).split("\n")[0])


CASES = [clamp_gradient_of_one_bound_only]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=fn.__name__) for fn in CASES])
def test_fresh_seed_finding_behaves_as_pytorch(fn, torch, minigrad):
    problems = harness.differences(fn, torch, minigrad)
    if problems:
        pytest.fail(problems, pytrace=False)
