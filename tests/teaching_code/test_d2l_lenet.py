"""Port of d2l.ai "Convolutional Neural Networks (LeNet)" (PyTorch tab).

Source: github.com/d2l-ai/d2l-en, chapter_convolutional-neural-networks/lenet.md (commit 23d7a5ae),
published as d2l.ai/chapter_convolutional-neural-networks/lenet.html: `init_cnn`, the LeNet class on
`d2l.Classifier` (LazyConv2d, Sigmoid, AvgPool2d, Flatten, LazyLinear), `layer_summary` and training
with `d2l.Trainer` on Fashion-MNIST. `d2l` is d2l_lib.py over the library under test. Changes:
- Fashion-MNIST (downloaded through torchvision) -> 1,024 training and 256 validation NumPy-made
  1x28x28 images in ten classes; `max_epochs=10` and `batch_size=128` kept, so 80 steps instead of
  4,690; `lr=0.1` -> 0.9 (the book's first edition): in 80 steps a sigmoid LeNet only starts to leave
  its plateau, so the test checks the recorded curve and that the losses fall, not an accuracy;
- after `apply_init` (kept, with xavier_uniform_), every weight is overwritten with a NumPy draw from the
  same distributions, so both libraries start equal; `layer_summary`'s `d2l.randn` input is left as is
  (only shapes are printed);
- the printout of `layer_summary` is asserted as the book shows it (`minigrad.` read as `torch.`); the
  per-epoch validation losses and accuracies are held to values recorded from PyTorch 2.13.
"""

from __future__ import annotations

import math

import numpy as np
import teaching_d2l
import teaching_helpers as h

SUMMARY = """\
Conv2d output shape:\t torch.Size([1, 6, 28, 28])
Sigmoid output shape:\t torch.Size([1, 6, 28, 28])
AvgPool2d output shape:\t torch.Size([1, 6, 14, 14])
Conv2d output shape:\t torch.Size([1, 16, 10, 10])
Sigmoid output shape:\t torch.Size([1, 16, 10, 10])
AvgPool2d output shape:\t torch.Size([1, 16, 5, 5])
Flatten output shape:\t torch.Size([1, 400])
Linear output shape:\t torch.Size([1, 120])
Sigmoid output shape:\t torch.Size([1, 120])
Linear output shape:\t torch.Size([1, 84])
Sigmoid output shape:\t torch.Size([1, 84])
Linear output shape:\t torch.Size([1, 10])
"""
RECORDED_VAL_ACC = [0.082, 0.125, 0.0625, 0.125, 0.1445, 0.0625, 0.1445, 0.125, 0.0625, 0.1445]
RECORDED_VAL_LOSS = [2.4493, 2.3217, 2.3041, 2.2872, 2.3061, 2.295, 2.2941, 2.2995, 2.2996, 2.2932]


def lenet_classes(torch, d2l):
    nn = torch.nn

    def init_cnn(module):  #@save
        """Initialize weights for CNNs."""
        if type(module) == nn.Linear or type(module) == nn.Conv2d:
            nn.init.xavier_uniform_(module.weight)

    class LeNet(d2l.Classifier):  #@save
        """The LeNet-5 model."""
        def __init__(self, lr=0.1, num_classes=10):
            super().__init__()
            self.save_hyperparameters()
            self.net = nn.Sequential(
                nn.LazyConv2d(6, kernel_size=5, padding=2), nn.Sigmoid(),
                nn.AvgPool2d(kernel_size=2, stride=2),
                nn.LazyConv2d(16, kernel_size=5), nn.Sigmoid(),
                nn.AvgPool2d(kernel_size=2, stride=2),
                nn.Flatten(),
                nn.LazyLinear(120), nn.Sigmoid(),
                nn.LazyLinear(84), nn.Sigmoid(),
                nn.LazyLinear(num_classes))

    return init_cnn, LeNet


def numpy_xavier(torch, model, seed):
    """The same start in both libraries: xavier-uniform weights, PyTorch-default-uniform biases, from NumPy."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for module in model.modules():
            if type(module).__name__ in ("Conv2d", "Linear"):
                w = module.weight
                fan_in, fan_out = math.prod(w.shape[1:]), w.shape[0] * math.prod(w.shape[2:])
                bound = math.sqrt(6 / (fan_in + fan_out))
                w.copy_(torch.tensor(rng.uniform(-bound, bound, tuple(w.shape)).astype(np.float32)))
                b = 1 / math.sqrt(fan_in)
                module.bias.copy_(torch.tensor(rng.uniform(-b, b, tuple(module.bias.shape)).astype(np.float32)))


def test_layer_summary_prints_the_books_shapes(lib):
    d2l = teaching_d2l.make_d2l(lib)
    _, LeNet = lenet_classes(lib, d2l)
    model = LeNet()
    out, _ = h.printed(model.layer_summary, (1, 1, 28, 28))
    assert h.as_torch_text(out) == SUMMARY
    assert [type(m).__name__ for m in model.net][:3] == ["Conv2d", "Sigmoid", "AvgPool2d"]


def test_lenet_trains_on_fashion_mnist_like_data(lib):
    d2l = teaching_d2l.make_d2l(lib)
    teaching_d2l.add_fashion_mnist(d2l, lib)
    init_cnn, LeNet = lenet_classes(lib, d2l)

    trainer = d2l.Trainer(max_epochs=10, num_gpus=1)
    data = d2l.FashionMNIST(batch_size=128)
    model = LeNet(lr=0.9)
    model.apply_init([next(iter(data.get_dataloader(True)))[0]], init_cnn)
    numpy_xavier(lib, model, seed=0)  # added
    trainer.fit(model, data)

    acc = model.board["val_acc"]
    loss = model.board["val_loss"]
    assert len(acc) == 20 and len(model.board["train_loss"]) == 80  # 2 validation batches x 10 epochs
    per_epoch_acc = np.mean(np.reshape(acc, (10, 2)), axis=1)
    per_epoch_loss = np.mean(np.reshape(loss, (10, 2)), axis=1)
    np.testing.assert_allclose(per_epoch_acc, RECORDED_VAL_ACC, atol=1e-3)
    np.testing.assert_allclose(per_epoch_loss, RECORDED_VAL_LOSS, atol=1e-3)
    assert per_epoch_loss[-1] < per_epoch_loss[0] - 0.1
    assert np.mean(model.board["train_loss"][-8:]) < np.mean(model.board["train_loss"][:8])
