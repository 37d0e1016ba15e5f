"""Port of NYU Deep Learning (Canziani and LeCun, DLSP20), 03: the autograd tutorial.

Source: github.com/Atcold/NYU-DLSP20, 03-autograd_tutorial.ipynb (commit 3049c83260ba05700e2ab9b7ed13cdbe5ddba0fd):
`requires_grad`, `grad_fn` and `next_functions[0][0].variable`, `z.mean().backward()` by hand, a dynamic graph
(a while loop on `y.data.norm()`) backpropagated with `torch.FloatTensor` gradients, `w @ x` with and without
`requires_grad`, and the RuntimeError of backward under `torch.no_grad()`. Code as the notebook's cells, in
order. Changes:
- `torch.randn(3, requires_grad=True)` -> a NumPy draw wrapped by the library;
- torchviz's `make_dot(a)` -> dropped; the notebook's bare expressions -> printed;
- the whole printed text is held to what PyTorch 2.13 prints (addresses and the library's name normalised).
"""

from __future__ import annotations

import numpy as np
import teaching_helpers as h

RECORDED = """\
tensor([[1., 2.],
        [3., 4.]], requires_grad=True)
tensor([[-1.,  0.],
        [ 1.,  2.]], grad_fn=<SubBackward0>)
<SubBackward0 object at 0x?>
None
<SubBackward0 object at 0x?>
<AccumulateGrad object at 0x?>
tensor([[1., 2.],
        [3., 4.]], requires_grad=True)
tensor([[ 3.,  0.],
        [ 3., 12.]], grad_fn=<MulBackward0>)
tensor(4.5000, grad_fn=<MeanBackward0>)
tensor([[-1.5000,  0.0000],
        [ 1.5000,  3.0000]])
tensor([ 257.4955, -270.5508, 1311.5856], grad_fn=<MulBackward0>)
tensor([2.0480e+02, 2.0480e+03, 2.0480e-01])
10
tensor([1., 1., 1.])
tensor([1., 2., 3.])
None
tensor([1., 2., 3.])
RuntimeError!!! >:[
element 0 of tensors does not require grad and does not have a grad_fn"""  # printed by PyTorch 2.13


def program(torch):
    x = torch.tensor([[1, 2], [3, 4]], requires_grad=True, dtype=torch.float32)
    print(x)
    y = x - 2
    print(y)
    print(y.grad_fn)
    print(x.grad_fn)
    print(y.grad_fn)  # (a bare expression in the notebook)
    print(y.grad_fn.next_functions[0][0])  # (a bare expression)
    print(y.grad_fn.next_functions[0][0].variable)  # (a bare expression)
    z = y * y * 3
    a = z.mean()  # average
    print(z)
    print(a)
    a.backward()
    print(x.grad)

    # Dynamic graphs!
    x = torch.tensor(np.random.default_rng(0).standard_normal(3).astype(np.float32), requires_grad=True)  # was randn
    y = x * 2
    i = 0
    while y.data.norm() < 1000:
        y = y * 2
        i += 1
    print(y)
    gradients = torch.FloatTensor([0.1, 1.0, 0.0001])
    y.backward(gradients)
    print(x.grad)
    print(i)

    n = 3
    x = torch.arange(1., n + 1, requires_grad=True)
    w = torch.ones(n, requires_grad=True)
    z = w @ x
    z.backward()
    print(x.grad, w.grad, sep='\n')

    x = torch.arange(1., n + 1)
    w = torch.ones(n, requires_grad=True)
    z = w @ x
    z.backward()
    print(x.grad, w.grad, sep='\n')

    x = torch.arange(1., n + 1)
    w = torch.ones(n, requires_grad=True)
    with torch.no_grad():
        z = w @ x
    try:
        z.backward()
    except RuntimeError as e:
        print('RuntimeError!!! >:[')
        print(e)


def test_autograd_tutorial(lib):
    out, _ = h.printed(program, lib)
    assert h.as_torch_text(out).split("\nhint:")[0].rstrip() == RECORDED
