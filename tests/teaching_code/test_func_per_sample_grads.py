"""Port of PyTorch's "Per-sample-gradients" tutorial (torch.func: functional_call, vmap, grad).

Source: github.com/pytorch/tutorials, intermediate_source/per_sample_grads.py (commit
0bb46a4a7c3e4a4d185372221fecb5754f68fcca), published as pytorch.org/tutorials/intermediate/per_sample_grads.html.
A CNN's per-sample gradients, first by a loop of forward and backward passes, then as
`vmap(grad(compute_loss), in_dims=(None, None, 0, 0))`, checked against each other.
The code is the tutorial's, statement by statement. Changes:
- the imports `import torch.nn as nn` / `torch.nn.functional as F` become `nn = torch.nn` etc.;
- `device = 'cuda'` -> 'cpu'; sizes shrunk (a batch of 8 images of 10 x 10, conv channels 4 and 8, fc1 72 -> 16),
  so the port runs in a second: `nn.Linear(9216, 128)` -> `nn.Linear(72, 16)`, `nn.Linear(128, 10)` ->
  `nn.Linear(16, 10)`, `batch_size = 64` -> 8, `torch.randint(10, (64,))` -> 8 targets;
- `torch.randn` / `torch.randint` / the layers' initialisation -> NumPy draws wrapped by the library
  (`numpy_init`), so both libraries compute the same numbers;
- the float64 diagnosis printed on a mismatch is reduced to its first line (it only runs when the assertion is
  about to fail), and the timing section (torch.utils.benchmark) is left out: timings are not compared.
"""

from __future__ import annotations

import numpy as np
import teaching_helpers as h

import minigrad


def program(torch, rng: np.random.Generator):
    nn = torch.nn  # import torch.nn as nn
    F = torch.nn.functional  # import torch.nn.functional as F
    torch.manual_seed(0)

    class SimpleCNN(nn.Module):
        def __init__(self):
            super(SimpleCNN, self).__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)  # was (1, 32, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)  # was (32, 64, 3, 1)
            self.fc1 = nn.Linear(72, 16)  # was (9216, 128)
            self.fc2 = nn.Linear(16, 10)  # was (128, 10)

        def forward(self, x):
            x = self.conv1(x)
            x = F.relu(x)
            x = self.conv2(x)
            x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = torch.flatten(x, 1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            output = F.log_softmax(x, dim=1)
            return output

    def loss_fn(predictions, targets):
        return F.nll_loss(predictions, targets)

    device = 'cpu'  # was 'cuda'

    num_models = 10  # noqa: F841 (the tutorial's)
    batch_size = 8  # was 64
    data = torch.tensor(rng.standard_normal((batch_size, 1, 10, 10)).astype(np.float32))  # was torch.randn

    targets = torch.tensor(rng.integers(0, 10, (8,)))  # was torch.randint(10, (64,), device=device)

    model = SimpleCNN().to(device=device)
    h.numpy_init(torch, model, seed=1)  # added
    predictions = model(data)  # move the entire mini-batch through the model

    loss = loss_fn(predictions, targets)
    loss.backward()  # back propagate the 'average' gradient of this mini-batch

    def compute_grad(sample, target):
        sample = sample.unsqueeze(0)  # prepend batch dimension for processing
        target = target.unsqueeze(0)

        prediction = model(sample)
        loss = loss_fn(prediction, target)

        return torch.autograd.grad(loss, list(model.parameters()))

    def compute_sample_grads(data, targets):
        """ manually process each sample with per sample gradient """
        sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
        sample_grads = zip(*sample_grads)
        sample_grads = [torch.stack(shards) for shards in sample_grads]
        return sample_grads

    per_sample_grads = compute_sample_grads(data, targets)

    print(per_sample_grads[0].shape)

    functional_call, vmap, grad = torch.func.functional_call, torch.func.vmap, torch.func.grad

    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)

        predictions = functional_call(model, (params, buffers), (batch,))
        loss = loss_fn(predictions, targets)
        return loss

    ft_compute_grad = grad(compute_loss)

    ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))

    ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)

    for i, (per_sample_grad, ft_per_sample_grad) in enumerate(
        zip(per_sample_grads, ft_per_sample_grads.values())
    ):
        is_close = torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
        if not is_close:
            print(f"Gradient {i} mismatch:")  # (the float64 diagnosis that follows is left out)

        # Keep the original assertion
        assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
    return {k: v.detach().numpy() for k, v in ft_per_sample_grads.items()}


def test_per_sample_grads_print_and_agree_with_the_loop(lib):
    out, grads = h.printed(program, lib, np.random.default_rng(0))
    assert h.as_torch_text(out) == "torch.Size([8, 4, 1, 3, 3])\n"
    assert [g.shape for g in grads.values()] == [(8, 4, 1, 3, 3), (8, 4), (8, 8, 4, 3, 3), (8, 8), (8, 16, 72),
                                                 (8, 16), (8, 10, 16), (8, 10)]


def test_per_sample_grads_equal_pytorchs(torch):
    want = program(torch, np.random.default_rng(0))
    got = h.printed(program, minigrad, np.random.default_rng(0))[1]
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-6)
