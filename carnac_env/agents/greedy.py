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

:func:`evaluate` and :func:`reference_action_values` are the definition, in Python on the rules
core. What plays is their compiled form (:func:`action_values`, numba, on the batched engine's
state, in :mod:`carnac_env.search.lookahead`: about 30x faster), which the ``mcts`` agent's root
ranking, its greedy playouts and the trainer's bootstrap games also use; tests/test_agents.py
checks that both give the same values, bit for bit, on random positions of every board.
"""

from __future__ import annotations

import numpy as np

from carnac_env.agents.base import SeededAgent
from carnac_env.batch import BatchGame
from carnac_env.batch.state import new_state
from carnac_env.core.boards import Board
from carnac_env.core.game import OVER, RED, RESPOND, WHITE, GameState
from carnac_env.core.scoring import groups
from carnac_env.search.lookahead import DOLMEN, PARTIAL, WIN, action_values_slot


def evaluate(state: GameState, player: int) -> float:
    """The static evaluation of ``state`` for ``player`` (0 Red, 1 White); see the module docstring.

    The groups come from the core's scoring (:func:`carnac_env.core.scoring.groups`).
    """
    board = state.board
    total = 0.0
    for colour in (RED, WHITE):
        sign = 1.0 if colour == player + 1 else -1.0
        for group in groups(board, state.cells, colour):
            total += sign * group_value(state, group)
    if state.phase == OVER:
        total += WIN * state.result().reward(player)
    return total


def group_value(state: GameState, group: list[int]) -> float:
    """What one colour group of ``state`` is worth to its owner: ``DOLMEN + size`` for a
    dolmen, ``PARTIAL * (size / (min_dolmen - 1)) ** 2`` for a smaller group that touches an
    empty square, else 0."""
    board = state.board
    size = len(group)
    if size >= board.min_dolmen:
        return DOLMEN + size
    kinds, neighbours = state.kinds, board.neighbours
    if any(not kinds[other] for square in group for other in neighbours[square]):
        return PARTIAL * (size / max(board.min_dolmen - 1, 1)) ** 2
    return 0.0


class _Evaluations:
    """:func:`evaluate` for one player, remembered by position: the four orientations of a
    placement share their tilt outcomes and their decline, so about half the evaluations
    of :func:`action_values` repeat. The evaluation reads only the squares and whether the
    game is over, so that is the key."""

    def __init__(self, player: int) -> None:
        self.player = player
        self.known: dict[tuple[bytes, bytes, bool], float] = {}

    def __call__(self, state: GameState) -> float:
        key = (bytes(state.cells), bytes(state.kinds), state.phase == OVER)
        value = self.known.get(key)
        if value is None:
            value = self.known[key] = evaluate(state, self.player)
        return value


def response_values(state: GameState, player: int, value_of: _Evaluations | None = None) -> list[tuple[float, int]]:
    """``(value for player, action)`` for each legal response (tilts, then decline) in the
    ``RESPOND`` phase of ``state``."""
    value_of = value_of or _Evaluations(player)
    out = []
    for action in state.legal_actions():
        after = state.copy()
        after.apply_unchecked(action)
        out.append((value_of(after), action))
    return out


def reference_action_values(state: GameState) -> list[tuple[float, int]]:
    """``(value, action)`` for every legal action of the player to act, as greedy sees it:
    after a placement the opponent's most harmful response is assumed (see the module
    docstring). The reference, in Python; :func:`action_values` is the same, compiled."""
    player = state.to_act
    value_of = _Evaluations(player)
    if state.phase == RESPOND:
        return response_values(state, player, value_of)
    out = []
    for action in state.legal_actions():
        after = state.copy()
        after.apply_unchecked(action)
        if after.phase == RESPOND:
            value = min(v for v, _ in response_values(after, player, value_of))
        else:
            value = value_of(after)
        out.append((value, action))
    return out


class _Slots:
    """A one-game engine to put core states in, and the compiled function's scratch, per board."""

    def __init__(self, board) -> None:
        self.engine = BatchGame(board, num_envs=1)
        self.work, _ = new_state(board, 2)
        self.actions = np.zeros(board.num_actions, np.int32)
        self.values = np.zeros(board.num_actions, np.float64)


_SLOTS: dict = {}


def action_values(state: GameState) -> list[tuple[float, int]]:
    """``(value, action)`` for every legal action of the player to act in ``state``, as greedy
    sees it (see the module docstring), compiled; the same values as
    :func:`reference_action_values`."""
    if state.is_over:
        return []
    slots = _SLOTS.get(state.board)
    if slots is None:
        slots = _SLOTS[state.board] = _Slots(state.board)
    slots.engine.set_state(0, state)
    return engine_action_values(slots.engine, 0, slots)


def engine_action_values(engine: BatchGame, index: int, slots: _Slots | None = None) -> list[tuple[float, int]]:
    """:func:`action_values` of game ``index`` of a :class:`~carnac_env.batch.BatchGame` (no
    ``GameState`` is built)."""
    if slots is None:
        slots = _SLOTS.get(engine.board)
        if slots is None:
            slots = _SLOTS[engine.board] = _Slots(engine.board)
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
