"""Port of yunjey's "PyTorch Tutorial": 02-intermediate, convolutional neural network.

Source: github.com/yunjey/pytorch-tutorial, tutorials/02-intermediate/convolutional_neural_network/main.py
(commit 78c6afe681c4ff5095ef13662c02a7e369b1bcbd): two Conv2d-BatchNorm2d-ReLU-MaxPool2d blocks and a Linear
layer, trained with Adam on batches, `model.eval()` so that batch norm uses its running statistics, accuracy
from `torch.max(outputs.data, 1)`, the state_dict saved. Code as the tutorial. Changes:
- MNIST -> synthetic 28x28 images (`helpers.class_images`, 160 to train, 80 to test); `shuffle=True` -> a NumPy
  permutation sampler (the same order in both libraries); batch_size 20 (was 100), 2 epochs (was 5), the loss
  printed every 4 steps (was 100);
- the initial weights -> NumPy draws (PyTorch's distributions); 'model.ckpt' -> a temporary directory;
- the printed losses and accuracy are held to values recorded from PyTorch 2.13.
"""

from __future__ import annotations

import numpy as np
import teaching_helpers as h

RECORDED = [1.4413, 0.4295, 0.6025, 0.3185]
RECORDED_ACCURACY = "Test Accuracy of the model on the 10000 test images: 83.75 %"


def program(torch, tmp_dir):
    nn = torch.nn

    # Device configuration
    device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')

    # Hyper parameters
    num_epochs = 2  # was 5
    num_classes = 10
    batch_size = 20  # was 100
    learning_rate = 0.001

    # MNIST dataset: synthetic images here
    x, y = h.class_images(240, 1, 28, num_classes, seed=21)
    train_dataset = torch.utils.data.TensorDataset(torch.tensor(x[:160]), torch.tensor(y[:160]))
    test_dataset = torch.utils.data.TensorDataset(torch.tensor(x[160:]), torch.tensor(y[160:]))

    # Data loader
    train_loader = torch.utils.data.DataLoader(dataset=train_dataset,
                                               batch_size=batch_size,
                                               sampler=h.NumpyShuffle(160, seed=22))  # was shuffle=True

    test_loader = torch.utils.data.DataLoader(dataset=test_dataset,
                                              batch_size=batch_size,
                                              shuffle=False)

    # Convolutional neural network (two convolutional layers)
    class ConvNet(nn.Module):
        def __init__(self, num_classes=10):
            super(ConvNet, self).__init__()
            self.layer1 = nn.Sequential(
                nn.Conv2d(1, 16, kernel_size=5, stride=1, padding=2),
                nn.BatchNorm2d(16),
                nn.ReLU(),
                nn.MaxPool2d(kernel_size=2, stride=2))
            self.layer2 = nn.Sequential(
                nn.Conv2d(16, 32, kernel_size=5, stride=1, padding=2),
                nn.BatchNorm2d(32),
                nn.ReLU(),
                nn.MaxPool2d(kernel_size=2, stride=2))
            self.fc = nn.Linear(7*7*32, num_classes)

        def forward(self, x):
            out = self.layer1(x)
            out = self.layer2(out)
            out = out.reshape(out.size(0), -1)
            out = self.fc(out)
            return out

    model = ConvNet(num_classes).to(device)
    h.numpy_init(torch, model, seed=23)  # added

    # Loss and optimizer
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

    # Train the model
    total_step = len(train_loader)
    for epoch in range(num_epochs):
        for i, (images, labels) in enumerate(train_loader):
            images = images.to(device)
            labels = labels.to(device)

            # Forward pass
            outputs = model(images)
            loss = criterion(outputs, labels)

            # Backward and optimize
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            if (i+1) % 4 == 0:  # was 100
                print('Epoch [{}/{}], Step [{}/{}], Loss: {:.4f}'
                      .format(epoch+1, num_epochs, i+1, total_step, loss.item()))

    # Test the model
    model.eval()  # eval mode (batchnorm uses moving mean/variance instead of mini-batch mean/variance)
    with torch.no_grad():
        correct = 0
        total = 0
        for images, labels in test_loader:
            images = images.to(device)
            labels = labels.to(device)
            outputs = model(images)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()

        print('Test Accuracy of the model on the 10000 test images: {} %'.format(100 * correct / total))

    # Save the model checkpoint
    torch.save(model.state_dict(), f'{tmp_dir}/model.ckpt')  # was 'model.ckpt'
    return model


def test_convolutional_neural_network(lib, tmp_path):
    out, model = h.printed(program, lib, tmp_path)
    lines = out.splitlines()
    assert len(lines) == 5 and lines[0].startswith("Epoch [1/2], Step [4/8], Loss: ")
    np.testing.assert_allclose(h.floats_in("\n".join(lines[:-1])), RECORDED, atol=2e-4)
    assert lines[-1] == RECORDED_ACCURACY
    state = lib.load(f"{tmp_path}/model.ckpt")
    assert "layer1.1.running_mean" in state and state["layer1.1.num_batches_tracked"].item() == 16
    np.testing.assert_allclose(state["layer1.1.running_var"].numpy(), model.layer1[1].running_var.numpy())
