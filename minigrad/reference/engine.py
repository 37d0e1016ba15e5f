"""Reverse-mode automatic differentiation, the whole of it, to be read top to bottom (lesson 14).

A Tensor holds a NumPy array. An operation on tensors that need gradients records a Node: where
each input's gradient goes (`next_functions`) and the operation's local derivative (`backward`).
`loss.backward()` runs each node once every gradient for it has arrived, and adds what reaches a
leaf into its `.grad`. Names are PyTorch's, so `viz` draws these graphs as it draws PyTorch's.
"""

from collections import deque
from types import SimpleNamespace

import numpy as np


class Node:
    """One recorded operation: where the gradient of each input goes, and how to compute it."""

    def __init__(self, name, inputs, backward):
        self._name, self.backward = name, backward  # backward: the output's gradient -> one per input
        self.next_functions = tuple((t.gradient_node(), 0) for t in inputs)  # (None, 0): needs none
        self.hooks = []

    def name(self):
        return self._name

    def register_hook(self, fn):  # fn(grad_inputs, grad_outputs) runs after the node: to watch it (viz does)
        self.hooks.append(fn)
        return SimpleNamespace(remove=lambda: self.hooks.remove(fn))  # handle.remove() takes it off


class AccumulateGrad(Node):
    """The end of a leaf's path: adds the gradient that reached the leaf into its `.grad`."""

    def __init__(self, leaf):
        super().__init__("AccumulateGrad", [], self.accumulate)
        self.variable = leaf

    def accumulate(self, grad):
        leaf = self.variable
        # a new array of the leaf's own: one gradient array may go to several nodes (`a + b` sends it to both)
        leaf.grad = np.array(grad if leaf.grad is None else leaf.grad + grad)
        return ()  # a leaf has no inputs: the gradient stops here


def as_tensor(value):
    # A number or array as a constant Tensor (one that needs no gradient); a Tensor as it is.
    return value if isinstance(value, Tensor) else Tensor(value)


def record(name, data, inputs, backward):
    # The result of an operation: a Tensor, with a Node that can differentiate it when an input needs it.
    if not any(t.requires_grad for t in inputs):
        return Tensor(data)
    return Tensor(data, grad_fn=Node(name, inputs, backward))


def unbroadcast(grad, shape):
    # Sum a gradient back to the shape of an input that broadcasting stretched (a bias added to every row).
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def count_dependencies(root):
    # For every node reachable from `root`: how many edges lead into it (how many gradients it waits for).
    dependencies, stack = {}, [root]
    while stack:  # a loop, not recursion: a chain of a million nodes is fine
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None:
                if nxt not in dependencies:  # reached for the first time: walk on from it
                    stack.append(nxt)
                dependencies[nxt] = dependencies.get(nxt, 0) + 1
    return dependencies


class Tensor:
    """An array; for a result of operations on tensors that need gradients, the node that made it."""

    def __init__(self, data, requires_grad=False, grad_fn=None):
        self.data = np.asarray(data, dtype=np.float64)  # one dtype keeps the engine short
        self.requires_grad = requires_grad or grad_fn is not None
        self.grad_fn = grad_fn  # None for a leaf: a tensor made by hand, not by an operation
        self.grad = self._accumulator = None  # .grad: filled by backward()

    shape = property(lambda self: self.data.shape)
    dtype = property(lambda self: self.data.dtype)
    is_leaf = property(lambda self: self.grad_fn is None)

    def __repr__(self):
        return f"tensor({self.data}" + (f", grad_fn=<{self.grad_fn.name()}>)" if self.grad_fn else ")")

    def gradient_node(self):  # where this tensor's gradient goes: its grad_fn, a leaf's AccumulateGrad, or None
        if self.grad_fn is None and self.requires_grad and self._accumulator is None:
            self._accumulator = AccumulateGrad(self)
        return self.grad_fn or self._accumulator

    # -- operations: the value, and the local derivative as a function of the output's gradient g -------------
    def __add__(self, other):
        other = as_tensor(other)
        return record("AddBackward0", self.data + other.data, (self, other),
                      lambda g: (unbroadcast(g, self.shape), unbroadcast(g, other.shape)))

    def __sub__(self, other):
        other = as_tensor(other)
        return record("SubBackward0", self.data - other.data, (self, other),
                      lambda g: (unbroadcast(g, self.shape), unbroadcast(-g, other.shape)))

    def __mul__(self, other):
        other = as_tensor(other)
        return record("MulBackward0", self.data * other.data, (self, other),
                      lambda g: (unbroadcast(g * other.data, self.shape), unbroadcast(g * self.data, other.shape)))

    __radd__, __rmul__ = __add__, __mul__

    def __pow__(self, exponent):  # exponent: a number
        return record("PowBackward0", self.data**exponent, (self,),
                      lambda g: (g * exponent * self.data ** (exponent - 1),))

    def __matmul__(self, other):  # two matrices
        return record("MmBackward0", self.data @ other.data, (self, other),
                      lambda g: (g @ other.data.T, self.data.T @ g))

    def sum(self):
        return record("SumBackward0", self.data.sum(), (self,), lambda g: (np.broadcast_to(g, self.shape),))

    def mean(self):
        return record("MeanBackward0", self.data.mean(), (self,),
                      lambda g: (np.broadcast_to(g / self.data.size, self.shape),))

    def exp(self):
        out = np.exp(self.data)
        return record("ExpBackward0", out, (self,), lambda g: (g * out,))

    def tanh(self):
        out = np.tanh(self.data)
        return record("TanhBackward0", out, (self,), lambda g: (g * (1 - out * out),))

    def relu(self):
        return record("ReluBackward0", np.maximum(self.data, 0), (self,), lambda g: (g * (self.data > 0),))

    # -- the backward pass ------------------------------------------------------------------------------------
    def backward(self, gradient=None):
        """Add d(self)/d(leaf), times `gradient` (1 by default), into the `.grad` of every leaf self depends on."""
        root = self.gradient_node()
        if root is None:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        dependencies = count_dependencies(root)
        grads = {root: np.ones_like(self.data) if gradient is None else as_tensor(gradient).data}
        ready = deque([root])  # nodes whose gradient is complete: every edge into them has delivered
        while ready:
            node = ready.popleft()
            grad = grads.pop(node)
            grad_inputs = node.backward(grad)  # the chain rule, one node at a time
            for hook in node.hooks:
                hook(grad_inputs, (grad,))
            for (nxt, _), g in zip(node.next_functions, grad_inputs):
                if nxt is None:
                    continue  # this input needs no gradient
                grads[nxt] = g if nxt not in grads else grads[nxt] + g  # a tensor used twice: sum
                dependencies[nxt] -= 1
                if dependencies[nxt] == 0:
                    ready.append(nxt)
