"""Port of PyTorch's "Model ensembling" tutorial (torch.func: stack_module_state, functional_call, vmap).

Source: github.com/pytorch/tutorials, intermediate_source/ensembling.py (commit
1dc22dff39bc8f6c862783393b70ca1e1b8ed516), published as pytorch.org/tutorials/intermediate/ensembling.html.
Ten MLPs' predictions by a loop and by one `vmap(fmodel)` over their stacked states, on a different minibatch per
model and on the same one (`in_dims=(0, 0, None)`), checked against each other.
The code is the tutorial's, statement by statement. Changes:
- the imports `import torch.nn as nn` / `torch.nn.functional as F` / `from torch.func import ...` /
  `from torch import vmap` become `nn = torch.nn`, `stack_module_state = torch.func.stack_module_state` etc.;
- `device = 'cuda'` -> 'cpu'; sizes shrunk (images of 6 x 6 instead of 28 x 28, minibatches of 16, hidden layers
  of 32): `nn.Linear(784, 128)` -> `nn.Linear(36, 32)`, `nn.Linear(128, 128)` -> `nn.Linear(32, 32)`,
  `nn.Linear(128, 10)` -> `nn.Linear(32, 10)`, `torch.randn(100, 64, 1, 28, 28)` -> (12, 16, 1, 6, 6);
- `torch.randn` / `torch.randint` / the layers' initialisation -> NumPy draws wrapped by the library
  (`numpy_init`, a seed per model), so both libraries compute the same numbers;
- `base_model.to('meta')` is left out (minigrad has no meta device; the copy's own values are never read:
  functional_call replaces them all), and so is the timing section (torch.utils.benchmark).
"""

from __future__ import annotations

import copy

import numpy as np
import teaching_helpers as h

import minigrad


def program(torch, rng: np.random.Generator):
    nn = torch.nn  # import torch.nn as nn
    F = torch.nn.functional  # import torch.nn.functional as F
    torch.manual_seed(0)

    # Here's a simple MLP
    class SimpleMLP(nn.Module):
        def __init__(self):
            super(SimpleMLP, self).__init__()
            self.fc1 = nn.Linear(36, 32)  # was (784, 128)
            self.fc2 = nn.Linear(32, 32)  # was (128, 128)
            self.fc3 = nn.Linear(32, 10)  # was (128, 10)

        def forward(self, x):
            x = x.flatten(1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            x = F.relu(x)
            x = self.fc3(x)
            return x

    device = 'cpu'  # was 'cuda'
    num_models = 10

    data = torch.tensor(rng.standard_normal((12, 16, 1, 6, 6)).astype(np.float32))  # was torch.randn(100, 64, ...)
    targets = torch.tensor(rng.integers(0, 10, (192,)))  # noqa: F841 (was torch.randint(10, (6400,)))

    models = [SimpleMLP().to(device) for _ in range(num_models)]
    for seed, model in enumerate(models):  # added
        h.numpy_init(torch, model, seed=seed)

    minibatches = data[:num_models]
    predictions_diff_minibatch_loop = [model(minibatch) for model, minibatch in zip(models, minibatches)]

    minibatch = data[0]
    predictions2 = [model(minibatch) for model in models]

    stack_module_state = torch.func.stack_module_state  # from torch.func import stack_module_state

    params, buffers = stack_module_state(models)

    functional_call = torch.func.functional_call  # from torch.func import functional_call

    # Construct a "stateless" version of one of the models.
    base_model = copy.deepcopy(models[0])
    # base_model = base_model.to('meta')  (left out: no meta device in minigrad)

    def fmodel(params, buffers, x):
        return functional_call(base_model, (params, buffers), (x,))

    print([p.size(0) for p in params.values()])  # show the leading 'num_models' dimension

    assert minibatches.shape == (num_models, 16, 1, 6, 6)  # verify minibatch has leading dimension 'num_models'

    vmap = torch.vmap  # from torch import vmap

    predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)

    # verify the vmap predictions match the
    assert torch.allclose(predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5)

    predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)

    assert torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-3, rtol=1e-5)
    return predictions1_vmap.detach().numpy(), predictions2_vmap.detach().numpy()


def test_ensembling_prints_and_agrees_with_the_loop(lib):
    out, (p1, p2) = h.printed(program, lib, np.random.default_rng(0))
    assert out == "[10, 10, 10, 10, 10, 10]\n"
    assert p1.shape == p2.shape == (10, 16, 10)


def test_ensembling_equals_pytorchs(torch):
    want = program(torch, np.random.default_rng(0))
    got = h.printed(program, minigrad, np.random.default_rng(0))[1]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
