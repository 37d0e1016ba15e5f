"""`Bernoulli(probs=...)` or `(logits=...)`: a coin per element (dropout masks, binary policies). log_prob and
entropy are binary cross-entropies with logits, as PyTorch computes them (so their nodes are PyTorch's)."""

from __future__ import annotations

import numbers

from .. import _creation
from .._dtypes import finfo
from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from ..ops.elementwise import log, log1p, sigmoid
from ..ops.selection import clamp
from . import constraints
from .distribution import Distribution, broadcast_all


class Bernoulli(Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        super().__init__(Size() if isinstance(given, numbers.Number) else param.size(), validate_args=validate_args)

    def __getattr__(self, name: str):
        """logits from probs (log-odds of the clamped probs) or probs from logits (sigmoid), made when first
        read, as PyTorch's lazy properties."""
        if name == "logits" and "probs" in self.__dict__:
            eps = finfo(self.probs.dtype).eps
            p = clamp(self.probs, min=eps, max=1 - eps)
            self.logits = log(p) - log1p(-p)
            return self.logits
        if name == "probs" and "logits" in self.__dict__:
            self.probs = sigmoid(self.logits)
            return self.probs
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _creation.bernoulli(self.probs.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
