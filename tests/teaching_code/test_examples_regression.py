"""Port of PyTorch's examples: "Linear regression" (fitting a polynomial with a Linear layer).

Source: github.com/pytorch/examples, regression/main.py (commit 77f55b912142e11fcfdf5b530231fb9c52f181e8): random
polynomial targets, features `torch.cat([x ** i ...], 1)`, `F.smooth_l1_loss`, `fc.zero_grad()`, a manual SGD
step `param.data.add_(-0.1 * param.grad)` until the loss is below 1e-3, and `'{:+.2f}'.format(w)` of 0-d
tensors. Code as the example. Changes:
- `torch.randn` for the target polynomial and every batch -> NumPy draws wrapped by the library; the layer's
  initial weights -> NumPy draws from PyTorch's default distribution;
- the actual polynomial is held to what PyTorch 2.13 prints; the training itself is checked by what the
  program shows (it stops below 1e-3, the learned coefficients are the actual ones within 0.2): float32 rounding
  differences of 1e-7 in the first steps grow through the x^4 features (1e-2 relative by step 200 between the
  two libraries, as between two BLAS builds), so the batch at which the loss first dips below 1e-3 differs.
"""

from __future__ import annotations

from itertools import count

import numpy as np
import teaching_helpers as h

ACTUAL = "==> Actual function:\ty = +1.73 x^1 +4.11 x^2 +1.65 x^3 -6.52 x^4 +4.53"  # printed by PyTorch 2.13


def program(torch):
    F = torch.nn.functional
    rng = np.random.default_rng(1)  # added: the draws below were torch.randn

    def randn(*shape):
        return torch.tensor(rng.standard_normal(shape).astype(np.float32))

    POLY_DEGREE = 4
    W_target = randn(POLY_DEGREE, 1) * 5
    b_target = randn(1) * 5

    def make_features(x):
        """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
        x = x.unsqueeze(1)
        return torch.cat([x ** i for i in range(1, POLY_DEGREE+1)], 1)

    def f(x):
        """Approximated function."""
        return x.mm(W_target) + b_target.item()

    def poly_desc(W, b):
        """Creates a string description of a polynomial."""
        result = 'y = '
        for i, w in enumerate(W):
            result += '{:+.2f} x^{} '.format(w, i + 1)
        result += '{:+.2f}'.format(b[0])
        return result

    def get_batch(batch_size=32):
        """Builds a batch i.e. (x, f(x)) pair."""
        random = randn(batch_size)  # was torch.randn(batch_size)
        x = make_features(random)
        y = f(x)
        return x, y

    # Define model
    fc = torch.nn.Linear(W_target.size(0), 1)
    h.numpy_init(torch, fc, seed=0)  # added

    for batch_idx in count(1):
        # Get data
        batch_x, batch_y = get_batch()

        # Reset gradients
        fc.zero_grad()

        # Forward pass
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()

        # Backward pass
        output.backward()

        # Apply gradients
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)

        # Stop criterion
        if loss < 1e-3:
            break

    print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
    print('==> Learned function:\t' + poly_desc(fc.weight.view(-1), fc.bias))
    print('==> Actual function:\t' + poly_desc(W_target.view(-1), b_target))


def test_regression(lib):
    out, _ = h.printed(program, lib)
    first, learned, actual = out.rstrip().split("\n")
    assert actual == ACTUAL
    assert first.startswith("Loss: ") and float(first.split()[1]) < 1e-3 and first.endswith(" batches")
    coefficients = [float(w) for w in learned.split("=")[1].replace("x^1", "").replace("x^2", "").replace(
        "x^3", "").replace("x^4", "").split()]
    target = [float(w) for w in actual.split("=")[1].replace("x^1", "").replace("x^2", "").replace(
        "x^3", "").replace("x^4", "").split()]
    np.testing.assert_allclose(coefficients, target, atol=0.2)
