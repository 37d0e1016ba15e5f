"""`Categorical(probs=...)` or `(logits=...)`: one of K classes (a policy's action, a sampled token). Normalised
as PyTorch normalises (probs / sum, logits - logsumexp), so log_prob and entropy record PyTorch's nodes."""

from __future__ import annotations

from .. import _creation
from .._dtypes import finfo
from .._tensor import Size, Tensor
from ..nn.functional import softmax
from ..ops.elementwise import log
from ..ops.selection import clamp
from . import constraints
from .distribution import Distribution, broadcast_tensors


def probs_to_logits(probs: Tensor) -> Tensor:
    eps = finfo(probs.dtype).eps
    return log(clamp(probs, min=eps, max=1 - eps))


class Categorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None, validate_args: bool | None = None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        super().__init__(self._param.size()[:-1] if self._param.dim() > 1 else Size(), validate_args=validate_args)

    def __getattr__(self, name: str):
        """probs from logits (softmax) or logits from probs (log), made when first read, as PyTorch's lazy
        properties."""
        if name == "logits" and "probs" in self.__dict__:
            self.logits = probs_to_logits(self.probs)
            return self.logits
        if name == "probs" and "logits" in self.__dict__:
            self.probs = softmax(self.logits, dim=-1)
            return self.probs
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return _creation.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    variance = mean

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    def sample(self, sample_shape=()) -> Tensor:
        sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = _creation.multinomial(probs_2d.detach(), sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = clamp(self.logits, min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _creation.arange(self._num_events).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1, *self._batch_shape)) if expand else values
