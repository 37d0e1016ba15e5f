"""A deliberately broken PyTorch, for the fuzzer's self-test: can the fuzzer fail, and does it say why?

Three faults, each patched into torch only while the broken library runs a program:

- ``relu'(0) = 1``: a hook on every ReluBackward0 node adds the upstream gradient where the input is 0;
- a dropped accumulation: ``Tensor.backward`` first sets the ``.grad`` of every leaf it will reach to None;
- zeros instead of None: ``autograd.grad`` returns zeros for inputs that were not used.

The node names, graphs and values stay PyTorch's, so only the gradients can give the faults away.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .runner import Library, _warn_always


def broken_library(torch) -> Library:
    return Library("broken-torch", torch, "torch", lambda: _broken(torch), first_once_only=True)


@contextlib.contextmanager
def _broken(torch) -> Iterator[None]:
    F = torch.nn.functional
    saved = {
        (torch, "relu"): torch.relu,
        (torch.Tensor, "relu"): torch.Tensor.relu,
        (F, "relu"): F.relu,
        (torch.Tensor, "backward"): torch.Tensor.backward,
        (torch.autograd, "grad"): torch.autograd.grad,
    }
    torch.relu = _relu(saved[(torch, "relu")])
    torch.Tensor.relu = _relu(saved[(torch.Tensor, "relu")])
    F.relu = _relu(saved[(F, "relu")])
    torch.Tensor.backward = _dropping_backward(saved[(torch.Tensor, "backward")])
    torch.autograd.grad = _zeros_for_none(torch, saved[(torch.autograd, "grad")])
    try:
        with _warn_always(torch):
            yield
    finally:
        for (owner, name), fn in saved.items():
            setattr(owner, name, fn)


def _relu(original):
    def relu(x, *args, **kwargs):
        y = original(x, *args, **kwargs)
        if y.grad_fn is not None:
            at_zero = x.detach() == 0

            def one_at_zero(grad_inputs, grad_outputs):
                if grad_inputs[0] is None:
                    return None
                return (grad_inputs[0] + grad_outputs[0] * at_zero,)

            y.grad_fn.register_hook(one_at_zero)
        return y

    return relu


def _dropping_backward(original):
    def backward(self, *args, **kwargs):
        for leaf in _leaves(self.grad_fn):
            leaf.grad = None
        return original(self, *args, **kwargs)

    return backward


def _leaves(node) -> list:
    out, seen, stack = [], set(), [node]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        variable = getattr(n, "variable", None)
        if variable is not None:
            out.append(variable)
        stack.extend(nxt for nxt, _ in n.next_functions)
    return out


def _zeros_for_none(torch, original):
    def grad(outputs, inputs, *args, **kwargs):
        result = original(outputs, inputs, *args, **kwargs)
        seq = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
        return tuple(torch.zeros_like(i) if r is None else r for r, i in zip(result, seq))

    return grad
