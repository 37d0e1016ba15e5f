"""PyTorch's fused backward ops (`tanh_backward(grad_output, output)`, `_softmax_backward_data`, ...): what some
derivative formulas call, so that a create_graph backward records the node PyTorch records for them
(TanhBackwardBackward0, SoftmaxBackwardDataBackward0, ...), each declared with `rule(...)` like any other node."""

from __future__ import annotations

from .._state import GRAD
from .._tensor import make
from . import xp
from .recording import record
from .registry import declare


def fused_op(name: str, kernel, node_cls, arg_names: tuple = ()):
    """A backward op of PyTorch's (`tanh_backward(grad_output, output)`, ...): `kernel` on arrays, and on
    Tensors the op that records `node_cls`, so a create_graph backward records the node PyTorch records."""

    def op(grad_output, other, *args):
        res = GRAD.quiet.run(kernel, grad_output._data, other._data, *args)
        if GRAD.mode > 0 and (grad_output._requires_grad or other._requires_grad):
            return record(node_cls, res, (grad_output, other), **dict(zip(arg_names, args)))
        return make(res)

    op.__name__ = op.__qualname__ = name
    declared = declare(name, op, method=False, public=False, nodes=(node_cls,))
    return xp.either(kernel, declared.function)  # (the function that carries tangents under forward AD)
