"""`minigrad.functional`: the functions PyTorch defines in `torch.functional` (`meshgrid`, `split`, `norm`, ...).

They are the top-level functions (`minigrad.functional.meshgrid is minigrad.meshgrid`); a name of
`torch.functional` minigrad lacks raises its "does not implement" error."""

from __future__ import annotations

from ._missing import missing_name

# torch.functional.__all__ (2.13)
TORCH_NAMES = ("atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
               "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank",
               "split", "stft", "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index")


def attach(functions: dict) -> None:
    """Take `torch.functional`'s names from the top-level namespace `functions` (called by minigrad/__init__)."""
    globals().update({name: functions[name] for name in TORCH_NAMES if name in functions})


__getattr__ = missing_name(__name__, "torch.functional")
