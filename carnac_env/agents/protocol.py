"""The agent protocol: what the arena, the command line, the envs and the games need from an agent.

An *agent* is any object with ``act(state) -> int``: given a
:class:`~carnac_env.core.game.GameState` (the rules core's game, at the turn of
``state.to_act``), it returns a legal action number for that player. It reads the state and
never changes it (it copies the state to try moves: ``state.copy()``). Search agents read the
rules (``state.legal_actions()``, ``state.apply`` on a copy); learned agents read what the
environments show the player to act, :func:`observe` (the same arrays as the AEC env's
``env.observe(env.agent_selection)``). An agent may also have ``reset(seed)``, called before
each game (the arena seeds every game this way), and should be picklable (the arena sends
agents to worker processes). An agent that plays a model file may say which with
``model_used(board) -> {"model": name, "sha256": digest}`` (:func:`model_record`), which the
arena and the evaluation cards record.

Every caller in the package passes a ``GameState``: the arena, ``carnac play``, the browser
game, the Gymnasium env's opponent and the vector env's opponent (which holds no AEC env: the
game comes from the batched engine, :meth:`carnac_env.batch.BatchGame.get_state`).
:func:`game_of` also takes a carnac AEC env (wrapped or raw) and returns its game, so an agent
that starts with ``state = game_of(state)`` can be called with either.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from carnac_env.core.boards import Board
from carnac_env.core.game import GameState
from carnac_env.core.observation import legal_mask, observation_planes
from carnac_env.errors import CarnacError

__all__ = ["Agent", "FunctionAgent", "game_of", "model_record", "observe"]


@runtime_checkable
class Agent(Protocol):
    """What the arena, the command line and the environments need from an agent."""

    def act(self, state: GameState) -> int:
        """A legal action for ``state.to_act`` (``state`` is left unchanged)."""
        ...


def game_of(state: Any) -> GameState:
    """``state`` itself if it is a :class:`GameState`; the live game of a carnac AEC env (wrapped
    or raw, ``env.unwrapped.game``) otherwise.

    Raises:
        CarnacError: neither a GameState nor a carnac AEC env.
    """
    if isinstance(state, GameState):
        return state
    game = getattr(getattr(state, "unwrapped", state), "game", None)
    if not isinstance(game, GameState):
        raise CarnacError(
            f"an agent needs a GameState (or a carnac AEC env, with env.unwrapped.game), got {type(state).__name__}"
        )
    return game


def observe(state: GameState) -> dict[str, np.ndarray]:
    """What the player to act sees: ``{"observation": planes, "action_mask": mask}``, the
    ``(rows, cols, 9)`` int8 planes and the int8 legal-action mask, as the AEC env's
    ``observe(agent_selection)`` gives them (docs/environment.md). For learned agents."""
    return {"observation": observation_planes(state, state.to_act), "action_mask": legal_mask(state)}


class FunctionAgent:
    """Wraps a plain function ``f(state) -> int`` as an agent."""

    def __init__(self, function: Callable[[GameState], int], name: str = "") -> None:
        self.function = function
        self.name = name or getattr(function, "__qualname__", "function")

    def act(self, state: GameState) -> int:
        """Call the function."""
        return int(self.function(state))

    def reset(self, seed: int | None = None) -> None:
        """Functions keep no state."""


def model_record(agent: Any, board: Board) -> dict[str, str] | None:
    """Which model file ``agent`` plays on ``board``, for the arena's and the cards' records: the agent's
    ``model_used(board)`` (``{"model": name, "sha256": digest}``, as
    :meth:`carnac_env.agents.az.AZAgent.model_used`), or None for an agent without a model file."""
    used = getattr(agent, "model_used", None)
    return dict(used(board)) if callable(used) else None
