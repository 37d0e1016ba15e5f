"""The error for a PyTorch name minigrad does not have: say so, instead of a bare AttributeError."""

from __future__ import annotations


def missing_name(module: str, torch_prefix: str):
    """A module-level `__getattr__` for `module`, whose PyTorch twin is `torch_prefix` (e.g. 'torch.nn')."""

    def __getattr__(name: str):
        if name.startswith("_"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise AttributeError(
            f"minigrad does not implement {torch_prefix}.{name}. minigrad covers PyTorch's autograd API for "
            "teaching; see 'Differences from PyTorch' in the README for what is left out.")

    return __getattr__
