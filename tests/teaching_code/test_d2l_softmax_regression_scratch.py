"""Port of d2l.ai "Softmax Regression Implementation from Scratch" (PyTorch tab).

Source: github.com/d2l-ai/d2l-en, chapter_linear-classification/softmax-regression-scratch.md (commit
23d7a5ae), published as d2l.ai/chapter_linear-classification/softmax-regression-scratch.html: sums with
`keepdims=True`, a hand-written softmax, parameters from `torch.normal(0, sigma, size=..., requires_grad=True)`,
cross-entropy by picking `y_hat[list(range(len(y_hat))), y]`, training with `d2l.Trainer` (its validation
step computes the accuracy with `d2l.argmax(..., axis=1)`), then predictions on a validation batch.
`d2l` is d2l_lib.py over the library under test. Changes: Fashion-MNIST -> 1,024 + 256 NumPy-made
28x28 images (d2l_lib.add_fashion_mnist); `max_epochs=10` -> 5; `W` (a `torch.normal` draw) is overwritten
with a NumPy draw of the same distribution; `d2l.rand((2, 5))` stays random (only its row sums, 1, are
checked); the per-epoch validation accuracy is held to values recorded from PyTorch 2.13.
"""

from __future__ import annotations

import numpy as np
import pytest
import teaching_d2l

RECORDED_VAL_ACC = [0.7148, 0.7148, 0.7109, 0.7773, 0.707]  # per epoch; chance is 0.1


def test_softmax_regression_from_scratch(lib):
    torch = lib
    d2l = teaching_d2l.make_d2l(lib)
    teaching_d2l.add_fashion_mnist(d2l, lib)

    X = d2l.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    sums = d2l.reduce_sum(X, 0, keepdims=True), d2l.reduce_sum(X, 1, keepdims=True)
    assert sums[0].tolist() == [[5.0, 7.0, 9.0]] and sums[1].tolist() == [[6.0], [15.0]]

    def softmax(X):
        X_exp = d2l.exp(X)
        partition = d2l.reduce_sum(X_exp, 1, keepdims=True)
        return X_exp / partition  # The broadcasting mechanism is applied here

    X = d2l.rand((2, 5))
    X_prob = softmax(X)
    np.testing.assert_allclose(d2l.reduce_sum(X_prob, 1).numpy(), [1.0, 1.0], rtol=1e-6)

    class SoftmaxRegressionScratch(d2l.Classifier):
        def __init__(self, num_inputs, num_outputs, lr, sigma=0.01):
            super().__init__()
            self.save_hyperparameters()
            self.W = torch.normal(0, sigma, size=(num_inputs, num_outputs),
                                  requires_grad=True)
            self.b = torch.zeros(num_outputs, requires_grad=True)

        def parameters(self):
            return [self.W, self.b]

    @d2l.add_to_class(SoftmaxRegressionScratch)
    def forward(self, X):
        X = d2l.reshape(X, (-1, self.W.shape[0]))
        return softmax(d2l.matmul(X, self.W) + self.b)

    y = d2l.tensor([0, 2])
    y_hat = d2l.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
    np.testing.assert_allclose(y_hat[[0, 1], y].numpy(), [0.1, 0.5])

    def cross_entropy(y_hat, y):
        return -d2l.reduce_mean(d2l.log(y_hat[list(range(len(y_hat))), y]))

    assert cross_entropy(y_hat, y).item() == pytest.approx(1.4979, abs=1e-4)  # the book shows tensor(1.4979)

    @d2l.add_to_class(SoftmaxRegressionScratch)
    def loss(self, y_hat, y):
        return cross_entropy(y_hat, y)

    data = d2l.FashionMNIST(batch_size=256)
    model = SoftmaxRegressionScratch(num_inputs=784, num_outputs=10, lr=0.1)
    with torch.no_grad():  # added: the same start in both libraries
        model.W.copy_(torch.tensor(np.random.default_rng(0).normal(0, 0.01, (784, 10)).astype(np.float32)))
    trainer = d2l.Trainer(max_epochs=5)
    trainer.fit(model, data)

    X, y = next(iter(data.val_dataloader()))
    preds = d2l.argmax(model(X), axis=1)
    assert tuple(preds.shape) == (256,)
    wrong = d2l.astype(preds, y.dtype) != y
    X, y, preds = X[wrong], y[wrong], preds[wrong]
    labels = [a + '\n' + b for a, b in zip(data.text_labels(y), data.text_labels(preds))]
    assert len(labels) == int(wrong.sum())

    acc = np.mean(np.reshape(model.board["val_acc"], (5, -1)), axis=1)
    np.testing.assert_allclose(acc, RECORDED_VAL_ACC, atol=1e-3)
    assert min(acc) > 0.5 and model.board["train_loss"][-1] < model.board["train_loss"][0] - 1.0
