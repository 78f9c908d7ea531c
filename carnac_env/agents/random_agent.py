"""``random``: a uniform choice among the legal actions, from a seeded generator."""

from __future__ import annotations

from carnac_env.agents.base import SeededAgent
from carnac_env.core.boards import Board
from carnac_env.core.game import GameState


class RandomAgent(SeededAgent):
    """Picks uniformly among the legal actions (placements: every empty square times the 4
    orientations; responses: each legal tilt and decline). The same seed gives the same moves."""

    name = "random"
    description = "uniform over the legal actions"

    def choose(self, state: GameState) -> int:
        """A uniformly random legal action (:meth:`GameState.legal_action_at` of a uniform number)."""
        return state.legal_action_at(self.rng.random())

    def memory_need(self, board: Board) -> int:
        """No memory of its own beyond a few bytes a move (:mod:`carnac_env.agents.memory`): 0."""
        return 0
