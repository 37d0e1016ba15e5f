"""Port of PyTorch's "Deep Learning with PyTorch: A 60 Minute Blitz", part "Neural Networks".

Source: github.com/pytorch/tutorials, beginner_source/blitz/neural_networks_tutorial.py
(commit 06dc97785c47755b8d5bca167ad3cfc2ee8a04c1), published as pytorch.org/tutorials/beginner/blitz/
neural_networks_tutorial.html. A LeNet with two Conv2d layers and F.max_pool2d, its printout, a loss,
a walk up `grad_fn.next_functions`, `conv1.bias.grad` before and after backward, and one SGD step.
The code is the tutorial's, statement by statement. Changes:
- the imports `import torch.nn as nn` / `torch.nn.functional as F` / `torch.optim as optim` become
  `nn = torch.nn` etc., `torch` being the library under test (so in every port);
- `torch.randn(1, 1, 32, 32)` (the input) and `torch.randn(1, 10)` (the backward gradient) -> NumPy
  draws wrapped by the library; the layers' initial weights -> NumPy draws from PyTorch's default
  distributions (`numpy_init`), so both libraries compute the same numbers;
- the prints are captured and compared with what PyTorch 2.13 prints (recorded below): the text
  exactly (memory addresses masked, `minigrad.` read as `torch.`), the numbers within 1e-4.
"""

from __future__ import annotations

import re

import numpy as np
import teaching_helpers as h

RECORDED = """\
Net(
  (conv1): Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))
  (conv2): Conv2d(6, 16, kernel_size=(5, 5), stride=(1, 1))
  (fc1): Linear(in_features=400, out_features=120, bias=True)
  (fc2): Linear(in_features=120, out_features=84, bias=True)
  (fc3): Linear(in_features=84, out_features=10, bias=True)
)
10
torch.Size([6, 1, 5, 5])
tensor([[ 0.1189,  0.0342, -0.0844,  0.0832, -0.0635,  0.0442,  0.1681, -0.0164,
          0.1213, -0.1502]], grad_fn=<AddmmBackward0>)
tensor(38.3402, grad_fn=<MseLossBackward0>)
<MseLossBackward0 object at 0x?>
<AddmmBackward0 object at 0x?>
<AccumulateGrad object at 0x?>
conv1.bias.grad before backward
None
conv1.bias.grad after backward
tensor([ 0.0704, -0.0492, -0.0291,  0.0310,  0.0427,  0.0164])
tensor(37.8663, grad_fn=<MseLossBackward0>)
"""


def program(torch, rng: np.random.Generator):
    nn = torch.nn  # import torch.nn as nn
    F = torch.nn.functional  # import torch.nn.functional as F

    class Net(nn.Module):

        def __init__(self):
            super(Net, self).__init__()
            # 1 input image channel, 6 output channels, 5x5 square convolution
            # kernel
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            # an affine operation: y = Wx + b
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            # Max pooling over a (2, 2) window
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            # If the size is a square you can only specify a single number
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = x.view(-1, self.num_flat_features(x))
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x

        def num_flat_features(self, x):
            size = x.size()[1:]  # all dimensions except the batch dimension
            num_features = 1
            for s in size:
                num_features *= s
            return num_features

    net = Net()
    h.numpy_init(torch, net, seed=0)  # added
    print(net)

    params = list(net.parameters())
    print(len(params))
    print(params[0].size())  # conv1's .weight

    input = torch.tensor(rng.standard_normal((1, 1, 32, 32)).astype(np.float32))  # was torch.randn(1, 1, 32, 32)
    out = net(input)
    print(out)

    net.zero_grad()
    out.backward(torch.tensor(rng.standard_normal((1, 10)).astype(np.float32)))  # was torch.randn(1, 10)

    output = net(input)
    target = torch.arange(1, 11)  # a dummy target, for example
    target = target.view(1, -1)  # make it the same shape as output
    criterion = nn.MSELoss()

    loss = criterion(output, target)
    print(loss)

    print(loss.grad_fn)  # MSELoss
    print(loss.grad_fn.next_functions[0][0])  # Linear
    print(loss.grad_fn.next_functions[0][0].next_functions[0][0])  # ReLU

    net.zero_grad()     # zeroes the gradient buffers of all parameters

    print('conv1.bias.grad before backward')
    print(net.conv1.bias.grad)

    loss.backward()

    print('conv1.bias.grad after backward')
    print(net.conv1.bias.grad)

    optim = torch.optim  # import torch.optim as optim

    # create your optimizer
    optimizer = optim.SGD(net.parameters(), lr=0.01)

    # in your training loop:
    optimizer.zero_grad()   # zero the gradient buffers
    output = net(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()    # Does the update
    print(criterion(net(input), target))  # added: the step lowered the loss
    return net


def _mask(text: str) -> str:
    return re.sub(r"-?\d+\.\d+(e[-+]?\d+)?", "#", text)


def test_lenet_prints_what_pytorch_prints(lib):
    out, net = h.printed(program, lib, np.random.default_rng(0))
    got = h.as_torch_text(out)
    assert _mask(got) == _mask(RECORDED)
    np.testing.assert_allclose(h.floats_in(got), h.floats_in(RECORDED), atol=1e-4)
    losses = [float(x) for x in re.findall(r"tensor\((\d+\.\d+), grad_fn=<MseLossBackward0>\)", got)]
    assert losses[1] < losses[0]
