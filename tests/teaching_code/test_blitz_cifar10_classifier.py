"""Port of PyTorch's "Deep Learning with PyTorch: A 60 Minute Blitz", part "Training a Classifier".

Source: github.com/pytorch/tutorials, beginner_source/blitz/cifar10_tutorial.py
(commit 04e3d04bcf91d38a1213918eba70dc43e9b0ce45), published as pytorch.org/tutorials/beginner/blitz/
cifar10_tutorial.html: a LeNet for 3x32x32 images (Conv2d, nn.MaxPool2d, Linear), CrossEntropyLoss,
SGD with momentum, two epochs over a DataLoader, then overall and per-class test accuracy.
The code is the tutorial's, statement by statement. Changes:
- torchvision is not used: CIFAR10 (downloaded) -> a NumPy-made data set of 400 training and 100 test
  3x32x32 images in ten classes (a bright square at a class-specific place, plus noise), returned as
  (image tensor, int label) like torchvision's; `transforms.Normalize((0.5,)*3, (0.5,)*3)` is applied
  with NumPy; the image display (matplotlib, `make_grid`) is dropped;
- `shuffle=True` -> a NumPy-driven sampler (a new permutation every epoch, the same in both
  libraries); `num_workers=2` -> 0 (no worker processes in a test); `dataiter.next()` -> `next(dataiter)`
  (what the current tutorial writes: DataLoader iterators lost `.next()`);
- prints every 20 mini-batches instead of 2000; SGD's lr 0.001 -> 0.01 (200 steps instead of 25,000);
  the initial weights -> NumPy draws from PyTorch's default distributions;
- the printed running losses are held to values recorded from PyTorch 2.13 (within 2e-3, they are
  printed to 3 decimals), and the accuracy must be far above chance (10%).
"""

from __future__ import annotations

import re

import numpy as np
import teaching_helpers as h

RECORDED_LOSSES = [2.297, 2.311, 2.298, 2.233, 2.002, 1.566, 1.608, 1.521, 1.257, 1.228]
RECORDED_ACCURACY = 56  # percent, on the 100 synthetic test images (chance: 10)


def program(torch):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim

    # -- 1. Loading and normalizing (torchvision's CIFAR10 -> NumPy-made images, see the docstring) --
    class SyntheticCIFAR10(torch.utils.data.Dataset):
        def __init__(self, train):
            x, y = h.class_images(400 if train else 100, 3, 32, 10, seed=0 if train else 1)
            self.data = (x - 0.5) / 0.5  # transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
            self.targets = y.tolist()

        def __len__(self):
            return len(self.targets)

        def __getitem__(self, i):
            return torch.tensor(self.data[i]), self.targets[i]

    trainset = SyntheticCIFAR10(train=True)
    trainloader = torch.utils.data.DataLoader(trainset, batch_size=4,
                                              sampler=h.NumpyShuffle(len(trainset), seed=0), num_workers=0)

    testset = SyntheticCIFAR10(train=False)
    testloader = torch.utils.data.DataLoader(testset, batch_size=4,
                                             shuffle=False, num_workers=0)

    classes = ('plane', 'car', 'bird', 'cat',
               'deer', 'dog', 'frog', 'horse', 'ship', 'truck')

    dataiter = iter(trainloader)
    images, labels = next(dataiter)
    print(' '.join('%5s' % classes[labels[j]] for j in range(4)))

    # -- 2. Define a Convolutional Neural Network --
    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = x.view(-1, 16 * 5 * 5)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x

    net = Net()
    h.numpy_init(torch, net, seed=0)  # added

    # -- 3. Define a Loss function and optimizer --
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)  # lr was 0.001

    # -- 4. Train the network --
    for epoch in range(2):  # loop over the dataset multiple times

        running_loss = 0.0
        for i, data in enumerate(trainloader, 0):
            inputs, labels = data

            optimizer.zero_grad()

            outputs = net(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()

            running_loss += loss.item()
            if i % 20 == 19:    # print every 20 mini-batches (was 2000)
                print('[%d, %5d] loss: %.3f' %
                      (epoch + 1, i + 1, running_loss / 20))
                running_loss = 0.0

    print('Finished Training')

    # -- 5. Test the network on the test data --
    dataiter = iter(testloader)
    images, labels = next(dataiter)
    print('GroundTruth: ', ' '.join('%5s' % classes[labels[j]] for j in range(4)))

    outputs = net(images)
    _, predicted = torch.max(outputs, 1)
    print('Predicted: ', ' '.join('%5s' % classes[predicted[j]]
                                  for j in range(4)))

    correct = 0
    total = 0
    with torch.no_grad():
        for data in testloader:
            images, labels = data
            outputs = net(images)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()

    print('Accuracy of the network on the 10000 test images: %d %%' % (
        100 * correct / total))

    class_correct = list(0. for i in range(10))
    class_total = list(0. for i in range(10))
    with torch.no_grad():
        for data in testloader:
            images, labels = data
            outputs = net(images)
            _, predicted = torch.max(outputs, 1)
            c = (predicted == labels).squeeze()
            for i in range(4):
                label = labels[i]
                class_correct[label] += c[i].item()
                class_total[label] += 1

    for i in range(10):
        print('Accuracy of %5s : %2d %%' % (
            classes[i], 100 * class_correct[i] / class_total[i]))

    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    print(device)
    return correct, total, class_correct


def test_classifier_trains_and_beats_chance(lib):
    out, (correct, total, class_correct) = h.printed(program, lib)
    lines = out.splitlines()
    losses = [float(x) for x in re.findall(r"\] loss: (\d+\.\d+)", out)]
    assert len(losses) == 10 and lines[0].count(" ") >= 3
    np.testing.assert_allclose(losses, RECORDED_LOSSES, atol=2e-3)
    assert "Finished Training" in lines
    accuracy = int(re.search(r"test images: (\d+) %", out).group(1))
    assert accuracy == RECORDED_ACCURACY and losses[-1] < losses[0] - 0.8
    assert total == 100 and sum(class_correct) == correct
    assert len([line for line in lines if line.startswith("Accuracy of ")]) == 11
    assert lines[-1] == "cpu"
