"""``random``: a uniform choice among the legal actions, from a seeded generator."""

from __future__ import annotations

from carnac_env.agents.base import SearchAgent, register
from carnac_env.core.game import GameState


class RandomAgent(SearchAgent):
    """Picks uniformly among the legal actions (placements: every empty square times the 4
    orientations; responses: each legal tilt and decline). The same seed gives the same moves."""

    name = "random"

    def choose(self, state: GameState) -> int:
        """A uniformly random legal action (:meth:`GameState.legal_action_at` of a uniform number)."""
        return state.legal_action_at(self.rng.random())


register("random", RandomAgent, {}, "uniform over the legal actions")
