"""`minigrad.autograd.backward` and `minigrad.autograd.grad`: the entry points to the backward pass (and
`Tensor.backward`, attached here since Tensor sits below autograd). They check the roots, make the seed
gradients and hand the graph to the engine (`engine.run_backward`)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from .._creation import tensor
from .._tensor import Size, Tensor, make, ones_like_array
from . import engine


def _tensors(x) -> tuple:
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs: tuple, grads: tuple, create_graph: bool) -> list:
    """Seed gradients: ones for a one-element output, else the given tensor (shape-checked)."""
    out = []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if t._data.dtype.kind != "f":
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                   f"{t.dtype}")
            arr = ones_like_array(t._data)
            out.append(make(arr) if create_graph else arr)
            continue
        if not hasattr(g, "_data"):
            g = tensor(g, dtype=t.dtype)
        if g._data.shape != t._data.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._data.shape)} and "
                               f"output[{i}] has a shape of {Size(t._data.shape)}.")
        if g._data.dtype != t._data.dtype:
            g = g.to(t.dtype)
        out.append(g if create_graph else g._data)
    return out


def _check_outputs(outputs: tuple) -> None:
    for i, t in enumerate(outputs):
        engine.check_usable(t)
        if not t._requires_grad or (t._base is not None and t._grad_fn is None and not t._extras.own_requires_grad):
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None, create_graph: bool = False,
             grad_variables=None, inputs=None) -> None:
    """Compute the gradients of `tensors` and add them into `.grad` of the leaves (or of `inputs`)."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    outputs = _tensors(tensors)
    if grad_tensors is None:
        grads = (None,) * len(outputs)
    else:
        grads = _tensors(grad_tensors) if not isinstance(grad_tensors, Sequence) else tuple(grad_tensors)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(grads)} tensors and {len(outputs)} gradients")
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _tensors(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    _check_outputs(outputs)
    if create_graph:  # with or without inputs=, as PyTorch
        engine.warn_create_graph_backward()
    seeds = _make_grads(outputs, grads, create_graph)
    engine.run_backward(list(outputs), seeds, retain_graph, create_graph, inputs=inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple:
    """Return the gradients of `outputs` with respect to `inputs`, without touching any `.grad`."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use minigrad.autograd.backward.", FutureWarning,
                      stacklevel=2)
    outs = _tensors(outputs)
    ins = _tensors(inputs)
    if grad_outputs is None:
        grads = (None,) * len(outs)
    else:
        grads = (grad_outputs,) if isinstance(grad_outputs, Tensor) else tuple(grad_outputs)
    if is_grads_batched:
        return _batched_grad(outs, ins, grads, retain_graph=retain_graph, create_graph=create_graph,
                             allow_unused=allow_unused, materialize_grads=materialize_grads)
    if allow_unused is None:
        allow_unused = materialize_grads
    _check_outputs(outs)  # PyTorch checks the outputs first
    for t in ins:
        engine.check_usable(t)
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    seeds = _make_grads(outs, grads, create_graph)
    result = engine.run_backward(list(outs), seeds, retain_graph, create_graph, inputs=ins, accumulate=False,
                                 allow_unused=allow_unused)
    if materialize_grads:  # PyTorch's zeros_like(input, requires_grad=create_graph)
        result = tuple(make(np.zeros_like(t._data), requires_grad=create_graph) if g is None else g
                       for t, g in zip(ins, result))
    return result


def _batched_grad(outs: tuple, ins: tuple, grads: tuple, retain_graph, **options) -> tuple:
    """`grad(..., is_grads_batched=True)`: the first dim of each grad_output is a batch of vectors; each gets its own
    backward pass (PyTorch vectorises them with vmap), and the results are stacked along a new first dim."""
    for i, (g, t) in enumerate(zip(grads, outs)):
        if g is None or tuple(g.shape[1:]) != t._data.shape:
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of corresponding "
                f"output, but a mismatch was detected: grad_output[{i}] has a shape of "
                f"{Size(g.shape[1:] if g is not None else ())} and output[{i}] has a shape of {Size(t._data.shape)}. "
                "If you only want some tensors in `grad_output` to be considered batched, consider using vmap.")
    n = grads[0].shape[0]
    rows = [grad(outs, ins, [g[i] for g in grads], retain_graph=True if i < n - 1 else retain_graph, **options)
            for i in range(n)]
    if not rows:
        return tuple(make(np.zeros((0,) + t._data.shape, t._data.dtype)) for t in ins)
    return tuple(None if parts[0] is None else stacked(list(parts)) for parts in zip(*rows))


def stacked(tensors: list) -> Tensor:
    """`minigrad.stack(tensors)`, recorded (StackBackward0) when they require grad: batched gradients, Jacobian rows."""
    from ..ops.joining import stack  # lazy: the ops load after autograd's package (they use its graph)

    return stack(tensors)


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """Compute the gradient of this tensor w.r.t. the graph's leaves (see `minigrad.autograd.backward`)."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


_tensor_backward.__name__, _tensor_backward.__qualname__ = "backward", "Tensor.backward"
Tensor.backward = _tensor_backward
