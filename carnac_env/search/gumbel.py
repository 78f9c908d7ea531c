"""The Gumbel selection: Gumbel MuZero's rules (Danihelka et al., *Policy improvement by planning
with Gumbel*, ICLR 2022).

At the root, sequential halving over the ``considered`` best actions by ``gumbel + logit``
(:func:`halving_schedule`): the simulations are shared out in rounds, each round visiting
every remaining action equally, and after each round the worse half (by ``gumbel + logit +
sigma(completed q)``) drops out. Below the root, the edge that most lacks visits relative to
the improved policy ``softmax(logit + sigma(completed q))``. ``completed q`` gives unvisited
edges the node's mixed value (its network value mixed with the prior-weighted mean of the
visited edges' values); ``sigma`` rescales the node's values to ``[0, 1]`` and multiplies by
``(maxvisit_init + max n) * value_scale``. The improved policy is also the policy target for
training.

The completed-Q transform is written once: :func:`completed_values` (the mixed value and the
range of the completed values), :func:`sigma_scale`, and :func:`completed_score`, the score
``[gumbel +] logit + sigma(completed q)`` of one edge, which the improved policy
(:func:`improved_policy`, also the interior selection) and the root's halving
(:func:`gumbel_root_scores`) read.

Values ``q`` are always for the player who chooses the edge (see
:mod:`carnac_env.search.tree`), in ``[-1, 1]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from carnac_env import _checks
from carnac_env.search.base import Selection
from carnac_env.search.tree import edge_q, proven_lost

__all__ = ["Gumbel", "halving_schedule"]

_JIT = {"cache": True, "nogil": True}


def halving_schedule(considered: int, sims: int) -> np.ndarray:
    """Sequential halving's plan for the root: for each simulation, the visit count that the
    action it visits has before the visit.

    ``considered`` actions start; each round gives every remaining action the same number of
    extra visits (at least one, and about ``sims / (rounds * remaining)``), then the worse half
    drops out, down to two. The first round's entries are 0, so it visits ``considered``
    distinct actions; later rounds visit the survivors (the actions whose count matches).
    """
    considered = max(1, int(considered))
    plan: list[int] = []
    if considered == 1:
        return np.arange(sims, dtype=np.int32)
    rounds = max(1, math.ceil(math.log2(considered)))
    visits = 0
    remaining = considered
    while len(plan) < sims:
        extra = max(1, sims // (rounds * remaining))
        for _ in range(extra):
            plan.extend([visits] * remaining)
            visits += 1
        remaining = max(2, remaining // 2)
    return np.asarray(plan[:sims], dtype=np.int32)


@njit(**_JIT)
def completed_values(tree, t, node):  # pragma: no cover - compiled
    """``(mixed value, lowest, highest, most visits, total visits)`` of ``node``'s completed
    values: a visited edge's mean, an unvisited one the mixed value (see the module docstring)."""
    first = tree.first[t, node]
    count = tree.count[t, node]
    total = 0
    most = 0
    weighted = 0.0
    weight = 0.0
    for k in range(count):
        e = first + k
        n = tree.n[t, e]
        if n > 0:
            total += n
            if n > most:
                most = n
            weighted += tree.prior[t, e] * (tree.w[t, e] / n)
            weight += tree.prior[t, e]
    mixed = tree.value[t, node]
    if total > 0 and weight > 0.0:
        mixed = (mixed + total * (weighted / weight)) / (1.0 + total)
    lowest = np.inf
    highest = -np.inf
    for k in range(count):
        q = edge_q(tree, t, first + k, mixed)
        lowest = min(lowest, q)
        highest = max(highest, q)
    return mixed, lowest, highest, most, total


@njit(**_JIT)
def sigma_scale(lowest, highest, most, value_scale, maxvisit_init):  # pragma: no cover - compiled
    """The factor that maps ``q - lowest`` to ``sigma(q)``."""
    return (maxvisit_init + most) * value_scale / max(highest - lowest, 1e-8)


@njit(inline="always", **_JIT)
def completed_score(tree, t, e, mixed, lowest, scale, with_noise):  # pragma: no cover - compiled
    """Edge ``e``'s ``logit + sigma(completed q)``, with its Gumbel ``noise`` first when
    ``with_noise`` (``mixed``, ``lowest`` from :func:`completed_values`, ``scale`` from
    :func:`sigma_scale`)."""
    prior_score = tree.logit[t, e]
    if with_noise:
        prior_score = tree.noise[t, e] + tree.logit[t, e]
    return prior_score + scale * (edge_q(tree, t, e, mixed) - lowest)


@njit(**_JIT)
def improved_policy(tree, t, node, value_scale, maxvisit_init, out):  # pragma: no cover - compiled
    """``softmax(logit + sigma(completed q))`` over ``node``'s edges into ``out`` (edge order);
    returns the node's total visits."""
    mixed, lowest, highest, most, total = completed_values(tree, t, node)
    scale = sigma_scale(lowest, highest, most, value_scale, maxvisit_init)
    first = tree.first[t, node]
    count = tree.count[t, node]
    top = -np.inf
    for k in range(count):
        out[k] = completed_score(tree, t, first + k, mixed, lowest, scale, False)
        top = max(top, out[k])
    norm = 0.0
    for k in range(count):
        out[k] = np.exp(out[k] - top)
        norm += out[k]
    for k in range(count):
        out[k] /= norm
    return total


@njit(**_JIT)
def gumbel_root_scores(tree, t, node, value_scale, maxvisit_init, out):  # pragma: no cover - compiled
    """``noise + logit + sigma(completed q)`` of every root edge into ``out`` (edge order)."""
    mixed, lowest, highest, most, _ = completed_values(tree, t, node)
    scale = sigma_scale(lowest, highest, most, value_scale, maxvisit_init)
    first = tree.first[t, node]
    for k in range(tree.count[t, node]):
        out[k] = completed_score(tree, t, first + k, mixed, lowest, scale, True)


# ----------------------------------------------------------------------------- the selection, compiled
@njit(**_JIT)
def _interior(tree, t, node, value_scale, maxvisit_init, solver):  # pragma: no cover - compiled
    """The edge whose share of visits most lacks behind its improved policy (with ``solver``,
    among those not proven lost)."""
    first = tree.first[t, node]
    count = tree.count[t, node]
    policy = np.empty(count, np.float64)
    total = improved_policy(tree, t, node, value_scale, maxvisit_init, policy)
    best = -np.inf
    index = first
    player = tree.player[t, node]
    for k in range(count):
        if solver and proven_lost(tree, t, first + k, player):
            continue
        score = policy[k] - tree.n[t, first + k] / (1.0 + total)
        if score > best:
            best = score
            index = first + k
    return index


@njit(**_JIT)
def _root(tree, t, node, visit_level, value_scale, maxvisit_init):  # pragma: no cover - compiled
    """Sequential halving: the best root edge by :func:`gumbel_root_scores` among those with
    ``visit_level`` visits (the best of all if none has)."""
    first = tree.first[t, node]
    count = tree.count[t, node]
    scores = np.empty(count, np.float64)
    gumbel_root_scores(tree, t, node, value_scale, maxvisit_init, scores)
    best = -np.inf
    index = -1
    fallback = -np.inf
    fallback_index = first
    for k in range(count):
        e = first + k
        score = scores[k]
        if tree.n[t, e] == visit_level and score > best:
            best = score
            index = e
        if score > fallback:
            fallback = score
            fallback_index = e
    return index if index >= 0 else fallback_index


@njit(**_JIT)
def _select(tree, t, node, constants, at_root, visit_level, solver):  # pragma: no cover - compiled
    """Gumbel's edge: sequential halving at the root, the improved policy's below; ``constants``
    are ``(value_scale, maxvisit_init)``."""
    if at_root:
        return _root(tree, t, node, visit_level, constants[0], constants[1])
    return _interior(tree, t, node, constants[0], constants[1], solver)


@dataclass(frozen=True)
class Gumbel(Selection):
    """Gumbel MuZero's root and interior selection (see the module docstring). It is the
    selection at the root and below alike, reads the evaluator's logits, and starts every
    search from a fresh root (its root plan).

    Args:
        considered: how many root actions sequential halving starts from (16 in the paper's
            board-game runs); fewer when a position has fewer legal actions.
        value_scale, maxvisit_init: the ``sigma`` transform's constants (0.1 and 50, the paper's).
        noise: draw Gumbel noise at the root (self-play: exploration by sampling without
            replacement); False picks by ``logit + sigma(q)`` alone (play: deterministic).
    """

    considered: int = 16
    value_scale: float = 0.1
    maxvisit_init: float = 50.0
    noise: bool = True

    select = staticmethod(_select)
    needs_logits = True
    paired = True
    reusable = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "considered", _checks.whole("Gumbel considered", self.considered, 1, 4096))
        object.__setattr__(self, "value_scale", _checks.number("Gumbel value_scale", self.value_scale, 0.0))
        object.__setattr__(self, "maxvisit_init", _checks.number("Gumbel maxvisit_init", self.maxvisit_init, 0.0))
        object.__setattr__(self, "noise", _checks.flag("Gumbel noise", self.noise))

    def constants(self) -> tuple[float, ...]:
        """``(value_scale, maxvisit_init)``."""
        return (self.value_scale, self.maxvisit_init)

    def root_noise(self, rng: np.random.Generator, count: int) -> np.ndarray | None:
        """Gumbel noise for the root's edges (with ``noise``), else None."""
        return rng.gumbel(size=count) if self.noise else None

    def visit_plan(self, count: int, sims: int) -> np.ndarray:
        """Sequential halving's plan over ``min(considered, count)`` actions."""
        return halving_schedule(min(self.considered, count), sims)

    def improved_policy(self, tree: Any, t: int, node: int, out: np.ndarray) -> bool:
        """``softmax(logit + sigma(completed q))`` into ``out``."""
        improved_policy(tree, t, node, self.value_scale, self.maxvisit_init, out)
        return True

    def root_scores(self, tree: Any, t: int, node: int, out: np.ndarray) -> bool:
        """``noise + logit + sigma(completed q)`` into ``out``."""
        gumbel_root_scores(tree, t, node, self.value_scale, self.maxvisit_init, out)
        return True
