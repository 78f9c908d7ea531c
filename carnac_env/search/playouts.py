"""Random moves and random playouts, compiled: one game of uniformly random legal moves to the end.

* :func:`random_action`: a uniformly random legal move of a slot, drawn from SplitMix64
  (:mod:`carnac_env.batch.rng`); the move of every playout of this family.
* :func:`playout`: a slot played to the end with such moves (unobserved: the slot's views are
  left alone); :func:`playout_value`: the mean result of several, for the player to act, played
  in a work slot (the search's :class:`~carnac_env.search.Playouts` evaluator, and the
  trainer's playout targets).
* :func:`random_playout` and :func:`playout_actions`: the same from a core
  :class:`~carnac_env.core.game.GameState` (checked by the core's one
  :func:`~carnac_env.core.validate.validate`, then loaded into a one-game state kept per board
  and thread, so a playout allocates nothing).

A playout here and one inside a search from the same position and generator state are the same
game, on every machine.
"""

from __future__ import annotations

import threading

import numpy as np
from numba import njit

from carnac_env import _checks
from carnac_env.batch.rng import seed_state, splitmix
from carnac_env.batch.rules import copy_rules_state, load_game, pick, play_unobserved, value_for
from carnac_env.batch.scoring import winner_into
from carnac_env.batch.state import KernelState, game_fields, new_state
from carnac_env.core.boards import Board
from carnac_env.core.game import EMPTY, OVER, PLACE, GameState
from carnac_env.core.validate import validate
from carnac_env.errors import CarnacError

__all__ = ["playout", "playout_actions", "playout_value", "random_action", "random_playout"]

_JIT = {"cache": True, "nogil": True}


@njit(inline="always", **_JIT)
def random_action(st, i, x):  # pragma: no cover - compiled
    """A uniformly random legal action of game ``i`` and the generator's next state.

    Placements draw (square, orientation) pairs until the square is empty (uniform over the
    legal placements, cheaper than counting them); a response is the legal action of a uniform
    rank (:func:`~carnac_env.batch.rules.pick`: the legal tilts, then declining)."""
    x = np.uint64(x)  # a state passed back from Python may arrive as a signed integer
    squares = st.cells.shape[1]
    if st.phase[i] != PLACE:
        x, u = splitmix(x)
        return x, pick(st, i, u)
    kinds = st.kinds
    while True:
        x, u = splitmix(x)
        k = int(u * (4 * squares))
        if kinds[i, k >> 2] == EMPTY:
            return x, k


@njit(**_JIT)
def playout(st, i, x, record):  # pragma: no cover - compiled
    """Play game ``i`` of ``st`` to the end with :func:`random_action` (changing it, unobserved);
    return the winner (0, 1, -1 a draw), the generator's next state and the number of moves.
    The actions played go to ``record`` (int32) while it has room: pass an empty array to skip."""
    x = np.uint64(x)  # a state passed back from Python may arrive as a signed integer
    over = st.phase[i] == OVER
    moves = 0
    while not over:
        x, action = random_action(st, i, x)
        if moves < record.shape[0]:
            record[moves] = action
        moves += 1
        over = play_unobserved(st, i, action)
    return winner_into(st.cells[i], st.neighbours, st.min_dolmen, st.seen, st.stack, st.balance), x, moves


@njit(**_JIT)
def playout_value(st, i, work, j, playouts, x):  # pragma: no cover - compiled
    """The mean result, for the player to act in game ``i`` of ``st``, of ``playouts`` random
    playouts (each played in slot ``j`` of ``work``, a KernelState on the same board; ``st`` is
    left as it was), and the generator's next state."""
    x = np.uint64(x)  # a state passed back from Python may arrive as a signed integer
    player = st.to_act[i]
    no_record = work.stack[:0]
    total = 0.0
    for _ in range(playouts):
        copy_rules_state(st, i, work, j)
        winner, x, _ = playout(work, j, x, no_record)
        total += value_for(winner, player)
    return total / playouts, x


@njit(**_JIT)
def _playout_from(
    st, cells, kinds, lying, num_lying, supply, empty, phase, to_act, pending, pending_colour, seed, record
):  # pragma: no cover - compiled
    """Load one core game (:func:`~carnac_env.batch.state.game_fields`) into the one-game state
    ``st`` and :func:`playout` it; the winner and the number of moves."""
    load_game(st, 0, cells, kinds, lying, num_lying, supply, empty, phase, to_act, pending, pending_colour)
    winner, _, moves = playout(st, 0, seed, record)
    return winner, moves


_LOCAL = threading.local()
_NO_RECORD = np.zeros(0, dtype=np.int32)


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

    Every move is drawn uniformly from the legal actions (:func:`random_action`) and played by
    the same compiled rules functions as :class:`~carnac_env.batch.BatchGame`; the generator is
    SplitMix64 seeded with ``seed``, so the same state and seed give the same game on every
    machine. ``state`` is not changed; a finished ``state`` is simply scored.

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
    record = np.zeros(size, dtype=np.int32)
    winner, moves = _run_playout(state, seed, record)
    return winner, record[:moves].tolist()


def _run_playout(state: GameState, seed: int, record: np.ndarray) -> tuple[int, int]:
    try:
        validate(state)
    except CarnacError as error:
        raise CarnacError(f"random_playout got a malformed state: {error}") from None
    seed = _checks.whole("seed", seed)
    winner, moves = _playout_from(
        _one_game(state.board),
        *game_fields(state, lying=False),  # the playout appends lying pairs but never reads old ones
        seed_state(seed),
        record,
    )
    return int(winner), int(moves)
