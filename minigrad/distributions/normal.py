"""`Normal(loc, scale)`: the Gaussian, with reparameterised samples (`rsample`, VAEs) and PyTorch's formulas, so
log_prob and entropy record PyTorch's nodes."""

from __future__ import annotations

import math
import numbers

from .. import _creation
from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from ..ops.elementwise import log
from . import constraints
from .distribution import Distribution, broadcast_all


class Normal(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def sample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _creation.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()) -> Tensor:
        """loc + eps * scale with eps ~ N(0, 1): differentiable in loc and scale (the reparameterisation trick)."""
        eps = _creation.randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return -((value - self.loc) ** 2) / (2 * var) - log(self.scale) - math.log(math.sqrt(2 * math.pi))

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + log(self.scale)
