"""``greedy``: a one-move lookahead on a static evaluation, with the opponent's reply to a
placement (tilt or decline) taken into account.

The evaluation (:func:`evaluate`) scores a position for one player as the sum over that
player's colour groups minus the same sum for the opponent's, where a group of ``s``
orthogonally connected squares of one colour is worth

* ``DOLMEN + s`` if it is a dolmen (``s >= min_dolmen``): each dolmen counts far more than
  its size, as in the rules, where more dolmens wins and sizes only break ties;
* ``PARTIAL * (s / (min_dolmen - 1)) ** 2`` if it is smaller but touches an empty square (it
  may still grow into a dolmen), else 0.

A finished game scores ``WIN`` times the result (+1, 0, -1) plus the above, so a won end
always beats any unfinished position.

To place, the agent tries every legal placement. If the opponent may then tilt the
megalith, the placement is worth the *least* of the positions after each legal tilt and
after a decline (the opponent answers to hurt; a one-ply minimax). To respond, it tries
each legal tilt and declining and keeps the best. Ties among equal values go to a seeded
random choice.

:func:`evaluate` and :func:`action_values` are computed once, compiled
(:mod:`carnac_env.search.lookahead`, numba, on the batched engine's state), the same code the
``mcts`` agent's root ranking, its greedy playouts and the trainer's bootstrap games use. The
tests keep a second statement of the heuristic in plain Python on the rules core
(tests/_greedy_reference.py) and check that both give the same values, bit for bit, on random
positions of every board.
"""

from __future__ import annotations

import numpy as np

from carnac_env.agents.base import SeededAgent
from carnac_env.batch import BatchGame
from carnac_env.batch.rules import load_game
from carnac_env.batch.state import game_fields, new_state
from carnac_env.core.boards import Board
from carnac_env.core.game import GameState
from carnac_env.search.lookahead import action_values_slot, evaluate_slot


class _Slots:
    """A one-game engine to put core states in, and the compiled function's scratch, per board."""

    def __init__(self, board) -> None:
        self.engine = BatchGame(board, num_envs=1)
        self.work, _ = new_state(board, 2)
        self.actions = np.zeros(board.num_actions, np.int32)
        self.values = np.zeros(board.num_actions, np.float64)
        self.one, _ = new_state(board, 1)  # a one-game state for evaluate (any position)
        self.seen = np.zeros(board.squares, np.bool_)
        self.members = np.empty(board.squares + 1, np.int32)


_SLOTS: dict = {}


def _slots_for(board) -> _Slots:
    slots = _SLOTS.get(board)
    if slots is None:
        slots = _SLOTS[board] = _Slots(board)
    return slots


def evaluate(state: GameState, player: int) -> float:
    """The static evaluation of ``state`` for ``player`` (0 Red, 1 White); see the module
    docstring. Computed by the compiled lookahead's own evaluation
    (:func:`carnac_env.search.lookahead.evaluate_slot`), the one that plays."""
    slots = _slots_for(state.board)
    load_game(slots.one, 0, *game_fields(state, lying=False))  # a finished game too (set_state takes none)
    return float(evaluate_slot(slots.one, 0, int(player), slots.seen, slots.members))


def action_values(state: GameState) -> list[tuple[float, int]]:
    """``(value, action)`` for every legal action of the player to act in ``state``, as greedy
    sees it (see the module docstring), compiled."""
    if state.is_over:
        return []
    slots = _slots_for(state.board)
    slots.engine.set_state(0, state)
    return engine_action_values(slots.engine, 0, slots)


def engine_action_values(engine: BatchGame, index: int, slots: _Slots | None = None) -> list[tuple[float, int]]:
    """:func:`action_values` of game ``index`` of a :class:`~carnac_env.batch.BatchGame` (no
    ``GameState`` is built)."""
    slots = slots or _slots_for(engine.board)
    count = action_values_slot(engine.kernel, int(index), slots.work, slots.actions, slots.values)
    return [(float(v), int(a)) for v, a in zip(slots.values[:count], slots.actions[:count])]


class GreedyAgent(SeededAgent):
    """One-move lookahead on :func:`evaluate`, minimax over the opponent's tilt/decline reply."""

    name = "greedy"
    description = "one-move lookahead on dolmens and growing groups, minimax over the reply"

    def memory_need(self, board: Board) -> int:
        """No search memory: its lookahead's slots per board are a few kilobytes
        (:mod:`carnac_env.agents.memory`): 0."""
        return 0

    def choose(self, state: GameState) -> int:
        """The best action by :func:`action_values`; a seeded random one among equals."""
        values = action_values(state)
        best = max(v for v, _ in values)
        ties = [a for v, a in values if v >= best - 1e-9]
        return ties[int(self.rng.random() * len(ties))]
