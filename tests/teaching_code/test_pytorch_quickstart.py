"""Port of PyTorch's "Learn the Basics: Quickstart" tutorial.

Source: github.com/pytorch/tutorials, beginner_source/basics/quickstart_tutorial.py (commit
07a339ece661a2b304b8834780470f522eed1e02), published as pytorch.org/tutorials/beginner/basics/
quickstart_tutorial.html: DataLoaders over FashionMNIST, a `NeuralNetwork` (Flatten + Linear/ReLU
Sequential), the `train` / `test` loops with `optimizer.zero_grad()`, `model.eval()`, `torch.no_grad()` and
`(pred.argmax(1) == y).type(torch.float).sum().item()`, then `torch.save(model.state_dict(), ...)`,
`load_state_dict(torch.load(...))` and one prediction. Code as the tutorial. Changes:
- torchvision's FashionMNIST with `ToTensor()` -> 1,024 training and 256 test NumPy-made 1x28x28 images
  in [0, 1] (a Dataset returning (image tensor, int label), like torchvision's); epochs 5 -> 3; the SGD
  learning rate 1e-3 -> 1e-1 (48 steps instead of 4,690); "model.pth" -> a temporary directory;
- initial weights -> NumPy draws from PyTorch's default distributions;
- the printed test accuracies and average losses are held to values recorded from PyTorch 2.13, the
  printed model is compared with PyTorch's text, and the reloaded model predicts what the trained one does.
"""

from __future__ import annotations

import re

import numpy as np
import teaching_helpers as h

RECORDED = [(52.7, 2.171216), (52.7, 1.818377), (52.7, 1.260313)]  # (accuracy %, avg loss) per epoch
MODEL_TEXT = """\
NeuralNetwork(
  (flatten): Flatten(start_dim=1, end_dim=-1)
  (linear_relu_stack): Sequential(
    (0): Linear(in_features=784, out_features=512, bias=True)
    (1): ReLU()
    (2): Linear(in_features=512, out_features=512, bias=True)
    (3): ReLU()
    (4): Linear(in_features=512, out_features=10, bias=True)
    (5): ReLU()
  )
)"""


def program(torch, tmp_dir):
    nn = torch.nn
    DataLoader = torch.utils.data.DataLoader

    class SyntheticFashionMNIST(torch.utils.data.Dataset):  # datasets.FashionMNIST(..., transform=ToTensor())
        def __init__(self, train):
            self.data, self.targets = h.class_images(1024 if train else 256, 1, 28, 10, seed=11 if train else 12)

        def __len__(self):
            return len(self.targets)

        def __getitem__(self, i):
            return torch.tensor(self.data[i]), int(self.targets[i])

    training_data = SyntheticFashionMNIST(train=True)
    test_data = SyntheticFashionMNIST(train=False)

    batch_size = 64

    # Create data loaders.
    train_dataloader = DataLoader(training_data, batch_size=batch_size)
    test_dataloader = DataLoader(test_data, batch_size=batch_size)

    for X, y in test_dataloader:
        print("Shape of X [N, C, H, W]: ", X.shape)
        print("Shape of y: ", y.shape, y.dtype)
        break

    # Get cpu or gpu device for training.
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print("Using {} device".format(device))

    # Define model
    class NeuralNetwork(nn.Module):
        def __init__(self):
            super(NeuralNetwork, self).__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(28 * 28, 512),
                nn.ReLU(),
                nn.Linear(512, 512),
                nn.ReLU(),
                nn.Linear(512, 10),
                nn.ReLU()
            )

        def forward(self, x):
            x = self.flatten(x)
            logits = self.linear_relu_stack(x)
            return logits

    model = NeuralNetwork().to(device)
    h.numpy_init(torch, model, seed=0)  # added
    print(model)

    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)  # lr was 1e-3

    def train(dataloader, model, loss_fn, optimizer):
        size = len(dataloader.dataset)
        for batch, (X, y) in enumerate(dataloader):
            X, y = X.to(device), y.to(device)

            # Compute prediction error
            pred = model(X)
            loss = loss_fn(pred, y)

            # Backpropagation
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            if batch % 100 == 0:
                loss, current = loss.item(), batch * len(X)
                print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")

    def test(dataloader, model, loss_fn):
        size = len(dataloader.dataset)
        num_batches = len(dataloader)
        model.eval()
        test_loss, correct = 0, 0
        with torch.no_grad():
            for X, y in dataloader:
                X, y = X.to(device), y.to(device)
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(torch.float).sum().item()
        test_loss /= num_batches
        correct /= size
        print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")

    epochs = 3
    for t in range(epochs):
        print(f"Epoch {t+1}\n-------------------------------")
        train(train_dataloader, model, loss_fn, optimizer)
        test(test_dataloader, model, loss_fn)
    print("Done!")

    path = f"{tmp_dir}/model.pth"  # was "model.pth"
    torch.save(model.state_dict(), path)
    print("Saved PyTorch Model State to model.pth")
    trained = model

    model = NeuralNetwork()
    model.load_state_dict(torch.load(path))

    classes = [
        "T-shirt/top",
        "Trouser",
        "Pullover",
        "Dress",
        "Coat",
        "Sandal",
        "Shirt",
        "Sneaker",
        "Bag",
        "Ankle boot",
    ]

    model.eval()
    x, y = test_data[0][0], test_data[0][1]
    with torch.no_grad():
        pred = model(x)
        predicted, actual = classes[pred[0].argmax(0)], classes[y]
        print(f'Predicted: "{predicted}", Actual: "{actual}"')
        same = trained(x).argmax(1).item() == pred.argmax(1).item()
    return same


def test_quickstart_trains_saves_and_reloads(lib, tmp_path):
    out, same = h.printed(program, lib, str(tmp_path))
    text = h.as_torch_text(out)
    assert text.startswith("Shape of X [N, C, H, W]:  torch.Size([64, 1, 28, 28])\n"
                           "Shape of y:  torch.Size([64]) torch.int64\nUsing cpu device\n")
    assert MODEL_TEXT in text
    results = [(float(a), float(b)) for a, b in re.findall(r"Accuracy: (\d+\.\d)%, Avg loss: (\d+\.\d+)", out)]
    assert len(results) == 3
    np.testing.assert_allclose(results, RECORDED, atol=2e-3)
    assert results[-1][0] >= results[0][0] > 30 and results[-1][1] < results[0][1] - 0.5  # chance: 10%
    assert "Done!" in out and "Saved PyTorch Model State to model.pth" in out
    assert re.search(r'^Predicted: "[^"]+", Actual: "[^"]+"$', out, re.M) and same
