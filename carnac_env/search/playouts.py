"""Random playouts from a core position: one game of uniformly random legal moves, compiled.

:func:`random_playout` plays a core :class:`~carnac_env.core.game.GameState` to the end with
the compiled rules of :mod:`carnac_env.batch.rules` (the same functions as
:class:`~carnac_env.batch.BatchGame`) and returns the winner; :func:`playout_actions` also
returns the moves. The start position is checked by the core's one
:func:`~carnac_env.core.validate.validate` first, then copied into a one-game engine state
kept per board and thread (so a playout allocates nothing).

The moves are drawn by :func:`carnac_env.search.games.random_action`, the search's own
playout move (the :class:`~carnac_env.search.Playouts` evaluator plays the same games inside
the tree), so a playout here and one inside a search from the same position and generator
state are the same game.
"""

from __future__ import annotations

import threading

import numpy as np
from numba import njit

from carnac_env import _checks
from carnac_env.batch.rules import load_game, play
from carnac_env.batch.scoring import winner_into
from carnac_env.batch.state import KernelState, new_state
from carnac_env.core.boards import Board
from carnac_env.core.game import OVER, GameState
from carnac_env.core.validate import validate
from carnac_env.errors import CarnacError
from carnac_env.search.games import random_action

__all__ = ["playout_actions", "random_playout"]

_JIT = {"cache": True, "nogil": True}


@njit(**_JIT)
def _playout(
    st, cells, kinds, no_lying, num_lying, supply, empty, phase, to_act, pending, pending_colour, seed, record
):  # pragma: no cover - compiled
    """Load one core game into the one-game state ``st`` and play uniformly random legal
    moves to the end; return the winner (0, 1, -1 draw) and the number of moves. The actions
    played are written to ``record`` while it has room (pass an empty array to skip)."""
    load_game(st, 0, cells, kinds, no_lying, num_lying, supply, empty, phase, to_act, pending, pending_colour)
    x = np.uint64(seed)
    over = phase == OVER
    moves = 0
    while not over:
        x, action = random_action(st, 0, x)
        if moves < record.shape[0]:
            record[moves] = action
        moves += 1
        over = play(st, 0, action)
    return winner_into(st.cells[0], st.neighbours, st.min_dolmen, st.seen, st.stack, st.balance), moves


_LOCAL = threading.local()
_NO_RECORD = np.zeros(0, dtype=np.int64)
_NO_LYING = np.zeros((0, 2), dtype=np.int16)  # the playout appends lying pairs but never reads old ones


def _one_game(board: Board) -> KernelState:
    """This thread's one-game engine state for ``board`` (made on first use)."""
    states = getattr(_LOCAL, "states", None)
    if states is None:
        states = _LOCAL.states = {}
    state = states.get(board)
    if state is None:
        state = states[board] = new_state(board, 1)[0]
    return state


def random_playout(state: GameState, seed: int) -> int:
    """Play one game of uniformly random legal moves from ``state`` to the end, compiled.

    Every move is drawn uniformly from the legal actions and played by the same compiled
    rules functions as :class:`~carnac_env.batch.BatchGame`; the generator is SplitMix64
    seeded with ``seed``, so the same state and seed give the same game on every machine.
    ``state`` is not changed; a finished ``state`` is simply scored.

    Args:
        state: a core game state, checked by :func:`carnac_env.core.validate.validate`.
        seed: any whole number (taken modulo 2**64).

    Returns:
        The winner: 0 (Red), 1 (White) or -1 for a draw.

    Raises:
        CarnacError: ``state`` is not a consistent GameState (the message says what is
            wrong) or ``seed`` not a whole number.
    """
    return _run_playout(state, seed, _NO_RECORD)[0]


def playout_actions(state: GameState, seed: int) -> tuple[int, list[int]]:
    """:func:`random_playout`, also returning the actions it played (for tests and replays)."""
    if isinstance(state, GameState) and isinstance(state.board, Board):
        size = 2 * state.board.megaliths + 2  # a place and maybe a response, each
    else:
        size = 0  # refused below
    record = np.zeros(size, dtype=np.int64)
    winner, moves = _run_playout(state, seed, record)
    return winner, record[:moves].tolist()


def _run_playout(state: GameState, seed: int, record: np.ndarray) -> tuple[int, int]:
    try:
        validate(state)
    except CarnacError as error:
        raise CarnacError(f"random_playout got a malformed state: {error}") from None
    seed = _checks.whole("seed", seed)
    winner, moves = _playout(
        _one_game(state.board),
        np.frombuffer(state.cells, dtype=np.uint8),
        np.frombuffer(state.kinds, dtype=np.uint8),
        _NO_LYING,
        len(state.lying),
        state.supply,
        state.empty,
        state.phase,
        state.to_act,
        state.pending,
        state.pending_colour,
        (seed + 2**63) % 2**64 - 2**63,  # as int64; the generator reads its 64 bits
        record,
    )
    return int(winner), int(moves)
