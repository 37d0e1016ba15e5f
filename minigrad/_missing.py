"""The error for a PyTorch name minigrad does not have: say so, instead of a bare AttributeError."""

from __future__ import annotations

from ._torch_tensor_names import TENSOR_NAMES


def missing_name(module: str, torch_prefix: str):
    """A module-level `__getattr__` for `module`, whose PyTorch twin is `torch_prefix` (e.g. 'torch.nn')."""

    def __getattr__(name: str):
        if name.startswith("_"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise AttributeError(
            f"minigrad does not implement {torch_prefix}.{name}. minigrad covers PyTorch's autograd API for "
            "teaching; see 'Differences from PyTorch' in the README for what is left out.")

    return __getattr__


MISSING_HINT = ("minigrad covers PyTorch's autograd API for teaching; see 'Differences from PyTorch' in the README "
                "for what is left out.")


class _MissingAttribute:
    """A PyTorch Tensor attribute minigrad lacks: reading it says so (`hasattr` is False)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj, owner=None):
        raise AttributeError(f"'Tensor' object has no attribute '{self.name}' (minigrad does not implement "
                             f"Tensor.{self.name}; see 'Differences from PyTorch' in the README)")


def install_tensor_stubs(cls) -> frozenset:
    """Put a `_MissingAttribute` on `cls` for each PyTorch Tensor name it does not define; returns the names."""

    added = []
    for name in TENSOR_NAMES:
        if name not in dir(cls):
            setattr(cls, name, _MissingAttribute(name))
            added.append(name)
    return frozenset(added)
