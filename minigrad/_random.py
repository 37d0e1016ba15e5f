"""Random numbers: minigrad's own reproducible stream (`manual_seed`), not PyTorch's."""

from __future__ import annotations

import ast

import numpy as np

from ._device import CPU
from ._tensor import make


class Generator:
    """`minigrad.Generator()`: a seedable source of random numbers (NumPy's PCG64 inside)."""

    def __init__(self, device="cpu"):
        self._seed = 67280421310721  # PyTorch's default seed, for familiarity
        self._np = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._np = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self) -> int:
        s = int(np.random.SeedSequence().entropy % (1 << 63))
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        return make(np.frombuffer(repr(self._np.bit_generator.state).encode(), dtype=np.uint8).copy())

    def set_state(self, state) -> None:
        self._np.bit_generator.state = ast.literal_eval(bytes(state._data).decode())

    @property
    def device(self):
        return CPU


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed minigrad's default generator (reproducible minigrad runs; PyTorch's stream differs)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state) -> None:
    default_generator.set_state(state)
