"""The Gymnasium envs' opponent: an agent, built from a spec or given as an object.

An opponent is an agent (:mod:`carnac_env.agents.protocol`): any object with
``act(state) -> int``, called with the game (a :class:`~carnac_env.core.game.GameState`) at
the opponent's turn. Specs such as ``"greedy"`` are built by :func:`carnac_env.agents.make`.
The vector env also takes a batched policy ``policy(observation, action_mask) -> actions`` on
top of this (:mod:`carnac_env.envs.vector`).
"""

from __future__ import annotations

from typing import Any

from carnac_env.errors import CarnacError

__all__ = ["make_opponent"]


def make_opponent(opponent: Any, seed: int = 0) -> Any:
    """The opponent for a spec string (``"random"``, ``"greedy"``, ``"mcts:sims=200"``, an
    import path; see :func:`carnac_env.agents.make`) or an agent object with ``act(state)``.

    Raises:
        CarnacError: neither a spec nor an object with ``act``.
    """
    if not isinstance(opponent, str) and not callable(getattr(opponent, "act", None)):
        raise CarnacError(
            f"opponent must be an agent spec (e.g. 'random') or an object with act(state), got {opponent!r}"
        )
    from carnac_env.agents import make  # the agents load only when an env needs one

    return make(opponent, seed=seed)
