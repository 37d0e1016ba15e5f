"""Port of d2l.ai "Convolutions for Images" (PyTorch tab): cross-correlation from scratch and a learned kernel.

Source: github.com/d2l-ai/d2l-en, chapter_convolutional-neural-networks/conv-layer.md (commit 23d7a5ae),
published as d2l.ai/chapter_convolutional-neural-networks/conv-layer.html. `d2l` is the namespace of
d2l_lib.py built over the library under test. The code is the chapter's PyTorch cells, in order; the
values the chapter shows are asserted. Changes:
- `corr2d` writes `Y[i, j] = ...` into `d2l.zeros`, exactly as the book; nothing changed there;
- the learned kernel: `nn.LazyConv2d` draws its initial weight at the first call; the port calls it once
  before the loop and overwrites that weight with a NumPy draw (the same in both libraries), then runs
  the book's 10-step loop; the printed losses are held to values recorded from PyTorch 2.13.
"""

from __future__ import annotations

import numpy as np
import teaching_d2l
import teaching_helpers as h

RECORDED_LOSSES = [2.877, 0.522, 0.104, 0.024, 0.007]  # epochs 2, 4, ..., 10


def corr2d_for(d2l):
    def corr2d(X, K):  #@save
        """Compute 2D cross-correlation."""
        h, w = K.shape
        Y = d2l.zeros((X.shape[0] - h + 1, X.shape[1] - w + 1))
        for i in range(Y.shape[0]):
            for j in range(Y.shape[1]):
                Y[i, j] = d2l.reduce_sum((X[i: i + h, j: j + w] * K))
        return Y
    return corr2d


def test_corr2d_conv2d_module_and_edge_detection(lib):
    torch, nn = lib, lib.nn
    d2l = teaching_d2l.make_d2l(lib)
    corr2d = corr2d_for(d2l)

    X = d2l.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]])
    K = d2l.tensor([[0.0, 1.0], [2.0, 3.0]])
    assert h.as_torch_text(repr(corr2d(X, K))) == "tensor([[19., 25.],\n        [37., 43.]])"

    class Conv2D(nn.Module):
        def __init__(self, kernel_size):
            super().__init__()
            self.weight = nn.Parameter(torch.rand(kernel_size))
            self.bias = nn.Parameter(torch.zeros(1))

        def forward(self, x):
            return corr2d(x, self.weight) + self.bias

    layer = Conv2D((1, 2))  # (the chapter defines the layer; here it also runs, forward and backward)
    out = layer(d2l.ones((6, 8)))
    out.sum().backward()
    assert tuple(out.shape) == (6, 7) and out.grad_fn.name() == "AddBackward0"
    np.testing.assert_allclose(layer.weight.grad.numpy(), [[42.0, 42.0]])
    np.testing.assert_allclose(layer.bias.grad.numpy(), [42.0])

    X = d2l.ones((6, 8))
    X[:, 2:6] = 0
    assert h.as_torch_text(repr(X)) == "\n".join(
        ["tensor([[1., 1., 0., 0., 0., 0., 1., 1.],"] + ["        [1., 1., 0., 0., 0., 0., 1., 1.],"] * 4
        + ["        [1., 1., 0., 0., 0., 0., 1., 1.]])"])
    K = d2l.tensor([[1.0, -1.0]])
    Y = corr2d(X, K)
    row = [0.0, 1.0, 0.0, 0.0, 0.0, -1.0, 0.0]
    np.testing.assert_array_equal(Y.numpy(), [row] * 6)
    np.testing.assert_array_equal(corr2d(d2l.transpose(X), K).numpy(), np.zeros((8, 5)))


def learn_kernel(torch, X, Y):
    nn = torch.nn
    conv2d = nn.LazyConv2d(1, kernel_size=(1, 2), bias=False)

    X = X.reshape((1, 1, 6, 8))
    Y = Y.reshape((1, 1, 6, 7))
    lr = 3e-2  # Learning rate

    conv2d(X)  # added: materialise the lazy weight, then give both libraries the same start
    with torch.no_grad():
        conv2d.weight.copy_(torch.tensor(np.random.default_rng(0).uniform(-0.7, 0.7, (1, 1, 1, 2)).astype(np.float32)))

    for i in range(10):
        Y_hat = conv2d(X)
        l = (Y_hat - Y) ** 2
        conv2d.zero_grad()
        l.sum().backward()
        # Update the kernel
        conv2d.weight.data[:] -= lr * conv2d.weight.grad
        if (i + 1) % 2 == 0:
            print(f'epoch {i + 1}, loss {l.sum():.3f}')
    return conv2d


def test_learning_a_kernel_from_data(lib):
    d2l = teaching_d2l.make_d2l(lib)
    corr2d = corr2d_for(d2l)
    X = d2l.ones((6, 8))
    X[:, 2:6] = 0
    Y = corr2d(X, d2l.tensor([[1.0, -1.0]]))
    out, conv2d = h.printed(learn_kernel, lib, X, Y)
    assert [line.split(",")[0] for line in out.splitlines()] == [f"epoch {i}" for i in (2, 4, 6, 8, 10)]
    np.testing.assert_allclose(h.floats_in(out), RECORDED_LOSSES, atol=2e-3)
    learned = d2l.reshape(conv2d.weight.data, (1, 2))
    np.testing.assert_allclose(learned.numpy(), [[1.0, -1.0]], atol=0.05)  # "very close to the kernel K"
