"""Issue 34: the sign of a zero that a float64 convolution computes (minigrad/ops/convolution.py, _negative_zeros).

PyTorch's float64 kernel sums a window's products from the first one, so a window whose products are all -0.
(a -0. input times a positive weight, a zero times a negative one, a padded zero times -0.) gives -0.; minigrad's
matrix product starts from +0. and gave +0. (float32 goes through oneDNN, whose choice of kernel decides the sign:
docs/differences.md.)
"""

from __future__ import annotations

import numpy as np
import pytest
import torch_parity_harness as harness


@pytest.mark.parametrize("padding", [0, 1])
def test_conv2d_float64_zero_signs(torch, minigrad, padding):
    """Windows of -0. products give -0., any +0. product or a cancelling sum +0., then the bias added."""
    x = np.array([[[[-0.0, 0.0, 1.0], [0.0, -0.0, -2.0], [-0.0, -0.0, 0.0]]]])
    w = np.array([[[[0.5]]], [[[-1.0]]], [[[-0.0]]]])

    def case(lib, Variable):
        xt, wt = lib.tensor(x), lib.tensor(w)
        print(lib.nn.functional.conv2d(xt, wt, padding=padding).tolist())
        print(lib.nn.functional.conv2d(xt, wt, lib.tensor([-0.0, 0.0, -0.0], dtype=lib.float64),
                                       padding=padding).tolist())
        print(lib.nn.functional.conv2d(xt, lib.tensor([[[[0.5, -0.5]]]]), padding=padding).tolist())
        print(lib.nn.functional.conv1d(xt[0], lib.tensor([[[-1.0, 2.0]]], dtype=lib.float64)).tolist())

    problems = harness.differences(case, torch, minigrad)
    assert problems is None, problems
