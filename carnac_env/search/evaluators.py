"""Leaf evaluators: what values a new position and gives its edges their priors.

An evaluator is one object with one method, ``evaluate(leaves) -> Evaluation(logits, values)``
(the types are :mod:`carnac_env.search.base`'s): a batch of :class:`Leaves` in (the
observations, legal masks and games of the positions to value, seen by the player to act), and
for each leaf the logits of its priors (``(N, actions)``, indexed by action number; the priors
are their softmax over the legal actions) and its value in ``[-1, 1]`` for the player to act
(``(N,)``). The search calls it between its compiled rounds, once per round with the leaves of
every tree (and once for the new roots); subclass :class:`Evaluator` (or write any class with
such a method) to plug in your own. docs/search.md has a worked example.

The built-in ones are fast cases of the same protocol:

* :class:`Network`: a policy-value network (anything with ``forward(observations,
  supply_scale=...) -> (logits, values)`` on ``(N, rows, cols, 9)`` int8 planes, as
  :class:`~carnac_env.models.PolicyValueNet`); its :meth:`~Network.evaluate` is the search's
  one call of the network.
* :class:`Playouts`: compiled random playouts (the mean result of ``playouts`` games of
  uniformly random legal moves; or, with ``policy="greedy"``, of greedy's moves) and uniform
  priors. Its values are computed inside the
  compiled loop (``batched`` is False), so a whole search over one tree is one call and no
  Python runs per simulation; :meth:`~Playouts.evaluate` gives the same kind of values from
  Python.
* :class:`Mixed`: the network's priors, and a value mixing the network's and the compiled
  playouts': ``(1 - weight) * network + weight * playouts`` (AlphaGo's mixing).

What the compiled loop reads of an evaluator is its :class:`EvaluatorParameters`: whether it
is ``batched`` (``evaluate`` is called; else the leaves are valued in the loop), how many
compiled ``playouts`` each leaf gets, their mixing ``weight``, and whether they are
``greedy`` (with their ``epsilon``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from carnac_env import _checks
from carnac_env.batch.rng import seed_state
from carnac_env.batch.state import new_state
from carnac_env.errors import CarnacError
from carnac_env.search.base import Evaluation, Evaluator, EvaluatorParameters, Forward, Leaves
from carnac_env.search.lookahead import greedy_playout_value, lookahead_room
from carnac_env.search.playouts import playout_value

__all__ = [
    "Evaluation",
    "Evaluator",
    "EvaluatorParameters",
    "Forward",
    "Leaves",
    "Mixed",
    "Network",
    "Playouts",
    "evaluator_parameters",
]


def evaluator_parameters(evaluator: Any) -> EvaluatorParameters:
    """The :class:`EvaluatorParameters` of ``evaluator``: an :class:`Evaluator`, or any object
    with an ``evaluate`` method (read with the base class's defaults)."""
    return EvaluatorParameters(
        bool(getattr(evaluator, "batched", Evaluator.batched)),
        int(getattr(evaluator, "playouts", Evaluator.playouts)),
        float(getattr(evaluator, "weight", Evaluator.weight)),
        getattr(evaluator, "policy", Evaluator.policy) == "greedy",
        float(getattr(evaluator, "epsilon", Evaluator.epsilon)),
    )


#: The moves a :class:`Playouts` evaluator's playouts may play.
PLAYOUT_POLICIES = ("random", "greedy")


@dataclass(frozen=True)
class Playouts(Evaluator):
    """Compiled playouts; ``playouts`` per leaf (the value is their mean result), and uniform
    priors. Valued inside the compiled loop.

    ``policy`` ``"random"`` (the default) plays uniformly random legal moves; ``"greedy"`` plays
    greedy's move (its one-move lookahead, :func:`carnac_env.search.lookahead.greedy_action`:
    ties broken at random), or with probability ``epsilon`` at each move a random one. A greedy
    playout costs far more than a random one (docs/search.md has the measurements)."""

    playouts: int = 1
    policy: str = "random"
    epsilon: float = 0.0

    batched = False
    weight = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "playouts", _checks.whole("playouts", self.playouts, 1, 10_000))
        object.__setattr__(self, "policy", _checks.choice("playout policy", self.policy, PLAYOUT_POLICIES))
        object.__setattr__(self, "epsilon", _checks.number("playout epsilon", self.epsilon, 0.0, 1.0))
        if self.policy == "random" and self.epsilon:
            raise CarnacError(
                f"playout epsilon={self.epsilon:g} is the share of random moves in greedy playouts; random "
                "playouts take none: give policy='greedy' (the mcts option playout=greedy), or epsilon=0"
            )

    def evaluate(self, leaves: Leaves) -> Evaluation:
        """Uniform logits and the mean result of ``playouts`` playouts from each leaf (the
        same playouts as inside the loop, drawn from ``leaves.rng``)."""
        greedy = self.policy == "greedy"
        work, _ = new_state(leaves.board, 3 if greedy else 1)
        look = lookahead_room(work, 1) if greedy else None
        x = seed_state(int(leaves.rng.integers(2**63)))
        values = np.zeros(len(leaves), np.float32)
        for k, slot in enumerate(leaves.slots):
            if greedy:
                values[k], x = greedy_playout_value(leaves.kernel, int(slot), look, 0, self.playouts, self.epsilon, x)
            else:
                values[k], x = playout_value(leaves.kernel, int(slot), work, 0, self.playouts, x)
            x = np.uint64(x)
        return Evaluation(np.zeros((len(leaves), leaves.board.num_actions), np.float32), values)


@dataclass(frozen=True)
class Network(Evaluator):
    """A policy-value network's priors and value (see the module docstring)."""

    net: Any

    def __post_init__(self) -> None:
        if not callable(getattr(self.net, "forward", None)):
            raise TypeError(
                f"{type(self).__name__} needs an object with forward(observations), got {type(self.net).__name__}"
            )

    def evaluate(self, leaves: Leaves) -> Evaluation | tuple[np.ndarray, np.ndarray]:
        """The network's logits and values for the leaves' observations (what its ``forward``
        returns, unchecked: the search checks them)."""
        if getattr(self.net, "reads_rules", False):  # a rules-conditioned network reads the board's rules
            return self.net.forward(leaves.observations, supply_scale=leaves.board.megaliths, board=leaves.board)
        return self.net.forward(leaves.observations, supply_scale=leaves.board.megaliths)


@dataclass(frozen=True)
class Mixed(Network):
    """The network's priors; the value ``(1 - weight) * network + weight * playouts``, with
    ``playouts`` compiled random playouts per leaf."""

    playouts: int = 4
    weight: float = 0.5

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "playouts", _checks.whole("playouts", self.playouts, 1, 10_000))
        object.__setattr__(self, "weight", _checks.number("mixing weight", self.weight, 0.0, 1.0))


def check_evaluator(evaluator: Any) -> EvaluatorParameters:
    """``evaluator``'s parameters, or a :class:`~carnac_env.errors.CarnacError` naming what is
    wrong (not an evaluator; settings out of range)."""
    if not callable(getattr(evaluator, "evaluate", None)):
        raise CarnacError(
            "evaluator must be Playouts, Network, Mixed or an object with evaluate(leaves) "
            f"(carnac_env.search.Evaluator), got {type(evaluator).__name__}"
        )
    parameters = evaluator_parameters(evaluator)
    _checks.whole("evaluator playouts", parameters.playouts, 0, 10_000)
    _checks.number("evaluator weight", parameters.weight, 0.0, 1.0)
    _checks.number("evaluator epsilon", parameters.epsilon, 0.0, 1.0)
    if not parameters.batched and parameters.playouts == 0:
        raise CarnacError("an evaluator that is not batched must value its leaves by compiled playouts (playouts >= 1)")
    return parameters


def as_array(name: str, value: Any, shape: Sequence[int]) -> np.ndarray:
    """``value`` as a C-contiguous float32 array of ``shape``, or a CarnacError naming ``name``."""
    try:
        array = np.ascontiguousarray(value, dtype=np.float32)
    except (TypeError, ValueError):
        raise CarnacError(f"the evaluator's {name} are not numbers: got {type(value).__name__}") from None
    if array.shape != tuple(shape):
        raise CarnacError(f"the evaluator gave {name} of shape {array.shape}; expected {tuple(shape)}")
    return array
