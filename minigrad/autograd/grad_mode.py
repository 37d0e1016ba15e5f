"""Grad mode: whether operations record a graph. Per thread, as in PyTorch.

The switch itself is `minigrad._state.GRAD.mode` (1 = grad enabled, 0 = no_grad, -1 = inference mode:
no grad, and new tensors are inference tensors); these are the context managers and decorators
that set it.
"""

from __future__ import annotations

import functools
import inspect

from .._state import GRAD, INFERENCE_MODE_USED


def is_grad_enabled() -> bool:
    return GRAD.mode > 0


def is_inference_mode_enabled() -> bool:
    return GRAD.mode < 0


class _DecoratorContextManager:
    """Usable as `with cm:`, `@cm()`, and bare `@cm` (the class itself decorating a function)."""

    _target = 1

    def __new__(cls, orig_func=None, *args, **kwargs):
        if cls is not set_grad_enabled and callable(orig_func) and not args and not kwargs:
            # bare decorator: @no_grad (without parentheses)
            return cls()(orig_func)
        return super().__new__(cls)

    def __enter__(self):
        self._prev = GRAD.mode
        GRAD.mode = self._target

    def __exit__(self, *exc):
        GRAD.mode = self._prev
        return False

    def clone(self):
        return self.__class__()

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self.clone():
                    value = next(gen)
                while True:
                    try:
                        with self.clone():
                            sent = yield value
                        with self.clone():
                            value = gen.send(sent)
                    except StopIteration as stop:
                        return stop.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper


class no_grad(_DecoratorContextManager):
    """Operations inside do not record a graph (results have requires_grad=False)."""

    _target = 0

    def __init__(self, orig_func=None) -> None:
        pass

    def __repr__(self) -> str:
        return f"<minigrad.autograd.grad_mode.no_grad object at {hex(id(self))}>"


class enable_grad(_DecoratorContextManager):
    """Turns recording back on inside a no_grad block."""

    _target = 1

    def __init__(self, orig_func=None) -> None:
        pass


class set_grad_enabled(_DecoratorContextManager):
    """`set_grad_enabled(False)` switches at once (a plain call), and restores on `__exit__`."""

    def __init__(self, mode: bool) -> None:
        self._prev = GRAD.mode
        self.mode = bool(mode)
        self._target = 1 if mode else 0
        if GRAD.mode >= 0:
            GRAD.mode = self._target

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        GRAD.mode = self._prev
        return False

    def clone(self):
        return self.__class__(self.mode)

    def __call__(self, func):
        GRAD.mode = self._prev  # used as a decorator: the call above must not leak
        return super().__call__(func)

    def __repr__(self) -> str:
        return f"minigrad.autograd.grad_mode.set_grad_enabled(mode={self.mode})"


class inference_mode(_DecoratorContextManager):
    """Like no_grad, and tensors made inside are inference tensors (never saved for backward)."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return object.__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self._target = -1 if mode else 1

    def __enter__(self):
        self._prev = GRAD.mode
        if self.mode:
            INFERENCE_MODE_USED[0] = True
            GRAD.mode = -1
        elif GRAD.mode < 0:
            GRAD.mode = 1

    def clone(self):
        return self.__class__(self.mode)
