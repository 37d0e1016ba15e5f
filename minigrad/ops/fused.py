"""PyTorch's fused backward ops (`tanh_backward(grad_output, output)`, `_softmax_backward_data`, ...): what some
derivative formulas call, so that a create_graph backward records the node PyTorch records for them
(TanhBackwardBackward0, SoftmaxBackwardDataBackward0, ...), each declared with `rule(...)` like any other node."""

from __future__ import annotations

import inspect

from .._state import GRAD
from .._tensor import make
from . import xp
from .recording import record, rule
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


# -- a constant gradient joins the graph, as the output of PyTorch's fused backward op ------------------------------
def _no_gradient(grad):
    return None


def joining_rule(name: str, inputs: str):
    """The node PyTorch's fused backward op records (ConvolutionBackwardBackward0, ...), for a gradient that `joins`
    gives it: one computed from tensors none of which requires grad, so its derivative is zero, which PyTorch's double
    backward gives as no gradient (None). `inputs`: the op's tensors, `grad_output` first, then as the formulas name
    them."""
    return rule(name, inputs, text=f"{name}: none of the tensors this gradient was computed from requires grad; "
                                   "no gradient flows back", forward=lambda: None,
                **dict.fromkeys(inputs.split(), _no_gradient))


def joins(node_cls, formula):
    """`formula` (a derivative formula reading `grad` and the tensors named as `node_cls`'s inputs) whose gradient,
    under create_graph, requires grad whenever one of those tensors does, as PyTorch's: its fused backward op
    (convolution_backward, native_layer_norm_backward, ...) takes them all, so its result joins the graph through
    every one, even one it does not depend on (a weight's gradient Σ grad · x̂ with only the weight requiring grad).
    Where the formula's own ops recorded a graph, that graph stays."""
    names = list(inspect.signature(formula).parameters)
    takes = [names.index("grad" if n == "grad_output" else n) for n in node_cls._inputs]

    def joined(*args):
        res = formula(*args)
        if not xp.is_t(res) or res._requires_grad or GRAD.mode <= 0:
            return res
        tensors = tuple(args[i] for i in takes)
        if any(t is not None and t._requires_grad for t in tensors):
            return record(node_cls, res._data, tensors)
        return res

    joined.__signature__ = inspect.signature(formula)
    return joined
