"""Leaf evaluators: what values a new position, and gives its edges their priors.

* :class:`Playouts`: compiled random playouts (the mean result of ``playouts`` games of
  uniformly random legal moves); uniform priors. Runs inside the compiled search, so a whole
  search over one tree is one call.
* :class:`Network`: a policy-value network (anything with ``forward(observations) ->
  (logits, values)`` on ``(N, rows, cols, 9)`` int8 planes, as
  :class:`~carnac_env.models.PolicyValueNet`); the leaves of all trees of a round are
  evaluated in one batch. Priors are the softmax of the logits over the legal actions.
* :class:`Mixed`: the network's priors, and a value mixing the network's and the playouts':
  ``(1 - weight) * network + weight * playouts`` (AlphaGo's mixing).

An evaluator is an options object: the search reads its ``mode`` and settings and runs the
compiled code for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from carnac_env import _checks
from carnac_env.search.engine import MIXED, NETWORK, PLAYOUTS


class Forward(Protocol):
    """A policy-value network: logits ``(N, actions)`` and values ``(N,)`` for the player to act."""

    def forward(self, observations: np.ndarray, supply_scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Logits and values for ``(N, rows, cols, 9)`` observations."""
        ...


@dataclass(frozen=True)
class Playouts:
    """Random playouts, compiled; ``playouts`` per leaf (the value is their mean result)."""

    playouts: int = 1

    mode = PLAYOUTS
    weight = 1.0
    net = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "playouts", _checks.whole("playouts", self.playouts, 1, 10_000))


@dataclass(frozen=True)
class Network:
    """A policy-value network's priors and value."""

    net: Any

    mode = NETWORK
    playouts = 1
    weight = 0.0

    def __post_init__(self) -> None:
        if not callable(getattr(self.net, "forward", None)):
            raise TypeError(f"Network needs an object with forward(observations), got {type(self.net).__name__}")


@dataclass(frozen=True)
class Mixed:
    """The network's priors; the value ``(1 - weight) * network + weight * playouts``."""

    net: Any
    playouts: int = 4
    weight: float = 0.5

    mode = MIXED

    def __post_init__(self) -> None:
        if not callable(getattr(self.net, "forward", None)):
            raise TypeError(f"Mixed needs an object with forward(observations), got {type(self.net).__name__}")
        object.__setattr__(self, "playouts", _checks.whole("playouts", self.playouts, 1, 10_000))
        object.__setattr__(self, "weight", _checks.number("mixing weight", self.weight, 0.0, 1.0))


Evaluator = Playouts | Network | Mixed
