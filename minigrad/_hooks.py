"""Hook handles: what every `register_*hook` returns (PyTorch's `torch.utils.hooks.RemovableHandle`)."""

from __future__ import annotations

import itertools
import weakref


class RemovableHandle:
    """Returned by every `register_*hook`; `.remove()` takes the hook out again (also as a context manager)."""

    __slots__ = ("_hooks", "id")
    _next_id = itertools.count()

    def __init__(self, hooks: HookDict):
        self._hooks = weakref.ref(hooks)  # a handle must not keep a dead tensor's or node's hooks alive
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        hooks = self._hooks()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class HookDict(dict):
    """Hooks in registration order, keyed by their handle's id."""

    __slots__ = ("__weakref__",)

    def add(self, fn) -> RemovableHandle:
        handle = RemovableHandle(self)
        self[handle.id] = fn
        return handle
