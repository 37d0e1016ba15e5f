"""`minigrad.random`: the random-number functions PyTorch also keeps in `torch.random` (`torch.random.manual_seed`),
the same functions as the top-level ones."""

from __future__ import annotations

from ._missing import missing_name
from ._random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]

__getattr__ = missing_name(__name__, "torch.random")
