"""An exact solver of Carnac endgames: alpha-beta to the end of the game, compiled with numba.

:func:`solve` returns the game-theoretic result of a position for the player to act (+1 a
win, 0 a draw, -1 a loss, under the full tie-break chain of the rules: more dolmens, then the
sorted dolmen sizes, then a draw), a move that achieves it, and the number of nodes searched.

**The rules are the batch kernel's.** The search runs on a
:class:`~carnac_env.batch.state.KernelState` with one slot per ply: a child is the parent's
slot copied one slot down (:func:`~carnac_env.batch.rules.copy_rules_state`) and played there
(:func:`~carnac_env.batch.rules.play_unobserved`); the legal moves are
:func:`~carnac_env.batch.rules.legal_actions` and the result of a finished game is
:func:`~carnac_env.batch.rules.winner_of` (the compiled scorer). Nothing here restates a rule.

**The algorithm.** Depth-first negamax with an alpha-beta window over the three outcomes.
The player to act does not simply alternate (after a placement the *other* player answers
the tilt or decline, and after a decline the placer places again), so a child's value is
negated only when the player to act in the child differs from the parent's. The search always
runs to the end of the game, so its depth is bounded by the megaliths left (a placement and at
most one response each): positions with more than ``max_megaliths_left`` megaliths in the
supply are refused. Move ordering: the transposition table's best move first, then the
kernel's order (tilts before the decline). Two placements that differ only in which axis
carries the top colour (orientations ``o`` and ``o ^ 2``) lead to the same position when no
tilt of that square fits; only one of them is searched.

**The transposition table.** Keyed by a 64-bit Zobrist hash of the position (each square's
contents, the player to act, the phase, the pending megalith and its tilt colour, the supply),
stored in full to tell entries apart; one slot per hash (always replaced). Each entry takes
:data:`ENTRY_BYTES` bytes; a table of ``table_mb`` MiB holds the largest power of two entries
that fits, so the table never takes more than ``table_mb`` MiB (at most :data:`MAX_TABLE_MB`,
refused above). The table is kept between calls on the same board (its entries are exact
facts about positions), and dropped when the board or the size changes. Besides the table, a
solve holds one engine slot per ply (``2 * supply + 2`` slots of a few hundred bytes each).
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np
from numba import njit

from carnac_env import _checks
from carnac_env.batch.rules import copy_rules_state, legal_actions, load_game, play_unobserved, tilt_fits, value_for
from carnac_env.batch.rules import winner_of as _winner_of
from carnac_env.batch.state import KernelState, new_state
from carnac_env.core.boards import Board
from carnac_env.core.game import EMPTY, OVER, PLACE, RESPOND, GameState
from carnac_env.core.validate import validate
from carnac_env.errors import CarnacError

__all__ = ["DEFAULT_MAX_MEGALITHS_LEFT", "ENTRY_BYTES", "MAX_TABLE_MB", "Solution", "position_hash", "solve"]

_JIT = {"cache": True, "nogil": True}

#: Bytes per transposition-table entry: the 64-bit key, the best move (int32), the value and
#: its bound (int8 each).
ENTRY_BYTES = 14
#: The largest transposition table :func:`solve` accepts, in MiB.
MAX_TABLE_MB = 4096
#: The default limit on the supply of a position to solve.
DEFAULT_MAX_MEGALITHS_LEFT = 8

# Bounds of a stored value.
_EXACT, _LOWER, _UPPER = 0, 1, 2
# What a square can hold, for the hash: empty, standing red/white, lying red/white.
_CONTENTS = 5


class Solution(NamedTuple):
    """What :func:`solve` returns.

    Attributes:
        result: the game-theoretic result for the player to act: +1 a win, 0 a draw, -1 a loss
            (for a finished game, the result for ``state.to_act``).
        best_action: an action number that achieves ``result`` (-1 if the game is over).
        nodes: positions searched (transposition-table hits included).
    """

    result: int
    best_action: int
    nodes: int


# --------------------------------------------------------------------- the compiled search
@njit(**_JIT)
def position_hash(st, i, zobrist, extra):  # pragma: no cover - compiled
    """The Zobrist hash of game ``i``: ``zobrist[square, contents]`` for every occupied square
    (contents ``2 * kind - 1 + colour - 1``: standing red 1, white 2, lying red 3, white 4), and
    ``extra``'s keys for the player to act, the phase, the pending megalith and the supply."""
    cells = st.cells
    kinds = st.kinds
    h = np.uint64(0)
    for s in range(cells.shape[1]):
        kind = kinds[i, s]
        if kind != EMPTY:
            h ^= zobrist[s, 2 * kind - 1 + cells[i, s] - 1]
    h ^= extra[st.to_act[i]]
    h ^= extra[2 + st.phase[i]]
    if st.phase[i] == RESPOND:
        h ^= extra[5 + st.pending[i]] ^ extra[5 + cells.shape[1] + st.pending_colour[i]]
    h ^= extra[8 + cells.shape[1] + st.supply[i]]
    return h


@njit(**_JIT)
def _negamax(st, d, alpha, beta, table, moves, zobrist, extra, counts):  # pragma: no cover - compiled
    """The value of game ``d`` of ``st`` for its player to act, searched within the window
    ``(alpha, beta)`` (fail-soft); its children are played in slot ``d + 1``. ``counts``:
    ``[nodes, node limit (0: none), aborted, best move at the root]``."""
    counts[0] += 1
    if counts[1] > 0 and counts[0] > counts[1]:
        counts[2] = 1
        return 0
    if st.phase[d] == OVER:
        return int(value_for(_winner_of(st, d), st.to_act[d]))
    keys, best_moves, values, bounds = table
    h = position_hash(st, d, zobrist, extra)
    slot = h & np.uint64(keys.shape[0] - 1)
    first = -1
    if keys[slot] == h:
        value = int(values[slot])
        bound = bounds[slot]
        if d > 0 and (bound == _EXACT or (bound == _LOWER and value >= beta) or (bound == _UPPER and value <= alpha)):
            return value
        first = best_moves[slot]
    row = moves[d]
    count = legal_actions(st, d, row)
    if first >= 0:  # the table's best move first
        for k in range(count):
            if row[k] == first:
                row[k] = row[0]
                row[0] = first
                break
    mover = st.to_act[d]
    placing = st.phase[d] == PLACE
    start_alpha = alpha
    best = -2
    best_move = -1
    for k in range(count):
        action = row[k]
        if placing and (action & 2):  # o ^ 2 is the same move when no tilt of the square fits
            square = action >> 2
            fits = False
            for direction in range(4):
                fits |= tilt_fits(st, d, square, direction)
            if not fits:
                continue
        copy_rules_state(st, d, st, d + 1)
        play_unobserved(st, d + 1, action)
        if st.to_act[d + 1] == mover and st.phase[d + 1] != OVER:
            value = _negamax(st, d + 1, alpha, beta, table, moves, zobrist, extra, counts)
        elif st.phase[d + 1] == OVER:
            value = int(value_for(_winner_of(st, d + 1), mover))
            counts[0] += 1
        else:
            value = -_negamax(st, d + 1, -beta, -alpha, table, moves, zobrist, extra, counts)
        if counts[2]:
            return 0
        if value > best:
            best = value
            best_move = action
            if value > alpha:
                alpha = value
                if alpha >= beta:
                    break
    if d == 0:
        counts[3] = best_move
    keys[slot] = h
    best_moves[slot] = best_move
    values[slot] = best
    if best <= start_alpha:
        bounds[slot] = _UPPER
    elif best >= beta:
        bounds[slot] = _LOWER
    else:
        bounds[slot] = _EXACT
    return best


@njit(**_JIT)
def _solve_loaded(st, table, moves, zobrist, extra, counts):  # pragma: no cover - compiled
    """Solve slot 0 of ``st`` over the whole window."""
    return _negamax(st, 0, -1, 1, table, moves, zobrist, extra, counts)


@njit(**_JIT)
def _load(
    st, cells, kinds, no_lying, num_lying, supply, empty, phase, to_act, pending, pending_colour
):  # pragma: no cover
    load_game(st, 0, cells, kinds, no_lying, num_lying, supply, empty, phase, to_act, pending, pending_colour)


# --------------------------------------------------------------------- the Python API
_LOCAL = threading.local()
_NO_LYING = np.zeros((0, 2), dtype=np.int16)
_ZOBRIST_SEED = 0x5EED_CA12AC


class _Tables(NamedTuple):
    board: Board
    entries: int
    table: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    zobrist: np.ndarray
    extra: np.ndarray


def _entries(table_mb: int) -> int:
    """The largest power of two of entries that fits in ``table_mb`` MiB."""
    entries = 1
    while entries * 2 * ENTRY_BYTES <= table_mb * 2**20:
        entries *= 2
    return entries


def _tables(board: Board, table_mb: int) -> _Tables:
    """This thread's transposition table and Zobrist keys for ``board`` (kept between calls)."""
    entries = _entries(table_mb)
    kept = getattr(_LOCAL, "tables", None)
    if kept is not None and kept.board == board and kept.entries == entries:
        return kept
    _LOCAL.tables = None  # free the old table before making a new one
    rng = np.random.default_rng(_ZOBRIST_SEED)
    squares = board.squares
    zobrist = rng.integers(0, 2**63, size=(squares, _CONTENTS), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    extra = rng.integers(0, 2**63, size=8 + squares + board.megaliths + 1, dtype=np.uint64) * np.uint64(2)
    table = (
        np.zeros(entries, dtype=np.uint64),
        np.full(entries, -1, dtype=np.int32),
        np.zeros(entries, dtype=np.int8),
        np.zeros(entries, dtype=np.int8),
    )
    kept = _LOCAL.tables = _Tables(board, entries, table, zobrist, extra)
    return kept


def _plies_state(board: Board, plies: int) -> KernelState:
    """This thread's engine state for ``board`` with at least ``plies`` slots (kept)."""
    states = getattr(_LOCAL, "states", None)
    if states is None:
        states = _LOCAL.states = {}
    kept = states.get(board)
    if kept is None or kept[0] < plies:
        kept = states[board] = (plies, new_state(board, plies)[0])
    return kept[1]


def solve(
    state: GameState,
    max_megaliths_left: int = DEFAULT_MAX_MEGALITHS_LEFT,
    table_mb: int = 64,
    node_limit: int = 0,
) -> Solution:
    """The exact result of ``state`` for its player to act, and a move that achieves it.

    Args:
        state: a core position (checked by :func:`carnac_env.core.validate.validate`; not
            changed).
        max_megaliths_left: the most megaliths the supply may hold; the search's cost grows
            steeply with it (docs/solver.md gives measured times per board).
        table_mb: the transposition table's size in MiB, 1 to :data:`MAX_TABLE_MB`.
        node_limit: give up after this many nodes (0: no limit).

    Returns:
        A :class:`Solution`.

    Raises:
        CarnacError: a malformed state, a supply above ``max_megaliths_left``, a ``table_mb``
            out of range, or a search that passed ``node_limit``.
    """
    try:
        validate(state)
    except CarnacError as error:
        raise CarnacError(f"solve got a malformed state: {error}") from None
    max_left = _checks.whole("max_megaliths_left", max_megaliths_left)
    table_mb = _checks.whole("table_mb", table_mb)
    node_limit = _checks.whole("node_limit", node_limit)
    if not 1 <= table_mb <= MAX_TABLE_MB:
        raise CarnacError(f"table_mb={table_mb} is out of range: the table takes 1 to {MAX_TABLE_MB} MiB")
    if node_limit < 0:
        raise CarnacError(f"node_limit={node_limit} must be >= 0 (0: no limit)")
    if state.supply > max_left:
        raise CarnacError(
            f"the position has {state.supply} megaliths left, more than max_megaliths_left={max_left}; "
            "raise the limit to solve it (the cost grows steeply with it)"
        )
    if state.phase == OVER:  # scored by the core, not searched
        return Solution(state.result().reward(state.to_act), -1, 1)
    board = state.board
    tables = _tables(board, table_mb)
    plies = 2 * state.supply + 3
    st = _plies_state(board, plies)
    _load(
        st,
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
    )
    moves = np.empty((plies, board.num_actions), dtype=np.int32)
    counts = np.array([0, node_limit, 0, -1], dtype=np.int64)
    value = _solve_loaded(st, tables.table, moves, tables.zobrist, tables.extra, counts)
    if counts[2]:
        raise CarnacError(f"the solver gave up after node_limit={node_limit} nodes")
    best = int(counts[3]) if state.phase != OVER else -1
    return Solution(int(value), best, int(counts[0]))
