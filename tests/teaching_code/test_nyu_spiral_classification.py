"""Port of NYU Deep Learning (DLSP20, Canziani and LeCun), 04: spiral classification.

Source: github.com/Atcold/NYU-DLSP20, 04-spiral_classification.ipynb (commit
0d059432b84494c8a3134ca15e5f283eab38d9d5): three interleaved spirals built point by point (`linspace`, `randn`
noise, `math.sin` of 0-d tensors, `torch.FloatTensor((...))`, item assignment into `X[ix]` and `y[ix]`), then
a linear model (two `nn.Linear`, SGD with weight decay) and a two-layer network (with `nn.ReLU`, Adam with
weight decay) trained full batch, loss and accuracy printed each step (`torch.max(y_pred, 1)`,
`.sum().float() / len(y)`), and each model printed. Code cells as the notebook, in order. Changes:
- `from res.plot_lib import ...`, `set_default()`, `plot_data`, `plot_model` and `display.clear_output` ->
  dropped (matplotlib pictures and notebook output clearing);
- `torch.randn(N)` and the layers' initial weights -> NumPy draws (PyTorch's distributions);
- sizes shrunk: N = 100 points per class (was 1000), 100 steps per model (was 1000);
- the printed losses and accuracies are held to values recorded from PyTorch 2.13.
"""

from __future__ import annotations

import math
import random

import numpy as np
import teaching_helpers as h

# [LOSS] and [ACCURACY] at steps 0, 50 and 99 of each model, recorded from PyTorch 2.13
RECORDED = [[1.168166, 0.16], [1.133923, 0.167], [1.10612, 0.233], [1.164792, 0.217], [0.93724, 0.583],
            [0.793392, 0.563]]


def program(torch):
    nn, optim = torch.nn, torch.optim  # noqa: F841 - optim as the notebook imports it
    rng = np.random.default_rng(12345)  # added: the NumPy stream of the random draws

    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

    seed = 12345
    random.seed(seed)
    torch.manual_seed(seed)
    N = 100  # num_samples_per_class (was 1000)
    D = 2  # dimensions
    C = 3  # num_classes
    H = 100  # num_hidden_units

    X = torch.zeros(N * C, D).to(device)
    y = torch.zeros(N * C, dtype=torch.long).to(device)
    for c in range(C):
        index = 0
        t = torch.linspace(0, 1, N)
        # When c = 0 and t = 0: start of linspace
        # When c = 0 and t = 1: end of linpace
        # This inner_var is for the formula inside sin() and cos() like sin(inner_var) and cos(inner_Var)
        inner_var = torch.linspace(
            # When t = 0
            (2 * math.pi / C) * (c),
            # When t = 1
            (2 * math.pi / C) * (2 + c),
            N
        ) + torch.tensor(rng.standard_normal(N, dtype=np.float32)) * 0.2  # was torch.randn(N) * 0.2

        for ix in range(N * c, N * (c + 1)):
            X[ix] = t[index] * torch.FloatTensor((
                math.sin(inner_var[index]), math.cos(inner_var[index])
            ))
            y[ix] = c
            index += 1

    print("Shapes:")
    print("X:", tuple(X.size()))
    print("y:", tuple(y.size()))

    # Linear model
    learning_rate = 1e-3
    lambda_l2 = 1e-5

    # nn package to create our linear model
    # each Linear module has a weight and bias
    model = nn.Sequential(
        nn.Linear(D, H),
        nn.Linear(H, C)
    )
    h.numpy_init(torch, model, seed=1)  # added
    model.to(device)  # Convert to CUDA

    # nn package also has different loss functions.
    # we use cross entropy loss for our classification task
    criterion = torch.nn.CrossEntropyLoss()

    # we use the optim package to apply
    # stochastic gradient descent for our parameter updates
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate, weight_decay=lambda_l2)  # built-in L2

    # Training
    for t in range(100):  # was 1000

        # Feed forward to get the logits
        y_pred = model(X)

        # Compute the loss and accuracy
        loss = criterion(y_pred, y)
        score, predicted = torch.max(y_pred, 1)
        acc = (y == predicted).sum().float() / len(y)
        print("[EPOCH]: %i, [LOSS]: %.6f, [ACCURACY]: %.3f" % (t, loss.item(), acc))

        # zero the gradients before running
        # the backward pass.
        optimizer.zero_grad()

        # Backward pass to compute the gradient
        # of loss w.r.t our learnable params.
        loss.backward()

        # Update params
        optimizer.step()

    # Plot trained model
    print(model)

    # Two-layered network
    learning_rate = 1e-3
    lambda_l2 = 1e-5

    model = nn.Sequential(
        nn.Linear(D, H),
        nn.ReLU(),
        nn.Linear(H, C)
    )
    h.numpy_init(torch, model, seed=2)  # added
    model.to(device)

    criterion = torch.nn.CrossEntropyLoss()

    # we use the optim package to apply
    # ADAM for our parameter updates
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate, weight_decay=lambda_l2)  # built-in L2

    # Training
    for t in range(100):  # was 1000

        # Feed forward to get the logits
        y_pred = model(X)

        # Compute the loss and accuracy
        loss = criterion(y_pred, y)
        score, predicted = torch.max(y_pred, 1)
        acc = (y == predicted).sum().float() / len(y)
        print("[EPOCH]: %i, [LOSS]: %.6f, [ACCURACY]: %.3f" % (t, loss.item(), acc))

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    # Plot trained model
    print(model)
    return X


def test_spiral_classification(lib):
    out, X = h.printed(program, lib)
    lines = h.as_torch_text(out).splitlines()
    assert lines[:3] == ["Shapes:", "X: (300, 2)", "y: (300,)"]
    steps = [line for line in lines if line.startswith("[EPOCH]")]
    assert len(steps) == 200
    picked = [h.floats_in(steps[i]) for i in (0, 50, 99, 100, 150, 199)]
    np.testing.assert_allclose(picked, RECORDED, atol=2e-6)
    assert "\n".join(lines[103:107]) == ("Sequential(\n  (0): Linear(in_features=2, out_features=100, bias=True)\n"
                                         "  (1): Linear(in_features=100, out_features=3, bias=True)\n)")
    assert lines[-3] == "  (1): ReLU()"
    assert X.norm(dim=1).max().item() <= 1.0 + 1e-6  # t in [0, 1] scales unit vectors
