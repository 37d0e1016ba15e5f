"""A tiny duck-typed autograd graph that speaks minigrad's introspection names.

It lets the minigrad code path of viz (``input_metadata``, ``output_tensor``, ``hooks``,
``prehooks``, ``metadata``) be tested before minigrad exists. Nothing here imports torch.
"""

from __future__ import annotations

import math
import weakref


class FakeTensor:
    def __init__(self, values, shape=None, dtype="float32", requires_grad=True, is_leaf=True,
                 grad_fn=None, output_nr=0):
        self.values = [float(v) for v in values]
        self.shape = tuple(shape) if shape is not None else (len(self.values),)
        self.dtype = dtype
        self.requires_grad = requires_grad
        self.is_leaf = is_leaf
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        self.grad = None
        self.retains_grad = False
        self.hooks = ()

    # the few methods viz uses to summarise values
    def detach(self):
        return self

    def double(self):
        return self

    def tolist(self):
        return list(self.values) if self.shape else self.values[0]

    def min(self):
        return min(self.values)

    def max(self):
        return max(self.values)

    def mean(self):
        return sum(self.values) / len(self.values)

    def std(self):
        m = self.mean()
        return math.sqrt(sum((v - m) ** 2 for v in self.values) / (len(self.values) - 1))


class FakeNode:
    """A grad_fn node: ``name()``, ``next_functions`` and minigrad's extra names."""

    def __init__(self, name, next_functions=(), input_metadata=(((3,), "float32"),), output=None,
                 hooks=(), prehooks=(), metadata=None, **saved):
        self._name = name
        self.next_functions = tuple(next_functions)
        self.input_metadata = tuple(input_metadata)
        self._output = weakref.ref(output) if output is not None else None
        self.hooks = tuple(hooks)
        self.prehooks = tuple(prehooks)
        self.metadata = dict(metadata or {})
        for key, value in saved.items():  # e.g. _saved_self=x, _saved_dim=...
            setattr(self, key, value)

    def name(self):
        return self._name

    @property
    def output_tensor(self):
        return self._output() if self._output is not None else None


class FakeAccumulateGrad(FakeNode):
    def __init__(self, variable, **kw):
        super().__init__("minigrad::autograd::AccumulateGrad",
                         input_metadata=((variable.shape, variable.dtype),), **kw)
        self.variable = variable


def mul_graph():
    """y = (x * x) * 2, built by hand: MulBackward0 -> (MulBackward0, 0), (None, 0)."""
    x = FakeTensor([1, 2, 3])
    acc = FakeAccumulateGrad(x)
    xx = FakeTensor([1, 4, 9], is_leaf=False)
    sq = FakeNode("MulBackward0", [(acc, 0), (acc, 0)], output=xx, _saved_self=x, _saved_other=x)
    xx.grad_fn = sq
    y = FakeTensor([2, 8, 18], is_leaf=False)
    top = FakeNode("MulBackward0", [(sq, 0), (None, 0)], output=y, _saved_other=FakeTensor([2], shape=()),
                   _saved_self=None)
    y.grad_fn = top
    return {"x": x, "acc": acc, "xx": xx, "sq": sq, "y": y, "top": top}
