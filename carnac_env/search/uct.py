"""The UCT selection: UCB1 with every untried edge first, for searches that value leaves by
random playouts (the ``mcts`` agent).

Every untried edge first, in a random order (drawn from the tree's SplitMix64 state), then the
highest ``score + c * sqrt(ln N / n)`` with the score on the classic scale (1 win, 0.5 draw,
0 loss). Values ``q`` are for the player who chooses the edge (:mod:`carnac_env.search.tree`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from carnac_env import _checks
from carnac_env.batch.rng import splitmix
from carnac_env.search.base import Selection
from carnac_env.search.tree import proven_lost, swap_edges

__all__ = ["UCT"]


@njit(fastmath=True, cache=True, nogil=True)
def _select(tree, t, node, constants, at_root, visit_level, solver):  # pragma: no cover - compiled
    """UCT's edge (fastmath: the per-edge scores vectorise); ``constants[0]`` is ``c``."""
    c = constants[0]
    first = tree.first[t, node]
    count = tree.count[t, node]
    tried = tree.tried[t, node]
    if tried < count:  # an untried edge, drawn at random, swapped to the front of the untried ones
        x, u = splitmix(tree.rng[t])
        tree.rng[t] = x
        pick = first + tried + int(u * (count - tried))
        swap_edges(tree, t, first + tried, pick)
        tree.tried[t, node] = tried + 1
        return first + tried
    # score = (1 + w/n) / 2, so ranking by w/n + 2c sqrt(ln N / n) keeps UCB1's order
    scale = 4.0 * c * c * np.log(max(tree.visits[t, node], 1))
    best = -np.inf
    index = first
    player = tree.player[t, node]
    for k in range(count):
        e = first + k
        if solver and proven_lost(tree, t, e, player):  # MCTS-Solver: skip edges proven lost for the mover
            continue
        n = tree.n[t, e]
        score = tree.w[t, e] / n + np.sqrt(scale / n)
        if score > best:
            best = score
            index = e
    return index


@dataclass(frozen=True)
class UCT(Selection):
    """UCB1 with untried edges first (see the module docstring).

    Args:
        c: the exploration constant on the scale of scores 1 win, 0.5 draw, 0 loss.
    """

    c: float = 1.0

    select = staticmethod(_select)

    def __post_init__(self) -> None:
        object.__setattr__(self, "c", _checks.number("UCT c", self.c, 0.0))

    def constants(self) -> tuple[float, ...]:
        """``(c,)``."""
        return (self.c,)
