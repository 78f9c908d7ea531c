"""SplitMix64, the generator of the compiled family's random moves (numba).

One 64-bit state per stream: :func:`splitmix` advances it and draws a uniform float in
``[0, 1)``; :func:`seed_state` turns any integer into a state. The compiled playouts
(:mod:`carnac_env.search.playouts`) and the search's untried-edge order (UCT,
:mod:`carnac_env.search.selection`) draw from it, so the same position and seed give the same
playout, and the same search, on every machine.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["seed_state", "splitmix"]

_JIT = {"cache": True, "nogil": True}

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(**_JIT)
def splitmix(x):  # pragma: no cover - compiled
    """SplitMix64: the next generator state and a uniform float in [0, 1)."""
    x = x + _GOLDEN
    z = x
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return x, np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


def seed_state(seed: int) -> np.uint64:
    """A SplitMix64 state from any integer (taken modulo 2**64)."""
    return np.uint64(int(seed) % 2**64)
