"""Port of yunjey's "PyTorch Tutorial": 01-basics, logistic regression.

Source: github.com/yunjey/pytorch-tutorial, tutorials/01-basics/logistic_regression/main.py (commit
3008d88222883c8691658b0a7833d07a1408d755): one `nn.Linear` over flattened images with `nn.CrossEntropyLoss`
and SGD, the loss printed every 100 steps, then under `no_grad` the accuracy from `torch.max(outputs.data, 1)`
(a tensor printed inside a format string), and the state_dict saved. Code as the tutorial. Changes:
- MNIST -> synthetic 28x28 images (`helpers.class_images`, 600 to train, 200 to test); `shuffle=True` -> a NumPy
  permutation sampler (the same order in both libraries); batch_size 20 (was 100), 2 epochs (was 5), the loss
  printed every 10 steps (was 100), lr 0.01 (was 0.001) so that 60 steps learn something;
- the initial weights -> NumPy draws (PyTorch's distributions); 'model.ckpt' -> a temporary directory;
- the printed losses and accuracy are held to values recorded from PyTorch 2.13.
"""

from __future__ import annotations

import numpy as np
import teaching_helpers as h

RECORDED = [2.0966, 1.9714, 1.805, 1.6733, 1.4952, 1.5003]
RECORDED_ACCURACY = "Accuracy of the model on the 10000 test images: 74.5 %"


def program(torch, tmp_dir):
    nn = torch.nn

    # Hyper-parameters
    input_size = 28 * 28    # 784
    num_classes = 10
    num_epochs = 2  # was 5
    batch_size = 20  # was 100
    learning_rate = 0.01  # was 0.001

    # MNIST dataset (images and labels): synthetic images here
    x, y = h.class_images(800, 1, 28, num_classes, seed=11)
    train_dataset = torch.utils.data.TensorDataset(torch.tensor(x[:600]), torch.tensor(y[:600]))
    test_dataset = torch.utils.data.TensorDataset(torch.tensor(x[600:]), torch.tensor(y[600:]))

    # Data loader (input pipeline)
    train_loader = torch.utils.data.DataLoader(dataset=train_dataset,
                                               batch_size=batch_size,
                                               sampler=h.NumpyShuffle(600, seed=12))  # was shuffle=True

    test_loader = torch.utils.data.DataLoader(dataset=test_dataset,
                                              batch_size=batch_size,
                                              shuffle=False)

    # Logistic regression model
    model = nn.Linear(input_size, num_classes)
    h.numpy_init(torch, model, seed=13)  # added

    # Loss and optimizer
    # nn.CrossEntropyLoss() computes softmax internally
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)

    # Train the model
    total_step = len(train_loader)
    for epoch in range(num_epochs):
        for i, (images, labels) in enumerate(train_loader):
            # Reshape images to (batch_size, input_size)
            images = images.reshape(-1, input_size)

            # Forward pass
            outputs = model(images)
            loss = criterion(outputs, labels)

            # Backward and optimize
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            if (i+1) % 10 == 0:  # was 100
                print('Epoch [{}/{}], Step [{}/{}], Loss: {:.4f}'
                      .format(epoch+1, num_epochs, i+1, total_step, loss.item()))

    # Test the model
    # In test phase, we don't need to compute gradients (for memory efficiency)
    with torch.no_grad():
        correct = 0
        total = 0
        for images, labels in test_loader:
            images = images.reshape(-1, input_size)
            outputs = model(images)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum()

        print('Accuracy of the model on the 10000 test images: {} %'.format(100 * correct / total))

    # Save the model checkpoint
    torch.save(model.state_dict(), f'{tmp_dir}/model.ckpt')  # was 'model.ckpt'


def test_logistic_regression(lib, tmp_path):
    out, _ = h.printed(program, lib, tmp_path)
    lines = h.as_torch_text(out).splitlines()
    assert len(lines) == 7 and lines[0].startswith("Epoch [1/2], Step [10/30], Loss: ")
    np.testing.assert_allclose(h.floats_in("\n".join(lines[:-1])), RECORDED, atol=1e-4)
    assert lines[-1] == RECORDED_ACCURACY
    assert list(lib.load(f"{tmp_path}/model.ckpt")) == ["weight", "bias"]
