"""What a distribution's parameters and samples must satisfy, with PyTorch's names (their reprs appear in its
validation errors)."""

from __future__ import annotations

from .._tensor import Tensor


class Constraint:
    """A set of values; `check(value)` is a bool tensor saying which elements belong."""

    event_dim = 0
    is_discrete = False

    def check(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Real(Constraint):
    def check(self, value):
        return value == value  # not nan


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return value > self.lower_bound

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & super().check(value)

    def __repr__(self) -> str:
        return "Integer" + super().__repr__()


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _IndependentReal(Constraint):
    event_dim = 1

    def check(self, value):
        return (value == value).all(dim=-1)

    def __repr__(self) -> str:
        return "IndependentConstraint(Real(), 1)"


real = _Real()
positive = _GreaterThan(0.0)
unit_interval = _Interval(0.0, 1.0)
boolean = _Boolean()
simplex = _Simplex()
real_vector = _IndependentReal()
integer_interval = _IntegerInterval
