"""The PUCT selection: AlphaZero's ``q + c * prior * sqrt(N) / (1 + n)``.

An unvisited edge's ``q`` is the node's own value (``fpu=None``, first-play urgency) or a fixed
number. Values ``q`` are for the player who chooses the edge (:mod:`carnac_env.search.tree`),
in ``[-1, 1]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from carnac_env import _checks
from carnac_env.search.base import Selection
from carnac_env.search.tree import edge_q, proven_lost

__all__ = ["PUCT"]


@njit(cache=True, nogil=True)
def _select(tree, t, node, constants, at_root, visit_level, solver):  # pragma: no cover - compiled
    """PUCT's edge; ``constants`` are ``(c, fpu)`` (``fpu`` NaN: the node's own value)."""
    c = constants[0]
    fpu = constants[1]
    first = tree.first[t, node]
    default = tree.value[t, node] if np.isnan(fpu) else fpu
    explore = c * np.sqrt(max(tree.visits[t, node], 1))
    best = -np.inf
    index = first
    player = tree.player[t, node]
    for k in range(tree.count[t, node]):
        e = first + k
        if solver and proven_lost(tree, t, e, player):
            continue
        n = tree.n[t, e]
        score = edge_q(tree, t, e, default) + explore * tree.prior[t, e] / (1.0 + n)
        if score > best:
            best = score
            index = e
    return index


@dataclass(frozen=True)
class PUCT(Selection):
    """AlphaZero's rule (see the module docstring).

    Args:
        c: the exploration constant.
        fpu: the value of an unvisited edge; None (the default) takes the node's own value.
    """

    c: float = 1.5
    fpu: float | None = None

    select = staticmethod(_select)

    def __post_init__(self) -> None:
        object.__setattr__(self, "c", _checks.number("PUCT c", self.c, 0.0))
        if self.fpu is not None:
            object.__setattr__(self, "fpu", _checks.number("PUCT fpu", self.fpu, -1.0, 1.0))

    def constants(self) -> tuple[float, ...]:
        """``(c, fpu)``, ``fpu`` NaN for "the node's own value"."""
        return (self.c, math.nan if self.fpu is None else self.fpu)
