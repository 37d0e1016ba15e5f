"""The base of every distribution: shapes, argument and sample validation, and the repr, as PyTorch's
`torch.distributions.Distribution` (its methods are what RL and VAE lectures call: sample, rsample, log_prob,
entropy)."""

from __future__ import annotations

import numbers

from .. import _creation
from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad


class Distribution:
    """`batch_shape`: independent distributions side by side; `event_shape`: the shape of one draw."""

    has_rsample = False
    _validate_args = True  # PyTorch validates by default (unless Python runs with -O)
    arg_constraints: dict = {}
    support = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args: bool | None = None):
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if param not in self.__dict__:
                    continue  # a parameter computed lazily from the one given
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                     f"{constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def _extended_shape(self, sample_shape=()) -> Size:
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=()) -> Tensor:
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        raise NotImplementedError

    def _validate_sample(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = value.dim() - len(self._event_shape)
        if value.size()[start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        expected = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(value.size()), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {value.size()} vs "
                                 f"{expected}.")
        if not bool(self.support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({self.support!r}) of the distribution {self!r}, but found "
                             f"invalid values:\n{value}")

    def __repr__(self) -> str:
        shown = [f"{p}: {v if v.numel() == 1 else v.size()}" for p in self.arg_constraints
                 if (v := self.__dict__.get(p)) is not None]
        return f"{type(self).__name__}({', '.join(shown)})"


def broadcast_all(*values) -> tuple:
    """Numbers become tensors (of the first tensor's dtype, else the default); all broadcast to one shape."""
    like = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = like.dtype if like is not None else None
    tensors = [v if isinstance(v, Tensor) else _creation.tensor(float(v), dtype=dtype) for v in values]
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or objects implementing "
                         "__torch_function__.")
    return broadcast_tensors(*tensors)


def broadcast_tensors(*tensors) -> tuple:
    """Each tensor expanded to the common shape; one that has it already is returned itself, as PyTorch does."""
    shape = Size(_broadcast_shape(*(t.shape for t in tensors)))
    return tuple(t if t.shape == shape else t.expand(shape) for t in tensors)


def _broadcast_shape(*shapes) -> tuple:
    out: list = []
    for shape in shapes:
        for i, n in enumerate(reversed(shape)):
            if i == len(out):
                out.insert(0, n)
            elif out[-1 - i] == 1:
                out[-1 - i] = n
            elif n not in (1, out[-1 - i]):
                raise RuntimeError(f"The size of tensor a ({out[-1 - i]}) must match the size of tensor b ({n}) at "
                                   f"non-singleton dimension {len(out) - 1 - i}")
    return tuple(out)
